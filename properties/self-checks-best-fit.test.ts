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
import { BestFitAllocator } from '../src/alloc/best-fit.js';

const NIL = -1;

class CorruptibleBestFit extends BestFitAllocator {
  constructor() {
    super({ capacityBytes: 4096, poolAlignBytes: 256 });
  }
  /** The list's nodes from the head, in offset order. */
  blockNodes(): number[] {
    const nodes: number[] = [];
    for (let node = this.head; node !== NIL && nodes.length <= 64; node = this.next[node]!)
      nodes.push(node);
    return nodes;
  }
  /** The node of the block starting at `offsetBytes`. */
  nodeAt(offsetBytes: number): number {
    const node = this.blockNodes().find(
      (n) => this.offsetUnits[n]! * this.poolAlignBytes === offsetBytes,
    );
    if (node === undefined) throw new Error(`test setup: no block at ${offsetBytes}`);
    return node;
  }
  units(node: number): number {
    return this.sizeUnits[node]!;
  }
  offsetOf(node: number): number {
    return this.offsetUnits[node]! * this.poolAlignBytes;
  }
  slotOf(sizeUnits: number): number {
    return this.heapBase[sizeUnits]!;
  }
  setSlot(sizeUnits: number, base: number): void {
    this.heapBase[sizeUnits] = base;
  }
  /** The heap of a size: [count, length, offset units of entry 1, node of entry 1, ...]. */
  heapOf(sizeUnits: number): Int32Array {
    return this.heapView(sizeUnits);
  }
  /** Entry i (1-based) of a size's heap as [offset in bytes, node]. */
  entry(sizeUnits: number, i: number): [number, number] {
    const heap = this.heapOf(sizeUnits);
    return [heap[2 * i]! * this.poolAlignBytes, heap[2 * i + 1]!];
  }
  setEntry(sizeUnits: number, i: number, offsetBytes: number, node: number): void {
    const heap = this.heapOf(sizeUnits);
    heap[2 * i] = offsetBytes / this.poolAlignBytes;
    heap[2 * i + 1] = node;
  }
  /** Nodes handed out so far: ids at or above it name no node. */
  highWater(): number {
    return this.nodeHighWater;
  }
  setHeapCount(sizeUnits: number, count: number): void {
    this.heapOf(sizeUnits)[0] = count;
  }
  setHeapPosition(node: number, position: number): void {
    this.heapPos[node] = position;
  }
  setSizeBit(sizeUnits: number, on: boolean): void {
    if (on) this.freeSizes.set(sizeUnits);
    else this.freeSizes.clear(sizeUnits);
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
    this.liveAtUnit[offsetBytes / this.poolAlignBytes] = 0;
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
 * heap with three entries) and one of nine units.
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
    const own = Object.getOwnPropertyNames(CorruptibleBestFit.prototype).filter(
      (name) => name !== 'constructor',
    );
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
    const hole = pool.nodeAt(1792); // nine units, alone in its heap
    pool.setSlot(12, pool.slotOf(9)); // size 12 shares size 9's heap
    pool.setSizeBit(12, true);
    expect(pool.checkIndexes()).toBe(`the size index reaches node ${hole} twice`);
  });

  it('an indexed node that is not free', () => {
    const pool = threeHoles();
    const hole = pool.nodeAt(1792);
    pool.setFreeFlag(hole, false);
    expect(pool.checkIndexes()).toBe(
      `the size index lists node ${hole} under size 9 but it is not a free block of that size`,
    );
  });

  it('an indexed node whose size is not its heap', () => {
    const pool = threeHoles();
    const hole = pool.nodeAt(1792);
    pool.setSizeUnits(hole, 8);
    expect(pool.checkIndexes()).toBe(
      `the size index lists node ${hole} under size 9 but it is not a free block of that size`,
    );
  });

  it('a heap whose count runs past its array', () => {
    const pool = threeHoles();
    const room = (pool.heapOf(9).length >> 1) - 1;
    pool.setHeapCount(9, room + 1);
    expect(pool.checkIndexes()).toBe(
      `size 9: the heap counts ${room + 1} entries but has room for ${room}`,
    );
  });

  it('a heap entry that names no node', () => {
    const pool = threeHoles();
    pool.setEntry(9, 1, 1792, 999);
    expect(pool.checkIndexes()).toBe('size 9: heap entry 1 names no node (999)');
  });

  it('a heap entry naming node -1, or the first node never handed out: both name no node', () => {
    for (const bad of [-1, 'high-water'] as const) {
      const pool = threeHoles();
      const node = bad === -1 ? -1 : pool.highWater();
      pool.setEntry(9, 1, 1792, node);
      expect(pool.checkIndexes()).toBe(`size 9: heap entry 1 names no node (${node})`);
    }
  });

  it('a size bit set over a heap that exists but is empty', () => {
    const pool = threeHoles();
    pool.setHeapCount(9, 0);
    expect(pool.checkIndexes()).toBe('size 9 has its bit set but no free blocks');
  });

  it('the one-unit heap as built: lowest offset on top, every hole once', () => {
    const pool = threeHoles();
    expect(pool.heapOf(1)[0]).toBe(3);
    expect(pool.entry(1, 1)[0]).toBe(256);
    expect([1, 2, 3].map((i) => pool.entry(1, i)[0]).sort((a, b) => a - b)).toEqual([
      256, 768, 1280,
    ]);
    for (const i of [1, 2, 3]) expect(pool.offsetOf(pool.entry(1, i)[1])).toBe(pool.entry(1, i)[0]);
  });

  it("a heap entry whose offset key is not its node's offset", () => {
    const pool = threeHoles();
    const [offset, node] = pool.entry(1, 2);
    pool.setEntry(1, 2, 3840, node);
    expect(pool.checkIndexes()).toBe(
      `size 1: heap entry 2 keeps offset 3840 for node ${node} at ${offset}`,
    );
  });

  it('a node whose recorded heap position is not where it sits', () => {
    const pool = threeHoles();
    const [, node] = pool.entry(1, 2);
    pool.setHeapPosition(node, 3);
    expect(pool.checkIndexes()).toBe(`size 1: node ${node} records heap position 3 but sits at 2`);
  });

  it('a child with a lower offset than its parent (entries swapped, positions kept consistent)', () => {
    const pool = threeHoles();
    const [topOffset, top] = pool.entry(1, 1);
    const [childOffset, child] = pool.entry(1, 2);
    pool.setEntry(1, 1, childOffset, child);
    pool.setEntry(1, 2, topOffset, top);
    pool.setHeapPosition(child, 1);
    pool.setHeapPosition(top, 2);
    expect(pool.checkIndexes()).toBe(
      `size 1: node ${top} sits below a parent with a higher offset`,
    );
  });

  it('siblings in either order are allowed (the heap orders parent to child only)', () => {
    const pool = threeHoles();
    const [leftOffset, left] = pool.entry(1, 2);
    const [rightOffset, right] = pool.entry(1, 3);
    pool.setEntry(1, 2, rightOffset, right);
    pool.setEntry(1, 3, leftOffset, left);
    pool.setHeapPosition(right, 2);
    pool.setHeapPosition(left, 3);
    expect(pool.checkIndexes()).toBeNull();
    // The allocator still hands out the lowest offset of the size first.
    expect(pool.alloc(256, 1)).toBe(256);
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
    expect(pool.checkIndexes()).toBe(
      `node ${nodes[3]}: prev link does not point at the previous block`,
    );
  });

  it('a free block missing from the size index', () => {
    const pool = threeHoles();
    pool.setSlot(9, NIL);
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

describe("best fit's size heaps: a top taken out by a merge", () => {
  // Ten one-unit holes at low offsets, freed in an order that leaves a hole of offset 6 as the
  // heap's last entry; freeing unit 1 merges unit 0 (the top) away, and the last entry, whose
  // offset (6) is below the heap's count, must sink under the lower offsets 4 and 8 again.
  it('re-sifts the last entry down from the root, and the holes come back lowest offset first', () => {
    const pool = new BestFitAllocator({ capacityBytes: 64 * 256, poolAlignBytes: 256 });
    for (let unit = 0; unit < 32; unit++) expect(pool.alloc(256, 1)).toBe(unit * 256);
    for (const unit of [0, 4, 12, 30, 8, 18, 20, 14, 22, 6]) pool.free(unit * 256);
    pool.free(256);
    expect(pool.checkIndexes()).toBeNull();
    const holes = [4, 6, 8, 12, 14, 18, 20, 22, 30];
    for (const unit of holes) expect(pool.alloc(256, 1)).toBe(unit * 256);
    expect(pool.checkIndexes()).toBeNull();
  });
});
