/**
 * First fit's self-check (`checkIndexes()`): the node store, the free indexes and the live
 * offsets against each other, one condition a line, each reported with what it found. The
 * caller's block invariants (the tiling, one live range per allocated block, no adjacent free
 * blocks) read blocks(), which walks the same list; this check adds what they cannot see: the
 * links back, the ids, the byte and block counts, every free block's bin and heap entry, the heap
 * order, the tree of lowest starts, and the offsets free() looks up.
 *
 * The campaign runs it after every step, so it allocates nothing: its working arrays live in a
 * FirstFitCheckScratch the allocator keeps and grow with the store.
 */
import { NIL, type BlockList } from './first-fit-blocks.js';
import { BINS, LEVEL1, LEVEL2, NOT_INDEXED, padAt, type FreeIndex } from './first-fit-index.js';
import { EMPTY_SLOT, type LiveOffsets } from './first-fit-offsets.js';

/**
 * Per bin: the listed blocks the check found in it. One array for every allocator (the check runs
 * to its end before another starts, and a buffer per allocator would cost each campaign run a
 * microsecond).
 */
const TALLY = new Int32Array(BINS);

/** The check's working arrays, kept between calls (one per allocator). */
export class FirstFitCheckScratch {
  /**
   * seen[id] === mark: the id was met in this call (a new mark per call, so nothing is cleared;
   * float64 marks repeat only after 2^53 calls).
   */
  seen = new Float64Array(0);
  mark = 0;
  /** Per bin: the listed blocks found in it (one index at a time; shared by every scratch, see TALLY). */
  get tally(): Int32Array {
    return TALLY;
  }
  /** A fresh mark for `room` ids (the array grows with the store). */
  nextMark(room: number): number {
    if (this.seen.length < room) this.seen = new Float64Array(room);
    return ++this.mark;
  }
}

