/**
 * Building a campaign summary: empty summaries, shard labels and run indices, the done runs of a
 * shard, each run's result folded in, one finding kept per signature, and the rates.
 */
import type { AnySystem } from './system.js';
import type { RunResult } from './campaign-run.js';
import {
  SUMMARY_FORMAT,
  type CampaignSummary,
  type CampaignTiming,
  type Completion,
  type FindingEntry,
  type SystemSummary,
  type TargetSpec,
} from './campaign-schema.js';

export interface Shard {
  readonly index: number;
  readonly count: number;
}

export function shardLabel(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** Run index of the shard's j-th run. */
export function runIndexOf(shard: Shard, ordinal: number): number {
  return shard.index + ordinal * shard.count;
}

export function emptyTiming(): CampaignTiming {
  return {
    elapsedMs: 0,
    workers: 0,
    busyMs: {},
    commandsPerSecond: {},
    totalCommandsPerSecond: 0,
    threadRuns: 0,
  };
}

/** Derives the rates from the counts, busy times and elapsed time. */
export function computeRates(summary: CampaignSummary): void {
  let total = 0;
  for (const [name, system] of Object.entries(summary.systems)) {
    const busySeconds = (summary.timing.busyMs[name] ?? 0) / 1000;
    summary.timing.commandsPerSecond[name] =
      busySeconds > 0 ? Math.round(system.commands / busySeconds) : 0;
    total += system.commands;
  }
  const elapsedSeconds = summary.timing.elapsedMs / 1000;
  summary.timing.totalCommandsPerSecond =
    elapsedSeconds > 0 ? Math.round(total / elapsedSeconds) : 0;
}

export function emptySystemSummary(system: AnySystem, shard: Shard): SystemSummary {
  return {
    runs: 0,
    commands: 0,
    completed: { [shardLabel(shard)]: { below: 0, above: [] } },
    probes: Object.fromEntries(system.probes.map((probe) => [probe, 0])),
    probesNeverHit: [...system.probes],
    swarm: {
      defaultPlanRuns: 0,
      smallConfigRuns: 0,
      opEnabledRuns: Object.fromEntries(system.opNames.map((op) => [op, 0])),
    },
    faults: {
      faultFreeRuns: 0,
      siteRuns: Object.fromEntries(Object.keys(system.faultOps ?? {}).map((site) => [site, 0])),
    },
  };
}

export function emptySummary(
  seed: string,
  shard: Shard,
  systems: readonly AnySystem[],
  runs: number | null = null,
  targets: TargetSpec = { systems: 'all' },
  budgetMs: number | null = null,
): CampaignSummary {
  return {
    format: SUMMARY_FORMAT,
    seed,
    runs,
    budgetMs,
    targets,
    shards: [shardLabel(shard)],
    systems: Object.fromEntries(
      systems.map((system) => [system.name, emptySystemSummary(system, shard)]),
    ),
    findings: [],
    timing: emptyTiming(),
    stopped: 'running',
  };
}

/** Marks the shard's ordinal done, folding `above` into `below` as the prefix fills. */
export function markCompleted(completion: Completion, ordinal: number): void {
  if (ordinal < completion.below || completion.above.includes(ordinal)) return;
  if (ordinal === completion.below) {
    completion.below++;
    while (completion.above.length > 0 && completion.above[0] === completion.below) {
      completion.above.shift();
      completion.below++;
    }
  } else {
    const at = completion.above.findIndex((value) => value > ordinal);
    completion.above.splice(at < 0 ? completion.above.length : at, 0, ordinal);
  }
}

export function isCompleted(completion: Completion | undefined, ordinal: number): boolean {
  return (
    completion !== undefined && (ordinal < completion.below || completion.above.includes(ordinal))
  );
}

/** Folds one run's result into the summary (findings are added by the caller, with files). */
export function recordRun(summary: SystemSummary, result: RunResult, shard: Shard): void {
  summary.runs++;
  summary.commands += result.commands;
  for (const [probe, count] of Object.entries(result.probes))
    summary.probes[probe] = (summary.probes[probe] ?? 0) + count;
  summary.probesNeverHit = Object.keys(summary.probes)
    .filter((probe) => summary.probes[probe] === 0)
    .sort();
  if (result.weights === null) summary.swarm.defaultPlanRuns++;
  if (result.smallConfigs) summary.swarm.smallConfigRuns++;
  for (const [op, runs] of Object.entries(summary.swarm.opEnabledRuns)) {
    if (result.weights === null || (result.weights[op] ?? 1) > 0)
      summary.swarm.opEnabledRuns[op] = runs + 1;
  }
  if (result.faults.length === 0) summary.faults.faultFreeRuns++;
  for (const site of result.faults)
    summary.faults.siteRuns[site] = (summary.faults.siteRuns[site] ?? 0) + 1;
  const label = shardLabel(shard);
  const completed = summary.completed[label] ?? { below: 0, above: [] };
  summary.completed[label] = completed;
  markCompleted(completed, (result.runIndex - shard.index) / shard.count);
}

export type FindingVerdict =
  | { readonly kind: 'new' | 'duplicate' }
  | { readonly kind: 'replaced'; readonly previous: FindingEntry };

/** Keeps one finding per signature: the one with the lowest run index, so order does not matter. */
export function addFinding(findings: FindingEntry[], entry: FindingEntry): FindingVerdict {
  const index = findings.findIndex((existing) => existing.signature === entry.signature);
  if (index < 0) {
    findings.push(entry);
    findings.sort(compareFindings);
    return { kind: 'new' };
  }
  const previous = findings[index]!;
  if (previous.runIndex <= entry.runIndex) return { kind: 'duplicate' };
  findings[index] = entry;
  return { kind: 'replaced', previous };
}

function compareFindings(a: FindingEntry, b: FindingEntry): number {
  return a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0;
}
