/**
 * The first-fit allocator as an engine would ship it (spec/allocators.md "First-fit"; Unreal's
 * BigBlockAllocator shape, seed §5.1), with one-byte granularity like the model.
 *
 * - Free blocks live in a treap keyed by offset (typed-array nodes, priorities from a fixed
 *   xorshift sequence, so runs are deterministic). Each node also holds, for its subtree, the
 *   largest free size and, for each alignment 2^j > 1 requested so far, the largest usable size
 *   at that alignment: max(end - alignUp(start, 2^j)) (a slot per alignment, added on its first
 *   request by one O(n) pass; at most L = ceil(log2 capacity) slots, since an alignment above
 *   2^L behaves as 2^L: only a block at offset 0 can take it). First fit is a left-first descent
 *   that enters only subtrees whose usable size at the request's alignment holds the request,
 *   so it never backtracks: O(log n) expected for every alignment. A subtree maximum by size
 *   alone is not enough: blocks that are large enough but fail the alignment padding would be
 *   visited one by one (O(n) when many holes are just too small once aligned).
 *   The price is one value per slot and node, recomputed on the O(log n) nodes every change
 *   touches: O(k log n) per alloc and free for k distinct alignments in use (k <= L).
 * - Two hash maps (NumberMap: typed arrays, O(1) amortized even when the same offsets are freed
 *   and reallocated over and over, unlike V8's Map) find a free block by its start and by its
 *   end, so free() finds both neighbours in O(1) and coalesces with O(log n) treap updates; live
 *   allocations are a third one, offset -> size.
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
 */
import { alignUp, badFree, copyBlocks, copyLive, setBlockEntry, setLiveEntry, validateRequest, type BlockAllocator, type BlockInfo, type LiveAllocation } from './allocator';
import { checkSubAllocatorConfig, type SubAllocatorConfig } from './config';
import { grownCopy, inOrderNodes, NumberMap, xorshift32 } from './typed-arrays';

const NIL = -1;

export class FirstFitAllocator implements BlockAllocator {
  readonly capacityBytes: number;

  // Treap nodes: one per free block.
  protected key: Float64Array;
  protected size: Float64Array;
  protected maxSize: Float64Array;
  /** Alignment exponents 1..alignLevels get slots; 2^alignLevels >= capacityBytes. */
  protected readonly alignLevels: number;
  /** slotOfExponent[j]: the slot of alignment 2^j, or -1 before its first request. */
  private readonly slotOfExponent: Int8Array;
  /** slotAlignBytes[slot]: the alignment a slot tracks; slotCount slots are in use. */
  private readonly slotAlignBytes: Float64Array;
  private slotCount = 0;
  /** maxFit[node * alignLevels + slot]: the subtree's largest end - alignUp(start, slotAlignBytes[slot]). */
  protected maxFit: Float64Array;
  protected left: Int32Array;
  protected right: Int32Array;
  protected priority: Uint32Array;
  protected spareNodes: Int32Array;
  protected spareCount = 0;
  protected nodeHighWater = 0;
  protected root = NIL;
  private seed = 0x9e3779b9;
  /** The two roots the last split produced. */
  private splitLow = NIL;
  private splitHigh = NIL;

