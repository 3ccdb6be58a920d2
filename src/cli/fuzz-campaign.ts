/**
 * The campaign on the main thread: hands out runs in campaign order, records their results and
 * findings, keeps the budget, checkpoints the summary and prints progress.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  addFinding,
  computeRates,
  emptySummary,
  findingSignature,
  isCompleted,
  planRun,
  recordRun,
  runCase,
  runIndexOf,
  shardLabel,
  type CampaignSummary,
  type FindingEntry,
  type RunFinding,
  type RunResult,
} from '../harness/campaign.js';
import { originDate, regressionPath, serializeRegression, shortHash, REGRESSION_FORMAT } from '../harness/regression.js';
import { fileSystemName } from './fuzz-targets.js';
import { rootRelative, writeAtomically, writeSummary } from './fuzz-files.js';
import type { CampaignOptions } from './fuzz-options.js';
import { findingReport } from './fuzz-report.js';
import type { WorkerTask } from './fuzz-worker.js';
import { CaseEvaluator, shrinkDeath } from './hang-shrink.js';
import type { Death, WorkerInitFields } from './watchdog.js';

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

/** Hands out (system, run index) pairs in campaign order, skipping runs already done. */
export class RunQueue {
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

export type BatchTask = Extract<WorkerTask, { kind: 'batch' }>;

export class Campaign {
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
