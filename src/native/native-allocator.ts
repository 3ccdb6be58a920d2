/**
 * The native allocator system: the user-allocator system (src/systems/user-allocator.ts: the
 * same ops, model, policies and checks) whose implementation side is a driver process speaking
 * the protocol of docs/native-protocol.md. Commands never depend on answers (handles are
 * indices the driver resolves as the harness does), so a run travels as one batch when the
 * implementation side is built; the side then hands the driver's answers out in order as the
 * runner applies the commands, and checks that every answer was used exactly as sent.
 *
 * A driver that stops short (a sanitizer report, a signal, an exit, bytes that are no answer,
 * a run that takes too long) ends the run at the command it did not answer, as a finding of its
 * own check (FAULT_CHECKS), shrunk and stored like any other.
 */
import fc from 'fast-check';
import path from 'node:path';
import { present } from '../assert.js';
import { InputError } from '../harness/json.js';
import type { CommandOf, Invariant, SystemDef } from '../harness/system.js';
import { Nat, OneOf, parseWith, Str, Strict, type Static } from '../harness/schema.js';
import { isPowerOfTwo, type Allocator, type AllocatorPolicy } from '../alloc/allocator.js';
import { ALLOCATOR_POLICIES } from '../user-allocator-module.js';
import { promiseProblem, type AllocatorPromise } from '../systems/alloc-promise.js';
import {
  userAllocatorSchemas,
  userAllocatorSystem,
  type UserAllocatorSystem,
} from '../systems/user-allocator.js';
import { allocSide, type AllocSide } from '../systems/alloc-common.js';
import { decodeAnswers, encodeAllocBatch, type DecodedAnswers } from './protocol.js';
import {
  DriverStartError,
  NativeDriver,
  type NativeDriverOptions,
  type NativeFault,
} from './driver.js';
import { faultInvariants } from './native-calls.js';

/** The system name of every native allocator (regression files name the executable in the config). */
export const NATIVE_ALLOCATOR_SYSTEM = 'native-allocator';

export const NativeAllocatorConfigSchema = Strict({
  capacityBytes: Nat({
    description:
      "bytes handed to the driver's create callback: every offset lies in [0, capacityBytes)",
  }),
  executable: Str({
    description:
      'the driver executable, relative to the project root (the folder of gpumv.config, else the working directory)',
  }),
  policy: OneOf(ALLOCATOR_POLICIES, {
    description: "the policy the driver declared in its hello ('any': safety checks only)",
  }),
});
export type NativeAllocatorConfig = Static<typeof NativeAllocatorConfigSchema>;

/**
 * Requests of 2^31 bytes and more, around the 32-bit boundaries (a native allocator that keeps
 * sizes in 32 bits wraps there); the model refuses what does not fit, so every answer but null
 * is checked.
 */
const WIDE_SIZES = [
  2 ** 31 - 1,
  2 ** 31,
  2 ** 31 + 1,
  2 ** 32 - 1,
  2 ** 32,
  2 ** 32 + 1,
  2 ** 32 + 4096,
];
/** One command in WIDE_ODDS is such a request. */
const WIDE_ODDS = 40;

/** A burst of more requests than this may take long on its own (an O(live) allocator under ASan). */
const HEAVY_BURST = 16;

/** The bursts of more than HEAVY_BURST requests: the driver's CPU-time hang rule waits while it may be in one. */
function heavyCommands(commands: readonly UserAllocatorCommand[]): number[] {
  const heavy: number[] = [];
  commands.forEach((command, i) => {
    if ((command.op === 'allocBurst' || command.op === 'freeBurst') && command.count > HEAVY_BURST)
      heavy.push(i);
  });
  return heavy;
}

/** The implementation side's allocator: the driver's answers to one run, handed out in order. */
export class NativeAllocator implements Allocator {
  /** Why the driver's answers end (set at the command the driver did not answer). */
  fault: NativeFault | null = null;
  private command = -1;
  private cursor = 0;
  private end = 0;

  constructor(
    private readonly answers: DecodedAnswers,
    private readonly batchFault: NativeFault | null,
    private readonly commands: number,
  ) {}

  private garbage(detail: string): void {
    this.fault = { kind: 'garbage', detail, stderr: [] };
  }

  /** Called before each command: selects its answer. */
  beginCommand(): void {
    const command = ++this.command;
    if (this.fault !== null) return;
    const answers = this.answers;
    const lastWithLateFault =
      this.batchFault !== null && answers.count === this.commands && command === this.commands - 1;
    if (command >= answers.count || lastWithLateFault) {
      // A fault after the last answer (e.g. in destroy) is reported at the run's last command.
      this.fault = this.batchFault ?? {
        kind: 'garbage',
        detail: `it answered ${answers.count} commands of ${this.commands} and then ended the run`,
        stderr: [],
      };
      this.cursor = this.end = 0;
      return;
    }
    this.cursor = answers.starts[command]!;
    this.end = answers.starts[command + 1]!;
    if (answers.statuses[command] === 2)
      this.garbage(`it did not know the op of command ${command}`);
  }

