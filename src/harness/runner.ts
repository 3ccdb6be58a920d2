/**
 * The side-by-side runner: applies each command to the model and to the implementation,
 * runs every invariant, compares the two observations, and stops at the first step where
 * anything fails with a report that names the system, config, step, command and check.
 */
import { contractErrorObservation } from '../contract.js';
import { jsonDiff, jsonEqual, type Json, type JsonObject } from './json.js';
import type { Command, OpNamed, RunEnv, SystemDef } from './system.js';
import type { Visual } from './visual.js';
import { present } from '../assert.js';

/** The check name used when the two observations differ. */
export const OBSERVATION_CHECK = 'observation';
/** Check names used when a side throws something other than a ContractError. */
export const MODEL_EXCEPTION_CHECK = 'model-exception';
export const IMPL_EXCEPTION_CHECK = 'impl-exception';
/** A side could not even be built for the config (createModel/createImpl threw). */
export const SETUP_EXCEPTION_CHECK = 'setup-exception';
/** Prefix of the check reported when an invariant itself throws. */
export const INVARIANT_EXCEPTION_PREFIX = 'invariant-exception:';

export interface Failure {
  readonly system: string;
  readonly config: JsonObject;
  /** 0-based index of the failing command. */
  readonly step: number;
  readonly command: Command;
  /** The first failed check (invariants in declaration order, then the observation). */
  readonly check: string;
  /** Every check that failed at that step. */
  readonly checks: readonly string[];
  readonly message: string;
  readonly modelObservation: Json;
  readonly implObservation: Json;
  readonly diff: readonly string[];
}

export type RunOutcome =
  | { readonly ok: true; readonly steps: number }
  | { readonly ok: false; readonly failure: Failure };

/** Probe counts of one run (or of many, when a context is shared). */
export class RunContext implements RunEnv {
  readonly probeCounts = new Map<string, number>();
  probe(name: string): void {
    this.probeCounts.set(name, (this.probeCounts.get(name) ?? 0) + 1);
  }
}

/**
 * Progress cells a watchdog in another thread reads (hang detection, see src/cli/watchdog.ts):
 * [0] sequences started in this thread, [1] the step the current sequence is at. Set only in
 * campaign worker threads; the per-step cost is one Atomics.store when set, one test when not.
 */
let monitor: Int32Array | null = null;
export const MONITOR_SEQUENCES = 0;
export const MONITOR_STEP = 1;

/** Lets another thread watch this thread's sequences (null: stop). */
export function setRunMonitor(cells: Int32Array | null): void {
  monitor = cells;
}

/** The implementation's env: its probes are not counted (each event counts once, from the model). */
const SILENT_ENV: RunEnv = { probe() {} };

/**
 * What a shrink must preserve: the failed check, and for an observation difference also the
 * failing op and the first differing field, so a shrink cannot trade "E_INVALIDARG against
 * S_OK" for an unrelated difference that happens to be shorter.
 */
export function failureKey(failure: Failure): string {
  if (failure.check !== OBSERVATION_CHECK) return failure.check;
  const firstDiff = failure.diff[0] ?? '';
  const field = firstDiff.slice(0, Math.max(0, firstDiff.indexOf(':')));
  return `${OBSERVATION_CHECK}:${failure.command.op}:${field}`;
}

function crashText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Builds an implementation side in place of the system's own (a mutant or a user's module).
 * `commands` is the whole sequence the side will be given (a native driver receives a run as
 * one batch, see src/native/); other factories ignore it.
 */
// biome-ignore lint/suspicious/noExplicitAny: a factory for any system's config (the harness never reads it)
export type ImplFactory<C = any, S = unknown> = (
  config: C,
  env: RunEnv,
  commands?: readonly OpNamed[],
) => S;

