/**
 * Self-checks of the first-fit allocator: each condition of `checkIndexes()`
 * (src/alloc/first-fit-check.ts: the node store's list, its ids and counts, the live offsets,
 * each free index's bins, heap positions, counts, heap order and tree of lowest starts) and of
 * `isPristine()` is switched on by corrupting one piece of a real allocator on purpose, and the
 * test expects exactly that condition, worded as the validator words it. Besides: the size bins,
 * the floor (lowered by a smaller request, which indexes what it now covers), the indexes of
 * their own for large alignments, node ids recycled, and the allocator answering like the model
 * after every step of a long stream.
 *
 * The corruption goes through a subclass that reaches the protected node store, indexes and
 * offsets (the same state the bug catalog in mutants/ reaches). Nodes are found by their offsets.
 */
import { describe, expect, it } from 'vitest';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { NIL, type BlockList } from '../src/alloc/first-fit-blocks.js';
import {
  BINS,
  binOf,
  LEVEL1,
  LEVEL2,
  NOT_INDEXED,
  type FreeIndex,
} from '../src/alloc/first-fit-index.js';
import type { LiveOffsets } from '../src/alloc/first-fit-offsets.js';
import type { FirstFitCheckScratch } from '../src/alloc/first-fit-check.js';
import { AllocErrors } from '../src/alloc/allocator.js';
import { FirstFitModel } from '../models/alloc-first-fit.js';
import { takeRandom, thrownBy, uniformStream } from './support.js';

const CAPACITY = 1 << 24;
/** The setups' block size (bin 48). */
const B = 128;

class CorruptibleFirstFit extends FirstFitAllocator {
  constructor(capacityBytes = CAPACITY) {
    super({ capacityBytes });
  }
  get store(): BlockList {
    return this.list;
  }
  get index(): FreeIndex {
    return this.indexes[0]!;
  }
  get allIndexes(): readonly FreeIndex[] {
    return this.indexes;
  }
  get live_(): LiveOffsets {
    return this.offsets;
  }
  /** The self-check's working arrays (after its first call). */
  get scratch(): FirstFitCheckScratch | undefined {
    return this.checkScratch;
  }
  /** The node of the block starting at `offsetBytes` (free or allocated). */
  nodeOf(offsetBytes: number): number {
    for (let node = this.list.head; node !== NIL; node = this.list.next(node))
      if (this.list.start(node) === offsetBytes) return node;
    throw new Error(`test setup: no block at ${offsetBytes}`);
  }
  /** Makes the views rebuild (a corruption does not count as a change). */
  touch(): void {
    this.changes++;
  }
  recordUsed(bytes: number): void {
    this.usedBytesTotal = bytes;
  }
  recordLiveCount(count: number): void {
    this.liveCount = count;
  }
}

/** Blocks of B bytes at 0, B, 2B, ..., every other one freed: `holes` free holes between live blocks, then the free tail. */
function withHoles(holes: number): CorruptibleFirstFit {
  const pool = new CorruptibleFirstFit();
  for (let i = 0; i <= 2 * holes; i++) expect(pool.alloc(B, 1)).toBe(B * i);
  for (let i = 0; i < holes; i++) pool.free(B * (2 * i + 1));
  return pool;
}

