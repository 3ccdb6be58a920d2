/**
 * The first-fit allocator as an engine would ship it (docs/spec/allocators.md "First-fit";
 * Unreal's BigBlockAllocator shape), with one-byte granularity like the model
 * (models/alloc-first-fit.ts): the lowest-offset free block whose aligned start plus the size
 * fits wins, the padding in front stays free, a free merges with both free neighbours.
 *
 * Three units do the work:
 * - the node store (first-fit-blocks.ts): every block, free or allocated, in one offset-ordered
 *   doubly linked list, so a free() reaches both neighbours through links;
 * - the free indexes (first-fit-index.ts): the free blocks in size bins, each bin a heap by
 *   offset, under a min tree of the bins' lowest offsets. One index takes sizes as they are and
 *   serves every alignment below OWN_INDEX_ALIGN (testing each candidate exactly); on heaps from
 *   OWN_INDEX_MIN_CAPACITY up, each larger alignment requested (up to MAX_OWN_INDEXES of them)
 *   gets an index of usable sizes at that alignment, so a 4 KiB-aligned request does not test the
 *   many small blocks that cannot hold it, while every free block change costs one update per
 *   index;
 * - the live offsets (first-fit-offsets.ts): a hash table from each allocation's offset to its
 *   node, for free().
 * An alloc is a search, a carve into at most three blocks and a few heap updates; a free is a
 * lookup, at most two merges through links and a few heap updates. Nothing walks the heap.
 *
 * alloc and free are each written out in one piece (the hot path). The bug catalog
 * (mutants/alloc-first-fit.ts) re-creates its pitfalls on SteppedFirstFit, a twin whose alloc and
 * free are made of steps a mutant can override or call, held to this class answer for answer and
 * index for index by properties/first-fit-stepped.test.ts. Nothing in src/ depends on that catalog.
 */
