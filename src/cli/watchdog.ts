/**
 * Runs that never return. Every campaign run executes in a worker thread that publishes its
 * progress in shared memory (the runner bumps a counter at every sequence it starts, and stores
 * the step it is at). The main thread polls: a worker that is busy and has not started a new
 * sequence for longer than the time limit is stuck in one, so it is terminated (V8 stops even a
 * tight loop), and what it was doing becomes a `hang` finding. A worker that dies (out of memory,
 * a native crash) becomes an `out-of-memory` or `worker-crash` finding the same way. Nothing a
 * user's code does can stop a campaign without a finding and a summary.
 */
import { Worker } from 'node:worker_threads';
import { MONITOR_SEQUENCES, MONITOR_STEP } from '../harness/runner.js';
import type { WorkerInit, WorkerReply, WorkerTask } from './fuzz-worker.js';

export const CELL_SEQUENCES = MONITOR_SEQUENCES;
export const CELL_STEP = MONITOR_STEP;
/** 1 while the worker runs a task. */
export const CELL_BUSY = 2;
/** The index, within its batch, of the run the worker is executing. */
export const CELL_BATCH_POSITION = 3;
/** The id of the task the worker is executing. */
export const CELL_TASK = 4;
const CELL_COUNT = 5;

/** The checks of the findings a watchdog reports (no invariant has these names). */
export const HANG_CHECK = 'hang';
export const OUT_OF_MEMORY_CHECK = 'out-of-memory';
export const WORKER_CRASH_CHECK = 'worker-crash';
export const WATCHDOG_CHECKS: readonly string[] = [
  HANG_CHECK,
  OUT_OF_MEMORY_CHECK,
  WORKER_CRASH_CHECK,
];

/** Default time limit of one sequence run (`--timeout`). */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Old-generation heap limit of a worker: a run that exhausts it is a finding, not a dead campaign. */
export const DEFAULT_WORKER_HEAP_MB = 2048;
/**
 * Young-generation limit of a worker. A side-by-side step allocates its commands and observations
 * and drops them at once; with V8's default the worker scavenged so often that garbage
 * collection was the largest single item of its profile (48 MB measured no faster than the
 * default, 192 MB about 1.3x the commands/s: docs/measurements.md, issue 26).
 */
export const WORKER_YOUNG_GENERATION_MB = 192;

export interface Death {
  readonly check: string;
  readonly detail: string;
  /** The task the worker was executing, and the run's index within it (batches). */
  readonly taskId: number;
  readonly position: number;
  /** The step of the sequence it was at (-1: building the sides). */
  readonly step: number;
  /**
   * About how long the run took to reach that step (ms, as seen by the watchdog's polls, 0 when
   * not watched): the time limit of the hang's shrink candidates is derived from it.
   */
  readonly reachedMs: number;
}

export interface WatchedWorkerHandlers {
  message(reply: WorkerReply): void;
  /** The worker hung or died; it is terminated (no further messages). */
  death(death: Death): void;
}

export type WorkerInitFields = Omit<WorkerInit, 'monitor'>;

/** The worker entry: the compiled JavaScript next to this file, or (sources) a boot file that registers tsx. */
export function campaignWorkerUrl(): URL {
  return import.meta.url.endsWith('.js')
    ? new URL('./fuzz-worker.js', import.meta.url)
    : new URL('./fuzz-worker-boot.mjs', import.meta.url);
}

/** A worker thread with a watchdog; `timeoutMs` 0 disables the time limit (deaths are still reported). */
export class WatchedWorker {
  private readonly worker: Worker;
  private readonly cells: Int32Array;
  private readonly timer: NodeJS.Timeout | null;
  private lastSequences = -1;
  private lastChange = Date.now();
  private lastStep = -2;
  private lastStepChange = Date.now();
  private ended = false;

  constructor(
    url: URL,
    init: WorkerInitFields,
    private readonly timeoutMs: number,
    private readonly handlers: WatchedWorkerHandlers,
    heapMb = DEFAULT_WORKER_HEAP_MB,
  ) {
    const monitor = new SharedArrayBuffer(CELL_COUNT * Int32Array.BYTES_PER_ELEMENT);
    this.cells = new Int32Array(monitor);
    this.cells[CELL_TASK] = -1;
    this.worker = new Worker(url, {
      workerData: { ...init, monitor } satisfies WorkerInit,
      resourceLimits: {
        maxOldGenerationSizeMb: heapMb,
        maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB,
      },
    });
    this.worker.on('message', (reply: WorkerReply) => {
      if (!this.ended) handlers.message(reply);
    });
    this.worker.on('error', (error: Error & { code?: string }) => {
      const check =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY' ? OUT_OF_MEMORY_CHECK : WORKER_CRASH_CHECK;
      this.die(
        check,
        check === OUT_OF_MEMORY_CHECK
          ? `the run exhausted the worker's ${heapMb} MB heap`
          : `the worker died: ${error.message}`,
      );
    });
    this.worker.on('exit', (code) => {
      if (!this.ended) this.die(WORKER_CRASH_CHECK, `the worker exited with code ${code}`);
    });
    this.timer =
      timeoutMs > 0
        ? setInterval(() => this.poll(), Math.max(20, Math.min(250, timeoutMs / 8)))
        : null;
  }

  post(task: WorkerTask): void {
    this.worker.postMessage(task);
  }

  /** Stops the worker (and the watchdog) without reporting anything. */
  async terminate(): Promise<void> {
    this.stopWatching();
    await this.worker.terminate();
  }

  private stopWatching(): void {
    this.ended = true;
    if (this.timer !== null) clearInterval(this.timer);
  }

  private poll(): void {
    if (this.ended) return;
    const now = Date.now();
    const sequences = Atomics.load(this.cells, CELL_SEQUENCES);
    const step = Atomics.load(this.cells, CELL_STEP);
    if (step !== this.lastStep) {
      this.lastStep = step;
      this.lastStepChange = now;
    }
    if (Atomics.load(this.cells, CELL_BUSY) === 0 || sequences !== this.lastSequences) {
      this.lastSequences = sequences;
      this.lastChange = now;
      this.lastStepChange = now;
      return;
    }
    if (now - this.lastChange > this.timeoutMs) {
      this.die(
        HANG_CHECK,
        `a run did not return within ${this.timeoutMs} ms; it was stopped with its worker`,
      );
    }
  }

  private die(check: string, detail: string): void {
    if (this.ended) return;
    const death: Death = {
      check,
      detail,
      taskId: Atomics.load(this.cells, CELL_TASK),
      position: Atomics.load(this.cells, CELL_BATCH_POSITION),
      step: Atomics.load(this.cells, CELL_STEP),
      reachedMs: Math.max(0, this.lastStepChange - this.lastChange),
    };
    this.stopWatching();
    void this.worker.terminate();
    this.handlers.death(death);
  }
}
