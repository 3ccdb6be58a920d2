/**
 * The `engine-frame` system's config and its side: the engine (model or implementation) over its
 * residency manager, the set-pool watch on the port the engine is given, and what the side records
 * of resources, lists and frames for its judges (src/systems/engine-frame-judges.ts).
 */
import type { RunEnv } from '../harness/system.js';
import { Bool, Int, Nat, Strict, Type, type Static } from '../harness/schema.js';
import { ResidencyManagerModel } from '../../models/residency-manager.js';
import { ResidencyManagerImpl } from '../residency/residency-manager.js';
import type { ResidencyManager } from '../residency/residency-manager-types.js';
import { EngineFrameModel } from '../../models/engine-frame.js';
import { EngineFrameImpl } from '../engine/engine-frame.js';
import {
  objectLayout,
  type CreatedResource,
  type EngineEvents,
  type EngineFrame,
  type EngineFrameConfig,
  type ResidencyPort,
} from '../engine/engine-frame-types.js';

export const EngineFrameConfigSchema = Strict({
  poolHeapCount: Nat({ description: 'pool heaps for placed resources, at least 1' }),
  poolHeapBytes: Nat({ description: 'bytes of each pool heap, a multiple of poolAlignBytes' }),
  poolAlignBytes: Nat({
    description: 'placement granularity in pool and transient heaps, a power of two',
  }),
  poolMaxAllocBytes: Nat({
    description: "the pool's single-allocation limit (larger requests are committed)",
  }),
  committedSlotBytes: Type.Array(Nat(), {
    description: 'device objects for committed resources, one per entry, of that size',
  }),
  transientHeapBytes: Nat({ description: 'bytes of the transient heap of the frame graph' }),
  backingHeapCount: Nat({ description: 'one-tile backing heaps reserved resources commit into' }),
  tileBytes: Nat({ description: 'bytes of a backing heap (a tile)' }),
  backBufferCount: Nat({ description: 'swap-chain back buffers (never tracked)' }),
  externalCount: Nat({ description: 'external/shared resources (never tracked)' }),
  untrackedBytes: Nat({ description: 'bytes of each back buffer and external resource' }),
  listCount: Nat({ description: 'command-list objects in the pool, at least 1' }),
  maxCommandsPerBatch: Nat({
    description:
      'recorded commands per ExecuteCommandLists batch (at least one list each), at least 1',
  }),
  startEvicted: Bool({
    description: 'tracked objects are created EVICTED (Unreal: CREATE_NOT_RESIDENT)',
  }),
  maxLatency: Nat({ description: "the manager's MaxLatency, at least 1" }),
  ticksPerSecond: Nat({ description: 'simulated clock ticks per second, at least 1' }),
  localBudgetBytes: Nat({ description: 'local budget the device reports' }),
  debugBudgetBytes: Int({ description: 'D3D12.ResidencyDebugBudgetMB in bytes; -1 is off' }),
});
export type EngineSystemConfig = Static<typeof EngineFrameConfigSchema>;

/** What the side knows of a resource, from the engine's answers and the commands. */
interface ResourceInfo {
  readonly kind: CreatedResource['kind'];
  readonly object: number;
  offsetBytes: number;
  readonly sizeBytes: number;
  locked: boolean;
  /** Transients: the pass lifetime the command asked for. */
  readonly firstPass: number;
  readonly lastPass: number;
}

export interface EngineSide {
  readonly engine: EngineFrame;
  readonly manager: ResidencyManager;
  readonly config: EngineSystemConfig;
  readonly env: RunEnv;
  /** Resources the commands may reference: untracked ones, then the application's, in creation order. */
  readonly live: number[];
  /** The application's releasable resources (committed, placed, reserved). */
  readonly owned: number[];
  /** This frame's transients. */
  readonly transients: number[];
  readonly info: (ResourceInfo | undefined)[];
  readonly recording: number[];
  readonly closed: number[];
  /** Per list id: resources its commands touch since it was opened. */
  readonly touchedBy: number[][];
  /** Pool bytes executed lists read: heap object, offset, size, frame stamp (4 numbers each). */
  readonly reads: number[];
  /** Pool blocks released: heap object, offset, size, frame stamp (4 numbers each). */
  readonly releases: number[];
  /** Queue fence value of each ended frame. */
  readonly frameValues: number[];
  /** How many of them the GPU completed, as last read. */
  framesDone: number;
  /** Set-pool watch: closes of closed sets and sets submitted open. */
  readonly closeLog: string[];
  /** Set-pool watch: inserts into closed sets. */
  readonly insertLog: string[];
  readonly handoutLog: string[];
  readonly defragLog: string[];
  /** Objects evicted at least once (for the re-residency probe). */
  readonly everEvicted: Uint8Array;
}

