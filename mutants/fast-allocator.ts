/**
 * Bug catalog for `fast-allocator` and `fast-constant-allocator`: each mutant re-creates one
 * pitfall of bump-page upload allocators (docs/spec/engine.md#mem-1-2-4, #mem-5-3, #mem-5-4) by
 * overriding one step of the shipped implementation (src/alloc/upload-pages.ts).
 */
import { mutantsOf } from './define.js';
import type { AnyMutant } from '../src/harness/system.js';
import { FastAllocatorImpl, FastConstantAllocatorImpl } from '../src/alloc/upload-pages.js';
import type { FenceView, UploadHeap, UploadLocation } from '../src/alloc/upload-pages-types.js';
import { fastAllocatorSystem, fastSide } from '../src/systems/fast-allocator.js';
import {
  constantSide,
  fastConstantAllocatorSystem,
} from '../src/systems/fast-constant-allocator.js';

type FastClass = new (
  heap: UploadHeap,
  fence: FenceView,
  pageSizeBytes: number,
  minPagesToRetain: number,
) => FastAllocatorImpl;
type ConstantClass = new (
  heap: UploadHeap,
  fence: FenceView,
  pageSizeBytes: number,
  minPagesToRetain: number,
) => FastConstantAllocatorImpl;

const fast = mutantsOf(fastAllocatorSystem, (Impl: FastClass, config, env) =>
  fastSide(
    (heap, fence) => new Impl(heap, fence, config.pageSizeBytes, config.minPagesToRetain),
    config,
    env,
  ),
);
const constant = mutantsOf(fastConstantAllocatorSystem, (Impl: ConstantClass, config, env) =>
  constantSide(
    (heap, fence) => new Impl(heap, fence, config.pageSizeBytes, config.minPagesToRetain),
    config,
    env,
  ),
);

export const FAST_ALLOCATOR_MUTANTS: AnyMutant[] = [
  fast(
    'fast-ignores-alignment',
    'within-page-aligned',
    'The bytes start at the raw cursor: the alignment is validated but never applied',
    class extends FastAllocatorImpl {
      protected override alignOffset(cursorBytes: number): number {
        return cursorBytes;
      }
    },
  ),
  fast(
    'fast-fit-ignores-padding',
    'within-page-aligned',
    'The fit test measures the request from the unaligned cursor, so the alignment padding can push the bytes past the end of the page',
    class extends FastAllocatorImpl {
      protected override fits(_offsetBytes: number, sizeBytes: number): boolean {
        return this.cursorBytes + sizeBytes <= this.pageSizeBytes;
      }
    },
  ),
  fast(
    'fast-forwards-exact-page-size',
    'within-page-aligned',
    'The forwarding test is off by one (size >= page size): a request of exactly one page gets a dedicated buffer although a page holds it',
    class extends FastAllocatorImpl {
      protected override isForwarded(sizeBytes: number): boolean {
        return sizeBytes >= this.pageSizeBytes;
      }
    },
  ),
  fast(
    'fast-cursor-bump-lost',
    'no-overlap',
    'The cursor moves to the aligned start of a hand-out but the size is never added (the bump lands in a local copy): the next request on the page starts inside this one',
    class extends FastAllocatorImpl {
      protected override advanceCursor(offsetBytes: number): void {
        this.cursorBytes = offsetBytes;
      }
    },
  ),
  fast(
    'fast-page-stamped-with-completed',
    'page-reuse-after-fence',
    'A retired page is stamped with the value the GPU has completed instead of the value its frame will signal (GetCompletedFenceValue for GetNextFenceToSignal, docs/spec/engine.md#mem-8-1): it is recycled while the GPU may still read it',
    class extends FastAllocatorImpl {
      protected override retireFenceValue(): number {
        return this.fence.completedValue;
      }
    },
  ),
  fast(
    'fast-reuse-one-value-early',
    'page-reuse-after-fence',
    'The completion test is off by one (fence value <= completed + 1): a page is recycled one frame before the GPU is done with it',
    class extends FastAllocatorImpl {
      protected override isComplete(fenceValue: number): boolean {
        return fenceValue <= this.fence.completedValue + 1;
      }
    },
  ),
  fast(
    'fast-forwarded-freed-at-cleanup',
    'destroyed-while-in-flight',
    'Cleanup destroys every dedicated buffer of a forwarded request, as if the frame that used it were over',
    class extends FastAllocatorImpl {
      protected override cleanupForwarded(): void {
        while (this.forwarded.count > 0) this.heap.destroyBuffer(this.forwarded.shift());
      }
    },
  ),
  fast(
    'fast-cleanup-ignores-minimum',
    'retained-bound',
    'Cleanup destroys every completed pool page, ignoring minPagesToRetain: the next frames create pages again',
    class extends FastAllocatorImpl {
      protected override cleanupPages(): void {
        while (this.pool.count > 0 && this.isComplete(this.pool.fences.peekFront()))
          this.heap.destroyBuffer(this.pool.shift());
      }
    },
  ),
  fast(
    'fast-cleanup-keeps-pages',
    'retained-bound',
    'Cleanup never destroys pool pages: the pool keeps the high-water mark of every burst',
    class extends FastAllocatorImpl {
      protected override cleanupPages(): void {}
    },
  ),
  fast(
    'fast-minimum-read-once',
    'retained-bound',
    'The minimum is read once, when the allocator is made: a value set at run time is accepted and ignored, so cleanup keeps the old number of pages',
    class extends FastAllocatorImpl {
      override setMinPagesToRetain(count: number): void {
        if (!Number.isSafeInteger(count) || count < 0) super.setMinPagesToRetain(count);
      }
    },
  ),
  fast(
    'fast-forwarded-leak',
    'retained-bound',
    'Dedicated buffers of forwarded requests are never released',
    class extends FastAllocatorImpl {
      protected override cleanupForwarded(): void {}
    },
  ),
  fast(
    'fast-cleanup-drops-without-destroy',
    'device-accounting',
    'Cleanup takes pages out of the pool without destroying their buffers: the upload heap leaks them',
    class extends FastAllocatorImpl {
      protected override cleanupPages(): void {
        while (
          this.pool.count > this.minPagesToRetain &&
          this.isComplete(this.pool.fences.peekFront())
        )
          this.pool.shift();
      }
    },
  ),
];

