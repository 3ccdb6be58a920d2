/**
 * The campaign preflight: before a fuzz campaign spends its budget, it replays the stored
 * regressions of the systems it fuzzes. Each file must fail against every mutant it names, the
 * one it was found against first with the check recorded then; a file that does not (or cannot
 * be read) stops the campaign. A file that fails against the implementation records a bug not
 * fixed yet (a saved finding) or one that came back: it is reported, the campaign runs, and it
 * ends with the exit code of a finding.
 *
 * The second half is what makes a night's "no findings" mean something: a campaign is only as
 * good as its judges (the invariants, the simulated GPU, the queue timeline), and their
 * detection code runs only when something is wrong. The stored regressions are canaries: each
 * drives a known-broken implementation into one check, so a judge that stopped detecting (an
 * edited invariant, a refactored violation path) fails the preflight, and the campaign does not
 * start. It costs a fraction of a second; `--no-preflight` skips it.
 *
 * A file whose mutant escapes or is caught first by another check is not blamed on a judge at
 * once: the mutant is the implementation plus one override, so a bug in the implementation
 * changes the mutant's answers too. The preflight first probes the implementation alone
 * (PROBE_RUNS generated cases, seeded by the file's name, see probeImplementation); if it fails,
 * the file is reported as failing with the implementation's own counterexample (a finding of the
 * implementation: the campaign runs and ends with exit code 1), not as a judge that stopped.
 *
 * Regression files come from the project's regressions folder and, when the project includes
 * the built-in systems, from the package's own folder (the canaries of the built-ins). Files
 * recorded as hangs or worker deaths are skipped: replaying one here would hang the campaign
 * (`regress replay` runs them in a watched worker). Files of user allocators are replayed only
 * for the allocator modules the campaign fuzzes.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { InputError } from '../harness/json.js';
import { toolCommand } from '../harness/command-line.js';
import { checkSystem, saveCommandLine } from '../harness/property.js';
import { loadRegression, replayProblems, replayRegression } from '../harness/regression.js';
import { runStream } from '../harness/seed.js';
import type { AnySystem } from '../harness/system.js';
import { PACKAGE_ROOT } from '../package-root.js';
import type { Project } from '../project.js';
import { USER_ALLOCATOR_SYSTEM } from '../systems/user-allocator.js';
import { fileSystemName } from './fuzz-targets.js';
import { isNativeSystem } from '../native/native-systems.js';
import { WATCHDOG_CHECKS } from './watchdog.js';

/** Whether a regression file records a hang or a worker death (read without validating it). */
export function isWatchdogFile(file: string): boolean {
  try {
    const check = (JSON.parse(readFileSync(file, 'utf8')) as { origin?: { check?: unknown } })
      .origin?.check;
    return typeof check === 'string' && WATCHDOG_CHECKS.includes(check);
  } catch {
    return false; // a malformed file is reported where it is loaded, with the file and field named
  }
}

/**
 * Why a .json file in a regressions folder is not a regression file at all (a JSON value that
 * is not an object, or an object without a "format" field: a stray notes.json), or null. Such a
 * file is named once and skipped; a file that claims to be a regression (it has a format) but
 * cannot be read stays an error.
 */
export function notARegression(file: string): string | null {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return null; // unreadable JSON is reported where it is loaded, as an error
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    return 'not a regression file (not a JSON object)';
  return Object.hasOwn(raw, 'format') ? null : 'not a regression file (no "format" field)';
}

/** Every .json file under `dir`, sorted. */
export function regressionFilesUnder(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory()
        ? regressionFilesUnder(full)
        : name.endsWith('.json')
          ? [full]
          : [];
    });
}

/** The folders a project's preflight reads: its own, and the package's when it has the built-ins. */
export function preflightDirs(project: Project): string[] {
  const dirs = [project.regressionsDir];
  const builtin = path.join(PACKAGE_ROOT, 'regressions');
  if (project.builtins && path.resolve(builtin) !== path.resolve(project.regressionsDir))
    dirs.push(builtin);
  return dirs.filter((dir) => existsSync(dir));
}

/** The system a file names and its allocator module, read without validating it (that happens when it is loaded). */
function peek(file: string): { system?: string; allocatorModule?: string } {
  try {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as {
      system?: unknown;
      config?: { allocatorModule?: unknown; executable?: unknown };
    };
    // A native allocator's file names its driver executable where a module's names the module.
    const allocatorModule = raw.config?.allocatorModule ?? raw.config?.executable;
    return {
      ...(typeof raw.system === 'string' ? { system: raw.system } : {}),
      ...(typeof allocatorModule === 'string' ? { allocatorModule } : {}),
    };
  } catch {
    return {};
  }
}

/** The implementation's own counterexample found by probeImplementation. */
export interface ImplementationProbe {
  readonly check: string;
  readonly step: number;
  readonly commands: number;
  readonly message: string;
  /** The command line that stores the counterexample as a regression (seed and path). */
  readonly save: string;
}

export interface PreflightFailing {
  readonly file: string;
  readonly check: string;
  readonly step: number;
  readonly probe?: ImplementationProbe;
  /** What the file's mutants now do (with a probe): why the implementation was probed. */
  readonly judged?: readonly string[];
}

