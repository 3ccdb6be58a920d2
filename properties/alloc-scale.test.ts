/**
 * The allocators' indexes at a scale the generated sequences do not reach: first fit's size bins
 * hold heaps of hundreds of free blocks each (deep sifts, many bins under one tree group), and
 * best fit's size heaps widen their tables, so a few thousand free blocks are needed before those
 * paths run. One deterministic stream of allocs and frees
 * (three phases: fill, drain, churn; sizes 1 B - 16 KiB, alignments 1 B - 8 MiB) drives each
 * implementation beside its model: every offset must match, and checkIndexes, the block tiling
 * and the live list are compared at intervals.
 */
import { describe, expect, it } from 'vitest';
import { BestFitAllocator } from '../src/alloc/best-fit.js';
import { BuddyAllocator } from '../src/alloc/buddy.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { BestFitModel } from '../models/alloc-best-fit.js';
import { BuddyModel } from '../models/alloc-buddy.js';
import { FirstFitModel } from '../models/alloc-first-fit.js';
import type { BlockAllocator } from '../src/alloc/allocator.js';
import { takeRandom, uniformStream } from './support.js';

/** A request of the stream: [sizeBytes, alignBytes] from the stream's random numbers. */
type Request = (next: () => number) => [number, number];

/** Sizes 1 B - 16 KiB, alignments mostly small, sometimes up to 8 MiB. */
const smallRequests: Request = (next) => {
  const sizeBytes = 1 + Math.floor(2 ** (next() * 14));
  const r = next();
  return [
    sizeBytes,
    r < 0.3 ? 1 : r < 0.5 ? 16 : r < 0.8 ? 256 : r < 0.95 ? 4096 : 2 ** Math.floor(next() * 24),
  ];
};

function drive(
  impl: BlockAllocator,
  model: BlockAllocator,
  steps: number,
  request: Request = smallRequests,
  compareEvery = 1009,
): { maxLive: number } {
  const next = uniformStream(0x9e3779b9);
  const live: number[] = [];
  let maxLive = 0;
  for (let step = 0; step < steps; step++) {
    const phase = Math.floor(step / 3000) % 3;
    const allocate = live.length === 0 || next() < (phase === 0 ? 0.75 : phase === 1 ? 0.3 : 0.5);
    if (allocate) {
      const [sizeBytes, alignBytes] = request(next);
      const offset = impl.alloc(sizeBytes, alignBytes);
      expect(offset, `step ${step}: alloc(${sizeBytes}, ${alignBytes})`).toBe(
        model.alloc(sizeBytes, alignBytes),
      );
      if (offset !== null) live.push(offset);
    } else {
      const offset = takeRandom(live, next);
      impl.free(offset);
      model.free(offset);
    }
    maxLive = Math.max(maxLive, live.length);
    if (step % 211 === 0) expect(impl.checkIndexes(), `step ${step}`).toBeNull();
    if (step % compareEvery === 0) {
      expect(impl.blocks(), `step ${step}`).toEqual(model.blocks());
      expect(impl.live(), `step ${step}`).toEqual(model.live());
    }
  }
  for (const offset of live) {
    impl.free(offset);
    model.free(offset);
  }
  expect(impl.checkIndexes()).toBeNull();
  expect(impl.isPristine()).toBe(true);
  return { maxLive };
}

describe('allocator indexes at scale (thousands of free blocks)', () => {
  const capacityBytes = 3 * 2 ** 22 + 4096;
  it('first fit: deep bin heaps and many bins agree with the model offset for offset', () => {
    const { maxLive } = drive(
      new FirstFitAllocator({ capacityBytes }),
      new FirstFitModel({ capacityBytes }),
      12000,
    );
    expect(maxLive).toBeGreaterThan(1500); // enough free blocks for heaps of many levels
  });
  it('best fit agrees with the model over the same stream', () => {
    drive(
      new BestFitAllocator({ capacityBytes, poolAlignBytes: 256 }),
      new BestFitModel({ capacityBytes, poolAlignBytes: 256 }),
      12000,
    );
  });
  it('buddy agrees with the model over the same stream', () => {
    drive(
      new BuddyAllocator({ capacityBytes: 2 ** 24, minBlockBytes: 256 }),
      new BuddyModel({ capacityBytes: 2 ** 24, minBlockBytes: 256 }),
      12000,
    );
  });
});

