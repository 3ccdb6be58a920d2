/**
 * Campaign logic, free of clocks, threads and files: what run i of a campaign on a system is
 * (its fast-check seed, swarm weights and fault sites, all derived from the campaign seed with
 * seedrandom), how to execute it, and how per-run results fold into a summary that shards can
 * merge. The CLI (src/cli/fuzz.ts) adds workers, time budgets, progress and files.
 */
import { checkSystem } from './property';
import { RunContext, runSequence, type ImplFactory } from './runner';
import { jsonEqual, type Json, type JsonObject } from './json';
import type { Command, GenerationPlan, SystemDef } from './system';
import { deriveRunSeed, runRandom } from './seed';

/** Share of runs that use the system's default weights instead of a swarm draw. */
const DEFAULT_PLAN_SHARE = 0.25;
/** Share of runs with every fault site off. */
const FAULT_FREE_SHARE = 0.35;
/** Probability that a swarm run keeps an op enabled / a faulty run enables a site. */
const OP_ENABLED_PROBABILITY = 0.7;
const FAULT_SITE_PROBABILITY = 0.5;
const MAX_SWARM_WEIGHT = 10;
/** Share of runs whose config keeps fast-check's bias toward small values. */
const SMALL_CONFIG_SHARE = 0.4;

export interface RunPlan {
  readonly system: string;
  readonly runIndex: number;
  readonly seed: number;
  /** null: the system's default weights. */
  readonly weights: Readonly<Record<string, number>> | null;
  readonly faults: readonly string[];
  /** The config is drawn with the bias toward small values (smaller pools and budgets). */
  readonly smallConfigs: boolean;
}

/** Which op names belong to a fault site of the system. */
function faultOpNames(system: SystemDef): Set<string> {
  return new Set(Object.values(system.faultOps ?? {}).flat());
}

/** Derives run i's plan from the campaign seed alone. */
export function planRun(campaignSeed: string | number, system: SystemDef, runIndex: number): RunPlan {
  const seed = deriveRunSeed(campaignSeed, system.name, runIndex);
  const swarm = runRandom(campaignSeed, system.name, runIndex, 'swarm');
  const faultRandom = runRandom(campaignSeed, system.name, runIndex, 'faults');
  const faultOps = faultOpNames(system);
  const sites = Object.keys(system.faultOps ?? {});
  const faults = faultRandom() < FAULT_FREE_SHARE ? [] : sites.filter(() => faultRandom() < FAULT_SITE_PROBABILITY);
  let weights: Record<string, number> | null = null;
  if (swarm() >= DEFAULT_PLAN_SHARE) {
    weights = {};
    const ordinary = Object.keys(system.ops).filter((op) => !faultOps.has(op));
    for (const op of ordinary) weights[op] = swarm() < OP_ENABLED_PROBABILITY ? 1 + Math.floor(swarm() * MAX_SWARM_WEIGHT) : 0;
    if (ordinary.every((op) => weights![op] === 0)) weights[ordinary[Math.floor(swarm() * ordinary.length)]!] = 1;
  }
  // Fault ops: off unless their site is on for this run (then at the default or swarm weight).
  if (faultOps.size > 0) {
    weights ??= {};
    const enabled = new Set(faults.flatMap((site) => system.faultOps![site]!));
    for (const op of faultOps) if (!enabled.has(op)) weights[op] = 0;
    if (Object.keys(weights).length === 0) weights = null;
  }
  const smallConfigs = runRandom(campaignSeed, system.name, runIndex, 'config')() < SMALL_CONFIG_SHARE;
  return { system: system.name, runIndex, seed, weights, faults, smallConfigs };
}

export function generationPlan(plan: RunPlan): GenerationPlan {
  return { ...(plan.weights === null ? {} : { weights: plan.weights }), smallConfigs: plan.smallConfigs };
}

