/**
 * Fence-delayed frees and a reusable-object pool in front of any sub-allocator, as an engine
 * would ship them (docs/spec/allocators.md#al-fence; docs/spec/engine.md#mem-8-1 FD3D12ManualFence;
 * docs/spec/engine.md#life-pool).
 *
 * Why it is O(1) per operation: the frame fence's next value never decreases, so releases
 * stamped with it are in stamp order already. Pending releases form one FIFO, and the pool keeps
 * one FIFO per size class: the front is the oldest stamp, so "is anything completed?" looks at
 * fronts only, and a pool hit that finds an uncompleted front knows nothing behind it completed.
 * Each FIFO is three growable typed-array rings in step (offset, size, stamp; see
 * number-deque.ts). A Map from offset to size class (-1 for a plain allocation) tells live
 * allocations apart.
 *
 * The policy (shared with models/deferred-free.ts): completed releases go back at endFrame and
 * when an allocation finds no room (then completed pooled objects go back too and the request is
 * tried once more); a pool hit takes the oldest completed object of its class.
 *
 * Steps are protected so the bug catalog (mutants/) can re-create a pitfall by overriding one.
 */
import { badFree, type BlockAllocator } from './allocator.js';
import { ContractError } from '../contract.js';
import {
  DeferredErrors,
  type DeferredFreeAllocator,
  type FrameFence,
  type PoolAcquireResult,
  type PoolConfig,
} from './deferred-free-types.js';
import { NumberDeque } from './number-deque.js';

const PLAIN = -1;

/** A FIFO of (offset, size, fence stamp) triples: three deques pushed and popped in step. */
export class StampQueue {
  private readonly offsets = new NumberDeque();
  private readonly sizes = new NumberDeque();
  private readonly stamps = new NumberDeque();

  get count(): number {
    return this.offsets.count;
  }

  push(offsetBytes: number, sizeBytes: number, fenceValue: number): void {
    this.offsets.push(offsetBytes);
    this.sizes.push(sizeBytes);
    this.stamps.push(fenceValue);
  }

  frontOffset(): number {
    return this.offsets.peekFront();
  }
  frontSize(): number {
    return this.sizes.peekFront();
  }
  frontStamp(): number {
    return this.stamps.peekFront();
  }

  pop(): void {
    this.offsets.popFront();
    this.sizes.popFront();
    this.stamps.popFront();
  }
}

export class DeferredFreeAllocatorImpl implements DeferredFreeAllocator {
  /** Live allocation offset -> size class (PLAIN for a plain allocation). */
  protected readonly liveClass = new Map<number, number>();
  /** Live allocation offset -> size in bytes. */
  protected readonly liveSize = new Map<number, number>();
  protected readonly pending = new StampQueue();
  protected readonly pooled: StampQueue[];
  protected pendingByteCount = 0;
  protected pooledByteCount = 0;
  protected pooledCount = 0;
  protected readonly objectSizesBytes: Float64Array;

  constructor(
    readonly inner: BlockAllocator,
    protected readonly fence: FrameFence,
    protected readonly pool: PoolConfig,
  ) {
    this.objectSizesBytes = Float64Array.from(pool.objectSizesBytes);
    this.pooled = pool.objectSizesBytes.map(() => new StampQueue());
  }

  get capacityBytes(): number {
    return this.inner.capacityBytes;
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    const offsetBytes = this.allocInner(sizeBytes, alignBytes);
    if (offsetBytes !== null) this.addLive(offsetBytes, sizeBytes, PLAIN);
    return offsetBytes;
  }

  release(offsetBytes: number): void {
    const sizeBytes = this.takeLive(offsetBytes);
    this.pending.push(offsetBytes, sizeBytes, this.releaseStamp());
    this.pendingByteCount += sizeBytes;
  }

  endFrame(): number[] {
    const returned: number[] = [];
    this.returnCompletedReleases(returned);
    return returned;
  }

  poolAcquire(sizeClass: number): PoolAcquireResult | null {
    if (!Number.isSafeInteger(sizeClass) || sizeClass < 0 || sizeClass >= this.pooled.length) {
      throw new ContractError(DeferredErrors.BAD_SIZE_CLASS, `no size class ${sizeClass}`);
    }
    const queue = this.pooled[sizeClass]!;
    if (queue.count > 0 && this.poolHitAllowed(queue.frontStamp())) {
      const offsetBytes = queue.frontOffset();
      const sizeBytes = queue.frontSize();
      queue.pop();
      this.pooledCount--;
      this.pooledByteCount -= sizeBytes;
      this.addLive(offsetBytes, sizeBytes, sizeClass);
      return { offsetBytes, hit: true };
    }
    const sizeBytes = this.objectSizesBytes[sizeClass]!;
    const offsetBytes = this.allocInner(sizeBytes, this.poolMissAlignBytes());
    if (offsetBytes === null) return null;
    this.addLive(offsetBytes, sizeBytes, sizeClass);
    return { offsetBytes, hit: false };
  }

