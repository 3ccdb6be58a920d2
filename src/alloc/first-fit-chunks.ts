/**
 * First fit's chunk directory: the search structure over the node store (first-fit-blocks.ts).
 *
 * The heap's offsets are cut into chunks of 2^chunkShift bytes. For each chunk the directory
 * records the first block (free or allocated) that starts in it (`first`, NIL when a larger
 * block covers the whole chunk), and, for each alignment requested so far (a slot per alignment
 * exponent, added on its first request), the largest usable size end - alignUp(start, alignment)
 * over the free blocks that start in the chunk (0 when none fits one byte). Per slot these values
 * are the leaves of a max tree of fan-out 8 (each inner node exactly the largest of its 8
 * children, which sit side by side in one 64-byte cache line; a rise goes up while a parent holds
 * less, a fall while the old value was the parent's), so "the lowest chunk holding a free block
 * that fits size s at this alignment" is one descent that takes, at each level, the first child
 * holding s, and the lowest-offset fitting block is the first fitting free block of that chunk:
 * the exact first fit, at any alignment, without testing blocks that fail their padding.
 *
 * Chunks are small (8 KiB on heaps of 16 KiB - 8 MiB, 2 KiB up to 1 GiB, 2 chunks on smaller
 * heaps, 2^19 chunks on larger ones), so a chunk holds few blocks: finding a block by its offset
 * (free()) and recomputing a chunk's values are short walks of the list from the chunk's first
 * block. The tree covers the chunks up to the highest one a block has started in (first fit
 * keeps blocks low): its leaves double when a block starts beyond them, and each level above
 * holds the level below divided by 8, so the tree stays about 8/7 of the chunks in use.
 */
import {
  type BlockList,
  F64_PER_NODE,
  FREE,
  I32_PER_NODE,
  NEXT,
  NIL,
  SIZE,
  START,
} from './first-fit-blocks.js';

/**
 * Chunks are 2^CHUNK_SHIFT bytes (2 KiB) on heaps above 8 MiB up to 1 GiB (with 8 KiB chunks the
 * walks were longer where small blocks crowd: first fit about 15 % slower on the alloc bench's
 * 1 GiB heap, docs/measurements.md) ...
 */
export const CHUNK_SHIFT = 11;
/**
 * ... 2^SMALL_HEAP_CHUNK_SHIFT bytes (8 KiB) on heaps from 16 KiB up to 8 MiB, where a chunk
 * holds few blocks anyway and the self-check, O(chunks) after every step of a campaign, costs
 * more than the walks save (2 KiB chunks took first fit's campaign rate down 15 %) ...
 */
export const SMALL_HEAP_CHUNK_SHIFT = 13;
/** ... heaps of at most 2^(LARGE_HEAP_LOG2 - 1) bytes are the small ones ... */
export const LARGE_HEAP_LOG2 = 24;
/** ... smaller heaps have 2^MIN_CHUNKS_LOG2 chunks or a few more (so their self-check stays cheap) ... */
export const MIN_CHUNKS_LOG2 = 1;
/**
 * ... and larger heaps 2^MAX_CHUNKS_LOG2 chunks (larger chunks): a tree's depth stays within 7,
 * and the self-check of a 32 GiB heap as cheap as before (with 2^20 chunks the alloc suite's
 * heaps above 4 GiB took 26 s instead of 14).
 */
export const MAX_CHUNKS_LOG2 = 19;
/** Children per inner node: 2^FAN_SHIFT (a group of siblings is 64 bytes of float64, one cache line). */
export const FAN_SHIFT = 3;
export const FAN = 1 << FAN_SHIFT;

/** The largest of fit[group .. group + 7] (a group of FAN = 8 siblings, written out: the hot path's loop). */
export function groupMax(fit: Float64Array, group: number): number {
  const a = fit[group]! > fit[group + 1]! ? fit[group]! : fit[group + 1]!;
  const b = fit[group + 2]! > fit[group + 3]! ? fit[group + 2]! : fit[group + 3]!;
  const c = fit[group + 4]! > fit[group + 5]! ? fit[group + 4]! : fit[group + 5]!;
  const d = fit[group + 6]! > fit[group + 7]! ? fit[group + 6]! : fit[group + 7]!;
  const ab = a > b ? a : b;
  const cd = c > d ? c : d;
  return ab > cd ? ab : cd;
}

/**
 * A tree's shape over `leaves` leaves: nodes[d], the nodes of level d (the root's level 0 has
 * one, the leaves' level `depth` has `leaves`, each level the one below divided by FAN, rounded
 * up), and at[d], where level d starts in a slot's tree (each level padded to a multiple of FAN,
 * so a group of siblings starts at a multiple of FAN); at[depth + 1] is the tree's size.
 */
