/**
 * `npm run regress -- save|replay|list`: turn a failing property into a shrunk regression file,
 * and replay regression files.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkSystem } from '../harness/property';
import { findSystem, systemForFile, systemNames } from '../harness/registry';
import { findMutant, loadMutants, PROJECT_ROOT } from '../harness/mutant-catalog';
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
import { parseArgs, runMain, UsageError, intOption } from './args';

const HELP = `usage:
  npm run regress -- save --system NAME --seed S --path P [--mutant M] [--slug NAME]
                          [--description TEXT] [--out DIR] [--force]
  npm run regress -- replay [FILE|DIR ...]
  npm run regress -- list [FILE|DIR ...]

save    Rebuilds the counterexample a failing property printed (same seed and path), shrinks
        it to a 1-minimal sequence and writes regressions/<system>/<slug>.json. With --mutant,
        the sequence is found against that mutant and the file records it in "catches", so
        npm test keeps checking that the mutant stays caught. Existing files are kept unless
        --force. The date in "origin" is today (UTC), or SOURCE_DATE_EPOCH if set.
replay  Replays files (default: every file under regressions/) against the implementation
        (must pass) and every mutant each file names (must fail; the mutant it was found against
        must still fail first with the check recorded in origin.check). Exit 1 if any does not hold.
list    Lists the regression files with their system, length and mutants.

systems: ${systemNames().join(', ')}`;

export async function lookup(): Promise<Lookup> {
  const mutants = await loadMutants();
  return { findSystem, mutantSystems: new Map(mutants.map((mutant) => [mutant.name, mutant.system])) };
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
  const args = parseArgs(argv, ['system', 'seed', 'path', 'mutant', 'slug', 'description', 'out'], ['force']);
  const systemName = args.options.get('system');
  if (systemName === undefined) throw new UsageError('save needs --system');
  const system = findSystem(systemName);
  if (system === undefined) throw new UsageError(`unknown system '${systemName}'; known: ${systemNames().join(', ')}`);
  const seed = intOption(args, 'seed', -(2 ** 31));
  if (seed === undefined) throw new UsageError('save needs --seed (the seed the failing property printed)');
  const replayPath = args.options.get('path');
  if (replayPath === undefined || !/^\d+(:\d+)*$/.test(replayPath)) throw new UsageError('save needs --path like 12:0:3 (the path the failing property printed)');
  const mutantName = args.options.get('mutant');
  const mutant = mutantName === undefined ? undefined : await findMutant(mutantName);
  if (mutantName !== undefined && mutant === undefined) throw new UsageError(`unknown mutant '${mutantName}'`);
  if (mutant !== undefined && mutant.system !== system.name) throw new UsageError(`mutant ${mutant.name} belongs to system ${mutant.system}`);

  const runIndex = Number(replayPath.split(':')[0]);
  const result = checkSystem(system, { seed, numRuns: runIndex + 1, path: replayPath, implFactory: mutant?.createImpl });
  if (!result.failed) {
    console.error(`error: seed ${seed} path ${replayPath} does not fail for ${system.name}${mutant ? ` with mutant ${mutant.name}` : ''}`);
    return 1;
  }
  const slug = args.options.get('slug') ?? mutant?.name ?? `${result.failure.check}-${shortHash(JSON.stringify(result.commands))}`;
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(slug)) throw new UsageError(`--slug must be lower-case letters, digits, '.', '_' or '-', got '${slug}'`);
  const description =
    args.options.get('description') ??
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
  const file = regressionPath(args.options.get('out') ?? path.join(PROJECT_ROOT, 'regressions'), system.name, slug);
  writeRegression(file, regression, args.flags.has('force'));
  console.log(formatFailure(result.failure, result.commands));
  console.log(`\nwrote ${path.relative(process.cwd(), file)} (${result.commands.length} commands, 1-minimal)`);
  const replay = replayRegression(file, regression, system, await loadMutants());
  if (!replay.real.ok) {
    console.log('note: this sequence fails against the real implementation; npm test stays red until the bug is fixed.');
  }
  return 0;
}

async function replay(argv: string[]): Promise<number> {
  const args = parseArgs(argv, [], []);
  const files = regressionFiles(args.positionals);
  const known = await lookup();
  const mutants = await loadMutants();
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

async function list(argv: string[]): Promise<number> {
  const args = parseArgs(argv, [], []);
  const known = await lookup();
  for (const file of regressionFiles(args.positionals)) {
    const { regression } = await loadRegression(file, known.mutantSystems, systemForFile);
    console.log(`${path.relative(process.cwd(), file)}  ${regression.system}  ${regression.commands.length} commands  ${regression.catches.join(',')}`);
  }
  return 0;
}

await runMain(async () => {
  const [verb, ...rest] = process.argv.slice(2);
  if (verb === undefined || verb === '--help' || verb === '-h' || verb === 'help') {
    console.log(HELP);
    return verb === undefined ? 2 : 0;
  }
  if (verb === 'save') return save(rest);
  if (verb === 'replay') return replay(rest);
  if (verb === 'list') return list(rest);
  throw new UsageError(`unknown command '${verb}'; use save, replay or list (see --help)`);
});
