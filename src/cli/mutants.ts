/**
 * `npm run mutants`: the proof that the harness has teeth. Runs the property of each mutant's
 * system against the mutant under a fixed seed and reports whether it was detected, after how
 * many runs and milliseconds, by which check, and how short the shrunk counterexample is.
 */
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { checkSystem, saveCommandLine } from '../harness/property.js';
import { loadProject } from '../project.js';
import { DEFAULT_SEED } from '../harness/seed.js';
import { writeFileAtomic } from '../harness/files.js';
import { COMMANDS, parseCommand, runMain, UsageError } from './args.js';

const HELP = `usage: npm run mutants -- [--system NAME] [--mutant NAME] [--seed S] [--runs N] [--json FILE] [--commands]

Runs every mutant of the bug catalog (mutants/) against its system's property with a fixed
seed (default ${DEFAULT_SEED}, the seed of npm test) and up to N runs each (default 1000).
For each mutant: detected or SURVIVED, runs and milliseconds until the first failure,
the check that caught it (expected in parentheses when different), and the shrunk length.
Exit code 1 if any mutant survives. A mutant caught by another check than the one it names is
reported (npm test holds every mutant to its named check under the default seed).

  --system NAME  only the mutants of this system
  --mutant NAME  only this mutant
  --seed S       fast-check seed, an integer (default ${DEFAULT_SEED})
  --runs N       runs per mutant before it counts as SURVIVED (default 1000)
  --json FILE    also write the report as JSON (replaced whole, at the end of the run)
  --commands     print the regress command that stores each counterexample
  --config FILE  the project's config file (default: gpumv.config.* found walking up); its
                 mutants run with the built-in ones (unless it sets builtins: false)
  -h, --help     this help`;

export interface MutantReport {
  readonly name: string;
  readonly system: string;
  readonly detected: boolean;
  readonly expectedCheck: string;
  readonly check: string | null;
  readonly runsToDetection: number | null;
  readonly msToDetection: number | null;
  readonly originalLength: number | null;
  readonly shrunkLength: number | null;
  readonly seed: number;
  readonly path: string | null;
}

await runMain(async () => {
  const args = parseCommand(COMMANDS.mutants, process.argv.slice(2), HELP);
  const seed = args.values.seed ?? DEFAULT_SEED;
  const numRuns = args.values.runs ?? 1000;
  const registry = (
    await loadProject(args.values.config === undefined ? {} : { configFile: args.values.config })
  ).registry;
  let mutants = await registry.mutants();
  const systemFilter = args.values.system;
  if (systemFilter !== undefined) {
    if (registry.findSystem(systemFilter) === undefined)
      throw new UsageError(`unknown system '${systemFilter}'`);
    mutants = mutants.filter((mutant) => mutant.system === systemFilter);
  }
  const mutantFilter = args.values.mutant;
  if (mutantFilter !== undefined) {
    mutants = mutants.filter((mutant) => mutant.name === mutantFilter);
    if (mutants.length === 0) throw new UsageError(`unknown mutant '${mutantFilter}'`);
  }

  const jsonFile = args.values.json;
  if (jsonFile !== undefined) {
    // Fail before the run, not after it: an unwritable report path loses nothing yet (and an
    // existing report stays whole until the new one replaces it).
    try {
      accessSync(path.dirname(path.resolve(jsonFile)), constants.W_OK);
      const stats = statSync(jsonFile, { throwIfNoEntry: false });
      if (stats?.isDirectory() === true)
        throw Object.assign(new Error('a folder'), { code: 'EISDIR' });
    } catch (error) {
      throw new UsageError(
        `--json ${jsonFile} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
  }
  const reports: MutantReport[] = [];
  let bad = 0;
  for (const mutant of mutants) {
    const system = registry.findSystem(mutant.system);
    if (system === undefined)
      throw new Error(`mutant ${mutant.name} names unknown system ${mutant.system}`);
    const started = performance.now();
    let msToDetection: number | null = null;
    const result = checkSystem(system, {
      seed,
      numRuns,
      implFactory: mutant.createImpl,
      onFirstFailure: () => {
        msToDetection = performance.now() - started;
      },
    });
    const report: MutantReport = {
      name: mutant.name,
      system: mutant.system,
      detected: result.failed,
      expectedCheck: mutant.expectedCheck,
      check: result.failed ? result.failure.check : null,
      runsToDetection: result.failed ? result.runIndex + 1 : null,
      msToDetection: msToDetection === null ? null : Math.round(msToDetection as number),
      originalLength: result.failed ? result.originalLength : null,
      shrunkLength: result.failed ? result.commands.length : null,
      seed,
      path: result.failed ? result.path : null,
    };
    reports.push(report);
    const ok = report.detected && report.check === report.expectedCheck;
    if (!report.detected) bad++;
    const status = !report.detected ? 'SURVIVED' : ok ? 'detected' : 'WRONG-CHECK';
    console.log(
      `${status.padEnd(11)} ${mutant.name.padEnd(40)} ${mutant.system.padEnd(20)} ` +
        (report.detected
          ? `run ${String(report.runsToDetection).padStart(4)}  ${String(report.msToDetection).padStart(6)} ms  ` +
            `${String(report.originalLength).padStart(3)} -> ${String(report.shrunkLength).padStart(2)} commands  ${report.check}` +
            (ok ? '' : ` (expected ${report.expectedCheck})`)
          : `${numRuns} runs`),
    );
    if (args.values.commands && result.failed)
      console.log(`            ${saveCommandLine(mutant.system, seed, result.path, mutant.name)}`);
  }
  const detected = reports.filter((report) => report.detected).length;
  const unexpected = reports.filter(
    (report) => report.detected && report.check !== report.expectedCheck,
  ).length;
  console.log(
    `\n${detected} of ${reports.length} mutants detected` +
      (unexpected === 0
        ? detected > 0
          ? ', every one by the check it names'
          : ''
        : `; ${unexpected} by another check than the one named`),
  );
  if (jsonFile !== undefined)
    writeFileAtomic(jsonFile, JSON.stringify({ seed, numRuns, mutants: reports }, null, 2) + '\n');
  return bad === 0 ? 0 : 1;
});
