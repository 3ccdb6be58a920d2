/**
 * Run planning: what run i of a campaign on a system is (its fast-check seed, swarm weights, fault
 * sites and config bias), derived from the campaign seed alone with seedrandom, and the case it
 * executes first.
 */
import { firstCase } from './property.js';
import type { JsonObject } from './json.js';
import type { AnySystem, Command, GenerationPlan } from './system.js';
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

/** What planning reads of a system besides the stream: derived once per system, not per run. */
interface SystemPlanShape {
  /** Op names that belong to a fault site. */
  readonly faultOps: ReadonlySet<string>;
  /** The fault sites, in declaration order. */
  readonly sites: readonly string[];
  /** Every op that belongs to no fault site, in declaration order (the swarm draws their weights). */
  readonly ordinary: readonly string[];
}

const planShapes = new WeakMap<AnySystem, SystemPlanShape>();

function planShape(system: AnySystem): SystemPlanShape {
  let shape = planShapes.get(system);
  if (shape === undefined) {
    const faultOps = new Set(Object.values(system.faultOps ?? {}).flat());
    shape = {
      faultOps,
      sites: Object.keys(system.faultOps ?? {}),
      ordinary: system.opNames.filter((op) => !faultOps.has(op)),
    };
    planShapes.set(system, shape);
  }
  return shape;
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
  const { faultOps, sites, ordinary } = planShape(system);
  const opsOfSite = system.faultOps ?? {};
  const faults =
    stream() < FAULT_FREE_SHARE ? [] : sites.filter(() => stream() < FAULT_SITE_PROBABILITY);
  let weights: Record<string, number> | null = null;
  if (stream() >= DEFAULT_PLAN_SHARE) {
    const swarm: Record<string, number> = {};
    for (const op of ordinary)
      swarm[op] =
        stream() < OP_ENABLED_PROBABILITY ? 1 + Math.floor(stream() * MAX_SWARM_WEIGHT) : 0;
    if (ordinary.every((op) => swarm[op] === 0))
      swarm[ordinary[Math.floor(stream() * ordinary.length)]!] = 1;
    weights = swarm;
  }
  // Fault ops: off unless their site is on for this run (then at the default or swarm weight).
  if (faultOps.size > 0) {
    weights ??= {};
    const enabled = new Set(faults.flatMap((site) => opsOfSite[site] ?? []));
    for (const op of faultOps) if (!enabled.has(op)) weights[op] = 0;
    if (Object.keys(weights).length === 0) weights = null;
  }
  return { system: system.name, runIndex, seed, weights, faults, smallConfigs };
}

export function generationPlan(plan: RunPlan): GenerationPlan {
  // Two literals, not a spread: built once per run.
  return plan.weights === null
    ? { smallConfigs: plan.smallConfigs }
    : { weights: plan.weights, smallConfigs: plan.smallConfigs };
}

/** The (config, commands) run i executes first, rebuilt without running it (see firstCase). */
export function runCase(
  system: AnySystem,
  plan: RunPlan,
): { config: JsonObject; commands: Command[] } {
  return firstCase(system, { seed: plan.seed, plan: generationPlan(plan), unbiased: true });
}
