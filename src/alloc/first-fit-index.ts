/**
 * First fit's free index: the free blocks by usable size, each size bin ordered by offset, and
 * the lowest offset of every bin under one small min tree. It answers "the lowest-offset free
 * block with at least R usable bytes" without a walk of the heap.
 *
 * - **Bins.** A block's usable size (its size less the padding its alignment takes, at the
 *   index's `alignBytes`) picks one of 512 bins: sizes below 16 each have a bin, above that every
 *   power of two is split into 8 bins (a bin spans at most an eighth of its lower bound).
 * - **Heaps.** Each bin is a 4-ary min-heap of (start, node) entries keyed by start, stored flat
 *   in its own Float64Array (entry i at 2i and 2i + 1, i >= 1; the children of i are 4i - 2 to
 *   4i + 1), each node recording its position. Removing any entry and moving one are O(log n)
 *   sifts, half as deep as a binary heap's (removals dominate: on W2 a binary heap ran 5 % slower
 *   a pair, on W1 the same); a block that stays in its bin when it changes is re-keyed in place.
 * - **Tree.** `tops` holds each bin's lowest start (Infinity when empty) as the leaves of an
 *   exact 8-ary min tree (512 leaves, 64, 8): the lowest start over all bins from B up is a scan
 *   of at most 8 + 7 + 7 values and a descent back to its bin.
 * - **Floor.** Bins below `floorBin` are not kept: a free block whose usable size falls there is
 *   not indexed. The allocator lowers the floor (and indexes what it now covers, one walk) when a
 *   request's bin is below it, so a block smaller than every request so far (the slivers that
 *   alignment padding leaves) costs nothing.
 *
 * A search for R bytes at an alignment `a` >= the index's takes the lowest top of the bins whose
 * every block holds R + (a - alignBytes) usable bytes (the extra alignment costs at most that
 * much), then visits the bins below those that may still hold a fit, in heap order, pruned at the
 * best start found: each candidate is tested exactly.
 */
import { grownCopy } from './typed-arrays.js';

/** A node that is not in the index (allocated, below the floor, or without a usable byte). */
export const NOT_INDEXED = -1;
/** Size bins; tree levels: leaves at 0, 64 nodes at LEVEL1, 8 at LEVEL2. */
export const BINS = 512;
export const LEVEL1 = 512;
export const LEVEL2 = 576;
export const TOPS_LENGTH = 584;
const EMPTY_HEAP = new Float64Array(0);

/** The size bin of `sizeBytes` (a non-negative integer below 2^53). */
export function binOf(sizeBytes: number): number {
  if (sizeBytes < 16) return sizeBytes;
  if (sizeBytes < 2147483648) {
    const log = 31 - Math.clz32(sizeBytes);
    return ((log - 2) << 3) + (sizeBytes >>> (log - 3)) - 8;
  }
  const log = 63 - Math.clz32(Math.floor(sizeBytes / 4294967296));
  return ((log - 2) << 3) + Math.floor(sizeBytes / 2 ** (log - 3)) - 8;
}

/** The bytes from `start` up to its next multiple of `alignBytes` (a power of two). */
export function padAt(start: number, alignBytes: number): number {
  if (start < 2147483648 && alignBytes <= 1073741824) {
    const mask = alignBytes - 1;
    return (alignBytes - (start & mask)) & mask;
  }
  return (alignBytes - (start % alignBytes)) % alignBytes;
}

export class FreeIndex {
  /** Lowest bin kept (BINS: none yet). */
  floorBin = BINS;
  /** The highest bin any entry was ever put in (-1: none): every bin above it is empty. */
  highBin = -1;
  /** Per node: its bin, or NOT_INDEXED. */
  bin: Int32Array;
  /** Per node: its heap position (meaningful while indexed). */
  pos: Int32Array;
  /**
   * Per bin: its heap (entries from index 2), made on the bin's first entry (a hole until then:
   * every reader but `insert` reads only bins that hold entries).
   */
  readonly heaps: Float64Array[] = new Array<Float64Array>(BINS);
  /** The min tree over the bins' lowest starts (see the header). */
  readonly tops: Float64Array;
  /** Per bin: its entry count. */
  readonly counts: Int32Array;
  /** The search's stack of heap positions (as long as the longest heap). */
  private stack = new Int32Array(16);

