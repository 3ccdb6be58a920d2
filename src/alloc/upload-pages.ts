/**
 * The upload page allocators as an engine would ship them (models: models/fast-allocator.ts,
 * models/fast-constant-allocator.ts; contract: src/alloc/upload-pages-types.ts).
 *
 * `BumpPages` is the page part both share: a current page and a cursor, and the pool of retired
 * pages as two number queues (ids and fence values, oldest first), so a request is O(1): bump,
 * or retire + reuse the oldest page or create one. Each decision is a protected method so a
 * mutant (mutants/fast-allocator.ts) can override exactly one step.
 */
import { ContractError } from '../contract.js';
import { AllocErrors, isPowerOfTwo } from './allocator.js';
import { NumberDeque } from './number-deque.js';
import {
  CONSTANT_ALIGN_BYTES,
  DEFAULT_MIN_PAGES_TO_RETAIN,
  FAST_ALLOCATOR_PAGE_BYTES,
  FAST_CONSTANT_PAGE_BYTES,
  UploadPageErrors,
  badMinPages,
  pageConfigProblem,
  type FastAllocator,
  type FastConstantAllocator,
  type FencedBuffer,
  type FenceView,
  type UploadHeap,
  type UploadLocation,
} from './upload-pages-types.js';

export const NO_PAGE = -1;

/** Fence-stamped buffers, oldest first: two parallel queues. */
export class FencedQueue {
  readonly ids = new NumberDeque(8);
  readonly fences = new NumberDeque(8);
  private view: FencedBuffer[] | null = [];

  get count(): number {
    return this.ids.count;
  }
  push(bufferId: number, fenceValue: number): void {
    this.ids.push(bufferId);
    this.fences.push(fenceValue);
    this.view = null;
  }
  /** Removes the oldest entry and returns its buffer id. */
  shift(): number {
    const bufferId = this.ids.peekFront();
    this.ids.popFront();
    this.fences.popFront();
    this.view = null;
    return bufferId;
  }
  /** The entries as records, rebuilt only after a change. */
  asArray(): readonly FencedBuffer[] {
    if (this.view === null) {
      const view: FencedBuffer[] = [];
      for (let i = 0; i < this.ids.count; i++)
        view.push({ bufferId: this.ids.at(i), fenceValue: this.fences.at(i) });
      this.view = view;
    }
    return this.view;
  }
}

export class BumpPages {
  protected current = NO_PAGE;
  protected cursorBytes = 0;
  /** The fence value of the frame of the current page's last hand-out. */
  protected currentFrame = 0;
  protected readonly pool = new FencedQueue();

  constructor(
    protected readonly heap: UploadHeap,
    protected readonly fence: FenceView,
    readonly pageSizeBytes: number,
    public minPagesToRetain: number,
  ) {}

  /** Places `sizeBytes` at `alignBytes`: on the current page if they fit, else at 0 of the next page. */
  protected place(sizeBytes: number, alignBytes: number): number {
    let offsetBytes = this.alignOffset(this.cursorBytes, alignBytes);
    if (this.current === NO_PAGE || !this.fits(offsetBytes, sizeBytes)) {
      const next = this.takePage(); // before retiring: the retired page is never this request's candidate
      if (this.current !== NO_PAGE) this.pool.push(this.current, this.retireFenceValue());
      this.current = next;
      offsetBytes = 0;
    }
    this.advanceCursor(offsetBytes, sizeBytes);
    this.currentFrame = this.fence.nextValueToSignal;
    return offsetBytes;
  }

  /** AlignUp by division, exact for powers of two (a remainder of doubles costs an fmod call). */
  protected alignOffset(cursorBytes: number, alignBytes: number): number {
    return Math.ceil(cursorBytes / alignBytes) * alignBytes;
  }

  protected fits(offsetBytes: number, sizeBytes: number): boolean {
    return offsetBytes + sizeBytes <= this.pageSizeBytes;
  }

  protected advanceCursor(offsetBytes: number, sizeBytes: number): void {
    this.cursorBytes = offsetBytes + sizeBytes;
  }

  /** The value that proves the GPU is done with the page retired now: the frame of its last hand-out. */
  protected retireFenceValue(): number {
    return this.currentFrame;
  }

  protected isComplete(fenceValue: number): boolean {
    return fenceValue <= this.fence.completedValue;
  }

  /** The oldest pool page if its value completed, else a new page. */
  protected takePage(): number {
    if (this.pool.count > 0 && this.isComplete(this.pool.fences.peekFront()))
      return this.pool.shift();
    return this.heap.createBuffer(this.pageSizeBytes, 'page');
  }

  protected cleanupPages(): void {
    while (
      this.pool.count > this.minPagesToRetain &&
      this.isComplete(this.pool.fences.peekFront())
    ) {
      this.heap.destroyBuffer(this.pool.shift());
    }
  }

  currentPage(): number {
    return this.current;
  }

