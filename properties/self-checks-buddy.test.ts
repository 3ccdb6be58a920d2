/**
 * Self-checks of the buddy allocator (issue 14): the invariants lean on `checkIndexes()` (and on
 * the block walk behind it) and on `isPristine()`, so each condition those validators test is
 * switched on here by corrupting one piece of a real allocator on purpose, and the test expects
 * that exact condition, worded as the validator words it, and nothing else.
 *
 * The corruption goes through a subclass that reaches the protected state (the free lists, the
 * non-empty order mask, the live count), the same state the bug catalog in mutants/ overrides.
 * The heap: 1024 bytes of 64-byte blocks, 16 units, orders 0..4.
 */
import { describe, expect, it } from 'vitest';
import { BuddyAllocator } from '../src/alloc/buddy.js';

class CorruptibleBuddy extends BuddyAllocator {
  constructor() {
    super({ capacityBytes: 1024, minBlockBytes: 64 });
  }
  /** Adds a free-list entry (and its order's non-empty bit) that the tiling does not have. */
  addFreeEntry(unit: number, order: number): void {
    this.pushFree(unit, order);
  }
  /** Drops a free-list entry (and the order's non-empty bit if the list empties). */
  dropFreeEntry(unit: number, order: number): void {
    this.removeFree(unit, order);
  }
  /** Clears the free-list bit only, leaving the non-empty mask as it was. */
  clearFreeBitOnly(unit: number, order: number): void {
    this.freeLists[order]!.clear(unit >>> order);
  }
  get nonEmptyMask(): number {
    return this.nonEmptyOrders;
  }
  set nonEmptyMask(mask: number) {
    this.nonEmptyOrders = mask;
  }
  set liveCounter(count: number) {
    this.liveCount = count;
  }
  get liveCounter(): number {
    return this.liveCount;
  }
}

/**
 * A heap with one 64-byte allocation at offset 0: the split leaves free blocks of order 0 at
 * unit 1, order 1 at unit 2, order 2 at unit 4 and order 3 at unit 8.
 */
function oneAllocation(): CorruptibleBuddy {
  const heap = new CorruptibleBuddy();
  expect(heap.alloc(64, 1)).toBe(0);
  return heap;
}

