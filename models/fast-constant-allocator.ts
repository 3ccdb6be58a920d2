/**
 * Reference model of the fast constant allocator (docs/spec/engine.md#mem-5-1, #mem-5-4;
 * FD3D12FastConstantAllocator and the uniform buffers that use it).
 *
 * The pages behave as the fast allocator's (models/fast-allocator.ts, `BumpPagesModel`): bump
 * allocation, a full page retired with the next fence value to signal, reused oldest first once
 * that value completes, cleanup down to `minPagesToRetain`. On top of them:
 * - Every constant starts at a multiple of 256 bytes and occupies its size rounded up to 256
 *   (the GPU reads constant buffers in 256-byte units), so the cursor moves by the rounded size.
 * - A constant is at most one page (uniform buffers are at most 64 KiB by construction,
 *   docs/spec/engine.md#mem-5-1): a larger one is the contract error CONSTANT_TOO_LARGE, not a
 *   forwarded request.
 * - Updating a uniform buffer is "allocate a new location and replace"
 *   (docs/spec/engine.md#mem-5-4): every update takes new bytes and the buffer points at them; the
 *   old bytes are never written again, so a draw the GPU has not finished keeps reading what it was
 *   recorded with.
 *
 * Choices the seed leaves open: uniform buffers are small integer handles the caller picks; an
 * update never frees anything (single-frame data goes with its page); errors are checked
 * BAD_UNIFORM_BUFFER, then BAD_SIZE, then CONSTANT_TOO_LARGE, before anything changes; the
 * default `minPagesToRetain` is the fast allocator's.
 */
import { ContractError } from '../src/contract.js';
import { AllocErrors, alignUp } from '../src/alloc/allocator.js';
import {
  CONSTANT_ALIGN_BYTES,
  DEFAULT_MIN_PAGES_TO_RETAIN,
  FAST_CONSTANT_PAGE_BYTES,
  UploadPageErrors,
  type FastConstantAllocator,
  type FenceView,
  type UploadHeap,
  type UploadLocation,
} from '../src/alloc/upload-pages-types.js';
import { BumpPagesModel } from './fast-allocator.js';

export class FastConstantAllocatorModel extends BumpPagesModel implements FastConstantAllocator {
  private locations = new Map<number, UploadLocation>();

  constructor(
    heap: UploadHeap,
    fence: FenceView,
    pageSizeBytes = FAST_CONSTANT_PAGE_BYTES,
    minPagesToRetain = DEFAULT_MIN_PAGES_TO_RETAIN,
  ) {
    super(heap, fence, pageSizeBytes, minPagesToRetain);
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
    return this.place(alignUp(sizeBytes, CONSTANT_ALIGN_BYTES), CONSTANT_ALIGN_BYTES);
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