describe('allocators on heaps above 4 GiB (offsets past 32 bits, alignments above 2^30)', () => {
  // GPU heaps and virtual blocks above 4 GiB exist; offsets there no longer fit 32-bit masks, and
  // alignments above 2^30 take the allocators' wide paths. Sizes 1 B - 16 GiB, alignments 1 B -
  // 32 GiB on a 64 GiB heap: every offset, the tiling and the live list must match the model.
  const capacityBytes = 64 * 2 ** 30;
  const hugeRequests: Request = (next) => [
    1 + Math.floor(2 ** (next() * 34)),
    2 ** Math.floor(next() * 36),
  ];
  it('first fit', () => {
    drive(
      new FirstFitAllocator({ capacityBytes }),
      new FirstFitModel({ capacityBytes }),
      3000,
      hugeRequests,
      7,
    );
  });
  it('best fit', () => {
    const config = { capacityBytes, poolAlignBytes: 65536 };
    drive(new BestFitAllocator(config), new BestFitModel(config), 3000, hugeRequests, 7);
  });
  it('buddy', () => {
    const config = { capacityBytes, minBlockBytes: 256 };
    drive(new BuddyAllocator(config), new BuddyModel(config), 3000, hugeRequests, 7);
  });
});

describe('best fit past 2^16 blocks (node ids above 16 bits)', () => {
  // The live-offset table holds node ids in 16 bits until the node arrays reach 2^16 entries,
  // then widens: 70000 blocks of one unit, each found again by its offset when freed.
  it('every block is freed by its offset, the pool ends pristine', () => {
    const blocks = 70000;
    const pool = new BestFitAllocator({ capacityBytes: 2 ** 17 * 256, poolAlignBytes: 256 });
    for (let i = 0; i < blocks; i++) expect(pool.alloc(256, 1)).toBe(i * 256);
    expect(pool.checkIndexes()).toBeNull();
    // The newest blocks (the highest node ids) first, then the rest from the bottom up.
    for (let i = blocks - 1; i >= blocks - 5000; i--) pool.free(i * 256);
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.live()).toHaveLength(blocks - 5000);
    for (let i = 0; i < blocks - 5000; i++) pool.free(i * 256);
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.isPristine()).toBe(true);
  });
});

describe("best fit's size heaps: an emptied heap's region is reused", () => {
  class ArenaBestFit extends BestFitAllocator {
    arenaLength(): number {
      return this.heapArena.length;
    }
  }
  it('freeing and re-taking blocks of 40 sizes 10000 times keeps the heap arena as it was', () => {
    const pool = new ArenaBestFit({ capacityBytes: 4096 * 256, poolAlignBytes: 256 });
    // Blocks of 1..40 units, each followed by a one-unit spacer that stays allocated.
    const offsets: number[] = [];
    for (let units = 1; units <= 40; units++) {
      offsets.push(pool.alloc(units * 256, 1)!);
      pool.alloc(256, 1);
    }
    const cycle = (k: number): void => {
      const units = 1 + (k % 40);
      pool.free(offsets[units - 1]!); // a heap of its own size: the only free block of it
      expect(pool.alloc(units * 256, 1)).toBe(offsets[units - 1]); // taken whole: the heap empties
    };
    for (let k = 0; k < 40; k++) cycle(k);
    const length = pool.arenaLength();
    for (let k = 0; k < 10000; k++) cycle(k);
    expect(pool.arenaLength()).toBe(length);
    expect(pool.checkIndexes()).toBeNull();
  });
});
