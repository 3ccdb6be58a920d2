/**
 * The campaign on the main thread: hands out runs in campaign order, records their results and
 * findings, keeps the budget, checkpoints the summary and prints progress.
 *
 * The budget: no run starts after it; runs in flight finish, until budget + margin
 * (budgetMarginMs): then every worker still busy (a long run, a shrink) is stopped, and a run
 * being shrunk becomes a finding with its best case so far. A signal does the same at once.
 */
import { performance } from 'node:perf_hooks';
import {
  computeRates,
  emptySummary,
  findingSignature,
  planRun,
  recordRun,
  runCase,
  shardLabel,
  type CampaignSummary,
  type RunFinding,
  type RunResult,
} from '../harness/campaign.js';
import { writeSummary } from './fuzz-files.js';
import { FindingFiles, type FailingCase, type ShrinkState } from './fuzz-findings.js';
import type { CampaignOptions } from './fuzz-options.js';
import { RunQueue } from './fuzz-queue.js';
import type { WorkerTask } from './fuzz-worker.js';
import { CaseEvaluator, hangShrinkLimitMs, shrinkDeath } from './hang-shrink.js';
import { HANG_CHECK, type Death, type WorkerInitFields } from './watchdog.js';
import { present } from '../assert.js';

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
/** A shrink's progress line without a terminal: at most this often. */
const PLAIN_SHRINK_PROGRESS_MS = 5_000;
/** A shrink shorter than this shows no progress line (most take milliseconds). */
const QUIET_SHRINK_MS = 1_000;
/** How often the main thread checks the budget and prints progress while no batch returns. */
const TIMER_MS = 100;

/**
 * How long after its budget a campaign stops what is still running: 10 % of the budget, at most
 * 30 s. A campaign with a budget B ends within B + budgetMarginMs(B), plus the main thread's
 * check interval (TIMER_MS) and the time it takes to stop its workers, write its files and
 * print its reports (well under a second).
 */
export function budgetMarginMs(budgetMs: number): number {
  return Math.min(0.1 * budgetMs, 30_000);
}

export type StopReason = 'budget' | 'interrupted' | 'first-finding';

export type BatchTask = Extract<WorkerTask, { kind: 'batch' }>;

export class Campaign {
  readonly summary: CampaignSummary;
  readonly files: FindingFiles;
  private readonly started = performance.now();
  private readonly previousElapsedMs: number;
  private lastCheckpoint = 0;
  private lastProgress = 0;
  private lastShrinkLine = -Infinity;
  private stopping: StopReason | null = null;
  /** Why what was still running was stopped (null: nothing was). */
  private cutBy: string | null = null;
  private readonly cutters = new Set<() => void>();
  /** Runs whose hang (or worker death) the main thread shrinks (see recordDeath). */
  private readonly deathShrinks = new Set<string>();
  private evaluator: CaseEvaluator | null = null;
  private timer: NodeJS.Timeout | null = null;
  readonly queue: RunQueue;
  private readonly tty = process.stderr.isTTY === true;
  private runsThisSession = 0;
  private commandsThisSession = 0;
  private busyMsThisSession = 0;
  private nextTaskId = 1;
  /** Shrinks of runs that hung or died, one at a time (each may cost a time limit per step); the campaign waits for them. */
  deaths: Promise<void> = Promise.resolve();

  constructor(private readonly options: CampaignOptions) {
    this.summary = options.resumed
      ? structuredClone(options.resumed)
      : emptySummary(
          options.seed,
          options.shard,
          options.systems,
          options.runs,
          { ...options.targetSpec },
          options.budgetMs,
        );
    for (const system of options.systems) {
      this.summary.systems[system.name] ??= emptySummary(options.seed, options.shard, [system])
        .systems[system.name]!;
    }
    this.summary.stopped = 'running';
    if (options.budgetMs !== null) this.summary.budgetMs = options.budgetMs;
    this.summary.timing.workers = options.workers;
    this.previousElapsedMs = options.resumed?.timing.elapsedMs ?? 0;
    this.queue = new RunQueue(options, this.summary);
    this.files = new FindingFiles(options, this.summary);
    // Progress and the budget hold while no batch returns (a long run, a shrink in a worker).
    this.timer = setInterval(() => {
      const deadline =
        this.options.budgetMs === null
          ? null
          : this.options.budgetMs + budgetMarginMs(this.options.budgetMs);
      if (deadline !== null && performance.now() - this.started >= deadline) this.cut('budget');
      for (const state of this.files.shrinking()) this.shrinkLine(state);
      this.tick(false);
    }, TIMER_MS);
  }

  stop(reason: StopReason): void {
    this.stopping ??= reason;
  }

  get stopped(): boolean {
    if (
      this.stopping === null &&
      this.options.budgetMs !== null &&
      performance.now() - this.started >= this.options.budgetMs
    ) {
      this.stopping = 'budget';
    }
    return this.stopping !== null;
  }