export interface RunFinding {
  readonly signature: string;
  readonly system: string;
  readonly check: string;
  readonly op: string;
  readonly runIndex: number;
  readonly seed: number;
  readonly path: string;
  readonly config: JsonObject;
  readonly commands: Command[];
  readonly message: string;
  readonly weights: Readonly<Record<string, number>> | null;
  readonly faults: readonly string[];
  readonly smallConfigs: boolean;
  readonly originalLength: number;
}

export interface RunResult {
  readonly system: string;
  /** Wall-clock milliseconds the run took (measured by the caller; 0 when not measured). */
  busyMs?: number;
  readonly runIndex: number;
  readonly commands: number;
  readonly probes: Record<string, number>;
  readonly weights: Readonly<Record<string, number>> | null;
  readonly faults: readonly string[];
  readonly smallConfigs: boolean;
  readonly finding: RunFinding | null;
}

/** A finding is the same bug as another when system, failed check and failing op match. */
export function findingSignature(system: string, check: string, op: string): string {
  return `${system}/${check}/${op}`;
}

export class NondeterminismError extends Error {}

/**
 * Executes run i: one fast-check case, shrunk on failure, then replayed twice to prove the
 * finding is deterministic before it is reported.
 */
export function executeRun(system: SystemDef, plan: RunPlan, implFactory?: ImplFactory): RunResult {
  const context = new RunContext();
  const result = checkSystem(system, { seed: plan.seed, numRuns: 1, plan: generationPlan(plan), context, implFactory, unbiased: true });
  const probes = Object.fromEntries(context.probeCounts);
  let finding: RunFinding | null = null;
  if (result.failed) {
    const first = runSequence(system, result.config, result.commands, { implFactory });
    const second = runSequence(system, result.config, result.commands, { implFactory });
    if (first.ok || second.ok || !jsonEqual(first.failure as unknown as Json, second.failure as unknown as Json)) {
      throw new NondeterminismError(`${system.name} run ${plan.runIndex}: the shrunk finding does not replay identically`);
    }
    const failure = first.failure;
    finding = {
      signature: findingSignature(system.name, failure.check, failure.command.op),
      system: system.name,
      check: failure.check,
      op: failure.command.op,
      runIndex: plan.runIndex,
      seed: plan.seed,
      path: result.path,
      config: result.config,
      commands: result.commands,
      message: failure.message,
      weights: plan.weights,
      faults: plan.faults,
      smallConfigs: plan.smallConfigs,
      originalLength: result.originalLength,
    };
  }
  return {
    system: system.name,
    runIndex: plan.runIndex,
    commands: result.commandsRun,
    probes,
    weights: plan.weights,
    faults: plan.faults,
    smallConfigs: plan.smallConfigs,
    finding,
  };
}

// ---------------------------------------------------------------------------------------------
// Summaries

export const SUMMARY_FORMAT = 1;

export interface FindingEntry {
  readonly signature: string;
  readonly system: string;
  readonly check: string;
  readonly op: string;
  readonly runIndex: number;
  readonly commands: number;
  readonly file: string;
  readonly replay: string;
  readonly weights: Readonly<Record<string, number>> | null;
  readonly faults: readonly string[];
  readonly smallConfigs: boolean;
}

export interface SystemSummary {
  runs: number;
  commands: number;
  /**
   * Done runs per shard "k/K", counted in the shard's own ordinals j (run index k + j*K):
   * every ordinal below `below` is done, plus those in `above` (workers finish out of order).
   */
  completed: Record<string, Completion>;
  probes: Record<string, number>;
  probesNeverHit: string[];
  swarm: { defaultPlanRuns: number; smallConfigRuns: number; opEnabledRuns: Record<string, number> };
  faults: { faultFreeRuns: number; siteRuns: Record<string, number> };
}

export interface Completion {
  below: number;
  above: number[];
}

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

