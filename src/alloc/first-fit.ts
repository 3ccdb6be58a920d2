/**
 * The first-fit allocator as an engine would ship it (spec/allocators.md "First-fit"; Unreal's
 * BigBlockAllocator shape, seed §5.1), with one-byte granularity like the model.
 *
 * - Free blocks are nodes (start and size in typed arrays, ids recycled) kept in offset order in
 *   a flat two-level index: chunks of at most CHUNK node ids, sorted by start, and a directory
 *   (`order`) listing the chunks in offset order. Each chunk keeps, for each alignment 2^j
 *   requested so far (a slot per alignment, added on its first request by one O(n) pass; at most
 *   L + 1 = ceil(log2 capacity) + 1 slots, since an alignment above 2^L behaves as 2^L: only a
 *   block at offset 0 can take it), the largest usable size max(end - alignUp(start, 2^j)) of its
 *   blocks; each GROUP consecutive chunks of the directory keep the maximum of theirs. First fit
 *   scans the groups in order, enters the first whose value at the request's alignment holds the
 *   request, then its first such chunk, then tests that chunk's blocks in order: O(n / (CHUNK *
 *   GROUP) + GROUP + CHUNK) for every alignment, on a few contiguous typed arrays. A maximum by
 *   size alone is not enough: blocks that are large enough but fail the alignment padding would
 *   be visited one by one (O(n) when many holes are just too small once aligned).
 * - A block that grows (or joins a chunk) raises its chunk's and group's values in O(slots); one
 *   that shrinks or leaves marks its chunk dirty only when it held the chunk's maximum for some
 *   slot; a dirty chunk's values (and its group's) are recomputed once, before the next search.
 *   A full chunk splits in two; a chunk under a quarter full merges with a neighbour; the
 *   directory shifts (O(n / CHUNK), rare) when a chunk comes or goes.
 * - Two hash maps (NumberMap: typed arrays, O(1) amortized even when the same offsets are freed
 *   and reallocated over and over, unlike V8's Map) find a free block by its start and by its
 *   end, so free() finds both neighbours in O(1); live allocations are a third one, offset ->
 *   size. A block carved from its low end keeps its node (its start moves, its order does not).
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
 */
import { alignUp, badFree, copyBlocks, copyLive, setBlockEntry, setLiveEntry, validateRequest, type BlockAllocator, type BlockInfo, type LiveAllocation } from './allocator.js';
import { checkSubAllocatorConfig, type SubAllocatorConfig } from './config.js';
import { grownCopy, NumberMap } from './typed-arrays.js';

const NIL = -1;
/** Node ids per chunk (a chunk splits when an insert finds it full). */
const CHUNK = 32;
/** A chunk with fewer ids than this after a removal merges with a neighbour that has room. */
const CHUNK_LOW = CHUNK / 4;
/** Chunks per group of the directory (log2: GROUP_SHIFT). */
const GROUP_SHIFT = 5;
const GROUP = 1 << GROUP_SHIFT;

/** end - alignUp(start, alignBytes) for the block [start, start + sizeBytes) (may be negative). */
function usableAt(start: number, sizeBytes: number, alignBytes: number): number {
  if (alignBytes <= 0x40000000) {
    // start mod alignBytes from the low 32 bits (alignBytes divides 2^32): exact for any safe integer.
    const mask = alignBytes - 1;
    return sizeBytes - ((alignBytes - ((start >>> 0) & mask)) & mask);
  }
  return start + sizeBytes - Math.ceil(start / alignBytes) * alignBytes;
}

export class FirstFitAllocator implements BlockAllocator {
  readonly capacityBytes: number;

  // Free-block nodes.
  protected key: Float64Array;
  protected size: Float64Array;
  /** The chunk holding each free node. */
  protected chunkOf: Int32Array;
  protected spareNodes: Int32Array;
  protected spareCount = 0;
  protected nodeHighWater = 0;

  /** Alignment exponents 0..alignLevels get slots; 2^alignLevels >= capacityBytes. */
  protected readonly alignLevels: number;
  /** Slots per chunk and group record (alignLevels + 1). */
  private readonly slotStride: number;
  /** slotOfExponent[j]: the slot of alignment 2^j, or -1 before its first request. */
  private readonly slotOfExponent: Int8Array;
  /** slotAlignBytes[slot]: the alignment a slot tracks; slotCount slots are in use. */
  private readonly slotAlignBytes: Float64Array;
  private slotCount = 0;

