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
 * The bug catalog (mutants/alloc.ts) re-creates its pitfalls by overriding whole steps (alloc,
 * free, an inspection method) and reaching the two units through `list` and `chunks`; the helpers
 * the steps are made of (`carve`, `liveNodeAt`, `absorbNext`, `markFree`) are not overridden.
 * Nothing in src/ depends on that catalog.
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
import { BlockList, F64_PER_NODE, I32_PER_NODE, NEXT, NIL, START } from './first-fit-blocks.js';
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
    this.chunks.noteStart(whole);
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const chunks = this.chunks;
    const node = chunks.search(sizeBytes, alignBytes, chunks.slotFor(alignBytes));
    if (node === NIL) return null;
    return this.carve(node, sizeBytes, alignBytes);
  }

  free(offsetBytes: number): void {
    const node = this.liveNodeAt(offsetBytes);
    this.markFree(node);
    const list = this.list;
    let survivor = node;
    const following = list.next(node);
    if (following !== NIL && list.isFree(following)) this.absorbNext(node);
    const before = list.prev(node);
    if (before !== NIL && list.isFree(before)) {
      this.absorbNext(before);
      survivor = before;
    }
    this.chunks.raise(survivor);
  }

  // --- the steps' helpers (called by alloc and free; the catalog's mutants call them too) ------

  /**
   * Allocates `sizeBytes` at `alignBytes` from the free block `node` (which must fit) and returns
   * the offset: the padding in front stays free as `node` (or, with no padding, `node` becomes
   * the allocation), the tail behind becomes a new free block. The padding and the tail have no
   * more usable size than the block at any alignment, so the chunk's values are recomputed only
   * when the block held one of them; a tail starting in a later chunk raises that chunk's.
   */
  protected carve(node: number, sizeBytes: number, alignBytes: number): number {
    const list = this.list;
    const chunks = this.chunks;
    const start = list.start(node);
    const blockBytes = list.size(node);
    const end = start + blockBytes;
    const offsetBytes = end - usableAt(start, blockBytes, alignBytes);
    const allocEnd = offsetBytes + sizeBytes;
    const lowers = chunks.holdsMaximum(node);
    let live = node;
    if (offsetBytes === start) {
      list.setFree(node, false);
      list.setSize(node, sizeBytes);
    } else {
      list.setSize(node, offsetBytes - start);
      live = list.create(offsetBytes, sizeBytes, false);
      list.insertAfter(node, live);
      chunks.noteStart(live);
    }
    const chunk = chunks.chunkOf(start);
    if (allocEnd < end) {
      const tail = list.create(allocEnd, end - allocEnd, true);
      list.insertAfter(live, tail);
      chunks.noteStart(tail);
      if (chunks.chunkOf(allocEnd) !== chunk) chunks.raise(tail);
    }
    if (lowers) chunks.rescan(chunk);
    this.usedBytesTotal += sizeBytes;
    this.liveCount++;
    this.changes++;
    return offsetBytes;
  }

  /** The allocated block starting at `offsetBytes`, or BAD_FREE. */
  protected liveNodeAt(offsetBytes: number): number {
    const node = this.nodeAt(offsetBytes);
    if (node === NIL || this.list.isFree(node)) throw badFree(offsetBytes);
    return node;
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

  /** Turns the allocated block `node` into a free one (not yet merged, not yet in the tree). */
  protected markFree(node: number): void {
    this.usedBytesTotal -= this.list.size(node);
    this.liveCount--;
    this.list.setFree(node, true);
    this.changes++;
  }

  /**
   * `node` takes over the free block after it. When that block started in another chunk, the
   * chunk is recomputed; in the same chunk its value stands (the merged block, ending at the same
   * offset, has at least its usable size at any alignment), and the caller raises `node`.
   */
  protected absorbNext(node: number): void {
    const list = this.list;
    const chunks = this.chunks;
    const following = list.next(node);
    const chunk = chunks.chunkOf(list.start(following));
    chunks.forgetStart(following);
    list.setSize(node, list.size(node) + list.size(following));
    list.remove(following);
    if (chunk !== chunks.chunkOf(list.start(node))) chunks.rescan(chunk);
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