export interface CampaignTiming {
  elapsedMs: number;
  workers: number;
  /** Time spent executing each system's runs, summed over workers. */
  busyMs: Record<string, number>;
  /** Side-by-side commands per second per core: commands / busy seconds, per system. */
  commandsPerSecond: Record<string, number>;
  /** All systems' commands over the wall-clock time (what the machine did with its workers). */
  totalCommandsPerSecond: number;
}

export function emptyTiming(): CampaignTiming {
  return { elapsedMs: 0, workers: 0, busyMs: {}, commandsPerSecond: {}, totalCommandsPerSecond: 0 };
}

/** Derives the rates from the counts, busy times and elapsed time. */
export function computeRates(summary: CampaignSummary): void {
  let total = 0;
  for (const [name, system] of Object.entries(summary.systems)) {
    const busySeconds = (summary.timing.busyMs[name] ?? 0) / 1000;
    summary.timing.commandsPerSecond[name] = busySeconds > 0 ? Math.round(system.commands / busySeconds) : 0;
    total += system.commands;
  }
  const elapsedSeconds = summary.timing.elapsedMs / 1000;
  summary.timing.totalCommandsPerSecond = elapsedSeconds > 0 ? Math.round(total / elapsedSeconds) : 0;
}

export interface CampaignSummary {
  format: number;
  seed: string;
  /** Runs per system (run indices 0..runs-1), or null for a time-budgeted campaign. */
  runs: number | null;
  /** What the campaign runs against (plain data; a resume rebuilds the same targets). */
  targets: JsonObject;
  /** Shards merged into this summary, as "k/K". */
  shards: string[];
  systems: Record<string, SystemSummary>;
  findings: FindingEntry[];
  /** Wall-clock figures: the only fields that differ between two runs of the same campaign. */
  timing: CampaignTiming;
  stopped: 'complete' | 'budget' | 'interrupted' | 'running';
}

export function emptySystemSummary(system: SystemDef, shard: Shard): SystemSummary {
  return {
    runs: 0,
    commands: 0,
    completed: { [shardLabel(shard)]: { below: 0, above: [] } },
    probes: Object.fromEntries(system.probes.map((probe) => [probe, 0])),
    probesNeverHit: [...system.probes],
    swarm: { defaultPlanRuns: 0, smallConfigRuns: 0, opEnabledRuns: Object.fromEntries(Object.keys(system.ops).map((op) => [op, 0])) },
    faults: { faultFreeRuns: 0, siteRuns: Object.fromEntries(Object.keys(system.faultOps ?? {}).map((site) => [site, 0])) },
  };
}