  // Chunks: chunkNodes[c * CHUNK + i] for i < chunkCount[c], ascending by start, with copies
  // of their blocks' start and size beside them (entryStart, entrySize: scans read one run).
  protected chunkNodes: Int32Array;
  protected entryStart: Float64Array;
  protected entrySize: Float64Array;
  protected chunkCount: Int32Array;
  /** The chunk's index in `order`. */
  protected chunkPos: Int32Array;
  /** 1 when the chunk's values (and its group's) wait for a recomputation. */
  private chunkDirty: Uint8Array;
  private spareChunks: Int32Array;
  private spareChunkCount = 0;
  private chunkHighWater = 0;
  /** The chunks in offset order: order[0..orderCount); positions hold at most `positionCap`. */
  protected order: Int32Array;
  protected orderCount = 0;
  private positionCap: number;
  /**
   * positionFit[slot * positionCap + p]: the largest usable size at the slot's alignment in the
   * chunk at directory position p (slot-major, so a search reads one contiguous run).
   */
  protected positionFit: Float64Array;
  /** groupFit[slot * groupCap + g]: the maximum of positionFit over positions g * GROUP .. + GROUP. */
  protected groupFit: Float64Array;
  private groupCap: number;
  /** Chunks waiting for recomputation (a chunk may repeat; its dirty flag tells). */
  private dirtyList = new Int32Array(16);
  private dirtyCount = 0;
  /** Every group from this one on waits for recomputation (the directory shifted). */
  private groupsStaleFrom = 0;
  /** A chunk-array index where a node was last seen (indexInChunk tries it first; -1: none). */
  private entryHint = -1;

