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
import { Worker } from 'node:worker_threads';
import {
  addFinding,
  computeRates,
  emptySummary,
  isCompleted,
  mergeSummaries,
  parseSummary,
  recordRun,
  runIndexOf,
  shardLabel,
  type CampaignSummary,
  type FindingEntry,
  type RunResult,
  type Shard,
} from '../harness/campaign';
import { originDate, regressionPath, schemaReference, serializeRegression, shortHash, REGRESSION_FORMAT, SUMMARY_SCHEMA_FILE } from '../harness/regression';
import { DEFAULT_SEED } from '../harness/seed';
import type { SystemDef } from '../harness/system';
import { BUILTIN_REGISTRY, PROJECT_ROOT } from '../systems/index';
import { writeFileAtomic } from '../harness/files';
import { COMMANDS, parseCommand, runMain, UsageError, type ParsedArgs } from './args';
import { resolveTargets, type Target, type TargetSpec } from './fuzz-targets';
import { timedRun } from './fuzz-run';
import type { WorkerInit, WorkerReply, WorkerTask } from './fuzz-worker';

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
  npm run fuzz -- [--system all|NAME[,NAME...] | --mutant NAME | --allocator MODULE] [--seed S]
                  [--runs N | --budget 30s|45m|8h]
                  [--workers N] [--shard k/K] [--json FILE] [--out DIR] [--resume FILE]
  npm run fuzz -- merge SUMMARY.json SUMMARY.json ... [--json FILE]   (see merge --help)

Runs a fuzz campaign: run i of each system gets a seed derived from (campaign seed, system, i),
draws its enabled ops and weights (swarm testing) and its fault sites from it, and runs one
generated sequence side by side (model vs implementation) with every invariant checked.

  --system    systems to fuzz (default all): ${BUILTIN_REGISTRY.systemNames().join(', ')}
  --mutant    fuzz a mutant of the bug catalog instead of the real implementation (its
              findings record the mutant in "catches")
  --allocator fuzz your own allocator: a .js/.mjs/.ts module exporting createAllocator(capacityBytes)
              returning { alloc(sizeBytes, alignBytes): number | null, free(offsetBytes): void },
              and optionally policy = 'first-fit' | 'best-fit' | 'buddy' | 'any' (default 'any':
              bounds, alignment, no overlap, frees accepted; a named policy adds offset-for-offset
              conformance with our model). Findings replay against the module (examples/README.md)
  --seed      campaign seed, a string or number (default ${DEFAULT_SEED})
  --runs N    runs 0..N-1 of each system (default ${DEFAULT_RUNS} unless --budget is given)
  --budget    run until this much time has passed (runs in flight finish)
  --workers   runners (default: the number of cores): this thread and N-1 worker threads
  --shard k/K take only runs i with i mod K = k; the K shards together are the whole campaign
  --json      summary file, rewritten after every batch of runs (default .fuzz/last-campaign.json)
  --out       where findings are written (default regressions/), as <system>/fuzz-<check>-<op>.json
  --resume    continue the campaign a summary file describes (same seed, targets, shard and runs;
              a budgeted campaign needs a new --budget)
  --checkpoint rewrite the summary at most this often (default: after every batch of runs); a
              SIGKILL loses the runs finished since, which a resume runs again
  -h, --help  this help

Exit codes: 0 no finding, 1 findings (each written as a regression file), 2 bad arguments,
3 interrupted without findings. Ctrl-C or SIGTERM finishes the runs in flight, writes the summary
and exits (this thread takes signals between its own batches: within about 50 ms, longer while it
shrinks a finding; a second Ctrl-C then exits at once); the summary is rewritten after every batch
of runs, so even a SIGKILL loses only the runs in flight. Findings are never overwritten: each
file name carries a hash of its case.
merge combines the summaries of one campaign's shards into one (same seed, runs and targets, each
shard once); it exits 1 on findings and 3 if shards are missing or were interrupted.`;

const MERGE_HELP = `usage: npm run fuzz -- merge SUMMARY.json SUMMARY.json ... [--json FILE]

