/** The options of a fuzz campaign: parsed from the command line, checked, resolved against the project. */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { parseSummary, shardLabel, type CampaignSummary, type Shard } from '../harness/campaign.js';
import type { SystemDef } from '../harness/system.js';
import { loadProject, type Project } from '../project.js';
import { UsageError, type COMMANDS, type ParsedArgs } from './args.js';
import { allocatorSpecPath, resolveTargets, type Target, type TargetSpec } from './fuzz-targets.js';
import { DEFAULT_TIMEOUT_MS } from './watchdog.js';

export const DEFAULT_RUNS = 3000;

export interface CampaignOptions {
  readonly project: Project;
  readonly seed: string;
  readonly targetSpec: TargetSpec;
  readonly targets: Target[];
  readonly systems: SystemDef[];
  readonly runs: number | null;
  readonly budgetMs: number | null;
  readonly workers: number;
  readonly shard: Shard;
  readonly jsonFile: string;
  readonly outDir: string;
  readonly resumed: CampaignSummary | null;
  readonly checkpointMs: number;
  readonly timeoutMs: number;
  readonly stopOnFirst: boolean;
  /** Replay the stored regressions before fuzzing (off for --no-preflight and mutant campaigns). */
  readonly preflight: boolean;
  readonly maxFalseOomShare: number | null;
}

export function parseShard(raw: string | undefined): Shard {
  if (raw === undefined) return { index: 0, count: 1 };
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  if (match === null) throw new UsageError(`--shard must look like k/K (e.g. 0/4), got '${raw}'`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || index >= count)
    throw new UsageError(`--shard ${raw}: k must be in 0..K-1 and K >= 1`);
  return { index, count };
}

export function readSummary(file: string): CampaignSummary {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new UsageError(`cannot read summary ${file}: ${reason}`);
  }
  return parseSummary(value, file);
}

/** Fails now, with a one-line error, if `dir` cannot take files (not after an hour of fuzzing). */
export function ensureWritableDir(dir: string, what: string): void {
  const probe = path.join(dir, `.write-test-${process.pid}`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    throw new UsageError(
      `${what} ${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
}

export function maxFalseOomShare(value: number | undefined): number | null {
  if (value === undefined) return null;
  if (value > 1)
    throw new UsageError(`--max-false-oom-share is a share between 0 and 1, got ${value}`);
  return value;
}

export type CampaignArgs = ParsedArgs<(typeof COMMANDS)['fuzz']['options']>;

export async function parseCampaign(args: CampaignArgs): Promise<CampaignOptions> {
  const project = await loadProject(
    args.values.config === undefined ? {} : { configFile: args.values.config },
  );
  const resumeFile = args.values.resume;
  const resumed = resumeFile === undefined ? null : readSummary(resumeFile);
  let seed = args.values.seed ?? resumed?.seed ?? project.seed;
  if (seed.trim() === '') throw new UsageError('--seed must not be empty');
  seed = seed.trim();
  let shard = parseShard(args.values.shard);
  if (resumed !== null) {
    if (args.values.seed !== undefined && seed !== resumed.seed)
      throw new UsageError(
        `--seed ${seed} does not match the resumed campaign's seed ${resumed.seed}`,
      );
    if (resumed.shards.length !== 1)
      throw new UsageError(`${resumeFile} is a merged summary; resume one shard's summary`);
    const resumedShard = parseShard(resumed.shards[0]);
    if (args.values.shard !== undefined && shardLabel(shard) !== shardLabel(resumedShard))
      throw new UsageError(
        `--shard does not match the resumed campaign's shard ${resumed.shards[0]}`,
      );
    shard = resumedShard;
  }
  const resumedSpec = resumed?.targets as TargetSpec | undefined;
  if (resumed !== null && (args.values.system !== undefined || args.values.mutant !== undefined)) {
    throw new UsageError(
      '--resume takes the systems and mutant from the summary; drop --system/--mutant',
    );
  }
  const mutant = args.values.mutant;
  const allocator = args.values.allocator;
  if (resumed !== null && allocator !== undefined)
    throw new UsageError('--resume takes the allocator module from the summary; drop --allocator');
  const exec = args.values.exec;
  if (resumed !== null && exec !== undefined)
    throw new UsageError('--resume takes the driver from the summary; drop --exec');
  const targetSpec: TargetSpec = resumedSpec ?? {
    systems: args.values.system ?? 'all',
    ...(mutant === undefined ? {} : { mutant }),
    ...(allocator === undefined ? {} : { allocator: allocatorSpecPath(project, allocator) }),
    ...(exec === undefined ? {} : { exec: allocatorSpecPath(project, exec) }),
  };
  const targets = await resolveTargets(targetSpec, project);
  const systems = targets.map((target) => target.system);
  const budgetMs = args.values.budget ?? null;
  let runs = args.values.runs ?? null;
  if (runs !== null && budgetMs !== null) throw new UsageError('give --runs or --budget, not both');
  if (resumed !== null) {
    if (resumed.runs !== null) {
      // A campaign of N runs resumes as the same N runs.
      if (budgetMs !== null)
        throw new UsageError(
          `the resumed campaign runs ${resumed.runs} runs per system; drop --budget`,
        );
      if (runs !== null && runs !== resumed.runs)
        throw new UsageError(
          `--runs ${runs} does not match the resumed campaign's ${resumed.runs} runs`,
        );
      runs = resumed.runs;
    } else {
      // A budgeted campaign continues for a new budget.
      if (runs !== null)
        throw new UsageError(
          'the resumed campaign ran on a time budget; give --budget, not --runs',
        );
      if (budgetMs === null)
        throw new UsageError(
          'the resumed campaign ran on a time budget; give --budget for how long to continue',
        );
    }
  }
  if (runs === null && budgetMs === null) runs = DEFAULT_RUNS;
  const workers = args.values.workers ?? Math.max(1, cpus().length);
  const jsonFile =
    args.values.json ?? resumeFile ?? path.join(project.root, '.fuzz', 'last-campaign.json');
  const outDir = path.resolve(args.values.out ?? project.findingsDir);
  ensureWritableDir(path.dirname(path.resolve(jsonFile)), 'the summary folder');
  ensureWritableDir(outDir, 'the findings folder');
  return {
    project,
    seed,
    targetSpec,
    targets,
    systems,
    runs,
    budgetMs,
    workers,
    shard,
    jsonFile,
    outDir,
    resumed,
    checkpointMs: args.values.checkpoint ?? 0,
    timeoutMs: args.values.timeout ?? DEFAULT_TIMEOUT_MS,
    stopOnFirst: args.values['stop-on-first'],
    preflight: !args.values['no-preflight'] && targetSpec.mutant === undefined,
    maxFalseOomShare: maxFalseOomShare(args.values['max-false-oom-share']),
  };
}
