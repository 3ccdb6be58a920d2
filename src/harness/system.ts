/**
 * The systems registry's contract.
 *
 * A system is one algorithm under verification. Its definition bundles everything the runner,
 * the property suites, the fuzz CLI, the regression replayer and the mutant report need: how to
 * generate a config and commands, how to build the reference model and the implementation, how
 * to apply one plain-data command to either side, and the invariants checked after every step.
 */
import type fc from 'fast-check';
import type { FieldSchema, Json, JsonObject } from './json';

/** A command is plain data: an `op` name plus integer fields. */
export type Command = { op: string } & JsonObject;

/**
 * What a side can reach of the run it belongs to: probe counters, named events that show the
 * generator reached a deep path. (Fault injection is done with commands: see `faultOps`.)
 */
export interface RunEnv {
  /** Counts a named event. Only the model's probes are counted, so each event counts once per step. */
  probe(name: string): void;
}

export interface Invariant<S> {
  /** Stable, kebab-case name; reports and mutant expectations refer to it. */
  readonly name: string;
  /** One sentence: what must always hold. */
  readonly description: string;
  /**
   * Returns null when the invariant holds, otherwise a message. `model` and `impl` are the two
   * sides after the same step; single-side invariants check each side, cross-side ones compare.
   */
  check(model: S, impl: S, config: JsonObject): string | null;
}

/** Generation knobs a campaign may vary per run (swarm testing). */
export interface GenerationPlan {
  /** Relative weight of each op kind; 0 disables it. Missing ops use the system's default. */
  readonly weights?: Readonly<Record<string, number>>;
  /**
   * Campaign runs generate without fast-check's bias toward small values; with this set, the
   * config keeps that bias (smaller pools, capacities and budgets: a swarm choice of config range).
   */
  readonly smallConfigs?: boolean;
}

export interface SystemDef<S = any> {
  readonly name: string;
  /** One line for help texts. */
  readonly summary: string;
  /** Field schema of the config object. */
  readonly configSchema: FieldSchema;
  /** Field schema of each op. */
  readonly ops: Readonly<Record<string, FieldSchema>>;
  /** Semantic config check beyond field types (null if fine). */
  validateConfig?(config: JsonObject): string | null;
  /** Arbitrary configs; small capacities so exhaustion is common. */
  configArb(): fc.Arbitrary<JsonObject>;
  /** Arbitrary single command for a config; weights come from the plan (swarm testing). */
  commandArb(config: JsonObject, plan?: GenerationPlan): fc.Arbitrary<Command>;
  /** Sequence lengths the property suites and campaigns generate. */
  readonly sequence: { readonly minLength: number; readonly maxLength: number };
  createModel(config: JsonObject, env: RunEnv): S;
  createImpl(config: JsonObject, env: RunEnv): S;
  /**
   * Applies one command to one side and returns its observation: the return value, the typed
   * error, and the visible state the command changed. Contract errors are caught by the runner.
   */
  apply(side: S, command: Command): Json;
  readonly invariants: readonly Invariant<S>[];
  /** Names of the coverage probes this system's model can report. */
  readonly probes: readonly string[];
  /**
   * Fault sites (BUGGIFY style): each names the injection ops that fire it, e.g.
   * `{ 'set-growth-failure': ['failNextGrowth'] }`. Faults are commands, so a finding replays
   * from its file alone; a campaign switches sites on per run, and fault-free runs get none.
   */
  readonly faultOps?: Readonly<Record<string, readonly string[]>>;
}

/** A variant of a system's implementation that re-creates a documented pitfall. */
export interface Mutant<S = any> {
  readonly name: string;
  readonly system: string;
  /** What the bug is and where it comes from. */
  readonly description: string;
  /** The check expected to catch it first (an invariant name or 'observation'). */
  readonly expectedCheck: string;
  createImpl(config: JsonObject, env: RunEnv): S;
}
