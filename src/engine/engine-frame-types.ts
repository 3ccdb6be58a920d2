/**
 * The engine layer shared by the reference model (models/engine-frame.ts) and the implementation
 * (src/engine/engine-frame.ts): resources, command lists with their residency sets, payloads,
 * the frame fence and deferred deletion, composed over the residency manager (src/residency),
 * the sub-allocators and the fence-delayed free layer (src/alloc) and the simulated GPU
 * (src/gpu). Seeds: docs/spec/engine.md#rs-3, #rs-4, #rs-7, #rs-9;
 * docs/spec/engine.md#mem-2 to #mem-4, #mem-6 to #mem-9. docs/engine-frame.md explains the frame
 * loop.
 *
 * Units are abstract bytes (small integers). The pageable objects the residency manager and the
 * GPU know are fixed at construction (`objectLayout`); resources come and go on top of them.
 */
import type { HResult, ResidencySetPool } from '../residency/residency-set-types.js';
import type { SimGpu } from '../gpu/sim-gpu.js';
import type { LiveAllocation } from '../alloc/allocator.js';

export interface EngineFrameConfig {
  /** Pool heaps for placed resources (each a tracked pageable, sub-allocated by best fit). */
  readonly poolHeapCount: number;
  readonly poolHeapBytes: number;
  /** Placement granularity inside a pool heap (a power of two dividing poolHeapBytes). */
  readonly poolAlignBytes: number;
  /** The pool's single-allocation limit: larger requests are committed (the seed: half the pool). */
  readonly poolMaxAllocBytes: number;
  /** Device objects available to committed resources: one per entry, of that size. */
  readonly committedSlotBytes: readonly number[];
  /** The transient heap of the frame graph (one tracked pageable). */
  readonly transientHeapBytes: number;
  /** Backing heaps reserved resources commit into: each one tile of `tileBytes`. */
  readonly backingHeapCount: number;
  readonly tileBytes: number;
  /** Swap-chain back buffers and external/shared resources: device objects never tracked. */
  readonly backBufferCount: number;
  readonly externalCount: number;
  readonly untrackedBytes: number;
  /** Command-list objects in the pool (each owns one residency set). */
  readonly listCount: number;
  /** The submission cuts a flush into batches of at most this many recorded commands (at least one list each). */
  readonly maxCommandsPerBatch: number;
}

/** Where each pageable object sits in the manager's object table. */
export interface ObjectLayout {
  readonly poolHeapBase: number;
  readonly committedBase: number;
  readonly transientHeap: number;
  readonly backingBase: number;
  readonly backBufferBase: number;
  readonly externalBase: number;
  readonly queryHeap: number;
  readonly queryResult: number;
  /** Size of every object, indexed by object id. */
  readonly objectSizesBytes: readonly number[];
}

export function objectLayout(c: EngineFrameConfig): ObjectLayout {
  const sizes: number[] = [];
  const poolHeapBase = 0;
  for (let i = 0; i < c.poolHeapCount; i++) sizes.push(c.poolHeapBytes);
  const committedBase = sizes.length;
  for (const bytes of c.committedSlotBytes) sizes.push(bytes);
  const transientHeap = sizes.length;
  sizes.push(c.transientHeapBytes);
  const backingBase = sizes.length;
  for (let i = 0; i < c.backingHeapCount; i++) sizes.push(c.tileBytes);
  const backBufferBase = sizes.length;
  for (let i = 0; i < c.backBufferCount; i++) sizes.push(c.untrackedBytes);
  const externalBase = sizes.length;
  for (let i = 0; i < c.externalCount; i++) sizes.push(c.untrackedBytes);
  const queryHeap = sizes.length;
  sizes.push(1);
  const queryResult = sizes.length;
  sizes.push(1);
  return {
    poolHeapBase,
    committedBase,
    transientHeap,
    backingBase,
    backBufferBase,
    externalBase,
    queryHeap,
    queryResult,
    objectSizesBytes: sizes,
  };
}

export type ResourceKind =
  | 'committed'
  | 'placed'
  | 'reserved'
  | 'transient'
  | 'backbuffer'
  | 'external';

/** Creation flags (a bit mask), the inputs of the seed's routing ladder. */
export const CreateFlags = {
  /** Render target or depth stencil: RT/DS pools are off by default, so committed. */
  RENDER_TARGET: 1,
  /** ALLOW_SIMULTANEOUS_ACCESS (shared): never pooled. */
  SHARED: 2,
  /** A reserved (tiled) resource: no memory of its own, backing heaps committed later. */
  RESERVED: 4,
  /** Created with initial data: its pool block stays locked until the upload is done (`unlock`). */
  INITIAL_DATA: 8,
  /** An alignment above the pool's (MSAA's 4MB): committed. */
  HIGH_ALIGN: 16,
} as const;
export const CREATE_FLAG_MASK = 31;

/**
 * Recording paths: each records GPU commands that touch resources (the list's true references)
 * and registers what it touches in the list's residency set (UpdateResidency). `res2` is the
 * second resource of the paths that take two.
 */
