/**
 * `npm run regress -- save|replay|list`: turn a failing property into a shrunk regression file,
 * and replay regression files.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkSystem } from '../harness/property';
import { BUILTIN_REGISTRY, PROJECT_ROOT } from '../systems/index';

const registry = BUILTIN_REGISTRY;
const systemForFile = (name: string, rawConfig: unknown) => registry.systemForFile(name, rawConfig);
import { formatFailure } from '../harness/runner';
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
} from '../harness/regression';
import { COMMANDS, HelpRequested, parseCommand, runMain, UsageError } from './args';

const SAVE_USAGE = `npm run regress -- save --system NAME --seed S --path P [--mutant M] [--slug NAME]
                          [--description TEXT] [--out DIR] [--force]`;
const SAVE_TEXT = `save    Rebuilds the counterexample a failing property printed (same seed and path), shrinks
        it to a 1-minimal sequence and writes regressions/<system>/<slug>.json. With --mutant,
        the sequence is found against that mutant and the file records it in "catches", so
        npm test keeps checking that the mutant stays caught. Existing files are kept unless
        --force. The date in "origin" is today (UTC), or SOURCE_DATE_EPOCH if set.`;
const REPLAY_USAGE = 'npm run regress -- replay [FILE|DIR ...]';
const REPLAY_TEXT = `replay  Replays files (default: every file under regressions/) against the implementation
        (must pass) and every mutant each file names (must fail; the mutant it was found against
        must still fail first with the check recorded in origin.check). Exit 1 if any does not hold.`;
const LIST_USAGE = 'npm run regress -- list [FILE|DIR ...]';
const LIST_TEXT = 'list    Lists the regression files with their system, length and mutants.';
const MIGRATE_USAGE = 'npm run regress -- migrate [FILE|DIR ...]';
const MIGRATE_TEXT = `migrate Rewrites files of an older format (default: every file under regressions/) in the
        current format ${REGRESSION_FORMAT}, keeping their content; files already current are left alone.`;

const HELP = `usage:
  ${SAVE_USAGE}
  ${REPLAY_USAGE}
  ${LIST_USAGE}
  ${MIGRATE_USAGE}

${SAVE_TEXT}
${REPLAY_TEXT}
${LIST_TEXT}
${MIGRATE_TEXT}

Each command takes -h/--help.
systems: ${registry.systemNames().join(', ')}`;

const SAVE_HELP = `usage: ${SAVE_USAGE}

${SAVE_TEXT}

  --system NAME       the system of the failing property: ${registry.systemNames().join(', ')}
  --seed S            the seed it printed (an integer)
  --path P            the path it printed, like 12:0:3
  --mutant M          the sequence fails against this mutant (recorded in "catches")
  --slug NAME         file name (default: the mutant's name, or <check>-<hash>)
  --description TEXT  (default: what the mutant breaks, or the check and step that fail)
  --out DIR           folder of the <system>/ folders (default regressions/)
  --force             overwrite an existing file`;

const REPLAY_HELP = `usage: ${REPLAY_USAGE}

${REPLAY_TEXT}`;

const LIST_HELP = `usage: ${LIST_USAGE}

${LIST_TEXT}`;

export async function lookup(): Promise<Lookup> {
  const mutants = await registry.mutants();
  return { findSystem: (name) => registry.findSystem(name), mutantSystems: new Map(mutants.map((mutant) => [mutant.name, mutant.system])) };
}

/** Every .json file under the given files/directories (default regressions/), sorted. */
export function regressionFiles(targets: readonly string[]): string[] {
  const roots = targets.length > 0 ? targets : [path.join(PROJECT_ROOT, 'regressions')];
  const files: string[] = [];
  const walk = (entry: string): void => {
    let stats;
    try {
      stats = statSync(entry);
    } catch {
      throw new UsageError(`no such file or directory: ${entry}`);
    }
    if (stats.isDirectory()) {
      for (const name of readdirSync(entry).sort()) walk(path.join(entry, name));
    } else if (entry.endsWith('.json')) {
      files.push(entry);
    }
  };
  roots.forEach(walk);
  return files;
}

