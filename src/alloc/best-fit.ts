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
 *   free blocks keyed by offset, stored flat in one Int32Array per size ((offset, node) pairs,
 *   the count in the first slot; each node records its heap position). "First entry >=
 *   reservation" is findNext(reservation), then the heap's top: the lowest offset of that size.
 *   Inserting is O(1) expected (a new offset seldom rises far), removing the top or any entry
 *   (a merged neighbour, found by its recorded position) is O(log n) over one contiguous array,
 *   even when thousands of free blocks share one size. checkIndexes() verifies the index against
 *   the list after every step.
 * - Live allocations are found by their caller offset in a Map: free is O(1) plus the index
 *   updates of the merge with both neighbours.
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
 */
import {
  alignUp,
  badFree,
  copyBlocks,
  copyLive,
  setBlockEntry,
  setLiveEntry,
  validateRequest,
  type BlockAllocator,
  type BlockInfo,
  type LiveAllocation,
} from './allocator.js';
import {
  checkSubAllocatorConfig,
  DEFAULT_POOL_ALIGN_BYTES,
  type SubAllocatorConfig,
} from './config.js';
import { BitsetIndex } from './bitset-index.js';
import { grownCopy } from './typed-arrays.js';

const NIL = -1;

export class BestFitAllocator implements BlockAllocator {
  readonly capacityBytes: number;
  readonly poolAlignBytes: number;
  /** 1 / poolAlignBytes (a power of two, so bytes * unitScale is the exact unit count, without a division). */
  protected readonly unitScale: number;
  readonly maxAllocationBytes: number;
  protected readonly capacityUnits: number;

  // Block list nodes.
  protected offsetUnits: Int32Array;
  protected sizeUnits: Int32Array;
  protected prev: Int32Array;
  protected next: Int32Array;
  protected isFree: Uint8Array;
  protected userOffsetBytes: Float64Array;
  protected userSizeBytes: Float64Array;
  /** Recycled node ids (a stack), then never-used ids from `nodeHighWater`. */
  protected spareNodes: Int32Array;
  protected spareCount = 0;
  protected nodeHighWater = 0;
  protected readonly head: number;

  // The free index: sizes with free blocks, and per size a min-heap of its free blocks by
  // offset. `heapSlot[size]` is the size's index into `heaps` (NIL: no free block of that size);
  // heap h holds its entry count in h[0], and entry i (1-based, parent i >> 1) in h[2i] (offset
  // in units) and h[2i + 1] (node id); `heapPos[node]` is the node's entry number. A heap that
  // empties gives its slot back (`spareSlots`), keeping its array for the next size.
  protected readonly freeSizes: BitsetIndex;
  protected readonly heapSlot: Int32Array;
  protected readonly heaps: Int32Array[] = [];
  protected spareSlots: number[] = [];
  protected heapPos: Int32Array;
  protected indexedCount = 0;

  /**
   * The allocated node whose caller offset is unit u (caller offsets are always multiples of
   * the pool alignment: the block start, or a multiple of a larger alignment), or NIL.
   */
  protected readonly liveAtUnit: Int32Array;
  protected liveCount = 0;
  protected usedBytesTotal = 0;
  protected reservedBytesTotal = 0;