describe('buddy checkIndexes: every condition reported when (and only when) it is broken', () => {
  it('the corruption helpers shadow no method of the allocator', () => {
    const own = Object.getOwnPropertyNames(CorruptibleBuddy.prototype).filter(
      (name) => name !== 'constructor',
    );
    expect(own.filter((name) => name in BuddyAllocator.prototype)).toEqual([]);
  });

  it('a sound heap passes: pristine, split, merged back', () => {
    const heap = new CorruptibleBuddy();
    expect(heap.checkIndexes()).toBeNull();
    const a = heap.alloc(64, 1)!;
    const b = heap.alloc(200, 1)!;
    expect(heap.checkIndexes()).toBeNull();
    heap.free(a);
    heap.free(b);
    expect(heap.checkIndexes()).toBeNull();
  });

  it('the walk: a unit covered by no free block and no allocation', () => {
    const heap = oneAllocation();
    heap.dropFreeEntry(2, 1); // units 2..3 are now in no block
    expect(heap.checkIndexes()).toBe('unit 2 (offset 128) is in no block');
  });

  it('the walk: a free entry of order k counts only at a unit that is a multiple of 2^k', () => {
    // Swap the order-0 block at unit 1 for an order-1 entry at unit 0, which overlaps the
    // allocation: unit 1 is not the start of an order-1 block, so it is in no block.
    const heap = oneAllocation();
    heap.dropFreeEntry(1, 0);
    heap.addFreeEntry(0, 1);
    expect(heap.checkIndexes()).toBe('unit 1 (offset 64) is in no block');
  });

  it('the walk: a unit that starts free blocks of two orders takes the smallest', () => {
    // The whole heap is free at order 4, and a stray order-0 entry at unit 0: the walk reads the
    // order-0 block first, so unit 1 is in no block (it must not skip to the order-4 block).
    const heap = new CorruptibleBuddy();
    heap.addFreeEntry(0, 0);
    expect(heap.checkIndexes()).toBe('unit 1 (offset 64) is in no block');
  });

  it('an order with free blocks but its non-empty bit clear', () => {
    const heap = oneAllocation();
    heap.nonEmptyMask = heap.nonEmptyMask & ~(1 << 1);
    expect(heap.checkIndexes()).toBe('order 1 holds 1 free blocks but its non-empty bit disagrees');
  });

  it('an order with no free blocks but its non-empty bit set', () => {
    const heap = new CorruptibleBuddy();
    heap.nonEmptyMask = heap.nonEmptyMask | (1 << 0);
    expect(heap.checkIndexes()).toBe('order 0 holds 0 free blocks but its non-empty bit disagrees');
  });

  it('the top order is checked too: its bit cleared while the whole heap is free', () => {
    const heap = new CorruptibleBuddy();
    heap.nonEmptyMask = 0;
    expect(heap.checkIndexes()).toBe('order 4 holds 1 free blocks but its non-empty bit disagrees');
  });

  it('a free-list entry the tiling never reaches (inside an allocation)', () => {
    const heap = oneAllocation();
    heap.addFreeEntry(0, 0); // unit 0 is allocated; the walk reads the allocation there
    expect(heap.checkIndexes()).toBe('the free lists hold 5 blocks, the tiling has 4 free blocks');
  });

  it('a live count that disagrees with the allocated blocks', () => {
    const heap = oneAllocation();
    heap.liveCounter = 2;
    expect(heap.checkIndexes()).toBe('1 allocated blocks but 2 live allocations counted');
    heap.liveCounter = 0;
    expect(heap.checkIndexes()).toBe('1 allocated blocks but 0 live allocations counted');
  });

  it('the walk is recomputed after every alloc and free (no stale answer)', () => {
    const heap = oneAllocation();
    expect(heap.checkIndexes()).toBeNull();
    expect(
      heap
        .blocks()
        .map((b) => `${b.free ? 'f' : 'u'}${b.offsetBytes}+${b.sizeBytes}`)
        .join(' '),
    ).toBe('u0+64 f64+64 f128+128 f256+256 f512+512');
    heap.free(0);
    expect(heap.blocks()).toEqual([{ offsetBytes: 0, sizeBytes: 1024, free: true }]);
    expect(heap.alloc(512, 1)).toBe(0);
    expect(heap.blocks()).toEqual([
      { offsetBytes: 0, sizeBytes: 512, free: false },
      { offsetBytes: 512, sizeBytes: 512, free: true },
    ]);
  });
});

describe('buddy isPristine: each of its three conditions', () => {
  it('true on a new heap and after everything is freed again', () => {
    const heap = oneAllocation();
    expect(heap.isPristine()).toBe(false);
    heap.free(0);
    expect(heap.isPristine()).toBe(true);
    expect(new CorruptibleBuddy().isPristine()).toBe(true);
  });

  it('false when a live allocation is counted', () => {
    const heap = new CorruptibleBuddy();
    heap.liveCounter = 1;
    expect(heap.isPristine()).toBe(false);
  });

  it('false when an order other than the top one is marked non-empty', () => {
    const heap = new CorruptibleBuddy();
    heap.nonEmptyMask = heap.nonEmptyMask | (1 << 2);
    expect(heap.isPristine()).toBe(false);
  });

  it('false when the top order is marked non-empty but does not hold the whole heap', () => {
    const heap = new CorruptibleBuddy();
    heap.clearFreeBitOnly(0, 4);
    expect(heap.nonEmptyMask).toBe(1 << 4);
    expect(heap.liveCounter).toBe(0);
    expect(heap.isPristine()).toBe(false);
  });
});
