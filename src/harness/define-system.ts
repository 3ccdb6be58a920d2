/**
 * `defineSystem`: a system written once.
 *
 * The config is one schema (plus a semantic check and its arbitrary); each op is one record
 * `{ fields, weight, arbitrary, apply }`. From them come the TypeScript types (the config type,
 * the command union), the runtime validation of files (with JSON paths), the JSON Schema of the
 * files, the command generator (weights, swarm plans) and the dispatch. Adding an op is one edit
 * in one place; `apply` receives its command already typed; an op without `apply` does not
 * type-check.
 *
 *   const Config = Strict({ capacityBytes: Nat() });
 *   const op = opsFor<Static<typeof Config>, MySide>();
 *   export const mySystem = defineSystem({
 *     name: 'my-system', summary: '...',
 *     config: { schema: Config, arbitrary: () => fc.record({ capacityBytes: fc.integer({ min: 1, max: 64 }) }) },
 *     ops: {
 *       alloc: op({ fields: { sizeBytes: Int() }, weight: 10,
 *                   arbitrary: (config, op) => fc.integer({ min: 1, max: config.capacityBytes }).map((sizeBytes) => ({ op, sizeBytes })),
 *                   apply: (side, command) => ({ offsetBytes: side.alloc(command.sizeBytes) }) }),
 *     },
 *     ...
 *   });
 */
import fc from 'fast-check';
import { InputError, isPlainObject, type Json, type JsonObject } from './json.js';
import { parseWith, Strict, Type, type Static, type TObject, type TProperties } from './schema.js';
import type { GenerationPlan, Invariant, RunEnv, SystemDef } from './system.js';
import type { Visual } from './visual.js';
import { Drawn, drawnConstant, drawnOneof } from './drawn.js';

/** The command of an op with fields `F`, as its `apply` receives it. */
export type OpCommand<F extends TProperties, K extends string = string> = {
  readonly op: K;
} & Static<TObject<F>>;

declare const opNameBrand: unique symbol;
/**
 * The op name an op's arbitrary receives and must put first in every command it builds:
 * `(config, op) => handle.map((index) => ({ op, index }))`. It is branded, so a string literal
 * (a misspelt or another op's name) does not type-check. Building the whole command in the op's
 * own map costs one object per generated command; mapping fields to a command afterwards cost
 * about 5 % of a side-by-side step on the fastest systems.
 */
export type OpName = string & { readonly [opNameBrand]: true };

/** A command as an op's arbitrary builds it. */
export type GeneratedCommand<F extends TProperties> = { readonly op: OpName } & Static<TObject<F>>;

/** A named extra generator entry of an op (e.g. malformed requests of `alloc`), drawn beside it. */
export interface OpVariant<C, F extends TProperties> {
  readonly weight: number | ((config: C) => number);
  readonly arbitrary: (config: C, op: OpName) => fc.Arbitrary<GeneratedCommand<F>>;
}

/** One op: its fields, how to generate it, and how to apply it to a side. */
export interface OpDef<C, S, F extends TProperties> {
  /** The command's fields besides `op` (TypeBox schemas). */
  readonly fields: F;
  /** Default generator weight (0: never generated unless a plan asks); may depend on the config. */
  readonly weight: number | ((config: C) => number);
  /** The commands' arbitrary for a config (see `OpName`); may be left out only by an op without fields. */
  readonly arbitrary?: (config: C, op: OpName) => fc.Arbitrary<GeneratedCommand<F>>;
  /**
   * Further generator entries that produce this op, each with its own name (a key a plan's
   * weights may use) and weight; drawn right after the op's own entry.
   */
  readonly variants?: Readonly<Record<string, OpVariant<C, F>>>;
  /** Applies the command to one side; returns the observation. Contract errors may be thrown. */
  apply(side: S, command: OpCommand<F>): Json;
}

/** The op-record builder of a system with config `C` and side `S` (lets `apply` be typed from `fields`). */
export function opsFor<C, S>(): <F extends TProperties>(def: OpDef<C, S, F>) => OpDef<C, S, F> {
  return (def) => def;
}

// biome-ignore lint/suspicious/noExplicitAny: each op has its own command type; the record is checked op by op
type AnyOps<C, S> = Record<string, OpDef<C, S, any>>;