  /** Free blocks by start offset and by end offset (node ids). */
  protected readonly freeByStart = new NumberMap();
  protected readonly freeByEnd = new NumberMap();
  /** Live allocations: offset -> size. */
  protected readonly liveSizes = new NumberMap();
  protected usedBytesTotal = 0;
  protected freeBytesTotal = 0;
  /**
   * Inspection results, dropped whenever alloc or free changes anything: the treap's nodes in
   * order (`freeOrder[0..freeOrderCount)`, -1 count when stale), the live offsets ascending
   * (`liveOrder[0..liveOrderCount)`, -1 when stale) and the blocks.
   */
  private freeOrder = new Int32Array(16);
  private freeOrderCount = -1;
  private walkStack = new Int32Array(16);
  /** The records liveView() hands out, rewritten on every call. */
  private readonly livePool: { offsetBytes: number; sizeBytes: number }[] = [];
  private liveOrder = new Float64Array(16);
  /** liveOrderSizes[i]: the size liveSizes holds for liveOrder[i]. */
  private liveOrderSizes = new Float64Array(16);
  private liveOrderCount = -1;
  /** The blocks view: reused objects, `blocksValid` false when stale. */
  private readonly blocksPool: { offsetBytes: number; sizeBytes: number; free: boolean }[] = [];
  private blocksValid = false;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('first-fit', config);
    this.capacityBytes = config.capacityBytes;
    const nodes = 16;
    this.key = new Float64Array(nodes);
    this.size = new Float64Array(nodes);
    this.maxSize = new Float64Array(nodes);
    this.alignLevels = Math.max(1, Math.ceil(Math.log2(this.capacityBytes)));
    this.maxFit = new Float64Array(nodes * this.alignLevels);
    this.slotOfExponent = new Int8Array(this.alignLevels + 1).fill(-1);
    this.slotAlignBytes = new Float64Array(this.alignLevels);
    this.left = new Int32Array(nodes);
    this.right = new Int32Array(nodes);
    this.priority = new Uint32Array(nodes);
    this.spareNodes = new Int32Array(nodes);
    this.addFree(0, this.capacityBytes);
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const node = this.chooseFree(sizeBytes, alignBytes);
    if (node === NIL) return null;
    const blockStart = this.key[node]!;
    const blockEnd = blockStart + this.size[node]!;
    const offsetBytes = this.alignedStart(blockStart, alignBytes);
    this.carve(node, blockStart, blockEnd, offsetBytes, offsetBytes + sizeBytes);
    this.liveSizes.set(offsetBytes, sizeBytes);
    this.usedBytesTotal += sizeBytes;
    this.dropInspection();
    return offsetBytes;
  }

  free(offsetBytes: number): void {
    const sizeBytes = this.liveSizeAt(offsetBytes);
    this.liveSizes.delete(offsetBytes);
    this.usedBytesTotal -= sizeBytes;
    this.coalesce(offsetBytes, offsetBytes + sizeBytes);
    this.dropInspection();
  }

  private dropInspection(): void {
    this.freeOrderCount = -1;
    this.liveOrderCount = -1;
    this.blocksValid = false;
  }

  // --- steps (protected for the bug catalog) ---------------------------------------------------

  /** Where an allocation aligned to `alignBytes` starts in a block starting at `blockStart`. */
  protected alignedStart(blockStart: number, alignBytes: number): number {
    return alignUp(blockStart, alignBytes);
  }

  /** Whether the block [start, end) holds `sizeBytes` at its aligned start. */
  protected fits(start: number, end: number, sizeBytes: number, alignBytes: number): boolean {
    return this.alignedStart(start, alignBytes) + sizeBytes <= end;
  }

  /** The lowest-offset free block that fits, or NIL. */
  protected chooseFree(sizeBytes: number, alignBytes: number): number {
    return this.search(this.root, sizeBytes, alignBytes, this.slotFor(alignBytes));
  }

  /**
   * Left-first descent into subtrees whose largest usable size at the alignment holds the
   * request. The subtree values are exact, so for the shipped fit rule every subtree entered
   * holds an answer and the descent never backtracks.
   */
  private search(node: number, sizeBytes: number, alignBytes: number, slot: number): number {
    if (node === NIL || this.usableMax(node, slot) < sizeBytes) return NIL;
    const fromLeft = this.search(this.left[node]!, sizeBytes, alignBytes, slot);
    if (fromLeft !== NIL) return fromLeft;
    if (this.size[node]! >= sizeBytes && this.fits(this.key[node]!, this.key[node]! + this.size[node]!, sizeBytes, alignBytes)) return node;
    return this.search(this.right[node]!, sizeBytes, alignBytes, slot);
  }

  /** The subtree's largest usable size in `slot` (-1: alignment 1, the largest size). */
  private usableMax(node: number, slot: number): number {
    return slot < 0 ? this.maxSize[node]! : this.maxFit[node * this.alignLevels + slot]!;
  }

  /** The slot tracking `alignBytes` (a power of two), added on first use; -1 for alignment 1. */
  private slotFor(alignBytes: number): number {
    if (alignBytes <= 1) return -1;
    const exponent = Math.min(Math.round(Math.log2(alignBytes)), this.alignLevels);
    let slot = this.slotOfExponent[exponent]!;
    if (slot < 0) {
      slot = this.slotCount++;
      this.slotOfExponent[exponent] = slot;
      this.slotAlignBytes[slot] = 2 ** exponent;
      this.updateAll(this.root);
    }
    return slot;
  }

  /** Recomputes every node's maxima bottom-up (a new slot). */
  private updateAll(node: number): void {
    if (node === NIL) return;
    this.updateAll(this.left[node]!);
    this.updateAll(this.right[node]!);
    this.update(node);
  }

  /**
   * Takes [allocStart, allocEnd) out of the free block `node` = [blockStart, blockEnd): the
   * padding in front stays free (the node keeps its key), the tail becomes a new free block.
   */
  protected carve(node: number, blockStart: number, blockEnd: number, allocStart: number, allocEnd: number): void {
    if (allocStart > blockStart) this.resizeFree(node, allocStart - blockStart);
    else this.removeFree(node);
    if (allocEnd < blockEnd) this.addFree(allocEnd, blockEnd - allocEnd);
  }

  /** Returns [start, end) to the free blocks, merged with a free block ending at start and one starting at end. */
  protected coalesce(start: number, end: number): void {
    let mergedEnd = end;
    const after = this.freeByStart.get(end);
    if (after !== undefined) {
      mergedEnd = end + this.size[after]!;
      this.removeFree(after);
    }
    const before = this.freeByEnd.get(start);
    if (before !== undefined) this.resizeFree(before, mergedEnd - this.key[before]!);
    else this.addFree(start, mergedEnd - start);
  }

  protected liveSizeAt(offsetBytes: number): number {
    const sizeBytes = this.liveSizes.get(offsetBytes);
    if (sizeBytes === undefined) throw badFree(offsetBytes);
    return sizeBytes;
  }

  // --- free-block bookkeeping: maps + treap ----------------------------------------------------

  protected addFree(start: number, sizeBytes: number): void {
    const node = this.newNode(start, sizeBytes);
    this.root = this.insert(this.root, node);
    this.freeByStart.set(start, node);
    this.freeByEnd.set(start + sizeBytes, node);
    this.freeBytesTotal += sizeBytes;
  }

  protected removeFree(node: number): void {
    const start = this.key[node]!;
    this.freeByStart.delete(start);
    this.freeByEnd.delete(start + this.size[node]!);
    this.freeBytesTotal -= this.size[node]!;
    this.root = this.remove(this.root, start);
    this.spareNodes[this.spareCount++] = node;
  }

  protected resizeFree(node: number, sizeBytes: number): void {
    const start = this.key[node]!;
    this.freeByEnd.delete(start + this.size[node]!);
    this.freeBytesTotal += sizeBytes - this.size[node]!;
    this.freeByEnd.set(start + sizeBytes, node);
    this.setSize(this.root, start, sizeBytes);
  }

  private newNode(start: number, sizeBytes: number): number {
    let node: number;
    if (this.spareCount > 0) {
      node = this.spareNodes[--this.spareCount]!;
    } else {
      if (this.nodeHighWater === this.key.length) this.grow();
      node = this.nodeHighWater++;
    }
    this.seed = xorshift32(this.seed);
    this.key[node] = start;
    this.size[node] = sizeBytes;
    this.left[node] = NIL;
    this.right[node] = NIL;
    this.priority[node] = this.seed;
    this.update(node);
    return node;
  }

  private grow(): void {
    const length = this.key.length * 2;
    this.key = grownCopy(this.key, length);
    this.size = grownCopy(this.size, length);
    this.maxSize = grownCopy(this.maxSize, length);
    this.maxFit = grownCopy(this.maxFit, length * this.alignLevels);
    this.left = grownCopy(this.left, length);
    this.right = grownCopy(this.right, length);
    this.priority = grownCopy(this.priority, length);
    this.spareNodes = grownCopy(this.spareNodes, length);
  }

  /** Recomputes the node's subtree maxima from its own block and its children's maxima. */
  private update(node: number): void {
    const start = this.key[node]!;
    const sizeBytes = this.size[node]!;
    const l = this.left[node]!;
    const r = this.right[node]!;
    let max = sizeBytes;
    if (l !== NIL && this.maxSize[l]! > max) max = this.maxSize[l]!;
    if (r !== NIL && this.maxSize[r]! > max) max = this.maxSize[r]!;
    this.maxSize[node] = max;
    const levels = this.alignLevels;
    const fit = this.maxFit;
    const base = node * levels;
    const leftBase = l * levels;
    const rightBase = r * levels;
    const end = start + sizeBytes;
    const slotCount = this.slotCount;
    for (let j = 0; j < slotCount; j++) {
      const alignBytes = this.slotAlignBytes[j]!;
      let usable = end - Math.ceil(start / alignBytes) * alignBytes;
      if (l !== NIL && fit[leftBase + j]! > usable) usable = fit[leftBase + j]!;
      if (r !== NIL && fit[rightBase + j]! > usable) usable = fit[rightBase + j]!;
      fit[base + j] = usable;
    }
  }

  private insert(root: number, node: number): number {
    if (root === NIL) return node;
    if (this.priority[node]! > this.priority[root]!) {
      this.split(root, this.key[node]!);
      this.left[node] = this.splitLow;
      this.right[node] = this.splitHigh;
      this.update(node);
      return node;
    }
    if (this.key[node]! < this.key[root]!) this.left[root] = this.insert(this.left[root]!, node);
    else this.right[root] = this.insert(this.right[root]!, node);
    this.update(root);
    return root;
  }

  /** Splits into (keys < key, keys >= key): the roots land in splitLow and splitHigh. */
  private split(root: number, key: number): void {
    if (root === NIL) {
      this.splitLow = NIL;
      this.splitHigh = NIL;
      return;
    }
    if (this.key[root]! < key) {
      this.split(this.right[root]!, key);
      this.right[root] = this.splitLow;
      this.update(root);
      this.splitLow = root;
      return;
    }
    this.split(this.left[root]!, key);
    this.left[root] = this.splitHigh;
    this.update(root);
    this.splitHigh = root;
  }

  private join(low: number, high: number): number {
    if (low === NIL) return high;
    if (high === NIL) return low;
    if (this.priority[low]! > this.priority[high]!) {
      this.right[low] = this.join(this.right[low]!, high);
      this.update(low);
      return low;
    }
    this.left[high] = this.join(low, this.left[high]!);
    this.update(high);
    return high;
  }

  private remove(root: number, key: number): number {
    if (root === NIL) return NIL;
    if (this.key[root] === key) return this.join(this.left[root]!, this.right[root]!);
    if (key < this.key[root]!) this.left[root] = this.remove(this.left[root]!, key);
    else this.right[root] = this.remove(this.right[root]!, key);
    this.update(root);
    return root;
  }

  private setSize(root: number, key: number, sizeBytes: number): void {
    if (root === NIL) return;
    if (this.key[root] === key) this.size[root] = sizeBytes;
    else if (key < this.key[root]!) this.setSize(this.left[root]!, key, sizeBytes);
    else this.setSize(this.right[root]!, key, sizeBytes);
    this.update(root);
  }

  // --- inspection ------------------------------------------------------------------------------

  live(): LiveAllocation[] {
    return copyLive(this.liveView());
  }

  liveView(): readonly LiveAllocation[] {
    const view = this.livePool;
    const count = this.liveInOrder();
    const offsets = this.liveOrder;
    const sizes = this.liveOrderSizes;
    for (let i = 0; i < count; i++) setLiveEntry(view, i, offsets[i]!, sizes[i]!);
    view.length = count;
    return view;
  }

  freeBytes(): number {
    return this.freeBytesTotal;
  }

  usedBytes(): number {
    return this.usedBytesTotal;
  }

  wasteBytes(): number {
    return 0;
  }

  isPristine(): boolean {
    return this.liveSizes.size === 0 && this.freeByStart.size === 1 && this.freeByStart.has(0) && this.size[this.freeByStart.get(0)!] === this.capacityBytes;
  }

  /** Free blocks from the treap, in order: fills freeOrder, returns the count. */
  private freeInOrder(): number {
    if (this.freeOrderCount < 0) this.freeOrderCount = this.walkFree();
    return this.freeOrderCount;
  }

  private walkFree(): number {
    const bound = this.nodeHighWater + 1;
    if (this.freeOrder.length < bound + 1) {
      this.freeOrder = new Int32Array(bound + 1);
      this.walkStack = new Int32Array(bound + 1);
    }
    return inOrderNodes(this.root, NIL, this.left, this.right, this.freeOrder, this.walkStack, bound);
  }

  /**
   * The live offsets ascending: fills liveOrder, returns the count. Live allocations tile the
   * gaps between free blocks, so the gaps are walked by looking each next offset up; when that
   * does not find every live allocation exactly (a broken allocator), the offsets are sorted.
   */
  private liveInOrder(): number {
    if (this.liveOrderCount >= 0) return this.liveOrderCount;
    const total = this.liveSizes.size;
    if (this.liveOrder.length < total) {
      this.liveOrder = new Float64Array(Math.max(total, this.liveOrder.length * 2));
      this.liveOrderSizes = new Float64Array(this.liveOrder.length);
    }
    const out = this.liveOrder;
    const sizes = this.liveOrderSizes;
    const freeCount = this.freeInOrder();
    let count = 0;
    let position = 0;
    let walked = true;
    for (let i = 0; i <= freeCount && walked; i++) {
      const gapEnd = i < freeCount ? this.key[this.freeOrder[i]!]! : this.capacityBytes;
      while (position < gapEnd && count < total) {
        const sizeBytes = this.liveSizes.get(position);
        if (sizeBytes === undefined || !(sizeBytes > 0)) break;
        sizes[count] = sizeBytes;
        out[count++] = position;
        position += sizeBytes;
      }
      if (position !== gapEnd) walked = false;
      else if (i < freeCount) {
        const freeSizeBytes = this.size[this.freeOrder[i]!]!;
        if (freeSizeBytes >= 0) position = gapEnd + freeSizeBytes;
        else walked = false;
      }
    }
    if (!walked || count !== total) {
      count = 0;
      for (const [offsetBytes] of this.liveSizes) out[count++] = offsetBytes;
      out.subarray(0, count).sort();
      for (let i = 0; i < count; i++) sizes[i] = this.liveSizes.get(out[i]!)!;
    }
    this.liveOrderCount = count;
    return count;
  }

  blocks(): BlockInfo[] {
    return copyBlocks(this.blocksView());
  }

  blocksView(): readonly BlockInfo[] {
    if (!this.blocksValid) {
      this.fillBlocks();
      this.blocksValid = true;
    }
    return this.blocksPool;
  }

  private fillBlocks(): void {
    const freeCount = this.freeInOrder();
    const liveCount = this.liveInOrder();
    let freeSorted = true;
    for (let f = 1; f < freeCount && freeSorted; f++) freeSorted = this.key[this.freeOrder[f - 1]!]! <= this.key[this.freeOrder[f]!]!;
    let count = 0;
    if (!freeSorted) {
      // A broken treap: the free blocks as walked, then the live ones, stably sorted by offset.
      const blocks: BlockInfo[] = [];
      for (let f = 0; f < freeCount; f++) {
        const node = this.freeOrder[f]!;
        blocks.push({ offsetBytes: this.key[node]!, sizeBytes: this.size[node]!, free: true });
      }
      for (const [offsetBytes, sizeBytes] of this.liveSizes) blocks.push({ offsetBytes, sizeBytes, free: false });
      blocks.sort((a, b) => a.offsetBytes - b.offsetBytes);
      for (const block of blocks) setBlockEntry(this.blocksPool, count++, block.offsetBytes, block.sizeBytes, block.free);
    } else {
      // Both in offset order: merged, a free block before a live allocation at the same offset
      // (the order a stable sort of the free blocks followed by the live ones gives).
      let l = 0;
      for (let f = 0; f < freeCount; f++) {
        const node = this.freeOrder[f]!;
        const start = this.key[node]!;
        while (l < liveCount && this.liveOrder[l]! < start) {
          setBlockEntry(this.blocksPool, count++, this.liveOrder[l]!, this.liveOrderSizes[l]!, false);
          l++;
        }
        setBlockEntry(this.blocksPool, count++, start, this.size[node]!, true);
      }
      while (l < liveCount) {
        setBlockEntry(this.blocksPool, count++, this.liveOrder[l]!, this.liveOrderSizes[l]!, false);
        l++;
      }
    }
    this.blocksPool.length = count;
  }

  checkIndexes(): string | null {
    const count = this.freeInOrder();
    const inOrder = this.freeOrder;
    if (count !== this.freeByStart.size || count !== this.freeByEnd.size) {
      return `the treap holds ${count} free blocks, the start/end maps ${this.freeByStart.size}/${this.freeByEnd.size}`;
    }
    for (let i = 0; i < count; i++) {
      const node = inOrder[i]!;
      const start = this.key[node]!;
      const sizeBytes = this.size[node]!;
      if (i > 0 && this.key[inOrder[i - 1]!]! >= start) return `the treap is out of offset order at ${start}`;
      if (this.freeByStart.get(start) !== node || this.freeByEnd.get(start + sizeBytes) !== node) return `free block [${start}+${sizeBytes}] is not found by its start and end`;
      let max = sizeBytes;
      const l = this.left[node]!;
      const r = this.right[node]!;
      if (l !== NIL) max = Math.max(max, this.maxSize[l]!);
      if (r !== NIL) max = Math.max(max, this.maxSize[r]!);
      if (this.maxSize[node] !== max) return `free block at ${start}: subtree maximum ${this.maxSize[node]} should be ${max}`;
      // alignUp(start, alignBytes) with integer bit operations when both fit 31 bits (the same value).
      const smallStart = start >= 0 && (start | 0) === start;
      const fit = this.maxFit;
      const slotAlignBytes = this.slotAlignBytes;
      const levels = this.alignLevels;
      const slotCount = this.slotCount;
      const base = node * levels;
      const leftBase = l * levels;
      const rightBase = r * levels;
      for (let j = 0; j < slotCount; j++) {
        const alignBytes = slotAlignBytes[j]!;
        const alignedStart =
          smallStart && alignBytes <= 0x40000000 ? start + ((alignBytes - (start & (alignBytes - 1))) & (alignBytes - 1)) : Math.ceil(start / alignBytes) * alignBytes;
        let usable = start + sizeBytes - alignedStart;
        if (l !== NIL) usable = Math.max(usable, fit[leftBase + j]!);
        if (r !== NIL) usable = Math.max(usable, fit[rightBase + j]!);
        const stored = fit[base + j]!;
        if (stored !== usable) return `free block at ${start}: subtree usable size at alignment ${alignBytes} is ${stored}, should be ${usable}`;
      }
    }
    return null;
  }
}