import {
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
import { checkSubAllocatorConfig, type SubAllocatorConfig } from './config.js';
import { BlockList, NIL } from './first-fit-blocks.js';
import { checkFirstFit, FirstFitCheckScratch } from './first-fit-check.js';
import { binOf, FreeIndex, NOT_INDEXED, padAt } from './first-fit-index.js';
import { LiveOffsets } from './first-fit-offsets.js';

/** Alignments from this up get a free index of their own (smaller ones share the size index). */
export const OWN_INDEX_ALIGN = 4096;
/**
 * Heaps below this size keep the size index only: they hold too few blocks for an index per
 * alignment to pay for its upkeep on every free block change (and the self-check's per step).
 */
export const OWN_INDEX_MIN_CAPACITY = 65536;
/**
 * At most this many alignments get an index of their own (the first ones requested); a later
 * one searches the index of the largest alignment below it, or the size index.
 */
export const MAX_OWN_INDEXES = 3;

export class FirstFitAllocator implements BlockAllocator {
  readonly capacityBytes: number;
  /** Every block in offset order (the node store). */
  protected readonly list: BlockList;
  /**
   * The free indexes: [0] by size (alignment 1), then one per alignment >= OWN_INDEX_ALIGN in the
   * order first requested. Every free block is in each index whose floor its usable size reaches.
   */
  protected readonly indexes: FreeIndex[];
  /** Requests from this alignment up search an index of their own (Infinity below OWN_INDEX_MIN_CAPACITY). */
  protected readonly ownIndexAlign: number;
  /** indexOfLog[log2 alignment]: that alignment's position in `indexes` (0: none of its own yet). */
  protected readonly indexOfLog = new Int32Array(64);
  /** The allocations' offsets and nodes. */
  protected readonly offsets = new LiveOffsets();
  /** Bytes handed out (the allocated blocks' sizes: no padding or rounding is reserved). */
  protected usedBytesTotal = 0;
  /** Allocated blocks in the list. */
  protected liveCount = 0;
  /** Counts alloc and free calls that changed the heap: the views are rebuilt when it moved. */
  protected changes = 0;
  private blocksAt = -1;
  private liveAt = -1;
  /** The records the views hand out, rewritten when stale. */
  private readonly blocksPool: { offsetBytes: number; sizeBytes: number; free: boolean }[] = [];
  private readonly livePool: { offsetBytes: number; sizeBytes: number }[] = [];
  /** The self-check's working arrays (made on its first call, kept: it runs after every step). */
  protected checkScratch: FirstFitCheckScratch | undefined;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('first-fit', config);
    this.capacityBytes = config.capacityBytes;
    this.list = new BlockList();
    const whole = this.list.create(0, this.capacityBytes, true);
    this.list.head = whole;
    // The floor starts above every bin: the first request indexes the whole block.
    this.indexes = [this.newIndex(1)];
    this.ownIndexAlign = this.capacityBytes >= OWN_INDEX_MIN_CAPACITY ? OWN_INDEX_ALIGN : Infinity;
  }

  /**
   * The lowest-offset fit (the index's search), carved in place: the padding in front stays free
   * as the found block (or, with no padding, the block becomes the allocation), the tail behind
   * becomes a new free block. Written out in one piece (the hot path); the bug catalog's
   * step-by-step twin is SteppedFirstFit in mutants/alloc-first-fit.ts.
   */
  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const indexes = this.indexes;
    const index = alignBytes < this.ownIndexAlign ? indexes[0]! : this.indexFor(alignBytes);
    const bin = binOf(sizeBytes);
    if (bin < index.floorBin) this.lowerFloor(index, bin & ~7);
    const list = this.list;
    const node = index.search(sizeBytes, alignBytes, list.f64);
    if (node === -1 /* NIL */) return null;
    let f64 = list.f64;
    const start = f64[node * 4 /* F64_PER_NODE */ + 0 /* START */]!;
    const end = start + f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */]!;
    const offsetBytes = start + padAt(start, alignBytes);
    const allocEnd = offsetBytes + sizeBytes;
    let live = node;
    let tail = -1 /* NIL */;
    // New nodes first (the store may grow, and the indexes' per-node arrays with it).
    if (offsetBytes !== start) {
      live = list.create(offsetBytes, sizeBytes, false);
      list.insertAfter(node, live);
    }
    if (allocEnd < end) {
      tail = list.create(allocEnd, end - allocEnd, true);
      list.insertAfter(live, tail);
    }
    if (list.room !== indexes[0]!.bin.length) this.growIndexes();
    f64 = list.f64;
    // No padding: the block becomes the allocation (the tail takes over its index entries).
    const paddingBytes = offsetBytes - start;
    if (live === node) list.i32[node * 8 /* I32_PER_NODE */ + 6 /* FREE */] = 0;
    f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */] = live === node ? sizeBytes : paddingBytes;
    for (let k = 0; k < indexes.length; k++)
      indexes[k]!.carved(node, start, paddingBytes, tail, allocEnd, end - allocEnd);
    this.offsets.put(offsetBytes, live);
    this.usedBytesTotal += sizeBytes;
    this.liveCount++;
    this.changes++;
    return offsetBytes;
  }

  /**
   * Frees the allocation at `offsetBytes` (BAD_FREE unless one starts there) and merges it with
   * its free neighbours through the links: the lower block survives, a free block after it hands
   * its index entries to the survivor. One piece, like alloc.
   */
  free(offsetBytes: number): void {
    const node = this.offsets.take(offsetBytes);
    if (node === -1 /* NIL */) throw badFree(offsetBytes);
    const list = this.list;
    const f64 = list.f64;
    const i32 = list.i32;
    const indexes = this.indexes;
    let merged = f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */]!;
    this.usedBytesTotal -= merged;
    this.liveCount--;
    this.changes++;
    i32[node * 8 /* I32_PER_NODE */ + 6 /* FREE */] = 1;
    let absorbed = -1 /* NIL */;
    const following = i32[node * 8 /* I32_PER_NODE */ + 5 /* NEXT */]!;
    if (following !== -1 /* NIL */ && i32[following * 8 /* I32_PER_NODE */ + 6 /* FREE */] === 1) {
      absorbed = following;
      merged += f64[following * 4 /* F64_PER_NODE */ + 1 /* SIZE */]!;
    }
    let before = i32[node * 8 /* I32_PER_NODE */ + 4 /* PREV */]!;
    let beforeStart = 0;
    if (before !== -1 /* NIL */ && i32[before * 8 /* I32_PER_NODE */ + 6 /* FREE */] === 1) {
      beforeStart = f64[before * 4 /* F64_PER_NODE */ + 0 /* START */]!;
      merged += f64[before * 4 /* F64_PER_NODE */ + 1 /* SIZE */]!;
    } else {
      before = -1 /* NIL */;
    }
    for (let k = 0; k < indexes.length; k++)
      indexes[k]!.freed(node, offsetBytes, merged, absorbed, before, beforeStart);
    if (absorbed !== -1 /* NIL */) list.remove(absorbed);
    if (before !== -1 /* NIL */) {
      f64[before * 4 /* F64_PER_NODE */ + 1 /* SIZE */] = merged;
      list.remove(node);
    } else {
      f64[node * 4 /* F64_PER_NODE */ + 1 /* SIZE */] = merged;
    }
  }

  /**
   * The index a request at `alignBytes` (>= OWN_INDEX_ALIGN) searches: its own, made empty on
   * first use while fewer than MAX_OWN_INDEXES exist, else the one of the largest alignment below.
   */
  protected indexFor(alignBytes: number): FreeIndex {
    const log = Math.log2(alignBytes);
    const at = this.indexOfLog[log]!;
    if (at !== 0) return this.indexes[at]!;
    const indexes = this.indexes;
    if (indexes.length <= MAX_OWN_INDEXES) {
      this.indexOfLog[log] = indexes.length;
      indexes.push(this.newIndex(alignBytes));
      return indexes[indexes.length - 1]!;
    }
    let below = indexes[0]!;
    for (const index of indexes)
      if (index.alignBytes < alignBytes && index.alignBytes > below.alignBytes) below = index;
    return below;
  }

  /**
   * Lowers `index`'s floor to `floorBin` and indexes the free blocks whose bins it now covers:
   * one walk of the list, at most once per power of two a request size falls to.
   */
  protected lowerFloor(index: FreeIndex, floorBin: number): void {
    const above = index.floorBin;
    index.floorBin = floorBin;
    const list = this.list;
    for (let node = list.head; node !== NIL; node = list.next(node)) {
      if (!list.isFree(node)) continue;
      const bin = index.binFor(list.start(node), list.size(node));
      if (bin !== NOT_INDEXED && bin < above) index.add(node, list.start(node), list.size(node));
    }
  }

  /** A new empty free index at `alignBytes` (a seam for the bug catalog: made once per alignment, never on the hot path). */
  protected newIndex(alignBytes: number): FreeIndex {
    return new FreeIndex(alignBytes, this.list.room);
  }

  /** Grows every index's per-node arrays to the node store's room. */
  protected growIndexes(): void {
    for (const index of this.indexes) index.growNodes(this.list.room);
  }

  // --- inspection ------------------------------------------------------------------------------

  freeBytes(): number {
    return this.capacityBytes - this.usedBytesTotal;
  }

  usedBytes(): number {
    return this.usedBytesTotal;
  }

  wasteBytes(): number {
    return 0;
  }

  isPristine(): boolean {
    const list = this.list;
    const head = list.head;
    return (
      this.liveCount === 0 &&
      list.isFree(head) &&
      list.start(head) === 0 &&
      list.size(head) === this.capacityBytes &&
      list.next(head) === NIL
    );
  }

  live(): LiveAllocation[] {
    return copyLive(this.liveView());
  }

  /** The allocated blocks in list order (bounded by the ids handed out, even if the links are broken). */
  liveView(): readonly LiveAllocation[] {
    const view = this.livePool;
    if (this.liveAt === this.changes) return view;
    const list = this.list;
    let count = 0;
    let steps = 0;
    for (
      let node = list.head;
      node !== NIL && steps <= list.highWater;
      node = list.next(node), steps++
    ) {
      if (!list.isFree(node)) setLiveEntry(view, count++, list.start(node), list.size(node));
    }
    view.length = count;
    this.liveAt = this.changes;
    return view;
  }

  blocks(): BlockInfo[] {
    return copyBlocks(this.blocksView());
  }

  /** Every block in list order (bounded like liveView). */
  blocksView(): readonly BlockInfo[] {
    const view = this.blocksPool;
    if (this.blocksAt === this.changes) return view;
    const list = this.list;
    let count = 0;
    for (let node = list.head; node !== NIL && count <= list.highWater; node = list.next(node)) {
      setBlockEntry(view, count++, list.start(node), list.size(node), list.isFree(node));
    }
    view.length = count;
    this.blocksAt = this.changes;
    return view;
  }

  /** The node store, the free indexes and the live offsets against each other (first-fit-check.ts). */
  checkIndexes(): string | null {
    this.checkScratch ??= new FirstFitCheckScratch();
    return checkFirstFit(
      this.list,
      this.indexes,
      this.offsets,
      this.capacityBytes,
      this.usedBytesTotal,
      this.liveCount,
      this.checkScratch,
    );
  }
}
