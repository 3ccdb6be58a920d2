/**
 * `npm run fuzz`: fuzz campaigns with fixed seeds.
 *
 * Run i of a system derives everything (fast-check seed, swarm weights, fault sites) from
 * (campaign seed, system, i), so a campaign is the same whatever the worker or shard count.
 * Findings are shrunk, replayed twice, de-duplicated by signature and written at once as
 * regression files; the summary is checkpointed after every batch of runs, so a killed campaign
 * loses at most the runs in flight and never a finding.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  addFinding,
  computeRates,
  emptySummary,
  isCompleted,
  mergeSummaries,
  parseSummary,
  recordRun,
  planRun,
  runCase,
  runIndexOf,
  shardLabel,
  type CampaignSummary,
  type FindingEntry,
  type RunResult,
  type Shard,
} from '../harness/campaign.js';
import { originDate, regressionPath, schemaReference, serializeRegression, shortHash, REGRESSION_FORMAT, SUMMARY_SCHEMA_FILE } from '../harness/regression.js';
import { DEFAULT_SEED } from '../harness/seed.js';
import type { SystemDef } from '../harness/system.js';
import { findingSignature, type RunFinding } from '../harness/campaign.js';
import { writeFileAtomic } from '../harness/files.js';
import { formatReport, formatUnreturnedReport } from '../harness/report.js';
import { runSequence } from '../harness/runner.js';
import { loadProject, type Project } from '../project.js';
import { COMMANDS, parseCommand, runMain, UsageError, type ParsedArgs } from './args.js';
import { allocatorSpecPath, fileSystemName, resolveTargets, type Target, type TargetSpec } from './fuzz-targets.js';
import type { WorkerReply, WorkerTask } from './fuzz-worker.js';
import { campaignWorkerUrl, DEFAULT_TIMEOUT_MS, WatchedWorker, WATCHDOG_CHECKS, type Death, type WorkerInitFields } from './watchdog.js';
import { CaseEvaluator, shrinkDeath } from './hang-shrink.js';
import type { PreflightResult } from './preflight.js';
import { falseOutOfMemoryFailures, falseOutOfMemoryShare } from '../systems/alloc-common.js';

const DEFAULT_RUNS = 3000;
/**
 * Runs go to workers in batches of about this much work: the summary is rewritten after each
 * batch, so a batch is what a SIGKILL can lose, and the batch size keeps messages and
 * checkpoints a small share of the time. Results never depend on the batching.
 */
const TARGET_BATCH_MS = 50;
const MIN_BATCH_RUNS = 4;
const MAX_BATCH_RUNS = 1024;
const PLAIN_PROGRESS_MS = 10_000;
const TTY_PROGRESS_MS = 250;

