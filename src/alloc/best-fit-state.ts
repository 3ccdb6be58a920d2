/**
 * The best-fit pool's storage, and everything that only reads it
 * (docs/spec/allocators.md#al-best-fit): the block list's node arrays, the size-ordered free index and the live-offset table that
 * BestFitAllocator (best-fit.ts) keeps, with the inspection views (live, blocks, the free blocks
 * in the index's order) and the self-check checkIndexes(). alloc, free and the steps they are
 * made of (the hot path, and the node pool they use) stay in best-fit.ts, which sets `head`.
 */
import {
  copyBlocks,
  copyLive,
  setBlockEntry,
  setLiveEntry,
  type BlockInfo,
  type LiveAllocation,
} from './allocator.js';
import {
  checkSubAllocatorConfig,
  DEFAULT_POOL_ALIGN_BYTES,
  type SubAllocatorConfig,
} from './config.js';
import { BitsetIndex } from './bitset-index.js';

export const NIL = -1;
/** log2 of a new heap region's length (16 ints: the header and 7 entries). */
export const HEAP_REGION_MIN_LOG = 4;

export abstract class BestFitState {
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
  protected abstract readonly head: number;

  // The free index: sizes with free blocks, and per size a min-heap of its free blocks by
  // offset. All heaps live in one Int32Array, `heapArena`, each in a region whose length is a
  // power of two (at least 2^HEAP_REGION_MIN_LOG): a heap at r holds its entry count in
  // arena[r], its region's length in arena[r + 1], and entry i (1-based, parent i >> 1) in
  // arena[r + 2i] (offset in units) and arena[r + 2i + 1] (node id). `heapBase[size]` is where
  // the size's heap starts (NIL: no free block of that size); `heapPos[node]` is the node's
  // entry number. A heap that empties gives its region back (`spareRegions[log2 length]`) for
  // the next heap of that length; a full one moves to a region twice as long. Regions are
  // carved from the arena's end (`arenaTop`) only when no spare one fits. (One array for all:
  // reading a heap's top is one load after heapBase, not three through a per-size typed array.)
  protected readonly freeSizes: BitsetIndex;
  protected readonly heapBase: Int32Array;
  protected heapArena = new Int32Array(64);
  protected arenaTop = 0;
  protected readonly spareRegions: number[][] = [];
  protected heapPos: Int32Array;
  protected indexedCount = 0;

  /**
   * The allocated node whose caller offset is unit u, plus one (0: none); caller offsets are
   * always multiples of the pool alignment: the block start, or a multiple of a larger
   * alignment. Node ids stay below 2^16 - 1 until the node arrays grow to 2^16 entries, and
   * until then the table holds 16-bit entries (half the bytes to miss in the caches on a free's
   * lookup, in a table as long as the pool has units); that growth widens it to 32 bits.
   */
  protected liveAtUnit: Uint16Array | Int32Array;
  protected liveCount = 0;
  protected usedBytesTotal = 0;
  protected reservedBytesTotal = 0;

  // Inspection scratch (stale after every alloc and free): the blocks view as reused objects,
  // the list's nodes in order, and per-node marks for checkIndexes (`markEpoch` = marked).
  private readonly blocksPool: { offsetBytes: number; sizeBytes: number; free: boolean }[] = [];
  /** The records liveView() hands out, rewritten on every call. */
  private readonly livePool: { offsetBytes: number; sizeBytes: number }[] = [];
  protected blocksValid = false;
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
    this.heapBase = new Int32Array(this.capacityUnits + 1).fill(NIL);
    this.liveAtUnit = new Uint16Array(this.capacityUnits);
  }

  /** The allocated node whose caller offset is `offsetBytes`, or NIL. */
  protected abstract liveNodeOrNil(offsetBytes: number): number;

  /** The heap of a size with free blocks as a view of its region (writes go to the arena). */
  protected heapView(size: number): Int32Array {
    const base = this.heapBase[size]!;
    return this.heapArena.subarray(base, base + this.heapArena[base + 1]!);
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
      const arena = this.heapArena;
      const base = this.heapBase[size]!;
      const count = arena[base]!;
      // A heap is ordered only from parent to child: its offsets, sorted, are the size's run.
      const offsets: number[] = [];
      for (let i = 1; i <= count; i++) offsets.push(arena[base + 2 * i]!);
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
      const base = this.heapBase[size]!;
      if (!(base >= 0 && base < this.arenaTop && this.heapArena[base]! >= 1))
        return `size ${size} has its bit set but no free blocks`;
      // The heap's region, read in place (a view per size would allocate on every check).
      const arena = this.heapArena;
      const count = arena[base]!;
      const regionLength = arena[base + 1]!;
      if (2 * count + 1 >= regionLength)
        return `size ${size}: the heap counts ${count} entries but has room for ${(regionLength >> 1) - 1}`;
      for (let i = 1; i <= count; i++) {
        const node = arena[base + 2 * i + 1]!;
        if (!(node >= 0 && node < this.nodeHighWater))
          return `size ${size}: heap entry ${i} names no node (${node})`;
        if (marks[node] === epoch) return `the size index reaches node ${node} twice`;
        if (this.isFree[node] !== 1 || this.sizeUnits[node] !== size)
          return `the size index lists node ${node} under size ${size} but it is not a free block of that size`;
        if (arena[base + 2 * i] !== this.offsetUnits[node])
          return `size ${size}: heap entry ${i} keeps offset ${arena[base + 2 * i]! * this.poolAlignBytes} for node ${node} at ${this.offsetUnits[node]! * this.poolAlignBytes}`;
        if (this.heapPos[node] !== i)
          return `size ${size}: node ${node} records heap position ${this.heapPos[node]} but sits at ${i}`;
        if (i > 1 && arena[base + 2 * (i >> 1)]! > arena[base + 2 * i]!)
          return `size ${size}: node ${node} sits below a parent with a higher offset`;
        marks[node] = epoch;
        indexedSize++;
      }
    }
    for (let size = 0; size < this.heapBase.length; size++) {
      if (this.heapBase[size] !== NIL && !this.freeSizes.test(size))
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