async function save(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress save'], argv, SAVE_HELP);
  const systemName = args.values.system;
  if (systemName === undefined) throw new UsageError('save needs --system');
  const system = registry.findSystem(systemName);
  if (system === undefined) throw new UsageError(`unknown system '${systemName}'; known: ${registry.systemNames().join(', ')}`);
  const seed = args.values.seed;
  if (seed === undefined) throw new UsageError('save needs --seed (the seed the failing property printed)');
  const replayPath = args.values.path;
  if (replayPath === undefined || !/^\d+(:\d+)*$/.test(replayPath)) throw new UsageError('save needs --path like 12:0:3 (the path the failing property printed)');
  const mutantName = args.values.mutant;
  const mutant = mutantName === undefined ? undefined : await registry.findMutant(mutantName);
  if (mutantName !== undefined && mutant === undefined) throw new UsageError(`unknown mutant '${mutantName}'`);
  if (mutant !== undefined && mutant.system !== system.name) throw new UsageError(`mutant ${mutant.name} belongs to system ${mutant.system}`);

  const runIndex = Number(replayPath.split(':')[0]);
  const result = checkSystem(system, { seed, numRuns: runIndex + 1, path: replayPath, implFactory: mutant?.createImpl });
  if (!result.failed) {
    console.error(`error: seed ${seed} path ${replayPath} does not fail for ${system.name}${mutant ? ` with mutant ${mutant.name}` : ''}`);
    return 1;
  }
  const slug = args.values.slug ?? mutant?.name ?? `${result.failure.check}-${shortHash(JSON.stringify(result.commands))}`;
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(slug)) throw new UsageError(`--slug must be lower-case letters, digits, '.', '_' or '-', got '${slug}'`);
  const description =
    args.values.description ??
    (mutant ? `Catches ${mutant.name}: ${mutant.description}` : `${result.failure.check} fails at step ${result.failure.step} on ${JSON.stringify(result.failure.command)}`);
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
  const file = regressionPath(args.values.out ?? path.join(PROJECT_ROOT, 'regressions'), system.name, slug);
  writeRegression(file, regression, args.values.force);
  console.log(formatFailure(result.failure, result.commands));
  console.log(`\nwrote ${path.relative(process.cwd(), file)} (${result.commands.length} commands, 1-minimal)`);
  const replay = replayRegression(file, regression, system, await registry.mutants());
  if (!replay.real.ok) {
    console.log('note: this sequence fails against the real implementation; npm test stays red until the bug is fixed.');
  }
  return 0;
}

async function replay(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress replay'], argv, REPLAY_HELP);
  const files = regressionFiles(args.positionals);
  const known = await lookup();
  const mutants = await registry.mutants();
  let bad = 0;
  for (const file of files) {
    const { regression, system } = await loadRegression(file, known.mutantSystems, systemForFile);
    const result = replayRegression(file, regression, system, mutants);
    const problems = replayProblems(result);
    if (problems.length > 0) bad++;
    const mutantsText = result.mutants.map((entry) => `${entry.name}:${entry.outcome.ok ? 'SURVIVED' : `caught by ${entry.outcome.failure.check}`}`).join(' ');
    console.log(`${problems.length === 0 ? 'ok  ' : 'FAIL'} ${path.relative(process.cwd(), file)} (${regression.commands.length} commands)${mutantsText ? ' ' + mutantsText : ''}`);
    for (const problem of problems) console.log(`     ${problem}`);
    if (!result.real.ok) console.log(formatFailure(result.real.failure, regression.commands).replace(/^/gm, '     '));
  }
  console.log(`${files.length - bad} passed, ${bad} failed`);
  return bad === 0 ? 0 : 1;
}

async function migrate(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress migrate'], argv, `usage: ${MIGRATE_USAGE}\n\n${MIGRATE_TEXT}`);
  const known = await lookup();
  let migrated = 0;
  const files = regressionFiles(args.positionals);
  for (const file of files) {
    const { regression, format } = await loadRegression(file, known.mutantSystems, systemForFile);
    if (format === REGRESSION_FORMAT) continue;
    writeRegression(file, regression, true);
    migrated++;
    console.log(`migrated ${path.relative(process.cwd(), file)} (format ${format} -> ${REGRESSION_FORMAT})`);
  }
  console.log(`${migrated} of ${files.length} files migrated`);
  return 0;
}

async function list(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['regress list'], argv, LIST_HELP);
  const known = await lookup();
  for (const file of regressionFiles(args.positionals)) {
    const { regression } = await loadRegression(file, known.mutantSystems, systemForFile);
    console.log(`${path.relative(process.cwd(), file)}  ${regression.system}  ${regression.commands.length} commands  ${regression.catches.join(',')}`);
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
  if (verb === 'list') return list(rest);
  if (verb === 'migrate') return migrate(rest);
  throw new UsageError(`unknown command '${verb}'; use save, replay, list or migrate (see npm run regress -- --help)`);
});
