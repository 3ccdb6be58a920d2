/** A campaign worker thread: executes batches of runs and posts their results back. */
import { parentPort, workerData } from 'node:worker_threads';
import type { RunResult } from '../harness/campaign';
import { resolveTargets, type TargetSpec } from './fuzz-targets';
import { timedRun } from './fuzz-run';

export interface WorkerInit {
  readonly campaignSeed: string;
  readonly targets: TargetSpec;
}
export interface WorkerTask {
  readonly batch: readonly { readonly system: string; readonly runIndex: number }[];
}
export type WorkerReply = { readonly results: RunResult[] } | { readonly error: string };

const init = workerData as WorkerInit;
const targets = new Map((await resolveTargets(init.targets)).map((target) => [target.system.name, target]));

parentPort!.on('message', (task: WorkerTask) => {
  try {
    const results = task.batch.map(({ system, runIndex }) => {
      return timedRun(targets.get(system)!, init.campaignSeed, runIndex);
    });
    parentPort!.postMessage({ results } satisfies WorkerReply);
  } catch (error) {
    parentPort!.postMessage({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) } satisfies WorkerReply);
  }
});
parentPort!.postMessage({ results: [] } satisfies WorkerReply);
