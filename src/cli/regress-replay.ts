/** `npm run regress -- replay`: every file against the implementation and the mutants it catches. */
import { formatReport } from '../harness/report.js';
import type { RunOutcome } from '../harness/runner.js';
import {
  replayProblems,
  replayRegression,
  type Regression,
  type ReplayResult,
} from '../harness/regression.js';
import type { Project } from '../project.js';
import { USER_ALLOCATOR_SYSTEM } from '../systems/user-allocator.js';
import { isNativeSystem } from '../native/native-systems.js';
import { COMMANDS, parseCommand } from './args.js';
import { CaseEvaluator } from './hang-shrink.js';
import { replayHelp } from './regress-help.js';
import { loadFile, project, regressionFiles, shown } from './regress-files.js';
import { campaignWorkerUrl, DEFAULT_TIMEOUT_MS, WATCHDOG_CHECKS } from './watchdog.js';

/** Replays a file recorded as a hang (or a worker death) in watched workers, so a replay cannot hang this thread. */
async function replayWatched(
  known: Project,
  file: string,
  regression: Regression,
  timeoutMs: number,
): Promise<ReplayResult> {
  const url = campaignWorkerUrl();
  const allocator =
    regression.system === USER_ALLOCATOR_SYSTEM
      ? String(regression.config.allocatorModule)
      : undefined;
  const outcome = async (mutant?: string): Promise<RunOutcome> => {
    const exec = isNativeSystem(regression.system)
      ? String(regression.config.executable)
      : undefined;
    const targets =
      allocator !== undefined
        ? { systems: 'all', allocator }
        : exec !== undefined
          ? { systems: 'all', exec }
          : { systems: regression.system, ...(mutant === undefined ? {} : { mutant }) };
    const evaluator = new CaseEvaluator(
      url,
      { campaignSeed: '0', targets, configFile: known.configFile, cwd: known.root },
      timeoutMs,
    );
    try {
      const result = await evaluator.evaluate(
        regression.system,
        regression.config,
        regression.commands,
      );
      if (result.kind === 'passed') return { ok: true, steps: regression.commands.length };
      if (result.kind === 'failed') return { ok: false, failure: result.failure };
      if (result.kind === 'cancelled') throw new Error('the replay was cancelled');
      const command = regression.commands[Math.max(result.step, 0)] ?? { op: '(setup)' };
      return {
        ok: false,
        failure: {
          system: regression.system,
          config: regression.config,
          step: Math.max(result.step, 0),
          command,
          check: result.check,
          checks: [result.check],
          message: result.detail,
          modelObservation: null,
          implObservation: null,
          diff: [],
        },
      };
    } finally {
      await evaluator.close();
    }
  };
  const real = await outcome();
  const mutants = [];
  for (const name of regression.catches) mutants.push({ name, outcome: await outcome(name) });
  return { file, regression, real, mutants };
}

export async function replay(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress replay'], argv, replayHelp);
  const known = await project(args.values.config);
  const files = regressionFiles(known, args.positionals);
  const mutants = await known.registry.mutants();
  const timeoutMs = args.values.timeout ?? DEFAULT_TIMEOUT_MS;
  let bad = 0;
  for (const file of files) {
    const { regression, system } = await loadFile(known, file);
    const watched = WATCHDOG_CHECKS.includes(regression.origin.check ?? '');
    const result = watched
      ? await replayWatched(known, file, regression, timeoutMs)
      : replayRegression(file, regression, system, mutants);
    const problems = replayProblems(result);
    if (problems.length > 0) bad++;
    const mutantsText = result.mutants
      .map(
        (entry) =>
          `${entry.name}:${entry.outcome.ok ? 'SURVIVED' : `caught by ${entry.outcome.failure.check}`}`,
      )
      .join(' ');
    console.log(
      `${problems.length === 0 ? 'ok  ' : 'FAIL'} ${shown(file)} (${regression.commands.length} commands)${mutantsText ? ' ' + mutantsText : ''}`,
    );
    for (const problem of problems) console.log(`     ${problem}`);
    if (!result.real.ok) {
      const report = watched
        ? `${result.real.failure.check} at step ${result.real.failure.step}: ${result.real.failure.message}`
        : formatReport({ system, failure: result.real.failure, commands: regression.commands });
      console.log(report.replace(/^/gm, '     '));
    }
  }
  console.log(`${files.length - bad} passed, ${bad} failed`);
  return bad === 0 ? 0 : 1;
}
