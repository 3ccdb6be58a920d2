/**
 * Self-checks of the first-fit allocator: each condition of `checkIndexes()`
 * (src/alloc/first-fit-check.ts: the node store's list, its ids and counts, the chunk
 * directory's first-block records and max trees) and of `isPristine()` is switched on by
 * corrupting one piece of a real allocator on purpose, and the test expects exactly that
 * condition, worded as the validator words it. Besides: the tree grows and keeps its inner
 * nodes exact (a fall goes up at once) with the model's answers, node ids are recycled, every alignment slot works, and
 * the allocator answers like the model after every step of a long stream.
 *
 * The corruption goes through a subclass that reaches the protected node store and directory
 * (the same state the bug catalog in mutants/ reaches). Nodes are found by their offsets.
 */
import { describe, expect, it } from 'vitest';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { NIL, type BlockList } from '../src/alloc/first-fit-blocks.js';
import { CHUNK_SHIFT, FAN, type ChunkDirectory } from '../src/alloc/first-fit-chunks.js';
import type { FirstFitCheckScratch } from '../src/alloc/first-fit-check.js';
import { AllocErrors } from '../src/alloc/allocator.js';
import { FirstFitModel } from '../models/alloc-first-fit.js';
import { takeRandom, thrownBy, uniformStream } from './support.js';

/** 16 MiB: 8192 chunks of 2^CHUNK_SHIFT = 2 KiB, a tree of FAN = 8 leaves at first. */
const CAPACITY = 1 << 24;
/** The setups' block size: 16 blocks to a chunk. */
const B = 2 ** CHUNK_SHIFT / 16;

