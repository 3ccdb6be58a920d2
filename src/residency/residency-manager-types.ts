/**
 * The residency-manager interface shared by the reference model (models/residency-manager.ts)
 * and the implementation (src/residency/residency-manager.ts). Spec:
 * docs/spec/residency-library.md#rl-4 to #rl-8, #rl-10, #rl-11; Unreal's settings in
 * docs/spec/engine.md#rs-2, #rs-5, #rs-6, #rs-8, #rs-9).
 */
import type { SimGpu } from '../gpu/sim-gpu.js';
import type { HResult, ResidencySetPool } from './residency-set-types.js';

/** Pressure threshold 0.7f: 0.699999988079071 as a double. */
export const TRIM_THRESHOLD = Math.fround(0.7);
export const MIN_GRACE_SECONDS = Math.fround(1.0);
export const MAX_GRACE_SECONDS = Math.fround(60.0);
/** MAXUINT64, the "never trim" grace period. */
export const NEVER_TRIM_TICKS = (1n << 64n) - 1n;
export const U64_MASK = (1n << 64n) - 1n;

export type ExecutionMode = 'inline' | 'async';

export interface ResidencyManagerConfig {
  /** Size of each pageable object; object ids are the indices. */
  readonly objectSizesBytes: readonly number[];
  readonly queueCount: number;
  /**
   * 'inline': Device3 present: ProcessPagingWork runs on the submitting thread and batches are
   * EnqueueMakeResident calls (paging counter starts at 0). 'async': no Device3: a paging
   * worker processes queued work with blocking MakeResident and CPU-signals the paging fence
   * (counter starts at 1); the harness chooses when the worker runs.
   */
  readonly mode: ExecutionMode;
  /** Objects start EVICTED (Unreal: CREATE_NOT_RESIDENT) or RESIDENT (the library's default). */
  readonly startEvicted: boolean;
  /** MaxLatency (Unreal's RESIDENCY_PIPELINE_DEPTH is 6); must be >= 1 (0 hangs the library). */
  readonly maxLatency: number;
  readonly ticksPerSecond: number;
  readonly localBudgetBytes: number;
  readonly nonLocalBudgetBytes: number;
  /** Unreal's LocalMemoryBudgetLimit: the local budget is min(reported, limit); 0 when backgrounded. */
  readonly unrealBudgetCap: boolean;
  /** D3D12.ResidencyDebugBudgetMB in bytes; -1 is off. Only with unrealBudgetCap. */
  readonly debugBudgetBytes: number;
  /** Slot pool size and first set allocation (residency-set). */
  readonly slotCount: number;
  readonly initialCapacity: number;
}

/** Contract-error codes for misuse the library leaves undefined. */
export const ManagerErrors = {
  /** BeginTrackingObject twice corrupts the LRU and double-counts ResidentSize. */
  ALREADY_TRACKED: 'ALREADY_TRACKED',
  NOT_TRACKED: 'NOT_TRACKED',
  /** EndTrackingObject of an object an open set or unfinished GPU work still references. */
  END_TRACKING_IN_USE: 'END_TRACKING_IN_USE',
  /** A set handed to Execute/MakeResident references an object that is no longer tracked. */
  SET_HOLDS_UNTRACKED: 'SET_HOLDS_UNTRACKED',
} as const;

export type ObjectStatus = 'untracked' | 'resident' | 'evicted';

/** `D` is the device the manager runs on: the simulated GPU in the harness. */
export interface ResidencyManager<D = SimGpu> {
  readonly gpu: D;
  readonly sets: ResidencySetPool;
  readonly config: ResidencyManagerConfig;
  /** Probe-style events of the last operations (drained by the system); null when not recorded. */
  drainEvents(): string[];

  beginTracking(object: number): void;
  endTracking(object: number): void;
  /**
   * ExecuteCommandLists(queue, lists, sets, count): `lists[i]` is what the GPU touches when list
   * i runs (the harness passes each set's contents), `sets[i]` its residency set or null.
   */
  executeCommandLists(
    queue: number,
    lists: readonly (readonly number[])[],
    sets: readonly (number | null)[],
  ): HResult;
  /** Unreal's MakeResident(queue, set) for queue-level operations (UpdateTileMappings). */
  makeResidentForQueue(queue: number, set: number): HResult;
  /** GetCurrentGPUSyncPoint / SignalFence(queue): consumes a generation. Returns the queue fence value. */
  signalFence(queue: number): number;
  /** Async mode: the worker dequeues and processes one work item. False if none was queued. */
  pagingWorkerStep(): boolean;
  /** Unreal: the window lost focus with EvictAllResidentResourcesInBackground on. */
  setBackground(on: boolean): void;

  // Inspection, used by the invariants. Lists are read-only views, valid until the next call
  // that changes the manager (the invariants read them after every step without copies).
  status(object: number): ObjectStatus;
  /** Resident list from head (stalest) to tail. */
  residentList(): readonly number[];
  evictedList(): readonly number[];
  counters(): { resident: number; evicted: number; residentSizeBytes: number };
  lastSyncPoint(object: number): number;
  /** LastUsedTimestamp in ticks. */
  lastUsedTimestamp(object: number): number;
  /** Generation of the first sync point not complete on the GPU (completed ones may not be dequeued yet), or -1. */
  firstUncompletedGeneration(): number;
  /** Generations of the in-flight sync points, head first. */
  syncPointGenerations(): readonly number[];
  currentGeneration(): number;
  /** Works queued and not yet dequeued by the worker. */
  queuedWorks(): number;
}
