/** Merging the shard summaries of one campaign into one summary. */
import { jsonEqual } from './json.js';
import { SUMMARY_FORMAT, type CampaignSummary } from './campaign-schema.js';
import { addFinding, computeRates, emptyTiming } from './campaign-summary.js';

/**
 * Merges the shard summaries of one campaign into one. They must share seed, run count and
 * targets and come from one shard count K, each shard at most once; the merge is 'incomplete'
 * unless all K shards are there.
 */
export function mergeSummaries(summaries: readonly CampaignSummary[]): CampaignSummary {
  const [first] = summaries;
  if (first === undefined) throw new Error('nothing to merge');
  const seen = new Set<string>();
  let shardCount: number | undefined;
  for (const summary of summaries) {
    if (summary.seed !== first.seed)
      throw new Error(
        `cannot merge campaigns with different seeds (${first.seed} and ${summary.seed})`,
      );
    if (summary.runs !== first.runs)
      throw new Error(
        `cannot merge campaigns with different run counts (${first.runs} and ${summary.runs})`,
      );
    if (!jsonEqual(summary.targets, first.targets))
      throw new Error(
        `cannot merge campaigns with different targets (${JSON.stringify(first.targets)} and ${JSON.stringify(summary.targets)})`,
      );
    for (const label of summary.shards) {
      const count = Number(label.split('/')[1]);
      if (shardCount !== undefined && count !== shardCount)
        throw new Error(`cannot merge shards of ${shardCount} with shards of ${count}`);
      shardCount = count;
      if (seen.has(label)) throw new Error(`shard ${label} appears in more than one summary`);
      seen.add(label);
    }
  }
  const statuses = summaries.map((summary) => summary.stopped);
  const merged: CampaignSummary = {
    format: SUMMARY_FORMAT,
    seed: first.seed,
    runs: first.runs,
    budgetMs: first.budgetMs,
    targets: first.targets,
    shards: [...seen].sort((a, b) => Number(a.split('/')[0]) - Number(b.split('/')[0])),
    systems: {},
    findings: [],
    timing: emptyTiming(),
    stopped:
      seen.size < (shardCount ?? 1)
        ? 'incomplete'
        : statuses.includes('interrupted') || statuses.includes('running')
          ? 'interrupted'
          : statuses.includes('first-finding')
            ? 'first-finding'
            : statuses.every((status) => status === 'complete')
              ? 'complete'
              : 'budget',
  };
  for (const summary of summaries) {
    merged.timing.elapsedMs = Math.max(merged.timing.elapsedMs, summary.timing.elapsedMs);
    merged.timing.workers += summary.timing.workers;
    merged.timing.threadRuns += summary.timing.threadRuns;
    for (const [name, busyMs] of Object.entries(summary.timing.busyMs ?? {}))
      merged.timing.busyMs[name] = (merged.timing.busyMs[name] ?? 0) + busyMs;
    for (const [name, system] of Object.entries(summary.systems)) {
      const target = merged.systems[name];
      if (target === undefined) {
        merged.systems[name] = structuredClone(system);
        continue;
      }
      target.runs += system.runs;
      target.commands += system.commands;
      for (const [probe, count] of Object.entries(system.probes))
        target.probes[probe] = (target.probes[probe] ?? 0) + count;
      target.probesNeverHit = Object.keys(target.probes)
        .filter((probe) => target.probes[probe] === 0)
        .sort();
      target.swarm.defaultPlanRuns += system.swarm.defaultPlanRuns;
      target.swarm.smallConfigRuns += system.swarm.smallConfigRuns;
      for (const [op, count] of Object.entries(system.swarm.opEnabledRuns))
        target.swarm.opEnabledRuns[op] = (target.swarm.opEnabledRuns[op] ?? 0) + count;
      target.faults.faultFreeRuns += system.faults.faultFreeRuns;
      for (const [site, count] of Object.entries(system.faults.siteRuns))
        target.faults.siteRuns[site] = (target.faults.siteRuns[site] ?? 0) + count;
      for (const [label, completion] of Object.entries(system.completed))
        target.completed[label] = structuredClone(completion);
    }
    for (const finding of summary.findings) addFinding(merged.findings, finding);
  }
  computeRates(merged);
  return merged;
}