  constructor(
    /** The alignment usable sizes are taken at (1: the block's size). */
    readonly alignBytes: number,
    nodes: number,
  ) {
    this.bin = new Int32Array(nodes).fill(NOT_INDEXED);
    this.pos = new Int32Array(nodes);
    // One buffer for both (an allocator is made per campaign run: each buffer costs a microsecond).
    const buffer = new ArrayBuffer(TOPS_LENGTH * 8 + BINS * 4);
    this.tops = new Float64Array(buffer, 0, TOPS_LENGTH).fill(Infinity);
    this.counts = new Int32Array(buffer, TOPS_LENGTH * 8, BINS);
  }

  /** Grows the per-node arrays to `nodes` (the node store grew). */
  growNodes(nodes: number): void {
    const held = this.bin.length;
    this.bin = grownCopy(this.bin, nodes).fill(NOT_INDEXED, held);
    this.pos = grownCopy(this.pos, nodes);
  }

  /** The bin a free block [start, start + sizeBytes) belongs in here, or NOT_INDEXED. */
  binFor(start: number, sizeBytes: number): number {
    const usable = this.alignBytes === 1 ? sizeBytes : sizeBytes - padAt(start, this.alignBytes);
    if (usable <= 0) return -1 /* NOT_INDEXED */;
    const bin = binOf(usable);
    return bin < this.floorBin ? -1 /* NOT_INDEXED */ : bin;
  }

  /** Indexes the free block `node` (not indexed now). */
  add(node: number, start: number, sizeBytes: number): void {
    const bin = this.binFor(start, sizeBytes);
    if (bin !== -1 /* NOT_INDEXED */) this.insert(bin, node, start);
  }

  /** Takes `node` out of the index (nothing when it is not in it). */
  remove(node: number): void {
    const bin = this.bin[node]!;
    if (bin === -1 /* NOT_INDEXED */) return;
    this.bin[node] = -1 /* NOT_INDEXED */;
    const count = this.counts[bin]!;
    this.counts[bin] = count - 1;
    const at = this.pos[node]!;
    if (at === count) {
      if (count === 1) this.setTop(bin, Infinity);
      return;
    }
    const heap = this.heaps[bin]!;
    const settled = this.sift(heap, at, count - 1, heap[2 * count]!, heap[2 * count + 1]!);
    if (at === 1 || settled === 1) this.setTop(bin, heap[2]!);
  }

  /**
   * The free block `node` now spans [start, start + sizeBytes): re-keyed in place when it stays
   * in its bin, otherwise moved (or added, or dropped).
   */
  update(node: number, start: number, sizeBytes: number): void {
    const bin = this.binFor(start, sizeBytes);
    const was = this.bin[node]!;
    if (bin === was && bin !== -1 /* NOT_INDEXED */) {
      const heap = this.heaps[bin]!;
      const at = this.pos[node]!;
      if (heap[2 * at] === start) return;
      const settled = this.sift(heap, at, this.counts[bin]!, start, node);
      if (at === 1 || settled === 1) this.setTop(bin, heap[2]!);
      return;
    }
    this.remove(node);
    if (bin !== -1 /* NOT_INDEXED */) this.insert(bin, node, start);
  }

  /** `node` takes over `old`'s entry (old leaves the index), then spans [start, start + sizeBytes). */
  replace(old: number, node: number, start: number, sizeBytes: number): void {
    const bin = this.bin[old]!;
    if (bin !== -1 /* NOT_INDEXED */) {
      const at = this.pos[old]!;
      this.bin[old] = -1 /* NOT_INDEXED */;
      this.bin[node] = bin;
      this.pos[node] = at;
      this.heaps[bin]![2 * at + 1] = node;
      this.update(node, start, sizeBytes);
    } else {
      this.add(node, start, sizeBytes);
    }
  }