/** Null when the list, the indexes and the offsets agree, otherwise the first condition that fails. */
export function checkFirstFit(
  list: BlockList,
  indexes: readonly FreeIndex[],
  offsets: LiveOffsets,
  capacityBytes: number,
  usedBytes: number,
  liveCount: number,
  scratch: FirstFitCheckScratch = new FirstFitCheckScratch(),
): string | null {
  const problem =
    checkList(list, capacityBytes, usedBytes, liveCount) ??
    checkIds(list, scratch) ??
    checkOffsets(list, offsets, liveCount, scratch);
  if (problem !== null) return problem;
  for (const index of indexes) {
    const found = checkIndex(list, index, scratch);
    if (found !== null) return found;
  }
  return null;
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
 * The live offsets hold exactly the allocations: each entry names a listed allocated block that
 * starts at its offset, no block twice, one entry per allocation, and no empty slot between an
 * entry's home slot and its own (a lookup would stop there and miss it). A scan of the table,
 * not a lookup per allocation: the campaign runs this after every step.
 */
export function checkOffsets(
  list: BlockList,
  offsets: LiveOffsets,
  liveCount: number,
  scratch: FirstFitCheckScratch = new FirstFitCheckScratch(),
): string | null {
  const mark = scratch.nextMark(list.room);
  const seen = scratch.seen;
  for (let node = list.head; node !== NIL; node = list.next(node))
    if (!list.isFree(node)) seen[node] = mark;
  const table = offsets.offsets;
  const nodes = offsets.nodes;
  const mask = table.length - 1;
  let held = 0;
  for (let slot = 0; slot < table.length; slot++) {
    const offset = table[slot]!;
    if (offset === EMPTY_SLOT) continue;
    held++;
    const node = nodes[slot]!;
    if (!(node >= 0 && node < list.room) || seen[node] !== mark || list.start(node) !== offset)
      return `the live offsets map ${offset} to node ${node}, which is not an allocation starting there (or another entry names it too)`;
    seen[node] = -mark;
    for (let home = offsets.slotOf(offset); home !== slot; home = (home + 1) & mask) {
      if (table[home] === EMPTY_SLOT)
        return `the live offsets hold ${offset} in slot ${slot}, past the empty slot ${home} after its home: a lookup stops there`;
    }
  }
  if (held !== offsets.count)
    return `the live offsets count ${offsets.count} entries, their table holds ${held}`;
  if (held !== liveCount)
    return `the live offsets hold ${held} entries for ${liveCount} allocations`;
  return null;
}

/** A heap never made (a corrupt count or position may name its bin). */
const EMPTY = new Float64Array(0);

function binName(bin: number): string {
  return bin === NOT_INDEXED ? 'none' : `bin ${bin}`;
}

/**
 * One free index against the list: each block in the bin its usable size and the floor give it
 * (allocated blocks in none), at a heap position that holds it; each bin's count, heap order and
 * lowest start; each tree node the least of its children (the search trusts the tree: a node
 * above its children hides a bin, one below them sends the search to an empty one).
 */
export function checkIndex(
  list: BlockList,
  index: FreeIndex,
  scratch: FirstFitCheckScratch = new FirstFitCheckScratch(),
): string | null {
  const { alignBytes, bin, pos, heaps, counts, tops, highBin } = index;
  const tally = scratch.tally;
  // Bins above highBin never held an entry: the bins of the groups up to highBin's are counted
  // and compared, the tree's groups above must be empty (checked below). This trusts that only
  // the index's own methods write its arrays (`insert` raises highBin before it writes a bin): a
  // count or leaf written by hand above highBin's group is not seen here.
  const usedGroups = (highBin >> 3) + 1;
  tally.fill(0, 0, 8 * usedGroups);
  for (let node = list.head; node !== NIL; node = list.next(node)) {
    const start = list.start(node);
    const sizeBytes = list.size(node);
    const held = bin[node]!;
    if (!list.isFree(node)) {
      if (held !== NOT_INDEXED)
        return `the allocated block at ${start} is in bin ${held} of the index at alignment ${alignBytes}`;
      continue;
    }
    const belongs = index.binFor(start, sizeBytes);
    if (held !== belongs || held > highBin) {
      const usable = sizeBytes - padAt(start, alignBytes);
      return `the free block at ${start} (usable ${usable}, floor bin ${index.floorBin}) belongs in ${binName(belongs)} of the index at alignment ${alignBytes}, it is in ${binName(held)}`;
    }
    if (held === NOT_INDEXED) continue;
    tally[held]!++;
    const p = pos[node]!;
    const heap = heaps[held] ?? EMPTY;
    if (!(p >= 1 && p <= counts[held]!) || heap[2 * p + 1] !== node || heap[2 * p] !== start)
      return `the free block at ${start} (node ${node}) records position ${p} in bin ${held} at alignment ${alignBytes}, which holds ${p >= 1 && p <= counts[held]! ? `node ${heap[2 * p + 1]} at ${heap[2 * p]}` : 'no entry'}`;
  }
  // Ids given back are in no bin (a stale one would be a second entry once the id is reused).
  for (let i = 0; i < list.spareCount; i++) {
    const spare = list.spare[i]!;
    if (bin[spare] !== NOT_INDEXED)
      return `spare node ${spare} is in bin ${bin[spare]} of the index at alignment ${alignBytes}`;
  }
  // Each bin's count, heap order and lowest start; each group's least start, gathered on the
  // way, against its level-1 node.
  let groupLeast = Infinity;
  for (let b = 0; b < 8 * usedGroups; b++) {
    const count = counts[b]!;
    if (count !== tally[b])
      return `bin ${b} at alignment ${alignBytes} counts ${count} entries, ${tally[b]} free blocks are in it`;
    const top = tops[b]!;
    if (count !== 0 || top !== Infinity) {
      const heap = heaps[b] ?? EMPTY;
      for (let i = 2; i <= count; i++) {
        const parent = (i + 2) >> 2;
        if (!(heap[2 * parent]! < heap[2 * i]!))
          return `bin ${b} at alignment ${alignBytes}: the entry at position ${i} starts at ${heap[2 * i]}, not after its parent's ${heap[2 * parent]}`;
      }
      const lowest = count === 0 ? Infinity : heap[2]!;
      if (top !== lowest)
        return `bin ${b} at alignment ${alignBytes}: its lowest start is ${lowest}, the tree holds ${top}`;
      if (top < groupLeast) groupLeast = top;
    }
    if ((b & 7) === 7) {
      const group = b >> 3;
      if (tops[LEVEL1 + group] !== groupLeast)
        return `tree node ${group} of level 1 at alignment ${alignBytes} holds ${tops[LEVEL1 + group]}, the least of its children is ${groupLeast}`;
      groupLeast = Infinity;
    }
  }
  // The level-1 nodes past the groups in use, up to the end of their level-2 node, hold Infinity
  // (their leaves were never written); then every level-2 node (those past hold Infinity).
  const coveredGroups = ((highBin >> 6) + 1) << 3;
  for (let i = usedGroups; i < coveredGroups; i++) {
    if (tops[LEVEL1 + i] !== Infinity)
      return `tree node ${i} of level 1 at alignment ${alignBytes} holds ${tops[LEVEL1 + i]}, the least of its children is Infinity`;
  }
  for (let i = 0; i < BINS >> 6; i++) {
    let least = Infinity;
    if (8 * i < coveredGroups) {
      for (let j = LEVEL1 + 8 * i; j < LEVEL1 + 8 * i + 8; j++)
        if (tops[j]! < least) least = tops[j]!;
    }
    if (tops[LEVEL2 + i] !== least)
      return `tree node ${i} of level 2 at alignment ${alignBytes} holds ${tops[LEVEL2 + i]}, the least of its children is ${least}`;
  }
  return null;
}
