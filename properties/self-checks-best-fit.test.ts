/**
 * Self-checks of the best-fit allocator (issue 14): each condition of `checkIndexes()` (the size
 * index against the block list) and of `isPristine()` is switched on by corrupting one piece of a
 * real allocator on purpose, and the test expects exactly that condition, worded as the
 * validator words it.
 *
 * The corruption goes through a subclass that reaches the protected node arrays (the same state
 * the bug catalog in mutants/ overrides). Nodes are found by walking the block list from the
 * head, not by assuming which ids the allocator hands out. Pool: 4096 bytes, 256-byte units.
 */
import { describe, expect, it } from 'vitest';
import { BestFitAllocator } from '../src/alloc/best-fit';

const NIL = -1;

class CorruptibleBestFit extends BestFitAllocator {
  constructor() {
    super({ capacityBytes: 4096, poolAlignBytes: 256 });
  }
  /** The list's nodes from the head, in offset order. */
  blockNodes(): number[] {
    const nodes: number[] = [];
    for (let node = this.head; node !== NIL && nodes.length <= 64; node = this.next[node]!) nodes.push(node);
    return nodes;
  }
  /** The node of the block starting at `offsetBytes`. */
  nodeAt(offsetBytes: number): number {
    const node = this.blockNodes().find((n) => this.offsetUnits[n]! * this.poolAlignBytes === offsetBytes);
    if (node === undefined) throw new Error(`test setup: no block at ${offsetBytes}`);
    return node;
  }
  units(node: number): number {
    return this.sizeUnits[node]!;
  }
  root(sizeUnits: number): number {
    return this.bucketRoot[sizeUnits]!;
  }
  setRoot(sizeUnits: number, node: number): void {
    this.bucketRoot[sizeUnits] = node;
  }
  setSizeBit(sizeUnits: number, on: boolean): void {
    if (on) this.freeSizes.set(sizeUnits);
    else this.freeSizes.clear(sizeUnits);
  }
  setChildren(node: number, left: number, right: number): void {
    this.bucketLeft[node] = left;
    this.bucketRight[node] = right;
  }
  setPriority(node: number, priority: number): void {
    this.bucketPriority[node] = priority;
  }
  setFreeFlag(node: number, free: boolean): void {
    this.isFree[node] = free ? 1 : 0;
  }
  setSizeUnits(node: number, units: number): void {
    this.sizeUnits[node] = units;
  }
  setPrev(node: number, prev: number): void {
    this.prev[node] = prev;
  }
  setNext(node: number, next: number): void {
    this.next[node] = next;
  }
  forgetLiveAt(offsetBytes: number): void {
    this.liveAtUnit[offsetBytes / this.poolAlignBytes] = NIL;
  }
  addIndexedCount(delta: number): void {
    this.indexedCount += delta;
  }
  addLiveCount(delta: number): void {
    this.liveCount += delta;
  }
  get headNode(): number {
    return this.head;
  }
}

/**
 * Blocks: live [0,256), free [256,512), live [512,768), free [768,1024), live [1024,1280),
 * free [1280,1536), live [1536,1792), free [1792,4096): three free blocks of one unit (one size
 * bucket with three nodes) and one of nine units.
 */
function threeHoles(): CorruptibleBestFit {
  const pool = new CorruptibleBestFit();
  for (let i = 0; i < 7; i++) expect(pool.alloc(256, 1)).toBe(i * 256);
  for (const offset of [256, 768, 1280]) pool.free(offset);
  expect(pool.checkIndexes()).toBeNull();
  return pool;
}