export const RECORD_PATHS = [
  'barrier',
  'descriptorTable',
  'renderTarget',
  'clear',
  'copy', // res -> res2, both registered
  'indirectArgs', // res2 bound through a descriptor table, res the indirect-args buffer (registered by hand)
  'uavCounter', // res a UAV through a descriptor table, res2 its counter buffer (registered by hand)
  'rayTrace', // res the output through a descriptor table, res2 the shader table (registered by hand)
  'query', // writes the query heap; the submission thread resolves it on a fresh list
] as const;
export type RecordPath = (typeof RECORD_PATHS)[number];

export interface CreatedResource {
  readonly id: number;
  readonly kind: ResourceKind;
  /** The pageable the resource lives in (committed slot, pool heap, transient heap, untracked object), -1 for reserved. */
  readonly object: number;
  /** Byte offset inside its heap (placed, transient), else 0. */
  readonly offsetBytes: number;
  readonly sizeBytes: number;
}

export interface FlushResult {
  /** The lists executed, in order, batch by batch. */
  readonly batches: number[][];
  /** ExecuteCommandLists' result per batch. */
  readonly hrs: HResult[];
  /** Commits applied (reserved resource ids, in order). */
  readonly commits: number[];
  /** True when a query-resolve list ran. */
  readonly resolved: boolean;
}

export interface EndFrameResult {
  /** The queue fence value the frame signalled. */
  readonly value: number;
  /** What the end-of-frame flush executed. */
  readonly flush: FlushResult;
}

/**
 * What one defrag step did with the block it picked: moved it from `fromBytes` to `toBytes`, or
 * (moved false) allocated `toBytes` as the destination, found it no lower (or no list to copy
 * with) and released that destination again (through the frame fence, like any release).
 */
export interface DefragMove {
  readonly id: number;
  readonly fromBytes: number;
  readonly toBytes: number;
  readonly moved: boolean;
}

/**
 * What the engine needs of the residency layer and the device. The harness builds it over a
 * residency manager and may watch the calls (the set pool and ExecuteCommandLists) as a judge.
 */
export interface ResidencyPort {
  readonly gpu: SimGpu;
  readonly sets: Pick<ResidencySetPool, 'createSet' | 'open' | 'insert' | 'close'>;
  beginTracking(object: number): void;
  endTracking(object: number): void;
  executeCommandLists(
    queue: number,
    lists: readonly (readonly number[])[],
    sets: readonly (number | null)[],
  ): HResult;
  makeResidentForQueue(queue: number, set: number): HResult;
  signalFence(queue: number): number;
}

/** Optional event sink (probe names); the model side counts them. */
export type EngineEvents = (event: string) => void;

export const EngineErrors = {
  /** A resource handle that names no live resource of a kind the command accepts. */
  BAD_RESOURCE: 'ENGINE_BAD_RESOURCE',
  /** A list handle that is not in the state the command needs. */
  BAD_LIST: 'ENGINE_BAD_LIST',
} as const;

export interface EngineFrame {
  readonly layout: ObjectLayout;
  /** Creates a resource through the routing ladder; null when no memory is left for it. */
  create(sizeBytes: number, flags: number): CreatedResource | null;
  /** The initial-data upload finished: the resource's pool block may be moved by defrag. */
  unlock(id: number): void;
  /** Releases a resource: its memory returns (or its pageable ends tracking) once the frame's fence completes. */
  release(id: number): void;
  /** A frame-graph transient placed in the transient heap, alive for passes [firstPass, lastPass]. */
  createTransient(sizeBytes: number, firstPass: number, lastPass: number): CreatedResource | null;
  /** ObtainCommandList: reuses a pooled list (Reset) or a new one; opens its set. Null when the pool is exhausted. */
  openList(): number | null;
  record(list: number, path: RecordPath, res: number, res2: number): void;
  /** Close() on the recording thread (path A closes the set when nothing is deferred). */
  closeList(list: number): void;
  /** Puts a closed list into the current payload's execute phase. */
  submit(list: number): void;
  /** SetReservedBufferCommitSize: an update-reserved-resources phase in the payload stream. */
  commitReserved(id: number, tiles: number): void;
  /** FlushBatchedPayloads on the submission thread. */
  flush(): FlushResult;
  /** Tries to move the highest unlocked block of the pool heap down; null when no destination was allocated. */
  defrag(heap: number): DefragMove | null;
  /** End of frame: closes, submits and flushes what is open, signals the frame fence. */
  endFrame(): EndFrameResult;

  // Inspection, for the judges.
  /** Backing heaps of a reserved resource now (the tile mappings). */
  backingOf(id: number): readonly number[];
  /** Frames whose fence completed on the GPU. */
  completedFrames(): number;
  /** The blocks a pool heap's sub-allocator holds (live to it: in use, pending release or pooled), ascending by offset. */
  heldBlocks(heap: number): readonly LiveAllocation[];
}