  /** Registers what stops a worker pool slot at once (see cut); returns its removal. */
  onCut(cutter: () => void): () => void {
    this.cutters.add(cutter);
    return () => {
      this.cutters.delete(cutter);
    };
  }

  /**
   * Stops everything still running (past the budget's margin, or at a signal): the workers are
   * terminated (their unfinished runs are not recorded: a resume runs them), and every run being
   * shrunk becomes a finding with its best case so far.
   */
  cut(reason: 'budget' | 'interrupted'): void {
    if (this.cutBy !== null) return;
    const why = reason === 'budget' ? 'the budget' : 'a signal';
    this.cutBy = why;
    this.stop(reason);
    for (const cutter of [...this.cutters]) cutter();
    void this.evaluator?.close();
    const now = performance.now();
    const cutShort = this.files
      .shrinking()
      .filter((state) => !this.deathShrinks.has(`${state.system}#${state.runIndex}`))
      .map((state) => this.files.cutShort(state, why, now - state.startedMs));
    if (cutShort.length > 0) this.record(cutShort);
  }

  nextBatch(): BatchTask | null {
    if (this.stopped) return null;
    const batch: { system: string; runIndex: number }[] = [];
    const msPerRun =
      this.runsThisSession === 0
        ? TARGET_BATCH_MS / MIN_BATCH_RUNS
        : this.busyMsThisSession / this.runsThisSession;
    const size = Math.min(
      MAX_BATCH_RUNS,
      Math.max(MIN_BATCH_RUNS, Math.round(TARGET_BATCH_MS / Math.max(msPerRun, 1e-3))),
    );
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
    let found = false;
    for (const result of results) {
      const system = present(
        this.summary.systems[result.system],
        'a run result names a system the campaign does not run',
        result.system,
      );
      recordRun(system, result, this.options.shard);
      this.summary.timing.busyMs[result.system] =
        (this.summary.timing.busyMs[result.system] ?? 0) + (result.busyMs ?? 0);
      this.runsThisSession++;
      this.commandsThisSession += result.commands;
      this.busyMsThisSession += result.busyMs ?? 0;
      if (result.finding !== null) {
        this.files.record(result.finding);
        found = true;
        if (this.options.stopOnFirst) this.stop('first-finding');
      }
    }
    this.printFinalReports(false);
    this.tick(found);
  }

  /** A worker's run failed for the first time: its unshrunk case is written, and its shrink shown. */
  shrinkFound(failing: FailingCase): void {
    this.files.found(failing, performance.now());
  }

  /** A worker's shrink found a smaller failing case. */
  shrinkProgress(failing: FailingCase): void {
    const state = this.files.progress(failing);
    if (state !== null) this.shrinkLine(state);
  }

  /** What a shrink that has taken a while does: its run, its size now and the time spent (stderr, throttled). */
  private shrinkLine(state: ShrinkState): void {
    const now = performance.now();
    if (
      now - state.startedMs < QUIET_SHRINK_MS ||
      now - this.lastShrinkLine < (this.tty ? TTY_PROGRESS_MS : PLAIN_SHRINK_PROGRESS_MS)
    )
      return;
    this.lastShrinkLine = now;
    const size = `${state.originalLength} -> ${state.commands.length} commands`;
    const line = `shrinking ${state.system} run ${state.runIndex} (${state.check} on ${state.op}): ${size}, ${((now - state.startedMs) / 1000).toFixed(1)} s`;
    if (this.tty) process.stderr.write(`\r\x1b[K${line}`);
    else console.error(line);
  }

  /** Prints the reports of findings whose file is final (all at the end of the campaign). */
  private printFinalReports(all: boolean): void {
    const label = shardLabel(this.options.shard);
    this.files.flush(
      (system) => this.summary.systems[system]?.completed[label]?.below ?? 0,
      all,
      (text) => {
        this.clearLine();
        console.log(text);
      },
    );
  }

