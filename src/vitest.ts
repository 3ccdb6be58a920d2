/**
 * vitest helpers (`import { testSystem, replayRegressions } from 'gpu-memory-verifier/vitest'`),
 * in the conventions of @fast-check/vitest: the run parameters are fast-check's (`seed`,
 * `numRuns`, `path`), their defaults come from fast-check's global configuration
 * (`fc.configureGlobal`, shared through @fast-check/vitest's `fc`), else the project's config
 * (gpumv.config's `seed`), and a failure names the seed and path that replay it. What the harness adds: its shrinking, which keeps the failed check,
 * then a 1-minimal sequence, and its readable report (every step's answers, the failing step,
 * the diff), with the command that stores the case as a regression.
 *
 *   // verify/my-allocator.test.ts
 *   import { describeSystem, replayRegressions } from 'gpu-memory-verifier/vitest';
 *   import { mySystem } from './my-system';
 *   describeSystem(mySystem, { numRuns: 200 });   // agreement, mutants, probes
 *   describeAllocator('src/my-allocator.mjs');    // an allocator module: safety, its promise, its regressions
 *   replayRegressions();                          // every file in the config's regressions folder
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSystem, cliCommand, saveCommandLine, type CheckResult } from './harness/property.js';
import { formatReport } from './harness/report.js';
import { RunContext, runSequence, type ImplFactory } from './harness/runner.js';
import type { AnyMutant, AnySystem } from './harness/system.js';
import { loadRegression, replayProblems, replayRegression } from './harness/regression.js';
import { DEFAULT_SEED, seedNumber } from './harness/seed.js';
import { loadProject, projectRelative, userAllocatorForProject, type Project } from './project.js';
import type { AllocatorPolicy } from './alloc/allocator.js';
import { USER_ALLOCATOR_SYSTEM } from './systems/user-allocator.js';
import { fileSystemName } from './cli/fuzz-targets.js';
import {
  isWatchdogFile,
  notARegression,
  regressionFilesUnder as filesUnder,
} from './cli/preflight.js';

export interface SystemTestParameters {
  /** fast-check seed (default: fast-check's global seed, else the project's fixed seed). */
  readonly seed?: number;
  /** Generated sequences (default: fast-check's global numRuns, else 100). */
  readonly numRuns?: number;
  /** Replays one counterexample (the path a failure printed); numRuns is then ignored. */
  readonly path?: string;
  /** Longest generated sequence (default: the system's). */
  readonly maxLength?: number;
  /** Runs against this implementation instead of the system's (a mutant, a user's module). */
  readonly implFactory?: ImplFactory;
  /** Fail when a probe of the system was never hit over the runs (default true). */
  readonly requireProbes?: boolean;
}

export interface DescribeSystemParameters extends SystemTestParameters {
  /** The mutants of this system to hold to their checks (default: none). */
  readonly mutants?: readonly AnyMutant[];
  /** Runs each mutant gets to be caught (default: numRuns). */
  readonly mutantRuns?: number;
}

/** The seed known without loading the project: the parameter's, else fast-check's global one. */
function knownSeed(seed: number | undefined): number | undefined {
  return seed ?? fc.readConfigureGlobal().seed;
}

/** Projects by config file (the working directory's when none is named), each loaded once. */
const projects = new Map<string, Promise<Project>>();

function projectOf(parameters: {
  readonly project?: Project;
  readonly configFile?: string;
}): Promise<Project> {
  if (parameters.project !== undefined) return Promise.resolve(parameters.project);
  const key = parameters.configFile ?? '';
  let loaded = projects.get(key);
  if (loaded === undefined) {
    loaded = loadProject(
      parameters.configFile === undefined ? {} : { configFile: parameters.configFile },
    );
    projects.set(key, loaded);
  }
  return loaded;
}

/** The seed of a test: the parameter's, else fast-check's global one, else the project config's `seed` (default: the fixed seed). */
async function resolveSeed(
  seed: number | undefined,
  parameters: { readonly project?: Project; readonly configFile?: string } = {},
): Promise<number> {
  return knownSeed(seed) ?? seedNumber((await projectOf(parameters)).seed);
}

/** The seed as a test title shows it before the project is loaded. */
function seedTitle(seed: number | undefined): string {
  const known = knownSeed(seed);
  return known === undefined ? "the project's seed" : `seed ${known}`;
}

