/**
 * Reference model of the fast allocator (docs/spec/engine.md#mem-1-2-4, #mem-3-2, #mem-5-3,
 * #mem-10; FD3D12FastAllocator): 4 MiB bump pages for single-frame upload data.
 *
 * Written for obviousness: plain arrays, every step spelled out. `BumpPagesModel` (the page part)
 * is shared with the fast constant allocator's model (models/fast-constant-allocator.ts).
 *
 * The policy: bytes are placed at AlignUp(cursor, alignment) on the current page; if they do not
 * fit before the end of the page, the current page is retired to the pool and a page is taken:
 * the oldest pool page if its fence value has completed (reset to offset 0), else a new page.
 * Data lives one frame: nothing is freed one by one. A retired page is stamped with the fence
 * value of the frame of its last hand-out (the frame fence's next value to signal at that
 * hand-out): any GPU work of that frame may read the page, none of a later frame does, so that
 * value's completion proves the GPU is done with the whole page.
 *
 * Choices the seed leaves open, made here and followed by the implementation:
 * - The stamp is the frame of the page's last hand-out, not the value to signal when the page is
 *   retired: a page filled in frame 1 and retired in frame 3 is free once frame 1 completes.
 *   (Stamping at retirement is safe too, only later; with the exact stamp every early reuse is a
 *   reuse of bytes the GPU may still read, so the GPU judges catch it at the hand-out.)
 * - The forwarded path: a request above the page size gets a dedicated upload buffer of exactly
 *   its size (`createBuffer(size, 'forwarded')`, offset 0, so any alignment holds), stamped with
 *   the next value to signal when handed out, and destroyed by the first cleanup after that value
 *   completes. It leaves the current page and its cursor alone. A request of exactly the page
 *   size is not "above" it and takes a page (the next one: a full page fits only at offset 0).
 * - The next page is taken before the full one is retired, so the page a request retires is
 *   never that request's candidate (a correct allocator could not take it anyway: its value is
 *   this frame's). A page handed out from again after it left the current page starts a new
 *   life; the harness tells lives apart by that.
 * - Pages are reused oldest first. Fence values along the pool never decrease, so only the
 *   oldest page can be the first to complete.
 * - Retirement happens only when a request does not fit: the current page is never retired at
 *   the end of a frame, and a page that is not full stays current across frames.
 * - `cleanup` destroys completed pool pages, oldest first, while the pool holds more than
 *   `minPagesToRetain` (the current page does not count), then every dedicated buffer whose value
 *   has completed (in hand-out order). Pages still in flight are never destroyed, so the pool
 *   can stay above the minimum.
 * - `setMinPagesToRetain` (the seed's setting can change at run time) only changes what the next
 *   cleanup keeps; lowering it destroys nothing by itself. A bad value is BAD_MIN_PAGES.
 * - Page ids are whatever the upload heap returns; the model never reuses a destroyed id.
 * - Bad requests: BAD_SIZE, then BAD_ALIGN (src/alloc/allocator.ts), before anything changes.
 */
import { alignUp, validateRequest } from '../src/alloc/allocator.js';
import {
  badMinPages,
  DEFAULT_MIN_PAGES_TO_RETAIN,
  FAST_ALLOCATOR_PAGE_BYTES,
  type FastAllocator,
  type FencedBuffer,
  type FenceView,
  type UploadHeap,
  type UploadLocation,
} from '../src/alloc/upload-pages-types.js';

export class BumpPagesModel {
  private current = -1;
  private cursorBytes = 0;
  /** The fence value of the frame of the current page's last hand-out. */
  private currentFrame = 0;
  /** Retired pages, oldest first. */
  private pool: FencedBuffer[] = [];

  constructor(
    protected readonly heap: UploadHeap,
    protected readonly fence: FenceView,
    readonly pageSizeBytes: number,
    public minPagesToRetain: number,
  ) {}

  /** Places `sizeBytes` at `alignBytes` on the current page, turning the page over when they do not fit. */
  protected place(sizeBytes: number, alignBytes: number): UploadLocation {
    let offsetBytes = alignUp(this.cursorBytes, alignBytes);
    if (this.current === -1 || offsetBytes + sizeBytes > this.pageSizeBytes) {
      const next = this.takePage();
      if (this.current !== -1)
        this.pool.push({ bufferId: this.current, fenceValue: this.currentFrame });
      this.current = next;
      offsetBytes = 0;
    }
    this.cursorBytes = offsetBytes + sizeBytes;
    this.currentFrame = this.fence.nextValueToSignal;
    return { bufferId: this.current, offsetBytes };
  }

  private takePage(): number {
    const oldest = this.pool[0];
    if (oldest !== undefined && oldest.fenceValue <= this.fence.completedValue) {
      this.pool.shift();
      return oldest.bufferId;
    }
    return this.heap.createBuffer(this.pageSizeBytes, 'page');
  }

  /** Destroys completed pool pages, oldest first, down to the minimum. */
  protected cleanupPages(): void {
    while (
      this.pool.length > this.minPagesToRetain &&
      this.pool[0]!.fenceValue <= this.fence.completedValue
    ) {
      this.heap.destroyBuffer(this.pool.shift()!.bufferId);
    }
  }

  currentPage(): number {
    return this.current;
  }

  pooledPages(): readonly FencedBuffer[] {
    return this.pool;
  }

  pooledPageCount(): number {
    return this.pool.length;
  }

  cleanup(): void {
    this.cleanupPages();
  }
}

export class FastAllocatorModel extends BumpPagesModel implements FastAllocator {
  /** Dedicated buffers of forwarded requests, in hand-out order. */
  private forwarded: FencedBuffer[] = [];

  constructor(
    heap: UploadHeap,
    fence: FenceView,
    pageSizeBytes = FAST_ALLOCATOR_PAGE_BYTES,
    minPagesToRetain = DEFAULT_MIN_PAGES_TO_RETAIN,
  ) {
    super(heap, fence, pageSizeBytes, minPagesToRetain);
  }

  allocate(sizeBytes: number, alignBytes: number): UploadLocation {
    validateRequest(sizeBytes, alignBytes);
    if (sizeBytes > this.pageSizeBytes) {
      const bufferId = this.heap.createBuffer(sizeBytes, 'forwarded');
      this.forwarded.push({ bufferId, fenceValue: this.fence.nextValueToSignal });
      return { bufferId, offsetBytes: 0 };
    }
    return this.place(sizeBytes, alignBytes);
  }

  forwardedBuffers(): readonly FencedBuffer[] {
    return this.forwarded;
  }

  forwardedBufferCount(): number {
    return this.forwarded.length;
  }

  setMinPagesToRetain(count: number): void {
    const error = badMinPages(count);
    if (error !== null) throw error;
    this.minPagesToRetain = count;
  }

  override cleanup(): void {
    this.cleanupPages();
    const keep: FencedBuffer[] = [];
    for (const buffer of this.forwarded) {
      if (buffer.fenceValue <= this.fence.completedValue) this.heap.destroyBuffer(buffer.bufferId);
      else keep.push(buffer);
    }
    this.forwarded = keep;
  }
}