export function treeShape(leaves: number): { depth: number; nodes: Int32Array; at: Int32Array } {
  const counts = [leaves];
  while (counts[0]! > 1) counts.unshift(Math.ceil(counts[0]! / FAN));
  const at = new Int32Array(counts.length + 1);
  for (let d = 0; d < counts.length; d++) at[d + 1] = at[d]! + Math.ceil(counts[d]! / FAN) * FAN;
  return { depth: counts.length - 1, nodes: Int32Array.from(counts), at };
}

/** Alignments above 2^30 take the general (floating-point) path of usableAt. */
const MASK_ALIGN_LIMIT = 0x40000000;

/** end - alignUp(start, alignBytes) for the block [start, start + sizeBytes) (may be negative). */
export function usableAt(start: number, sizeBytes: number, alignBytes: number): number {
  // start mod alignBytes from the low 32 bits (alignBytes divides 2^32): exact for any safe integer.
  if (alignBytes <= MASK_ALIGN_LIMIT)
    return sizeBytes - ((alignBytes - ((start >>> 0) & (alignBytes - 1))) & (alignBytes - 1));
  return usableAtLarge(start, sizeBytes, alignBytes);
}

/** usableAt for alignments above 2^30 (kept out of usableAt, so that one stays small enough to inline). */
function usableAtLarge(start: number, sizeBytes: number, alignBytes: number): number {
  return start + sizeBytes - Math.ceil(start / alignBytes) * alignBytes;
}

/** log2 of the chunk size for a heap of `capacityBytes` (see the header). */
export function chunkShiftFor(capacityBytes: number): number {
  const levels = Math.ceil(Math.log2(Math.max(2, capacityBytes)));
  const preferred = levels < LARGE_HEAP_LOG2 ? SMALL_HEAP_CHUNK_SHIFT : CHUNK_SHIFT;
  return Math.max(
    0,
    Math.min(levels - MIN_CHUNKS_LOG2, Math.max(preferred, levels - MAX_CHUNKS_LOG2)),
  );
}

export class ChunkDirectory {
  readonly chunkShift: number;
  readonly chunkBytes: number;
  /** 2^-chunkShift: a block's chunk is (start * chunkScale) | 0 (exact: a power of two). */
  private readonly chunkScale: number;
  /** Chunks the heap has: leaves at or past it are never written (no block starts there). */
  readonly chunkCount: number;
  /** Alignment exponents 0..alignLevels get slots; 2^alignLevels >= capacity (a larger one acts like it). */
  readonly alignLevels: number;

  /** The leaves (one per chunk from chunk 0; a power of two, doubled when a block starts beyond them). */
  leaves = FAN;
  /** The leaves' level (the tree has depth + 1 levels), and the tree's shape (treeShape). */
  depth!: number;
  levels!: Int32Array;
  levelNodes!: Int32Array;
  /** Where the leaves start in a slot's tree, and the nodes of one slot's tree. */
  leafStart!: number;
  treeSize!: number;
  /** first[c]: the first block starting in chunk c, or NIL. */
  first: Int32Array;
  /**
   * fit[slot * treeSize + levels[d] + i]: node i of level d of the slot's tree, each node the
   * largest of its FAN children (nodes FAN i ... FAN i + FAN - 1 of level d + 1); chunk c's leaf
   * at leafStart + c. Padding entries (beside the root) stay 0.
   */
  fit: Float64Array;
  /** Slots in use, and the slots the fit array has room for. */
  slotCount = 0;
  private slotRoom = 1;
  /** slotOfExponent[j]: the slot of alignment 2^j, or -1 before its first request. */
  readonly slotOfExponent: Int8Array;
  /** slotAlign[slot]: the alignment the slot tracks. */
  readonly slotAlign: Float64Array;
  /** Per-slot maxima while a chunk is recomputed. */
  private readonly scratch: Float64Array;

  constructor(
    capacityBytes: number,
    readonly list: BlockList,
  ) {
    this.chunkShift = chunkShiftFor(capacityBytes);
    this.chunkBytes = 2 ** this.chunkShift;
    this.chunkScale = 2 ** -this.chunkShift;
    this.chunkCount = Math.ceil(capacityBytes / this.chunkBytes);
    this.alignLevels = Math.max(1, Math.ceil(Math.log2(capacityBytes)));
    this.slotOfExponent = new Int8Array(this.alignLevels + 1).fill(-1);
    this.slotAlign = new Float64Array(this.alignLevels + 1);
    this.scratch = new Float64Array(this.alignLevels + 1);
    this.first = new Int32Array(this.leaves).fill(NIL);
    this.reshape();
    this.fit = new Float64Array(this.treeSize);
  }

