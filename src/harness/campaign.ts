/**
 * Campaign logic, free of clocks, threads and files: what run i of a campaign on a system is
 * (its fast-check seed, swarm weights and fault sites, all derived from the campaign seed with
 * seedrandom), how to execute it, and how per-run results fold into a summary that shards can
 * merge. The CLI (src/cli/fuzz.ts) adds workers, time budgets, progress and files.
 */
import { checkSystem } from './property';
import { RunContext, runSequence, type ImplFactory } from './runner';
import { InputError, isPlainObject, jsonEqual, type Json, type JsonObject } from './json';
import type { Command, GenerationPlan, SystemDef } from './system';
import { runStream } from './seed';

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
  // One stream per run: the fast-check seed first, then the config bias, fault sites and swarm
  // weights, always drawn in this order.
  const stream = runStream(campaignSeed, system.name, runIndex);
  const seed = stream.int32();
  const smallConfigs = stream() < SMALL_CONFIG_SHARE;
  const faultOps = faultOpNames(system);
  const sites = Object.keys(system.faultOps ?? {});
  const faults = stream() < FAULT_FREE_SHARE ? [] : sites.filter(() => stream() < FAULT_SITE_PROBABILITY);
  let weights: Record<string, number> | null = null;
  if (stream() >= DEFAULT_PLAN_SHARE) {
    weights = {};
    const ordinary = Object.keys(system.ops).filter((op) => !faultOps.has(op));
    for (const op of ordinary) weights[op] = stream() < OP_ENABLED_PROBABILITY ? 1 + Math.floor(stream() * MAX_SWARM_WEIGHT) : 0;
    if (ordinary.every((op) => weights![op] === 0)) weights[ordinary[Math.floor(stream() * ordinary.length)]!] = 1;
  }
  // Fault ops: off unless their site is on for this run (then at the default or swarm weight).
  if (faultOps.size > 0) {
    weights ??= {};
    const enabled = new Set(faults.flatMap((site) => system.faultOps![site]!));
    for (const op of faultOps) if (!enabled.has(op)) weights[op] = 0;
    if (Object.keys(weights).length === 0) weights = null;
  }
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

/**
 * Summary format. 2: run plans draw config bias, fault sites and swarm weights from the run's one
 * seedrandom stream (format 1 used a generator per purpose), so a format-1 summary describes
 * other plans and is refused by --resume and merge.
 */
export const SUMMARY_FORMAT = 2;

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
  /** Runs executed on worker threads (the rest ran on the campaign's main thread). */
  threadRuns: number;
}