export function emptySummary(
  seed: string,
  shard: Shard,
  systems: readonly SystemDef[],
  runs: number | null = null,
  targets: JsonObject = { systems: 'all' },
): CampaignSummary {
  return {
    format: SUMMARY_FORMAT,
    seed,
    runs,
    targets,
    shards: [shardLabel(shard)],
    systems: Object.fromEntries(systems.map((system) => [system.name, emptySystemSummary(system, shard)])),
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
  return completion !== undefined && (ordinal < completion.below || completion.above.includes(ordinal));
}

/** Folds one run's result into the summary (findings are added by the caller, with files). */
export function recordRun(summary: SystemSummary, result: RunResult, shard: Shard): void {
  summary.runs++;
  summary.commands += result.commands;
  for (const [probe, count] of Object.entries(result.probes)) summary.probes[probe] = (summary.probes[probe] ?? 0) + count;
  summary.probesNeverHit = Object.keys(summary.probes).filter((probe) => summary.probes[probe] === 0).sort();
  if (result.weights === null) summary.swarm.defaultPlanRuns++;
  if (result.smallConfigs) summary.swarm.smallConfigRuns++;
  for (const op of Object.keys(summary.swarm.opEnabledRuns)) {
    if (result.weights === null || (result.weights[op] ?? 1) > 0) summary.swarm.opEnabledRuns[op]!++;
  }
  if (result.faults.length === 0) summary.faults.faultFreeRuns++;
  for (const site of result.faults) summary.faults.siteRuns[site] = (summary.faults.siteRuns[site] ?? 0) + 1;
  const label = shardLabel(shard);
  summary.completed[label] ??= { below: 0, above: [] };
  markCompleted(summary.completed[label]!, (result.runIndex - shard.index) / shard.count);
}

/** Keeps one finding per signature: the one with the lowest run index, so order does not matter. */
export function addFinding(findings: FindingEntry[], entry: FindingEntry): 'new' | 'replaced' | 'duplicate' {
  const index = findings.findIndex((existing) => existing.signature === entry.signature);
  if (index < 0) {
    findings.push(entry);
    findings.sort(compareFindings);
    return 'new';
  }
  if (findings[index]!.runIndex <= entry.runIndex) return 'duplicate';
  findings[index] = entry;
  return 'replaced';
}

function compareFindings(a: FindingEntry, b: FindingEntry): number {
  return a.signature < b.signature ? -1 : a.signature > b.signature ? 1 : 0;
}

/** Merges shard summaries of one campaign seed into one. */
export function mergeSummaries(summaries: readonly CampaignSummary[]): CampaignSummary {
  if (summaries.length === 0) throw new Error('nothing to merge');
  const seed = summaries[0]!.seed;
  for (const summary of summaries) {
    if (summary.seed !== seed) throw new Error(`cannot merge campaigns with different seeds (${seed} and ${summary.seed})`);
  }
  const merged: CampaignSummary = {
    format: SUMMARY_FORMAT,
    seed,
    runs: summaries[0]!.runs,
    targets: summaries[0]!.targets,
    shards: [...new Set(summaries.flatMap((summary) => summary.shards))].sort(),
    systems: {},
    findings: [],
    timing: emptyTiming(),
    stopped: summaries.every((summary) => summary.stopped === 'complete') ? 'complete' : summaries.some((s) => s.stopped === 'interrupted') ? 'interrupted' : 'budget',
  };
  for (const summary of summaries) {
    merged.timing.elapsedMs = Math.max(merged.timing.elapsedMs, summary.timing.elapsedMs);
    merged.timing.workers += summary.timing.workers;
    for (const [name, busyMs] of Object.entries(summary.timing.busyMs ?? {})) merged.timing.busyMs[name] = (merged.timing.busyMs[name] ?? 0) + busyMs;
    for (const [name, system] of Object.entries(summary.systems)) {
      const target = merged.systems[name];
      if (target === undefined) {
        merged.systems[name] = structuredClone(system);
        continue;
      }
      target.runs += system.runs;
      target.commands += system.commands;
      for (const [probe, count] of Object.entries(system.probes)) target.probes[probe] = (target.probes[probe] ?? 0) + count;
      target.probesNeverHit = Object.keys(target.probes).filter((probe) => target.probes[probe] === 0).sort();
      target.swarm.defaultPlanRuns += system.swarm.defaultPlanRuns;
      target.swarm.smallConfigRuns += system.swarm.smallConfigRuns;
      for (const [op, count] of Object.entries(system.swarm.opEnabledRuns)) target.swarm.opEnabledRuns[op] = (target.swarm.opEnabledRuns[op] ?? 0) + count;
      target.faults.faultFreeRuns += system.faults.faultFreeRuns;
      for (const [site, count] of Object.entries(system.faults.siteRuns)) target.faults.siteRuns[site] = (target.faults.siteRuns[site] ?? 0) + count;
      for (const [label, completion] of Object.entries(system.completed)) {
        if (target.completed[label] !== undefined) throw new Error(`shard ${label} appears in more than one summary`);
        target.completed[label] = structuredClone(completion);
      }
    }
    for (const finding of summary.findings) addFinding(merged.findings, finding);
  }
  computeRates(merged);
  return merged;
}
