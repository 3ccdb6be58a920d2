/**
 * Reference model of fence-delayed frees and the reusable-object pool
 * (docs/spec/allocators.md#al-fence; docs/spec/engine.md#mem-8-1; docs/spec/engine.md#life-pool),
 * wrapped around the reference model of a sub-allocator (models/alloc-index.ts).
 *
 * Written for obviousness: three plain arrays (live allocations, pending releases, pooled
 * objects), every question a filter over them.
 *
 * The rule: a release records the fence's next value to signal; the bytes go back to the
 * sub-allocator only once completedValue >= that value. A pooled object is reused only if its
 * stamp has completed: "no CPU owner" never proves the GPU is done.
 *
 * Choices the spec leaves open, made here and followed by the implementation:
 * - Completed releases go back at endFrame (after the fence advanced), in release order, and when
 *   an allocation finds no room (then completed pooled objects go back too, and the request is
 *   tried once more). Nothing goes back on its own when the GPU progresses.
 * - A pool hit takes the oldest pooled object of the size class whose stamp has completed.
 *   Pooled objects are allocated with the config's object size and alignment.
 * - poolTrim returns every completed pooled object; endFrame and poolTrim report the returned
 *   offsets (endFrame in release order, poolTrim ascending).
 * - Errors: release or poolRelease of an offset that starts no live allocation (double release,
 *   interior, unknown) is BAD_FREE; poolRelease of a plain allocation is DEFERRED_NOT_POOLED; a
 *   size class out of range is DEFERRED_BAD_SIZE_CLASS; bad requests are the sub-allocator's.
 */
import type { BlockAllocator } from '../src/alloc/allocator.js';
import { badFree } from '../src/alloc/allocator.js';
import { ContractError } from '../src/contract.js';
import {
  DeferredErrors,
  type DeferredFreeAllocator,
  type FrameFence,
  type PoolAcquireResult,
  type PoolConfig,
} from '../src/alloc/deferred-free-types.js';

interface LiveEntry {
  offsetBytes: number;
  sizeBytes: number;
  /** The size class for a pool-acquired object, else null. */
  sizeClass: number | null;
}

interface StampedEntry extends LiveEntry {
  /** The fence value to signal when it was released. */
  fenceValue: number;
}

export class DeferredFreeModel implements DeferredFreeAllocator {
  private live: LiveEntry[] = [];
  private pending: StampedEntry[] = [];
  private pooled: StampedEntry[] = [];

  constructor(
    readonly inner: BlockAllocator,
    private readonly fence: FrameFence,
    private readonly pool: PoolConfig,
  ) {}

  get capacityBytes(): number {
    return this.inner.capacityBytes;
  }

  private completed(entry: StampedEntry): boolean {
    return entry.fenceValue <= this.fence.completedValue;
  }

  private allocInner(sizeBytes: number, alignBytes: number): number | null {
    const first = this.inner.alloc(sizeBytes, alignBytes);
    if (first !== null) return first;
    const reclaimable =
      this.pending.some((entry) => this.completed(entry)) ||
      this.pooled.some((entry) => this.completed(entry));
    if (!reclaimable) return null;
    this.returnCompletedReleases();
    this.trimCompletedPooled();
    return this.inner.alloc(sizeBytes, alignBytes);
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    const offsetBytes = this.allocInner(sizeBytes, alignBytes);
    if (offsetBytes !== null) this.live.push({ offsetBytes, sizeBytes, sizeClass: null });
    return offsetBytes;
  }

  /** The live entry starting at `offsetBytes`, or undefined. */
  private findLive(offsetBytes: number): LiveEntry | undefined {
    for (const entry of this.live) if (entry.offsetBytes === offsetBytes) return entry;
    return undefined;
  }

  private takeLive(offsetBytes: number): LiveEntry {
    const entry = this.findLive(offsetBytes);
    if (entry === undefined) throw badFree(offsetBytes);
    this.live.splice(this.live.indexOf(entry), 1);
    return entry;
  }

  release(offsetBytes: number): void {
    const entry = this.takeLive(offsetBytes);
    this.pending.push({
      offsetBytes: entry.offsetBytes,
      sizeBytes: entry.sizeBytes,
      sizeClass: entry.sizeClass,
      fenceValue: this.fence.nextValueToSignal,
    });
  }

  private returnCompletedReleases(): number[] {
    const done = this.pending.filter((entry) => this.completed(entry));
    this.pending = this.pending.filter((entry) => !this.completed(entry));
    for (const entry of done) this.inner.free(entry.offsetBytes);
    return done.map((entry) => entry.offsetBytes);
  }

  private trimCompletedPooled(): number[] {
    const done = this.pooled.filter((entry) => this.completed(entry));
    this.pooled = this.pooled.filter((entry) => !this.completed(entry));
    for (const entry of done) this.inner.free(entry.offsetBytes);
    return done.map((entry) => entry.offsetBytes).sort((a, b) => a - b);
  }

  endFrame(): number[] {
    return this.returnCompletedReleases();
  }

  poolAcquire(sizeClass: number): PoolAcquireResult | null {
    const sizeBytes = this.pool.objectSizesBytes[sizeClass];
    if (!Number.isSafeInteger(sizeClass) || sizeBytes === undefined) {
      throw new ContractError(DeferredErrors.BAD_SIZE_CLASS, `no size class ${sizeClass}`);
    }
    const index = this.pooled.findIndex(
      (entry) => entry.sizeClass === sizeClass && this.completed(entry),
    );
    if (index !== -1) {
      const entry = this.pooled.splice(index, 1)[0]!;
      this.live.push({ offsetBytes: entry.offsetBytes, sizeBytes: entry.sizeBytes, sizeClass });
      return { offsetBytes: entry.offsetBytes, hit: true };
    }
    const offsetBytes = this.allocInner(sizeBytes, this.pool.objectAlignBytes);
    if (offsetBytes === null) return null;
    this.live.push({ offsetBytes, sizeBytes, sizeClass });
    return { offsetBytes, hit: false };
  }

  poolRelease(offsetBytes: number): void {
    const entry = this.findLive(offsetBytes);
    if (entry === undefined) throw badFree(offsetBytes);
    if (entry.sizeClass === null)
      throw new ContractError(
        DeferredErrors.NOT_POOLED,
        `allocation at ${offsetBytes} did not come from the pool`,
      );
    this.takeLive(offsetBytes);
    this.pooled.push({
      offsetBytes: entry.offsetBytes,
      sizeBytes: entry.sizeBytes,
      sizeClass: entry.sizeClass,
      fenceValue: this.fence.nextValueToSignal,
    });
  }

  poolTrim(): number[] {
    return this.trimCompletedPooled();
  }

  pendingBytes(): number {
    let sum = 0;
    for (const entry of this.pending) sum += entry.sizeBytes;
    return sum;
  }

  pooledBytes(): number {
    let sum = 0;
    for (const entry of this.pooled) sum += entry.sizeBytes;
    return sum;
  }

  heldCount(): number {
    return this.pending.length + this.pooled.length;
  }
}
