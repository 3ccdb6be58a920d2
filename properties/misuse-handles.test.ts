/**
 * Misuse at the edges (issue 14): handles that are negative, fractional, not numbers at all, or
 * just past the end, where the contract names the answer. Every case checks the answer and that
 * the structure is unchanged afterwards (a rejected call must not have half-happened).
 *
 * - Sub-allocators (docs/spec/allocators.md, src/alloc/allocator.ts): `free` of an offset that is
 *   not the start of a live allocation is BAD_FREE; a request larger than any heap can hold is null
 *   (no room), never an exception or a small block.
 * - The slot pool (the residency library's SyncManager): `release` of a slot outside
 *   [0, slotCount) or not taken throws; a pool of fewer than one slot, or a fractional count,
 *   is refused.
 * Models and implementations answer alike, so both are held to it.
 */
import { describe, expect, it } from 'vitest';
import { createSubAllocator } from '../src/alloc/index.js';
import { createSubAllocatorModel } from '../models/alloc-index.js';
import { BuddyAllocator } from '../src/alloc/buddy.js';
import { BuddyModel } from '../models/alloc-buddy.js';
import type { BlockAllocator } from '../src/alloc/allocator.js';
import { ContractError } from '../src/contract.js';
import { SlotPool } from '../src/residency/slot-pool.js';

const describeBlocks = (a: BlockAllocator) =>
  a
    .blocks()
    .map((b) => `${b.free ? 'f' : 'u'}${b.offsetBytes}+${b.sizeBytes}`)
    .join(' ');

describe('sub-allocators: free of anything but a live allocation start is BAD_FREE and changes nothing', () => {
  const BAD_OFFSETS = [
    -256,
    -1,
    -4096,
    0.5,
    256.5,
    4096,
    4352,
    2 ** 32,
    2 ** 53,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
  ];
  for (const kind of ['buddy', 'best-fit', 'first-fit'] as const) {
    for (const [side, make] of [
      ['implementation', createSubAllocator],
      ['model', createSubAllocatorModel],
    ] as const) {
      it(`${kind} (${side}): negative, fractional, past-the-end and non-finite offsets`, () => {
        const heap = make(kind, { capacityBytes: 4096, minBlockBytes: 256, poolAlignBytes: 256 });
        expect(heap.alloc(256, 1)).toBe(0);
        expect(heap.alloc(256, 1)).toBe(256);
        heap.free(0); // a free block at 0, a live allocation at 256
        const before = describeBlocks(heap);
        const counters = [heap.freeBytes(), heap.usedBytes(), heap.wasteBytes()];
        for (const offset of [...BAD_OFFSETS, 0, 512]) {
          let thrown: unknown = null;
          try {
            heap.free(offset);
          } catch (error) {
            thrown = error;
          }
          expect(thrown, `free(${offset})`).toBeInstanceOf(ContractError);
          expect((thrown as ContractError).code, `free(${offset})`).toBe('BAD_FREE');
          expect(describeBlocks(heap), `blocks after free(${offset})`).toBe(before);
          expect(
            [heap.freeBytes(), heap.usedBytes(), heap.wasteBytes()],
            `counters after free(${offset})`,
          ).toEqual(counters);
          expect(heap.checkIndexes(), `indexes after free(${offset})`).toBeNull();
        }
        heap.free(256);
        expect(heap.isPristine()).toBe(true);
      });

      it(`${kind} (${side}): a request no heap can hold is null, not a small block`, () => {
        const heap = make(kind, { capacityBytes: 4096, minBlockBytes: 256, poolAlignBytes: 256 });
        // 2^32 + 1 order-0 units: a 32-bit count of them would wrap to 1.
        expect(heap.alloc(2 ** 40 + 1, 1)).toBeNull();
        expect(heap.alloc(2 ** 52, 1)).toBeNull();
        expect(heap.alloc(4097, 1)).toBeNull();
        expect(heap.isPristine()).toBe(true);
      });
    }
  }
});

/** Reaches the buddy's protected order step (it depends only on minBlockBytes, not on the heap). */
class BuddyOrderProbe extends BuddyAllocator {
  orderOfRequest(sizeBytes: number, alignBytes: number): number {
    return this.orderFor(sizeBytes, alignBytes);
  }
}