export interface RunOptions<C = JsonObject, S = unknown> {
  /** Replaces the system's implementation (a mutant or a user's module). */
  readonly implFactory?: ImplFactory<C, S>;
  readonly context?: RunContext;
  /** traceSequence only: also record each side's SystemDef.visual after every step (the HTML report). */
  readonly withVisuals?: boolean;
}

/** What a side that threw something other than a ContractError returns instead of an observation. */
class Crash {
  constructor(readonly text: string) {}
}

function applySafely<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  side: S,
  command: Cmd,
): Json | Crash {
  try {
    return system.apply(side, command);
  } catch (error) {
    return contractErrorObservation(error) ?? new Crash(crashText(error));
  }
}

function observationOf(applied: Json | Crash): Json {
  return applied instanceof Crash ? { crash: applied.text } : applied;
}

/**
 * Runs one sequence side by side. Deterministic: no clock, no randomness. The per-step fast
 * path allocates nothing beyond the observations; a failing step is then evaluated in full
 * (invariants are pure checks) to list every check that failed.
 */
export function runSequence<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  config: C,
  commands: readonly Cmd[],
  options: RunOptions<C, S> = {},
): RunOutcome {
  const context = options.context ?? new RunContext();
  let model: S;
  let impl: S;
  const watched = monitor;
  if (watched !== null) {
    Atomics.store(watched, MONITOR_STEP, -1); // building the sides
    Atomics.add(watched, MONITOR_SEQUENCES, 1);
  }
  try {
    model = system.createModel(config, context);
    impl = (options.implFactory ?? system.createImpl)(config, SILENT_ENV, commands);
  } catch (error) {
    const command = (commands[0] ?? { op: '(none)' }) as unknown as Command;
    const text = crashText(error);
    return {
      ok: false,
      failure: {
        system: system.name,
        config,
        step: 0,
        command,
        check: SETUP_EXCEPTION_CHECK,
        checks: [SETUP_EXCEPTION_CHECK],
        message: `building a side threw ${text}`,
        modelObservation: null,
        implObservation: null,
        diff: [],
      },
    };
  }
  const invariants = system.invariants;
  const invariantCount = invariants.length;
  for (let step = 0; step < commands.length; step++) {
    const command = commands[step]!;
    if (watched !== null) Atomics.store(watched, MONITOR_STEP, step);
    const fromModel = applySafely(system, model, command);
    const fromImpl = applySafely(system, impl, command);
    let ok = !(fromModel instanceof Crash) && !(fromImpl instanceof Crash);
    try {
      for (let i = 0; ok && i < invariantCount; i++)
        ok = invariants[i]!.check(model, impl, config) === null;
    } catch {
      ok = false; // describeFailure names the invariant that threw
    }
    if (ok && jsonEqual(fromModel as Json, fromImpl as Json)) continue;
    return {
      ok: false,
      failure: describeFailure(system, config, step, command, model, impl, fromModel, fromImpl),
    };
  }
  return { ok: true, steps: commands.length };
}

function describeFailure<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  config: C,
  step: number,
  command: Cmd,
  model: S,
  impl: S,
  fromModel: Json | Crash,
  fromImpl: Json | Crash,
): Failure {
  const failed: string[] = [];
  const messages: string[] = [];
  if (fromModel instanceof Crash) {
    failed.push(MODEL_EXCEPTION_CHECK);
    messages.push(`the model threw ${fromModel.text}`);
  }
  if (fromImpl instanceof Crash) {
    failed.push(IMPL_EXCEPTION_CHECK);
    messages.push(`the implementation threw ${fromImpl.text}`);
  }
  if (failed.length === 0) {
    for (const invariant of system.invariants) {
      let message: string | null;
      try {
        message = invariant.check(model, impl, config);
      } catch (error) {
        failed.push(`${INVARIANT_EXCEPTION_PREFIX}${invariant.name}`);
        messages.push(`${invariant.name} threw ${crashText(error)}`);
        continue;
      }
      if (message !== null) {
        failed.push(invariant.name);
        messages.push(`${invariant.name}: ${message}`);
      }
    }
  }
  const modelObservation = observationOf(fromModel);
  const implObservation = observationOf(fromImpl);
  if (!jsonEqual(modelObservation, implObservation)) {
    failed.push(OBSERVATION_CHECK);
    messages.push('the observations of model and implementation differ');
  }
  return {
    system: system.name,
    config,
    step,
    command: command as unknown as Command,
    check: present(failed[0], 'a failed step fails at least one check', step),
    checks: failed,
    message: messages.join('\n'),
    modelObservation,
    implObservation,
    diff: jsonDiff(modelObservation, implObservation),
  };
}