/** The engine's part of the system config (the rest configures the residency manager under it). */
export function engineConfigOf(c: EngineSystemConfig): EngineFrameConfig {
  return c;
}

export function managerConfig(c: EngineSystemConfig) {
  return {
    objectSizesBytes: objectLayout(c).objectSizesBytes,
    queueCount: 1,
    mode: 'inline' as const,
    startEvicted: c.startEvicted,
    maxLatency: c.maxLatency,
    ticksPerSecond: c.ticksPerSecond,
    localBudgetBytes: c.localBudgetBytes,
    nonLocalBudgetBytes: 0,
    unrealBudgetCap: true,
    debugBudgetBytes: c.debugBudgetBytes,
    slotCount: c.listCount + 3,
    initialCapacity: 4,
  };
}

/** The residency port over a manager, with the set-pool watch of the side. */
function watchedPort(
  manager: ResidencyManager,
  side: { closeLog: string[]; insertLog: string[] },
): ResidencyPort {
  const sets = manager.sets;
  return {
    gpu: manager.gpu,
    sets: {
      createSet: () => sets.createSet(),
      open: (set) => sets.open(set),
      insert: (set, object) => {
        if (!sets.isOpen(set)) {
          // The original writes through slot 0xFFFFFFFF here; the watch records it instead.
          side.insertLog.push(`object ${object} inserted into set ${set}, which is closed`);
          return false;
        }
        return sets.insert(set, object);
      },
      close: (set) => {
        if (!sets.isOpen(set)) side.closeLog.push(`set ${set} closed a second time`);
        return sets.close(set);
      },
    },
    beginTracking: (object) => manager.beginTracking(object),
    endTracking: (object) => manager.endTracking(object),
    executeCommandLists: (queue, lists, setIds) => {
      for (const set of setIds)
        if (set !== null && sets.isOpen(set))
          side.closeLog.push(
            `set ${set} reached ExecuteCommandLists still open (closed on neither path)`,
          );
      return manager.executeCommandLists(queue, lists, setIds);
    },
    makeResidentForQueue: (queue, set) => {
      if (sets.isOpen(set)) side.closeLog.push(`set ${set} reached MakeResident still open`);
      return manager.makeResidentForQueue(queue, set);
    },
    signalFence: (queue) => manager.signalFence(queue),
  };
}

export function engineSide(
  config: EngineSystemConfig,
  env: RunEnv,
  manager: ResidencyManager,
  makeEngine: (config: EngineFrameConfig, port: ResidencyPort, events: EngineEvents) => EngineFrame,
): EngineSide {
  const logs = { closeLog: [] as string[], insertLog: [] as string[] };
  const engine = makeEngine(engineConfigOf(config), watchedPort(manager, logs), (event) =>
    env.probe(event),
  );
  const side: EngineSide = {
    engine,
    manager,
    config,
    env,
    live: [],
    owned: [],
    transients: [],
    info: [],
    recording: [],
    closed: [],
    touchedBy: Array.from({ length: config.listCount }, () => []),
    reads: [],
    releases: [],
    frameValues: [],
    framesDone: 0,
    closeLog: logs.closeLog,
    insertLog: logs.insertLog,
    handoutLog: [],
    defragLog: [],
    everEvicted: new Uint8Array(engine.layout.objectSizesBytes.length),
  };
  const L = engine.layout;
  for (let i = 0; i < config.backBufferCount + config.externalCount; i++) {
    const id = 2 + i;
    side.live.push(id);
    side.info[id] = {
      kind: i < config.backBufferCount ? 'backbuffer' : 'external',
      object: L.backBufferBase + i,
      offsetBytes: 0,
      sizeBytes: config.untrackedBytes,
      locked: false,
      firstPass: 0,
      lastPass: 0,
    };
  }
  manager.drainEvents();
  manager.gpu.drainCalls();
  return side;
}

export function createEngineModel(config: EngineSystemConfig, env: RunEnv): EngineSide {
  return engineSide(
    config,
    env,
    new ResidencyManagerModel(managerConfig(config)),
    (c, port, events) => new EngineFrameModel(c, port, events),
  );
}

export function createEngineImpl(config: EngineSystemConfig, env: RunEnv): EngineSide {
  return engineSide(
    config,
    env,
    new ResidencyManagerImpl(managerConfig(config)),
    (c, port, events) => new EngineFrameImpl(c, port, events),
  );
}
