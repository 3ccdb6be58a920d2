/**
 * First fit's chunk directory: the search structure over the node store (first-fit-blocks.ts).
 *
 * The heap's offsets are cut into chunks of 2^chunkShift bytes. For each chunk the directory
 * records the first block (free or allocated) that starts in it (`first`, NIL when a larger
 * block covers the whole chunk), and, for each alignment requested so far (a slot per alignment
 * exponent, added on its first request), the largest usable size end - alignUp(start, alignment)
 * over the free blocks that start in the chunk (0 when none fits one byte). Per slot these values
 * are the leaves of a max tree of fan-out 16 (each inner node at least the largest of its 16
 * children, which sit side by side in two cache lines; a rise goes up at once, a fall is left to
 * the next search that meets it), so "the lowest chunk holding a free block that fits size
 * s at this alignment" is one descent of a few levels, and the lowest-offset fitting block is the
 * first fitting free block of that chunk: the exact first fit, at any alignment, without testing
 * blocks that fail their padding.
 *
 * Chunks are small (8 KiB on heaps of 16 KiB - 1 GiB, 2 chunks on smaller heaps, 2^17 chunks on
 * larger ones), so a chunk holds few blocks: finding a block by its
 * offset (free()) and recomputing a chunk's values are short walks of the list from the chunk's first
 * block. The tree covers the chunks up to the highest one a block has started in (first fit
 * keeps blocks low) and gains a level when a block starts beyond its leaves.
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
 * Chunks are 2^CHUNK_SHIFT bytes (8 KiB) on heaps from 16 KiB to 1 GiB (with 16 KiB chunks the
 * walks were longer where small blocks crowd: first fit about 20 % slower on the alloc bench's
 * small workload, docs/measurements.md) ...
 */
export const CHUNK_SHIFT = 13;
/** ... smaller heaps have 2^MIN_CHUNKS_LOG2 chunks or a few more (so their self-check stays cheap) ... */
export const MIN_CHUNKS_LOG2 = 1;
/** ... and larger heaps 2^MAX_CHUNKS_LOG2 chunks (larger chunks): a tree's depth stays within 5. */
export const MAX_CHUNKS_LOG2 = 17;
/** Children per tree node: 2^FAN_SHIFT. */
export const FAN_SHIFT = 4;
export const FAN = 1 << FAN_SHIFT;
/** Alignments above 2^30 take the general (floating-point) path of usableAt. */
const MASK_ALIGN_LIMIT = 0x40000000;

/** end - alignUp(start, alignBytes) for the block [start, start + sizeBytes) (may be negative). */
export function usableAt(start: number, sizeBytes: number, alignBytes: number): number {
  if (alignBytes <= MASK_ALIGN_LIMIT) {
    // start mod alignBytes from the low 32 bits (alignBytes divides 2^32): exact for any safe integer.
    const mask = alignBytes - 1;
    return sizeBytes - ((alignBytes - ((start >>> 0) & mask)) & mask);
  }
  return start + sizeBytes - Math.ceil(start / alignBytes) * alignBytes;
}

/** log2 of the chunk size for a heap of `capacityBytes` (see the header). */
export function chunkShiftFor(capacityBytes: number): number {
  const levels = Math.ceil(Math.log2(Math.max(2, capacityBytes)));
  return Math.max(
    0,
    Math.min(levels - MIN_CHUNKS_LOG2, Math.max(CHUNK_SHIFT, levels - MAX_CHUNKS_LOG2)),
  );
}

/** Where level `depth` of a tree starts: levels 0 (the root), 1, ... hold 1, 16, 256, ... nodes. */
export function levelStart(depth: number): number {
  return (FAN ** depth - 1) / (FAN - 1);
}

/** levelStart(d) for every depth a tree reaches (at most 2^MAX_CHUNKS_LOG2 leaves: depth 4; room to spare). */
const LEVEL_STARTS = Int32Array.from({ length: 8 }, (_, d) => levelStart(d));

export class ChunkDirectory {
  readonly chunkShift: number;
  readonly chunkBytes: number;
  /** 2^-chunkShift: a block's chunk is (start * chunkScale) | 0 (exact: a power of two). */
  private readonly chunkScale: number;
  /** Chunks the heap has: leaves at or past it are never written (no block starts there). */
  readonly chunkCount: number;
  /** Alignment exponents 0..alignLevels get slots; 2^alignLevels >= capacity (a larger one acts like it). */
  readonly alignLevels: number;

