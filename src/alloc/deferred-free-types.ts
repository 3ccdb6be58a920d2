/**
 * Fence-delayed frees and a pool of reusable objects in front of a sub-allocator
 * (docs/spec/allocators.md#al-fence; docs/spec/engine.md#mem-8-1
 * FD3D12ManualFence; docs/spec/engine.md#life-pool), shared by model and implementation.
 */
import type { BlockAllocator } from './allocator.js';

/** The frame fence as an allocator sees it (FD3D12ManualFence): it reads, it never advances. */
export interface FrameFence {
  /** GetNextFenceToSignal(): the value the current frame's work will signal at end of frame. */
  readonly nextValueToSignal: number;
  /** GetCompletedFenceValue(): moved only by the (simulated) GPU. */
  readonly completedValue: number;
}

/** The reusable-object pool's size classes: pooled objects have these sizes and one alignment. */
export interface PoolConfig {
  readonly objectSizesBytes: readonly number[];
  readonly objectAlignBytes: number;
}

export const DeferredErrors = {
  /** poolRelease of a live allocation that did not come from poolAcquire. */
  NOT_POOLED: 'DEFERRED_NOT_POOLED',
  /** poolAcquire of a size class the pool does not have. */
  BAD_SIZE_CLASS: 'DEFERRED_BAD_SIZE_CLASS',
} as const;

export interface PoolAcquireResult {
  readonly offsetBytes: number;
  /** True when a pooled object was reused, false when a new one was allocated. */
  readonly hit: boolean;
}

export interface DeferredFreeAllocator {
  readonly capacityBytes: number;
  /** The sub-allocator the bytes come from and return to. */
  readonly inner: BlockAllocator;
  /**
   * A new allocation from the sub-allocator. When it has no room, first gives back whatever the
   * GPU has finished with (completed releases, completed pooled objects) and tries once more.
   */
  alloc(sizeBytes: number, alignBytes: number): number | null;
  /** Releases a live allocation: its bytes return once the completed value reaches the frame's value. */
  release(offsetBytes: number): void;
  /** End of frame (after the fence advanced): returns completed releases to the sub-allocator; their offsets. */
  endFrame(): number[];
  /** A pooled object of `sizeClass` whose last GPU use has completed, else a new one (null if no room). */
  poolAcquire(sizeClass: number): PoolAcquireResult | null;
  /** Puts a pool-acquired object back into the pool, stamped with the frame's value. */
  poolRelease(offsetBytes: number): void;
  /** Returns every pooled object whose stamp has completed to the sub-allocator; offsets ascending. */
  poolTrim(): number[];
  /** Bytes released but not yet returned (waiting for the GPU, or for endFrame). */
  pendingBytes(): number;
  /** Bytes held by pooled objects. */
  pooledBytes(): number;
  /** Number of pending releases plus pooled objects. */
  heldCount(): number;
}
