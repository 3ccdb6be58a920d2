/**
 * Reference model of the buddy allocator (docs/spec/allocators.md#al-buddy; VMA 2.3, Dawn).
 *
 * Capacity is minBlockBytes * 2^maxOrder; a block of order k is minBlockBytes * 2^k bytes at a
 * multiple of its size. A request takes order k = ceil(log2(max(size, align, minBlock) /
 * minBlock)); the lowest-offset free block of order k wins, else the lowest-offset free block
 * of the smallest larger order is split, keeping the left half, down to order k.
 *
 * Choices the spec leaves open, made here and followed by the implementation:
 * - The caller gets the block's own offset (blocks are aligned to their size, which is at least
 *   the alignment); waste is blockSize - size.
 * - A request whose order exceeds maxOrder answers null (no error).
 * - The buddy of (offset, size) is offset XOR size; computed here with arithmetic
 *   (offset / size even: offset + size, else offset - size) because JS XOR truncates to 32 bits.
 */
import { IntervalModel, freeBlock } from './alloc-blocks.js';
import {
  buddyMaxOrder,
  checkSubAllocatorConfig,
  DEFAULT_MIN_BLOCK_BYTES,
  type SubAllocatorConfig,
} from '../src/alloc/config.js';

/**
 * The order a request takes (may exceed maxOrder), by counting up. The implementation computes it
 * on its own with count-leading-zeros (BuddyAllocator.orderFor), so the two can disagree visibly.
 */
export function buddyOrderFor(
  sizeBytes: number,
  alignBytes: number,
  minBlockBytes: number,
): number {
  const needBytes = Math.max(sizeBytes, alignBytes, minBlockBytes);
  let order = 0;
  while (minBlockBytes * 2 ** order < needBytes) order++;
  return order;
}

export class BuddyModel extends IntervalModel {
  readonly minBlockBytes: number;
  readonly maxOrder: number;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('buddy', config);
    super(config.capacityBytes);
    this.minBlockBytes = config.minBlockBytes ?? DEFAULT_MIN_BLOCK_BYTES;
    this.maxOrder = buddyMaxOrder(config);
    this.list[0]!.order = this.maxOrder;
  }

  protected place(sizeBytes: number, alignBytes: number): number | null {
    const order = buddyOrderFor(sizeBytes, alignBytes, this.minBlockBytes);
    if (order > this.maxOrder) return null;
    // The smallest order >= `order` that has a free block, and its lowest-offset free block.
    let from = -1;
    for (let k = order; k <= this.maxOrder && from === -1; k++) {
      from = this.list.findIndex((block) => block.free && block.order === k);
    }
    if (from === -1) return null;
    if (this.list[from]!.order > order + 1) this.events.push('split-cascade');
    while (this.list[from]!.order > order) {
      const block = this.list[from]!;
      const half = block.sizeBytes / 2;
      this.splice(
        from,
        freeBlock(block.offsetBytes, half, block.order - 1),
        freeBlock(block.offsetBytes + half, half, block.order - 1),
      );
    }
    const block = this.list[from]!;
    block.free = false;
    block.userOffsetBytes = block.offsetBytes;
    block.userSizeBytes = sizeBytes;
    return block.offsetBytes;
  }

  protected coalesce(index: number): void {
    let at = index;
    for (;;) {
      const block = this.list[at]!;
      if (block.order === this.maxOrder) return;
      const buddyOffsetBytes =
        (block.offsetBytes / block.sizeBytes) % 2 === 0
          ? block.offsetBytes + block.sizeBytes
          : block.offsetBytes - block.sizeBytes;
      const buddyIndex = this.list.findIndex((other) => other.offsetBytes === buddyOffsetBytes);
      const buddy = this.list[buddyIndex]!;
      if (!buddy.free || buddy.order !== block.order) return;
      const left = Math.min(at, buddyIndex);
      this.splice(
        left,
        freeBlock(
          Math.min(block.offsetBytes, buddyOffsetBytes),
          block.sizeBytes * 2,
          block.order + 1,
        ),
      );
      this.list.splice(left + 1, 1);
      at = left;
    }
  }
}
