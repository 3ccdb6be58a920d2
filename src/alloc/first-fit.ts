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
import { alignUp, badFree, validateRequest, type BlockAllocator, type BlockInfo, type LiveAllocation } from './allocator';
import { checkSubAllocatorConfig, type SubAllocatorConfig } from './config';
import { grownCopy, NumberMap, xorshift32 } from './typed-arrays';

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

  /** Free blocks by start offset and by end offset (node ids). */
  protected readonly freeByStart = new NumberMap();
  protected readonly freeByEnd = new NumberMap();
  /** Live allocations: offset -> size. */
  protected readonly liveSizes = new NumberMap();
  protected usedBytesTotal = 0;
  protected freeBytesTotal = 0;
  /** Inspection results, dropped whenever alloc or free changes anything. */
  private inspectCache: { free?: { node: number; start: number; sizeBytes: number }[]; blocks?: BlockInfo[]; live?: LiveAllocation[] } = {};

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
    this.inspectCache = {};
    return offsetBytes;
  }

  free(offsetBytes: number): void {
    const sizeBytes = this.liveSizeAt(offsetBytes);
    this.liveSizes.delete(offsetBytes);
    this.usedBytesTotal -= sizeBytes;
    this.coalesce(offsetBytes, offsetBytes + sizeBytes);
    this.inspectCache = {};
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
      const [low, high] = this.split(root, this.key[node]!);
      this.left[node] = low;
      this.right[node] = high;
      this.update(node);
      return node;
    }
    if (this.key[node]! < this.key[root]!) this.left[root] = this.insert(this.left[root]!, node);
    else this.right[root] = this.insert(this.right[root]!, node);
    this.update(root);
    return root;
  }

  /** Splits into (keys < key, keys >= key). */
  private split(root: number, key: number): [number, number] {
    if (root === NIL) return [NIL, NIL];
    if (this.key[root]! < key) {
      const [low, high] = this.split(this.right[root]!, key);
      this.right[root] = low;
      this.update(root);
      return [root, high];
    }
    const [low, high] = this.split(this.left[root]!, key);
    this.left[root] = high;
    this.update(root);
    return [low, root];
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
    this.inspectCache.live ??= [...this.liveSizes].sort((a, b) => a[0] - b[0]).map(([offsetBytes, sizeBytes]) => ({ offsetBytes, sizeBytes }));
    return [...this.inspectCache.live];
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

  /** Free blocks from the treap, in order. */
  private freeInOrder(): { node: number; start: number; sizeBytes: number }[] {
    this.inspectCache.free ??= this.walkFree();
    return this.inspectCache.free;
  }

  private walkFree(): { node: number; start: number; sizeBytes: number }[] {
    const out: { node: number; start: number; sizeBytes: number }[] = [];
    const stack: number[] = [];
    let node = this.root;
    const bound = this.nodeHighWater + 1;
    while ((node !== NIL || stack.length > 0) && out.length <= bound) {
      while (node !== NIL && stack.length <= bound) {
        stack.push(node);
        node = this.left[node]!;
      }
      node = stack.pop()!;
      out.push({ node, start: this.key[node]!, sizeBytes: this.size[node]! });
      node = this.right[node]!;
    }
    return out;
  }

  blocks(): BlockInfo[] {
    if (this.inspectCache.blocks === undefined) {
      const blocks: BlockInfo[] = [];
      for (const free of this.freeInOrder()) blocks.push({ offsetBytes: free.start, sizeBytes: free.sizeBytes, free: true });
      for (const [offsetBytes, sizeBytes] of this.liveSizes) blocks.push({ offsetBytes, sizeBytes, free: false });
      this.inspectCache.blocks = blocks.sort((a, b) => a.offsetBytes - b.offsetBytes);
    }
    return [...this.inspectCache.blocks];
  }

  checkIndexes(): string | null {
    const inOrder = this.freeInOrder();
    if (inOrder.length !== this.freeByStart.size || inOrder.length !== this.freeByEnd.size) {
      return `the treap holds ${inOrder.length} free blocks, the start/end maps ${this.freeByStart.size}/${this.freeByEnd.size}`;
    }
    for (let i = 0; i < inOrder.length; i++) {
      const { node, start, sizeBytes } = inOrder[i]!;
      if (i > 0 && inOrder[i - 1]!.start >= start) return `the treap is out of offset order at ${start}`;
      if (this.freeByStart.get(start) !== node || this.freeByEnd.get(start + sizeBytes) !== node) return `free block [${start}+${sizeBytes}] is not found by its start and end`;
      let max = sizeBytes;
      const l = this.left[node]!;
      const r = this.right[node]!;
      if (l !== NIL) max = Math.max(max, this.maxSize[l]!);
      if (r !== NIL) max = Math.max(max, this.maxSize[r]!);
      if (this.maxSize[node] !== max) return `free block at ${start}: subtree maximum ${this.maxSize[node]} should be ${max}`;
      for (let j = 0; j < this.slotCount; j++) {
        const alignBytes = this.slotAlignBytes[j]!;
        let usable = start + sizeBytes - Math.ceil(start / alignBytes) * alignBytes;
        if (l !== NIL) usable = Math.max(usable, this.maxFit[l * this.alignLevels + j]!);
        if (r !== NIL) usable = Math.max(usable, this.maxFit[r * this.alignLevels + j]!);
        const stored = this.maxFit[node * this.alignLevels + j]!;
        if (stored !== usable) return `free block at ${start}: subtree usable size at alignment ${alignBytes} is ${stored}, should be ${usable}`;
      }
    }
    return null;
  }
}
