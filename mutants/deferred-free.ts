/**
 * Bug catalog for `deferred-free`: each mutant re-creates one pitfall of fence-delayed frees or
 * pooled reuse (docs/spec/allocators.md#al-fence; docs/spec/engine.md#mem-8-1;
 * docs/spec/engine.md#life-pool) by overriding one step of the shipped implementation.
 */
import { mutantsOf } from './define.js';
import type { AnyMutant } from '../src/harness/system.js';
import { createSubAllocator } from '../src/alloc/index.js';
import { DeferredFreeAllocatorImpl } from '../src/alloc/deferred-free.js';
import type { BlockAllocator } from '../src/alloc/allocator.js';
import type {
  FrameFence,
  PoolAcquireResult,
  PoolConfig,
} from '../src/alloc/deferred-free-types.js';
import { deferredFreeSystem, deferredSide } from '../src/systems/deferred-free.js';

type DeferredClass = new (
  inner: BlockAllocator,
  fence: FrameFence,
  pool: PoolConfig,
) => DeferredFreeAllocatorImpl;

const mutant = mutantsOf(deferredFreeSystem, (Deferred: DeferredClass, config, env) =>
  deferredSide(config, env, (c, fence) => new Deferred(createSubAllocator(c.kind, c), fence, c)),
);

export const DEFERRED_FREE_MUTANTS: AnyMutant[] = [
  mutant(
    'deferred-release-at-next-value',
    'gpu-in-flight-untouched',
    "A release is returned once the fence's next value to signal has passed its stamp instead of the completed value: at end of frame the bytes go back while the GPU still runs that frame",
    class extends DeferredFreeAllocatorImpl {
      protected override isComplete(fenceValue: number): boolean {
        return fenceValue < this.fence.nextValueToSignal;
      }
    },
  ),
  mutant(
    'deferred-release-stamps-completed-value',
    'gpu-in-flight-untouched',
    "A release records the fence's completed value instead of its next value to signal, so the bytes look finished already and come back while this frame's GPU work still reads them",
    class extends DeferredFreeAllocatorImpl {
      protected override releaseStamp(): number {
        return this.fence.completedValue;
      }
    },
  ),
  mutant(
    'pool-hit-skips-completion-check',
    'gpu-in-flight-untouched',
    'A pool hit reuses the oldest pooled object because no CPU owner holds it, without checking that the GPU finished its last use (the seed: the pool being idle only means the application is not taking it)',
    class extends DeferredFreeAllocatorImpl {
      protected override poolHitAllowed(): boolean {
        return true;
      }
    },
  ),
  mutant(
    'pool-trim-leaks',
    'accounting',
    'poolTrim drops completed pooled objects from the pool without freeing them in the sub-allocator: pending bytes never go down and an idle allocator never becomes pristine',
    class extends DeferredFreeAllocatorImpl {
      protected override giveBackPooled(): void {}
    },
  ),
  mutant(
    'deferred-double-release-accepted',
    'accounting',
    'release does not check that the offset is still live: a second release queues the same bytes twice and the sub-allocator later sees a double free',
    class extends DeferredFreeAllocatorImpl {
      protected override takeLive(offsetBytes: number): number {
        const sizeBytes = this.liveSize.get(offsetBytes);
        this.liveSize.delete(offsetBytes);
        this.liveClass.delete(offsetBytes);
        return sizeBytes ?? 0;
      }
    },
  ),
  mutant(
    'deferred-no-reclaim-retry',
    'no-false-out-of-memory',
    'An allocation that finds no room answers null at once, though completed releases and pooled objects would free enough bytes',
    class extends DeferredFreeAllocatorImpl {
      protected override allocInner(sizeBytes: number, alignBytes: number): number | null {
        return this.inner.alloc(sizeBytes, alignBytes);
      }
    },
  ),
  mutant(
    'pool-hit-any-size-class',
    'live-ranges-sound',
    'A pool whose own size class has nothing completed hands out a completed object of another class: a smaller object than asked for, so the caller writes into its neighbour',
    class extends DeferredFreeAllocatorImpl {
      override poolAcquire(sizeClass: number): PoolAcquireResult | null {
        const own = this.pooled[sizeClass];
        if (own !== undefined && !(own.count > 0 && this.isComplete(own.frontStamp()))) {
          for (const queue of this.pooled) {
            if (queue.count > 0 && this.isComplete(queue.frontStamp())) {
              const offsetBytes = queue.frontOffset();
              const sizeBytes = queue.frontSize();
              queue.pop();
              this.pooledCount--;
              this.pooledByteCount -= sizeBytes;
              this.addLive(offsetBytes, sizeBytes, sizeClass);
              return { offsetBytes, hit: true };
            }
          }
        }
        return super.poolAcquire(sizeClass);
      }
    },
  ),
  mutant(
    'deferred-held-count-skips-pooled',
    'accounting',
    'heldCount() counts the pending releases only, not the pooled objects (the pool kept its own count and nobody added it): a caller waiting for heldCount() to reach 0 before tearing the heap down frees it under pooled objects',
    class extends DeferredFreeAllocatorImpl {
      override heldCount(): number {
        return this.pending.count;
      }
    },
  ),
  mutant(
    'deferred-capacity-net-of-held',
    'accounting',
    'capacityBytes reports the heap net of the bytes held back (pending releases and pooled objects), a number meant for "how much could I still get", under the name of the fixed capacity',
    class extends DeferredFreeAllocatorImpl {
      override get capacityBytes(): number {
        return this.inner.capacityBytes - this.pendingByteCount - this.pooledByteCount;
      }
    },
  ),
];