describe('first-fit checkIndexes: every condition reported when (and only when) it is broken', () => {
  it('the setups pass: 40 holes of B bytes, all in one bin, and the free tail', () => {
    const pool = withHoles(40);
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.allIndexes).toHaveLength(1);
    expect(pool.blocks().filter((block) => block.free)).toHaveLength(41);
    expect(pool.index.counts[binOf(B)]).toBe(40);
  });

  it('a head that is not the block at offset 0', () => {
    const pool = withHoles(4);
    pool.store.setStart(pool.store.head, 3);
    expect(pool.checkIndexes()).toBe("the list's head is not a first block at offset 0");
  });

  it('a link to an id outside the node store', () => {
    const pool = withHoles(4);
    pool.store.setNext(pool.nodeOf(2 * B), 1 << 20);
    expect(pool.checkIndexes()).toBe(
      `the block at ${2 * B} links to node ${1 << 20}, outside the node store (${pool.store.room} nodes)`,
    );
  });

  it('a block that does not start where the one before it ends', () => {
    const pool = withHoles(4);
    pool.store.setStart(pool.nodeOf(3 * B), 3 * B + 2);
    expect(pool.checkIndexes()).toBe(
      `the block at ${3 * B + 2} does not start where the block before it ends (${3 * B})`,
    );
  });

  it('a block of size 0', () => {
    const pool = withHoles(4);
    const node = pool.nodeOf(3 * B);
    pool.store.setSize(node, 0);
    expect(pool.checkIndexes()).toBe(`the block at ${3 * B} has size 0 (at least 1 byte)`);
  });

  it('a link back to another block than the one before', () => {
    const pool = withHoles(4);
    const node = pool.nodeOf(3 * B);
    pool.store.setPrev(node, pool.nodeOf(0));
    expect(pool.checkIndexes()).toBe(
      `the block at ${3 * B} links back to node ${pool.nodeOf(0)}, not to the block before it (node ${pool.nodeOf(2 * B)})`,
    );
  });

  it('blocks that end before the capacity', () => {
    const pool = withHoles(4);
    const tail = pool.nodeOf(9 * B);
    pool.store.setSize(tail, CAPACITY - 9 * B - 1);
    expect(pool.checkIndexes()).toBe(
      `the blocks end at ${CAPACITY - 1}, not at the capacity ${CAPACITY}`,
    );
  });

  it('used bytes recorded that the allocated blocks do not hold', () => {
    const pool = withHoles(4);
    pool.recordUsed(5 * B + 1);
    expect(pool.checkIndexes()).toBe(
      `${5 * B + 1} used bytes recorded, the allocated blocks hold ${5 * B}`,
    );
  });

  it('an allocation count the list does not hold', () => {
    const pool = withHoles(4);
    pool.recordLiveCount(4);
    expect(pool.checkIndexes()).toBe('4 allocations recorded, the list holds 5 allocated blocks');
  });

  it('a listed node id at or above the high-water mark', () => {
    const pool = withHoles(4);
    const highest = pool.store.highWater - 1;
    pool.store.highWater = highest;
    expect(pool.checkIndexes()).toBe(
      `node ${highest} is listed but not below the ${highest} ids handed out`,
    );
  });

  it('a spare id that is also listed', () => {
    const pool = withHoles(4);
    pool.store.spare[pool.store.spareCount++] = pool.nodeOf(B);
    expect(pool.checkIndexes()).toBe(
      `spare id ${pool.nodeOf(B)} is listed, repeated or never handed out`,
    );
  });

  it('an id handed out that is neither listed nor spare', () => {
    const pool = withHoles(4);
    const { highWater, spareCount } = pool.store;
    pool.store.highWater = highWater + 1;
    expect(pool.checkIndexes()).toBe(
      `node ids: ${highWater + 1} handed out, ${highWater - spareCount} listed and ${spareCount} spare`,
    );
  });

  it('an allocation missing from the live offsets, an offset held for no allocation, a wrong node, a lost probe, a wrong count', () => {
    const pool = withHoles(4);
    const node = pool.nodeOf(2 * B);
    expect(pool.live_.take(2 * B)).toBe(node);
    expect(pool.checkIndexes()).toBe('the live offsets hold 4 entries for 5 allocations');
    pool.live_.put(2 * B, node);
    expect(pool.checkIndexes()).toBeNull();
    pool.live_.put(B, pool.nodeOf(B)); // a free block
    expect(pool.checkIndexes()).toBe(
      `the live offsets map ${B} to node ${pool.nodeOf(B)}, which is not an allocation starting there (or another entry names it too)`,
    );
    pool.live_.take(B);
    pool.live_.put(4 * B + 1, node); // the node of 2B, a second time
    expect(pool.checkIndexes()).toBe(
      `the live offsets map ${4 * B + 1} to node ${node}, which is not an allocation starting there (or another entry names it too)`,
    );
    pool.live_.take(4 * B + 1);
    expect(pool.checkIndexes()).toBeNull();
    pool.live_.count++;
    expect(pool.checkIndexes()).toBe('the live offsets count 6 entries, their table holds 5');
    pool.live_.count--;
    // An entry moved two slots on from its home: the slot it left is empty, so a lookup stops there.
    const { offsets: table, nodes } = pool.live_;
    const slot = table.findIndex((offset) => offset === 4 * B);
    expect(pool.live_.slotOf(4 * B)).toBe(slot); // at its home: the slot it leaves is the hole
    const hole = (slot + 1) & (table.length - 1);
    expect(table[hole]).toBe(-1); // (the setup's table is sparse enough)
    const after = (hole + 1) & (table.length - 1);
    expect(table[after]).toBe(-1);
    [table[after], nodes[after], table[slot]] = [4 * B, nodes[slot]!, -1];
    expect(pool.checkIndexes()).toBe(
      `the live offsets hold ${4 * B} in slot ${after}, past the empty slot ${slot} after its home: a lookup stops there`,
    );
  });

  it('an allocated block left in a bin', () => {
    const pool = withHoles(4);
    pool.index.insert(binOf(B), pool.nodeOf(2 * B), 2 * B);
    expect(pool.checkIndexes()).toBe(
      `the allocated block at ${2 * B} is in bin ${binOf(B)} of the index at alignment 1`,
    );
  });

  it('a spare node id still recorded in a bin', () => {
    const pool = withHoles(4);
    pool.free(2 * B); // merges the holes at B and 3B: their two ids go back
    const spare = pool.store.spare[pool.store.spareCount - 1]!;
    expect(pool.checkIndexes()).toBeNull();
    pool.index.bin[spare] = 7;
    expect(pool.checkIndexes()).toBe(`spare node ${spare} is in bin 7 of the index at alignment 1`);
  });

  it('a free block in another bin than its size gives, in none, or in one below the floor', () => {
    const pool = withHoles(4);
    const hole = pool.nodeOf(B);
    const bin = binOf(B);
    pool.index.remove(hole);
    expect(pool.checkIndexes()).toBe(
      `the free block at ${B} (usable ${B}, floor bin ${pool.index.floorBin}) belongs in bin ${bin} of the index at alignment 1, it is in none`,
    );
    pool.index.insert(bin + 1, hole, B);
    expect(pool.checkIndexes()).toBe(
      `the free block at ${B} (usable ${B}, floor bin ${pool.index.floorBin}) belongs in bin ${bin} of the index at alignment 1, it is in bin ${bin + 1}`,
    );
    pool.index.remove(hole);
    pool.index.insert(bin, hole, B);
    expect(pool.checkIndexes()).toBeNull();
    pool.index.floorBin = bin + 1; // a floor raised by hand: the hole is below it
    expect(pool.checkIndexes()).toBe(
      `the free block at ${B} (usable ${B}, floor bin ${bin + 1}) belongs in none of the index at alignment 1, it is in bin ${bin}`,
    );
  });

  it("a recorded heap position that holds another block's entry, or none", () => {
    const pool = withHoles(4);
    const bin = binOf(B);
    const hole = pool.nodeOf(3 * B);
    const at = pool.index.pos[hole]!;
    const other = at === 1 ? 2 : 1;
    const heap = pool.index.heaps[bin]!;
    pool.index.pos[hole] = other;
    expect(pool.checkIndexes()).toBe(
      `the free block at ${3 * B} (node ${hole}) records position ${other} in bin ${bin} at alignment 1, which holds node ${heap[2 * other + 1]} at ${heap[2 * other]}`,
    );
    pool.index.pos[hole] = 9;
    expect(pool.checkIndexes()).toBe(
      `the free block at ${3 * B} (node ${hole}) records position 9 in bin ${bin} at alignment 1, which holds no entry`,
    );
  });

  it('a bin count that is not the blocks in it', () => {
    const pool = withHoles(4);
    const bin = binOf(B);
    pool.index.counts[bin] = 5;
    expect(pool.checkIndexes()).toBe(
      `bin ${bin} at alignment 1 counts 5 entries, 4 free blocks are in it`,
    );
  });

  it('a heap out of order (an entry that starts before its parent)', () => {
    const pool = withHoles(4);
    const bin = binOf(B);
    const heap = pool.index.heaps[bin]!;
    const [top, second] = [heap[3]!, heap[5]!];
    // Swap the first two entries, positions recorded: only the order is wrong.
    [heap[2], heap[4]] = [heap[4]!, heap[2]!];
    [heap[3], heap[5]] = [second, top];
    pool.index.pos[second] = 1;
    pool.index.pos[top] = 2;
    expect(pool.checkIndexes()).toBe(
      `bin ${bin} at alignment 1: the entry at position 2 starts at ${heap[4]}, not after its parent's ${heap[2]}`,
    );
  });

  it("a bin's lowest start missing from the tree, and a tree node that is not the least of its children", () => {
    const pool = withHoles(4);
    const bin = binOf(B);
    const tops = pool.index.tops;
    expect(tops[bin]).toBe(B);
    tops[bin] = 3 * B;
    expect(pool.checkIndexes()).toBe(
      `bin ${bin} at alignment 1: its lowest start is ${B}, the tree holds ${3 * B}`,
    );
    tops[bin] = B;
    const group = bin >> 3;
    expect(tops[LEVEL1 + group]).toBe(B);
    tops[LEVEL1 + group] = 2 * B;
    expect(pool.checkIndexes()).toBe(
      `tree node ${group} of level 1 at alignment 1 holds ${2 * B}, the least of its children is ${B}`,
    );
    tops[LEVEL1 + group] = B;
    tops[LEVEL2 + (bin >> 6)] = 0;
    expect(pool.checkIndexes()).toBe(
      `tree node ${bin >> 6} of level 2 at alignment 1 holds 0, the least of its children is ${B}`,
    );
  });

  it('the check keeps its working arrays from call to call (the campaign runs it after every step)', () => {
    const pool = withHoles(40);
    expect(pool.checkIndexes()).toBeNull();
    const scratch = pool.scratch!;
    const { seen, tally } = scratch;
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.scratch).toBe(scratch);
    expect(scratch.seen).toBe(seen);
    expect(scratch.tally).toBe(tally);
  });
});

