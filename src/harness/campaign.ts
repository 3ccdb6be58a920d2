/**
 * Campaign logic, free of clocks, threads and files: what run i of a campaign on a system is
 * (its fast-check seed, swarm weights and fault sites, all derived from the campaign seed with
 * seedrandom), how to execute it, and how per-run results fold into a summary that shards can
 * merge. The CLI (src/cli/fuzz.ts) adds workers, time budgets, progress and files.
 *
 * One file per concept, all exported from here: campaign-plan (run planning), campaign-run (run
 * execution), campaign-schema (the summary format), campaign-summary (building a summary) and
 * campaign-merge (merging shard summaries).
 */
export * from './campaign-plan.js';
export * from './campaign-run.js';
export * from './campaign-schema.js';
export * from './campaign-summary.js';
export * from './campaign-merge.js';
