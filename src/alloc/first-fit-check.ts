/**
 * First fit's self-check (`checkIndexes()`): the node store and the chunk directory against
 * each other, one condition a line, each reported with what it found. The caller's block
 * invariants (the tiling, one live range per allocated block, no adjacent free blocks) read
 * blocks(), which walks the same list; this check adds what they cannot see: the links back,
 * the ids, the byte and block counts, and the directory's records and maxima.
 *
 * The campaign runs it after every step, so it allocates nothing: its working arrays live in a
 * FirstFitCheckScratch the allocator keeps and grow with the store and the directory.
 */
import { NIL, type BlockList } from './first-fit-blocks.js';
import { usableAt, type ChunkDirectory } from './first-fit-chunks.js';

/** The check's working arrays, kept between calls (one per allocator). */
export class FirstFitCheckScratch {
  /**
   * seen[id] === mark: the id was met in this call (a new mark per call, so nothing is cleared;
   * float64 marks repeat only after 2^53 calls).
   */
  seen = new Float64Array(0);
  mark = 0;
  /** Per-slot maxima of the chunk being checked. */
  maxima = new Float64Array(0);
  /** A fresh mark for `room` ids (the array grows with the store). */
  nextMark(room: number): number {
    if (this.seen.length < room) this.seen = new Float64Array(room);
    return ++this.mark;
  }
}

/** Null when the list and the directory agree, otherwise the first condition that fails. */
export function checkFirstFit(
  list: BlockList,
  chunks: ChunkDirectory,
  capacityBytes: number,
  usedBytes: number,
  liveCount: number,
  scratch: FirstFitCheckScratch = new FirstFitCheckScratch(),
): string | null {
  return (
    checkList(list, capacityBytes, usedBytes, liveCount) ??
    checkIds(list, scratch) ??
    checkDirectory(list, chunks, scratch)
  );
}

/**
 * The list from its head: links both ways, offsets tiling [0, capacity), the counts. Each block
 * must start where the one before it ends and hold at least a byte, so the walk ends (a link back
 * to an earlier block fails the first of these).
 */
export function checkList(
  list: BlockList,
  capacityBytes: number,
  usedBytes: number,
  liveCount: number,
): string | null {
  if (list.head === NIL || list.start(list.head) !== 0 || list.prev(list.head) !== NIL)
    return `the list's head is not a first block at offset 0`;
  let listedUsed = 0;
  let listedLive = 0;
  let end = 0;
  for (let node = list.head; node !== NIL; node = list.next(node)) {
    if (list.start(node) !== end)
      return `the block at ${list.start(node)} does not start where the block before it ends (${end})`;
    if (!(list.size(node) >= 1))
      return `the block at ${list.start(node)} has size ${list.size(node)} (at least 1 byte)`;
    const following = list.next(node);
    if (following !== NIL && !(following >= 0 && following < list.room))
      return `the block at ${list.start(node)} links to node ${following}, outside the node store (${list.room} nodes)`;
    if (following !== NIL && list.prev(following) !== node)
      return `the block at ${list.start(following)} links back to node ${list.prev(following)}, not to the block before it (node ${node})`;
    if (!list.isFree(node)) listedUsed += list.size(node);
    if (!list.isFree(node)) listedLive++;
    end = list.start(node) + list.size(node);
  }
  if (end !== capacityBytes)
    return `the blocks end at ${end}, not at the capacity ${capacityBytes}`;
  if (listedUsed !== usedBytes)
    return `${usedBytes} used bytes recorded, the allocated blocks hold ${listedUsed}`;
  if (listedLive !== liveCount)
    return `${liveCount} allocations recorded, the list holds ${listedLive} allocated blocks`;
  return null;
}

