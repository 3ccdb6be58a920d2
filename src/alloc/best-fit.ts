/**
 * The best-fit pool as an engine would ship it (spec/allocators.md "Best-fit pool"; Unreal's
 * FRHIMemoryPool, seed §3.4).
 *
 * - Blocks are nodes of an offset-ordered doubly linked list in typed arrays (offset and size in
 *   pool-alignment units, prev/next node ids), tiling the pool; a node pool recycles ids.
 * - The spec's FreeBlocks array (free blocks sorted by size, ties by lower offset, searched for
 *   the first block >= the reservation) is kept as an index with the same order but without the
 *   O(n) memmove a flat sorted array pays on every split and merge: a BitsetIndex over sizes
 *   (bit s set when some free block has s units) and, per size, a treap of that size's free
 *   nodes keyed by offset (typed-array links, priorities from a fixed xorshift sequence).
 *   "First entry >= reservation" is findNext(reservation), then the leftmost node of that size's
 *   treap; inserting and removing a free block are O(log n) expected even when thousands of free
 *   blocks share one size. checkIndexes() verifies the index against the list after every step.
 * - Live allocations are found by their caller offset in a Map: free is O(1) plus the index
 *   updates of the merge with both neighbours.
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
 */
import { alignUp, badFree, copyBlocks, copyLive, setBlockEntry, setLiveEntry, validateRequest, type BlockAllocator, type BlockInfo, type LiveAllocation } from './allocator.js';
import { checkSubAllocatorConfig, DEFAULT_POOL_ALIGN_BYTES, type SubAllocatorConfig } from './config.js';
import { BitsetIndex } from './bitset-index.js';
import { grownCopy, inOrderNodes, xorshift32 } from './typed-arrays.js';

const NIL = -1;

export class BestFitAllocator implements BlockAllocator {
  readonly capacityBytes: number;
  readonly poolAlignBytes: number;
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

