/**
 * fast-check glue shared by the property suites, the fuzz CLI and `regress save`: one place
 * builds the (config, commands) arbitrary, so a seed and path printed by a test replay exactly
 * the same counterexample from the command line.
 */
import fc from 'fast-check';
import { commandContext, toolCommand, type Tool } from './command-line.js';
import type { JsonObject } from './json.js';
import {
  failureKey,
  runSequence,
  minimizeCase,
  type RunContext,
  type Failure,
  type ImplFactory,
  type RunOptions,
  type ShrinkObserver,
} from './runner.js';
import type { Command, GenerationPlan, OpNamed, SystemDef } from './system.js';
import { Drawn, drawnArray, drawnFirst } from './drawn.js';

/** The argument tuple of a fast-check property (what fc.check's details carry). */
type PropertyArgs<P> = P extends fc.IRawProperty<infer Ts> ? Ts : never;

export interface Case<C = JsonObject, Cmd = Command> {
  readonly config: C;
  readonly commands: Cmd[];
}

/**
 * The arbitrary of whole test cases for a system. `unbiased` turns off fast-check's bias toward
 * small values (campaigns run one case per seed, where the bias of a first run would make half
 * the sequences short); the plan may keep the bias for the config (swarm: small config ranges).
 */
export function caseArb<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  plan?: GenerationPlan,
  maxLength?: number,
  unbiased = false,
): fc.Arbitrary<Case<C, Cmd>> {
  const { minLength } = system.sequence;
  const max = maxLength ?? system.sequence.maxLength;
  const configs =
    unbiased && plan?.smallConfigs !== true ? fc.noBias(system.configArb()) : system.configArb();
  return configs.chain((config) => {
    const command = system.commandArb(config, plan);
    const lengths = { minLength: Math.min(minLength, max), maxLength: max, size: 'max' } as const;
    // A drawn command arbitrary (src/harness/drawn.ts) draws the sequence without fast-check's
    // per-value bookkeeping: the same commands, and the same shrinks.
    const commands =
      command instanceof Drawn
        ? drawnFirst(drawnArray(command, lengths))
        : fc.array(command, lengths);
    return fc.record({
      config: fc.constant(config),
      commands: unbiased ? fc.noBias(commands) : commands,
    });
  });
}

export interface CheckOptions<C = JsonObject, S = unknown> {
  readonly seed: number;
  readonly numRuns: number;
  /** fast-check replay path; with it, numRuns is ignored and the counterexample is rebuilt. */
  readonly path?: string;
  readonly implFactory?: ImplFactory<C, S>;
  readonly plan?: GenerationPlan;
  readonly maxLength?: number;
  /** Disable shrinking (used to time raw detection). */
  readonly noShrink?: boolean;
  /** Collects probe counts over every generated run (and its enabled fault sites). */
  readonly context?: RunContext;
  /** Generate without fast-check's bias toward small values (see caseArb). */
  readonly unbiased?: boolean;
  /** Called once, when the first failing case is found (before shrinking), with that case. */
  readonly onFirstFailure?: (runIndex: number, found: Case<C, OpNamed>, failure: Failure) => void;
  /** Called at every smaller failing case the shrink accepts (fast-check's, then minimizeCase's). */
  readonly onShrink?: ShrinkObserver<C, OpNamed>;
}

export interface Finding<C = JsonObject, Cmd = Command> {
  readonly seed: number;
  /** fast-check path of the shrunk counterexample (replays it with the same seed). */
  readonly path: string;
  /** Index of the run (0-based) that first failed, before shrinking. */
  readonly runIndex: number;
  /** Sequence length of the first failing case before shrinking. */
  readonly originalLength: number;
  /** The shrunk case, then minimized (1-minimal sequence, greedily shrunk config). */
  readonly config: C;
  readonly commands: Cmd[];
  readonly failure: Failure;
}

export type CheckResult<C = JsonObject, Cmd = Command> =
  | { readonly failed: false; readonly numRuns: number; readonly commandsRun: number }
  | ({ readonly failed: true; readonly commandsRun: number } & Finding<C, Cmd>);

/** A seed/path pair that does not lead to a counterexample of this system's arbitrary. */
export class ReplayPathError extends Error {
  constructor(system: string, seed: number, path: string) {
    super(
      `seed ${seed} path ${path} does not replay for ${system}: was it printed for another system or another version of its generator?`,
    );
    this.name = 'ReplayPathError';
  }
}