  chunkOf(start: number): number {
    return (start * this.chunkScale) | 0;
  }

  /** The slot tracking `alignBytes` (a power of two), added on its first request. */
  slotFor(alignBytes: number): number {
    const exponent = Math.min(
      this.alignLevels,
      alignBytes <= MASK_ALIGN_LIMIT
        ? 31 - Math.clz32(alignBytes)
        : Math.round(Math.log2(alignBytes)),
    );
    const slot = this.slotOfExponent[exponent]!;
    return slot >= 0 ? slot : this.addSlot(exponent);
  }

  /**
   * The lowest-offset free block whose aligned start plus `sizeBytes` fits, or NIL: the lowest
   * chunk whose value at the slot holds the request, then that chunk's first fitting block.
   * Inner nodes are exact, so a node holding the request has a child that holds it: the descent
   * takes the first such child at every level and ends at the lowest such chunk.
   */
  search(sizeBytes: number, alignBytes: number, slot: number): number {
    const fit = this.fit;
    const base = slot * this.treeSize;
    const depth = this.depth;
    const levels = this.levels;
    if (fit[base]! < sizeBytes) return NIL;
    let index = 0;
    for (let d = 1; d <= depth; d++) {
      const group = base + levels[d]! + (index << FAN_SHIFT);
      let at = group;
      while (fit[at]! < sizeBytes && at < group + FAN) at++;
      if (at === group + FAN) return NIL; // only a broken tree gets here (checkIndexes names it)
      index = at - base - levels[d]!;
    }
    const f64 = this.list.f64;
    const i32 = this.list.i32;
    const chunkEnd = (index + 1) * this.chunkBytes;
    const mask = alignBytes - 1;
    const masked = alignBytes <= MASK_ALIGN_LIMIT;
    for (let node = this.first[index]!; node !== NIL; node = i32[node * I32_PER_NODE + NEXT]!) {
      const start = f64[node * F64_PER_NODE + START]!;
      if (start >= chunkEnd) break;
      if (i32[node * I32_PER_NODE + FREE] !== 1) continue;
      const blockBytes = f64[node * F64_PER_NODE + SIZE]!;
      // usableAt, inlined for alignments up to 2^30.
      const usable = masked
        ? blockBytes - ((alignBytes - ((start >>> 0) & mask)) & mask)
        : usableAt(start, blockBytes, alignBytes);
      if (usable >= sizeBytes) return node;
    }
    return NIL; // only a broken directory gets here (checkIndexes names what broke)
  }

  /** Records `node` as the first block of `chunk` (which the tree grows to cover). */
  noteFirst(node: number, chunk: number): void {
    while (chunk >= this.leaves) this.grow();
    this.first[chunk] = node;
  }

  /** Records that `node`, a new block, starts at `start` (in its chunk). */
  noteStart(node: number, start: number): void {
    const chunk = this.chunkOf(start);
    const current = chunk < this.leaves ? this.first[chunk]! : NIL;
    if (current === NIL || this.list.start(current) > start) this.noteFirst(node, chunk);
  }

  /** Before `node` leaves the list: its chunk's first block becomes the next one, if it starts there. */
  forgetStart(node: number): void {
    const list = this.list;
    const chunk = this.chunkOf(list.start(node));
    if (this.first[chunk] !== node) return;
    const following = list.next(node);
    this.first[chunk] =
      following !== NIL && this.chunkOf(list.start(following)) === chunk ? following : NIL;
  }

  /** After the free block `node` gained usable size (grew, or became free): raises its chunk's values. */
  raise(node: number): void {
    const list = this.list;
    const start = list.start(node);
    const sizeBytes = list.size(node);
    const chunk = this.chunkOf(start);
    for (let j = 0; j < this.slotCount; j++)
      this.raiseLeaf(j, chunk, usableAt(start, sizeBytes, this.slotAlign[j]!));
  }

  /** Raises the leaf of `chunk` to `value` and its ancestors with it (stopping where one holds as much). */
  private raiseLeaf(slot: number, chunk: number, value: number): void {
    const fit = this.fit;
    const base = slot * this.treeSize;
    const levels = this.levels;
    let index = chunk;
    for (let d = this.depth; d >= 0; d--) {
      const at = base + levels[d]! + index;
      if (fit[at]! >= value) return;
      fit[at] = value;
      index >>= FAN_SHIFT;
    }
  }

  /**
   * Whether the free block [start, start + sizeBytes) holds its chunk's value at some slot: only
   * then can taking from it (which leaves parts with no more usable size) lower the chunk's
   * values.
   */
  holdsMaximum(start: number, sizeBytes: number): boolean {
    const leaf = this.leafStart + this.chunkOf(start);
    for (let j = 0; j < this.slotCount; j++) {
      if (usableAt(start, sizeBytes, this.slotAlign[j]!) >= this.fit[j * this.treeSize + leaf]!)
        return true;
    }
    return false;
  }