/** The command union of an op record: `{ op: 'alloc', sizeBytes: number } | { op: 'free', index: number } | ...`. */
export type CommandUnion<Ops> = {
  [K in keyof Ops & string]: Ops[K] extends OpDef<never, never, infer F> ? OpCommand<F, K> : never;
}[keyof Ops & string];

export interface SystemSpec<C extends JsonObject, S, Ops extends AnyOps<C, S>> {
  readonly name: string;
  readonly summary: string;
  readonly config: {
    /** The config's schema; its static type is the config type (a schema that disagrees with the arbitrary does not compile). */
    readonly schema: TObject & { readonly static: C };
    /** Rules between fields that the schema cannot say; null when the config is fine. */
    readonly check?: (config: C) => string | null;
    readonly arbitrary: () => fc.Arbitrary<C>;
  };
  readonly ops: Ops;
  /**
   * The generator's final weight per entry (op or variant name) from the defaults and the plan;
   * without it a plan's weight replaces the default of the entry it names.
   */
  readonly weights?: (
    defaults: Readonly<Record<string, number>>,
    plan: GenerationPlan | undefined,
    config: C,
  ) => Record<string, number>;
  /**
   * Wraps every command (bookkeeping before and after any op, e.g. draining events); `dispatch`
   * applies the command's op. Without it the op's `apply` is called directly.
   */
  readonly around?: (
    side: S,
    command: CommandUnion<Ops>,
    dispatch: (side: S, command: CommandUnion<Ops>) => Json,
  ) => Json;
  readonly sequence: { readonly minLength: number; readonly maxLength: number };
  readonly createModel: (config: C, env: RunEnv) => S;
  readonly createImpl: (config: C, env: RunEnv) => S;
  readonly invariants: readonly Invariant<S, C>[];
  readonly probes: readonly string[];
  readonly faultOps?: Readonly<Record<string, readonly string[]>>;
  /** Reports only: what a side's last step did beyond its observation (see SystemDef.trace). */
  trace?(side: S): Json;
  /** Reports only: what the HTML report draws of a side after a step (see SystemDef.visual). */
  visual?(side: S): Visual;
  /** Reports only: the model is a stand-in without an opinion (see SystemDef.modelless). */
  readonly modelless?: boolean;
}

/** The system built from a spec: what the harness runs, with the spec's types. */
export type DefinedSystem<C extends JsonObject, S, Ops> = SystemDef<C, CommandUnion<Ops>, S> & {
  /** The op records, for systems that share ops or build on this one. */
  readonly ops: Ops;
};

function weightOf<C>(weight: number | ((config: C) => number), config: C): number {
  return typeof weight === 'number' ? weight : weight(config);
}

