/**
 * Reference model of the best-fit pool (docs/spec/allocators.md#al-best-fit; Unreal's
 * FRHIMemoryPool, docs/spec/engine.md#mem-3-4).
 *
 * Block offsets and sizes are multiples of poolAlignBytes. A request (size, align) reserves
 *   alignUp(size, poolAlign)          when poolAlign % align == 0 (the block start is aligned)
 *   alignUp(size + align, poolAlign)  otherwise, handing out alignUp(blockOffset, align);
 * the reserved bytes beyond the caller's size are waste. The chosen free block is the first of
 * the free blocks sorted by (size ascending, offset ascending) that holds the reservation.
 *
 * Choices the spec leaves open, made here and followed by the implementation:
 * - The single-allocation limit compares the caller's sizeBytes (not the reservation):
 *   sizeBytes > maxAllocationBytes answers null at once (the committed path). Request checks
 *   (BAD_SIZE, BAD_ALIGN) come first.
 * - The reservation is taken from the low end of the chosen block; the remainder (if any) stays
 *   one free block.
 * - A reservation larger than the pool answers null (no error).
 */
import { IntervalModel, freeBlock } from './alloc-blocks.js';
import { mergeWithFreeNeighbours } from './alloc-first-fit.js';
import { alignUp } from '../src/alloc/allocator.js';
import {
  checkSubAllocatorConfig,
  DEFAULT_POOL_ALIGN_BYTES,
  type SubAllocatorConfig,
} from '../src/alloc/config.js';

/**
 * The reservation of the spec's aligned-size rule. The implementation computes it on its own
 * (in BestFitAllocator.alloc), so a slip in either is a difference the harness sees.
 */
export function bestFitReservationBytes(
  sizeBytes: number,
  alignBytes: number,
  poolAlignBytes: number,
): number {
  return poolAlignBytes % alignBytes === 0
    ? alignUp(sizeBytes, poolAlignBytes)
    : alignUp(sizeBytes + alignBytes, poolAlignBytes);
}

export class BestFitModel extends IntervalModel {
  readonly poolAlignBytes: number;
  readonly maxAllocationBytes: number;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('best-fit', config);
    super(config.capacityBytes);
    this.poolAlignBytes = config.poolAlignBytes ?? DEFAULT_POOL_ALIGN_BYTES;
    this.maxAllocationBytes = config.maxAllocationBytes ?? config.capacityBytes;
  }

  protected place(sizeBytes: number, alignBytes: number): number | null {
    if (sizeBytes > this.maxAllocationBytes) {
      this.events.push('committed-path');
      return null;
    }
    const reservationBytes = bestFitReservationBytes(sizeBytes, alignBytes, this.poolAlignBytes);
    const candidates = this.list
      .filter((block) => block.free && block.sizeBytes >= reservationBytes)
      .sort((a, b) => a.sizeBytes - b.sizeBytes || a.offsetBytes - b.offsetBytes);
    const chosen = candidates[0];
    if (chosen === undefined) return null;
    const index = this.list.indexOf(chosen);
    if (candidates.some((block) => block.offsetBytes < chosen.offsetBytes))
      this.events.push('best-fit-not-lowest-offset');
    if (reservationBytes > alignUp(sizeBytes, this.poolAlignBytes))
      this.events.push('alignment-reserved');
    const userOffsetBytes = alignUp(chosen.offsetBytes, alignBytes);
    const parts = [
      {
        offsetBytes: chosen.offsetBytes,
        sizeBytes: reservationBytes,
        free: false,
        userOffsetBytes,
        userSizeBytes: sizeBytes,
        order: 0,
      },
    ];
    if (chosen.sizeBytes > reservationBytes) {
      parts.push(
        freeBlock(chosen.offsetBytes + reservationBytes, chosen.sizeBytes - reservationBytes),
      );
    }
    this.splice(index, ...parts);
    return userOffsetBytes;
  }

  protected coalesce(index: number): void {
    mergeWithFreeNeighbours(this.list, index);
  }

  /** Free blocks in the spec's FreeBlocks order: size ascending, then offset. */
  freeBlocksBySize(): { offsetBytes: number; sizeBytes: number }[] {
    return this.list
      .filter((block) => block.free)
      .map((block) => ({ offsetBytes: block.offsetBytes, sizeBytes: block.sizeBytes }))
      .sort((a, b) => a.sizeBytes - b.sizeBytes || a.offsetBytes - b.offsetBytes);
  }
}
