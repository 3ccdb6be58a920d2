/**
 * `npm run regress -- save|replay|show|list|migrate`: turn a failing property or a campaign's
 * finding into a stored regression, and replay, show and list regression files. Every command
 * reads the project's config (gpumv.config.*): its systems, mutants and regressions folder.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkSystem } from '../harness/property.js';
import { formatReport, formatUnreturnedReport } from '../harness/report.js';
import { writeHtmlReport } from '../report/html.js';
import { minimizeCase, runSequence, type RunOutcome } from '../harness/runner.js';
import type { AnySystem } from '../harness/system.js';
import {
  originDate,
  loadRegression,
  regressionPath,
  replayProblems,
  replayRegression,
  shortHash,
  writeRegression,
  REGRESSION_FORMAT,
  type Lookup,
  type Regression,
  type ReplayResult,
} from '../harness/regression.js';
import { loadProject, type Project } from '../project.js';
import { USER_ALLOCATOR_SYSTEM } from '../systems/user-allocator.js';
import { NATIVE_ALLOCATOR_SYSTEM } from '../native/native-allocator.js';
import { COMMANDS, HelpRequested, parseCommand, runMain, UsageError } from './args.js';
import { allocatorSpecPath, resolveTargets } from './fuzz-targets.js';
import { CaseEvaluator, shrinkDeath } from './hang-shrink.js';
import { notARegression } from './preflight.js';
import { campaignWorkerUrl, DEFAULT_TIMEOUT_MS, WATCHDOG_CHECKS } from './watchdog.js';

const SAVE_USAGE = `npm run regress -- save --system NAME --seed S --path P [--mutant M | --allocator MODULE]
                          [--slug NAME] [--description TEXT] [--out DIR] [--force]
       npm run regress -- save --finding FILE [--shrink [--timeout 10s]] [--slug NAME] [--out DIR] [--force]`;
const SAVE_TEXT = `save    Rebuilds the counterexample a failing property printed (same seed and path), shrinks
        it to a 1-minimal sequence and writes <regressions>/<system>/<slug>.json. With --mutant,
        the sequence is found against that mutant and the file records it in "catches", so
        the replay keeps checking that the mutant stays caught. With --allocator, the system is
        user-allocator built from your module. With --finding, a file a fuzz campaign wrote
        (under .fuzz/findings) is stored as it is. Existing files are kept unless --force. The
        date in "origin" is today (UTC), or SOURCE_DATE_EPOCH if set.`;
const REPLAY_USAGE = 'npm run regress -- replay [FILE|DIR ...] [--timeout 10s]';
const REPLAY_TEXT = `replay  Replays files (default: every file in the regressions folder) against the implementation
        (must pass) and every mutant each file names (must fail; the mutant it was found against
        must still fail first with the check recorded in origin.check). Exit 1 if any does not hold.
        A file recorded as a hang replays in a worker thread under --timeout.`;
const SHOW_USAGE = 'npm run regress -- show FILE ... [--html OUT.html]';
const SHOW_TEXT = `show    Prints the readable report of each file: system, config, the failed checks, the whole
        sequence with each step's answer from the model and the implementation, the failing step
        marked and the diff of the observations (for a file that passes: the sequence and answers).
        With --html OUT.html (one FILE), also writes the same report as one self-contained HTML
        page: a heap map (allocators) or a per-object timeline (residency systems) with the
        failing step marked and the ranges at fault highlighted; see docs/html-report.md.`;
const LIST_USAGE = 'npm run regress -- list [FILE|DIR ...]';
const LIST_TEXT = 'list    Lists the regression files with their system, length and mutants.';
const MIGRATE_USAGE = 'npm run regress -- migrate [FILE|DIR ...]';
const MIGRATE_TEXT = `migrate Rewrites files of an older format (default: every file in the regressions folder) in the
        current format ${REGRESSION_FORMAT}, keeping their content; files already current are left alone.`;
const CONFIG_TEXT = `Every command takes --config FILE (default: gpumv.config.{ts,mts,js,mjs} found walking up from
the working directory): your systems, mutants and regressions folder. Relative FILE arguments are
taken from the working directory, else from the project root (the config's folder).`;

const HELP = `usage:
  ${SAVE_USAGE}
  ${REPLAY_USAGE}
  ${SHOW_USAGE}
  ${LIST_USAGE}
  ${MIGRATE_USAGE}

${SAVE_TEXT}
${REPLAY_TEXT}
${SHOW_TEXT}
${LIST_TEXT}
${MIGRATE_TEXT}

${CONFIG_TEXT}
Each command takes -h/--help.`;

const SAVE_HELP = `usage: ${SAVE_USAGE}

${SAVE_TEXT}

  --system NAME       the system of the failing property (see npm run mutants -- --help for the list)
  --seed S            the seed it printed (an integer)
  --path P            the path it printed, like 12:0:3
  --mutant M          the sequence fails against this mutant (recorded in "catches")
  --allocator MODULE  the system is user-allocator built from this allocator module
  --finding FILE      store a campaign's finding file instead (no seed or path)
  --shrink            with --finding: shrink its case first (a campaign stopped by its budget or
                      a signal writes the best case so far): against the implementation, else
                      the mutant it was found with; a hang's candidates run in a watched worker
  --timeout D         with --shrink of a hang: each candidate's time limit (default 10s)
  --slug NAME         file name (default: the mutant's name, or <check>-<hash>)
  --description TEXT  (default: what the mutant breaks, or the check and step that fail)
  --out DIR           folder of the <system>/ folders (default: the config's regressions folder)
  --force             overwrite an existing file
  --config FILE       the project's config file

${CONFIG_TEXT}`;

const replayHelp = `usage: ${REPLAY_USAGE}\n\n${REPLAY_TEXT}\n\n${CONFIG_TEXT}`;
const showHelp = `usage: ${SHOW_USAGE}\n\n${SHOW_TEXT}\n\n  --html OUT.html  write the HTML report of the one FILE to OUT.html\n  --config FILE    the project's config file\n\n${CONFIG_TEXT}`;
const listHelp = `usage: ${LIST_USAGE}\n\n${LIST_TEXT}\n\n${CONFIG_TEXT}`;
const migrateHelp = `usage: ${MIGRATE_USAGE}\n\n${MIGRATE_TEXT}\n\n${CONFIG_TEXT}`;

async function project(configFile: string | undefined): Promise<Project> {
  return loadProject(configFile === undefined ? {} : { configFile });
}

export async function lookup(known: Project): Promise<Lookup> {
  const registry = known.registry;
  return {
    findSystem: (name) => registry.findSystem(name),
    mutantSystems: await registry.mutantSystems(),
  };
}

/** A FILE argument: from the working directory, else from the project root. */
function resolveArgument(known: Project, entry: string): string {
  const fromCwd = path.resolve(entry);
  if (existsSync(fromCwd) || path.isAbsolute(entry)) return fromCwd;
  const fromRoot = path.resolve(known.root, entry);
  return existsSync(fromRoot) ? fromRoot : fromCwd;
}