  // Inspection scratch (stale after every alloc and free): the blocks view as reused objects,
  // the list's nodes in order, and per-node marks for checkIndexes (`markEpoch` = marked).
  private readonly blocksPool: { offsetBytes: number; sizeBytes: number; free: boolean }[] = [];
  /** The records liveView() hands out, rewritten on every call. */
  private readonly livePool: { offsetBytes: number; sizeBytes: number }[] = [];
  private blocksValid = false;
  private listScratch = new Int32Array(16);
  private marks = new Int32Array(16);
  private markEpoch = 0;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('best-fit', config);
    this.capacityBytes = config.capacityBytes;
    this.poolAlignBytes = config.poolAlignBytes ?? DEFAULT_POOL_ALIGN_BYTES;
    this.unitScale = 1 / this.poolAlignBytes;
    this.maxAllocationBytes = config.maxAllocationBytes ?? config.capacityBytes;
    this.capacityUnits = this.capacityBytes / this.poolAlignBytes;
    const nodes = 16;
    this.offsetUnits = new Int32Array(nodes);
    this.sizeUnits = new Int32Array(nodes);
    this.prev = new Int32Array(nodes);
    this.next = new Int32Array(nodes);
    this.isFree = new Uint8Array(nodes);
    this.userOffsetBytes = new Float64Array(nodes);
    this.userSizeBytes = new Float64Array(nodes);
    this.spareNodes = new Int32Array(nodes);
    this.heapPos = new Int32Array(nodes);
    this.freeSizes = new BitsetIndex(this.capacityUnits + 1);
    this.heapSlot = new Int32Array(this.capacityUnits + 1).fill(NIL);
    this.liveAtUnit = new Int32Array(this.capacityUnits).fill(NIL);
    this.head = this.newNode(0, this.capacityUnits, NIL, NIL);
    this.indexInsert(this.head);
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    if (!this.withinLimit(sizeBytes)) return null;
    const reservationUnits = this.reservationBytes(sizeBytes, alignBytes) * this.unitScale;
    if (reservationUnits > this.capacityUnits) return null;
    const node = this.chooseFree(reservationUnits);
    if (node === NIL) return null;
    this.indexRemove(node);
    this.takeLowEnd(node, reservationUnits);
    const offsetBytes = this.callerOffset(node, alignBytes);
    this.isFree[node] = 0;
    this.userOffsetBytes[node] = offsetBytes;
    this.userSizeBytes[node] = sizeBytes;
    this.liveAtUnit[offsetBytes * this.unitScale] = node;
    this.liveCount++;
    this.usedBytesTotal += sizeBytes;
    this.reservedBytesTotal += reservationUnits * this.poolAlignBytes;
    this.blocksValid = false;
    return offsetBytes;
  }

  free(offsetBytes: number): void {
    const node = this.liveNodeAt(offsetBytes);
    this.liveAtUnit[offsetBytes * this.unitScale] = NIL;
    this.liveCount--;
    this.usedBytesTotal -= this.userSizeBytes[node]!;
    this.reservedBytesTotal -= this.sizeUnits[node]! * this.poolAlignBytes;
    this.isFree[node] = 1;
    this.userSizeBytes[node] = 0;
    this.mergeNext(node);
    const merged = this.mergePrevious(node);
    this.indexInsert(merged);
    this.blocksValid = false;
  }

  // --- steps (protected for the bug catalog) ---------------------------------------------------

  /** The single-allocation limit: larger requests belong to the committed path. */
  protected withinLimit(sizeBytes: number): boolean {
    return sizeBytes <= this.maxAllocationBytes;
  }

  /** The spec's aligned-size rule. */
  protected reservationBytes(sizeBytes: number, alignBytes: number): number {
    const pool = this.poolAlignBytes;
    // Both are powers of two, so `pool % alignBytes === 0` is `alignBytes <= pool` (no
    // floating-point remainder, an fmod call when the numbers arrive as doubles).
    const bytes = alignBytes <= pool ? sizeBytes : sizeBytes + alignBytes;
    // Below 2^30 (both operands) the round-up is exact in 32-bit integer arithmetic.
    if (bytes <= 0x3fffffff && pool <= 0x40000000) return (bytes + pool - 1) & -pool;
    return alignUp(bytes, pool);
  }

  /** The first free block in (size, offset) order that holds `reservationUnits`, or NIL. */
  protected chooseFree(reservationUnits: number): number {
    const size = this.freeSizes.findNext(reservationUnits);
    return size < 0 ? NIL : this.heaps[this.heapSlot[size]!]![3]!;
  }

  /** Shrinks the (unindexed) block to its low `units`; the rest becomes a free, indexed block. */
  protected takeLowEnd(node: number, units: number): void {
    const restUnits = this.sizeUnits[node]! - units;
    if (restUnits === 0) return;
    this.sizeUnits[node] = units;
    const rest = this.newNode(this.offsetUnits[node]! + units, restUnits, node, this.next[node]!);
    if (this.next[node] !== NIL) this.prev[this.next[node]!] = rest;
    this.next[node] = rest;
    this.indexInsert(rest);
  }

  /** Where the caller's bytes start inside the block. */
  protected callerOffset(node: number, alignBytes: number): number {
    const blockBytes = this.offsetUnits[node]! * this.poolAlignBytes;
    // A block start is a multiple of the pool alignment, so of any alignment up to it.
    return alignBytes <= this.poolAlignBytes ? blockBytes : alignUp(blockBytes, alignBytes);
  }

  /** Absorbs a free next neighbour into the (unindexed, free) block. */
  protected mergeNext(node: number): void {
    const after = this.next[node]!;
    if (after === NIL || this.isFree[after] === 0) return;
    this.indexRemove(after);
    this.sizeUnits[node]! += this.sizeUnits[after]!;
    this.unlink(after);
  }

  /** Lets a free previous neighbour absorb the (unindexed, free) block; returns the survivor. */
  protected mergePrevious(node: number): number {
    const before = this.prev[node]!;
    if (before === NIL || this.isFree[before] === 0) return node;
    this.indexRemove(before);
    this.sizeUnits[before]! += this.sizeUnits[node]!;
    this.unlink(node);
    return before;
  }

  /** The allocated node handed out at `offsetBytes`, or NIL. */
  protected liveNodeOrNil(offsetBytes: number): number {
    // Dividing by the (power-of-two) pool alignment is exact: the offset is a multiple of it
    // inside the pool exactly when the quotient is an integer below the unit count (< 2^30).
    // Rejects what the spelled-out test rejects (NaN, fractions, negatives, unsafe integers).
    const unit = offsetBytes * this.unitScale;
    if (!(unit >= 0 && unit < this.capacityUnits && (unit | 0) === unit)) return NIL;
    return this.liveAtUnit[unit]!;
  }

  protected liveNodeAt(offsetBytes: number): number {
    const node = this.liveNodeOrNil(offsetBytes);
    if (node === NIL) throw badFree(offsetBytes);
    return node;
  }

  /** Adds a free node to its size's heap. */
  protected indexInsert(node: number): void {
    const size = this.sizeUnits[node]!;
    let slot = this.heapSlot[size]!;
    if (slot === NIL) {
      slot =
        this.spareSlots.length > 0
          ? this.spareSlots.pop()!
          : this.heaps.push(new Int32Array(16)) - 1;
      this.heapSlot[size] = slot;
      this.freeSizes.set(size);
    }
    let heap = this.heaps[slot]!;
    const count = heap[0]! + 1;
    if (2 * count + 1 >= heap.length) {
      heap = grownCopy(heap, heap.length * 2);
      this.heaps[slot] = heap;
    }
    heap[0] = count;
    this.siftUp(heap, count, this.offsetUnits[node]!, node);
    this.indexedCount++;
  }

  /** Removes a free node from its size's heap (it must be there, at its recorded position). */
  protected indexRemove(node: number): void {
    const size = this.sizeUnits[node]!;
    const slot = this.heapSlot[size]!;
    const heap = this.heaps[slot]!;
    const count = heap[0]!;
    const at = this.heapPos[node]!;
    heap[0] = count - 1;
    this.indexedCount--;
    if (count === 1) {
      this.heapSlot[size] = NIL;
      this.spareSlots.push(slot);
      this.freeSizes.clear(size);
      return;
    }
    if (at === count) return;
    // The last entry fills the hole, then moves up or down to where its offset belongs.
    const key = heap[2 * count]!;
    const moved = heap[2 * count + 1]!;
    if (at > 1 && heap[2 * (at >> 1)]! > key) this.siftUp(heap, at, key, moved);
    else this.siftDown(heap, at, count - 1, key, moved);
  }

  // --- per-size heaps (min-heaps by offset in one Int32Array each) -----------------------------

  /** Places (key, node) at entry `at` or above it, moving larger parents down. */
  protected siftUp(heap: Int32Array, at: number, key: number, node: number): void {
    const pos = this.heapPos;
    let i = at;
    while (i > 1) {
      const parent = i >> 1;
      const parentKey = heap[2 * parent]!;
      if (parentKey <= key) break;
      const parentNode = heap[2 * parent + 1]!;
      heap[2 * i] = parentKey;
      heap[2 * i + 1] = parentNode;
      pos[parentNode] = i;
      i = parent;
    }
    heap[2 * i] = key;
    heap[2 * i + 1] = node;
    pos[node] = i;
  }

  /** Places (key, node) at entry `at` or below it (in a heap of `count` entries), moving smaller children up. */
  protected siftDown(heap: Int32Array, at: number, count: number, key: number, node: number): void {
    const pos = this.heapPos;
    let i = at;
    for (;;) {
      let child = 2 * i;
      if (child > count) break;
      let childKey = heap[2 * child]!;
      if (child < count) {
        const rightKey = heap[2 * child + 2]!;
        if (rightKey < childKey) {
          child++;
          childKey = rightKey;
        }
      }
      if (childKey >= key) break;
      const childNode = heap[2 * child + 1]!;
      heap[2 * i] = childKey;
      heap[2 * i + 1] = childNode;
      pos[childNode] = i;
      i = child;
    }
    heap[2 * i] = key;
    heap[2 * i + 1] = node;
    pos[node] = i;
  }

  // --- node pool -------------------------------------------------------------------------------

  private newNode(offsetUnits: number, sizeUnits: number, prev: number, next: number): number {
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
  private unlink(node: number): void {
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
  }

  // --- inspection ------------------------------------------------------------------------------

  live(): LiveAllocation[] {
    return copyLive(this.liveView());
  }

  liveView(): readonly LiveAllocation[] {
    const view = this.livePool;
    const count = this.listNodes();
    const nodes = this.listScratch;
    let live = 0;
    for (let i = 0; i < count; i++) {
      const node = nodes[i]!;
      if (this.isFree[node] === 0)
        setLiveEntry(view, live++, this.userOffsetBytes[node]!, this.userSizeBytes[node]!);
    }
    view.length = live;
    return view;
  }

  freeBytes(): number {
    return this.capacityBytes - this.reservedBytesTotal;
  }

  usedBytes(): number {
    return this.usedBytesTotal;
  }

  wasteBytes(): number {
    return this.reservedBytesTotal - this.usedBytesTotal;
  }

  isPristine(): boolean {
    return (
      this.liveCount === 0 &&
      this.next[this.head] === NIL &&
      this.isFree[this.head] === 1 &&
      this.sizeUnits[this.head] === this.capacityUnits
    );
  }

  blocks(): BlockInfo[] {
    return copyBlocks(this.blocksView());
  }

  blocksView(): readonly BlockInfo[] {
    const blocks = this.blocksPool;
    if (!this.blocksValid) {
      const count = this.listNodes();
      const nodes = this.listScratch;
      for (let i = 0; i < count; i++) {
        const node = nodes[i]!;
        const offsetBytes = this.offsetUnits[node]! * this.poolAlignBytes;
        const sizeBytes = this.sizeUnits[node]! * this.poolAlignBytes;
        setBlockEntry(blocks, i, offsetBytes, sizeBytes, this.isFree[node] === 1);
      }
      blocks.length = count;
      this.blocksValid = true;
    }
    return blocks;
  }

  /** The free blocks in the index's order: size ascending, then offset (the spec's FreeBlocks). */
  freeBlocksBySize(): { offsetBytes: number; sizeBytes: number }[] {
    const out: { offsetBytes: number; sizeBytes: number }[] = [];
    for (
      let size = this.freeSizes.findNext(0);
      size >= 0;
      size = this.freeSizes.findNext(size + 1)
    ) {
      const heap = this.heaps[this.heapSlot[size]!]!;
      const count = heap[0]!;
      // A heap is ordered only from parent to child: its offsets, sorted, are the size's run.
      const offsets: number[] = [];
      for (let i = 1; i <= count; i++) offsets.push(heap[2 * i]!);
      offsets.sort((a, b) => a - b);
      for (const offsetUnits of offsets)
        out.push({
          offsetBytes: offsetUnits * this.poolAlignBytes,
          sizeBytes: size * this.poolAlignBytes,
        });
    }
    return out;
  }

  checkIndexes(): string | null {
    const nodeCount = this.listNodes();
    const nodes = this.listScratch;
    // Walk the size heaps through the bitset: each set size has a non-empty heap whose entries
    // name free nodes of that size by their offset, each entry's recorded position is where it
    // is, and no parent's offset is above its child's. Nodes reached are marked with this
    // call's epoch.
    if (this.marks.length < this.offsetUnits.length)
      this.marks = new Int32Array(this.offsetUnits.length);
    if (this.markEpoch >= 0x3fffffff) {
      this.marks.fill(0);
      this.markEpoch = 0;
    }
    const marks = this.marks;
    const epoch = ++this.markEpoch;
    let indexedSize = 0;
    for (
      let size = this.freeSizes.findNext(0);
      size >= 0;
      size = this.freeSizes.findNext(size + 1)
    ) {
      const slot = this.heapSlot[size]!;
      const heap = slot === NIL ? undefined : this.heaps[slot];
      if (heap === undefined || heap[0]! < 1)
        return `size ${size} has its bit set but no free blocks`;
      const count = heap[0]!;
      if (2 * count + 1 >= heap.length)
        return `size ${size}: the heap counts ${count} entries but has room for ${(heap.length >> 1) - 1}`;
      for (let i = 1; i <= count; i++) {
        const node = heap[2 * i + 1]!;
        if (!(node >= 0 && node < this.nodeHighWater))
          return `size ${size}: heap entry ${i} names no node (${node})`;
        if (marks[node] === epoch) return `the size index reaches node ${node} twice`;
        if (this.isFree[node] !== 1 || this.sizeUnits[node] !== size)
          return `the size index lists node ${node} under size ${size} but it is not a free block of that size`;
        if (heap[2 * i] !== this.offsetUnits[node])
          return `size ${size}: heap entry ${i} keeps offset ${heap[2 * i]! * this.poolAlignBytes} for node ${node} at ${this.offsetUnits[node]! * this.poolAlignBytes}`;
        if (this.heapPos[node] !== i)
          return `size ${size}: node ${node} records heap position ${this.heapPos[node]} but sits at ${i}`;
        if (i > 1 && heap[2 * (i >> 1)]! > heap[2 * i]!)
          return `size ${size}: node ${node} sits below a parent with a higher offset`;
        marks[node] = epoch;
        indexedSize++;
      }
    }
    for (let size = 0; size < this.heapSlot.length; size++) {
      if (this.heapSlot[size] !== NIL && !this.freeSizes.test(size))
        return `size ${size} has free blocks but its bit is clear`;
    }
    if (indexedSize !== this.indexedCount)
      return `the size index holds ${indexedSize} entries but counts ${this.indexedCount}`;
    let freeCount = 0;
    for (let i = 0; i < nodeCount; i++) {
      const node = nodes[i]!;
      if (i > 0 && this.prev[node] !== nodes[i - 1])
        return `node ${node}: prev link does not point at the previous block`;
      if (this.isFree[node] === 1) {
        freeCount++;
        if (marks[node] !== epoch)
          return `free block at ${this.offsetUnits[node]! * this.poolAlignBytes} is missing from the size index`;
      } else if (this.liveNodeOrNil(this.userOffsetBytes[node]!) !== node) {
        return `allocated block at ${this.offsetUnits[node]! * this.poolAlignBytes} is not found by its caller offset`;
      }
    }
    if (freeCount !== this.indexedCount)
      return `the size index holds ${this.indexedCount} entries for ${freeCount} free blocks`;
    return this.liveCount === nodeCount - freeCount
      ? null
      : `${this.liveCount} live allocations counted for ${nodeCount - freeCount} allocated blocks`;
  }

  /** The list's nodes from the head into listScratch (bounded by the node count); returns how many. */
  private listNodes(): number {
    const bound = this.nodeHighWater;
    if (this.listScratch.length < bound + 2) this.listScratch = new Int32Array(bound + 2);
    const nodes = this.listScratch;
    let count = 0;
    for (let node = this.head; node !== NIL && count <= bound; node = this.next[node]!)
      nodes[count++] = node;
    return count;
  }
}
