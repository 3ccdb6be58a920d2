/**
 * A campaign worker thread: executes batches of runs (and single cases, when the main thread
 * shrinks a hang) and posts their results back. It publishes its progress in shared memory
 * (src/cli/watchdog.ts), so the main thread can tell a run that never returns and terminate it.
 */
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import type { RunHooks, RunResult } from '../harness/campaign.js';
import type { FailingCase } from './fuzz-findings.js';
import type { JsonObject } from '../harness/json.js';
import { runSequence, setRunMonitor, type Failure } from '../harness/runner.js';
import type { Command } from '../harness/system.js';
import { loadProject } from '../project.js';
import { resolveTargets, type TargetSpec } from './fuzz-targets.js';
import { timedRun } from './fuzz-run.js';
import { preflightDirs, runPreflight, type PreflightResult } from './preflight.js';
import type { Project } from '../project.js';
import { CELL_BATCH_POSITION, CELL_BUSY, CELL_TASK } from './watchdog.js';
import { assert, present } from '../assert.js';

export interface WorkerInit {
  readonly campaignSeed: string;
  readonly targets: TargetSpec;
  /** The project's config file (null: the built-in systems, root = cwd). */
  readonly configFile: string | null;
  readonly cwd: string;
  /** Int32 cells the watchdog reads (see watchdog.ts). */
  readonly monitor: SharedArrayBuffer;
}
export type WorkerTask =
  | {
      readonly kind: 'batch';
      readonly id: number;
      readonly batch: readonly { readonly system: string; readonly runIndex: number }[];
    }
  | {
      readonly kind: 'case';
      readonly id: number;
      readonly system: string;
      readonly config: JsonObject;
      readonly commands: readonly Command[];
    }
  | {
      readonly kind: 'preflight';
      readonly id: number;
      readonly systems: readonly string[];
      readonly allocators: readonly string[];
    };
export type WorkerReply =
  | { readonly kind: 'ready' }
  /** The preflight is about to replay this file (so a hang can be blamed on it). */
  | { readonly kind: 'preflight-file'; readonly file: string }
  | { readonly kind: 'preflight'; readonly id: number; readonly result: PreflightResult }
  | { readonly kind: 'batch'; readonly id: number; readonly results: RunResult[] }
  /** A run of a batch failed for the first time ('found'), and its shrink's best case so far ('shrinking', throttled). */
  | ({ readonly kind: 'found' | 'shrinking'; readonly id: number } & FailingCase)
  | { readonly kind: 'case'; readonly id: number; readonly failure: Failure | null }
  | { readonly kind: 'error'; readonly error: string };

assert(parentPort !== null, 'fuzz-worker.ts runs only as a campaign worker thread');
const port = parentPort;
const init = workerData as WorkerInit;
const cells = new Int32Array(init.monitor);

function errorText(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

let targets: Map<string, Awaited<ReturnType<typeof resolveTargets>>[number]>;
let project: Project;
try {
  project = await loadProject({
    cwd: init.cwd,
    ...(init.configFile === null ? {} : { configFile: init.configFile }),
  });
  targets = new Map(
    (await resolveTargets(init.targets, project)).map((target) => [target.system.name, target]),
  );
} catch (error) {
  port.postMessage({ kind: 'error', error: errorText(error) } satisfies WorkerReply);
  await new Promise(() => {}); // the main thread terminates this worker
  throw error; // never reached; tells the compiler that project and targets are set below
}
setRunMonitor(cells);

/**
 * Tasks are queued by the message handler and run by a loop that yields between batches, as the
 * main thread's runner does. Running a batch inside the 'message' callback itself measured about
 * 10 % slower per command (306k vs 348k commands/s for a lone worker on all systems), so the
 * callback only queues.
 */
const queue: WorkerTask[] = [];
let wake: (() => void) | null = null;
port.on('message', (task: WorkerTask) => {
  queue.push(task);
  const resume = wake;
  wake = null;
  resume?.();
});

/** A shrink's best case goes to the main thread at most this often (it writes it to disk). */
const SHRINK_REPORT_MS = 500;

/**
 * Tells the main thread, while a run's finding is shrunk inside this batch, what the run found
 * and its best case so far: the main thread writes it at once, shows progress, and keeps it if
 * it stops this worker (budget, signal). Messages leave at once, though the batch goes on.
 */
function shrinkReporter(id: number, system: string, runIndex: number): RunHooks {
  let last = 0;
  return {
    found: (config, commands, failure) => {
      last = performance.now();
      port.postMessage({
        kind: 'found',
        id,
        system,
        runIndex,
        config,
        commands,
        check: failure.check,
        op: failure.command.op,
        message: failure.message,
      } satisfies WorkerReply);
    },
    shrunk: (config, commands, failure) => {
      const now = performance.now();
      if (now - last < SHRINK_REPORT_MS) return;
      last = now;
      port.postMessage({
        kind: 'shrinking',
        id,
        system,
        runIndex,
        config,
        commands,
        check: failure.check,
        op: failure.command.op,
        message: failure.message,
      } satisfies WorkerReply);
    },
  };
}

function run(task: WorkerTask): WorkerReply {
  Atomics.store(cells, CELL_TASK, task.id);
  Atomics.store(cells, CELL_BUSY, 1);
  try {
    if (task.kind === 'preflight')
      throw new Error('the preflight runs on its own (see preflight())');
    if (task.kind === 'case') {
      const target = present(
        targets.get(task.system),
        'a case names a system the worker has not loaded',
        task.system,
      );
      const outcome = runSequence(
        target.system,
        task.config,
        task.commands,
        target.implFactory === undefined ? {} : { implFactory: target.implFactory },
      );
      return { kind: 'case', id: task.id, failure: outcome.ok ? null : outcome.failure };
    }
    const results: RunResult[] = [];
    task.batch.forEach(({ system, runIndex }, position) => {
      Atomics.store(cells, CELL_BATCH_POSITION, position);
      results.push(
        timedRun(
          present(targets.get(system), 'a batch names a system the worker has not loaded', system),
          init.campaignSeed,
          runIndex,
          shrinkReporter(task.id, system, runIndex),
        ),
      );
    });
    return { kind: 'batch', id: task.id, results };
  } catch (error) {
    return { kind: 'error', error: errorText(error) };
  } finally {
    Atomics.store(cells, CELL_BUSY, 0);
  }
}

/** The campaign's preflight, here so that the watchdog's time limit holds for every replay. */
async function preflight(task: Extract<WorkerTask, { kind: 'preflight' }>): Promise<WorkerReply> {
  Atomics.store(cells, CELL_TASK, task.id);
  // Only the replays count as busy: loading a file (or a user's module) is not a run.
  const watched = <T>(file: string, replay: () => T): T => {
    port.postMessage({ kind: 'preflight-file', file } satisfies WorkerReply);
    Atomics.store(cells, CELL_BUSY, 1);
    try {
      return replay();
    } finally {
      Atomics.store(cells, CELL_BUSY, 0);
    }
  };
  try {
    const result = await runPreflight(
      project,
      new Set(task.systems),
      preflightDirs(project),
      new Set(task.allocators),
      watched,
    );
    return { kind: 'preflight', id: task.id, result };
  } catch (error) {
    return { kind: 'error', error: errorText(error) };
  }
}

port.postMessage({ kind: 'ready' } satisfies WorkerReply);
for (;;) {
  if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
  const task = queue.shift();
  if (task === undefined) continue; // woken with nothing queued
  port.postMessage(task.kind === 'preflight' ? await preflight(task) : run(task));
  await new Promise((resolve) => setImmediate(resolve));
}
