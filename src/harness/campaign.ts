/**
 * Campaign logic, free of clocks, threads and files: what run i of a campaign on a system is
 * (its fast-check seed, swarm weights and fault sites, all derived from the campaign seed with
 * seedrandom), how to execute it, and how per-run results fold into a summary that shards can
 * merge. The CLI (src/cli/fuzz.ts) adds workers, time budgets, progress and files.
 */
import { checkSystem, firstCase } from './property.js';
import { RunContext, runSequence, type Failure, type ImplFactory } from './runner.js';
import { jsonEqual, type Json, type JsonObject } from './json.js';
import type { AnySystem, Command, GenerationPlan, OpNamed } from './system.js';
import { Bool, Nat, OneOf, parseWith, Str, Strict, Type, type Static } from './schema.js';
import { runStream } from './seed.js';

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
function faultOpNames(system: AnySystem): Set<string> {
  return new Set(Object.values(system.faultOps ?? {}).flat());
}

/** Derives run i's plan from the campaign seed alone. */
export function planRun(
  campaignSeed: string | number,
  system: AnySystem,
  runIndex: number,
): RunPlan {
  // One stream per run: the fast-check seed first, then the config bias, fault sites and swarm
  // weights, always drawn in this order.
  const stream = runStream(campaignSeed, system.name, runIndex);
  const seed = stream.int32();
  const smallConfigs = stream() < SMALL_CONFIG_SHARE;
  const faultOps = faultOpNames(system);
  const sites = Object.keys(system.faultOps ?? {});
  const faults =
    stream() < FAULT_FREE_SHARE ? [] : sites.filter(() => stream() < FAULT_SITE_PROBABILITY);
  let weights: Record<string, number> | null = null;
  if (stream() >= DEFAULT_PLAN_SHARE) {
    weights = {};
    const ordinary = system.opNames.filter((op) => !faultOps.has(op));
    for (const op of ordinary)
      weights[op] =
        stream() < OP_ENABLED_PROBABILITY ? 1 + Math.floor(stream() * MAX_SWARM_WEIGHT) : 0;
    if (ordinary.every((op) => weights![op] === 0))
      weights[ordinary[Math.floor(stream() * ordinary.length)]!] = 1;
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
  return {
    ...(plan.weights === null ? {} : { weights: plan.weights }),
    smallConfigs: plan.smallConfigs,
  };
}

export interface RunFinding {
  readonly signature: string;
  readonly system: string;
  readonly check: string;
  /** Every check the failing step trips, the first one first. */
  readonly checks: readonly string[];
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
  /** The check and op of the first failure, before shrinking (they name the finding's file). */
  readonly firstCheck: string;
  readonly firstOp: string;
  /** Why the case is not fully shrunk (its shrink was stopped), for the report. */
  readonly note?: string;
}

/** What a run's caller is told while the run's finding is found and shrunk (see executeRun). */
export interface RunHooks {
  /** The first failing case, before shrinking. */
  found?(config: JsonObject, commands: readonly Command[], failure: Failure): void;
  /** Every smaller failing case the shrink accepts. */
  shrunk?(config: JsonObject, commands: readonly Command[], failure: Failure): void;
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
export function executeRun(
  system: AnySystem,
  plan: RunPlan,
  implFactory?: ImplFactory,
  hooks: RunHooks = {},
): RunResult {
  const context = new RunContext();
  let first: Failure | null = null;
  const result = checkSystem(system, {
    seed: plan.seed,
    numRuns: 1,
    plan: generationPlan(plan),
    context,
    implFactory,
    unbiased: true,
    onFirstFailure: (_index, found, failure) => {
      first = failure;
      hooks.found?.(found.config, found.commands as Command[], failure);
    },
    ...(hooks.shrunk === undefined
      ? {}
      : {
          onShrink: (config: JsonObject, commands: readonly OpNamed[], failure: Failure) =>
            hooks.shrunk!(config, commands as Command[], failure),
        }),
  });
  const probes = Object.fromEntries(context.probeCounts);
  let finding: RunFinding | null = null;
  if (result.failed) {
    const once = runSequence(system, result.config, result.commands, { implFactory });
    const twice = runSequence(system, result.config, result.commands, { implFactory });
    if (
      once.ok ||
      twice.ok ||
      !jsonEqual(once.failure as unknown as Json, twice.failure as unknown as Json)
    ) {
      throw new NondeterminismError(
        `${system.name} run ${plan.runIndex}: the shrunk finding does not replay identically`,
      );
    }
    const failure = once.failure;
    const firstFailure: Failure = first ?? failure;
    finding = {
      signature: findingSignature(system.name, failure.check, failure.command.op),
      system: system.name,
      check: failure.check,
      checks: failure.checks,
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
      firstCheck: firstFailure.check,
      firstOp: firstFailure.command.op,
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

/** Counts, sizes and rates in a summary: non-negative numbers (rates need not be integers). */
const Count = (options: { readonly description?: string } = {}) =>
  Type.Number({ minimum: 0, ...options });
const Counts = () => Type.Record(Type.String(), Count());
const Weights = () =>
  Type.Union([Type.Record(Type.String(), Count()), Type.Null()], {
    description: "the run plan's op weights; null: the system's defaults",
  });

export const FindingEntrySchema = Strict({
  signature: Str({ description: 'system/check/op: findings with the same signature are one bug' }),
  system: Str(),
  check: Str(),
  checks: Type.Optional(
    Type.Array(Str(), {
      description: 'every check the failing step trips (one root cause, reported once)',
    }),
  ),
  op: Str(),
  runIndex: Count(),
  commands: Count(),
  file: Str({ description: 'the regression file written for it' }),
  replay: Str({ description: 'the command that replays it' }),
  weights: Weights(),
  faults: Type.Array(Str()),
  smallConfigs: Bool(),
});
export type FindingEntry = Static<typeof FindingEntrySchema>;

export const CompletionSchema = Strict({
  below: Count(),
  above: Type.Array(Count()),
});
/**
 * Done runs of one shard, counted in the shard's own ordinals j (run index k + j*K): every
 * ordinal below `below` is done, plus those in `above` (workers finish out of order).
 */
export type Completion = Static<typeof CompletionSchema>;

export const SystemSummarySchema = Strict({
  runs: Count(),
  commands: Count(),
  completed: Type.Record(Type.String({ pattern: '^[0-9]+/[0-9]+$' }), CompletionSchema, {
    description: 'done runs per shard "k/K"',
  }),
  probes: Counts(),
  probesNeverHit: Type.Array(Str()),
  swarm: Strict({ defaultPlanRuns: Count(), smallConfigRuns: Count(), opEnabledRuns: Counts() }),
  faults: Strict({ faultFreeRuns: Count(), siteRuns: Counts() }),
});
export type SystemSummary = Static<typeof SystemSummarySchema>;

export const CampaignTimingSchema = Strict({
  elapsedMs: Count(),
  workers: Count(),
  busyMs: Type.Record(Type.String(), Count(), {
    description: "time spent executing each system's runs, summed over workers",
  }),
  commandsPerSecond: Type.Record(Type.String(), Count(), {
    description: 'side-by-side commands per second per core: commands / busy seconds, per system',
  }),
  totalCommandsPerSecond: Count({ description: "all systems' commands over the wall-clock time" }),
  threadRuns: Count({
    description: "runs executed on worker threads (the rest ran on the campaign's main thread)",
  }),
});
export type CampaignTiming = Static<typeof CampaignTimingSchema>;

export const TargetSpecSchema = Strict(
  {
    systems: Str({ description: "comma-separated system names or 'all'" }),
    mutant: Type.Optional(
      Str({ description: 'runs against this mutant of the catalog (its system only)' }),
    ),
    allocator: Type.Optional(Str({ description: "a user's allocator module" })),
    exec: Type.Optional(
      Str({
        description:
          'a native allocator driver executable, relative to the project root (docs/native.md)',
      }),
    ),
  },
  {
    description: 'what the campaign runs against (plain data: a resume rebuilds the same targets)',
  },
);
/** What a campaign runs against. */
export type TargetSpec = Static<typeof TargetSpecSchema>;

export const CampaignSummarySchema = Strict(
  {
    $schema: Type.Optional(Str({ description: 'where an editor finds this schema' })),
    format: Type.Literal(SUMMARY_FORMAT),
    seed: Str(),
    runs: Type.Union([Nat(), Type.Null()], {
      description: 'runs per system (run indices 0..runs-1), or null for a time-budgeted campaign',
    }),
    budgetMs: Type.Union([Count(), Type.Null()], {
      description:
        'the time budget of a budgeted campaign (a resume asks for a new one), else null',
    }),
    targets: TargetSpecSchema,
    shards: Type.Array(Type.String({ pattern: '^[0-9]+/[0-9]+$' }), {
      description: 'shards merged into this summary, as "k/K"',
    }),
    systems: Type.Record(Type.String(), SystemSummarySchema),
    findings: Type.Array(FindingEntrySchema),
    timing: CampaignTimingSchema,
    stopped: OneOf(
      ['complete', 'budget', 'interrupted', 'running', 'incomplete', 'first-finding'],
      {
        description:
          "'incomplete': a merge that lacks some of the campaign's shards; 'first-finding': --stop-on-first ended it",
      },
    ),
  },
  { title: 'gpu-memory-verifier campaign summary' },
);
/** A campaign's summary file, as written after every batch and read back by --resume and merge. */
export type CampaignSummary = Static<typeof CampaignSummarySchema>;

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
  for (const op of Object.keys(summary.swarm.opEnabledRuns)) {
    if (result.weights === null || (result.weights[op] ?? 1) > 0)
      summary.swarm.opEnabledRuns[op]!++;
  }
  if (result.faults.length === 0) summary.faults.faultFreeRuns++;
  for (const site of result.faults)
    summary.faults.siteRuns[site] = (summary.faults.siteRuns[site] ?? 0) + 1;
  const label = shardLabel(shard);
  summary.completed[label] ??= { below: 0, above: [] };
  markCompleted(summary.completed[label]!, (result.runIndex - shard.index) / shard.count);
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

// ---------------------------------------------------------------------------------------------
// Reading summaries back (resume, merge): the summary schema checks every field; errors name the
// file and the JSON path.

/** Validates a parsed summary file; an InputError names the file and the JSON path. */
export function parseSummary(value: unknown, source: string): CampaignSummary {
  return parseWith(CampaignSummarySchema, value, source);
}

/** The (config, commands) run i executes first, rebuilt without running it (see firstCase). */
export function runCase(
  system: AnySystem,
  plan: RunPlan,
): { config: JsonObject; commands: Command[] } {
  return firstCase(system, { seed: plan.seed, plan: generationPlan(plan), unbiased: true });
}
