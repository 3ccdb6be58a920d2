/**
 * The best-fit pool as an engine would ship it (spec/allocators.md "Best-fit pool"; Unreal's
 * FRHIMemoryPool, seed §3.4).
 *
 * - Blocks are nodes of an offset-ordered doubly linked list in typed arrays (offset and size in
 *   pool-alignment units, prev/next node ids), tiling the pool; a node pool recycles ids.
 * - The spec's FreeBlocks array (free blocks sorted by size, ties by lower offset, searched for
 *   the first block >= the reservation) is kept as an index with the same order but without the
 *   O(n) memmove a flat sorted array pays on every split and merge: a BitsetIndex over sizes
 *   (bit s set when some free block has s units) and, per size, the free nodes sorted by
 *   offset. "First entry >= reservation" is findNext(reservation) then the bucket's head:
 *   O(log32 n). checkIndexes() verifies the index against the list after every step.
 * - Live allocations are found by their caller offset in a Map: free is O(1) plus the index
 *   updates of the merge with both neighbours.
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
 */
import { alignUp, badFree, validateRequest, type BlockAllocator, type BlockInfo, type LiveAllocation } from './allocator';
import { checkSubAllocatorConfig, DEFAULT_POOL_ALIGN_BYTES, type SubAllocatorConfig } from './config';
import { BitsetIndex } from './bitset-index';

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

  // The free index: sizes with free blocks, and per size an intrusive list of the free nodes
  // ascending by offset (head per size in `bucketHead`, links in bucketPrev/bucketNext).
  protected readonly freeSizes: BitsetIndex;
  protected readonly bucketHead: Int32Array;
  protected bucketPrev: Int32Array;
  protected bucketNext: Int32Array;
  protected indexedCount = 0;

  /**
   * The allocated node whose caller offset is unit u (caller offsets are always multiples of
   * the pool alignment: the block start, or a multiple of a larger alignment), or NIL.
   */
  protected readonly liveAtUnit: Int32Array;
  protected liveCount = 0;
  protected usedBytesTotal = 0;
  protected reservedBytesTotal = 0;

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
    this.bucketPrev = new Int32Array(nodes);
    this.bucketNext = new Int32Array(nodes);
    this.freeSizes = new BitsetIndex(this.capacityUnits + 1);
    this.bucketHead = new Int32Array(this.capacityUnits + 1).fill(NIL);
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
  }

  // --- steps (protected for the bug catalog) ---------------------------------------------------

  /** The single-allocation limit: larger requests belong to the committed path. */
  protected withinLimit(sizeBytes: number): boolean {
    return sizeBytes <= this.maxAllocationBytes;
  }

  /** The spec's aligned-size rule. */
  protected reservationBytes(sizeBytes: number, alignBytes: number): number {
    const pool = this.poolAlignBytes;
    return pool % alignBytes === 0 ? alignUp(sizeBytes, pool) : alignUp(sizeBytes + alignBytes, pool);
  }

  /** The first free block in (size, offset) order that holds `reservationUnits`, or NIL. */
  protected chooseFree(reservationUnits: number): number {
    const size = this.freeSizes.findNext(reservationUnits);
    return size < 0 ? NIL : this.bucketHead[size]!;
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
    if (!Number.isSafeInteger(offsetBytes) || offsetBytes < 0 || offsetBytes >= this.capacityBytes || offsetBytes % this.poolAlignBytes !== 0) return NIL;
    return this.liveAtUnit[offsetBytes / this.poolAlignBytes]!;
  }

  protected liveNodeAt(offsetBytes: number): number {
    const node = this.liveNodeOrNil(offsetBytes);
    if (node === NIL) throw badFree(offsetBytes);
    return node;
  }

  /** Adds a free node to its size's list, keeping the list in offset order. */
  protected indexInsert(node: number): void {
    const size = this.sizeUnits[node]!;
    const head = this.bucketHead[size]!;
    const offset = this.offsetUnits[node]!;
    if (head === NIL || offset < this.offsetUnits[head]!) {
      this.bucketPrev[node] = NIL;
      this.bucketNext[node] = head;
      if (head === NIL) this.freeSizes.set(size);
      else this.bucketPrev[head] = node;
      this.bucketHead[size] = node;
    } else {
      let before = head;
      // Bounded by the list length; lists hold the free blocks of one exact size.
      for (let after = this.bucketNext[before]!; after !== NIL && this.offsetUnits[after]! < offset; after = this.bucketNext[before]!) before = after;
      const after = this.bucketNext[before]!;
      this.bucketPrev[node] = before;
      this.bucketNext[node] = after;
      this.bucketNext[before] = node;
      if (after !== NIL) this.bucketPrev[after] = node;
    }
    this.indexedCount++;
  }

  protected indexRemove(node: number): void {
    const size = this.sizeUnits[node]!;
    const before = this.bucketPrev[node]!;
    const after = this.bucketNext[node]!;
    if (before === NIL) {
      this.bucketHead[size] = after;
      if (after === NIL) this.freeSizes.clear(size);
    } else {
      this.bucketNext[before] = after;
    }
    if (after !== NIL) this.bucketPrev[after] = before;
    this.indexedCount--;
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
    const grown = <T extends Int32Array | Uint8Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const fresh = make(length);
      fresh.set(old);
      return fresh;
    };
    this.offsetUnits = grown(this.offsetUnits, (n) => new Int32Array(n));
    this.sizeUnits = grown(this.sizeUnits, (n) => new Int32Array(n));
    this.prev = grown(this.prev, (n) => new Int32Array(n));
    this.next = grown(this.next, (n) => new Int32Array(n));
    this.isFree = grown(this.isFree, (n) => new Uint8Array(n));
    this.userOffsetBytes = grown(this.userOffsetBytes, (n) => new Float64Array(n));
    this.userSizeBytes = grown(this.userSizeBytes, (n) => new Float64Array(n));
    this.spareNodes = grown(this.spareNodes, (n) => new Int32Array(n));
    this.bucketPrev = grown(this.bucketPrev, (n) => new Int32Array(n));
    this.bucketNext = grown(this.bucketNext, (n) => new Int32Array(n));
  }

  // --- inspection ------------------------------------------------------------------------------

  live(): LiveAllocation[] {
    const out: LiveAllocation[] = [];
    for (const node of this.listNodes()) {
      if (this.isFree[node] === 0) out.push({ offsetBytes: this.userOffsetBytes[node]!, sizeBytes: this.userSizeBytes[node]! });
    }
    return out;
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
    return this.listNodes().map((node) => ({
      offsetBytes: this.offsetUnits[node]! * this.poolAlignBytes,
      sizeBytes: this.sizeUnits[node]! * this.poolAlignBytes,
      free: this.isFree[node] === 1,
    }));
  }

  /** The free blocks in the index's order: size ascending, then offset (the spec's FreeBlocks). */
  freeBlocksBySize(): { offsetBytes: number; sizeBytes: number }[] {
    const out: { offsetBytes: number; sizeBytes: number }[] = [];
    for (let size = this.freeSizes.findNext(0); size >= 0; size = this.freeSizes.findNext(size + 1)) {
      for (let node = this.bucketHead[size]!; node !== NIL; node = this.bucketNext[node]!) {
        out.push({ offsetBytes: this.offsetUnits[node]! * this.poolAlignBytes, sizeBytes: this.sizeUnits[node]! * this.poolAlignBytes });
      }
    }
    return out;
  }

  checkIndexes(): string | null {
    const nodes = this.listNodes();
    // Walk the size lists through the bitset: each set size has a non-empty list in offset order.
    const indexed = new Set<number>();
    for (let size = this.freeSizes.findNext(0); size >= 0; size = this.freeSizes.findNext(size + 1)) {
      let previous = NIL;
      if (this.bucketHead[size] === NIL) return `size ${size} has its bit set but no free blocks`;
      for (let node = this.bucketHead[size]!; node !== NIL && indexed.size <= nodes.length; node = this.bucketNext[node]!) {
        if (this.isFree[node] !== 1 || this.sizeUnits[node] !== size) return `the size index lists node ${node} under size ${size} but it is not a free block of that size`;
        if (this.bucketPrev[node] !== previous) return `size ${size}: broken back link at node ${node}`;
        if (previous !== NIL && this.offsetUnits[previous]! >= this.offsetUnits[node]!) return `size ${size}: the index is not in offset order`;
        indexed.add(node);
        previous = node;
      }
    }
    if (indexed.size !== this.indexedCount) return `the size index holds ${indexed.size} entries but counts ${this.indexedCount}`;
    let freeCount = 0;
    for (let i = 0; i < nodes.length; i++) {
      const node = nodes[i]!;
      if (i > 0 && this.prev[node] !== nodes[i - 1]) return `node ${node}: prev link does not point at the previous block`;
      if (this.isFree[node] === 1) {
        freeCount++;
        if (!indexed.has(node)) return `free block at ${this.offsetUnits[node]! * this.poolAlignBytes} is missing from the size index`;
      } else if (this.liveNodeOrNil(this.userOffsetBytes[node]!) !== node) {
        return `allocated block at ${this.offsetUnits[node]! * this.poolAlignBytes} is not found by its caller offset`;
      }
    }
    if (freeCount !== this.indexedCount) return `the size index holds ${this.indexedCount} entries for ${freeCount} free blocks`;
    return this.liveCount === nodes.length - freeCount ? null : `${this.liveCount} live allocations counted for ${nodes.length - freeCount} allocated blocks`;
  }

  private listNodes(): number[] {
    const nodes: number[] = [];
    const bound = this.nodeHighWater;
    for (let node = this.head; node !== NIL && nodes.length <= bound; node = this.next[node]!) nodes.push(node);
    return nodes;
  }
}