/**
 * GPUMV_RUNS_SCALE, a positive number, multiplies the sequences of the agreement tests
 * (testSystem, describeSystem; at least 1 remains): a nightly job may raise it (10: ten times
 * the sequences of `npm test`). Below 1, probes the fewer runs miss fail the probe requirement.
 * Mutant hunts are not scaled: each stops at its first catch, and fewer runs would only make a
 * catalog mutant escape. Unset: 1.
 */
export function runsScale(raw: string | undefined = process.env.GPUMV_RUNS_SCALE): number {
  if (raw === undefined || raw.trim() === '') return 1;
  const scale = Number(raw);
  if (!(Number.isFinite(scale) && scale > 0))
    throw new Error(`GPUMV_RUNS_SCALE must be a positive number, got '${raw}'`);
  return scale;
}

function resolveRuns(numRuns: number | undefined, scaled = true): number {
  const runs = numRuns ?? fc.readConfigureGlobal().numRuns ?? 100;
  return scaled ? Math.max(1, Math.round(runs * runsScale())) : runs;
}

/** The error a failing check throws: the readable report, the replay parameters and the save command. */
export function findingError(
  system: AnySystem,
  result: Extract<CheckResult, { failed: true }>,
  implFactory?: ImplFactory,
  mutant?: string,
): Error {
  const save =
    system.name === USER_ALLOCATOR_SYSTEM || fileSystemName(system.name) === USER_ALLOCATOR_SYSTEM
      ? `${cliCommand('regress')} save --allocator ${String(result.config.allocatorModule)} --seed ${result.seed} --path ${result.path}`
      : saveCommandLine(system.name, result.seed, result.path, mutant);
  const report = formatReport({
    system,
    failure: result.failure,
    commands: result.commands,
    runOptions: implFactory === undefined ? {} : { implFactory },
    notes: [
      `replay: { seed: ${result.seed}, path: ${JSON.stringify(result.path)} }`,
      `shrunk from ${result.originalLength} to ${result.commands.length} commands`,
    ],
  });
  const error = new Error(`${report}\n\nStore it as a regression:\n  ${save}`);
  error.name = 'PropertyFailure';
  return error;
}

/**
 * Runs the harness's property for a system once; throws the readable report on failure. The
 * seed: the parameter's, else fast-check's global one, else `seed` (the project's, when the
 * caller resolved it), else the fixed default.
 */
export function assertSystem(
  system: AnySystem,
  parameters: SystemTestParameters = {},
  projectSeed?: number,
): { numRuns: number; probesMissed: string[] } {
  const context = new RunContext();
  const seed = knownSeed(parameters.seed) ?? projectSeed ?? seedNumber(DEFAULT_SEED);
  const numRuns = resolveRuns(parameters.numRuns);
  const result = checkSystem(system, {
    seed,
    numRuns,
    context,
    ...(parameters.path === undefined ? {} : { path: parameters.path }),
    ...(parameters.maxLength === undefined ? {} : { maxLength: parameters.maxLength }),
    ...(parameters.implFactory === undefined ? {} : { implFactory: parameters.implFactory }),
  });
  if (result.failed) throw findingError(system, result, parameters.implFactory);
  const probesMissed = system.probes.filter((probe) => (context.probeCounts.get(probe) ?? 0) === 0);
  return { numRuns: result.numRuns, probesMissed };
}

/**
 * One test: model and implementation agree step for step over generated sequences, every
 * invariant holds, and (unless `requireProbes: false`) every probe of the system fires.
 */
export function testSystem(system: AnySystem, parameters: SystemTestParameters = {}): void {
  const runs =
    parameters.path === undefined
      ? `${resolveRuns(parameters.numRuns)} generated sequences`
      : `the counterexample at path ${parameters.path}`;
  it(`${system.name}: model and implementation agree step for step over ${runs} (${seedTitle(parameters.seed)})`, async () => {
    const { probesMissed } = assertSystem(system, parameters, await resolveSeed(parameters.seed));
    if (parameters.requireProbes ?? true)
      expect(probesMissed, 'probes the generator never reached').toEqual([]);
  });
}