describe('first-fit free indexes', () => {
  it('size bins: one per size below 16, then eight per power of two, up to 2^53', () => {
    for (let size = 0; size < 16; size++) expect(binOf(size)).toBe(size);
    expect([16, 17, 18, 31, 32, 36, 63, 64].map(binOf)).toEqual([16, 16, 17, 23, 24, 25, 31, 32]);
    expect([2 ** 31 - 1, 2 ** 31, 2 ** 31 + 2 ** 28, 2 ** 32 - 1, 2 ** 32].map(binOf)).toEqual([
      231, 232, 233, 239, 240,
    ]);
    expect(binOf(2 ** 53 - 1)).toBe(407);
    expect(binOf(2 ** 53 - 1)).toBeLessThan(BINS);
    for (let size = 16; size < 5000; size++) {
      expect(binOf(size + 1) - binOf(size), `${size}`).toBeLessThanOrEqual(1);
      expect(binOf(size + 1)).toBeGreaterThanOrEqual(binOf(size));
    }
  });

  it('a search over a broken tree (a group minimum above its bins) skips the group, and the self-check names the node', () => {
    const pool = withHoles(40);
    const group = binOf(B) >> 3;
    expect(pool.index.tops[LEVEL1 + group]).toBe(B);
    pool.index.tops[LEVEL1 + group] = Infinity; // the group of bins holding the holes looks empty
    expect(pool.checkIndexes()).toBe(
      `tree node ${group} of level 1 at alignment 1 holds Infinity, the least of its children is ${B}`,
    );
    // 100 bytes: sure in the bins from 37 up, scanned as bins 37-39, then groups 5-7 (5 looks empty), ...
    expect(pool.alloc(100, 1)).toBe(81 * B); // the free tail: the hole at B (the model's answer) is skipped
  });

  it('the floor: blocks smaller than every request so far stay out, a smaller request lowers it and indexes them', () => {
    const pool = new CorruptibleFirstFit(1 << 16);
    const model = new FirstFitModel({ capacityBytes: 1 << 16 });
    expect(pool.index.floorBin).toBe(BINS); // nothing indexed before the first request
    // 1000-byte blocks at 16-byte alignment leave 8-byte paddings between them.
    for (let i = 0; i < 10; i++) expect(pool.alloc(1000, 16)).toBe(model.alloc(1000, 16));
    expect(pool.index.floorBin).toBe(binOf(1000) & ~7);
    const padding = pool.blocks().find((block) => block.free && block.sizeBytes === 8)!;
    expect(pool.index.bin[pool.nodeOf(padding.offsetBytes)]).toBe(NOT_INDEXED);
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.alloc(8, 1)).toBe(model.alloc(8, 1)); // the floor falls to bin 8: the first padding is found
    expect(pool.alloc(8, 1)).toBe(padding.offsetBytes + 1000 + 8);
    expect(pool.index.floorBin).toBe(8);
    expect(pool.checkIndexes()).toBeNull();
  });

  it('alignments from 4 KiB up search an index of their own (usable sizes at that alignment), at most three, smaller ones the size index', () => {
    const pool = new CorruptibleFirstFit(1 << 24);
    const model = new FirstFitModel({ capacityBytes: 1 << 24 });
    for (const [size, align] of [
      [100, 16],
      [3000, 4096],
      [100, 1024],
      [5000, 2048],
      [70, 65536],
      [1, 8192],
      [9, 1],
      [300, 1 << 20], // a fourth: searches the index of 65536
      [5, 32768], // searches the index of 8192
      [70, 65536],
      [1, 1 << 22],
    ] as const) {
      expect(pool.alloc(size, align), `alloc(${size}, ${align})`).toBe(model.alloc(size, align));
      expect(pool.checkIndexes()).toBeNull();
    }
    expect(pool.allIndexes.map((index) => index.alignBytes)).toEqual([1, 4096, 65536, 8192]);
  });

  it('a fourth large alignment searches the index of the largest alignment below it (one above would miss a fit)', () => {
    const capacityBytes = 1 << 20;
    const pool = new CorruptibleFirstFit(capacityBytes);
    const model = new FirstFitModel({ capacityBytes });
    const both = (sizeBytes: number, alignBytes: number) => {
      const offset = pool.alloc(sizeBytes, alignBytes);
      expect(offset, `alloc(${sizeBytes}, ${alignBytes})`).toBe(model.alloc(sizeBytes, alignBytes));
      return offset!;
    };
    both(32768, 1);
    const hole = both(1000, 1); // [32768, 33768): 32 KiB-aligned, too short for 64 KiB alignment
    both(100, 1);
    pool.free(hole);
    model.free(hole);
    both(2000, 4096);
    both(2000, 8192);
    both(2000, 65536);
    expect(pool.allIndexes.map((index) => index.alignBytes)).toEqual([1, 4096, 8192, 65536]);
    // 32 KiB has no index of its own: the 8 KiB one (the largest below) holds the hole, the 64 KiB one does not.
    expect(both(500, 32768)).toBe(hole);
    expect(pool.checkIndexes()).toBeNull();
  });

  it('own indexes from a 64 KiB heap up (a heap of 64 KiB - 1 keeps the size index only)', () => {
    const at = (capacityBytes: number) => {
      const pool = new CorruptibleFirstFit(capacityBytes);
      pool.alloc(1, 4096);
      return pool.allIndexes.length;
    };
    expect(at(65535)).toBe(1);
    expect(at(65536)).toBe(2);
  });

  it("every alignment in use (1 B up to twice the heap): offsets the model's, sound indexes after every step", () => {
    const capacityBytes = 1 << 12;
    const pool = new CorruptibleFirstFit(capacityBytes);
    const model = new FirstFitModel({ capacityBytes });
    const next = uniformStream(0x5eed);
    const live: number[] = [];
    for (let step = 0; step < 600; step++) {
      if (live.length === 0 || next() < 0.6) {
        const sizeBytes = 1 + Math.floor(next() * 40);
        const alignBytes = 2 ** Math.floor(next() * 14);
        const offset = pool.alloc(sizeBytes, alignBytes);
        expect(offset, `step ${step}`).toBe(model.alloc(sizeBytes, alignBytes));
        if (offset !== null) live.push(offset);
      } else {
        const offset = takeRandom(live, next);
        pool.free(offset);
        model.free(offset);
      }
      expect(pool.checkIndexes(), `step ${step}`).toBeNull();
    }
    // A heap below 64 KiB: every alignment searches the size index.
    expect(pool.allIndexes.map((index) => index.alignBytes)).toEqual([1]);
  });
});