/** A multi-line human report of a failure, including the sequence up to the failing step. */
export function formatFailure(failure: Failure, commands?: readonly Command[]): string {
  const lines = [
    `${failure.system}: check '${failure.check}' failed at step ${failure.step}` +
      (commands ? ` of ${commands.length}` : ''),
    `  config:  ${JSON.stringify(failure.config)}`,
    `  command: ${JSON.stringify(failure.command)}`,
    ...failure.message.split('\n').map((line) => `  ${line}`),
    `  model observation: ${JSON.stringify(failure.modelObservation)}`,
    `  impl observation:  ${JSON.stringify(failure.implObservation)}`,
  ];
  if (failure.diff.length > 0) {
    lines.push('  diff (model => impl):', ...failure.diff.map((line) => `    ${line}`));
  }
  if (commands) {
    lines.push('  sequence:');
    commands.slice(0, failure.step + 1).forEach((command, index) => {
      lines.push(`    ${String(index).padStart(3)} ${JSON.stringify(command)}`);
    });
  }
  return lines.join('\n');
}

/** One step of a traced sequence: the command and what each side answered. */
export interface TracedStep {
  readonly command: Command;
  readonly model: Json;
  readonly impl: Json;
  /** SystemDef.trace of each side after the step, when the system has one. */
  readonly modelTrace?: Json;
  readonly implTrace?: Json;
  /** SystemDef.visual of each side after the step, when the system has one (the HTML report draws it). */
  readonly modelVisual?: Visual;
  readonly implVisual?: Visual;
}

/**
 * Replays a sequence and records every step's observations on both sides (for reports; the
 * checks are runSequence's). Stops after `lastStep` (default: the whole sequence) or when a
 * side cannot be built.
 */
export function traceSequence<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  config: C,
  commands: readonly Cmd[],
  options: RunOptions<C, S> = {},
  lastStep = commands.length - 1,
): TracedStep[] {
  let model: S;
  let impl: S;
  try {
    model = system.createModel(config, new RunContext());
    impl = (options.implFactory ?? system.createImpl)(config, SILENT_ENV, commands);
  } catch {
    return [];
  }
  const steps: TracedStep[] = [];
  const trace = system.trace;
  const visual = options.withVisuals === true ? system.visual : undefined;
  for (let step = 0; step <= lastStep && step < commands.length; step++) {
    const command = commands[step]!;
    const fromModel = observationOf(applySafely(system, model, command));
    const fromImpl = observationOf(applySafely(system, impl, command));
    let traced: TracedStep = {
      command: command as unknown as Command,
      model: fromModel,
      impl: fromImpl,
    };
    if (trace !== undefined)
      traced = {
        ...traced,
        modelTrace: safeTrace(trace, model),
        implTrace: safeTrace(trace, impl),
      };
    if (visual !== undefined) traced = { ...traced, ...visualsOf(visual, model, impl) };
    steps.push(traced);
  }
  return steps;
}

/** Both sides' pictures; a side whose visual throws (a broken implementation) gets none. */
function visualsOf<S>(
  visual: (side: S) => Visual,
  model: S,
  impl: S,
): { modelVisual?: Visual; implVisual?: Visual } {
  const result: { modelVisual?: Visual; implVisual?: Visual } = {};
  try {
    result.modelVisual = visual(model);
  } catch {
    // left out: the report shows the side's answers without its picture
  }
  try {
    result.implVisual = visual(impl);
  } catch {
    // left out, as above
  }
  return result;
}