/**
 * One test per mutant: it is caught, by the check it names. Plus: every invariant of the system
 * is the expected check of at least one mutant (an invariant no mutant trips is not shown to fire).
 */
export function testMutants(
  system: AnySystem,
  mutants: readonly AnyMutant[],
  parameters: Omit<SystemTestParameters, 'implFactory' | 'path'> = {},
): void {
  const own = mutants.filter((mutant) => mutant.system === system.name);
  it(`${system.name}: every invariant is the named check of some mutant`, () => {
    expect(own.length, 'mutants of this system').toBeGreaterThan(0);
    const expected = new Set(own.map((mutant) => mutant.expectedCheck));
    expect(
      system.invariants.map((invariant) => invariant.name).filter((name) => !expected.has(name)),
      'invariants no mutant is expected to trip',
    ).toEqual([]);
  });
  for (const mutant of own) {
    it(`${system.name}: catches ${mutant.name} with ${mutant.expectedCheck}`, async () => {
      const numRuns = resolveRuns(parameters.numRuns, false);
      const result = checkSystem(system, {
        seed: await resolveSeed(parameters.seed),
        numRuns,
        implFactory: mutant.createImpl,
        ...(parameters.maxLength === undefined ? {} : { maxLength: parameters.maxLength }),
      });
      expect(result.failed, `${mutant.name} survived ${numRuns} runs`).toBe(true);
      if (result.failed)
        expect(
          result.failure.check,
          findingError(system, result, mutant.createImpl, mutant.name).message,
        ).toBe(mutant.expectedCheck);
    });
  }
}

/** A describe block with testSystem and, when mutants are given, testMutants. */
export function describeSystem(system: AnySystem, parameters: DescribeSystemParameters = {}): void {
  describe(`${system.name}: model and implementation`, () => testSystem(system, parameters));
  const { mutants } = parameters;
  if (mutants !== undefined) {
    describe(`${system.name}: mutants`, () =>
      testMutants(system, mutants, {
        ...parameters,
        ...(parameters.mutantRuns === undefined ? {} : { numRuns: parameters.mutantRuns }),
      }));
  }
}

export interface ReplayParameters {
  /** A regressions folder (default: the project's). */
  readonly dir?: string;
  /** The project (default: loaded from `configFile`, or the config found from the working directory). */
  readonly project?: Project;
  readonly configFile?: string;
}

/**
 * One test per regression file: it passes against the implementation and fails against every
 * mutant it names (the one it was found against still first with the check recorded then).
 * Files of user allocators replay against the module their config names.
 */
export function replayRegressions(parameters: ReplayParameters = {}): void {
  describe('regressions', async () => {
    const project = await projectOf(parameters);
    const dir = path.resolve(parameters.dir ?? project.regressionsDir);
    const files = existsSync(dir) ? filesUnder(dir) : [];
    if (files.length === 0) it.skip(`no regression files in ${dir} yet`, () => {});
    for (const file of files) {
      const name = path.relative(dir, file);
      const notRegression = notARegression(file);
      if (notRegression !== null) {
        it.skip(`${name}: ${notRegression}`, () => {});
        continue;
      }
      if (isWatchdogFile(file)) {
        // A file recorded as a hang would hang this test process: `regress replay` replays it in a watched worker.
        it.skip(`${name}: recorded as a hang or worker death; replay it with: ${cliCommand('regress')} replay ${name}`, () => {});
        continue;
      }
      it(`${name}: passes against the implementation and fails against its mutants`, async () => {
        const { regression, system } = await loadRegression(
          file,
          await project.registry.mutantSystems(),
          (name, rawConfig) => project.registry.systemForFile(name, rawConfig),
        );
        const result = replayRegression(file, regression, system, await project.registry.mutants());
        if (!result.real.ok)
          throw new Error(
            formatReport({
              system,
              failure: result.real.failure,
              commands: regression.commands,
              notes: [`file: ${file}`],
            }),
          );
        expect(replayProblems(result)).toEqual([]);
      });
    }
  });
}