describe('first-fit beside the model on a small heap, checked after every step', () => {
  it('4 KiB, 2000 steps, sizes 1-64 B, alignments 1 B - 8 KiB: offsets, checkIndexes, free bytes and blocks agree', () => {
    const capacityBytes = 4096;
    const pool = new CorruptibleFirstFit(capacityBytes);
    const model = new FirstFitModel({ capacityBytes });
    const next = uniformStream(0x2545f491);
    const live: number[] = [];
    for (let step = 0; step < 2000; step++) {
      const phase = Math.floor(step / 500) % 3;
      if (live.length === 0 || next() < (phase === 0 ? 0.8 : phase === 1 ? 0.3 : 0.55)) {
        const sizeBytes = 1 + Math.floor(2 ** (next() * 6));
        const alignBytes = 2 ** Math.floor(next() * next() * 14);
        const offset = pool.alloc(sizeBytes, alignBytes);
        expect(offset, `step ${step}: alloc(${sizeBytes}, ${alignBytes})`).toBe(
          model.alloc(sizeBytes, alignBytes),
        );
        if (offset !== null) live.push(offset);
      } else {
        const offset = takeRandom(live, next);
        pool.free(offset);
        model.free(offset);
      }
      expect(pool.checkIndexes(), `step ${step}`).toBeNull();
      expect(pool.freeBytes(), `step ${step}`).toBe(model.freeBytes());
      if (step % 100 === 0) expect(pool.blocks(), `step ${step}`).toEqual(model.blocks());
      if (step % 100 === 0) expect(pool.live(), `step ${step}`).toEqual(model.live());
    }
  });
});

