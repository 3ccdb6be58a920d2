/**
 * The best-fit pool as an engine would ship it (docs/spec/allocators.md#al-best-fit; Unreal's
 * FRHIMemoryPool, docs/spec/engine.md#mem-3-4).
 *
 * - Blocks are nodes of an offset-ordered doubly linked list in typed arrays (offset and size in
 *   pool-alignment units, prev/next node ids), tiling the pool; a node pool recycles ids.
 * - The spec's FreeBlocks array (free blocks sorted by size, ties by lower offset, searched for
 *   the first block >= the reservation) is kept as an index with the same order but without the
 *   O(n) memmove a flat sorted array pays on every split and merge: a BitsetIndex over sizes
 *   (bit s set when some free block has s units) and, per size, a binary min-heap of that size's
 *   free blocks keyed by offset, stored flat as (offset, node) pairs after a (count, length)
 *   header, all sizes' heaps in regions of one shared Int32Array (each node records its heap
 *   position). "First entry >=
 *   reservation" is findNext(reservation), then the heap's top: the lowest offset of that size.
 *   Inserting is O(1) expected (a new offset seldom rises far), removing the top or any entry
 *   (a merged neighbour, found by its recorded position) is O(log n) over one contiguous array,
 *   even when thousands of free blocks share one size. checkIndexes() (best-fit-state.ts) verifies
 *   the index against the list after every step.
 * - Live allocations are found by their caller offset in a table indexed by unit (caller
 *   offsets are multiples of the pool alignment): free is O(1) plus the index updates of the
 *   merge with both neighbours.
 *
 * alloc and free are written out in one piece each (the limit, the reservation, the choice, the
 * split, the caller offset, the merges): V8 inlines alloc's and free's callees only up to a
 * cumulative bytecode budget, and small steps as separate methods left the heap operations as
 * calls. What stays a method is what both use: the size index's insert and removal, the heap
 * sifts and the node pool. The bug catalog (mutants/) overrides those, or alloc and free as a
 * whole (its step-by-step twin of them); nothing in src/ depends on that catalog.
 */
import { badFree, validateRequest, type BlockAllocator } from './allocator.js';
import type { SubAllocatorConfig } from './config.js';
import { BestFitState, HEAP_REGION_MIN_LOG, NIL } from './best-fit-state.js';
import { grownCopy } from './typed-arrays.js';

/** The storage, its fields and the inspection are BestFitState's; the pool's steps are here. */
export class BestFitAllocator extends BestFitState implements BlockAllocator {
  protected readonly head: number;

  constructor(config: SubAllocatorConfig) {
    super(config);
    this.head = this.newNode(0, this.capacityUnits, NIL, NIL);
    this.indexInsert(this.head);
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    // The single-allocation limit: larger requests belong to the committed path.
    if (sizeBytes > this.maxAllocationBytes) return null;
    // The spec's aligned-size rule. Both are powers of two, so `pool % alignBytes === 0` is
    // `alignBytes <= pool`. Scaling by 1 / pool (a power of two) is exact, so is its ceiling:
    // the reservation in units without a division.
    const pool = this.poolAlignBytes;
    const bytes = alignBytes <= pool ? sizeBytes : sizeBytes + alignBytes;
    const units = Math.ceil(bytes * this.unitScale);
    if (units > this.capacityUnits) return null;
    // The first free block in (size, offset) order that holds the reservation: the smallest
    // size at or above it, then the lowest offset of that size (its heap's top), taken out.
    const size = this.freeSizes.findNext(units);
    if (size < 0) return null;
    const base = this.heapBase[size]!;
    const heap = this.heapArena;
    // The top entry: its key is the block's offset (one load fewer behind the node id).
    const offsetUnits = heap[base + 2]!;
    const node = heap[base + 3]!;
    const count = heap[base]! - 1;
    heap[base] = count;
    this.indexedCount--;
    if (count === 0) {
      this.heapBase[size] = NIL;
      this.releaseRegion(base);
      this.freeSizes.clear(size);
    } else {
      this.siftDown(base, 1, count, heap[base + 2 * count + 2]!, heap[base + 2 * count + 3]!);
    }
    // Take the block's low end; the rest becomes a free, indexed block after it.
    if (size > units) {
      const after = this.next[node]!;
      const rest = this.newNode(offsetUnits + units, size - units, node, after);
      this.sizeUnits[node] = units;
      this.next[node] = rest;
      if (after !== NIL) this.prev[after] = rest;
      this.indexInsert(rest);
    }
    // The caller's bytes start at the block start, aligned up when the alignment exceeds the
    // pool's (a block start is a multiple of the pool alignment, so of any alignment up to it).
    // In units the alignment is a power of two smaller than the block (whose reservation holds
    // it), so offsetUnits + alignUnits stays within the pool's unit count (<= 2^30): the
    // round-up is exact in 32-bit arithmetic.
    let userUnits = offsetUnits;
    if (alignBytes > pool) {
      const alignUnits = alignBytes * this.unitScale;
      userUnits = (offsetUnits + alignUnits - 1) & -alignUnits;
    }
    const offsetBytes = userUnits * pool;
    this.isFree[node] = 0;
    this.userOffsetBytes[node] = offsetBytes;
    this.userSizeBytes[node] = sizeBytes;
    this.liveAtUnit[userUnits] = node + 1;
    this.liveCount++;
    this.usedBytesTotal += sizeBytes;
    this.reservedBytesTotal += units * pool;
    this.blocksValid = false;
    return offsetBytes;
  }

