/** `npm run regress -- save`: a failing property's counterexample or a campaign's finding stored as a regression. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { checkSystem } from '../harness/property.js';
import { formatReport } from '../harness/report.js';
import { minimizeCase, runSequence } from '../harness/runner.js';
import type { AnySystem } from '../harness/system.js';
import {
  originDate,
  regressionPath,
  replayRegression,
  shortHash,
  writeRegression,
  REGRESSION_FORMAT,
  type Regression,
} from '../harness/regression.js';
import type { Project } from '../project.js';
import { USER_ALLOCATOR_SYSTEM } from '../systems/user-allocator.js';
import { COMMANDS, parseCommand, UsageError } from './args.js';
import { allocatorSpecPath, resolveTargets } from './fuzz-targets.js';
import { CaseEvaluator, shrinkDeath } from './hang-shrink.js';
import { SAVE_HELP } from './regress-help.js';
import { loadFile, project, resolveArgument, shown } from './regress-files.js';
import { campaignWorkerUrl, DEFAULT_TIMEOUT_MS, WATCHDOG_CHECKS } from './watchdog.js';
import { present } from '../assert.js';

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

export async function save(argv: string[]): Promise<number> {
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
    system = present(
      (
        await resolveTargets(
          { systems: 'all', allocator: allocatorSpecPath(known, args.values.allocator) },
          known,
        )
      )[0],
      '--allocator resolves to its system',
    ).system;
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