describe("first-fit free(): BAD_FREE for every offset that is not a live allocation's start", () => {
  it('inside an allocation, inside or at a free block, twice, out of range, not an integer', () => {
    const pool = withHoles(4);
    for (const offset of [
      1,
      B,
      B + 1,
      9 * B,
      9 * B + 1,
      -B,
      CAPACITY,
      CAPACITY + B,
      2.5,
      Number.NaN,
    ]) {
      expect((thrownBy(() => pool.free(offset)) as { code?: string }).code, `free(${offset})`).toBe(
        AllocErrors.BAD_FREE,
      );
    }
    pool.free(0);
    expect((thrownBy(() => pool.free(0)) as { code?: string }).code).toBe(AllocErrors.BAD_FREE);
    expect(pool.checkIndexes()).toBeNull();
  });
});

describe('first-fit isPristine: every condition', () => {
  it('fresh, and back to pristine after every allocation is freed', () => {
    const pool = withHoles(4);
    expect(new CorruptibleFirstFit().isPristine()).toBe(true);
    expect(pool.isPristine()).toBe(false);
    for (let i = 0; i <= 8; i += 2) pool.free(B * i);
    expect(pool.isPristine()).toBe(true);
  });

  const pristine = () => new CorruptibleFirstFit();
  it('an allocation counted: not pristine', () => {
    const pool = pristine();
    pool.recordLiveCount(1);
    expect(pool.isPristine()).toBe(false);
  });
  it('the head allocated: not pristine', () => {
    const pool = pristine();
    pool.store.setFree(pool.store.head, false);
    expect(pool.isPristine()).toBe(false);
  });
  it('the head not at offset 0: not pristine', () => {
    const pool = pristine();
    pool.store.setStart(pool.store.head, 1);
    expect(pool.isPristine()).toBe(false);
  });
  it('the head short of the capacity: not pristine', () => {
    const pool = pristine();
    pool.store.setSize(pool.store.head, CAPACITY - 1);
    expect(pool.isPristine()).toBe(false);
  });
  it('a second block: not pristine', () => {
    const pool = pristine();
    const second = pool.store.create(CAPACITY, 1, true);
    pool.store.insertAfter(pool.store.head, second);
    expect(pool.isPristine()).toBe(false);
  });
});