  /** Recomputes `chunk`'s values from its free blocks (after one shrank, left, or was taken). */
  rescan(chunk: number): void {
    const slots = this.slotCount;
    const scratch = this.scratch;
    for (let j = 0; j < slots; j++) scratch[j] = 0;
    const f64 = this.list.f64;
    const i32 = this.list.i32;
    const chunkEnd = (chunk + 1) * this.chunkBytes;
    for (let node = this.first[chunk]!; node !== NIL; node = i32[node * I32_PER_NODE + NEXT]!) {
      const start = f64[node * F64_PER_NODE + START]!;
      if (start >= chunkEnd) break;
      if (i32[node * I32_PER_NODE + FREE] !== 1) continue;
      const sizeBytes = f64[node * F64_PER_NODE + SIZE]!;
      for (let j = 0; j < slots; j++) {
        const usable = usableAt(start, sizeBytes, this.slotAlign[j]!);
        if (usable > scratch[j]!) scratch[j] = usable;
      }
    }
    for (let j = 0; j < slots; j++) this.setLeaf(j, chunk, scratch[j]!);
  }

  /**
   * Sets a leaf and brings its ancestors to the largest of their children: a rise goes up while
   * a parent holds less; a fall only where the old value was the parent's (its group is read).
   */
  setLeaf(slot: number, chunk: number, value: number): void {
    const fit = this.fit;
    const base = slot * this.treeSize;
    const levels = this.levels;
    let d = this.depth;
    const at = base + levels[d]! + chunk;
    const old = fit[at]!;
    if (old === value) return;
    if (value > old) {
      this.raiseLeaf(slot, chunk, value);
      return;
    }
    fit[at] = value;
    let index = chunk;
    while (d > 0) {
      d--;
      index >>= FAN_SHIFT;
      const parent = base + levels[d]! + index;
      if (fit[parent] !== old) return;
      const larger = groupMax(fit, base + levels[d + 1]! + (index << FAN_SHIFT));
      if (larger === old) return;
      fit[parent] = larger;
    }
  }

  /** The largest of the FAN children of node `index` of level `depth` (depth < this.depth). */
  childMax(slot: number, depth: number, index: number): number {
    return groupMax(
      this.fit,
      slot * this.treeSize + this.levels[depth + 1]! + (index << FAN_SHIFT),
    );
  }

  /** A new slot for alignment 2^exponent: every chunk's value computed (O(blocks + chunks)). */
  private addSlot(exponent: number): number {
    const slot = this.slotCount;
    if (slot === this.slotRoom) {
      this.slotRoom *= 2;
      const fit = new Float64Array(this.slotRoom * this.treeSize);
      fit.set(this.fit);
      this.fit = fit;
    }
    this.slotCount++;
    this.slotOfExponent[exponent] = slot;
    this.slotAlign[slot] = 2 ** exponent;
    this.fit.fill(0, slot * this.treeSize, (slot + 1) * this.treeSize);
    for (let chunk = 0; chunk < this.leaves; chunk++)
      if (this.first[chunk] !== NIL) this.rescan(chunk);
    return slot;
  }

  /** Sets the tree's shape fields for `leaves` leaves (treeShape). */
  private reshape(): void {
    const shape = treeShape(this.leaves);
    this.depth = shape.depth;
    this.levels = shape.at;
    this.levelNodes = shape.nodes;
    this.leafStart = this.levels[this.depth]!;
    this.treeSize = this.levels[this.depth + 1]!;
  }

  /** Twice the leaves: each slot's leaves move to the new tree, inner nodes rebuilt. */
  private grow(): void {
    const oldLeaves = this.leaves;
    const oldLeafStart = this.leafStart;
    const oldSize = this.treeSize;
    this.leaves *= 2;
    this.reshape();
    const fit = new Float64Array(this.slotRoom * this.treeSize);
    for (let j = 0; j < this.slotCount; j++) {
      fit.set(
        this.fit.subarray(j * oldSize + oldLeafStart, j * oldSize + oldLeafStart + oldLeaves),
        j * this.treeSize + this.leafStart,
      );
    }
    this.fit = fit;
    for (let j = 0; j < this.slotCount; j++) {
      for (let d = this.depth - 1; d >= 0; d--) {
        for (let i = 0; i < this.levelNodes[d]!; i++)
          fit[j * this.treeSize + this.levels[d]! + i] = this.childMax(j, d, i);
      }
    }
    const first = new Int32Array(this.leaves).fill(NIL);
    first.set(this.first);
    this.first = first;
  }
}