/** Every id handed out is listed or spare, never both, never spare twice. */
export function checkIds(
  list: BlockList,
  scratch: FirstFitCheckScratch = new FirstFitCheckScratch(),
): string | null {
  const mark = scratch.nextMark(list.room);
  const seen = scratch.seen;
  let listed = 0;
  for (let node = list.head; node !== NIL; node = list.next(node)) {
    if (node >= list.highWater)
      return `node ${node} is listed but not below the ${list.highWater} ids handed out`;
    seen[node] = mark;
    listed++;
  }
  for (let i = 0; i < list.spareCount; i++) {
    const node = list.spare[i]!;
    if (node < 0 || node >= list.highWater || seen[node] === mark)
      return `spare id ${node} is listed, repeated or never handed out`;
    seen[node] = mark;
  }
  if (listed + list.spareCount !== list.highWater)
    return `node ids: ${list.highWater} handed out, ${listed} listed and ${list.spareCount} spare`;
  return null;
}

/**
 * Each chunk's first block, each slot's leaves from the free blocks, each inner node exactly the
 * largest of its children (the search trusts both: a node above its children would send a
 * descent to a chunk with no fit). The chunks are visited in order beside the list (its blocks
 * ascend), so the check costs O(blocks + chunks) per slot and allocates nothing.
 */
function blockAt(list: BlockList, node: number): string {
  return node === NIL ? 'none' : `the block at ${list.start(node)}`;
}

export function checkDirectory(
  list: BlockList,
  chunks: ChunkDirectory,
  scratch: FirstFitCheckScratch = new FirstFitCheckScratch(),
): string | null {
  const { leaves, slotCount, treeSize, leafStart, fit, slotAlign } = chunks;
  if (scratch.maxima.length < slotCount) scratch.maxima = new Float64Array(chunks.slotAlign.length);
  const maxima = scratch.maxima;
  let node = list.head;
  // Leaves past the heap's last chunk are never written (no block starts there): read only as
  // children by the inner nodes' check below.
  const chunkCount = Math.min(leaves, chunks.chunkCount);
  for (let chunk = 0; chunk < chunkCount; chunk++) {
    const chunkEnd = (chunk + 1) * chunks.chunkBytes;
    const firstSeen = node !== NIL && list.start(node) < chunkEnd ? node : NIL;
    if (chunks.first[chunk] !== firstSeen)
      return `chunk ${chunk} records ${blockAt(list, chunks.first[chunk]!)} as its first block, the first block starting in it is ${blockAt(list, firstSeen)}`;
    for (let j = 0; j < slotCount; j++) maxima[j] = 0;
    for (; node !== NIL && list.start(node) < chunkEnd; node = list.next(node)) {
      if (!list.isFree(node)) continue;
      const start = list.start(node);
      const sizeBytes = list.size(node);
      for (let j = 0; j < slotCount; j++) {
        // A block's usable size is at most its size: one no larger than the maximum so far is passed.
        if (sizeBytes <= maxima[j]!) continue;
        const usable = usableAt(start, sizeBytes, slotAlign[j]!);
        if (usable > maxima[j]!) maxima[j] = usable;
      }
    }
    for (let j = 0; j < slotCount; j++) {
      const stored = fit[j * treeSize + leafStart + chunk]!;
      if (stored !== maxima[j])
        return `chunk ${chunk}: largest usable size at alignment ${slotAlign[j]} is ${stored}, should be ${maxima[j]}`;
    }
  }
  if (node !== NIL)
    return `the block at ${list.start(node)} starts in chunk ${chunks.chunkOf(list.start(node))}, beyond the directory's ${chunkCount} chunks`;
  for (let j = 0; j < slotCount; j++) {
    for (let d = chunks.depth - 1; d >= 0; d--) {
      for (let i = 0; i < chunks.levelNodes[d]!; i++) {
        const larger = chunks.childMax(j, d, i);
        const stored = fit[j * treeSize + chunks.levels[d]! + i]!;
        if (stored !== larger)
          return `tree node ${i} of level ${d} at alignment ${slotAlign[j]} holds ${stored}, the largest of its children is ${larger}`;
      }
    }
  }
  return null;
}