class CorruptibleFirstFit extends FirstFitAllocator {
  constructor(capacityBytes = CAPACITY) {
    super({ capacityBytes });
  }
  get store(): BlockList {
    return this.list;
  }
  get directory(): ChunkDirectory {
    return this.chunks;
  }
  /** The self-check's working arrays (after its first call). */
  get scratch(): FirstFitCheckScratch | undefined {
    return this.checkScratch;
  }
  /** The node of the block starting at `offsetBytes` (free or allocated). */
  nodeOf(offsetBytes: number): number {
    const node = this.nodeAt(offsetBytes);
    if (node === NIL) throw new Error(`test setup: no block at ${offsetBytes}`);
    return node;
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
  /** The stored value of tree node `index` of level `depth` at alignment slot `slot`. */
  treeValue(slot: number, depth: number, index: number): number {
    return this.chunks.fit[slot * this.chunks.treeSize + this.chunks.levels[depth]! + index]!;
  }
  setTreeValue(slot: number, depth: number, index: number, value: number): void {
    this.chunks.fit[slot * this.chunks.treeSize + this.chunks.levels[depth]! + index] = value;
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
  it('the setups pass: 40 holes over 6 chunks', () => {
    const pool = withHoles(40);
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.directory.slotCount).toBe(1);
    expect(pool.blocks().filter((block) => block.free)).toHaveLength(41);
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

  it('a block starting in a chunk beyond the tree (split off by hand, not noted)', () => {
    const pool = withHoles(4);
    expect(pool.directory.leaves).toBe(FAN);
    const tail = pool.nodeOf(9 * B);
    const far = FAN * pool.directory.chunkBytes + 8;
    const split = pool.store.create(far, CAPACITY - far, true);
    pool.store.setSize(tail, far - 9 * B);
    pool.store.insertAfter(tail, split);
    pool.directory.setLeaf(0, 0, far - 9 * B); // the shrunk tail's value: only the far block is wrong
    expect(pool.checkIndexes()).toBe(
      `the block at ${far} starts in chunk ${FAN}, beyond the directory's ${FAN} chunks`,
    );
  });

  it("a chunk's first-block record that is not the first block starting in it", () => {
    const pool = withHoles(40);
    const chunk = pool.directory.chunkOf(16 * B);
    expect(pool.directory.first[chunk]).toBe(pool.nodeOf(16 * B));
    pool.directory.first[chunk] = pool.nodeOf(17 * B);
    expect(pool.checkIndexes()).toBe(
      `chunk ${chunk} records the block at ${17 * B} as its first block, the first block starting in it is the block at ${16 * B}`,
    );
    pool.directory.first[chunk] = NIL;
    expect(pool.checkIndexes()).toBe(
      `chunk ${chunk} records none as its first block, the first block starting in it is the block at ${16 * B}`,
    );
  });

  it("a chunk's largest usable size that is not its free blocks' largest", () => {
    const pool = withHoles(40);
    const leaves = pool.directory.leaves;
    const depth = pool.directory.depth;
    expect(pool.treeValue(0, depth, 1)).toBe(B);
    pool.setTreeValue(0, depth, 1, B + 1);
    expect(pool.checkIndexes()).toBe(
      `chunk 1: largest usable size at alignment 1 is ${B + 1}, should be ${B}`,
    );
    expect(leaves).toBe(FAN);
  });

  it('a value in the leaf of a chunk no block starts in', () => {
    const pool = withHoles(40);
    const depth = pool.directory.depth;
    expect(pool.directory.first[7]).toBe(NIL); // covered by the free tail, which starts in chunk 5
    pool.setTreeValue(0, depth, 7, 5);
    expect(pool.checkIndexes()).toBe(
      'chunk 7: largest usable size at alignment 1 is 5, should be 0',
    );
  });

  it('an inner tree node below or above the largest of its children', () => {
    const pool = withHoles(40);
    const child = pool.directory.childMax(0, 0, 0);
    expect(pool.treeValue(0, 0, 0)).toBe(child);
    pool.setTreeValue(0, 0, 0, child - 1);
    expect(pool.checkIndexes()).toBe(
      `tree node 0 of level 0 at alignment 1 holds ${child - 1}, the largest of its children is ${child}`,
    );
    pool.setTreeValue(0, 0, 0, child + 1);
    expect(pool.checkIndexes()).toBe(
      `tree node 0 of level 0 at alignment 1 holds ${child + 1}, the largest of its children is ${child}`,
    );
  });

  it('the check keeps its working arrays from call to call (the campaign runs it after every step)', () => {
    const pool = withHoles(40);
    expect(pool.checkIndexes()).toBeNull();
    const scratch = pool.scratch!;
    const { seen, maxima } = scratch;
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.scratch).toBe(scratch);
    expect(scratch.seen).toBe(seen);
    expect(scratch.maxima).toBe(maxima);
  });
});

describe('first-fit max trees', () => {
  it('chunk sizes by heap: 2 chunks up to 16 KiB, 8 KiB chunks up to 8 MiB, 2 KiB above, at most 2^19 chunks', () => {
    const layout = (capacityBytes: number) => {
      const { chunkBytes, chunkCount } = new CorruptibleFirstFit(capacityBytes).directory;
      return [chunkBytes, chunkCount];
    };
    expect(layout(1)).toEqual([1, 1]);
    expect(layout(3)).toEqual([2, 2]);
    expect(layout(4096)).toEqual([2048, 2]);
    expect(layout(5000)).toEqual([4096, 2]);
    expect(layout(65536)).toEqual([8192, 8]);
    expect(layout(65537)).toEqual([8192, 9]);
    expect(layout(2 ** 23)).toEqual([8192, 1024]);
    expect(layout(2 ** 23 + 1)).toEqual([2048, 4097]);
    expect(layout(2 ** 30)).toEqual([2048, 2 ** 19]);
    expect(layout(2 ** 31)).toEqual([4096, 2 ** 19]);
    expect(layout(2 ** 34)).toEqual([2 ** 15, 2 ** 19]);
  });

  it('a search over a broken tree (an inner node above all its children) answers no fit, and the self-check names the node', () => {
    const pool = withHoles(40);
    const largest = pool.treeValue(0, 0, 0);
    pool.setTreeValue(0, 0, 0, CAPACITY); // the root promises a fit no chunk holds
    expect(pool.alloc(largest + 1, 1)).toBeNull();
    expect(pool.checkIndexes()).toBe(
      `tree node 0 of level 0 at alignment 1 holds ${CAPACITY}, the largest of its children is ${largest}`,
    );
  });

  it("a block starting beyond the leaves doubles them: the values move to the new leaves, the answers stay the model's", () => {
    const capacityBytes = CAPACITY; // 2 KiB chunks: 8192, beyond the first 8 leaves
    const pool = new CorruptibleFirstFit(capacityBytes);
    const model = new FirstFitModel({ capacityBytes });
    expect(pool.directory.chunkBytes).toBe(2 ** CHUNK_SHIFT);
    const live: number[] = [];
    for (let i = 0; i < 40; i++) {
      const offset = pool.alloc(12000, i % 3 === 0 ? 16384 : 16);
      expect(offset).toBe(model.alloc(12000, i % 3 === 0 ? 16384 : 16));
      live.push(offset!);
      expect(pool.checkIndexes(), `alloc ${i}`).toBeNull();
    }
    // The last block starts near 600 KiB, in chunk 300 or so: 512 leaves, levels of 512, 64, 8, 1 nodes.
    expect(pool.directory.leaves).toBe(512);
    expect(pool.directory.depth).toBe(3);
    expect([...pool.directory.levelNodes]).toEqual([1, FAN, FAN * FAN, 512]);
    for (const offset of live.filter((_, i) => i % 2 === 0)) {
      pool.free(offset);
      model.free(offset);
      expect(pool.checkIndexes()).toBeNull();
    }
    expect(pool.alloc(24000, 16)).toBe(model.alloc(24000, 16));
    expect(pool.blocks()).toEqual(model.blocks());
  });

  it('a fall goes up the tree at once: the root holds the largest leaf, and the search answers like the model', () => {
    const pool = withHoles(40); // holes of B bytes in chunks 0 - 4, the tail from 81 B in chunk 5
    const tailStart = 81 * B;
    expect(pool.treeValue(0, 0, 0)).toBe(CAPACITY - tailStart);
    expect(pool.alloc(CAPACITY - tailStart, 1)).toBe(tailStart); // the tail taken whole: chunk 5 (no hole) falls to 0
    expect(pool.directory.depth).toBe(1); // the root's children are the leaves
    expect(pool.treeValue(0, 1, 5)).toBe(0);
    expect(pool.treeValue(0, 1, 4)).toBe(B);
    expect(pool.treeValue(0, 0, 0)).toBe(B); // the fall reached the root: no stale value is left
    expect(pool.checkIndexes()).toBeNull();
    expect(pool.alloc(B + 1, 1)).toBeNull();
    expect(pool.alloc(B, 1)).toBe(B);
    expect(pool.checkIndexes()).toBeNull();
  });

  it("every alignment slot in use (1 B up to twice the heap): offsets the model's, a sound directory after every step", () => {
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
    expect(pool.directory.slotCount).toBe(pool.directory.alignLevels + 1);
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