  pooledPages(): readonly FencedBuffer[] {
    return this.pool.asArray();
  }

  pooledPageCount(): number {
    return this.pool.count;
  }

  cleanup(): void {
    this.cleanupPages();
  }
}

export class FastAllocatorImpl extends BumpPages implements FastAllocator {
  protected readonly forwarded = new FencedQueue();

  constructor(
    heap: UploadHeap,
    fence: FenceView,
    pageSizeBytes = FAST_ALLOCATOR_PAGE_BYTES,
    minPagesToRetain = DEFAULT_MIN_PAGES_TO_RETAIN,
  ) {
    super(heap, fence, pageSizeBytes, minPagesToRetain);
    const problem = pageConfigProblem(pageSizeBytes, minPagesToRetain);
    if (problem !== null) throw new Error(`fast allocator: ${problem}`);
  }

  allocate(sizeBytes: number, alignBytes: number): UploadLocation {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0)
      throw new ContractError(
        AllocErrors.BAD_SIZE,
        `sizeBytes must be a positive integer, got ${sizeBytes}`,
      );
    if (!isPowerOfTwo(alignBytes))
      throw new ContractError(
        AllocErrors.BAD_ALIGN,
        `alignBytes must be a power of two, got ${alignBytes}`,
      );
    if (this.isForwarded(sizeBytes)) return { bufferId: this.forward(sizeBytes), offsetBytes: 0 };
    const offsetBytes = this.place(sizeBytes, alignBytes);
    return { bufferId: this.current, offsetBytes };
  }

  /** Requests above the page size go to a dedicated buffer. */
  protected isForwarded(sizeBytes: number): boolean {
    return sizeBytes > this.pageSizeBytes;
  }

  protected forward(sizeBytes: number): number {
    const bufferId = this.heap.createBuffer(sizeBytes, 'forwarded');
    this.forwarded.push(bufferId, this.fence.nextValueToSignal);
    return bufferId;
  }

  /** Dedicated buffers are stamped in hand-out order, so the completed ones are a prefix. */
  protected cleanupForwarded(): void {
    while (this.forwarded.count > 0 && this.isComplete(this.forwarded.fences.peekFront()))
      this.heap.destroyBuffer(this.forwarded.shift());
  }

  forwardedBuffers(): readonly FencedBuffer[] {
    return this.forwarded.asArray();
  }

  forwardedBufferCount(): number {
    return this.forwarded.count;
  }

  setMinPagesToRetain(count: number): void {
    const error = badMinPages(count);
    if (error !== null) throw error;
    this.minPagesToRetain = count;
  }

  override cleanup(): void {
    this.cleanupPages();
    this.cleanupForwarded();
  }
}

export class FastConstantAllocatorImpl extends BumpPages implements FastConstantAllocator {
  protected readonly locations = new Map<number, UploadLocation>();

  constructor(
    heap: UploadHeap,
    fence: FenceView,
    pageSizeBytes = FAST_CONSTANT_PAGE_BYTES,
    minPagesToRetain = DEFAULT_MIN_PAGES_TO_RETAIN,
  ) {
    super(heap, fence, pageSizeBytes, minPagesToRetain);
    const problem = pageConfigProblem(pageSizeBytes, minPagesToRetain, CONSTANT_ALIGN_BYTES);
    if (problem !== null) throw new Error(`fast constant allocator: ${problem}`);
  }

  allocate(sizeBytes: number): UploadLocation {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0)
      throw new ContractError(
        AllocErrors.BAD_SIZE,
        `sizeBytes must be a positive integer, got ${sizeBytes}`,
      );
    if (sizeBytes > this.pageSizeBytes) {
      throw new ContractError(
        UploadPageErrors.CONSTANT_TOO_LARGE,
        `a constant of ${sizeBytes} bytes is larger than a page of ${this.pageSizeBytes}`,
      );
    }
    const offsetBytes = this.place(this.roundConstant(sizeBytes), CONSTANT_ALIGN_BYTES);
    return { bufferId: this.current, offsetBytes };
  }

  /** The bytes a constant occupies: its size rounded up to the 256-byte unit. */
  protected roundConstant(sizeBytes: number): number {
    return Math.ceil(sizeBytes / CONSTANT_ALIGN_BYTES) * CONSTANT_ALIGN_BYTES;
  }

  updateUniformBuffer(uniformBuffer: number, sizeBytes: number): UploadLocation {
    if (!Number.isSafeInteger(uniformBuffer) || uniformBuffer < 0) {
      throw new ContractError(
        UploadPageErrors.BAD_UNIFORM_BUFFER,
        `uniform buffer handle ${uniformBuffer} is not a non-negative integer`,
      );
    }
    const location = this.allocate(sizeBytes);
    this.locations.set(uniformBuffer, location);
    return location;
  }

  uniformBufferLocation(uniformBuffer: number): UploadLocation | null {
    return this.locations.get(uniformBuffer) ?? null;
  }
}