  /** Called after each command: every value of its answer must have been used. */
  endCommand(): void {
    if (this.fault === null && this.cursor !== this.end) {
      const start = present(
        this.answers.starts[this.command],
        'endCommand after a beginCommand that found no answer',
        this.command,
      );
      this.garbage(
        `it answered command ${this.command} with ${this.end - start} values; the harness used ${this.cursor - start}`,
      );
    }
  }

  private next(call: string): number | null | undefined {
    if (this.fault !== null) return undefined;
    if (this.cursor >= this.end) {
      this.garbage(`its answer to command ${this.command} has no value for ${call}`);
      return undefined;
    }
    return this.answers.values[this.cursor++];
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    const value = this.next(`alloc(${sizeBytes}, ${alignBytes})`);
    return value === undefined ? null : value;
  }

  free(offsetBytes: number): void {
    const value = this.next(`free(${offsetBytes})`);
    if (value === undefined) return;
    if (value !== offsetBytes) {
      this.garbage(
        `it freed ${value === null ? 'nothing' : `offset ${value}`} where the harness resolved offset ${offsetBytes} (a driver loop that resolves handles differently)`,
      );
      return;
    }
    if (this.cursor === this.end && this.answers.statuses[this.command] === 1)
      throw new Error(`the driver's free callback rejected free(${offsetBytes})`);
  }
}

function isNative(side: AllocSide): side is AllocSide<NativeAllocator> {
  return side.allocator instanceof NativeAllocator;
}

type UserAllocatorCommand = CommandOf<UserAllocatorSystem>;

/** The user-allocator system's shape with the native config, and the driver it runs against. */
export type NativeAllocatorSystem = SystemDef<
  NativeAllocatorConfig,
  UserAllocatorCommand,
  AllocSide
> & {
  readonly driver: NativeDriver;
};

/** What a driver's hello declares, checked; a string names the problem. */
export function declaredPolicy(driver: NativeDriver):
  | {
      policy: AllocatorPolicy;
      minBlockBytes: number;
      poolAlignBytes: number;
      promise?: AllocatorPromise;
      maxCapacityBytes?: number;
    }
  | string {
  const fields = driver.hello.fields;
  const system = fields.get('system');
  if (system !== 'allocator')
    return `its hello declares system ${JSON.stringify(system)}; this harness drives 'allocator'`;
  const policy = ALLOCATOR_POLICIES.find((known) => known === fields.get('policy'));
  if (policy === undefined)
    return `its hello declares policy ${JSON.stringify(fields.get('policy'))}; expected one of ${ALLOCATOR_POLICIES.join(', ')}`;
  const number = (key: string): number | string => {
    const text = fields.get(key);
    if (text === undefined) return 256;
    const value = Number(text);
    return /^[0-9]+$/.test(text) && isPowerOfTwo(value)
      ? value
      : `its hello declares ${key}=${text}, not a power of two`;
  };
  const minBlockBytes = number('minBlockBytes');
  const poolAlignBytes = number('poolAlignBytes');
  if (typeof minBlockBytes === 'string') return minBlockBytes;
  if (typeof poolAlignBytes === 'string') return poolAlignBytes;
  // `promise.<field>=<value>` lines: what a module's `export const promise` declares.
  const promise: Record<string, number | string | boolean> = {};
  for (const [key, text] of fields) {
    if (!key.startsWith('promise.')) continue;
    promise[key.slice('promise.'.length)] =
      text === 'true'
        ? true
        : text === 'false'
          ? false
          : /^[0-9]+$/.test(text)
            ? Number(text)
            : text;
  }
  const hasPromise = Object.keys(promise).length > 0;
  const promiseText = hasPromise ? promiseProblem(promise) : null;
  if (promiseText !== null) return `its hello declares ${promiseText}`;
  const maxText = fields.get('maxCapacityBytes');
  let maxCapacityBytes: number | undefined;
  if (maxText !== undefined) {
    maxCapacityBytes = Number(maxText);
    if (
      !(/^[0-9]+$/.test(maxText) && maxCapacityBytes >= 1 && Number.isSafeInteger(maxCapacityBytes))
    )
      return `its hello declares maxCapacityBytes=${maxText}, not a positive integer`;
  }
  return {
    policy,
    minBlockBytes,
    poolAlignBytes,
    ...(hasPromise ? { promise: promise as AllocatorPromise } : {}),
    ...(maxCapacityBytes === undefined ? {} : { maxCapacityBytes }),
  };
}

/**
 * The system of a started driver. `executable` is what configs (and so regression files)
 * record: the path relative to the project root.
 */