/** Every .json file under the given files/directories (default: the regressions folder), sorted. */
export function regressionFiles(known: Project, targets: readonly string[]): string[] {
  const roots =
    targets.length > 0
      ? targets.map((entry) => resolveArgument(known, entry))
      : [known.regressionsDir];
  const files: string[] = [];
  const walk = (entry: string, named: boolean): void => {
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(entry);
    } catch {
      if (targets.length === 0 && entry === known.regressionsDir) return; // no regressions yet
      throw new UsageError(`no such file or directory: ${entry}`);
    }
    if (stats.isDirectory()) {
      for (const name of readdirSync(entry).sort()) walk(path.join(entry, name), false);
    } else if (entry.endsWith('.json')) {
      // A stray JSON file in a folder (notes.json) is named and skipped; one named on the command line is read.
      const reason = named ? null : notARegression(entry);
      if (reason === null) files.push(entry);
      else console.error(`warning: ${shown(entry)}: ${reason}; skipped`);
    }
  };
  for (const root of roots) walk(root, true);
  return files;
}

/** How a file is named in output: relative to the working directory. */
function shown(file: string): string {
  return path.relative(process.cwd(), file) || file;
}

async function loadFile(known: Project, file: string) {
  return loadRegression(file, await known.registry.mutantSystems(), (name, rawConfig) =>
    known.registry.systemForFile(name, rawConfig),
  );
}

/**
 * A finding's case shrunk again (`save --finding F --shrink`): with minimizeCase against the
 * implementation (or, when it passes there, the first mutant of the file's catches that it
 * fails), or, for a hang or worker death, with the campaign's hang shrink in watched workers.
 */