/** Builds a system from its spec; throws at once when the spec contradicts itself. */
export function defineSystem<C extends JsonObject, S, Ops extends AnyOps<C, S>>(
  spec: SystemSpec<C, S, Ops>,
): DefinedSystem<C, S, Ops> {
  type Cmd = CommandUnion<Ops>;
  const { name } = spec;
  const opNames = Object.keys(spec.ops);
  if (opNames.length === 0) throw new Error(`system ${name}: no ops`);
  const commandSchemas: Record<string, TObject> = {};
  // A plain object without prototype: a keyed load per command (op names are few and fixed).
  const applyByOp: Record<string, ((side: S, command: Cmd) => Json) | undefined> =
    Object.create(null);
  for (const [op, def] of Object.entries(spec.ops)) {
    if (def.arbitrary === undefined && Object.keys(def.fields).length > 0)
      throw new Error(`system ${name}: op ${op} has fields but no arbitrary`);
    commandSchemas[op] = Strict({ op: Type.Literal(op), ...def.fields });
    applyByOp[op] = def.apply as (side: S, command: Cmd) => Json;
  }
  for (const fault of Object.values(spec.faultOps ?? {})) {
    for (const op of fault)
      if (applyByOp[op] === undefined)
        throw new Error(`system ${name}: fault op ${op} is not an op`);
  }

  const dispatch = (side: S, command: Cmd): Json => {
    const apply = applyByOp[command.op];
    if (apply === undefined) throw new Error(`${name}: unknown op ${command.op}`);
    return apply(side, command);
  };
  const around = spec.around;
  const apply =
    around === undefined
      ? dispatch
      : (side: S, command: Cmd): Json => around(side, command, dispatch);

  const parseConfig = (raw: unknown, source: string, at: string): C => {
    const config = parseWith(spec.config.schema, raw, source, at) as C;
    const problem = spec.config.check?.(config) ?? null;
    if (problem !== null) throw new InputError(source, at, problem);
    return config;
  };

  const parseCommand = (raw: unknown, source: string, at: string): Cmd => {
    if (!isPlainObject(raw))
      throw new InputError(source, at, `expected a command object, got ${JSON.stringify(raw)}`);
    const op = raw.op;
    if (typeof op !== 'string')
      throw new InputError(source, `${at}.op`, 'missing or non-string op');
    const schema = commandSchemas[op];
    if (schema === undefined || !Object.hasOwn(commandSchemas, op)) {
      throw new InputError(
        source,
        `${at}.op`,
        `unknown op '${op}' for system ${name}; known: ${opNames.join(', ')}`,
      );
    }
    return parseWith(schema, raw, source, at) as Cmd;
  };

  // The generator entries, built once: one per op, then its variants, in declaration order (the
  // order fixes what a seed draws). A campaign builds a command arbitrary per run, so what does
  // not depend on the config (mappers, constant commands) is not rebuilt each time.
  const generators: {
    readonly entry: string;
    readonly weight: number | ((config: C) => number);
    readonly build: (config: C) => fc.Arbitrary<Cmd>;
  }[] = [];
  for (const [op, def] of Object.entries(spec.ops)) {
    const opName = op as OpName;
    const fieldsArbitrary = def.arbitrary;
    if (fieldsArbitrary === undefined) {
      // An op without fields is one constant command (no map per generated command).
      const constant = drawnConstant({ op } as Cmd);
      generators.push({ entry: op, weight: def.weight, build: () => constant });
    } else {
      generators.push({
        entry: op,
        weight: def.weight,
        build: (config) => fieldsArbitrary(config, opName) as unknown as fc.Arbitrary<Cmd>,
      });
    }
    for (const [variant, variantDef] of Object.entries(def.variants ?? {})) {
      generators.push({
        entry: variant,
        weight: variantDef.weight,
        build: (config) => variantDef.arbitrary(config, opName) as unknown as fc.Arbitrary<Cmd>,
      });
    }
  }

  const commandArb = (config: C, plan?: GenerationPlan): fc.Arbitrary<Cmd> => {
    let weights: Readonly<Record<string, number>> | undefined;
    if (spec.weights !== undefined) {
      const defaults: Record<string, number> = {};
      for (const generator of generators)
        defaults[generator.entry] = weightOf(generator.weight, config);
      weights = spec.weights(defaults, plan, config);
    }
    const weighted: { readonly arbitrary: fc.Arbitrary<Cmd>; readonly weight: number }[] = [];
    let drawn = true;
    for (const generator of generators) {
      const weight =
        weights?.[generator.entry] ??
        plan?.weights?.[generator.entry] ??
        weightOf(generator.weight, config);
      // Building draws nothing from the seed, so a disabled entry need not be built.
      if (weight > 0) {
        const arbitrary = generator.build(config);
        drawn &&= arbitrary instanceof Drawn;
        weighted.push({ arbitrary, weight });
      }
    }
    if (weighted.length === 0) throw new Error(`${name}: the generation plan disables every op`);
    // Every entry drawn (src/harness/drawn.ts): the choice is drawn too, and so can the sequence be.
    if (drawn)
      return drawnOneof(
        ...weighted.map((entry) => ({
          arbitrary: entry.arbitrary as Drawn<Cmd>,
          weight: entry.weight,
        })),
      );
    return fc.oneof(...weighted);
  };

  return {
    name,
    summary: spec.summary,
    configSchema: spec.config.schema,
    commandSchemas,
    opNames,
    ops: spec.ops,
    checkConfig: (config) => spec.config.check?.(config) ?? null,
    parseConfig,
    parseCommand,
    configArb: spec.config.arbitrary,
    commandArb,
    sequence: spec.sequence,
    createModel: spec.createModel,
    createImpl: spec.createImpl,
    apply,
    invariants: spec.invariants,
    probes: spec.probes,
    ...(spec.faultOps === undefined ? {} : { faultOps: spec.faultOps }),
    ...(spec.trace === undefined ? {} : { trace: spec.trace }),
    ...(spec.visual === undefined ? {} : { visual: spec.visual }),
    ...(spec.modelless === true ? { modelless: true } : {}),
  };
}