const HELP = `usage:
  npm run fuzz -- [--system all|NAME[,NAME...] | --mutant NAME | --allocator MODULE | --exec DRIVER] [--seed S]
                  [--runs N | --budget 30s|45m|8h] [--timeout 10s] [--stop-on-first]
                  [--workers N] [--shard k/K] [--json FILE] [--out DIR] [--resume FILE] [--config FILE]
  npm run fuzz -- merge SUMMARY.json SUMMARY.json ... [--json FILE]   (see merge --help)

Runs a fuzz campaign: run i of each system gets a seed derived from (campaign seed, system, i),
draws its enabled ops and weights (swarm testing) and its fault sites from it, and runs one
generated sequence side by side (model vs implementation) with every invariant checked.

  --system    systems to fuzz (default all: every system of the project, and the allocator
              modules its config lists)
  --mutant    fuzz a mutant of the bug catalog instead of the real implementation (its
              findings record the mutant in "catches")
  --allocator fuzz your own allocator: a .js/.mjs/.ts module exporting createAllocator(capacityBytes)
              returning { alloc(sizeBytes, alignBytes): number | null, free(offsetBytes): void },
              and optionally policy = 'first-fit' | 'best-fit' | 'buddy' | 'any' (default 'any':
              bounds, alignment, no overlap, frees accepted; a named policy adds offset-for-offset
              conformance with our model). Findings replay against the module (examples/README.md)
  --exec      fuzz a native allocator: an executable built with include/gpumv_driver.h (its folder:
              gpumv include-dir), one process per worker, a run per batch; it declares its policy
              in its hello. Sanitizer reports, signals, exits, garbage and hangs are findings
              (driver-sanitizer, driver-crash, driver-exit, driver-garbage, driver-hang); findings replay
              against the executable (docs/native.md)
  --seed      campaign seed, a string or number (default: the config's seed, else ${DEFAULT_SEED})
  --runs N    runs 0..N-1 of each system (default ${DEFAULT_RUNS} unless --budget is given)
  --budget    run until this much time has passed (runs in flight finish)
  --timeout   time limit of one run (default ${DEFAULT_TIMEOUT_MS / 1000}s; 0 = none): a run past it is stopped
              with its worker thread and becomes a 'hang' finding, shrunk under the same limit
              in a fresh worker; a run that exhausts the worker's memory or kills it becomes an
              'out-of-memory' or 'worker-crash' finding. The campaign goes on with a fresh worker.
  --stop-on-first  end the campaign at its first finding (interactive use)
  --no-preflight   skip the preflight: before fuzzing, every stored regression of the campaign's
              systems (the project's and the built-ins') is replayed; each must fail against the
              mutants it names with its recorded check, so a judge that no longer detects what it
              should stops the campaign before it starts (exit code 4). Files that fail against
              the implementation (bugs not fixed yet) are listed and the campaign runs. Mutant
              campaigns skip it
  --workers   worker threads running the runs (default: the number of cores)
  --shard k/K take only runs i with i mod K = k; the K shards together are the whole campaign
  --json      summary file, rewritten after every batch of runs (default .fuzz/last-campaign.json)
  --out       where findings are written (default: the config's findings folder, .fuzz/findings),
              as <system>/fuzz-<check>-<op>-<hash>.json; 'regress save --finding FILE' stores
              one in the regressions folder
  --resume    continue the campaign a summary file describes (same seed, targets, shard and runs;
              a budgeted campaign needs a new --budget)
  --checkpoint rewrite the summary at most this often (default: after every batch of runs); a
              SIGKILL loses the runs finished since, which a resume runs again
  --config    the project's config file (default: gpumv.config.{ts,mts,js,mjs} found walking up
              from the working directory); its folder is the root paths in files are relative to
  --max-false-oom-share P  fail when an allocator's false out-of-memory share exceeds P (0..1):
              the share of its null answers given while an aligned free gap large enough
              existed (counted for every allocator system; the table's 'false OOM' column)
  -h, --help  this help

Exit codes: 0 no finding, 1 findings (each written as a regression file) or stored regressions
that still fail against the implementation, 2 bad arguments, 3 interrupted without findings,
4 the preflight failed (a stored regression's mutant escapes its check, or a file cannot be
read): nothing was fuzzed. Ctrl-C or SIGTERM finishes the runs in flight, writes the summary
and exits (a second Ctrl-C exits at once); the summary is rewritten after every batch of runs,
so even a SIGKILL loses only the runs in flight. Findings are never overwritten: each file name
carries a hash of its case.
merge combines the summaries of one campaign's shards into one (same seed, runs and targets, each
shard once); it exits 1 on findings and 3 if shards are missing or were interrupted.`;

const MERGE_HELP = `usage: npm run fuzz -- merge SUMMARY.json SUMMARY.json ... [--json FILE]

Combines the summaries of one campaign's shards (same seed, runs and targets, each shard once)
into one and prints it; exits 1 on findings and 3 if shards are missing or were interrupted.

  --json FILE  also write the merged summary to FILE
  -h, --help   this help`;