  // The free index: sizes with free blocks, and per size a treap of the free nodes keyed by
  // offset (root per size in `bucketRoot`, children in bucketLeft/bucketRight).
  protected readonly freeSizes: BitsetIndex;
  protected readonly bucketRoot: Int32Array;
  protected bucketLeft: Int32Array;
  protected bucketRight: Int32Array;
  protected bucketPriority: Uint32Array;
  private prioritySeed = 0x9e3779b9;
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
  private bucketScratch = new Int32Array(16);
  private stackScratch = new Int32Array(16);
  private marks = new Int32Array(16);
  private markEpoch = 0;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('best-fit', config);
    this.capacityBytes = config.capacityBytes;
    this.poolAlignBytes = config.poolAlignBytes ?? DEFAULT_POOL_ALIGN_BYTES;
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
    this.bucketLeft = new Int32Array(nodes);
    this.bucketRight = new Int32Array(nodes);
    this.bucketPriority = new Uint32Array(nodes);
    this.freeSizes = new BitsetIndex(this.capacityUnits + 1);
    this.bucketRoot = new Int32Array(this.capacityUnits + 1).fill(NIL);
    this.liveAtUnit = new Int32Array(this.capacityUnits).fill(NIL);
    this.head = this.newNode(0, this.capacityUnits, NIL, NIL);
    this.indexInsert(this.head);
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    if (!this.withinLimit(sizeBytes)) return null;
    const reservationUnits = this.reservationBytes(sizeBytes, alignBytes) / this.poolAlignBytes;
    if (reservationUnits > this.capacityUnits) return null;
    const node = this.chooseFree(reservationUnits);
    if (node === NIL) return null;
    this.indexRemove(node);
    this.takeLowEnd(node, reservationUnits);
    const offsetBytes = this.callerOffset(node, alignBytes);
    this.isFree[node] = 0;
    this.userOffsetBytes[node] = offsetBytes;
    this.userSizeBytes[node] = sizeBytes;
    this.liveAtUnit[offsetBytes / this.poolAlignBytes] = node;
    this.liveCount++;
    this.usedBytesTotal += sizeBytes;
    this.reservedBytesTotal += reservationUnits * this.poolAlignBytes;
    this.blocksValid = false;
    return offsetBytes;
  }

  free(offsetBytes: number): void {
    const node = this.liveNodeAt(offsetBytes);
    this.liveAtUnit[offsetBytes / this.poolAlignBytes] = NIL;
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
    return alignBytes <= pool ? alignUp(sizeBytes, pool) : alignUp(sizeBytes + alignBytes, pool);
  }

  /** The first free block in (size, offset) order that holds `reservationUnits`, or NIL. */
  protected chooseFree(reservationUnits: number): number {
    const size = this.freeSizes.findNext(reservationUnits);
    return size < 0 ? NIL : this.leftmost(this.bucketRoot[size]!);
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
    return alignUp(this.offsetUnits[node]! * this.poolAlignBytes, alignBytes);
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
    const unit = offsetBytes / this.poolAlignBytes;
    if (!(unit >= 0 && unit < this.capacityUnits && (unit | 0) === unit)) return NIL;
    return this.liveAtUnit[unit]!;
  }

  protected liveNodeAt(offsetBytes: number): number {
    const node = this.liveNodeOrNil(offsetBytes);
    if (node === NIL) throw badFree(offsetBytes);
    return node;
  }

  /** Adds a free node to its size's treap. */
  protected indexInsert(node: number): void {
    const size = this.sizeUnits[node]!;
    const root = this.bucketRoot[size]!;
    if (root === NIL) this.freeSizes.set(size);
    this.prioritySeed = xorshift32(this.prioritySeed);
    this.bucketPriority[node] = this.prioritySeed;
    this.bucketLeft[node] = NIL;
    this.bucketRight[node] = NIL;
    this.bucketRoot[size] = this.treapInsert(root, node);
    this.indexedCount++;
  }

  /** Removes a free node from its size's treap (it must be there). */
  protected indexRemove(node: number): void {
    const size = this.sizeUnits[node]!;
    const root = this.treapRemove(this.bucketRoot[size]!, this.offsetUnits[node]!);
    this.bucketRoot[size] = root;
    if (root === NIL) this.freeSizes.clear(size);
    this.indexedCount--;
  }

  // --- per-size treaps (keyed by offset; depth O(log n) expected) ----------------------------

  private leftmost(root: number): number {
    let node = root;
    if (node === NIL) return NIL;
    while (this.bucketLeft[node] !== NIL) node = this.bucketLeft[node]!;
    return node;
  }

  /**
   * Inserts `node` (children NIL): down by offset while the nodes outrank it, then it takes the
   * place of the subtree there, split around its offset into its children. Iterative; the tree
   * is the one the textbook recursion builds.
   */
  private treapInsert(root: number, node: number): number {
    const key = this.offsetUnits[node]!;
    const priority = this.bucketPriority[node]!;
    let parent = NIL;
    let goLeft = false;
    let at = root;
    while (at !== NIL && !(priority > this.bucketPriority[at]!)) {
      parent = at;
      goLeft = key < this.offsetUnits[at]!;
      at = goLeft ? this.bucketLeft[at]! : this.bucketRight[at]!;
    }
    if (at !== NIL) this.treapSplit(at, key, node);
    if (parent === NIL) return node;
    if (goLeft) this.bucketLeft[parent] = node;
    else this.bucketRight[parent] = node;
    return root;
  }

  /** Splits `root` into offsets < key and > key, stored as `into`'s left and right children. */
  private treapSplit(root: number, key: number, into: number): void {
    let leftTail = NIL;
    let rightTail = NIL;
    this.bucketLeft[into] = NIL;
    this.bucketRight[into] = NIL;
    let node = root;
    while (node !== NIL) {
      if (this.offsetUnits[node]! < key) {
        if (leftTail === NIL) this.bucketLeft[into] = node;
        else this.bucketRight[leftTail] = node;
        leftTail = node;
        node = this.bucketRight[node]!;
      } else {
        if (rightTail === NIL) this.bucketRight[into] = node;
        else this.bucketLeft[rightTail] = node;
        rightTail = node;
        node = this.bucketLeft[node]!;
      }
    }
    if (leftTail !== NIL) this.bucketRight[leftTail] = NIL;
    if (rightTail !== NIL) this.bucketLeft[rightTail] = NIL;
  }

  /** Joins two treaps (every offset of `low` below every offset of `high`): zips the right spine of `low` with the left spine of `high`. */
  private treapJoin(low: number, high: number): number {
    let top = NIL;
    let attachTo = NIL;
    let attachLeft = false;
    let a = low;
    let b = high;
    while (a !== NIL && b !== NIL) {
      const winner = this.bucketPriority[a]! > this.bucketPriority[b]! ? a : b;
      if (attachTo === NIL) top = winner;
      else if (attachLeft) this.bucketLeft[attachTo] = winner;
      else this.bucketRight[attachTo] = winner;
      attachTo = winner;
      if (winner === a) {
        attachLeft = false;
        a = this.bucketRight[a]!;
      } else {
        attachLeft = true;
        b = this.bucketLeft[b]!;
      }
    }
    const rest = a !== NIL ? a : b;
    if (attachTo === NIL) return rest;
    if (attachLeft) this.bucketLeft[attachTo] = rest;
    else this.bucketRight[attachTo] = rest;
    return top;
  }

  /** Removes the node with offset `key` (if there): its children, joined, take its place. */
  private treapRemove(root: number, key: number): number {
    let parent = NIL;
    let goLeft = false;
    let at = root;
    while (at !== NIL && this.offsetUnits[at] !== key) {
      parent = at;
      goLeft = key < this.offsetUnits[at]!;
      at = goLeft ? this.bucketLeft[at]! : this.bucketRight[at]!;
    }
    if (at === NIL) return root;
    const joined = this.treapJoin(this.bucketLeft[at]!, this.bucketRight[at]!);
    if (parent === NIL) return joined;
    if (goLeft) this.bucketLeft[parent] = joined;
    else this.bucketRight[parent] = joined;
    return root;
  }

  /**
   * The nodes of one size's treap in offset order into bucketScratch (inspection only; bounded
   * by the node count); returns how many.
   */
  private bucketInOrder(root: number): number {
    const bound = this.nodeHighWater + 1;
    if (this.bucketScratch.length < bound + 2) {
      this.bucketScratch = new Int32Array(bound + 2);
      this.stackScratch = new Int32Array(bound + 2);
    }
    return inOrderNodes(root, NIL, this.bucketLeft, this.bucketRight, this.bucketScratch, this.stackScratch, bound);
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
    this.bucketLeft = grownCopy(this.bucketLeft, length);
    this.bucketRight = grownCopy(this.bucketRight, length);
    this.bucketPriority = grownCopy(this.bucketPriority, length);
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
      if (this.isFree[node] === 0) setLiveEntry(view, live++, this.userOffsetBytes[node]!, this.userSizeBytes[node]!);
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
    return this.liveCount === 0 && this.next[this.head] === NIL && this.isFree[this.head] === 1 && this.sizeUnits[this.head] === this.capacityUnits;
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
    for (let size = this.freeSizes.findNext(0); size >= 0; size = this.freeSizes.findNext(size + 1)) {
      const count = this.bucketInOrder(this.bucketRoot[size]!);
      for (let i = 0; i < count; i++) {
        const node = this.bucketScratch[i]!;
        out.push({ offsetBytes: this.offsetUnits[node]! * this.poolAlignBytes, sizeBytes: this.sizeUnits[node]! * this.poolAlignBytes });
      }
    }
    return out;
  }

  checkIndexes(): string | null {
    const nodeCount = this.listNodes();
    const nodes = this.listScratch;
    // Walk the size treaps through the bitset: each set size has a non-empty treap, in offset
    // order, each parent's priority at least its children's. Nodes reached are marked with
    // this call's epoch.
    if (this.marks.length < this.offsetUnits.length) this.marks = new Int32Array(this.offsetUnits.length);
    if (this.markEpoch >= 0x3fffffff) {
      this.marks.fill(0);
      this.markEpoch = 0;
    }
    const marks = this.marks;
    const epoch = ++this.markEpoch;
    let indexedSize = 0;
    for (let size = this.freeSizes.findNext(0); size >= 0; size = this.freeSizes.findNext(size + 1)) {
      let previous = NIL;
      if (this.bucketRoot[size] === NIL) return `size ${size} has its bit set but no free blocks`;
      const count = this.bucketInOrder(this.bucketRoot[size]!);
      const bucket = this.bucketScratch;
      for (let i = 0; i < count; i++) {
        const node = bucket[i]!;
        if (marks[node] === epoch) return `the size index reaches node ${node} twice`;
        if (this.isFree[node] !== 1 || this.sizeUnits[node] !== size) return `the size index lists node ${node} under size ${size} but it is not a free block of that size`;
        if (previous !== NIL && this.offsetUnits[previous]! >= this.offsetUnits[node]!) return `size ${size}: the index is not in offset order`;
        const left = this.bucketLeft[node]!;
        if (left !== NIL && this.bucketPriority[left]! > this.bucketPriority[node]!) return `size ${size}: node ${left} outranks its parent ${node}`;
        const right = this.bucketRight[node]!;
        if (right !== NIL && this.bucketPriority[right]! > this.bucketPriority[node]!) return `size ${size}: node ${right} outranks its parent ${node}`;
        marks[node] = epoch;
        indexedSize++;
        previous = node;
      }
    }
    for (let size = 0; size < this.bucketRoot.length; size++) {
      if (this.bucketRoot[size] !== NIL && !this.freeSizes.test(size)) return `size ${size} has free blocks but its bit is clear`;
    }
    if (indexedSize !== this.indexedCount) return `the size index holds ${indexedSize} entries but counts ${this.indexedCount}`;
    let freeCount = 0;
    for (let i = 0; i < nodeCount; i++) {
      const node = nodes[i]!;
      if (i > 0 && this.prev[node] !== nodes[i - 1]) return `node ${node}: prev link does not point at the previous block`;
      if (this.isFree[node] === 1) {
        freeCount++;
        if (marks[node] !== epoch) return `free block at ${this.offsetUnits[node]! * this.poolAlignBytes} is missing from the size index`;
      } else if (this.liveNodeOrNil(this.userOffsetBytes[node]!) !== node) {
        return `allocated block at ${this.offsetUnits[node]! * this.poolAlignBytes} is not found by its caller offset`;
      }
    }
    if (freeCount !== this.indexedCount) return `the size index holds ${this.indexedCount} entries for ${freeCount} free blocks`;
    return this.liveCount === nodeCount - freeCount ? null : `${this.liveCount} live allocations counted for ${nodeCount - freeCount} allocated blocks`;
  }

  /** The list's nodes from the head into listScratch (bounded by the node count); returns how many. */
  private listNodes(): number {
    const bound = this.nodeHighWater;
    if (this.listScratch.length < bound + 2) this.listScratch = new Int32Array(bound + 2);
    const nodes = this.listScratch;
    let count = 0;
    for (let node = this.head; node !== NIL && count <= bound; node = this.next[node]!) nodes[count++] = node;
    return count;
  }
}