export const FAST_CONSTANT_ALLOCATOR_MUTANTS: AnyMutant[] = [
  constant(
    'constant-size-not-rounded',
    'constant-aligned-in-page',
    'The cursor moves by the raw size, not the size rounded up to 256 bytes: the next constant starts off the 256-byte grid',
    class extends FastConstantAllocatorImpl {
      protected override roundConstant(sizeBytes: number): number {
        return sizeBytes;
      }
      protected override alignOffset(cursorBytes: number): number {
        return cursorBytes;
      }
    },
  ),
  constant(
    'constant-size-rounded-down',
    'no-overlap',
    'The size is rounded down to 256 bytes instead of up: the next constant starts inside the 256-byte units the GPU reads of this one',
    class extends FastConstantAllocatorImpl {
      protected override roundConstant(sizeBytes: number): number {
        return Math.max(256, sizeBytes - (sizeBytes % 256));
      }
    },
  ),
  constant(
    'constant-update-in-place',
    'no-overlap',
    "A uniform buffer update rewrites the buffer's current location when the new contents fit, instead of allocating a new location and replacing: draws recorded earlier in the frame (or in a frame the GPU has not finished) read the new bytes",
    class extends FastConstantAllocatorImpl {
      override updateUniformBuffer(uniformBuffer: number, sizeBytes: number): UploadLocation {
        const old = this.locations.get(uniformBuffer);
        const oldSize = this.sizes.get(uniformBuffer);
        if (
          old !== undefined &&
          oldSize !== undefined &&
          this.roundConstant(sizeBytes) <= oldSize &&
          sizeBytes > 0
        )
          return old;
        const location = super.updateUniformBuffer(uniformBuffer, sizeBytes);
        this.sizes.set(uniformBuffer, this.roundConstant(sizeBytes));
        return location;
      }
      private readonly sizes = new Map<number, number>();
    },
  ),
  constant(
    'constant-page-stamped-with-completed',
    'no-rewrite-in-flight',
    "A retired constant page is stamped with the value the GPU has completed instead of the value its frame will signal: it is recycled while that frame's draws may still read it",
    class extends FastConstantAllocatorImpl {
      protected override retireFenceValue(): number {
        return this.fence.completedValue;
      }
    },
  ),
  constant(
    'constant-cleanup-ignores-fence',
    'destroyed-while-in-flight',
    'Cleanup destroys pool pages above the minimum without asking whether their fence value completed',
    class extends FastConstantAllocatorImpl {
      protected override cleanupPages(): void {
        while (this.pool.count > this.minPagesToRetain) this.heap.destroyBuffer(this.pool.shift());
      }
    },
  ),
  constant(
    'constant-cleanup-ignores-minimum',
    'retained-bound',
    'Cleanup destroys every completed pool page, ignoring minPagesToRetain',
    class extends FastConstantAllocatorImpl {
      protected override cleanupPages(): void {
        while (this.pool.count > 0 && this.isComplete(this.pool.fences.peekFront()))
          this.heap.destroyBuffer(this.pool.shift());
      }
    },
  ),
  constant(
    'constant-recycle-forgets-destroy',
    'device-accounting',
    'Taking a completed pool page for reuse creates a new buffer instead and drops the old one without destroying it',
    class extends FastConstantAllocatorImpl {
      protected override takePage(): number {
        if (this.pool.count > 0 && this.isComplete(this.pool.fences.peekFront())) this.pool.shift();
        return this.heap.createBuffer(this.pageSizeBytes, 'page');
      }
    },
  ),
];