describe('best-fit checkIndexes: every condition reported when (and only when) it is broken', () => {
  it('the corruption helpers shadow no method of the allocator', () => {
    const own = Object.getOwnPropertyNames(CorruptibleBestFit.prototype).filter((name) => name !== 'constructor');
    expect(own.filter((name) => name in BestFitAllocator.prototype)).toEqual([]);
  });

  it('a sound pool passes: pristine, with holes, merged back', () => {
    const pool = new CorruptibleBestFit();
    expect(pool.checkIndexes()).toBeNull();
    const holes = threeHoles();
    for (const offset of [0, 512, 1024, 1536]) holes.free(offset);
    expect(holes.checkIndexes()).toBeNull();
    expect(holes.isPristine()).toBe(true);
  });

  it('a size bit set with no free block of that size', () => {
    const pool = new CorruptibleBestFit();
    pool.setSizeBit(3, true);
    expect(pool.checkIndexes()).toBe('size 3 has its bit set but no free blocks');
  });

  it('a node reached twice by the size index', () => {
    const pool = threeHoles();
    const hole = pool.nodeAt(1792); // nine units, alone in its bucket
    pool.setRoot(12, hole);
    pool.setSizeBit(12, true);
    expect(pool.checkIndexes()).toBe(`the size index reaches node ${hole} twice`);
  });

  it('an indexed node that is not free', () => {
    const pool = threeHoles();
    const hole = pool.nodeAt(1792);
    pool.setFreeFlag(hole, false);
    expect(pool.checkIndexes()).toBe(`the size index lists node ${hole} under size 9 but it is not a free block of that size`);
  });

  it('an indexed node whose size is not its bucket', () => {
    const pool = threeHoles();
    const hole = pool.nodeAt(1792);
    pool.setSizeUnits(hole, 8);
    expect(pool.checkIndexes()).toBe(`the size index lists node ${hole} under size 9 but it is not a free block of that size`);
  });

  /** Rebuilds the one-unit bucket as middle (root) with the lower hole left and the upper right. */
  function balancedBucket(pool: CorruptibleBestFit): { low: number; middle: number; high: number } {
    const [low, middle, high] = [256, 768, 1280].map((offset) => pool.nodeAt(offset)) as [number, number, number];
    pool.setRoot(1, middle);
    pool.setChildren(middle, low, high);
    pool.setChildren(low, NIL, NIL);
    pool.setChildren(high, NIL, NIL);
    pool.setPriority(middle, 1000);
    pool.setPriority(low, 10);
    pool.setPriority(high, 10);
    expect(pool.checkIndexes()).toBeNull();
    return { low, middle, high };
  }

  it('a size bucket out of offset order', () => {
    const pool = threeHoles();
    const { low, middle, high } = balancedBucket(pool);
    pool.setChildren(middle, high, low); // in order: 1280, 768, 256
    expect(pool.checkIndexes()).toBe('size 1: the index is not in offset order');
  });

  it('a left child that outranks its parent', () => {
    const pool = threeHoles();
    const { low, middle } = balancedBucket(pool);
    pool.setPriority(low, 1001);
    expect(pool.checkIndexes()).toBe(`size 1: node ${low} outranks its parent ${middle}`);
  });

  it('a right child that outranks its parent', () => {
    const pool = threeHoles();
    const { high, middle } = balancedBucket(pool);
    pool.setPriority(high, 1001);
    expect(pool.checkIndexes()).toBe(`size 1: node ${high} outranks its parent ${middle}`);
  });

  it('equal priorities are allowed (a parent at least its children)', () => {
    const pool = threeHoles();
    const { low, high } = balancedBucket(pool);
    pool.setPriority(low, 1000);
    pool.setPriority(high, 1000);
    expect(pool.checkIndexes()).toBeNull();
  });

  it('a size with free blocks but its bit clear', () => {
    const pool = threeHoles();
    pool.setSizeBit(9, false);
    expect(pool.checkIndexes()).toBe('size 9 has free blocks but its bit is clear');
  });

  it('an index entry count that disagrees with the entries', () => {
    const pool = threeHoles();
    pool.addIndexedCount(1);
    expect(pool.checkIndexes()).toBe('the size index holds 4 entries but counts 5');
  });

  it('a prev link that does not point at the previous block', () => {
    const pool = threeHoles();
    const nodes = pool.blockNodes();
    pool.setPrev(nodes[3]!, nodes[1]!);
    expect(pool.checkIndexes()).toBe(`node ${nodes[3]}: prev link does not point at the previous block`);
  });

  it('a free block missing from the size index', () => {
    const pool = threeHoles();
    pool.setRoot(9, NIL);
    pool.setSizeBit(9, false);
    pool.addIndexedCount(-1);
    expect(pool.checkIndexes()).toBe('free block at 1792 is missing from the size index');
  });

  it('an allocated block its caller offset does not find', () => {
    const pool = threeHoles();
    pool.forgetLiveAt(512);
    expect(pool.checkIndexes()).toBe('allocated block at 512 is not found by its caller offset');
  });

  it('an indexed free block that is not in the block list', () => {
    // Cut the list after the block at 1536: the nine-unit hole is still indexed but not listed.
    const pool = threeHoles();
    pool.setNext(pool.nodeAt(1536), NIL);
    expect(pool.checkIndexes()).toBe('the size index holds 4 entries for 3 free blocks');
  });

  it('a live count that disagrees with the allocated blocks', () => {
    const pool = threeHoles();
    pool.addLiveCount(1);
    expect(pool.checkIndexes()).toBe('5 live allocations counted for 4 allocated blocks');
  });
});

describe('best-fit isPristine: each of its four conditions', () => {
  it('true on a new pool and after everything is freed again', () => {
    const pool = new CorruptibleBestFit();
    expect(pool.isPristine()).toBe(true);
    const a = pool.alloc(100, 1)!;
    expect(pool.isPristine()).toBe(false);
    pool.free(a);
    expect(pool.isPristine()).toBe(true);
  });

  it('false when a live allocation is counted', () => {
    const pool = new CorruptibleBestFit();
    pool.addLiveCount(1);
    expect(pool.isPristine()).toBe(false);
  });

  it('false when the head block has a successor', () => {
    const pool = new CorruptibleBestFit();
    pool.setNext(pool.headNode, pool.headNode);
    expect(pool.isPristine()).toBe(false);
  });

  it('false when the head block is not free', () => {
    const pool = new CorruptibleBestFit();
    pool.setFreeFlag(pool.headNode, false);
    expect(pool.isPristine()).toBe(false);
  });

  it('false when the head block is not the whole pool', () => {
    const pool = new CorruptibleBestFit();
    pool.setSizeUnits(pool.headNode, 15);
    expect(pool.isPristine()).toBe(false);
  });
});