async function reshrink(
  known: Project,
  regression: Regression,
  system: AnySystem,
  timeoutMs: number,
): Promise<Regression> {
  const check = regression.origin.check ?? '';
  if (WATCHDOG_CHECKS.includes(check)) {
    const allocator =
      regression.system === USER_ALLOCATOR_SYSTEM
        ? String(regression.config.allocatorModule)
        : undefined;
    const mutant = regression.catches[0];
    const targets =
      allocator !== undefined
        ? { systems: 'all', allocator }
        : { systems: regression.system, ...(mutant === undefined ? {} : { mutant }) };
    const evaluator = new CaseEvaluator(
      campaignWorkerUrl(),
      { campaignSeed: '0', targets, configFile: known.configFile, cwd: known.root },
      timeoutMs,
    );
    try {
      const shrunk = await shrinkDeath(
        evaluator,
        regression.system,
        regression.config,
        regression.commands,
        check,
        regression.commands.length - 1,
      );
      if (!shrunk.reproduced)
        throw new UsageError(
          `the ${check} of the finding did not reproduce within ${timeoutMs} ms; it is stored unshrunk (drop --shrink)`,
        );
      return { ...regression, commands: shrunk.commands };
    } finally {
      await evaluator.close();
    }
  }
  const mutants = await known.registry.mutants();
  const factories = [
    undefined,
    ...regression.catches.map((name) => mutants.find((mutant) => mutant.name === name)?.createImpl),
  ];
  for (const implFactory of factories) {
    const options = implFactory === undefined ? {} : { implFactory };
    if (runSequence(system, regression.config, regression.commands, options).ok) continue;
    const { config, commands } = minimizeCase(
      system,
      regression.config,
      regression.commands,
      options,
    );
    return { ...regression, config, commands };
  }
  throw new UsageError(
    `the finding's case passes against the implementation and its mutants: nothing to shrink`,
  );
}

async function saveFinding(
  known: Project,
  finding: string,
  slugArg: string | undefined,
  outArg: string | undefined,
  force: boolean,
  shrink: { timeoutMs: number } | null,
): Promise<number> {
  const source = resolveArgument(known, finding);
  if (!existsSync(source)) throw new UsageError(`--finding: no such file ${finding}`);
  const loaded = await loadFile(known, source);
  const system = loaded.system;
  const regression =
    shrink === null
      ? loaded.regression
      : await reshrink(known, loaded.regression, system, shrink.timeoutMs);
  if (shrink !== null)
    console.log(
      `shrunk from ${loaded.regression.commands.length} to ${regression.commands.length} commands`,
    );
  const slug = slugArg ?? path.basename(source, '.json');
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(slug))
    throw new UsageError(
      `--slug must be lower-case letters, digits, '.', '_' or '-', got '${slug}'`,
    );
  const file = regressionPath(
    path.resolve(outArg ?? known.regressionsDir),
    regression.system,
    slug,
  );
  if (path.resolve(file) === path.resolve(source))
    throw new UsageError(`${finding} is already in the regressions folder`);
  // Rewritten, not copied: its "$schema" is the path from its new place.
  writeRegression(file, regression, force);
  console.log(
    `wrote ${shown(file)} (${regression.commands.length} commands, from ${shown(source)})`,
  );
  if (!WATCHDOG_CHECKS.includes(regression.origin.check ?? '')) {
    const outcome = replayRegression(file, regression, system, await known.registry.mutants());
    if (!outcome.real.ok)
      console.log(
        'note: it fails against the implementation: the replay stays red until the bug is fixed.',
      );
  }
  return 0;
}