describe('buddy: heaps beyond 32 bits', () => {
  it('the order of a request is exact up to the config limit of 2^30 units, and above every order past it', () => {
    // A heap of 2^30 units needs gigabytes of tables; the order step does not, so it is asked directly.
    const probe = new BuddyOrderProbe({ capacityBytes: 1024, minBlockBytes: 256 });
    expect('orderOfRequest' in BuddyAllocator.prototype).toBe(false);
    for (let k = 0; k <= 30; k++) {
      expect(probe.orderOfRequest(256 * 2 ** k, 1), `2^${k} units`).toBe(k);
      expect(probe.orderOfRequest(1, 256 * 2 ** k), `alignment of 2^${k} units`).toBe(k);
      if (k < 30)
        expect(probe.orderOfRequest(256 * 2 ** k + 1, 1), `2^${k} units + 1 byte`).toBe(k + 1);
    }
    expect(probe.orderOfRequest(1, 1)).toBe(0);
    for (const sizeBytes of [256 * 2 ** 30 + 1, 256 * 2 ** 31, 256 * (2 ** 32 + 1), 2 ** 53 - 1]) {
      expect(probe.orderOfRequest(sizeBytes, 1), `${sizeBytes} bytes`).toBeGreaterThan(30);
    }
  });

  for (const [side, make] of [
    [
      'implementation',
      (capacityBytes: number, minBlockBytes: number) =>
        new BuddyAllocator({ capacityBytes, minBlockBytes }),
    ],
    [
      'model',
      (capacityBytes: number, minBlockBytes: number) =>
        new BuddyModel({ capacityBytes, minBlockBytes }),
    ],
  ] as const) {
    it(`${side}: a 16 GiB heap keeps allocation sizes above 4 GiB exact`, () => {
      // 16 GiB of 1 MiB blocks: 16384 units, so the test is small while the byte sizes are not.
      const heap = make(2 ** 34, 2 ** 20);
      const first = 2 ** 32 + 1; // an 8 GiB block
      const second = 3 * 2 ** 31; // 6 GiB: the other 8 GiB block
      expect(heap.alloc(first, 1)).toBe(0);
      expect(heap.live()).toEqual([{ offsetBytes: 0, sizeBytes: first }]);
      expect(heap.usedBytes()).toBe(first);
      expect(heap.wasteBytes()).toBe(2 ** 33 - first);
      expect(heap.alloc(second, 1)).toBe(2 ** 33);
      expect(heap.live()).toEqual([
        { offsetBytes: 0, sizeBytes: first },
        { offsetBytes: 2 ** 33, sizeBytes: second },
      ]);
      expect(heap.alloc(1, 1)).toBeNull();
      heap.free(0);
      expect(heap.usedBytes()).toBe(second);
      expect(heap.freeBytes()).toBe(2 ** 33);
      heap.free(2 ** 33);
      expect(heap.isPristine()).toBe(true);
      expect(heap.usedBytes()).toBe(0);
    });

    it(`${side}: exactly 4 GiB still keeps a size of 4 GiB exact`, () => {
      const heap = make(2 ** 32, 2 ** 20);
      expect(heap.alloc(2 ** 32, 1)).toBe(0);
      expect(heap.live()).toEqual([{ offsetBytes: 0, sizeBytes: 2 ** 32 }]);
      expect(heap.alloc(1, 1)).toBeNull();
      heap.free(0);
      expect(heap.isPristine()).toBe(true);
    });
  }
});

describe('slot pool: release outside the taken slots throws and changes nothing', () => {
  it('refuses a pool of fewer than one slot or a fractional count', () => {
    for (const count of [0, -1, -32, 1.5, 32.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new SlotPool(count), `new SlotPool(${count})`).toThrow(
        new RangeError(`slotCount must be >= 1, got ${count}`),
      );
    }
    expect(new SlotPool(1).slotCount).toBe(1);
  });

  it('release of slotCount (a permanently taken padding bit), past the end, negative, or a free slot', () => {
    const pool = new SlotPool(33);
    for (let i = 0; i < 33; i++) expect(pool.acquire()).toBe(i);
    pool.release(5);
    for (const slot of [33, 34, 63, 64, 1000, -1, -33, 5]) {
      expect(() => pool.release(slot), `release(${slot})`).toThrow(
        `slot pool: release of slot ${slot} that is not taken`,
      );
      expect(pool.taken, `taken after release(${slot})`).toBe(32);
    }
    // The padding bits are still taken: the pool hands out slot 5 and then nothing.
    expect(pool.acquire()).toBe(5);
    expect(pool.acquire()).toBe(-1);
    expect(pool.takenSlots()).toEqual(Array.from({ length: 33 }, (_, i) => i));
  });

  it('release of a fresh (never taken) slot throws', () => {
    const pool = new SlotPool(64);
    expect(() => pool.release(0)).toThrow('slot pool: release of slot 0 that is not taken');
    expect(() => pool.release(63)).toThrow('slot pool: release of slot 63 that is not taken');
    expect(pool.taken).toBe(0);
    expect(pool.acquire()).toBe(0);
  });

  it('a negative slot is refused even where its word index lands on a real word (a pool past 2^31 slots)', () => {
    // -(2^31) + 1 >>> 5 is word 2^26 and & 31 is bit 1: in a pool of 2^31 + 1 slots that is a
    // padding bit of the last word, permanently taken. The release must not free it. (The
    // 256 MiB bitset is zero pages except its last word.)
    const pool = new SlotPool(2 ** 31 + 1);
    const slot = -(2 ** 31) + 1;
    expect(() => pool.release(slot)).toThrow(
      `slot pool: release of slot ${slot} that is not taken`,
    );
    expect(pool.taken).toBe(0);
    expect(pool.isTaken(2 ** 31)).toBe(false);
  });

  it('isTaken answers for taken and free slots', () => {
    const pool = new SlotPool(40);
    expect(pool.acquire()).toBe(0);
    expect(pool.acquire()).toBe(1);
    pool.release(0);
    expect([pool.isTaken(0), pool.isTaken(1), pool.isTaken(2), pool.isTaken(39)]).toEqual([
      false,
      true,
      false,
      false,
    ]);
    for (let i = 0; i < 39; i++) pool.acquire();
    expect(pool.isTaken(39)).toBe(true);
    expect(pool.isTaken(32)).toBe(true);
  });
});