  free(offsetBytes: number): void {
    const node = this.liveNodeOrNil(offsetBytes);
    if (node === NIL) throw badFree(offsetBytes);
    this.liveAtUnit[offsetBytes * this.unitScale] = 0;
    this.liveCount--;
    this.usedBytesTotal -= this.userSizeBytes[node]!;
    this.reservedBytesTotal -= this.sizeUnits[node]! * this.poolAlignBytes;
    this.isFree[node] = 1;
    // Absorb a free next neighbour, then let a free previous neighbour absorb the block.
    const after = this.next[node]!;
    if (after !== NIL && this.isFree[after] === 1) {
      this.indexRemove(after);
      this.sizeUnits[node]! += this.sizeUnits[after]!;
      this.unlink(after);
    }
    let merged = node;
    const before = this.prev[node]!;
    if (before !== NIL && this.isFree[before] === 1) {
      this.indexRemove(before);
      this.sizeUnits[before]! += this.sizeUnits[node]!;
      this.unlink(node);
      merged = before;
    }
    // One call site: the optimizing compiler inlines each call site on its own, within one
    // bytecode budget for the whole compiled function.
    this.indexInsert(merged);
    this.blocksValid = false;
  }

  /** The allocated node handed out at `offsetBytes`, or NIL. */
  protected liveNodeOrNil(offsetBytes: number): number {
    // Dividing by the (power-of-two) pool alignment is exact: the offset is a multiple of it
    // inside the pool exactly when the quotient is an integer below the unit count (< 2^30).
    // Rejects what the spelled-out test rejects (NaN, fractions, negatives, unsafe integers).
    const unit = offsetBytes * this.unitScale;
    if (!(unit >= 0 && unit < this.capacityUnits && (unit | 0) === unit)) return NIL;
    return this.liveAtUnit[unit]! - 1;
  }

  // --- the size index (protected for the bug catalog) ------------------------------------------

  /** Adds a free node to its size's heap. */
  protected indexInsert(node: number): void {
    const size = this.sizeUnits[node]!;
    let base = this.heapBase[size]!;
    if (base === NIL) {
      base = this.newRegion(HEAP_REGION_MIN_LOG);
      this.heapBase[size] = base;
      this.freeSizes.set(size);
    }
    const count = this.heapArena[base]! + 1;
    if (2 * count + 1 >= this.heapArena[base + 1]!) base = this.moveToLongerRegion(size, base);
    this.heapArena[base] = count;
    this.siftUp(base, count, this.offsetUnits[node]!, node);
    this.indexedCount++;
  }

  /** Removes a free node from its size's heap (it must be there, at its recorded position). */
  protected indexRemove(node: number): void {
    const size = this.sizeUnits[node]!;
    const base = this.heapBase[size]!;
    const heap = this.heapArena;
    const count = heap[base]!;
    const at = this.heapPos[node]!;
    heap[base] = count - 1;
    this.indexedCount--;
    if (count === 1) {
      this.heapBase[size] = NIL;
      this.releaseRegion(base);
      this.freeSizes.clear(size);
      return;
    }
    if (at === count) return;
    // The last entry fills the hole, then moves up or down to where its offset belongs.
    const key = heap[base + 2 * count]!;
    const moved = heap[base + 2 * count + 1]!;
    if (at > 1 && heap[base + 2 * (at >> 1)]! > key) this.siftUp(base, at, key, moved);
    else this.siftDown(base, at, count - 1, key, moved);
  }

  // --- heap regions in the arena -----------------------------------------------------------------

  /** An empty heap region of 2^log ints: a spare one of that length, or one carved at the arena's end. */
  protected newRegion(log: number): number {
    let base = this.spareRegions[log]?.pop();
    if (base === undefined) {
      base = this.arenaTop;
      const end = base + (1 << log);
      if (end > this.heapArena.length)
        this.heapArena = grownCopy(this.heapArena, Math.max(2 * this.heapArena.length, end));
      this.arenaTop = end;
    }
    this.heapArena[base] = 0;
    this.heapArena[base + 1] = 1 << log;
    return base;
  }