  /** The leaves' level: the tree has depth + 1 levels and FAN^depth leaves (one per chunk). */
  depth = 1;
  leaves = FAN;
  /** Where the leaves start in a slot's tree, and the nodes of one slot's tree. */
  leafStart = levelStart(1);
  treeSize = levelStart(2);
  /** LEVEL_STARTS[d] = levelStart(d) (read on every update). */
  private readonly starts = LEVEL_STARTS;
  /** first[c]: the first block starting in chunk c, or NIL. */
  first: Int32Array;
  /** fit[slot * treeSize + levelStart(d) + i]: node i of level d of the slot's tree. */
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
   * Inner nodes are upper bounds (a value that falls is lowered in its leaf only), so a node whose
   * children all fall short is stale: the descent lowers it to its largest child and goes on with
   * its next sibling. Each such repair is paid once, by the first search that meets it.
   */
  search(sizeBytes: number, alignBytes: number, slot: number): number {
    const fit = this.fit;
    const base = slot * this.treeSize;
    const depth = this.depth;
    const starts = this.starts;
    if (fit[base]! < sizeBytes) return NIL;
    let d = 0;
    let index = 0;
    let from = 0;
    while (d < depth) {
      const group = base + starts[d + 1]! + (index << FAN_SHIFT);
      let k = from;
      while (k < FAN && fit[group + k]! < sizeBytes) k++;
      if (k < FAN) {
        index = (index << FAN_SHIFT) + k;
        from = 0;
        d++;
        continue;
      }
      let larger = fit[group]!;
      for (let i = 1; i < FAN; i++) if (fit[group + i]! > larger) larger = fit[group + i]!;
      fit[base + starts[d]! + index] = larger;
      if (d === 0) return NIL;
      from = (index & (FAN - 1)) + 1;
      index >>= FAN_SHIFT;
      d--;
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

  /** Records that `node` starts in its chunk (a new block). */
  noteStart(node: number): void {
    const start = this.list.start(node);
    const chunk = this.chunkOf(start);
    while (chunk >= this.leaves) this.addLevel();
    const current = this.first[chunk]!;
    if (current === NIL || this.list.start(current) > start) this.first[chunk] = node;
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
    let index = chunk;
    for (let d = this.depth; d >= 0; d--) {
      const at = base + this.starts[d]! + index;
      if (fit[at]! >= value) return;
      fit[at] = value;
      index >>= FAN_SHIFT;
    }
  }

  /**
   * Whether the free block `node` holds its chunk's value at some slot: only then can taking
   * from it (which leaves parts with no more usable size) lower the chunk's values.
   */
  holdsMaximum(node: number): boolean {
    const list = this.list;
    const start = list.start(node);
    const sizeBytes = list.size(node);
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

  /** Sets a leaf: a rise goes up the tree at once, a fall stays in the leaf (the inner nodes are upper bounds). */
  setLeaf(slot: number, chunk: number, value: number): void {
    const leaf = slot * this.treeSize + this.leafStart + chunk;
    if (value > this.fit[leaf]!) this.raiseLeaf(slot, chunk, value);
    else this.fit[leaf] = value;
  }

  /** The largest of the 16 children of node `index` of level `depth` (depth < this.depth). */
  childMax(slot: number, depth: number, index: number): number {
    const group = slot * this.treeSize + levelStart(depth + 1) + (index << FAN_SHIFT);
    let larger = this.fit[group]!;
    for (let k = 1; k < FAN; k++) if (this.fit[group + k]! > larger) larger = this.fit[group + k]!;
    return larger;
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

  /** One more level: FAN times the leaves; each slot's leaves move to the new leaf level, inner nodes rebuilt. */
  private addLevel(): void {
    const oldLeaves = this.leaves;
    const oldLeafStart = this.leafStart;
    const oldSize = this.treeSize;
    this.depth++;
    this.leaves = FAN ** this.depth;
    this.leafStart = levelStart(this.depth);
    this.treeSize = levelStart(this.depth + 1);
    const fit = new Float64Array(this.slotRoom * this.treeSize);
    for (let j = 0; j < this.slotCount; j++) {
      const base = j * this.treeSize;
      fit.set(
        this.fit.subarray(j * oldSize + oldLeafStart, j * oldSize + oldLeafStart + oldLeaves),
        base + this.leafStart,
      );
    }
    this.fit = fit;
    for (let j = 0; j < this.slotCount; j++) {
      for (let d = this.depth - 1; d >= 0; d--) {
        for (let i = 0; i < FAN ** d; i++)
          fit[j * this.treeSize + levelStart(d) + i] = this.childMax(j, d, i);
      }
    }
    const first = new Int32Array(this.leaves).fill(NIL);
    first.set(this.first);
    this.first = first;
  }
}