function safeTrace<S>(trace: (side: S) => Json, side: S): Json {
  try {
    return trace(side);
  } catch (error) {
    return { traceFailed: crashText(error) };
  }
}

/**
 * Told of every smaller failing case a shrink accepts (the best case so far, and how it fails),
 * so a caller can show progress and keep the best counterexample if the shrink is cut short.
 */
export type ShrinkObserver<C = JsonObject, Cmd = Command> = (
  config: C,
  commands: readonly Cmd[],
  failure: Failure,
) => void;

/** Bounds of the greedy config shrink in `minimizeCase`. */
const CONFIG_SHRINK_ROUNDS = 64;
const CONFIG_CANDIDATES_PER_ROUND = 256;

function failsWith<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  config: C,
  commands: readonly Cmd[],
  key: string,
  options: RunOptions<C, S>,
): RunOutcome | null {
  const outcome = runSequence(system, config, commands, options);
  return !outcome.ok && failureKey(outcome.failure) === key ? outcome : null;
}

/**
 * Makes a failing sequence 1-minimal: removes commands one at a time (last first) while the
 * sequence still fails the same way (same `failureKey`). Runs after fast-check's shrinker, whose
 * result is already small, so the quadratic worst case stays cheap.
 */
export function minimizeSequence<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  config: C,
  commands: readonly Cmd[],
  options: RunOptions<C, S> = {},
  onProgress?: ShrinkObserver<C, Cmd>,
): Cmd[] {
  const first = runSequence(system, config, commands, options);
  if (first.ok) return [...commands];
  const key = failureKey(first.failure);
  let current = commands.slice(0, first.failure.step + 1);
  for (let index = current.length - 1; index >= 0; index--) {
    const candidate = [...current.slice(0, index), ...current.slice(index + 1)];
    const outcome = failsWith(system, config, candidate, key, options);
    if (outcome !== null && !outcome.ok) {
      current = candidate.slice(0, outcome.failure.step + 1);
      index = Math.min(index, current.length);
      onProgress?.(config, current, outcome.failure);
    }
  }
  return current;
}

/**
 * Minimizes a failing case: the sequence is made 1-minimal, then the config is shrunk greedily
 * with the config arbitrary's own shrinker (fewer objects, smaller pools) as long as it still
 * fails the same way, and the sequence is minimized again after each accepted step.
 */
export function minimizeCase<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  config: C,
  commands: readonly Cmd[],
  options: RunOptions<C, S> = {},
  onProgress?: ShrinkObserver<C, Cmd>,
): { config: C; commands: Cmd[] } {
  const first = runSequence(system, config, commands, options);
  if (first.ok) return { config, commands: [...commands] };
  const key = failureKey(first.failure);
  let currentConfig = config;
  let current = minimizeSequence(system, config, commands, options, onProgress);
  const configArb = system.configArb();
  for (let round = 0; round < CONFIG_SHRINK_ROUNDS; round++) {
    if (!configArb.canShrinkWithoutContext(currentConfig)) break;
    let accepted = false;
    let tried = 0;
    for (const candidate of configArb.shrink(currentConfig, undefined)) {
      if (tried++ >= CONFIG_CANDIDATES_PER_ROUND) break;
      if (system.checkConfig(candidate.value) !== null) continue;
      const outcome = failsWith(system, candidate.value, current, key, options);
      if (outcome !== null && !outcome.ok) {
        currentConfig = candidate.value;
        onProgress?.(currentConfig, current, outcome.failure);
        current = minimizeSequence(system, currentConfig, current, options, onProgress);
        accepted = true;
        break;
      }
    }
    if (!accepted) break;
  }
  return { config: currentConfig, commands: current };
}