  /** Keeps an emptied (or moved) heap's region for the next heap of its length. */
  protected releaseRegion(base: number): void {
    const log = 31 - Math.clz32(this.heapArena[base + 1]!);
    const spare = this.spareRegions[log];
    if (spare === undefined) this.spareRegions[log] = [base];
    else spare.push(base);
  }

  /** Moves a full heap to a region twice as long; returns where it starts now. */
  protected moveToLongerRegion(size: number, base: number): number {
    const length = this.heapArena[base + 1]!;
    const moved = this.newRegion(32 - Math.clz32(length));
    this.heapArena.copyWithin(moved + 2, base + 2, base + length);
    this.heapArena[moved] = this.heapArena[base]!;
    this.releaseRegion(base);
    this.heapBase[size] = moved;
    return moved;
  }

  // --- per-size heaps (min-heaps by offset, in the arena) ---------------------------------------

  /** Places (key, node) at entry `at` or above it in the heap at `base`, moving larger parents down. */
  protected siftUp(base: number, at: number, key: number, node: number): void {
    const heap = this.heapArena;
    const pos = this.heapPos;
    let i = at;
    while (i > 1) {
      const parent = i >> 1;
      const parentKey = heap[base + 2 * parent]!;
      if (parentKey <= key) break;
      const parentNode = heap[base + 2 * parent + 1]!;
      heap[base + 2 * i] = parentKey;
      heap[base + 2 * i + 1] = parentNode;
      pos[parentNode] = i;
      i = parent;
    }
    heap[base + 2 * i] = key;
    heap[base + 2 * i + 1] = node;
    pos[node] = i;
  }

  /**
   * Places (key, node) at entry `at` or below it in the heap at `base` (of `count` entries),
   * moving smaller children up.
   */
  protected siftDown(base: number, at: number, count: number, key: number, node: number): void {
    const heap = this.heapArena;
    const pos = this.heapPos;
    let i = at;
    for (;;) {
      let child = 2 * i;
      if (child > count) break;
      // The lower of the two children, picked by arithmetic (which one is a coin toss, so a
      // branch there would mispredict every other level).
      if (child < count) child += +(heap[base + 2 * child + 2]! < heap[base + 2 * child]!);
      const childKey = heap[base + 2 * child]!;
      if (childKey >= key) break;
      const childNode = heap[base + 2 * child + 1]!;
      heap[base + 2 * i] = childKey;
      heap[base + 2 * i + 1] = childNode;
      pos[childNode] = i;
      i = child;
    }
    heap[base + 2 * i] = key;
    heap[base + 2 * i + 1] = node;
    pos[node] = i;
  }

  // --- node pool (protected for the bug catalog's step-by-step alloc and free) -----------------

  protected newNode(offsetUnits: number, sizeUnits: number, prev: number, next: number): number {
    let node: number;
    if (this.spareCount > 0) {
      node = this.spareNodes[--this.spareCount]!;
    } else {
      if (this.nodeHighWater === this.offsetUnits.length) this.grow();
      node = this.nodeHighWater++;
    }
    this.offsetUnits[node] = offsetUnits;
    this.sizeUnits[node] = sizeUnits;
    this.prev[node] = prev;
    this.next[node] = next;
    this.isFree[node] = 1;
    this.userOffsetBytes[node] = -1;
    this.userSizeBytes[node] = 0;
    return node;
  }

  /** Removes `node` from the list and recycles its id. */
  protected unlink(node: number): void {
    const before = this.prev[node]!;
    const after = this.next[node]!;
    if (before !== NIL) this.next[before] = after;
    if (after !== NIL) this.prev[after] = before;
    this.sizeUnits[node] = 0;
    this.spareNodes[this.spareCount++] = node;
  }

  private grow(): void {
    const length = this.offsetUnits.length * 2;
    this.offsetUnits = grownCopy(this.offsetUnits, length);
    this.sizeUnits = grownCopy(this.sizeUnits, length);
    this.prev = grownCopy(this.prev, length);
    this.next = grownCopy(this.next, length);
    this.isFree = grownCopy(this.isFree, length);
    this.userOffsetBytes = grownCopy(this.userOffsetBytes, length);
    this.userSizeBytes = grownCopy(this.userSizeBytes, length);
    this.spareNodes = grownCopy(this.spareNodes, length);
    this.heapPos = grownCopy(this.heapPos, length);
    // Ids up to length - 1 can now be handed out: from 2^16 on, id + 1 needs 32 bits.
    if (length === 0x10000) this.liveAtUnit = Int32Array.from(this.liveAtUnit);
  }
}