Combines the summaries of one campaign's shards (same seed, runs and targets, each shard once)
into one and prints it; exits 1 on findings and 3 if shards are missing or were interrupted.

  --json FILE  also write the merged summary to FILE
  -h, --help   this help`;

interface CampaignOptions {
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
}

/** A path as users should type it: relative inside the project, absolute outside. */
function displayPath(file: string): string {
  const relative = path.relative(PROJECT_ROOT, file);
  return relative.startsWith('..') || path.isAbsolute(relative) ? path.resolve(file) : relative;
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

type CampaignArgs = ParsedArgs<(typeof COMMANDS)['fuzz']['options']>;

async function parseCampaign(args: CampaignArgs): Promise<CampaignOptions> {
  const resumeFile = args.values.resume;
  const resumed = resumeFile === undefined ? null : readSummary(resumeFile);
  let seed = args.values.seed ?? resumed?.seed ?? String(DEFAULT_SEED);
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
  const targetSpec: TargetSpec = resumedSpec ?? {
    systems: args.values.system ?? 'all',
    ...(mutant === undefined ? {} : { mutant }),
    ...(allocator === undefined ? {} : { allocator }),
  };
  const targets = await resolveTargets(targetSpec);
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
  const jsonFile = args.values.json ?? resumeFile ?? path.join(PROJECT_ROOT, '.fuzz', 'last-campaign.json');
  const outDir = args.values.out ?? path.join(PROJECT_ROOT, 'regressions');
  ensureWritableDir(path.dirname(path.resolve(jsonFile)), 'the summary folder');
  ensureWritableDir(outDir, 'the findings folder');
  return {
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
  };
}

/** Hands out (system, run index) pairs in campaign order, skipping runs already done. */
class RunQueue {
  private ordinal = 0;
  private systemIndex = 0;
  constructor(
    private readonly options: CampaignOptions,
    private readonly summary: CampaignSummary,
  ) {}
  next(): { system: string; runIndex: number } | null {
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

class Campaign {
  readonly summary: CampaignSummary;
  private readonly started = performance.now();
  private readonly previousElapsedMs: number;
  private lastCheckpoint = 0;
  private lastProgress = 0;
  private stopping: 'budget' | 'interrupted' | null = null;
  private readonly queue: RunQueue;
  private readonly tty = process.stderr.isTTY === true;
  private runsThisSession = 0;
  private commandsThisSession = 0;
  private busyMsThisSession = 0;

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

  stop(reason: 'budget' | 'interrupted'): void {
    this.stopping ??= reason;
  }

  get stopped(): boolean {
    if (this.stopping === null && this.options.budgetMs !== null && performance.now() - this.started >= this.options.budgetMs) {
      this.stopping = 'budget';
    }
    return this.stopping !== null;
  }

  nextBatch(): WorkerTask | null {
    if (this.stopped) return null;
    const batch: { system: string; runIndex: number }[] = [];
    const msPerRun = this.runsThisSession === 0 ? TARGET_BATCH_MS / MIN_BATCH_RUNS : this.busyMsThisSession / this.runsThisSession;
    const size = Math.min(MAX_BATCH_RUNS, Math.max(MIN_BATCH_RUNS, Math.round(TARGET_BATCH_MS / Math.max(msPerRun, 1e-3))));
    while (batch.length < size) {
      const next = this.queue.next();
      if (next === null) break;
      batch.push(next);
    }
    return batch.length === 0 ? null : { batch };
  }

  /** Records a finished batch, then checkpoints: a SIGKILL loses only the batches in flight. */
  record(results: readonly RunResult[], onWorkerThread = false): void {
    if (onWorkerThread) this.summary.timing.threadRuns += results.length;
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

  private recordFinding(result: RunResult): void {
    const finding = result.finding!;
    // The name carries a hash of the case: a later campaign never overwrites another file.
    const hash = shortHash(JSON.stringify([finding.config, finding.commands]));
    const slug = `fuzz-${finding.check}-${finding.op}-${hash}`.toLowerCase().replace(/[^a-z0-9._-]+/g, '-');
    const file = regressionPath(this.options.outDir, finding.system, slug);
    const entry: FindingEntry = {
      signature: finding.signature,
      system: finding.system,
      check: finding.check,
      op: finding.op,
      runIndex: finding.runIndex,
      commands: finding.commands.length,
      file: displayPath(file),
      replay: `npm run regress -- replay ${displayPath(file)}`,
      weights: finding.weights,
      faults: [...finding.faults],
      smallConfigs: finding.smallConfigs,
    };
    const verdict = addFinding(this.summary.findings, entry);
    if (verdict.kind === 'duplicate') return;
    const catches = [...(this.options.targets.find((target) => target.system.name === finding.system)?.catches ?? [])];
    if (!existsSync(file)) {
      writeAtomically(
        file,
        serializeRegression({
          format: REGRESSION_FORMAT,
          system: finding.system,
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
    if (verdict.kind === 'replaced' && verdict.previous.file !== entry.file) rmSync(path.resolve(PROJECT_ROOT, verdict.previous.file), { force: true });
    this.clearLine();
    const replaced = verdict.kind === 'replaced' ? ', replacing a later run with the same signature' : '';
    console.log(`finding: ${finding.signature} (run ${finding.runIndex}, ${finding.originalLength} -> ${finding.commands.length} commands${replaced})`);
    console.log(`  ${finding.message.split('\n')[0]}`);
    console.log(`  written to ${entry.file}; replay: ${entry.replay}`);
    this.checkpoint(true);
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

async function runInThread(campaign: Campaign, options: CampaignOptions): Promise<void> {
  const targets = new Map(options.targets.map((target) => [target.system.name, target]));
  for (;;) {
    const task = campaign.nextBatch();
    if (task === null) return;
    campaign.record(task.batch.map(({ system, runIndex }) => timedRun(targets.get(system)!, options.seed, runIndex)));
    // Let signals and timers in between batches.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Batches queued per worker: one running, one waiting, so a worker never idles on the main thread. */
const BATCHES_IN_FLIGHT_PER_WORKER = 2;

async function runInWorkers(campaign: Campaign, options: CampaignOptions, threads: number, onFirstReady: () => void): Promise<void> {
  const init: WorkerInit = { campaignSeed: options.seed, targets: options.targetSpec };
  const boot = new URL('./fuzz-worker-boot.mjs', import.meta.url);
  await Promise.all(
    Array.from({ length: threads }, () => {
      return new Promise<void>((resolve, reject) => {
        const worker = new Worker(boot, { workerData: init });
        let finished = false;
        let inFlight = 0;
        let ready = false;
        const refill = (): void => {
          while (inFlight < BATCHES_IN_FLIGHT_PER_WORKER) {
            const task = campaign.nextBatch();
            if (task === null) break;
            worker.postMessage(task);
            inFlight++;
          }
          if (inFlight === 0 && !finished) {
            finished = true;
            void worker.terminate().then(() => resolve());
          }
        };
        worker.on('message', (reply: WorkerReply) => {
          if ('error' in reply) {
            finished = true;
            void worker.terminate();
            reject(new Error(`worker failed: ${reply.error}`));
            return;
          }
          if (!ready) {
            ready = true; // the worker's first message says it has loaded
            onFirstReady();
          } else {
            inFlight--;
          }
          // Queue the next batch before recording this one: the worker keeps running meanwhile.
          refill();
          if (reply.results.length > 0) campaign.record(reply.results, true);
        });
        worker.on('error', reject);
        worker.on('exit', (code) => {
          if (!finished) reject(new Error(`a worker exited unexpectedly (code ${code})`));
        });
      });
    }),
  );
}

function printSummary(summary: CampaignSummary): void {
  const rows = Object.entries(summary.systems).map(([name, system]) => [
    name,
    String(system.runs),
    String(system.commands),
    String(summary.timing.commandsPerSecond[name] ?? 0),
    String(summary.findings.filter((finding) => finding.system === name).length),
    system.probesNeverHit.length === 0 ? '-' : system.probesNeverHit.join(','),
  ]);
  const header = ['system', 'runs', 'commands', 'commands/s/core', 'findings', 'probes never hit'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const format = (row: string[]) => row.map((cell, column) => (column === 0 || column === 5 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ');
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

async function campaignMain(args: CampaignArgs): Promise<number> {
  const options = await parseCampaign(args);
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
      `${options.workers} worker${options.workers === 1 ? '' : 's'}${options.resumed ? ', resumed' : ''}`,
  );
  if (options.workers === 1) {
    await runInThread(campaign, options);
  } else {
    // N workers: N - 1 worker threads, and this thread runs batches too between its bookkeeping
    // (measured with 2 workers: about 10 % more than two worker threads and an idle main thread).
    // It starts once a worker has loaded (about 0.4 s), so the workers take the first batches
    // and a short campaign still exercises them.
    let firstReady = (): void => {};
    const workerLoaded = new Promise<void>((resolve) => (firstReady = resolve));
    const threads = runInWorkers(campaign, options, options.workers - 1, () => firstReady()).catch((error: unknown) => {
      campaign.stop('interrupted'); // ends this thread's loop too; the error is the outcome
      throw error;
    });
    await Promise.all([threads, workerLoaded.then(() => runInThread(campaign, options))]);
  }
  const summary = campaign.finish();
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  printSummary(summary);
  console.log(`summary: ${displayPath(options.jsonFile)}`);
  if (summary.findings.length > 0) return 1;
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