describe('first-fit node ids and views', () => {
  it('node ids are recycled: the store never outgrows the most blocks held at once', () => {
    const pool = new CorruptibleFirstFit();
    const next = uniformStream(7);
    const live: number[] = [];
    let mostBlocks = 0;
    for (let step = 0; step < 3000; step++) {
      if (live.length < 50 && (live.length === 0 || next() < 0.6)) {
        const offset = pool.alloc(1 + Math.floor(next() * 300), 2 ** Math.floor(next() * 6));
        if (offset !== null) live.push(offset);
      } else {
        pool.free(takeRandom(live, next));
      }
      mostBlocks = Math.max(mostBlocks, pool.blocks().length);
    }
    expect(pool.store.highWater).toBeLessThanOrEqual(mostBlocks);
    expect(pool.checkIndexes()).toBeNull();
  });

  it('blocks() and live() hand out fresh records; the views are rebuilt after a change', () => {
    const pool = withHoles(2);
    const kept = pool.blocks();
    const keptLive = pool.live();
    pool.free(0);
    expect(kept[0]).toEqual({ offsetBytes: 0, sizeBytes: B, free: false });
    expect(keptLive[0]).toEqual({ offsetBytes: 0, sizeBytes: B });
    expect(pool.blocksView()[0]).toEqual({ offsetBytes: 0, sizeBytes: 2 * B, free: true });
    expect(pool.liveView().map((entry) => entry.offsetBytes)).toEqual([2 * B, 4 * B]);
    pool.store.setSize(pool.store.head, 2 * B - 1);
    expect(pool.blocksView()[0]!.sizeBytes).toBe(2 * B); // cached until the next change
    pool.touch();
    expect(pool.blocksView()[0]!.sizeBytes).toBe(2 * B - 1);
  });
});
