/**
 * The residency-manager system's sides (src/systems/residency-manager.ts): the config schema, a
 * side (a manager with its sets, its unchecked twin and what the invariants keep between steps),
 * and how a side is built from a manager.
 */
import type { RunEnv } from '../harness/system.js';
import { Bool, Int, Nat, OneOf, Strict, Type, type Static } from '../harness/schema.js';
import type { ManagerOptions } from '../residency/residency-manager.js';
import type { ResidencyManager } from '../residency/residency-manager-types.js';

export const ResidencyManagerConfigSchema = Strict({
  objectSizesBytes: Type.Array(Nat(), {
    description: 'size of each pageable object; object ids are the indices; at least one',
  }),
  queueCount: Nat({ description: 'command queues, at least 1' }),
  mode: OneOf(['inline', 'async'], {
    description:
      "'inline': Device3 present, paging on the submitting thread; 'async': no Device3, a paging worker the harness steps",
  }),
  startEvicted: Bool({
    description:
      "objects start EVICTED (Unreal: CREATE_NOT_RESIDENT) or RESIDENT (the library's default)",
  }),
  maxLatency: Nat({
    description:
      "MaxLatency, at least 1 (0 hangs the library; Unreal's RESIDENCY_PIPELINE_DEPTH is 6)",
  }),
  ticksPerSecond: Nat({ description: 'simulated clock ticks per second, at least 1' }),
  localBudgetBytes: Nat({ description: 'local segment budget the device reports' }),
  nonLocalBudgetBytes: Nat({ description: 'non-local segment budget the device reports' }),
  unrealBudgetCap: Bool({
    description:
      "Unreal's LocalMemoryBudgetLimit: the local budget is min(reported, limit), 0 when backgrounded",
  }),
  debugBudgetBytes: Int({
    description: 'D3D12.ResidencyDebugBudgetMB in bytes; -1 is off; only with unrealBudgetCap',
  }),
  slotCount: Nat({ description: 'slots in the residency-set pool, 1..4096' }),
  initialCapacity: Nat({ description: "entries of a set's first storage allocation, at least 2" }),
  // Optional: files written before it existed lack it (read as false).
  benchmarkTwin: Type.Optional(
    Bool({
      description:
        "the implementation side also drives a twin built in the benchmark's unchecked mode (no judge, no events) with the same commands: its answers and state must agree ('benchmark-mode-agrees'); absent means false",
    }),
  ),
});
export type ResidencyManagerSystemConfig = Static<typeof ResidencyManagerConfigSchema>;

/** Residency sets each side creates up front; set handles are taken modulo this. */
export const SET_COUNT = 4;

export interface ManagerSide {
  readonly manager: ResidencyManager;
  readonly config: ResidencyManagerSystemConfig;
  readonly env: RunEnv;
  readonly setIds: number[];
  /**
   * Highest generation observed before the current command (generations never go back).
   * Updated by `around` before it runs the command; the invariant only reads it.
   */
  highestGeneration: number;
  /** Evictions of objects whose last sync point was not complete when the Evict was issued. */
  readonly unsafeEvictions: string[];
  /** The implementation side's unchecked twin (configs with `benchmarkTwin`), else null. */
  readonly twin: ManagerSide | null;
  /** The first step at which the twin disagreed, described; null while it agrees. */
  twinDisagreement: string | null;
}

export const PROBES = [
  'split',
  'aged-trim',
  'pressure-trim',
  'wait-sync-point',
  'forced-fallback',
  'paging-queue-full',
  'stuck-set',
  'g-minus-one',
  'make-resident-failed',
  'evict-failed',
  'resident-moved-to-non-local',
  'execute-with-non-local-usage',
  'sync-point-ring-grown',
] as const;

/**
 * The implementation side: `make` builds a manager with the given options (the shipped class or a
 * mutant of it); configs with `benchmarkTwin` get a second one in unchecked mode as its twin.
 */
export function implementationSide(
  make: (options: ManagerOptions) => ResidencyManager,
  config: ResidencyManagerSystemConfig,
  env: RunEnv,
): ManagerSide {
  const twin =
    config.benchmarkTwin === true ? managerSide(make({ checked: false }), config, env) : null;
  return managerSide(make({}), config, env, twin);
}

/** Wraps a manager as a side: creates the sets and tracks every object in id order. */
export function managerSide(
  manager: ResidencyManager,
  config: ResidencyManagerSystemConfig,
  env: RunEnv,
  twin: ManagerSide | null = null,
): ManagerSide {
  const setIds: number[] = [];
  for (let i = 0; i < SET_COUNT; i++) setIds.push(manager.sets.createSet());
  for (let object = 0; object < manager.config.objectSizesBytes.length; object++)
    manager.beginTracking(object);
  manager.drainEvents();
  manager.gpu.drainCalls();
  const side: ManagerSide = {
    manager,
    config,
    env,
    setIds,
    highestGeneration: 0,
    unsafeEvictions: [],
    twin,
    twinDisagreement: null,
  };
  manager.gpu.evictObserver = (objects) => {
    const firstUncompleted = manager.firstUncompletedGeneration();
    if (firstUncompleted < 0) return;
    for (const object of objects) {
      const lastSync = manager.lastSyncPoint(object);
      if (lastSync >= firstUncompleted) {
        side.unsafeEvictions.push(
          `Evict of object ${object} whose last sync point ${lastSync} is not complete (the first uncompleted is ${firstUncompleted})`,
        );
      }
    }
  };
  return side;
}