  /** Free blocks by start offset and by end offset (node ids). */
  protected readonly freeByStart = new NumberMap();
  protected readonly freeByEnd = new NumberMap();
  /** Live allocations: offset -> size. */
  protected readonly liveSizes = new NumberMap();
  protected usedBytesTotal = 0;
  protected freeBytesTotal = 0;
  /**
   * Inspection results, dropped whenever alloc or free changes anything: the free nodes in
   * order (`freeOrder[0..freeOrderCount)`, -1 count when stale), the live offsets ascending
   * (`liveOrder[0..liveOrderCount)`, -1 when stale) and the blocks.
   */
  private freeOrder = new Int32Array(16);
  private freeOrderCount = -1;
  /** The records liveView() hands out, rewritten on every call. */
  private readonly livePool: { offsetBytes: number; sizeBytes: number }[] = [];
  private liveOrder = new Float64Array(16);
  /** liveOrderSizes[i]: the size liveSizes holds for liveOrder[i]. */
  private liveOrderSizes = new Float64Array(16);
  private liveOrderCount = -1;
  /** Where liveInOrder's gap walk stopped short (-1: it reached the capacity), and the live records it met. */
  private walkStoppedAt = -1;
  private walkedLive = 0;
  /** The blocks view: reused objects, `blocksValid` false when stale. */
  private readonly blocksPool: { offsetBytes: number; sizeBytes: number; free: boolean }[] = [];
  private blocksValid = false;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('first-fit', config);
    this.capacityBytes = config.capacityBytes;
    const nodes = 16;
    this.key = new Float64Array(nodes);
    this.size = new Float64Array(nodes);
    this.chunkOf = new Int32Array(nodes);
    this.spareNodes = new Int32Array(nodes);
    this.alignLevels = Math.max(1, Math.ceil(Math.log2(this.capacityBytes)));
    this.slotStride = this.alignLevels + 1;
    this.slotOfExponent = new Int8Array(this.alignLevels + 1).fill(-1);
    this.slotAlignBytes = new Float64Array(this.slotStride);
    const chunks = 4;
    this.chunkNodes = new Int32Array(chunks * CHUNK);
    this.entryStart = new Float64Array(chunks * CHUNK);
    this.entrySize = new Float64Array(chunks * CHUNK);
    this.chunkCount = new Int32Array(chunks);
    this.chunkPos = new Int32Array(chunks);
    this.chunkDirty = new Uint8Array(chunks);
    this.spareChunks = new Int32Array(chunks);
    this.order = new Int32Array(chunks);
    this.positionCap = chunks;
    this.positionFit = new Float64Array(chunks * this.slotStride);
    this.groupCap = (chunks >> GROUP_SHIFT) + 1;
    this.groupFit = new Float64Array(this.groupCap * this.slotStride);
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
    return this.search(sizeBytes, alignBytes, this.slotFor(alignBytes));
  }

  /**
   * Groups in order, then the first chunks of a group whose largest usable size at the
   * alignment holds the request, then that chunk's blocks in order. The values are exact, so
   * for the shipped fit rule the first chunk entered holds the answer; a chunk that does not
   * (a stricter fit rule) is passed and the scan goes on in offset order.
   */
  private search(sizeBytes: number, alignBytes: number, slot: number): number {
    this.flushDirty();
    const groupFit = this.groupFit;
    const positionFit = this.positionFit;
    const groupBase = slot * this.groupCap;
    const positionBase = slot * this.positionCap;
    const orderCount = this.orderCount;
    const groupCount = (orderCount + GROUP - 1) >> GROUP_SHIFT;
    for (let g = 0; g < groupCount; g++) {
      if (groupFit[groupBase + g]! < sizeBytes) continue;
      const last = Math.min(orderCount, (g + 1) << GROUP_SHIFT);
      for (let p = g << GROUP_SHIFT; p < last; p++) {
        if (positionFit[positionBase + p]! < sizeBytes) continue;
        const chunk = this.order[p]!;
        const base = chunk * CHUNK;
        const end = base + this.chunkCount[chunk]!;
        for (let i = base; i < end; i++) {
          const blockSize = this.entrySize[i]!;
          if (blockSize < sizeBytes) continue;
          const start = this.entryStart[i]!;
          if (this.fits(start, start + blockSize, sizeBytes, alignBytes)) {
            this.entryHint = i;
            return this.chunkNodes[i]!;
          }
        }
      }
    }
    return NIL;
  }

  /** The slot tracking `alignBytes` (a power of two), added on first use. */
  private slotFor(alignBytes: number): number {
    const exponent = alignBytes <= 1 ? 0 : Math.min(31 - Math.clz32(alignBytes), this.alignLevels);
    // 31 - clz32 is log2 for 32-bit powers of two; larger ones take the general path.
    const slot = this.slotOfExponent[alignBytes > 0x40000000 ? Math.min(Math.round(Math.log2(alignBytes)), this.alignLevels) : exponent]!;
    return slot >= 0 ? slot : this.addSlot(alignBytes > 0x40000000 ? Math.min(Math.round(Math.log2(alignBytes)), this.alignLevels) : exponent);
  }

  /** A new slot for alignment 2^exponent: every chunk's and group's value computed (O(n)). */
  private addSlot(exponent: number): number {
    const slot = this.slotCount++;
    this.slotOfExponent[exponent] = slot;
    this.slotAlignBytes[slot] = 2 ** exponent;
    for (let p = 0; p < this.orderCount; p++) this.markDirty(this.order[p]!);
    this.groupsStaleFrom = 0;
    return slot;
  }

  /**
   * Takes [allocStart, allocEnd) out of the free block `node` = [blockStart, blockEnd): the
   * padding in front stays free (the node keeps its start), the tail becomes a new free block
   * (or, with no padding, the node itself with its start moved up: same place in the order).
   */
  protected carve(node: number, blockStart: number, blockEnd: number, allocStart: number, allocEnd: number): void {
    if (allocStart > blockStart) {
      this.resizeFree(node, allocStart - blockStart);
      if (allocEnd < blockEnd) this.insertFreeAfter(node, allocEnd, blockEnd - allocEnd);
    } else if (allocEnd < blockEnd && this.key[node]! + this.size[node]! === blockEnd) {
      this.moveStart(node, allocEnd);
    } else {
      this.removeFree(node);
      if (allocEnd < blockEnd) this.addFree(allocEnd, blockEnd - allocEnd);
    }
  }

  /** Returns [start, end) to the free blocks, merged with a free block ending at start and one starting at end. */
  protected coalesce(start: number, end: number): void {
    let mergedEnd = end;
    const after = this.freeByStart.get(end);
    const before = this.freeByEnd.get(start);
    if (after !== undefined) {
      mergedEnd = end + this.size[after]!;
      if (before === undefined) {
        // The block after grows down over the freed range: same node, same place in the order.
        this.moveStart(after, start);
        return;
      }
      this.removeFree(after);
    }
    if (before !== undefined) this.resizeFree(before, mergedEnd - this.key[before]!);
    else this.addFree(start, mergedEnd - start);
  }

  protected liveSizeAt(offsetBytes: number): number {
    const sizeBytes = this.liveSizes.get(offsetBytes);
    if (sizeBytes === undefined) throw badFree(offsetBytes);
    return sizeBytes;
  }

  // --- free-block bookkeeping: maps + chunked index --------------------------------------------

  protected addFree(start: number, sizeBytes: number): void {
    const node = this.newNode(start, sizeBytes);
    this.indexInsert(node);
    this.freeByStart.set(start, node);
    this.freeByEnd.set(start + sizeBytes, node);
    this.freeBytesTotal += sizeBytes;
  }

  protected removeFree(node: number): void {
    const start = this.key[node]!;
    this.freeByStart.delete(start);
    this.freeByEnd.delete(start + this.size[node]!);
    this.freeBytesTotal -= this.size[node]!;
    this.indexRemove(node);
    this.spareNodes[this.spareCount++] = node;
  }

  protected resizeFree(node: number, sizeBytes: number): void {
    const start = this.key[node]!;
    this.freeByEnd.delete(start + this.size[node]!);
    this.freeBytesTotal += sizeBytes - this.size[node]!;
    this.freeByEnd.set(start + sizeBytes, node);
    this.setBlock(node, start, sizeBytes);
  }

  /**
   * Moves the free block's start to `start`, keeping its end; the caller makes sure no other
   * free block starts between the old and the new start (its place in the order stays).
   */
  private moveStart(node: number, start: number): void {
    const oldStart = this.key[node]!;
    const end = oldStart + this.size[node]!;
    this.freeByStart.delete(oldStart);
    this.freeByStart.set(start, node);
    this.freeBytesTotal += oldStart - start;
    this.setBlock(node, start, end - start);
  }

  /** Adds the free block [start, start + sizeBytes) right after free node `prior` in the order. */
  protected insertFreeAfter(prior: number, start: number, sizeBytes: number): void {
    const node = this.newNode(start, sizeBytes);
    const chunk = this.chunkOf[prior]!;
    this.insertAt(chunk, this.indexInChunk(chunk, prior) + 1, node);
    this.freeByStart.set(start, node);
    this.freeByEnd.set(start + sizeBytes, node);
    this.freeBytesTotal += sizeBytes;
  }

  protected newNode(start: number, sizeBytes: number): number {
    let node: number;
    if (this.spareCount > 0) {
      node = this.spareNodes[--this.spareCount]!;
    } else {
      if (this.nodeHighWater === this.key.length) this.growNodes();
      node = this.nodeHighWater++;
    }
    this.key[node] = start;
    this.size[node] = sizeBytes;
    this.chunkOf[node] = NIL;
    return node;
  }

  private growNodes(): void {
    const length = this.key.length * 2;
    this.key = grownCopy(this.key, length);
    this.size = grownCopy(this.size, length);
    this.chunkOf = grownCopy(this.chunkOf, length);
    this.spareNodes = grownCopy(this.spareNodes, length);
  }

  // --- the chunked index -----------------------------------------------------------------------

  /**
   * Gives the indexed free `node` the block [start, start + sizeBytes), which keeps its place in
   * the order; updates its chunk's copy and the maxima (raised at once, or the chunk marked
   * dirty when a value it held may fall).
   */
  protected setBlock(node: number, start: number, sizeBytes: number): void {
    const chunk = this.chunkOf[node]!;
    const entry = chunk * CHUNK + this.indexInChunk(chunk, node);
    this.entryHint = entry;
    if (start > this.key[node]! || start + sizeBytes < this.key[node]! + this.size[node]!) this.lowering(entry, chunk);
    this.key[node] = start;
    this.size[node] = sizeBytes;
    this.entryStart[entry] = start;
    this.entrySize[entry] = sizeBytes;
    this.raised(entry, chunk);
  }

  /** Puts `node` (not indexed) at its place by start. */
  private indexInsert(node: number): void {
    const start = this.key[node]!;
    if (this.orderCount === 0) {
      const chunk = this.newChunk();
      this.directoryInsert(0, chunk);
      this.insertAt(chunk, 0, node);
      return;
    }
    // The last chunk whose first start is <= start (else the first chunk).
    let low = 0;
    let high = this.orderCount - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.entryStart[this.order[mid]! * CHUNK]! <= start) low = mid;
      else high = mid - 1;
    }
    const chunk = this.order[low]!;
    const base = chunk * CHUNK;
    const count = this.chunkCount[chunk]!;
    let at = 0;
    while (at < count && this.entryStart[base + at]! < start) at++;
    this.insertAt(chunk, at, node);
  }

  /** Moves entries [from, from + count) to `to` (chunk-array indexes; ranges may overlap). */
  private moveEntries(to: number, from: number, count: number): void {
    // Plain loops: the runs are at most CHUNK long, where copyWithin's call costs more than the copy.
    const nodes = this.chunkNodes;
    const starts = this.entryStart;
    const sizes = this.entrySize;
    if (to < from) {
      for (let i = 0; i < count; i++) {
        nodes[to + i] = nodes[from + i]!;
        starts[to + i] = starts[from + i]!;
        sizes[to + i] = sizes[from + i]!;
      }
    } else {
      for (let i = count - 1; i >= 0; i--) {
        nodes[to + i] = nodes[from + i]!;
        starts[to + i] = starts[from + i]!;
        sizes[to + i] = sizes[from + i]!;
      }
    }
  }

  /** Inserts `node` at index `at` of `chunk`, splitting the chunk first when it is full. */
  protected insertAt(chunk: number, at: number, node: number): void {
    let target = chunk;
    let index = at;
    if (this.chunkCount[chunk] === CHUNK) {
      const half = CHUNK >> 1;
      const upper = this.newChunk();
      this.moveEntries(upper * CHUNK, chunk * CHUNK + half, CHUNK - half);
      for (let i = 0; i < CHUNK - half; i++) this.chunkOf[this.chunkNodes[upper * CHUNK + i]!] = upper;
      this.chunkCount[upper] = CHUNK - half;
      this.chunkCount[chunk] = half;
      this.directoryInsert(this.chunkPos[chunk]! + 1, upper);
      this.markDirty(chunk);
      this.markDirty(upper);
      if (at > half) {
        target = upper;
        index = at - half;
      }
    }
    const base = target * CHUNK;
    const count = this.chunkCount[target]!;
    if (index < count) this.moveEntries(base + index + 1, base + index, count - index);
    this.chunkNodes[base + index] = node;
    this.entryStart[base + index] = this.key[node]!;
    this.entrySize[base + index] = this.size[node]!;
    this.chunkCount[target] = count + 1;
    this.chunkOf[node] = target;
    if (count === 0) this.markDirty(target);
    else this.raised(base + index, target);
  }

  /** Takes `node` out of its chunk; an emptied chunk leaves, a sparse one merges with a neighbour. */
  protected indexRemove(node: number): void {
    const chunk = this.chunkOf[node]!;
    const base = chunk * CHUNK;
    const count = this.chunkCount[chunk]!;
    const at = this.indexInChunk(chunk, node);
    this.lowering(base + at, chunk);
    this.moveEntries(base + at, base + at + 1, count - at - 1);
    this.entryHint = base + at - 1;
    this.chunkCount[chunk] = count - 1;
    this.chunkOf[node] = NIL;
    if (count - 1 === 0) {
      this.directoryRemove(this.chunkPos[chunk]!);
      this.releaseChunk(chunk);
      return;
    }
    if (count - 1 < CHUNK_LOW) {
      const pos = this.chunkPos[chunk]!;
      if (pos + 1 < this.orderCount && count - 1 + this.chunkCount[this.order[pos + 1]!]! <= (CHUNK * 3) >> 2) this.mergeInto(chunk, this.order[pos + 1]!);
      else if (pos > 0 && count - 1 + this.chunkCount[this.order[pos - 1]!]! <= (CHUNK * 3) >> 2) this.mergeInto(this.order[pos - 1]!, chunk);
    }
  }

  /** Appends the entries of `upper` (the next chunk in order) to `lower` and drops `upper`. */
  protected mergeInto(lower: number, upper: number): void {
    const lowerCount = this.chunkCount[lower]!;
    const upperCount = this.chunkCount[upper]!;
    this.moveEntries(lower * CHUNK + lowerCount, upper * CHUNK, upperCount);
    for (let i = 0; i < upperCount; i++) this.chunkOf[this.chunkNodes[lower * CHUNK + lowerCount + i]!] = lower;
    this.chunkCount[lower] = lowerCount + upperCount;
    this.directoryRemove(this.chunkPos[upper]!);
    this.releaseChunk(upper);
    this.markDirty(lower);
  }

  /** The index of `node` in `chunk` (it must be there). */
  protected indexInChunk(chunk: number, node: number): number {
    const base = chunk * CHUNK;
    // The entry last seen for a node (search's answer, a resized block): checked, not trusted.
    const hint = this.entryHint - base;
    if (hint >= 0 && hint < this.chunkCount[chunk]! && this.chunkNodes[this.entryHint] === node) return hint;
    // Binary search by start (the chunk's starts ascend and differ), then the id to confirm.
    const start = this.key[node]!;
    let low = 0;
    let high = this.chunkCount[chunk]! - 1;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (this.entryStart[base + mid]! < start) low = mid + 1;
      else high = mid;
    }
    if (this.chunkNodes[base + low] === node) return low;
    // Not where its start says (a broken index): the plain scan.
    let at = 0;
    while (this.chunkNodes[base + at] !== node) at++;
    return at;
  }

  private newChunk(): number {
    let chunk: number;
    if (this.spareChunkCount > 0) {
      chunk = this.spareChunks[--this.spareChunkCount]!;
    } else {
      if (this.chunkHighWater === this.chunkCount.length) this.growChunks();
      chunk = this.chunkHighWater++;
    }
    this.chunkCount[chunk] = 0;
    this.chunkDirty[chunk] = 0;
    return chunk;
  }

  private releaseChunk(chunk: number): void {
    this.chunkCount[chunk] = 0;
    this.chunkDirty[chunk] = 0;
    this.chunkPos[chunk] = NIL;
    this.spareChunks[this.spareChunkCount++] = chunk;
  }

  /** Doubles the chunk arrays and the directory (positions never outnumber chunks). */
  private growChunks(): void {
    const length = this.chunkCount.length * 2;
    this.chunkNodes = grownCopy(this.chunkNodes, length * CHUNK);
    this.entryStart = grownCopy(this.entryStart, length * CHUNK);
    this.entrySize = grownCopy(this.entrySize, length * CHUNK);
    this.chunkCount = grownCopy(this.chunkCount, length);
    this.chunkPos = grownCopy(this.chunkPos, length);
    this.chunkDirty = grownCopy(this.chunkDirty, length);
    this.spareChunks = grownCopy(this.spareChunks, length);
    this.order = grownCopy(this.order, length);
    // Slot-major tables: each slot's run moves to its place at the new stride.
    const positionFit = new Float64Array(length * this.slotStride);
    for (let j = 0; j < this.slotCount; j++) positionFit.set(this.positionFit.subarray(j * this.positionCap, j * this.positionCap + this.orderCount), j * length);
    this.positionFit = positionFit;
    this.positionCap = length;
    this.groupCap = (length >> GROUP_SHIFT) + 1;
    this.groupFit = new Float64Array(this.groupCap * this.slotStride);
    this.groupsStaleFrom = 0;
  }

  protected directoryInsert(pos: number, chunk: number): void {
    const count = this.orderCount;
    this.order.copyWithin(pos + 1, pos, count);
    for (let j = 0; j < this.slotCount; j++) {
      const base = j * this.positionCap;
      this.positionFit.copyWithin(base + pos + 1, base + pos, base + count);
    }
    this.order[pos] = chunk;
    this.orderCount = count + 1;
    for (let p = pos; p <= count; p++) this.chunkPos[this.order[p]!] = p;
    this.markDirty(chunk);
    this.groupsStaleFrom = Math.min(this.groupsStaleFrom, pos >> GROUP_SHIFT);
  }

  private directoryRemove(pos: number): void {
    const count = this.orderCount;
    this.order.copyWithin(pos, pos + 1, count);
    for (let j = 0; j < this.slotCount; j++) {
      const base = j * this.positionCap;
      this.positionFit.copyWithin(base + pos, base + pos + 1, base + count);
    }
    this.orderCount = count - 1;
    for (let p = pos; p < count - 1; p++) this.chunkPos[this.order[p]!] = p;
    this.groupsStaleFrom = Math.min(this.groupsStaleFrom, pos >> GROUP_SHIFT);
  }

  /**
   * Before the block at chunk entry `entry` may lose usable size (shrink, start moved up,
   * removal): when it holds its chunk's maximum for some slot, the chunk waits for
   * recomputation; otherwise the maxima stand.
   */
  protected lowering(entry: number, chunk: number): void {
    if (this.chunkDirty[chunk] === 1) return;
    const start = this.entryStart[entry]!;
    const sizeBytes = this.entrySize[entry]!;
    const pos = this.chunkPos[chunk]!;
    for (let j = 0; j < this.slotCount; j++) {
      if (usableAt(start, sizeBytes, this.slotAlignBytes[j]!) >= this.positionFit[j * this.positionCap + pos]!) {
        this.markDirty(chunk);
        return;
      }
    }
  }

  /** After the block at chunk entry `entry` may have gained usable size (or joined): raises the maxima. */
  protected raised(entry: number, chunk: number): void {
    if (this.chunkDirty[chunk] === 1) return; // the flush recomputes the chunk and its group
    const start = this.entryStart[entry]!;
    const sizeBytes = this.entrySize[entry]!;
    const pos = this.chunkPos[chunk]!;
    const group = pos >> GROUP_SHIFT;
    for (let j = 0; j < this.slotCount; j++) {
      const usable = usableAt(start, sizeBytes, this.slotAlignBytes[j]!);
      const at = j * this.positionCap + pos;
      if (usable > this.positionFit[at]!) {
        this.positionFit[at] = usable;
        const groupAt = j * this.groupCap + group;
        if (usable > this.groupFit[groupAt]!) this.groupFit[groupAt] = usable;
      }
    }
  }

  private markDirty(chunk: number): void {
    if (this.chunkDirty[chunk] === 1) return;
    this.chunkDirty[chunk] = 1;
    if (this.dirtyCount === this.dirtyList.length) this.dirtyList = grownCopy(this.dirtyList, this.dirtyList.length * 2);
    this.dirtyList[this.dirtyCount++] = chunk;
  }

  /** Recomputes the dirty chunks' values, then their groups' (and every group from groupsStaleFrom). */
  private flushDirty(): void {
    const groupCount = (this.orderCount + GROUP - 1) >> GROUP_SHIFT;
    const staleFrom = this.groupsStaleFrom;
    for (let i = 0; i < this.dirtyCount; i++) {
      const chunk = this.dirtyList[i]!;
      if (this.chunkDirty[chunk] === 0) continue;
      this.chunkDirty[chunk] = 0;
      const pos = this.chunkPos[chunk]!;
      const group = pos >> GROUP_SHIFT;
      let groupStale = group >= staleFrom;
      for (let j = 0; j < this.slotCount; j++) {
        const at = j * this.positionCap + pos;
        const old = this.positionFit[at]!;
        const value = this.chunkMax(chunk, this.slotAlignBytes[j]!);
        this.positionFit[at] = value;
        if (groupStale) continue;
        // The group's maximum rises with the chunk's; it is recomputed when the chunk held it and fell.
        const groupAt = j * this.groupCap + group;
        const groupValue = this.groupFit[groupAt]!;
        if (value > groupValue) this.groupFit[groupAt] = value;
        else if (value < groupValue && old === groupValue) groupStale = true;
      }
      if (groupStale && group < staleFrom) this.computeGroup(group);
    }
    this.dirtyCount = 0;
    for (let g = staleFrom; g < groupCount; g++) this.computeGroup(g);
    this.groupsStaleFrom = 2 ** 30;
  }

  /** The chunk's largest usable size at `alignBytes` (-Infinity when empty). */
  private chunkMax(chunk: number, alignBytes: number): number {
    const base = chunk * CHUNK;
    const end = base + this.chunkCount[chunk]!;
    let best = -Infinity;
    if (alignBytes === 1) {
      for (let i = base; i < end; i++) if (this.entrySize[i]! > best) best = this.entrySize[i]!;
      return best;
    }
    if (alignBytes <= 0x40000000) {
      // usableAt's 32-bit path, unrolled here: this loop runs on most allocs.
      const mask = alignBytes - 1;
      for (let i = base; i < end; i++) {
        const usable = this.entrySize[i]! - ((alignBytes - ((this.entryStart[i]! >>> 0) & mask)) & mask);
        if (usable > best) best = usable;
      }
      return best;
    }
    for (let i = base; i < end; i++) {
      const usable = usableAt(this.entryStart[i]!, this.entrySize[i]!, alignBytes);
      if (usable > best) best = usable;
    }
    return best;
  }

  /** The group's maximum of its positions' values, per slot. */
  private groupMax(group: number, slot: number): number {
    const first = group << GROUP_SHIFT;
    const last = Math.min(this.orderCount, first + GROUP);
    const base = slot * this.positionCap;
    let best = -Infinity;
    for (let p = first; p < last; p++) if (this.positionFit[base + p]! > best) best = this.positionFit[base + p]!;
    return best;
  }

  private computeGroup(group: number): void {
    for (let j = 0; j < this.slotCount; j++) this.groupFit[j * this.groupCap + group] = this.groupMax(group, j);
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

  /** Free blocks from the index, in order: fills freeOrder, returns the count. */
  private freeInOrder(): number {
    if (this.freeOrderCount < 0) this.freeOrderCount = this.walkFree();
    return this.freeOrderCount;
  }

  /** The chunks' node ids in directory order (bounded by the node count even if corrupt). */
  private walkFree(): number {
    const bound = this.nodeHighWater + 1;
    if (this.freeOrder.length < bound + 1) this.freeOrder = new Int32Array(bound + 1);
    let count = 0;
    for (let p = 0; p < this.orderCount && count <= bound; p++) {
      const chunk = this.order[p]!;
      const n = Math.min(this.chunkCount[chunk]!, CHUNK);
      for (let i = 0; i < n && count <= bound; i++) this.freeOrder[count++] = this.chunkNodes[chunk * CHUNK + i]!;
    }
    return count;
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
    this.walkStoppedAt = walked ? -1 : position;
    this.walkedLive = count;
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
      // A broken index: the free blocks as walked, then the live ones, stably sorted by offset.
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
      return `the index holds ${count} free blocks, the start/end maps ${this.freeByStart.size}/${this.freeByEnd.size}`;
    }
    // The directory: non-empty chunks, each knowing its position; entries knowing their chunk
    // and copying their block's start and size.
    for (let p = 0; p < this.orderCount; p++) {
      const chunk = this.order[p]!;
      const n = this.chunkCount[chunk]!;
      if (n < 1 || n > CHUNK) return `chunk ${chunk} at directory position ${p} holds ${n} blocks (1..${CHUNK} allowed)`;
      if (this.chunkPos[chunk] !== p) return `chunk ${chunk} is at directory position ${p} but records ${this.chunkPos[chunk]}`;
      // Balance: a chunk left below CHUNK_LOW merges unless both neighbours hold more than
      // 3/4 CHUNK - CHUNK_LOW ids, and a neighbour falling below CHUNK_LOW merges with it.
      if (p > 0 && n < CHUNK_LOW && this.chunkCount[this.order[p - 1]!]! < CHUNK_LOW) {
        return `chunks at directory positions ${p - 1} and ${p} hold ${this.chunkCount[this.order[p - 1]!]} and ${n} blocks (neighbours below ${CHUNK_LOW} merge)`;
      }
      for (let i = chunk * CHUNK; i < chunk * CHUNK + n; i++) {
        const node = this.chunkNodes[i]!;
        if (this.chunkOf[node] !== chunk) return `free block at ${this.key[node]} sits in chunk ${chunk} but records chunk ${this.chunkOf[node]}`;
        if (this.entryStart[i] !== this.key[node] || this.entrySize[i] !== this.size[node]) {
          return `free block [${this.key[node]}+${this.size[node]}]: its chunk's copy says [${this.entryStart[i]}+${this.entrySize[i]}]`;
        }
      }
    }
    for (let i = 0; i < count; i++) {
      const node = inOrder[i]!;
      const start = this.key[node]!;
      const sizeBytes = this.size[node]!;
      if (i > 0 && this.key[inOrder[i - 1]!]! >= start) return `the index is out of offset order at ${start}`;
      if (this.freeByStart.get(start) !== node || this.freeByEnd.get(start + sizeBytes) !== node) return `free block [${start}+${sizeBytes}] is not found by its start and end`;
    }
    // Stored maxima: every chunk and group not waiting for recomputation holds exactly the
    // largest usable size per alignment slot of its blocks.
    for (let p = 0; p < this.orderCount; p++) {
      const chunk = this.order[p]!;
      if (this.chunkDirty[chunk] === 1) continue;
      for (let j = 0; j < this.slotCount; j++) {
        const stored = this.positionFit[j * this.positionCap + p]!;
        const fresh = this.chunkMax(chunk, this.slotAlignBytes[j]!);
        if (stored !== fresh) return `chunk at directory position ${p}: largest usable size at alignment ${this.slotAlignBytes[j]} is ${stored}, should be ${fresh}`;
      }
    }
    const groupCount = (this.orderCount + GROUP - 1) >> GROUP_SHIFT;
    for (let g = 0; g < Math.min(groupCount, this.groupsStaleFrom); g++) {
      let pending = false;
      for (let p = g << GROUP_SHIFT; p < Math.min(this.orderCount, (g + 1) << GROUP_SHIFT); p++) pending ||= this.chunkDirty[this.order[p]!] === 1;
      if (pending) continue;
      for (let j = 0; j < this.slotCount; j++) {
        const stored = this.groupFit[j * this.groupCap + g]!;
        const fresh = this.groupMax(g, j);
        if (stored !== fresh) return `chunk group ${g}: largest usable size at alignment ${this.slotAlignBytes[j]} is ${stored}, should be ${fresh}`;
      }
    }
    // The live records fill the gaps between free blocks exactly (what lets live() walk them).
    this.liveInOrder();
    if (this.walkStoppedAt >= 0) return `the live records and free blocks do not tile the heap: the walk from offset 0 stops at ${this.walkStoppedAt}`;
    if (this.walkedLive !== this.liveSizes.size) return `${this.liveSizes.size - this.walkedLive} of ${this.liveSizes.size} live records lie outside the gaps between free blocks`;
    return null;
  }
}