export interface DescribeAllocatorParameters extends ReplayParameters {
  /** fast-check seed (default: fast-check's global seed, else the config's `seed`, else the fixed one). */
  readonly seed?: number;
  /** Generated sequences of the safety/agreement test (default: fast-check's global numRuns, else 100). */
  readonly numRuns?: number;
  /** Replays one counterexample (the path a failure printed). */
  readonly path?: string;
  /** Longest generated sequence (default 200). */
  readonly maxLength?: number;
  /** The policy to check against (default: the module's `policy` export, else 'any'). */
  readonly policy?: AllocatorPolicy;
  /** Empty pools, each given one generated request, of the promise test (default 1000). */
  readonly promiseRuns?: number;
}

/**
 * A describe block for an allocator module (relative to the project root, as gpumv.config's
 * `allocators` names it): its safety (and, under a named policy, agreement with our model)
 * over generated sequences, its empty-pool promise (the module's `promise` export, else its
 * policy's) on a fresh pool per request, and a replay of every stored regression of the module
 * in the project's regressions folder.
 *
 *   describeAllocator('src/my-allocator.mjs', { numRuns: 500 });
 */
export function describeAllocator(
  modulePath: string,
  parameters: DescribeAllocatorParameters = {},
): void {
  describe(`allocator ${modulePath}`, async () => {
    const project = await projectOf(parameters);
    const system = await userAllocatorForProject(project.root, modulePath, parameters.policy);
    const runs =
      parameters.path === undefined
        ? `${resolveRuns(parameters.numRuns)} generated sequences`
        : `the counterexample at path ${parameters.path}`;
    const testParameters: SystemTestParameters = {
      ...(parameters.seed === undefined ? {} : { seed: parameters.seed }),
      ...(parameters.numRuns === undefined ? {} : { numRuns: parameters.numRuns }),
      ...(parameters.path === undefined ? {} : { path: parameters.path }),
      ...(parameters.maxLength === undefined ? {} : { maxLength: parameters.maxLength }),
    };
    it(`${system.summary}: every check holds over ${runs} (${seedTitle(parameters.seed)})`, async () => {
      assertSystem(system, testParameters, await resolveSeed(parameters.seed, parameters));
    });
    const promiseRuns = parameters.promiseRuns ?? 1000;
    it(`${modulePath}: keeps its empty-pool promise on ${promiseRuns} fresh pools, one request each`, async () => {
      assertEmptyPoolPromise(system, promiseRuns, await resolveSeed(parameters.seed, parameters));
    });
    const own = projectRelative(project.root, modulePath);
    const dir = path.resolve(project.regressionsDir);
    const files = (existsSync(dir) ? filesUnder(dir) : []).filter(
      (file) => !isWatchdogFile(file) && regressionModule(file) === own,
    );
    for (const file of files) {
      it(`${path.relative(dir, file)}: the stored regression passes`, async () => {
        const { regression, system: stored } = await loadRegression(
          file,
          await project.registry.mutantSystems(),
          (name, rawConfig) => project.registry.systemForFile(name, rawConfig),
        );
        const result = replayRegression(file, regression, stored, []);
        if (!result.real.ok)
          throw new Error(
            formatReport({
              system: stored,
              failure: result.real.failure,
              commands: regression.commands,
              notes: [`file: ${file}`],
            }),
          );
      });
    }
  });
}

/** The allocator module a regression file's config names, or null for any other file. */
function regressionModule(file: string): string | null {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as {
      config?: { allocatorModule?: unknown };
    };
    const module = parsed.config?.allocatorModule;
    return typeof module === 'string' ? module : null;
  } catch {
    return null;
  }
}

/**
 * The empty-pool promise, judged by the system's own checks: `runs` generated configs, each a
 * fresh pool given one generated alloc request; a request the promise covers must get an offset
 * (empty-pool-liveness), and every answer must be safe. Throws the readable report of the first
 * that is not.
 */
export function assertEmptyPoolPromise(system: AnySystem, runs: number, seed: number): void {
  const cases = fc.sample(
    system
      .configArb()
      .chain((config) =>
        fc.record({ config: fc.constant(config), command: system.commandArb(config) }),
      ),
    { seed, numRuns: runs },
  );
  for (const { config, command } of cases) {
    if ((command as { op: string }).op !== 'alloc') continue;
    const outcome = runSequence(system, config, [command]);
    if (!outcome.ok) {
      throw new Error(
        formatReport({
          system,
          failure: outcome.failure,
          commands: [command],
          notes: [`an empty pool, one request (seed ${seed})`],
        }),
      );
    }
  }
}