interface CampaignOptions {
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

/** A path as written into files and shown: relative to the project root inside it, absolute outside. */
function rootRelative(root: string, file: string): string {
  const relative = path.relative(root, path.resolve(file));
  return relative.startsWith('..') || path.isAbsolute(relative) ? path.resolve(file) : relative.split(path.sep).join('/');
}

/** Writes a whole file or nothing (see writeFileAtomic), creating its folder. */
function writeAtomically(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileAtomic(file, text);
}

/** Writes a summary with the `$schema` an editor validates it with (its path from the file). */
function writeSummary(file: string, summary: CampaignSummary): void {
  const { $schema: _previous, ...rest } = summary;
  writeAtomically(file, JSON.stringify({ $schema: schemaReference(file, SUMMARY_SCHEMA_FILE), ...rest }, null, 2) + '\n');
}

function parseShard(raw: string | undefined): Shard {
  if (raw === undefined) return { index: 0, count: 1 };
  const match = /^(\d+)\/(\d+)$/.exec(raw);
  if (match === null) throw new UsageError(`--shard must look like k/K (e.g. 0/4), got '${raw}'`);
  const index = Number(match[1]);
  const count = Number(match[2]);
  if (count < 1 || index >= count) throw new UsageError(`--shard ${raw}: k must be in 0..K-1 and K >= 1`);
  return { index, count };
}

function readSummary(file: string): CampaignSummary {
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
function ensureWritableDir(dir: string, what: string): void {
  const probe = path.join(dir, `.write-test-${process.pid}`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    throw new UsageError(`${what} ${dir} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
}

function maxFalseOomShare(value: number | undefined): number | null {
  if (value === undefined) return null;
  if (value > 1) throw new UsageError(`--max-false-oom-share is a share between 0 and 1, got ${value}`);
  return value;
}

/** The 'false OOM' cell of a system: its share of null answers given while a fitting gap existed. */
function falseOomCell(probes: Readonly<Record<string, number>>): string {
  const stats = falseOutOfMemoryShare(probes);
  return stats === null ? '-' : `${(100 * stats.share).toFixed(1)} % of ${stats.nullAnswers}`;
}

type CampaignArgs = ParsedArgs<(typeof COMMANDS)['fuzz']['options']>;

async function parseCampaign(args: CampaignArgs): Promise<CampaignOptions> {
  const project = await loadProject(args.values.config === undefined ? {} : { configFile: args.values.config });
  const resumeFile = args.values.resume;
  const resumed = resumeFile === undefined ? null : readSummary(resumeFile);
  let seed = args.values.seed ?? resumed?.seed ?? project.seed;
  if (seed.trim() === '') throw new UsageError('--seed must not be empty');
  seed = seed.trim();
  let shard = parseShard(args.values.shard);
  if (resumed !== null) {
    if (args.values.seed !== undefined && seed !== resumed.seed) throw new UsageError(`--seed ${seed} does not match the resumed campaign's seed ${resumed.seed}`);
    if (resumed.shards.length !== 1) throw new UsageError(`${resumeFile} is a merged summary; resume one shard's summary`);
    const resumedShard = parseShard(resumed.shards[0]);
    if (args.values.shard !== undefined && shardLabel(shard) !== shardLabel(resumedShard)) throw new UsageError(`--shard does not match the resumed campaign's shard ${resumed.shards[0]}`);
    shard = resumedShard;
  }
  const resumedSpec = resumed?.targets as TargetSpec | undefined;
  if (resumed !== null && (args.values.system !== undefined || args.values.mutant !== undefined)) {
    throw new UsageError('--resume takes the systems and mutant from the summary; drop --system/--mutant');
  }
  const mutant = args.values.mutant;
  const allocator = args.values.allocator;
  if (resumed !== null && allocator !== undefined) throw new UsageError('--resume takes the allocator module from the summary; drop --allocator');
  const exec = args.values.exec;
  if (resumed !== null && exec !== undefined) throw new UsageError('--resume takes the driver from the summary; drop --exec');
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
      if (budgetMs !== null) throw new UsageError(`the resumed campaign runs ${resumed.runs} runs per system; drop --budget`);
      if (runs !== null && runs !== resumed.runs) throw new UsageError(`--runs ${runs} does not match the resumed campaign's ${resumed.runs} runs`);
      runs = resumed.runs;
    } else {
      // A budgeted campaign continues for a new budget.
      if (runs !== null) throw new UsageError('the resumed campaign ran on a time budget; give --budget, not --runs');
      if (budgetMs === null) throw new UsageError('the resumed campaign ran on a time budget; give --budget for how long to continue');
    }
  }
  if (runs === null && budgetMs === null) runs = DEFAULT_RUNS;
  const workers = args.values.workers ?? Math.max(1, cpus().length);
  const jsonFile = args.values.json ?? resumeFile ?? path.join(project.root, '.fuzz', 'last-campaign.json');
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

/** Hands out (system, run index) pairs in campaign order, skipping runs already done. */
class RunQueue {
  private ordinal = 0;
  private systemIndex = 0;
  /** Runs handed out to a worker that died before reporting them: they run again, first. */
  private readonly retry: { system: string; runIndex: number }[] = [];
  constructor(
    private readonly options: CampaignOptions,
    private readonly summary: CampaignSummary,
  ) {}
  giveBack(runs: readonly { system: string; runIndex: number }[]): void {
    this.retry.push(...runs);
  }
  next(): { system: string; runIndex: number } | null {
    const again = this.retry.shift();
    if (again !== undefined) return again;
    const { systems, shard, runs } = this.options;
    for (let guard = 0; guard < 1_000_000; guard++) {
      if (this.systemIndex === systems.length) {
        this.systemIndex = 0;
        this.ordinal++;
      }
      const runIndex = runIndexOf(shard, this.ordinal);
      if (runs !== null && runIndex >= runs) return null;
      const system = systems[this.systemIndex++]!;
      const completion = this.summary.systems[system.name]?.completed[shardLabel(shard)];
      if (!isCompleted(completion, this.ordinal)) return { system: system.name, runIndex };
    }
    throw new Error('run queue: no runnable run found in a million candidates');
  }
}

type BatchTask = Extract<WorkerTask, { kind: 'batch' }>;

class Campaign {
  readonly summary: CampaignSummary;
  private readonly started = performance.now();
  private readonly previousElapsedMs: number;
  private lastCheckpoint = 0;
  private lastProgress = 0;
  private stopping: 'budget' | 'interrupted' | 'first-finding' | null = null;
  readonly queue: RunQueue;
  private readonly tty = process.stderr.isTTY === true;
  private runsThisSession = 0;
  private commandsThisSession = 0;
  private busyMsThisSession = 0;
  private nextTaskId = 1;
  /** Shrinks of runs that hung or died, one at a time (each may cost a time limit per step); the campaign waits for them. */
  deaths: Promise<void> = Promise.resolve();

  constructor(private readonly options: CampaignOptions) {
    this.summary = options.resumed ? structuredClone(options.resumed) : emptySummary(options.seed, options.shard, options.systems, options.runs, { ...options.targetSpec }, options.budgetMs);
    for (const system of options.systems) {
      this.summary.systems[system.name] ??= emptySummary(options.seed, options.shard, [system]).systems[system.name]!;
    }
    this.summary.stopped = 'running';
    if (options.budgetMs !== null) this.summary.budgetMs = options.budgetMs;
    this.summary.timing.workers = options.workers;
    this.previousElapsedMs = options.resumed?.timing.elapsedMs ?? 0;
    this.queue = new RunQueue(options, this.summary);
  }

  stop(reason: 'budget' | 'interrupted' | 'first-finding'): void {
    this.stopping ??= reason;
  }

  get stopped(): boolean {
    if (this.stopping === null && this.options.budgetMs !== null && performance.now() - this.started >= this.options.budgetMs) {
      this.stopping = 'budget';
    }
    return this.stopping !== null;
  }

  nextBatch(): BatchTask | null {
    if (this.stopped) return null;
    const batch: { system: string; runIndex: number }[] = [];
    const msPerRun = this.runsThisSession === 0 ? TARGET_BATCH_MS / MIN_BATCH_RUNS : this.busyMsThisSession / this.runsThisSession;
    const size = Math.min(MAX_BATCH_RUNS, Math.max(MIN_BATCH_RUNS, Math.round(TARGET_BATCH_MS / Math.max(msPerRun, 1e-3))));
    while (batch.length < size) {
      const next = this.queue.next();
      if (next === null) break;
      batch.push(next);
    }
    return batch.length === 0 ? null : { kind: 'batch', id: this.nextTaskId++, batch };
  }

  /** Records a finished batch, then checkpoints: a SIGKILL loses only the batches in flight. */
  record(results: readonly RunResult[]): void {
    this.summary.timing.threadRuns += results.length;
    for (const result of results) {
      const system = this.summary.systems[result.system]!;
      recordRun(system, result, this.options.shard);
      this.summary.timing.busyMs[result.system] = (this.summary.timing.busyMs[result.system] ?? 0) + (result.busyMs ?? 0);
      this.runsThisSession++;
      this.commandsThisSession += result.commands;
      this.busyMsThisSession += result.busyMs ?? 0;
      if (result.finding !== null) this.recordFinding(result);
    }
    this.tick(false);
  }

  /**
   * A run that hung or killed its worker: rebuilt from its seed, shrunk in fresh workers under
   * the same limit, then recorded as a finding like any other (asynchronously: the campaign
   * goes on meanwhile).
   */
  recordDeath(run: { system: string; runIndex: number }, death: Death, worker: { url: URL; init: WorkerInitFields }): void {
    const target = this.options.targets.find((candidate) => candidate.system.name === run.system)!;
    const plan = planRun(this.options.seed, target.system, run.runIndex);
    const { config, commands } = runCase(target.system, plan);
    const stuckOp = death.step < 0 ? '(setup)' : (commands[death.step]?.op ?? '(setup)');
    const known = this.summary.findings.find((entry) => entry.signature === findingSignature(run.system, death.check, stuckOp));
    this.clearLine();
    if (known !== undefined && known.runIndex < run.runIndex) {
      // The same death (check and op) from an earlier run is already shrunk: count the run, skip the shrink.
      console.log(`${death.check}: ${run.system} run ${run.runIndex} at step ${death.step} (op ${stuckOp}): the same as ${known.file}`);
      this.record([{ system: run.system, runIndex: run.runIndex, commands: Math.max(death.step, 0) + 1, probes: {}, weights: plan.weights, faults: plan.faults, smallConfigs: plan.smallConfigs, finding: null, busyMs: this.options.timeoutMs }]);
      return;
    }
    console.log(`${death.check}: ${run.system} run ${run.runIndex} at step ${death.step} (op ${stuckOp}): ${death.detail}; shrinking it in a fresh worker`);
    this.deaths = this.deaths.then(async () => {
      const evaluator = new CaseEvaluator(worker.url, worker.init, this.options.timeoutMs);
      let shrunk;
      try {
        shrunk = await shrinkDeath(evaluator, run.system, config, commands, death.check, death.step);
      } finally {
        await evaluator.close();
      }
      const failing = shrunk.commands[shrunk.step] ?? shrunk.commands[shrunk.commands.length - 1];
      const op = shrunk.step < 0 || failing === undefined ? '(setup)' : failing.op;
      const message =
        `${death.detail} (at step ${shrunk.step}, op ${op}` + (shrunk.reproduced ? ')' : '; it did not reproduce in a fresh worker, so the case is reported unshrunk)');
      const finding: RunFinding = {
        signature: findingSignature(run.system, death.check, op),
        system: run.system,
        check: death.check,
        checks: [death.check],
        op,
        runIndex: run.runIndex,
        seed: plan.seed,
        path: '',
        config,
        commands: shrunk.commands,
        message,
        weights: plan.weights,
        faults: plan.faults,
        smallConfigs: plan.smallConfigs,
        originalLength: commands.length,
      };
      this.record([{ system: run.system, runIndex: run.runIndex, commands: Math.max(death.step, 0) + 1, probes: {}, weights: plan.weights, faults: plan.faults, smallConfigs: plan.smallConfigs, finding, busyMs: this.options.timeoutMs }]);
    });
  }

  private recordFinding(result: RunResult): void {
    const finding = result.finding!;
    const root = this.options.project.root;
    // The name carries a hash of the case: a later campaign never overwrites another file.
    const hash = shortHash(JSON.stringify([finding.config, finding.commands]));
    const slug = `fuzz-${finding.check}-${finding.op}-${hash}`.toLowerCase().replace(/[^a-z0-9._-]+/g, '-');
    const fileSystem = fileSystemName(finding.system);
    const file = regressionPath(this.options.outDir, fileSystem, slug);
    const entry: FindingEntry = {
      signature: finding.signature,
      system: finding.system,
      check: finding.check,
      ...(finding.checks.length > 1 ? { checks: [...finding.checks] } : {}),
      op: finding.op,
      runIndex: finding.runIndex,
      commands: finding.commands.length,
      file: rootRelative(root, file),
      replay: `npm run regress -- replay ${rootRelative(root, file)}`,
      weights: finding.weights,
      faults: [...finding.faults],
      smallConfigs: finding.smallConfigs,
    };
    const verdict = addFinding(this.summary.findings, entry);
    if (verdict.kind === 'duplicate') return;
    const target = this.options.targets.find((candidate) => candidate.system.name === finding.system)!;
    const catches = [...target.catches];
    if (!existsSync(file)) {
      writeAtomically(
        file,
        serializeRegression({
          format: REGRESSION_FORMAT,
          system: fileSystem,
          description: `fuzz campaign ${this.options.seed}, ${finding.system} run ${finding.runIndex}: ${finding.check} fails on op ${finding.op}`,
          config: finding.config,
          commands: finding.commands,
          // The run is named by campaign seed, system and index (its generation used that
          // run's swarm plan, so a fast-check seed alone would not rebuild it).
          origin: {
            tool: 'fuzz',
            seed: `${this.options.seed}/${finding.system}/${finding.runIndex}`,
            date: originDate(Date.now(), process.env.SOURCE_DATE_EPOCH),
            ...(catches.length === 1 ? { mutant: catches[0]! } : {}),
            check: finding.check,
          },
          catches,
        }, file),
      );
    }
    // The finding of a later run with the same signature was written first: remove it.
    if (verdict.kind === 'replaced' && verdict.previous.file !== entry.file) rmSync(path.resolve(root, verdict.previous.file), { force: true });
    this.clearLine();
    const replaced = verdict.kind === 'replaced' ? ', replacing a later run with the same signature' : '';
    console.log(findingReport(target, finding, entry, replaced));
    this.checkpoint(true);
    if (this.options.stopOnFirst) this.stop('first-finding');
  }

  private elapsedMs(): number {
    return this.previousElapsedMs + (performance.now() - this.started);
  }

  private fillTiming(): void {
    const elapsedMs = this.elapsedMs();
    this.summary.timing.elapsedMs = Math.round(elapsedMs);
    computeRates(this.summary);
  }

  checkpoint(force: boolean): void {
    const now = performance.now();
    if (!force && now - this.lastCheckpoint < this.options.checkpointMs) return;
    this.lastCheckpoint = now;
    this.fillTiming();
    writeSummary(this.options.jsonFile, this.summary);
  }

  private clearLine(): void {
    if (this.tty) process.stderr.write('\r\x1b[K');
  }

  tick(force: boolean): void {
    this.checkpoint(force);
    const now = performance.now();
    const every = this.tty ? TTY_PROGRESS_MS : PLAIN_PROGRESS_MS;
    if (!force && now - this.lastProgress < every) return;
    this.lastProgress = now;
    const seconds = (now - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(this.commandsThisSession / seconds) : 0;
    let left = '';
    if (this.options.budgetMs !== null) left = `, ${Math.max(0, Math.ceil((this.options.budgetMs - (now - this.started)) / 1000))}s left`;
    else if (this.options.runs !== null) {
      const total = this.options.systems.length * Math.ceil((this.options.runs - this.options.shard.index) / this.options.shard.count);
      const done = Object.values(this.summary.systems).reduce((sum, system) => sum + system.runs, 0);
      left = `, ${done}/${total} runs`;
    }
    const line = `fuzz: ${this.runsThisSession} runs, ${rate} commands/s, ${this.summary.findings.length} findings${left}`;
    if (this.tty) process.stderr.write(`\r\x1b[K${line}`);
    else console.error(line);
  }

  finish(): CampaignSummary {
    this.summary.stopped = this.stopping ?? 'complete';
    this.clearLine();
    this.checkpoint(true);
    return this.summary;
  }
}

/** The console report of a new finding: the readable report, then where it is and how to keep it. */
function findingReport(target: Target, finding: RunFinding, entry: FindingEntry, replaced: string): string {
  const notes = [
    `run ${finding.runIndex} of the campaign, shrunk from ${finding.originalLength} to ${finding.commands.length} commands${replaced}`,
    `written to ${entry.file}`,
    `replay:  ${entry.replay}`,
    `keep it: npm run regress -- save --finding ${entry.file}`,
  ];
  if (WATCHDOG_CHECKS.includes(finding.check)) {
    return formatUnreturnedReport(`FINDING ${finding.system}: ${finding.check}: ${finding.message}`, notes, finding.config, finding.commands);
  }
  const runOptions = target.implFactory === undefined ? {} : { implFactory: target.implFactory };
  const outcome = runSequence(target.system, finding.config, finding.commands, runOptions);
  if (outcome.ok) return `FINDING ${finding.signature}: ${finding.message}\n  ${notes.join('\n  ')}`;
  return formatReport({ system: target.system, failure: outcome.failure, commands: finding.commands, runOptions, notes });
}

/** Batches queued per worker: one running, one waiting, so a worker never idles on the main thread. */
const BATCHES_IN_FLIGHT_PER_WORKER = 2;

/**
 * Runs the campaign on `count` watched worker threads. A worker that hangs or dies is replaced
 * by a fresh one; the run it was stuck in becomes a finding and the other runs it held run again.
 */
async function runInWorkers(campaign: Campaign, options: CampaignOptions, count: number): Promise<void> {
  const url = campaignWorkerUrl();
  const init: WorkerInitFields = { campaignSeed: options.seed, targets: options.targetSpec, configFile: options.project.configFile, cwd: options.project.root };
  const slot = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const inFlight: BatchTask[] = [];
      let finished = false;
      const start = (): void => {
        const worker: WatchedWorker = new WatchedWorker(url, init, options.timeoutMs, {
          message: (reply: WorkerReply) => {
            if (reply.kind === 'error') {
              finished = true;
              void worker.terminate();
              reject(new Error(`worker failed: ${reply.error}`));
              return;
            }
            if (reply.kind === 'batch') inFlight.shift();
            // Queue the next batch before recording this one: the worker keeps running meanwhile.
            refill(worker);
            if (reply.kind === 'batch' && reply.results.length > 0) campaign.record(reply.results);
          },
          death: (death: Death) => {
            const current = inFlight.find((task) => task.id === death.taskId);
            const lost = inFlight.splice(0, inFlight.length);
            if (current !== undefined && death.position >= 0 && death.position < current.batch.length) {
              campaign.recordDeath(current.batch[death.position]!, death, { url, init });
              campaign.queue.giveBack(lost.flatMap((task) => task.batch.filter((_, index) => task !== current || index !== death.position)));
            } else {
              if (lost.length === 0 && !finished) {
                finished = true;
                reject(new Error(`a worker died before running anything: ${death.detail}`));
                return;
              }
              campaign.queue.giveBack(lost.flatMap((task) => task.batch));
            }
            if (!finished) start();
          },
        });
        refill(worker);
      };
      const refill = (worker: WatchedWorker): void => {
        while (inFlight.length < BATCHES_IN_FLIGHT_PER_WORKER) {
          const task = campaign.nextBatch();
          if (task === null) break;
          worker.post(task);
          inFlight.push(task);
        }
        if (inFlight.length === 0 && !finished) {
          finished = true;
          void worker.terminate().then(() => resolve());
        }
      };
      start();
    });
  await Promise.all(Array.from({ length: count }, slot));
  // Shrinks of hung runs record their findings when they end.
  await campaign.deaths;
}

function printSummary(summary: CampaignSummary): void {
  const rows = Object.entries(summary.systems).map(([name, system]) => [
    name,
    String(system.runs),
    String(system.commands),
    String(summary.timing.commandsPerSecond[name] ?? 0),
    String(summary.findings.filter((finding) => finding.system === name).length),
    falseOomCell(system.probes),
    system.probesNeverHit.length === 0 ? '-' : system.probesNeverHit.join(','),
  ]);
  const header = ['system', 'runs', 'commands', 'commands/s/core', 'findings', 'false OOM', 'probes never hit'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const format = (row: string[]) => row.map((cell, column) => (column === 0 || column === 6 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
  console.log(format(header));
  for (const row of rows) console.log(format(row));
  const total = Object.values(summary.systems).reduce((sum, system) => sum + system.commands, 0);
  console.log(
    `\ncampaign seed ${summary.seed}, shard ${summary.shards.join('+')}: ${total} commands in ${(summary.timing.elapsedMs / 1000).toFixed(1)} s ` +
      `(${summary.timing.totalCommandsPerSecond} commands/s side by side with ${summary.timing.workers} worker${summary.timing.workers === 1 ? '' : 's'}), stopped: ${summary.stopped}`,
  );
  if (summary.findings.length === 0) console.log('no findings');
  for (const finding of summary.findings) {
    console.log(`FINDING ${finding.signature}: run ${finding.runIndex}, ${finding.commands} commands -> ${finding.file}\n  ${finding.replay}`);
  }
}

/**
 * The preflight in a watched worker: a stored regression that now loops or exhausts memory is
 * stopped by the campaign's time limit and reported as a problem of its file, instead of
 * hanging the campaign before it starts.
 */
function preflightInWorker(options: CampaignOptions, systems: ReadonlySet<string>, allocators: ReadonlySet<string>): Promise<PreflightResult> {
  const init: WorkerInitFields = { campaignSeed: options.seed, targets: options.targetSpec, configFile: options.project.configFile, cwd: options.project.root };
  return new Promise((resolve, reject) => {
    let current: string | null = null;
    const worker: WatchedWorker = new WatchedWorker(campaignWorkerUrl(), init, options.timeoutMs, {
      message: (reply) => {
        if (reply.kind === 'ready') worker.post({ kind: 'preflight', id: 1, systems: [...systems], allocators: [...allocators] });
        else if (reply.kind === 'preflight-file') current = reply.file;
        else if (reply.kind === 'preflight') void worker.terminate().then(() => resolve(reply.result));
        else if (reply.kind === 'error') void worker.terminate().then(() => reject(new Error(`the preflight's worker failed: ${reply.error}`)));
      },
      death: (death) => {
        const where = current ?? '(loading the project)';
        resolve({ files: 0, mutantReplays: 0, skipped: 0, failing: [], elapsedMs: 0, problems: [{ file: where, problems: [`${death.check}: ${death.detail}`] }] });
      },
    });
  });
}

/**
 * Runs the preflight (see preflight.ts) and says what it found. `holds` false stops the campaign;
 * `failing` files (bugs not fixed yet) let it run and end it as a finding would.
 */
async function runCampaignPreflight(options: CampaignOptions): Promise<{ holds: boolean; failing: number }> {
  const systems = new Set(options.targets.map((target) => fileSystemName(target.system.name)));
  const { allocator, exec } = options.targetSpec;
  const allocators = new Set(allocator !== undefined ? [allocator] : exec !== undefined ? [exec] : options.project.allocators);
  const result = await preflightInWorker(options, systems, allocators);
  const shown = (file: string) => rootRelative(options.project.root, file);
  for (const { file, check, step } of result.failing) {
    console.log(`PREFLIGHT FAILING ${shown(file)}: fails against the implementation (${check} at step ${step}): a bug not fixed yet, or back`);
  }
  const skipped = result.skipped === 0 ? '' : `, ${result.skipped} hang file${result.skipped === 1 ? '' : 's'} left to regress replay`;
  if (result.problems.length === 0) {
    console.log(
      `preflight: ${result.files} stored regression${result.files === 1 ? '' : 's'} replayed, every mutant caught by its check ` +
        `(${result.mutantReplays} replays${skipped}) in ${(result.elapsedMs / 1000).toFixed(1)} s` +
        (result.failing.length === 0 ? '' : `; ${result.failing.length} still fail against the implementation`),
    );
    return { holds: true, failing: result.failing.length };
  }
  for (const { file, problems } of result.problems) console.log(`PREFLIGHT ${shown(file)}: ${problems.join('; ')}`);
  console.log(
    `preflight: ${result.problems.length} of ${result.files} stored regressions do not hold, so the campaign did not start: ` +
      `a check no longer fires on the mutant that proves it (or a file cannot be read), and a campaign with a judge that ` +
      `does not judge finds nothing. Replay one with npm run regress -- replay FILE, or skip this with --no-preflight.`,
  );
  return { holds: false, failing: result.failing.length };
}

async function campaignMain(args: CampaignArgs): Promise<number> {
  const options = await parseCampaign(args);
  const preflight = options.preflight ? await runCampaignPreflight(options) : { holds: true, failing: 0 };
  if (!preflight.holds) return 4;
  if (!existsSync(options.outDir)) mkdirSync(options.outDir, { recursive: true });
  const campaign = new Campaign(options);
  let interrupts = 0;
  const onSignal = (): void => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    campaign.stop('interrupted');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  console.log(
    `fuzz: seed ${options.seed}, systems ${options.systems.map((system) => system.name).join(',')}, ` +
      `${options.runs !== null ? `runs 0..${options.runs - 1}` : `budget ${options.budgetMs! / 1000}s`}, shard ${shardLabel(options.shard)}, ` +
      `${options.workers} worker${options.workers === 1 ? '' : 's'}, run time limit ${options.timeoutMs === 0 ? 'none' : `${options.timeoutMs / 1000}s`}${options.resumed ? ', resumed' : ''}`,
  );
  await runInWorkers(campaign, options, options.workers).catch((error: unknown) => {
    campaign.stop('interrupted');
    campaign.finish();
    throw error;
  });
  const summary = campaign.finish();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  printSummary(summary);
  console.log(`summary: ${rootRelative(options.project.root, options.jsonFile)}`);
  const overShare = options.maxFalseOomShare === null ? [] : falseOutOfMemoryFailures(summary.systems, options.maxFalseOomShare);
  for (const line of overShare) console.log(`FALSE OUT OF MEMORY ${line}`);
  if (preflight.failing > 0) console.log(`${preflight.failing} stored regression${preflight.failing === 1 ? '' : 's'} still fail against the implementation (see PREFLIGHT FAILING above)`);
  if (summary.findings.length > 0 || overShare.length > 0 || preflight.failing > 0) return 1;
  return summary.stopped === 'interrupted' ? 3 : 0;
}

async function mergeMain(argv: string[]): Promise<number> {
  const args = parseCommand(COMMANDS['fuzz merge'], argv, MERGE_HELP);
  if (args.positionals.length === 0) throw new UsageError('merge needs one or more summary files (see npm run fuzz -- merge --help)');
  let merged: CampaignSummary;
  try {
    merged = mergeSummaries(args.positionals.map(readSummary));
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  const out = args.values.json;
  if (out !== undefined) writeSummary(out, merged);
  printSummary(merged);
  if (merged.findings.length > 0) return 1;
  if (merged.stopped === 'incomplete' || merged.stopped === 'interrupted') {
    console.log(merged.stopped === 'incomplete' ? `incomplete: only shards ${merged.shards.join(', ')} of the campaign are here` : 'some shards were interrupted');
    return 3;
  }
  return 0;
}

await runMain(async () => {
  const argv = process.argv.slice(2);
  if (argv[0] === 'merge') return mergeMain(argv.slice(1));
  return campaignMain(parseCommand(COMMANDS.fuzz, argv, HELP));
});
