/**
 * The first-fit allocator as an engine would ship it (docs/spec/allocators.md "First-fit";
 * Unreal's BigBlockAllocator shape), with one-byte granularity like the model
 * (models/alloc-first-fit.ts): the lowest-offset free block whose aligned start plus the size
 * fits wins, the padding in front stays free, a free merges with both free neighbours.
 *
 * Two units do the work:
 * - the node store (first-fit-blocks.ts): every block, free or allocated, in one offset-ordered
 *   doubly linked list, so a free() reaches both neighbours through links;
 * - the chunk directory (first-fit-chunks.ts): the first block of each fixed-size chunk of the
 *   offsets (what turns an offset into its node) and, per requested alignment, a max tree of the
 *   chunks' largest usable sizes (what finds the first fit in one descent).
 * An alloc is a descent, a short walk of one chunk and one or two node inserts; a free is a short
 * walk of one chunk, at most two merges through links, and O(log chunks) tree updates. No hash
 * map is involved.
 *
 * alloc and free are each written out in one piece (the hot path). The bug catalog
 * (mutants/alloc-first-fit.ts) re-creates its pitfalls on SteppedFirstFit, a twin whose alloc and
 * free are made of steps (`carve`, `liveNodeAt`, `absorbNext`, `markFree`) a mutant can override
 * or call, held to this class answer for answer by properties/first-fit-stepped.test.ts; both
 * reach the two units through `list` and `chunks`. Nothing in src/ depends on that catalog.
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
import {
  BlockList,
  F64_PER_NODE,
  FREE,
  I32_PER_NODE,
  NEXT,
  NIL,
  PREV,
  SIZE,
  START,
} from './first-fit-blocks.js';
import { ChunkDirectory, usableAt } from './first-fit-chunks.js';
import { checkFirstFit, FirstFitCheckScratch } from './first-fit-check.js';

export class FirstFitAllocator implements BlockAllocator {
  readonly capacityBytes: number;
  /** Every block in offset order (the node store). */
  protected readonly list: BlockList;
  /** The search structure over the list. */
  protected readonly chunks: ChunkDirectory;
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
    this.chunks = new ChunkDirectory(this.capacityBytes, this.list);
    const whole = this.list.create(0, this.capacityBytes, true);
    this.list.head = whole;
    this.chunks.noteStart(whole, 0);
  }

  /**
   * The lowest-offset fit (the directory's search), carved in place: the padding in front stays
   * free as the found block (or, with no padding, the block becomes the allocation), the tail
   * behind becomes a new free block. The padding and the tail have no more usable size than the
   * block at any alignment, so the chunk's values are recomputed only when the block held one of
   * them; a tail starting in a later chunk raises that chunk's. Written out in one piece (the hot
   * path); the bug catalog's step-by-step twin is SteppedFirstFit in mutants/alloc-first-fit.ts.
   */
  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const chunks = this.chunks;
    const node = chunks.search(sizeBytes, alignBytes, chunks.slotFor(alignBytes));
    if (node === NIL) return null;
    const list = this.list;
    const f64 = list.f64;
    const i32 = list.i32;
    const start = f64[node * F64_PER_NODE + START]!;
    const blockBytes = f64[node * F64_PER_NODE + SIZE]!;
    const end = start + blockBytes;
    const offsetBytes = end - usableAt(start, blockBytes, alignBytes);
    const allocEnd = offsetBytes + sizeBytes;
    const chunk = chunks.chunkOf(start);
    // Only a block holding its chunk's value at some slot can lower it.
    const lowers = chunks.holdsMaximum(start, blockBytes);
    let live = node;
    if (offsetBytes === start) {
      i32[node * I32_PER_NODE + FREE] = 0;
      f64[node * F64_PER_NODE + SIZE] = sizeBytes;
    } else {
      f64[node * F64_PER_NODE + SIZE] = offsetBytes - start;
      live = list.create(offsetBytes, sizeBytes, false);
      list.insertAfter(node, live);
      // A block starting inside the carved one is the first of its chunk unless it shares the
      // carved block's chunk (the directory's noteStart without its comparison).
      const liveChunk = chunks.chunkOf(offsetBytes);
      if (liveChunk !== chunk) chunks.noteFirst(live, liveChunk);
    }
    if (allocEnd < end) {
      const tail = list.create(allocEnd, end - allocEnd, true);
      list.insertAfter(live, tail);
      const tailChunk = chunks.chunkOf(allocEnd);
      if (tailChunk !== chunk) {
        if (tailChunk !== chunks.chunkOf(offsetBytes)) chunks.noteFirst(tail, tailChunk);
        chunks.raise(tail);
      }
    }
    if (lowers) chunks.rescan(chunk);
    this.usedBytesTotal += sizeBytes;
    this.liveCount++;
    this.changes++;
    return offsetBytes;
  }

  /**
   * Frees the allocation at `offsetBytes` (BAD_FREE unless one starts there) and merges it with
   * its free neighbours through the links: the lower block survives. A neighbour that started in
   * another chunk leaves that chunk (recomputed); the survivor's chunk is raised. One piece, like
   * alloc.
   */
  free(offsetBytes: number): void {
    const node = this.nodeAt(offsetBytes);
    const list = this.list;
    const f64 = list.f64;
    const i32 = list.i32;
    if (node === NIL || i32[node * I32_PER_NODE + FREE] === 1) throw badFree(offsetBytes);
    const chunks = this.chunks;
    const chunk = chunks.chunkOf(offsetBytes);
    this.usedBytesTotal -= f64[node * F64_PER_NODE + SIZE]!;
    this.liveCount--;
    this.changes++;
    i32[node * I32_PER_NODE + FREE] = 1;
    let survivor = node;
    const following = i32[node * I32_PER_NODE + NEXT]!;
    if (following !== NIL && i32[following * I32_PER_NODE + FREE] === 1) {
      const followingChunk = chunks.chunkOf(f64[following * F64_PER_NODE + START]!);
      chunks.forgetStart(following);
      f64[node * F64_PER_NODE + SIZE] =
        f64[node * F64_PER_NODE + SIZE]! + f64[following * F64_PER_NODE + SIZE]!;
      list.remove(following);
      if (followingChunk !== chunk) chunks.rescan(followingChunk);
    }
    const before = i32[node * I32_PER_NODE + PREV]!;
    if (before !== NIL && i32[before * I32_PER_NODE + FREE] === 1) {
      chunks.forgetStart(node);
      f64[before * F64_PER_NODE + SIZE] =
        f64[before * F64_PER_NODE + SIZE]! + f64[node * F64_PER_NODE + SIZE]!;
      list.remove(node);
      if (chunks.chunkOf(f64[before * F64_PER_NODE + START]!) !== chunk) chunks.rescan(chunk);
      survivor = before;
    }
    chunks.raise(survivor);
  }

  /** The block (free or allocated) starting at `offsetBytes`, or NIL: a walk from its chunk's first block. */
  protected nodeAt(offsetBytes: number): number {
    if (!(offsetBytes >= 0 && offsetBytes < this.capacityBytes)) return NIL;
    const list = this.list;
    const chunks = this.chunks;
    const chunk = chunks.chunkOf(offsetBytes);
    const f64 = list.f64;
    const i32 = list.i32;
    let node = chunk < chunks.leaves ? chunks.first[chunk]! : NIL;
    while (node !== NIL && f64[node * F64_PER_NODE + START]! < offsetBytes)
      node = i32[node * I32_PER_NODE + NEXT]!;
    return node !== NIL && f64[node * F64_PER_NODE + START] === offsetBytes ? node : NIL;
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

  /** The node store and the chunk directory against each other (first-fit-check.ts). */
  checkIndexes(): string | null {
    this.checkScratch ??= new FirstFitCheckScratch();
    return checkFirstFit(
      this.list,
      this.chunks,
      this.capacityBytes,
      this.usedBytesTotal,
      this.liveCount,
      this.checkScratch,
    );
  }
}