  /**
   * An allocation was carved out of the free block `node` (starting at `start`): `paddingBytes`
   * of it stay free in front (0: none, `node` is the allocation now) and `tail` (or NIL) is the
   * free block [tailStart, tailStart + tailBytes) behind it. One call per alloc and index.
   */
  carved(
    node: number,
    start: number,
    paddingBytes: number,
    tail: number,
    tailStart: number,
    tailBytes: number,
  ): void {
    if (paddingBytes === 0) {
      if (tail === -1 /* NIL */) this.remove(node);
      else this.replace(node, tail, tailStart, tailBytes);
      return;
    }
    this.update(node, start, paddingBytes);
    if (tail !== -1 /* NIL */) this.add(tail, tailStart, tailBytes);
  }

  /**
   * The allocation `node` at `start` was freed and merged into one free block of `mergedBytes`:
   * `absorbed` (or NIL) is the free block after it, now part of it, and `before` (or NIL) the
   * free block before it that survives the merge (starting at `beforeStart`). One call per free
   * and index.
   */
  freed(
    node: number,
    start: number,
    mergedBytes: number,
    absorbed: number,
    before: number,
    beforeStart: number,
  ): void {
    if (before !== -1 /* NIL */) {
      if (absorbed !== -1 /* NIL */) this.remove(absorbed);
      this.update(before, beforeStart, mergedBytes);
    } else if (absorbed !== -1 /* NIL */) {
      this.replace(absorbed, node, start, mergedBytes);
    } else {
      this.add(node, start, mergedBytes);
    }
  }