async function save(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress save'], argv, SAVE_HELP);
  const known = await project(args.values.config);
  const registry = known.registry;
  if (args.values.finding !== undefined) {
    if (
      args.values.system !== undefined ||
      args.values.seed !== undefined ||
      args.values.path !== undefined ||
      args.values.mutant !== undefined ||
      args.values.allocator !== undefined
    ) {
      throw new UsageError(
        '--finding stores a finding file as it is; drop --system/--seed/--path/--mutant/--allocator',
      );
    }
    if (args.values.timeout !== undefined && !args.values.shrink)
      throw new UsageError(
        "--timeout goes with --shrink (the time limit of a hang's shrink candidates)",
      );
    const shrink = args.values.shrink
      ? { timeoutMs: args.values.timeout ?? DEFAULT_TIMEOUT_MS }
      : null;
    return saveFinding(
      known,
      args.values.finding,
      args.values.slug,
      args.values.out,
      args.values.force,
      shrink,
    );
  }
  if (args.values.shrink || args.values.timeout !== undefined)
    throw new UsageError(
      '--shrink and --timeout go with --finding FILE (a save from a seed and path is shrunk already)',
    );
  let system: AnySystem | undefined;
  if (args.values.allocator !== undefined) {
    if (args.values.system !== undefined && args.values.system !== USER_ALLOCATOR_SYSTEM)
      throw new UsageError(
        `--allocator saves a ${USER_ALLOCATOR_SYSTEM} regression; drop --system ${args.values.system}`,
      );
    if (args.values.mutant !== undefined)
      throw new UsageError('--allocator and --mutant do not go together');
    system = (
      await resolveTargets(
        { systems: 'all', allocator: allocatorSpecPath(known, args.values.allocator) },
        known,
      )
    )[0]!.system;
  } else {
    const systemName = args.values.system;
    if (systemName === undefined)
      throw new UsageError('save needs --system (or --allocator MODULE, or --finding FILE)');
    if (systemName === USER_ALLOCATOR_SYSTEM)
      throw new UsageError(
        `${USER_ALLOCATOR_SYSTEM} is built from your module: give --allocator MODULE`,
      );
    system = registry.findSystem(systemName);
    if (system === undefined)
      throw new UsageError(
        `unknown system '${systemName}'; known: ${registry.systemNames().join(', ')}`,
      );
  }
  const seed = args.values.seed;
  if (seed === undefined)
    throw new UsageError('save needs --seed (the seed the failing property printed)');
  const replayPath = args.values.path;
  if (replayPath === undefined || !/^\d+(:\d+)*$/.test(replayPath))
    throw new UsageError('save needs --path like 12:0:3 (the path the failing property printed)');
  const mutantName = args.values.mutant;
  const mutant = mutantName === undefined ? undefined : await registry.findMutant(mutantName);
  if (mutantName !== undefined && mutant === undefined)
    throw new UsageError(`unknown mutant '${mutantName}'`);
  if (mutant !== undefined && mutant.system !== system.name)
    throw new UsageError(`mutant ${mutant.name} belongs to system ${mutant.system}`);

  const runIndex = Number(replayPath.split(':')[0]);
  const result = checkSystem(system, {
    seed,
    numRuns: runIndex + 1,
    path: replayPath,
    implFactory: mutant?.createImpl,
  });
  if (!result.failed) {
    console.error(
      `error: seed ${seed} path ${replayPath} does not fail for ${system.name}${mutant ? ` with mutant ${mutant.name}` : ''}`,
    );
    return 1;
  }
  const slug =
    args.values.slug ??
    mutant?.name ??
    `${result.failure.check}-${shortHash(JSON.stringify(result.commands))}`;
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(slug))
    throw new UsageError(
      `--slug must be lower-case letters, digits, '.', '_' or '-', got '${slug}'`,
    );
  const description =
    args.values.description ??
    (mutant
      ? `Catches ${mutant.name}: ${mutant.description}`
      : `${result.failure.check} fails at step ${result.failure.step} on ${JSON.stringify(result.failure.command)}`);
  const regression: Regression = {
    format: REGRESSION_FORMAT,
    system: system.name,
    description,
    config: result.config,
    commands: result.commands,
    origin: {
      tool: 'regress save',
      seed,
      path: replayPath,
      date: originDate(Date.now(), process.env.SOURCE_DATE_EPOCH),
      ...(mutant ? { mutant: mutant.name } : {}),
      check: result.failure.check,
    },
    catches: mutant ? [mutant.name] : [],
  };
  const file = regressionPath(
    path.resolve(args.values.out ?? known.regressionsDir),
    system.name,
    slug,
  );
  writeRegression(file, regression, args.values.force);
  const runOptions = mutant ? { implFactory: mutant.createImpl } : {};
  console.log(
    formatReport({
      system,
      failure: result.failure,
      commands: result.commands,
      runOptions,
      title: 'SAVED',
    }),
  );
  console.log(`\nwrote ${shown(file)} (${result.commands.length} commands, 1-minimal)`);
  const replay = replayRegression(file, regression, system, await registry.mutants());
  if (!replay.real.ok) {
    console.log(
      'note: this sequence fails against the real implementation; the replay stays red until the bug is fixed.',
    );
  }
  return 0;
}

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
    const exec =
      regression.system === NATIVE_ALLOCATOR_SYSTEM
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

