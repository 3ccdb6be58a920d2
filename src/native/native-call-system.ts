/**
 * A native system of calls (native-calls.ts) built from a built-in system: the same ops, model and
 * checks, a config that adds the driver's executable, the fault checks first, and an
 * implementation side whose allocator hands out the driver's answers to the calls its model made.
 */
import type fc from 'fast-check';
import { ContractError } from '../contract.js';
import { InputError, type JsonObject } from '../harness/json.js';
import type { OpNamed, RunEnv, SystemDef } from '../harness/system.js';
import { parseWith, type Static, type TObject } from '../harness/schema.js';
import type { WireCall } from './protocol.js';
import { CallRecorder, faultInvariants, NativeCalls } from './native-calls.js';
import type { NativeDriver } from './driver.js';

/** A side of the base system: its command count so far (`step`). */
interface Stepped {
  step: number;
}

export interface CallSystemSpec<
  Schema extends TObject,
  BC extends JsonObject,
  Cmd extends OpNamed,
  S extends Stepped,
> {
  readonly name: string;
  readonly summary: string;
  readonly base: SystemDef<BC, Cmd, S>;
  /** The config's schema: the base's fields and `executable`. */
  readonly schema: Schema;
  readonly driver: NativeDriver;
  readonly executable: string;
  /** The base system's config of a native config. */
  readonly plain: (config: Static<Schema>) => BC;
  readonly checkConfig: (config: Static<Schema>) => string | null;
  readonly configArb: () => fc.Arbitrary<Static<Schema>>;
  /** The driver's answers a side hands out (null on the model side). */
  readonly callsOf: (side: S) => NativeCalls | null;
  /** A model side whose calls `recorder` records. */
  readonly recording: (config: BC, recorder: CallRecorder) => S;
  /** The batch's capacity and set-up records. */
  readonly capacityBytes: (config: BC) => number;
  readonly setup: (config: BC) => WireCall[];
  /** The implementation side over the driver's answers. */
  readonly impl: (config: BC, env: RunEnv, calls: NativeCalls) => S;
}

export type CallSystem<Schema extends TObject, Cmd extends OpNamed, S> = SystemDef<
  Static<Schema> & JsonObject,
  Cmd,
  S
> & { readonly driver: NativeDriver };

export function nativeCallSystem<
  Schema extends TObject,
  BC extends JsonObject,
  Cmd extends OpNamed,
  S extends Stepped,
>(spec: CallSystemSpec<Schema, BC, Cmd, S>): CallSystem<Schema, Cmd, S> {
  type C = Static<Schema> & JsonObject;
  const { base, plain } = spec;
  const faults = faultInvariants<S>(
    spec.executable,
    (side) => spec.callsOf(side)?.fault ?? null,
    (side) => side.step - 1,
  );
  return {
    ...base,
    name: spec.name,
    summary: spec.summary,
    configSchema: spec.schema,
    checkConfig: spec.checkConfig,
    parseConfig: (raw: unknown, source: string, at: string): C => {
      const config = parseWith(spec.schema, raw, source, at) as C;
      const problem = spec.checkConfig(config);
      if (problem !== null) throw new InputError(source, at, problem);
      return config;
    },
    configArb: () => spec.configArb() as fc.Arbitrary<C>,
    commandArb: (config, plan) => base.commandArb(plain(config), plan),
    createModel: (config, env) => base.createModel(plain(config), env),
    createImpl: (config, env, commands) => {
      if (commands === undefined)
        throw new Error(`${spec.name}: a native driver takes a run as one batch`);
      const run = plain(config);
      const recorder = new CallRecorder();
      const recording = spec.recording(run, recorder);
      for (const command of commands) {
        try {
          base.apply(recording, command);
        } catch (error) {
          // A contract error is an answer (recorded); anything else ends the model's run there.
          if (!(error instanceof ContractError)) break;
        }
      }
      const calls = NativeCalls.run(
        spec.driver,
        spec.capacityBytes(run),
        spec.setup(run),
        recorder.calls,
        commands.length,
      );
      return spec.impl(run, env, calls);
    },
    apply: (side, command) => {
      const calls = spec.callsOf(side);
      if (calls === null) return base.apply(side, command);
      calls.beginCommand();
      try {
        return base.apply(side, command);
      } finally {
        calls.endCommand();
      }
    },
    invariants: [...faults, ...base.invariants] as CallSystem<Schema, Cmd, S>['invariants'],
    driver: spec.driver,
  };
}
