/**
 * The upload page allocators (docs/spec/engine.md#mem-1-2-4, #mem-3-2, #mem-5-3, #mem-5-4,
 * #mem-10): single-frame upload data is bump-allocated inside pages and never freed one by one; a
 * page is reused whole once the GPU has finished the frame that last wrote into it.
 *
 * - The fast allocator: 4 MiB pages, any size and power-of-two alignment; a request above the
 *   page size is forwarded to a dedicated upload buffer (the seed: "超过 4MB 由它转交
 *   AllocUploadResource"); retired pages wait in a pool for their fence; cleanup keeps at least
 *   `minPagesToRetain` pages in the pool (the seed's d3d12.FastAllocator.MinPagesToRetain).
 * - The fast constant allocator: 64 KiB pages, constants placed at 256-byte boundaries (the
 *   D3D12 constant-buffer placement), uniform buffers updated by "allocate a new location and
 *   replace", never by rewriting bytes the GPU may be reading.
 *
 * Both sides (model, implementation) talk to the same two outside parties: an upload heap that
 * creates and destroys buffers (`UploadHeap`, the harness's judge) and the frame fence
 * (`FenceView`, the simulated GPU queue in src/gpu/queue-timeline.ts).
 */

import { ContractError } from '../contract.js';

/** The seed's page size of the fast allocator (FD3D12FastAllocator: 4 MB bump pages). */
export const FAST_ALLOCATOR_PAGE_BYTES = 4 * 1024 * 1024;
/** The seed's page size of the fast constant allocator (AllocFastConstantAllocationPage: 64 KB). */
export const FAST_CONSTANT_PAGE_BYTES = 64 * 1024;
/** Constants start at multiples of 256 bytes and the GPU reads them in 256-byte units. */
export const CONSTANT_ALIGN_BYTES = 256;
/**
 * Pages cleanup keeps in the pool by default. The seed names the setting
 * (d3d12.FastAllocator.MinPagesToRetain, changeable at run time) but not its value: 5 is ours.
 */
export const DEFAULT_MIN_PAGES_TO_RETAIN = 5;

/** The frame fence as the allocators read it (QueueTimeline implements it). */
export interface FenceView {
  /** The value the current frame will signal: work recorded now completes with it. */
  readonly nextValueToSignal: number;
  /** The highest value the GPU has completed. */
  readonly completedValue: number;
}

/** Whether an upload buffer is a bump page or a dedicated buffer of one forwarded request. */
export type UploadBufferKind = 'page' | 'forwarded';

/** Where upload buffers come from (the upload heap allocator of docs/spec/engine.md#mem-5-1). */
export interface UploadHeap {
  /** Creates a buffer of `sizeBytes` and returns its id. */
  createBuffer(sizeBytes: number, kind: UploadBufferKind): number;
  /** Destroys a buffer: its bytes are gone (the GPU must be done with them). */
  destroyBuffer(bufferId: number): void;
}

/** One hand-out: bytes [offsetBytes, offsetBytes + size) of buffer `bufferId`. */
export interface UploadLocation {
  readonly bufferId: number;
  readonly offsetBytes: number;
}

/** A buffer the allocator holds until a fence value completes. */
export interface FencedBuffer {
  readonly bufferId: number;
  readonly fenceValue: number;
}

/** What the invariants read of either allocator. */
export interface UploadPageState {
  readonly pageSizeBytes: number;
  readonly minPagesToRetain: number;
  /** The page being bump-allocated, or -1 before the first page. */
  currentPage(): number;
  /** Retired pages, oldest first (fence values non-decreasing). */
  pooledPages(): readonly FencedBuffer[];
  /** pooledPages().length, without building anything. */
  pooledPageCount(): number;
  /** Releases what the GPU is done with: completed pool pages above the minimum, completed dedicated buffers. */
  cleanup(): void;
}

export interface FastAllocator extends UploadPageState {
  /** Bytes for this frame: a page sub-allocation, or a dedicated buffer above the page size. */
  allocate(sizeBytes: number, alignBytes: number): UploadLocation;
  /** Dedicated buffers of forwarded requests still held, oldest first. */
  forwardedBuffers(): readonly FencedBuffer[];
  /** forwardedBuffers().length, without building anything. */
  forwardedBufferCount(): number;
  /**
   * Changes the minimum at run time (docs/spec/engine.md#mem-10:
   * d3d12.FastAllocator.MinPagesToRetain can be changed while running); it applies from the next
   * cleanup on, which destroys nothing early.
   */
  setMinPagesToRetain(count: number): void;
}

export interface FastConstantAllocator extends UploadPageState {
  /** Loose constants for this frame: 256-byte aligned, at most one page. */
  allocate(sizeBytes: number): UploadLocation;
  /** A uniform buffer's new contents: a new location that replaces the buffer's current one. */
  updateUniformBuffer(uniformBuffer: number, sizeBytes: number): UploadLocation;
  /** The uniform buffer's current location, or null if it was never updated. */
  uniformBufferLocation(uniformBuffer: number): UploadLocation | null;
}

/** Contract-error codes (besides BAD_SIZE and BAD_ALIGN of src/alloc/allocator.ts). */
export const UploadPageErrors = {
  /** A constant larger than a page (uniform buffers are at most 64 KiB by construction). */
  CONSTANT_TOO_LARGE: 'CONSTANT_TOO_LARGE',
  /** A uniform buffer handle that is not a non-negative safe integer. */
  BAD_UNIFORM_BUFFER: 'BAD_UNIFORM_BUFFER',
  /** A page minimum that is not a non-negative safe integer. */
  BAD_MIN_PAGES: 'BAD_MIN_PAGES',
} as const;

/** The BAD_MIN_PAGES error, or null when `count` is a valid page minimum. */
export function badMinPages(count: number): ContractError | null {
  return Number.isSafeInteger(count) && count >= 0
    ? null
    : new ContractError(
        UploadPageErrors.BAD_MIN_PAGES,
        `minPagesToRetain must be a non-negative integer, got ${count}`,
      );
}

/** Checks a page allocator's configuration; returns a message or null. */
export function pageConfigProblem(
  pageSizeBytes: number,
  minPagesToRetain: number,
  granuleBytes = 1,
): string | null {
  if (
    !Number.isSafeInteger(pageSizeBytes) ||
    pageSizeBytes < granuleBytes ||
    pageSizeBytes % granuleBytes !== 0
  ) {
    return `pageSizeBytes must be a positive multiple of ${granuleBytes}, got ${pageSizeBytes}`;
  }
  if (!Number.isSafeInteger(minPagesToRetain) || minPagesToRetain < 0)
    return `minPagesToRetain must be a non-negative integer, got ${minPagesToRetain}`;
  return null;
}