  /**
   * The lowest-start indexed block holding `sizeBytes` at `alignBytes` (a power of two, at least
   * the index's), or NIL. `f64` is the node store's float64 view (the sizes, at 4n + 1).
   */
  search(sizeBytes: number, alignBytes: number, f64: Float64Array): number {
    const slack = alignBytes - this.alignBytes;
    // Every block from this bin up holds sizeBytes + slack usable bytes here, so sizeBytes at alignBytes.
    const sureBin = binOf(sizeBytes + slack - 1) + 1;
    let found = -1 /* NIL */;
    let best = Infinity;
    // (sureBin <= 416 < BINS: binOf of any double below 2^54 is at most 415.)
    const topBin = this.lowestTopFrom(sureBin);
    if (topBin >= 0) {
      const heap = this.heaps[topBin]!;
      best = heap[2]!;
      found = heap[3]!;
    }
    // The bins below may hold a fit: their entries that start below the best, tested exactly.
    // Largest first: a larger block more likely holds the request, and each fit found lowers the
    // bound the smaller bins are pruned at.
    const first = binOf(sizeBytes);
    const lowest = first > this.floorBin ? first : this.floorBin;
    for (let bin = sureBin - 1; bin >= lowest; bin--) {
      const count = this.counts[bin]!;
      if (count === 0) continue;
      const heap = this.heaps[bin]!;
      if (heap[2]! >= best) continue;
      const stack = this.stack;
      let depth = 0;
      stack[depth++] = 1;
      while (depth > 0) {
        const at = stack[--depth]!;
        const start = heap[2 * at]!;
        if (start >= best) continue;
        const node = heap[2 * at + 1]!;
        if (
          f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */]! - padAt(start, alignBytes) >=
          sizeBytes
        ) {
          best = start;
          found = node;
          continue;
        }
        const last = 4 * at + 1 < count ? 4 * at + 1 : count;
        for (let child = 4 * at - 2; child <= last; child++) stack[depth++] = child;
      }
    }
    return found;
  }

  /** The bin with the lowest top among bins >= `from` (< BINS), or -1 when all are empty. */
  lowestTopFrom(from: number): number {
    const tops = this.tops;
    let best = Infinity;
    let where = -1;
    let level = 0;
    let end = (from | 7) + 1;
    for (let i = from; i < end; i++) {
      const top = tops[i]!;
      if (top < best) {
        best = top;
        where = i;
      }
    }
    const group = (from >> 3) + 1;
    end = ((group - 1) | 7) + 1;
    for (let i = group; i < end; i++) {
      const top = tops[512 /* LEVEL1 */ + i]!;
      if (top < best) {
        best = top;
        where = i;
        level = 1;
      }
    }
    for (let i = (from >> 6) + 1; i < 8; i++) {
      const top = tops[576 /* LEVEL2 */ + i]!;
      if (top < best) {
        best = top;
        where = i;
        level = 2;
      }
    }
    if (where < 0) return -1;
    if (level === 2) {
      let child = 512 /* LEVEL1 */ + (where << 3);
      while (tops[child] !== best) child++;
      where = child - 512 /* LEVEL1 */;
      level = 1;
    }
    if (level === 1) {
      let child = where << 3;
      while (tops[child] !== best) child++;
      where = child;
    }
    return where;
  }

  /** Adds `node` (starting at `start`) to bin `bin`'s heap (public for the bug catalog and tests). */
  insert(bin: number, node: number, start: number): void {
    let count = this.counts[bin]! + 1;
    this.counts[bin] = count;
    let heap = this.heaps[bin] ?? EMPTY_HEAP;
    if (2 * count + 1 >= heap.length) {
      this.heaps[bin] = heap = grownCopy(heap, heap.length < 8 ? 16 : heap.length * 2);
      if (count >= this.stack.length) this.stack = new Int32Array(2 * count);
    }
    this.bin[node] = bin;
    if (bin > this.highBin) this.highBin = bin;
    // sift's upward loop, written out: through sift the pair loop ran 2 % slower (W1 and W2).
    const pos = this.pos;
    while (count > 1) {
      const parent = (count + 2) >> 2;
      const parentStart = heap[2 * parent]!;
      if (parentStart <= start) break;
      heap[2 * count] = parentStart;
      const parentNode = heap[2 * parent + 1]!;
      heap[2 * count + 1] = parentNode;
      pos[parentNode] = count;
      count = parent;
    }
    heap[2 * count] = start;
    heap[2 * count + 1] = node;
    pos[node] = count;
    if (count === 1) this.setTop(bin, start);
  }

  /**
   * Puts (start, node) at position `at` of a heap of `count` entries (the entry there is being
   * replaced), sifting up or down; returns where it settled.
   */
  protected sift(
    heap: Float64Array,
    at: number,
    count: number,
    start: number,
    node: number,
  ): number {
    const pos = this.pos;
    let i = at;
    if (i > 1 && heap[2 * ((i + 2) >> 2)]! > start) {
      do {
        const parent = (i + 2) >> 2;
        const parentStart = heap[2 * parent]!;
        if (parentStart <= start) break;
        heap[2 * i] = parentStart;
        const parentNode = heap[2 * parent + 1]!;
        heap[2 * i + 1] = parentNode;
        pos[parentNode] = i;
        i = parent;
      } while (i > 1);
    } else {
      for (;;) {
        const first = 4 * i - 2;
        if (first > count) break;
        // The least of up to four children.
        let child = first;
        let childStart = heap[2 * first]!;
        const last = first + 3 < count ? first + 3 : count;
        for (let c = first + 1; c <= last; c++) {
          const other = heap[2 * c]!;
          if (other < childStart) {
            childStart = other;
            child = c;
          }
        }
        if (childStart >= start) break;
        heap[2 * i] = childStart;
        const childNode = heap[2 * child + 1]!;
        heap[2 * i + 1] = childNode;
        pos[childNode] = i;
        i = child;
      }
    }
    heap[2 * i] = start;
    heap[2 * i + 1] = node;
    pos[node] = i;
    return i;
  }

  /** Sets bin `bin`'s lowest start to `value` and mends the tree above it. */
  protected setTop(bin: number, value: number): void {
    const tops = this.tops;
    let old = tops[bin]!;
    tops[bin] = value;
    let fresh = value;
    let node = bin >> 3;
    let base = 512 /* LEVEL1 */;
    let childBase = 0;
    for (let level = 1; level <= 2; level++) {
      const held = tops[base + node]!;
      if (fresh < held) {
        tops[base + node] = fresh;
        old = held;
      } else if (old === held) {
        const first = childBase + (node << 3);
        let least = tops[first]!;
        for (let i = 1; i < 8; i++) {
          const top = tops[first + i]!;
          if (top < least) least = top;
        }
        tops[base + node] = least;
        fresh = least;
      } else {
        return;
      }
      childBase = base;
      base = 576 /* LEVEL2 */;
      node >>= 3;
    }
  }
}