  poolRelease(offsetBytes: number): void {
    const sizeClass = this.liveClass.get(offsetBytes);
    if (sizeClass === undefined) throw badFree(offsetBytes);
    if (sizeClass === PLAIN)
      throw new ContractError(
        DeferredErrors.NOT_POOLED,
        `allocation at ${offsetBytes} did not come from the pool`,
      );
    const sizeBytes = this.takeLive(offsetBytes);
    this.pooled[sizeClass]!.push(offsetBytes, sizeBytes, this.releaseStamp());
    this.pooledCount++;
    this.pooledByteCount += sizeBytes;
  }

  poolTrim(): number[] {
    const returned: number[] = [];
    this.trimCompletedPooled(returned);
    return returned.sort((a, b) => a - b);
  }

  pendingBytes(): number {
    return this.pendingByteCount;
  }

  pooledBytes(): number {
    return this.pooledByteCount;
  }

  heldCount(): number {
    return this.pending.count + this.pooledCount;
  }

  // ----- steps the bug catalog overrides -----

  /** What a release records: GetNextFenceToSignal(), the value this frame's GPU work will signal. */
  protected releaseStamp(): number {
    return this.fence.nextValueToSignal;
  }

  /** The one completion test: the GPU has passed the value stamped at release. */
  protected isComplete(fenceValue: number): boolean {
    return fenceValue <= this.fence.completedValue;
  }

  /** A pooled object may be handed out again only once its last GPU use completed. */
  protected poolHitAllowed(fenceValue: number): boolean {
    return this.isComplete(fenceValue);
  }

  protected poolMissAlignBytes(): number {
    return this.pool.objectAlignBytes;
  }

  /** The sub-allocator, and on failure one retry after giving back what the GPU is done with. */
  protected allocInner(sizeBytes: number, alignBytes: number): number | null {
    const first = this.inner.alloc(sizeBytes, alignBytes);
    if (first !== null || !this.anythingReclaimable()) return first;
    // Nobody asks which offsets went back here: reclaim without collecting them.
    this.returnCompletedReleases(null);
    this.trimCompletedPooled(null);
    return this.inner.alloc(sizeBytes, alignBytes);
  }

  /** Gives completed releases back to the sub-allocator in release order, appending their offsets to `returned` unless null. */
  protected returnCompletedReleases(returned: number[] | null): void {
    // Bounded by the queue length: each pass pops one entry.
    while (this.pending.count > 0 && this.isComplete(this.pending.frontStamp())) {
      const offsetBytes = this.pending.frontOffset();
      this.pendingByteCount -= this.pending.frontSize();
      this.pending.pop();
      this.inner.free(offsetBytes);
      returned?.push(offsetBytes);
    }
  }

  /** Gives completed pooled objects back to the sub-allocator, appending their offsets (class by class) to `returned` unless null. */
  protected trimCompletedPooled(returned: number[] | null): void {
    for (const queue of this.pooled) {
      while (queue.count > 0 && this.isComplete(queue.frontStamp())) {
        const offsetBytes = queue.frontOffset();
        this.pooledByteCount -= queue.frontSize();
        this.pooledCount--;
        queue.pop();
        this.giveBackPooled(offsetBytes);
        returned?.push(offsetBytes);
      }
    }
  }

  protected giveBackPooled(offsetBytes: number): void {
    this.inner.free(offsetBytes);
  }

  // ----- plumbing -----

  private anythingReclaimable(): boolean {
    if (this.pending.count > 0 && this.isComplete(this.pending.frontStamp())) return true;
    for (const queue of this.pooled)
      if (queue.count > 0 && this.isComplete(queue.frontStamp())) return true;
    return false;
  }

  protected addLive(offsetBytes: number, sizeBytes: number, sizeClass: number): void {
    this.liveClass.set(offsetBytes, sizeClass);
    this.liveSize.set(offsetBytes, sizeBytes);
  }

  /** Removes a live allocation and returns its size; BAD_FREE when none starts there. */
  protected takeLive(offsetBytes: number): number {
    const sizeBytes = this.liveSize.get(offsetBytes);
    if (sizeBytes === undefined) throw badFree(offsetBytes);
    this.liveSize.delete(offsetBytes);
    this.liveClass.delete(offsetBytes);
    return sizeBytes;
  }
}
