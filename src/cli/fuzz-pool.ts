/** The campaign's worker pool: watched worker threads fed batches of runs. */
import type { WorkerReply } from './fuzz-worker.js';
import type { BatchTask, Campaign } from './fuzz-campaign.js';
import type { CampaignOptions } from './fuzz-options.js';
import { campaignWorkerUrl, WatchedWorker, type Death, type WorkerInitFields } from './watchdog.js';

/** Batches queued per worker: one running, one waiting, so a worker never idles on the main thread. */
const BATCHES_IN_FLIGHT_PER_WORKER = 2;

/**
 * Runs the campaign on `count` watched worker threads. A worker that hangs or dies is replaced
 * by a fresh one; the run it was stuck in becomes a finding and the other runs it held run again.
 * When the campaign cuts (past its budget's margin, a signal), every worker is terminated at
 * once: the runs it held are not recorded (a resume runs them again).
 */
export async function runInWorkers(
  campaign: Campaign,
  options: CampaignOptions,
  count: number,
): Promise<void> {
  const url = campaignWorkerUrl();
  const init: WorkerInitFields = {
    campaignSeed: options.seed,
    targets: options.targetSpec,
    configFile: options.project.configFile,
    cwd: options.project.root,
  };
  const slot = (): Promise<void> => {
    let removeCutter = (): void => {};
    return new Promise<void>((resolve, reject) => {
      const inFlight: BatchTask[] = [];
      let finished = false;
      let current: WatchedWorker | null = null;
      removeCutter = campaign.onCut(() => {
        if (finished) return;
        finished = true;
        inFlight.splice(0, inFlight.length);
        void (current?.terminate() ?? Promise.resolve()).then(() => resolve());
      });
      const start = (): void => {
        const worker: WatchedWorker = new WatchedWorker(url, init, options.timeoutMs, {
          message: (reply: WorkerReply) => {
            if (reply.kind === 'found') return campaign.shrinkFound(reply);
            if (reply.kind === 'shrinking') return campaign.shrinkProgress(reply);
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
            if (
              current !== undefined &&
              death.position >= 0 &&
              death.position < current.batch.length
            ) {
              campaign.recordDeath(current.batch[death.position]!, death, { url, init });
              campaign.queue.giveBack(
                lost.flatMap((task) =>
                  task.batch.filter((_, index) => task !== current || index !== death.position),
                ),
              );
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
        current = worker;
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
    }).finally(() => removeCutter());
  };
  await Promise.all(Array.from({ length: count }, slot));
  // Shrinks of hung runs record their findings when they end.
  await campaign.deaths;
}
