/**
 * The contract between a system under verification and the generic harness.
 *
 * A system is one algorithm under verification. Its definition bundles everything the runner,
 * the property suites, the fuzz CLI, the regression replayer and the mutant report need: how to
 * generate a config and commands, how to build the reference model and the implementation, how
 * to apply one plain-data command to either side, and the invariants checked after every step.
 *
 * Systems are written with `defineSystem` (src/harness/define-system.ts): one schema for the
 * config and one record per op give the types, the validation, the generators and the dispatch.
 * The harness only sees the `SystemDef` built from them.
 */
import type fc from 'fast-check';
import type { TObject } from './schema.js';
import type { Json, JsonObject } from './json.js';
import type { Visual } from './visual.js';

/** A command is plain data: an `op` name plus JSON fields (each system narrows it to its op union). */
export type Command = { readonly op: string } & JsonObject;

/** What every command of every system is at least: a named op. */
export interface OpNamed {
  readonly op: string;
}

/**
 * What a side can reach of the run it belongs to: probe counters, named events that show the
 * generator reached a deep path. (Fault injection is done with commands: see `faultOps`.)
 */
export interface RunEnv {
  /** Counts a named event. Only the model's probes are counted, so each event counts once per step. */
  probe(name: string): void;
}

export interface Invariant<S, C = JsonObject> {
  /** Stable, kebab-case name; reports and mutant expectations refer to it. */
  readonly name: string;
  /** One sentence: what must always hold. */
  readonly description: string;
  /**
   * Returns null when the invariant holds, otherwise a message. `model` and `impl` are the two
   * sides after the same step; single-side invariants check each side, cross-side ones compare.
   */
  check(model: S, impl: S, config: C): string | null;
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

/**
 * A system as the harness uses it, typed by its config `C`, its command union `Cmd` and its side
 * `S` (what one model or implementation instance is wrapped in). Built by `defineSystem`.
 */
export interface SystemDef<
  C extends JsonObject = JsonObject,
  Cmd extends OpNamed = Command,
  S = unknown,
> {
  readonly name: string;
  /** One line for help texts. */
  readonly summary: string;
  /** JSON Schema of the config (field types; `checkConfig` adds the rules between fields). */
  readonly configSchema: TObject;
  /** JSON Schema of each op's command, `op` included, by op name in declaration order. */
  readonly commandSchemas: Readonly<Record<string, TObject>>;
  /** The op names, in declaration order (swarm plans and summaries count per op). */
  readonly opNames: readonly string[];
  /** Semantic config check beyond field types (null if fine). */
  checkConfig(config: C): string | null;
  /** Validates a config read from a file or argument; errors name `source` and the JSON path. */
  parseConfig(raw: unknown, source: string, at: string): C;
  /** Validates a command read from a file; errors name `source` and the JSON path. */
  parseCommand(raw: unknown, source: string, at: string): Cmd;
  /** Arbitrary configs; small capacities so exhaustion is common. */
  configArb(): fc.Arbitrary<C>;
  /** Arbitrary single command for a config; weights come from the plan (swarm testing). */
  commandArb(config: C, plan?: GenerationPlan): fc.Arbitrary<Cmd>;
  /** Sequence lengths the property suites and campaigns generate. */
  readonly sequence: { readonly minLength: number; readonly maxLength: number };
  createModel(config: C, env: RunEnv): S;
  /** `commands`: the whole sequence this side will be given (the runner passes it; a native driver takes a run as one batch). */
  createImpl(config: C, env: RunEnv, commands?: readonly Cmd[]): S;
  /**
   * Applies one command to one side and returns its observation: the return value, the typed
   * error, and the visible state the command changed. Contract errors are caught by the runner.
   */
  apply(side: S, command: Cmd): Json;
  readonly invariants: readonly Invariant<S, C>[];
  /** Names of the coverage probes this system's model can report. */
  readonly probes: readonly string[];
  /**
   * Fault sites (BUGGIFY style): each names the injection ops that fire it, e.g.
   * `{ 'set-growth-failure': ['failNextGrowth'] }`. Faults are commands, so a finding replays
   * from its file alone; a campaign switches sites on per run, and fault-free runs get none.
   */
  readonly faultOps?: Readonly<Record<string, readonly string[]>>;
  /**
   * What a side's last step did beyond its observation, for reports only (e.g. the offset a
   * user's allocator returned when the observation carries no opinion); never compared.
   */
  trace?(side: S): Json;
  /**
   * What the HTML report draws of a side after a step (a heap map row or a timeline column, see
   * src/harness/visual.ts); for reports only, never compared.
   */
  visual?(side: S): Visual;
  /**
   * The model side is a stand-in with no opinion (a user's allocator under policy 'any'): its
   * observations carry nothing, so reports show the implementation's answers only.
   */
  readonly modelless?: boolean;
}

/**
 * Any system, whatever its config, command and side types: what lists of systems hold. The
 * harness is generic over these; it never reads a field of a config or a command.
 */
// biome-ignore lint/suspicious/noExplicitAny: the harness is generic over configs, commands and sides
export type AnySystem = SystemDef<any, any, any>;

export type ConfigOf<Sys> = Sys extends { configArb(): fc.Arbitrary<infer C> } ? C : never;
export type CommandOf<Sys> = Sys extends {
  parseCommand(raw: unknown, source: string, at: string): infer Cmd;
}
  ? Cmd
  : never;
export type SideOf<Sys> = Sys extends { createImpl(config: never, env: RunEnv): infer S }
  ? S
  : never;

/** A variant of a system's implementation that re-creates a documented pitfall. */
export interface Mutant<C = never, S = unknown> {
  readonly name: string;
  readonly system: string;
  /** What the bug is and where it comes from. */
  readonly description: string;
  /** The check expected to catch it first (an invariant name or 'observation'). */
  readonly expectedCheck: string;
  createImpl(config: C, env: RunEnv): S;
}

/** Any mutant, whatever its system (what the catalog holds). */
// biome-ignore lint/suspicious/noExplicitAny: the catalog holds mutants of every system
export type AnyMutant = Mutant<any, any>;
