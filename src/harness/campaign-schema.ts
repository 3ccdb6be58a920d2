/**
 * The campaign summary file's format: the schema of every field (shared with the JSON schema
 * written under schema/), the types it defines, and the summary read back from a file.
 */
import { Bool, Nat, OneOf, parseWith, Str, Strict, Type, type Static } from './schema.js';

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

// ---------------------------------------------------------------------------------------------
// Reading summaries back (resume, merge): the summary schema checks every field; errors name the
// file and the JSON path.

/** Validates a parsed summary file; an InputError names the file and the JSON path. */
export function parseSummary(value: unknown, source: string): CampaignSummary {
  return parseWith(CampaignSummarySchema, value, source);
}