export function emptyTiming(): CampaignTiming {
  return { elapsedMs: 0, workers: 0, busyMs: {}, commandsPerSecond: {}, totalCommandsPerSecond: 0, threadRuns: 0 };
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
  /** The time budget of a budgeted campaign (a resume asks for a new one), else null. */
  budgetMs: number | null;
  /** What the campaign runs against (plain data; a resume rebuilds the same targets). */
  targets: JsonObject;
  /** Shards merged into this summary, as "k/K". */
  shards: string[];
  systems: Record<string, SystemSummary>;
  findings: FindingEntry[];
  /** Wall-clock figures: the only fields that differ between two runs of the same campaign. */
  timing: CampaignTiming;
  /** 'incomplete': a merge that lacks some of the campaign's shards. */
  stopped: 'complete' | 'budget' | 'interrupted' | 'running' | 'incomplete';
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
  budgetMs: number | null = null,
): CampaignSummary {
  return {
    format: SUMMARY_FORMAT,
    seed,
    runs,
    budgetMs,
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

export type FindingVerdict = { readonly kind: 'new' | 'duplicate' } | { readonly kind: 'replaced'; readonly previous: FindingEntry };

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

/**
 * Merges the shard summaries of one campaign into one. They must share seed, run count and
 * targets and come from one shard count K, each shard at most once; the merge is 'incomplete'
 * unless all K shards are there.
 */
export function mergeSummaries(summaries: readonly CampaignSummary[]): CampaignSummary {
  if (summaries.length === 0) throw new Error('nothing to merge');
  const first = summaries[0]!;
  const seen = new Set<string>();
  let shardCount: number | undefined;
  for (const summary of summaries) {
    if (summary.seed !== first.seed) throw new Error(`cannot merge campaigns with different seeds (${first.seed} and ${summary.seed})`);
    if (summary.runs !== first.runs) throw new Error(`cannot merge campaigns with different run counts (${first.runs} and ${summary.runs})`);
    if (!jsonEqual(summary.targets, first.targets)) throw new Error(`cannot merge campaigns with different targets (${JSON.stringify(first.targets)} and ${JSON.stringify(summary.targets)})`);
    for (const label of summary.shards) {
      const count = Number(label.split('/')[1]);
      if (shardCount !== undefined && count !== shardCount) throw new Error(`cannot merge shards of ${shardCount} with shards of ${count}`);
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
          : statuses.every((status) => status === 'complete')
            ? 'complete'
            : 'budget',
  };
  for (const summary of summaries) {
    merged.timing.elapsedMs = Math.max(merged.timing.elapsedMs, summary.timing.elapsedMs);
    merged.timing.workers += summary.timing.workers;
    merged.timing.threadRuns += summary.timing.threadRuns;
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
      for (const [label, completion] of Object.entries(system.completed)) target.completed[label] = structuredClone(completion);
    }
    for (const finding of summary.findings) addFinding(merged.findings, finding);
  }
  computeRates(merged);
  return merged;
}

// ---------------------------------------------------------------------------------------------
// Reading summaries back (resume, merge): every field is checked, errors name file and path.

type Check = (value: unknown, at: string) => void;

function summaryChecker(source: string) {
  const fail = (at: string, what: string, value: unknown): never => {
    throw new InputError(source, at, `expected ${what}, got ${JSON.stringify(value) ?? String(value)}`);
  };
  const num: Check = (v, at) => {
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) fail(at, 'a non-negative number', v);
  };
  const str: Check = (v, at) => {
    if (typeof v !== 'string') fail(at, 'a string', v);
  };
  const bool: Check = (v, at) => {
    if (typeof v !== 'boolean') fail(at, 'true or false', v);
  };
  const nullable =
    (inner: Check): Check =>
    (v, at) => {
      if (v !== null) inner(v, at);
    };
  const array =
    (inner: Check): Check =>
    (v, at) => {
      if (!Array.isArray(v)) fail(at, 'an array', v);
      (v as unknown[]).forEach((item, index) => inner(item, `${at}[${index}]`));
    };
  const record =
    (inner: Check): Check =>
    (v, at) => {
      if (!isPlainObject(v)) fail(at, 'an object', v);
      for (const [key, item] of Object.entries(v as object)) inner(item, `${at}.${key}`);
    };
  const shape =
    (fields: Record<string, Check>): Check =>
    (v, at) => {
      if (!isPlainObject(v)) fail(at, 'an object', v);
      for (const [key, check] of Object.entries(fields)) {
        if (!Object.hasOwn(v as object, key)) throw new InputError(source, `${at}.${key}`, 'missing field');
        check((v as Record<string, unknown>)[key], `${at}.${key}`);
      }
    };
  const shardLabelCheck: Check = (v, at) => {
    if (typeof v !== 'string' || !/^\d+\/\d+$/.test(v) || Number(v.split('/')[0]) >= Number(v.split('/')[1])) fail(at, 'a shard "k/K"', v);
  };
  return { num, str, bool, nullable, array, record, shape, shardLabelCheck, fail };
}

/** Validates a parsed summary file; an InputError names the file and the JSON path. */
export function parseSummary(value: unknown, source: string): CampaignSummary {
  const c = summaryChecker(source);
  const systemSummary = c.shape({
    runs: c.num,
    commands: c.num,
    completed: c.record(c.shape({ below: c.num, above: c.array(c.num) })),
    probes: c.record(c.num),
    probesNeverHit: c.array(c.str),
    swarm: c.shape({ defaultPlanRuns: c.num, smallConfigRuns: c.num, opEnabledRuns: c.record(c.num) }),
    faults: c.shape({ faultFreeRuns: c.num, siteRuns: c.record(c.num) }),
  });
  const finding = c.shape({
    signature: c.str,
    system: c.str,
    check: c.str,
    op: c.str,
    runIndex: c.num,
    commands: c.num,
    file: c.str,
    replay: c.str,
    weights: c.nullable(c.record(c.num)),
    faults: c.array(c.str),
    smallConfigs: c.bool,
  });
  c.shape({
    format: (v, at) => {
      if (v !== SUMMARY_FORMAT) c.fail(at, `format ${SUMMARY_FORMAT}`, v);
    },
    seed: c.str,
    runs: c.nullable(c.num),
    budgetMs: c.nullable(c.num),
    targets: c.shape({ systems: c.str }),
    shards: c.array(c.shardLabelCheck),
    systems: c.record(systemSummary),
    findings: c.array(finding),
    timing: c.shape({ elapsedMs: c.num, workers: c.num, busyMs: c.record(c.num), commandsPerSecond: c.record(c.num), totalCommandsPerSecond: c.num, threadRuns: c.num }),
    stopped: (v, at) => {
      if (!['complete', 'budget', 'interrupted', 'running', 'incomplete'].includes(v as string)) c.fail(at, 'a campaign status', v);
    },
  })(value, '$');
  return value as CampaignSummary;
}
