/**
 * Reference model of the first-fit allocator (docs/spec/allocators.md#al-first-fit; Unreal's
 * BigBlockAllocator shape, docs/spec/engine.md#mem-5-1): free blocks in offset order, the first one
 * whose aligned start plus size fits wins.
 *
 * Choices the spec leaves open, made here and followed by the implementation:
 * - Granularity is one byte: sizes are not rounded, so a first-fit allocation never wastes
 *   bytes (wasteBytes() is always 0); alignment padding stays free.
 * - The padding in front of the aligned start becomes a free block of its own (when non-empty),
 *   the allocation takes exactly [aligned, aligned + size), the tail (when non-empty) stays free.
 * - Free merges with the previous and the next block when they are free, so no two free blocks
 *   are ever adjacent.
 */
import { IntervalModel, freeBlock, type ModelBlock } from './alloc-blocks.js';
import { alignUp } from '../src/alloc/allocator.js';
import type { SubAllocatorConfig } from '../src/alloc/config.js';
import { checkSubAllocatorConfig } from '../src/alloc/config.js';

export class FirstFitModel extends IntervalModel {
  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('first-fit', config);
    super(config.capacityBytes);
  }

  protected place(sizeBytes: number, alignBytes: number): number | null {
    for (let index = 0; index < this.list.length; index++) {
      const block = this.list[index]!;
      if (!block.free) continue;
      const endBytes = block.offsetBytes + block.sizeBytes;
      const alignedBytes = alignUp(block.offsetBytes, alignBytes);
      if (alignedBytes + sizeBytes > endBytes) continue;
      const parts: ModelBlock[] = [];
      if (alignedBytes > block.offsetBytes) this.events.push('padding-kept-free');
      if (alignedBytes > block.offsetBytes)
        parts.push(freeBlock(block.offsetBytes, alignedBytes - block.offsetBytes));
      parts.push({
        offsetBytes: alignedBytes,
        sizeBytes,
        free: false,
        userOffsetBytes: alignedBytes,
        userSizeBytes: sizeBytes,
        order: 0,
      });
      if (alignedBytes + sizeBytes < endBytes)
        parts.push(freeBlock(alignedBytes + sizeBytes, endBytes - alignedBytes - sizeBytes));
      this.splice(index, ...parts);
      return alignedBytes;
    }
    return null;
  }

  protected coalesce(index: number): void {
    mergeWithFreeNeighbours(this.list, index);
  }
}

/** Merges the free block at `index` with a free previous and a free next block. */
export function mergeWithFreeNeighbours(list: ModelBlock[], index: number): void {
  let at = index;
  const next = list[at + 1];
  if (next?.free) {
    list[at]!.sizeBytes += next.sizeBytes;
    list.splice(at + 1, 1);
  }
  const previous = list[at - 1];
  if (previous?.free) {
    previous.sizeBytes += list[at]!.sizeBytes;
    list.splice(at, 1);
    at--;
  }
}