async function replay(argv: string[]): Promise<number> {
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

async function show(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress show'], argv, showHelp);
  if (args.positionals.length === 0)
    throw new UsageError('show needs one or more regression files');
  const known = await project(args.values.config);
  const mutants = await known.registry.mutants();
  const files = regressionFiles(known, args.positionals);
  const htmlOut = args.values.html;
  if (htmlOut !== undefined && files.length !== 1)
    throw new UsageError(`--html writes the report of one file; got ${files.length}`);
  for (const file of files) {
    const { regression, system } = await loadFile(known, file);
    const notes = [
      `file:    ${shown(file)}`,
      `about:   ${regression.description}`,
      ...(regression.catches.length > 0
        ? [`catches: ${regression.catches.join(', ')} (shown against ${regression.catches[0]})`]
        : []),
    ];
    if (WATCHDOG_CHECKS.includes(regression.origin.check ?? '')) {
      if (htmlOut !== undefined)
        throw new UsageError(
          `${shown(file)} records a ${regression.origin.check}: its report is not replayed here, so it has no HTML page (use regress replay)`,
        );
      // Running it here could hang: list it as recorded.
      console.log(
        formatUnreturnedReport(
          `${regression.origin.check?.toUpperCase()} ${regression.system}: ${regression.description}`,
          notes,
          regression.config,
          regression.commands,
        ),
      );
      continue;
    }
    // A file that catches a mutant is shown failing against it; otherwise against the implementation.
    const mutant = mutants.find((candidate) => candidate.name === regression.catches[0]);
    const result = replayRegression(
      file,
      { ...regression, catches: [] },
      system,
      mutants,
      mutant?.createImpl,
    );
    const runOptions = mutant === undefined ? {} : { implFactory: mutant.createImpl };
    // It passes: show the sequence and the answers anyway.
    const passing = {
      system: system.name,
      config: regression.config,
      step: -1,
      command: { op: '(none)' },
      check: '(none)',
      checks: [],
      message: 'every check holds on this sequence',
      modelObservation: null,
      implObservation: null,
      diff: [],
    };
    const input = {
      system,
      failure: result.real.ok ? passing : result.real.failure,
      commands: regression.commands,
      runOptions,
      title: result.real.ok ? 'PASSES' : 'REGRESSION',
      notes,
    };
    if (!result.real.ok) console.log(formatReport(input));
    else
      console.log(
        formatReport(input).replace(
          /^PASSES (\S+): check .*$/m,
          `PASSES $1: every check holds over ${regression.commands.length} commands`,
        ),
      );
    if (htmlOut !== undefined) {
      writeHtmlReport(htmlOut, input);
      console.log(`wrote ${shown(path.resolve(htmlOut))}`);
    }
  }
  return 0;
}

async function migrate(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress migrate'], argv, migrateHelp);
  const known = await project(args.values.config);
  let migrated = 0;
  const files = regressionFiles(known, args.positionals);
  for (const file of files) {
    const { regression, format } = await loadFile(known, file);
    if (format === REGRESSION_FORMAT) continue;
    writeRegression(file, regression, true);
    migrated++;
    console.log(`migrated ${shown(file)} (format ${format} -> ${REGRESSION_FORMAT})`);
  }
  console.log(`${migrated} of ${files.length} files migrated`);
  return 0;
}

async function list(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress list'], argv, listHelp);
  const known = await project(args.values.config);
  for (const file of regressionFiles(known, args.positionals)) {
    const { regression } = await loadFile(known, file);
    console.log(
      `${shown(file)}  ${regression.system}  ${regression.commands.length} commands  ${regression.catches.join(',')}`,
    );
  }
  return 0;
}

await runMain(async () => {
  const [verb, ...rest] = process.argv.slice(2);
  if (verb === undefined) {
    console.log(HELP);
    return 2;
  }
  if (verb === 'help') throw new HelpRequested(HELP);
  // An option before the verb: -h/--help prints the help, anything else is unknown.
  if (verb.startsWith('-')) parseCommand(COMMANDS.regress, [verb], HELP);
  if (verb === 'save') return save(rest);
  if (verb === 'replay') return replay(rest);
  if (verb === 'show') return show(rest);
  if (verb === 'list') return list(rest);
  if (verb === 'migrate') return migrate(rest);
  throw new UsageError(
    `unknown command '${verb}'; use save, replay, show, list or migrate (see npm run regress -- --help)`,
  );
});
