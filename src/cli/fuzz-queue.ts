/** The order of a campaign's runs. */
import { isCompleted, runIndexOf, shardLabel, type CampaignSummary } from '../harness/campaign.js';
import type { CampaignOptions } from './fuzz-options.js';
import { present } from '../assert.js';

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
      const system = present(systems[this.systemIndex++], 'the run queue has no systems');
      const completion = this.summary.systems[system.name]?.completed[shardLabel(shard)];
      if (!isCompleted(completion, this.ordinal)) return { system: system.name, runIndex };
    }
    throw new Error('run queue: no runnable run found in a million candidates');
  }
}