/** Generated cases the implementation alone runs when a file's mutant changed its check. */
export const PROBE_RUNS = 300;

/**
 * Runs the implementation alone against the model on PROBE_RUNS generated cases (seeded by the
 * file's name, so the probe is the same every time): a failure means the implementation itself
 * changed, which is what changed its mutants' answers. Returns the shrunk counterexample, or null.
 */
export function probeImplementation(
  system: AnySystem,
  file: string,
  config: Readonly<Record<string, unknown>>,
): ImplementationProbe | null {
  const seed = runStream(path.basename(file), system.name, 0).int32();
  const result = checkSystem(system, { seed, numRuns: PROBE_RUNS });
  if (!result.failed) return null;
  const allocator =
    system.name === USER_ALLOCATOR_SYSTEM || fileSystemName(system.name) === USER_ALLOCATOR_SYSTEM
      ? config.allocatorModule
      : undefined;
  const save =
    typeof allocator === 'string'
      ? toolCommand(
          'regress',
          `save --allocator ${allocator} --seed ${result.seed} --path ${result.path}`,
        )
      : saveCommandLine(system.name, result.seed, result.path);
  return {
    check: result.failure.check,
    step: result.failure.step,
    commands: result.commands.length,
    message: result.failure.message,
    save,
  };
}

export interface PreflightResult {
  /** Files replayed. */
  readonly files: number;
  /** Mutant replays among them (each must fail, the recorded one with its check). */
  readonly mutantReplays: number;
  /** Hang and worker-death files left to `regress replay`. */
  readonly skipped: number;
  /** JSON files in a regressions folder that are no regression files (see notARegression): skipped. */
  readonly ignored: readonly { readonly file: string; readonly reason: string }[];
  /** Files whose judges do not hold (a mutant escapes or another check catches it first) or that cannot be read: they stop the campaign. */
  readonly problems: readonly { readonly file: string; readonly problems: readonly string[] }[];
  /**
   * Files that fail against the implementation: bugs not fixed yet, or back. The campaign runs
   * and ends as with a finding. `probe`: the file replays clean, but its mutant's check changed
   * (`judged`) and the implementation alone fails a case near it, so the implementation changed.
   */
  readonly failing: readonly PreflightFailing[];
  readonly elapsedMs: number;
}

/**
 * Replays the files of `systems` (file system names) found in `dirs`; files of the user-allocator
 * system only for `allocators` (module paths relative to the project root, as files record them).
 * A file that cannot be read or loaded is a problem (its message names the field): whatever it
 * was meant to prove, it proves nothing.
 */
export async function runPreflight(
  project: Project,
  systems: ReadonlySet<string>,
  dirs: readonly string[] = preflightDirs(project),
  allocators: ReadonlySet<string> = new Set(project.allocators),
  around: <T>(file: string, replay: () => T) => T = (_file, replay) => replay(),
): Promise<PreflightResult> {
  const modules = new Set([...allocators].map((module) => path.normalize(module)));
  const start = performance.now();
  const registry = project.registry;
  const mutants = await registry.mutants();
  const mutantSystems = await registry.mutantSystems();
  let files = 0;
  let mutantReplays = 0;
  let skipped = 0;
  const problems: { file: string; problems: string[] }[] = [];
  const failing: PreflightFailing[] = [];
  const ignored: { file: string; reason: string }[] = [];
  for (const dir of dirs) {
    for (const file of regressionFilesUnder(dir)) {
      const reason = notARegression(file);
      if (reason !== null) {
        ignored.push({ file, reason });
        continue;
      }
      const { system, allocatorModule } = peek(file);
      if (system !== undefined && !systems.has(system)) continue;
      if (
        allocatorModule !== undefined &&
        (system === USER_ALLOCATOR_SYSTEM || isNativeSystem(system ?? '')) &&
        !modules.has(path.normalize(allocatorModule))
      )
        continue;
      if (isWatchdogFile(file)) {
        skipped++;
        continue;
      }
      files++;
      try {
        const loaded = await loadRegression(file, mutantSystems, (name, rawConfig) =>
          registry.systemForFile(name, rawConfig),
        );
        // `around` lets the campaign's worker watch the replays (not the file loading) with its time limit.
        const result = around(file, () =>
          replayRegression(file, loaded.regression, loaded.system, mutants),
        );
        mutantReplays += result.mutants.length;
        if (!result.real.ok)
          failing.push({ file, check: result.real.failure.check, step: result.real.failure.step });
        else {
          const wrong = replayProblems(result);
          if (wrong.length > 0) {
            // Before a judge is blamed: did the implementation beneath the mutants change?
            const probe = around(file, () =>
              probeImplementation(loaded.system, file, loaded.regression.config),
            );
            if (probe === null) problems.push({ file, problems: wrong });
            else failing.push({ file, check: probe.check, step: probe.step, probe, judged: wrong });
          }
        }
      } catch (error) {
        // The file is named beside the problem; an InputError's own copy of it is left out.
        problems.push({
          file,
          problems: [
            error instanceof InputError
              ? `${error.jsonPath}: ${error.detail}`
              : (error as Error).message,
          ],
        });
      }
    }
  }
  return {
    files,
    mutantReplays,
    skipped,
    ignored,
    problems,
    failing,
    elapsedMs: performance.now() - start,
  };
}