  /**
   * A run that hung or killed its worker: rebuilt from its seed, written unshrunk, shrunk in
   * fresh workers (a hang's candidates under a limit derived from the run, see
   * hangShrinkLimitMs), then recorded as a finding like any other (asynchronously: the
   * campaign goes on meanwhile).
   */
  recordDeath(
    run: { system: string; runIndex: number },
    death: Death,
    worker: { url: URL; init: WorkerInitFields },
  ): void {
    const target = present(
      this.options.targets.find((candidate) => candidate.system.name === run.system),
      'a run names a system the campaign does not run',
      run.system,
    );
    const plan = planRun(this.options.seed, target.system, run.runIndex);
    const shrinking = this.files
      .shrinking()
      .find((state) => state.system === run.system && state.runIndex === run.runIndex);
    if (shrinking !== undefined) {
      // It failed, then died while shrinking: the best case so far is the finding.
      this.record([
        this.files.cutShort(
          shrinking,
          `a ${death.check} of a shrink candidate`,
          performance.now() - shrinking.startedMs,
        ),
      ]);
      return;
    }
    const { config, commands } = runCase(target.system, plan);
    const stuckOp = death.step < 0 ? '(setup)' : (commands[death.step]?.op ?? '(setup)');
    const known = this.summary.findings.find(
      (entry) => entry.signature === findingSignature(run.system, death.check, stuckOp),
    );
    this.clearLine();
    if (known !== undefined && known.runIndex < run.runIndex) {
      // The same death (check and op) from an earlier run is already shrunk: count the run, skip the shrink.
      console.log(
        `${death.check}: ${run.system} run ${run.runIndex} at step ${death.step} (op ${stuckOp}): the same as ${known.file}`,
      );
      this.record([
        {
          system: run.system,
          runIndex: run.runIndex,
          commands: Math.max(death.step, 0) + 1,
          probes: {},
          weights: plan.weights,
          faults: plan.faults,
          smallConfigs: plan.smallConfigs,
          finding: null,
          busyMs: this.options.timeoutMs,
        },
      ]);
      return;
    }
    const limitMs =
      death.check === HANG_CHECK
        ? hangShrinkLimitMs(this.options.timeoutMs, death.reachedMs)
        : this.options.timeoutMs;
    const limitNote = death.check === HANG_CHECK ? ` (candidates stopped after ${limitMs} ms)` : '';
    console.log(
      `${death.check}: ${run.system} run ${run.runIndex} at step ${death.step} (op ${stuckOp}): ${death.detail}; shrinking it in a fresh worker${limitNote}`,
    );
    const runKey = `${run.system}#${run.runIndex}`;
    this.deathShrinks.add(runKey);
    const state = this.files.found(
      {
        system: run.system,
        runIndex: run.runIndex,
        config,
        commands,
        check: death.check,
        op: stuckOp,
        message: death.detail,
      },
      performance.now(),
    );
    this.deaths = this.deaths.then(async () => {
      const evaluator = new CaseEvaluator(worker.url, worker.init, limitMs);
      this.evaluator = evaluator;
      let shrunk: Awaited<ReturnType<typeof shrinkDeath>>;
      try {
        shrunk = await shrinkDeath(
          evaluator,
          run.system,
          config,
          commands,
          death.check,
          death.step,
          {
            stop: () => this.cutBy !== null,
            progress: (candidate, step) => {
              const op = candidate[step]?.op ?? '(setup)';
              const updated = this.files.progress({
                system: run.system,
                runIndex: run.runIndex,
                config,
                commands: candidate,
                check: death.check,
                op,
                message: death.detail,
              });
              if (updated !== null) this.shrinkLine(updated);
            },
          },
        );
      } finally {
        this.evaluator = null;
        await evaluator.close();
      }
      this.deathShrinks.delete(runKey);
      const failing = shrunk.commands[shrunk.step] ?? shrunk.commands[shrunk.commands.length - 1];
      const op = shrunk.step < 0 || failing === undefined ? '(setup)' : failing.op;
      const message =
        `${death.detail} (at step ${shrunk.step}, op ${op}` +
        (shrunk.reproduced || shrunk.cut
          ? ')'
          : '; it did not reproduce in a fresh worker, so the case is reported unshrunk)');
      const note = shrunk.cut
        ? this.files.cutNote(
            state,
            this.cutBy ?? 'the campaign',
            performance.now() - state.startedMs,
            shrunk.commands.length,
          )
        : undefined;
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
        firstCheck: death.check,
        firstOp: stuckOp,
        ...(note === undefined ? {} : { note }),
      };
      this.record([
        {
          system: run.system,
          runIndex: run.runIndex,
          commands: Math.max(death.step, 0) + 1,
          probes: {},
          weights: plan.weights,
          faults: plan.faults,
          smallConfigs: plan.smallConfigs,
          finding,
          busyMs: this.options.timeoutMs,
        },
      ]);
    });
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
    if (this.options.budgetMs !== null)
      left = `, ${Math.max(0, Math.ceil((this.options.budgetMs - (now - this.started)) / 1000))}s left`;
    else if (this.options.runs !== null) {
      const total =
        this.options.systems.length *
        Math.ceil((this.options.runs - this.options.shard.index) / this.options.shard.count);
      const done = Object.values(this.summary.systems).reduce(
        (sum, system) => sum + system.runs,
        0,
      );
      left = `, ${done}/${total} runs`;
    }
    const line = `fuzz: ${this.runsThisSession} runs, ${rate} commands/s, ${this.summary.findings.length} findings${left}`;
    if (this.tty) process.stderr.write(`\r\x1b[K${line}`);
    else console.error(line);
  }

  finish(): CampaignSummary {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.summary.stopped = this.stopping ?? 'complete';
    this.clearLine();
    this.printFinalReports(true);
    this.checkpoint(true);
    return this.summary;
  }
}