export function nativeAllocatorSystem(
  driver: NativeDriver,
  executable: string,
): NativeAllocatorSystem {
  const declared = declaredPolicy(driver);
  if (typeof declared === 'string') throw new DriverStartError(executable, declared);
  const { policy } = declared;
  const base = userAllocatorSystem(
    executable,
    () => {
      throw new Error('a native allocator is built from its driver');
    },
    policy,
    declared,
  );
  const asUserConfig = (config: NativeAllocatorConfig) => ({
    capacityBytes: config.capacityBytes,
    allocatorModule: executable,
    policy: config.policy,
  });
  const checkConfig = (config: NativeAllocatorConfig): string | null =>
    base.checkConfig(asUserConfig(config));
  const wide = fc.record({
    op: fc.constant('alloc' as const),
    sizeBytes: fc.constantFrom(...WIDE_SIZES),
    alignBytes: fc.constantFrom(1, 16, 256),
  });
  // The base's invariants read nothing of the config but the policy's promise, which ignores it.
  const faults = faultInvariants<AllocSide>(
    executable,
    (side) => (isNative(side) ? side.allocator.fault : null),
    (side) => side.steps - 1,
  );
  const invariants = [...faults, ...base.invariants] as Invariant<AllocSide, unknown>[];
  return {
    ...base,
    name: NATIVE_ALLOCATOR_SYSTEM,
    summary: `the native allocator ${executable} (policy ${policy})`,
    configSchema: NativeAllocatorConfigSchema,
    checkConfig,
    parseConfig: (raw: unknown, source: string, at: string): NativeAllocatorConfig => {
      const config = parseWith(NativeAllocatorConfigSchema, raw, source, at);
      const problem = checkConfig(config);
      if (problem !== null) throw new InputError(source, at, problem);
      return config;
    },
    configArb: (): fc.Arbitrary<NativeAllocatorConfig> =>
      base.configArb().map(
        (config): NativeAllocatorConfig => ({
          capacityBytes: config.capacityBytes,
          executable,
          policy,
        }),
      ),
    commandArb: (config: NativeAllocatorConfig, plan) =>
      fc.oneof(
        { weight: WIDE_ODDS - 1, arbitrary: base.commandArb(asUserConfig(config), plan) },
        { weight: 1, arbitrary: wide },
      ),
    createModel: (config: NativeAllocatorConfig, env) =>
      base.createModel(asUserConfig(config), env),
    createImpl: (config: NativeAllocatorConfig, env, commands) => {
      if (commands === undefined)
        throw new Error(
          `${NATIVE_ALLOCATOR_SYSTEM}: the runner passes no commands; a native driver takes a run as one batch`,
        );
      const result = driver.runBatch(
        (flags) => encodeAllocBatch(config.capacityBytes, commands, flags),
        commands.length,
        heavyCommands(commands),
      );
      let answers = decodeAnswers(result.frames, commands.length);
      let fault = result.fault;
      if (typeof answers === 'string') {
        fault = { kind: 'garbage', detail: answers, stderr: [] };
        answers = { statuses: new Int32Array(0), starts: new Int32Array(1), values: [], count: 0 };
      }
      return allocSide(
        new NativeAllocator(answers, fault, commands.length),
        config.capacityBytes,
        env,
        false,
      );
    },
    apply: (side, command) => {
      if (!isNative(side)) return base.apply(side, command);
      side.allocator.beginCommand();
      const observation = base.apply(side, command);
      side.allocator.endCommand();
      return observation;
    },
    invariants,
    driver,
  };
}

/** The schemas of the native-allocator system's files: its config, and the user allocator's commands. */
export const nativeAllocatorSchemas: Pick<
  NativeAllocatorSystem,
  'name' | 'configSchema' | 'commandSchemas'
> = {
  name: NATIVE_ALLOCATOR_SYSTEM,
  configSchema: NativeAllocatorConfigSchema,
  commandSchemas: userAllocatorSchemas.commandSchemas,
};

/** The drivers this thread started, by absolute path: one long-lived process each. */
const DRIVERS = new Map<string, NativeDriver>();

/** The driver of an executable, started once per thread (throws DriverStartError when it cannot start). */
export function driverFor(absolute: string, options: NativeDriverOptions = {}): NativeDriver {
  let driver = DRIVERS.get(absolute);
  if (driver === undefined) {
    driver = new NativeDriver(absolute, options);
    DRIVERS.set(absolute, driver);
  }
  return driver;
}

/** Ends every driver this thread started. */
export function closeDrivers(): void {
  for (const driver of DRIVERS.values()) driver.close();
  DRIVERS.clear();
}

/**
 * The native allocator system of an executable relative to `root` (what a regression file's
 * config holds), its driver started once per thread.
 */
export function nativeAllocatorForProject(
  root: string,
  executable: string,
  options: NativeDriverOptions = {},
): NativeAllocatorSystem {
  const { driver, recorded } = projectDriver(root, executable, options);
  return nativeAllocatorSystem(driver, recorded);
}

/** The driver of an executable relative to `root`, and the path files record (relative, forward slashes). */
export function projectDriver(
  root: string,
  executable: string,
  options: NativeDriverOptions = {},
): { driver: NativeDriver; recorded: string } {
  const absolute = path.resolve(root, executable);
  return { driver: driverFor(absolute, options), recorded: recordedPath(root, absolute) };
}

/** How files record an executable: relative to the project root, forward slashes. */
export function recordedPath(root: string, absolute: string): string {
  return path.relative(root, absolute).split(path.sep).join('/') || absolute;
}