/** Runs the property once with fast-check; returns the minimal finding if it fails. */
export function checkSystem<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  options: CheckOptions<C, S>,
): CheckResult<C, Cmd> {
  const runOptions: RunOptions<C, S> =
    options.implFactory === undefined ? {} : { implFactory: options.implFactory };
  const generationOptions = { ...runOptions, context: options.context };
  // Shrinking keeps the failure's signature: once a case fails with key K (the check, and for an
  // observation difference the op and field), a shrunk candidate counts as failing only if it
  // fails with K too, so a shrink never wanders from the bug found to a shorter, different one.
  let firstLength = -1;
  let firstKey: string | undefined;
  let generated = 0;
  let commandsRun = 0;
  const property = fc.property(
    caseArb(system, options.plan, options.maxLength, options.unbiased),
    (testCase) => {
      const outcome = runSequence(
        system,
        testCase.config,
        testCase.commands,
        firstKey === undefined ? generationOptions : runOptions,
      );
      if (firstKey === undefined) {
        generated++;
        commandsRun += outcome.ok ? testCase.commands.length : outcome.failure.step + 1;
      }
      if (outcome.ok) return true;
      if (firstKey === undefined) {
        firstKey = failureKey(outcome.failure);
        firstLength = testCase.commands.length;
        options.onFirstFailure?.(generated - 1, testCase, outcome.failure);
        return false;
      }
      const same = failureKey(outcome.failure) === firstKey;
      if (same) options.onShrink?.(testCase.config, testCase.commands, outcome.failure);
      return !same;
    },
  );
  let details: fc.RunDetails<PropertyArgs<typeof property>>;
  try {
    details = fc.check(property, {
      seed: options.seed,
      numRuns: options.numRuns,
      ...(options.path === undefined ? {} : { path: options.path }),
      ...(options.noShrink ? { endOnFailure: true } : {}),
    });
  } catch (error) {
    if (options.path !== undefined && /Unable to replay/.test(String(error))) {
      throw new ReplayPathError(system.name, options.seed, options.path);
    }
    throw error;
  }
  if (!details.failed) return { failed: false, numRuns: details.numRuns, commandsRun };
  if (details.counterexample === null)
    throw new Error(`${system.name}: fast-check failed without a counterexample`);
  const [shrunk] = details.counterexample;
  const { config, commands } = minimizeCase(
    system,
    shrunk.config,
    shrunk.commands,
    runOptions,
    options.onShrink,
  );
  const outcome = runSequence(system, config, commands, runOptions);
  if (outcome.ok)
    throw new Error(`${system.name}: a counterexample stopped failing on replay (nondeterminism)`);
  const path = details.counterexamplePath ?? '';
  const runIndex = Number(path.split(':')[0] ?? 0);
  return {
    failed: true,
    commandsRun,
    seed: details.seed,
    path,
    runIndex: options.path === undefined ? runIndex : Number(options.path.split(':')[0] ?? 0),
    originalLength: firstLength,
    config,
    commands,
    failure: outcome.failure,
  };
}

/** The exact command line that turns a finding into a regression file, spelled for where it runs. */
export function saveCommandLine(
  system: string,
  seed: number,
  path: string,
  mutant?: string,
): string {
  return toolCommand(
    'regress',
    `save --system ${system} --seed ${seed} --path ${path}` + (mutant ? ` --mutant ${mutant}` : ''),
  );
}

/**
 * How a printed command starts where it is printed: `npm run regress --` in this package's own
 * repository (its scripts), `npx gpumv regress` in a user's project (where the package is a
 * dependency and has no such script). See src/harness/command-line.ts.
 */
export function cliCommand(tool: Tool, cwd: string = process.cwd()): string {
  return toolCommand(tool, '', commandContext(cwd));
}

/**
 * The case a property check with these options would run first (run 0), without running it:
 * the same arbitrary and seed, a predicate that only records. Used where running the case is
 * the danger (a run that never returns is rebuilt from its seed for its report).
 */
export function firstCase<C extends JsonObject, Cmd extends OpNamed, S>(
  system: SystemDef<C, Cmd, S>,
  options: Pick<CheckOptions<C, S>, 'seed' | 'plan' | 'maxLength' | 'unbiased'>,
): Case<C, Cmd> {
  let captured: Case<C, Cmd> | undefined;
  fc.check(
    fc.property(caseArb(system, options.plan, options.maxLength, options.unbiased), (testCase) => {
      captured ??= testCase;
      return true;
    }),
    { seed: options.seed, numRuns: 1 },
  );
  if (captured === undefined)
    throw new Error(`${system.name}: no case generated for seed ${options.seed}`);
  return captured;
}
