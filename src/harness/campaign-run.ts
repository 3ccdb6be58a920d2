/**
 * Run execution: one run of a campaign as one fast-check case, shrunk on failure and replayed to
 * prove the finding deterministic, and what the run reports (its counts, probes and finding).
 */
import { checkSystem } from './property.js';
import { RunContext, runSequence, type Failure, type ImplFactory } from './runner.js';
import { jsonEqual, type Json, type JsonObject } from './json.js';
import type { AnySystem, Command, OpNamed } from './system.js';
import { generationPlan, type RunPlan } from './campaign-plan.js';

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
  const { shrunk } = hooks;
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
    ...(shrunk === undefined
      ? {}
      : {
          onShrink: (config: JsonObject, commands: readonly OpNamed[], failure: Failure) =>
            shrunk(config, commands as Command[], failure),
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
