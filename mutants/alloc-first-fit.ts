/**
 * Bug catalog for the first-fit allocator (`alloc-first-fit`). Each mutant re-creates one pitfall
 * through a coarse seam, so the shipped allocator keeps no hook on its hot path: a mutant
 * overrides a whole step (alloc, free, an inspection method) built from the allocator's own
 * helpers, or wraps a step and then undoes or redoes the one piece of bookkeeping the bug gets
 * wrong (for the chunk directory's max trees: puts back the values a skipped update leaves).
 */
import { mutantsOf } from './define.js';
import type { AnyMutant } from '../src/harness/system.js';
import {
  alignUp,
  badFree,
  isPowerOfTwo,
  validateRequest,
  type BlockInfo,
  type LiveAllocation,
} from '../src/alloc/allocator.js';
import type { SubAllocatorConfig } from '../src/alloc/config.js';
import { NIL } from '../src/alloc/first-fit-blocks.js';
import { usableAt, type ChunkDirectory } from '../src/alloc/first-fit-chunks.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { subAllocatorSide } from '../src/systems/alloc-sub.js';
import { allocFirstFitSystem } from '../src/systems/alloc-first-fit.js';

/**
 * First fit made of steps: the shipped allocator's alloc and free (src/alloc/first-fit.ts, each
 * written out in one piece) taken apart into the helpers the catalog's mutants override or call
 * (`carve`, `liveNodeAt`, `absorbNext`, `markFree`), doing the same work on the same node store
 * and chunk directory. properties/first-fit-stepped.test.ts holds the two to the same answers,
 * blocks and directory after every command, so a mutant of this twin is a bug of the shipped
 * allocator.
 */
export class SteppedFirstFit extends FirstFitAllocator {
  override alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const chunks = this.chunks;
    const node = chunks.search(sizeBytes, alignBytes, chunks.slotFor(alignBytes));
    if (node === NIL) return null;
    return this.carve(node, sizeBytes, alignBytes);
  }

  override free(offsetBytes: number): void {
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

  // --- the steps (called by alloc and free; the catalog's mutants call them too) ---------------

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
    const lowers = chunks.holdsMaximum(start, blockBytes);
    let live = node;
    if (offsetBytes === start) {
      list.setFree(node, false);
      list.setSize(node, sizeBytes);
    } else {
      list.setSize(node, offsetBytes - start);
      live = list.create(offsetBytes, sizeBytes, false);
      list.insertAfter(node, live);
      chunks.noteStart(live, offsetBytes);
    }
    const chunk = chunks.chunkOf(start);
    if (allocEnd < end) {
      const tail = list.create(allocEnd, end - allocEnd, true);
      list.insertAfter(live, tail);
      chunks.noteStart(tail, allocEnd);
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
}

const firstFit = mutantsOf(
  allocFirstFitSystem,
  (Allocator: new (config: SubAllocatorConfig) => SteppedFirstFit, config, env) =>
    subAllocatorSide(new Allocator(config), config, env),
);

/**
 * After a step, puts back the max-tree values that changed in `direction` (leaves, inner nodes or
 * both): what the step leaves when it skips those updates. Nothing when the step added a slot or
 * grew the tree (the layout moved).
 */
function putBack(
  chunks: ChunkDirectory,
  before: Float64Array,
  slots: number,
  direction: 'fell' | 'rose',
  nodes: 'leaves' | 'inner' | 'all',
): void {
  if (chunks.fit.length !== before.length || chunks.slotCount !== slots) return;
  const first = nodes === 'leaves' ? chunks.leafStart : 0;
  const last = nodes === 'inner' ? chunks.leafStart : chunks.treeSize;
  for (let j = 0; j < slots; j++) {
    for (let at = first; at < last; at++) {
      const i = j * chunks.treeSize + at;
      if (direction === 'fell' ? chunks.fit[i]! < before[i]! : chunks.fit[i]! > before[i]!)
        chunks.fit[i] = before[i]!;
    }
  }
}

/** A first fit whose alloc or free skips some max-tree updates (see putBack). */
class SkipsTreeUpdates extends SteppedFirstFit {
  protected skip(
    direction: 'fell' | 'rose',
    nodes: 'leaves' | 'inner' | 'all',
    step: () => void,
    when: () => boolean = () => true,
  ): void {
    const before = this.chunks.fit.slice();
    const slots = this.chunks.slotCount;
    step();
    if (when()) putBack(this.chunks, before, slots, direction, nodes);
  }

  /** alloc, skipping the updates `skip` names (the request's slot is added first, so its values are in the snapshot). */
  protected allocSkipping(
    sizeBytes: number,
    alignBytes: number,
    direction: 'fell' | 'rose',
    nodes: 'leaves' | 'inner' | 'all',
    when?: () => boolean,
  ): number | null {
    validateRequest(sizeBytes, alignBytes);
    this.chunks.slotFor(alignBytes);
    let offsetBytes: number | null = null;
    this.skip(direction, nodes, () => (offsetBytes = super.alloc(sizeBytes, alignBytes)), when);
    return offsetBytes;
  }
}

/** A first fit whose alloc and free skip the tree's inner-node updates in `direction` (the leaves stay right). */
function innerUpdatesSkipped(direction: 'fell' | 'rose') {
  return class extends SkipsTreeUpdates {
    override alloc(sizeBytes: number, alignBytes: number): number | null {
      return this.allocSkipping(sizeBytes, alignBytes, direction, 'inner');
    }
    override free(offsetBytes: number): void {
      this.skip(direction, 'inner', () => super.free(offsetBytes));
    }
  };
}

export const FIRST_FIT_MUTANTS: AnyMutant[] = [
  firstFit(
    'ff-power-of-two-by-log2',
    'observation',
    'Alignments tested for a power of two by Number.isInteger(Math.log2(a)): log2 rounds 2^49 - 1 and 2^50 + 1 to integers, so such a request is served at the power log2 names instead of refused (BAD_ALIGN). The shipped helper had this bug, shared by models and implementations',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const log2 = Math.log2(alignBytes);
        if (
          Number.isSafeInteger(alignBytes) &&
          alignBytes > 0 &&
          Number.isInteger(log2) &&
          !isPowerOfTwo(alignBytes)
        )
          return super.alloc(sizeBytes, 2 ** log2);
        return super.alloc(sizeBytes, alignBytes);
      }
    },
  ),
  firstFit(
    'ff-next-fit',
    'observation',
    'The search resumes after the last allocation (next fit, a rover) instead of starting at offset 0',
    class extends SteppedFirstFit {
      private roverBytes = 0;
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        validateRequest(sizeBytes, alignBytes);
        const blocks = this.blocks().filter((block) => block.free);
        const ordered = [
          ...blocks.filter((block) => block.offsetBytes >= this.roverBytes),
          ...blocks.filter((block) => block.offsetBytes < this.roverBytes),
        ];
        for (const block of ordered) {
          if (
            alignUp(block.offsetBytes, alignBytes) + sizeBytes <=
            block.offsetBytes + block.sizeBytes
          ) {
            this.roverBytes = block.offsetBytes;
            return this.carve(this.nodeAt(block.offsetBytes), sizeBytes, alignBytes);
          }
        }
        return null;
      }
    },
  ),
  firstFit(
    'ff-fit-off-by-one',
    'no-overlap',
    'The fit test (after skipping blocks smaller than the request) is alignedStart + size <= end + 1: an allocation behind alignment padding may take one byte past its free block (the block is carved up to its end, the caller gets the requested size)',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        validateRequest(sizeBytes, alignBytes);
        for (const block of this.blocks()) {
          const aligned = alignUp(block.offsetBytes, alignBytes);
          const end = block.offsetBytes + block.sizeBytes;
          if (!block.free || block.sizeBytes < sizeBytes || aligned + sizeBytes > end + 1) continue;
          if (aligned + sizeBytes <= end)
            return this.carve(this.nodeAt(block.offsetBytes), sizeBytes, alignBytes);
          // One byte short: the block's bytes from the aligned start are carved (none when that is the whole request).
          if (sizeBytes > 1) this.carve(this.nodeAt(block.offsetBytes), sizeBytes - 1, alignBytes);
          return aligned;
        }
        return null;
      }
    },
  ),
  firstFit(
    'ff-ignores-alignment',
    'in-bounds-aligned',
    "The allocation starts at the free block's start whatever the requested alignment",
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        validateRequest(sizeBytes, alignBytes);
        return super.alloc(sizeBytes, 1);
      }
    },
  ),
  firstFit(
    'ff-interior-free-accepted',
    'honest-answers',
    'free() of an offset inside a live allocation frees that allocation instead of failing',
    class extends SteppedFirstFit {
      override free(offsetBytes: number): void {
        for (const { offsetBytes: startBytes, sizeBytes } of this.liveView()) {
          if (offsetBytes > startBytes && offsetBytes < startBytes + sizeBytes) {
            super.free(startBytes);
            return;
          }
        }
        super.free(offsetBytes);
      }
    },
  ),
  firstFit(
    'ff-padding-leaked',
    'accounting',
    'The alignment padding in front of an allocation is taken with it instead of staying a free block: its bytes vanish from the free blocks (and show as an allocated block nobody holds)',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        const before = offsetBytes === null ? NIL : this.list.prev(this.nodeAt(offsetBytes));
        if (before !== NIL && this.list.isFree(before)) this.list.setFree(before, false);
        return offsetBytes;
      }
    },
  ),
  firstFit(
    'ff-worst-case-padding',
    'no-false-out-of-memory',
    'The fit test reserves align - 1 bytes of padding even when the block start is already aligned',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        validateRequest(sizeBytes, alignBytes);
        for (const block of this.blocks()) {
          if (
            block.free &&
            block.offsetBytes + alignBytes - 1 + sizeBytes <= block.offsetBytes + block.sizeBytes
          )
            return this.carve(this.nodeAt(block.offsetBytes), sizeBytes, alignBytes);
        }
        return null;
      }
    },
  ),
  firstFit(
    'ff-rounds-to-granule',
    'matches-model',
    "Sizes are rounded up to a 16-byte granule (a CPU heap's habit kept in a port): the same offsets at first, but each allocation reserves up to 15 bytes the spec's one-byte first fit leaves free",
    class extends SteppedFirstFit {
      private readonly callerSizes = new Map<number, number>();
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(alignUp(sizeBytes, 16), alignBytes);
        if (offsetBytes !== null) this.callerSizes.set(offsetBytes, sizeBytes);
        return offsetBytes;
      }
      override free(offsetBytes: number): void {
        super.free(offsetBytes);
        this.callerSizes.delete(offsetBytes);
      }
      override liveView(): readonly LiveAllocation[] {
        return super.liveView().map(({ offsetBytes }) => ({
          offsetBytes,
          sizeBytes: this.callerSizes.get(offsetBytes)!,
        }));
      }
      override usedBytes(): number {
        let total = 0;
        for (const sizeBytes of this.callerSizes.values()) total += sizeBytes;
        return total;
      }
      override wasteBytes(): number {
        return this.usedBytesTotal - this.usedBytes();
      }
    },
  ),
  firstFit(
    'ff-no-merge-next',
    'block-structure',
    'Free merges with the previous free block only, never with the next one (false out of memory later)',
    class extends SteppedFirstFit {
      override free(offsetBytes: number): void {
        const node = this.liveNodeAt(offsetBytes);
        this.markFree(node);
        const before = this.list.prev(node);
        if (before !== NIL && this.list.isFree(before)) this.absorbNext(before);
        this.chunks.raise(before !== NIL && this.list.isFree(before) ? before : node);
      }
    },
  ),
  firstFit(
    'ff-stale-end-key',
    'block-structure',
    "Carving an aligned allocation out of a free block links the tail in after the allocation but leaves the tail's back link on the padding block (where the block whose end the tail keeps started), so a later free finds the wrong block before it",
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        const live = offsetBytes === null ? NIL : this.nodeAt(offsetBytes);
        const before = live === NIL ? NIL : this.list.prev(live);
        const tail = live === NIL ? NIL : this.list.next(live);
        if (before !== NIL && this.list.isFree(before) && tail !== NIL && this.list.isFree(tail))
          this.list.setPrev(tail, before);
        return offsetBytes;
      }
    },
  ),
  firstFit(
    'ff-accepts-bad-alignment',
    'observation',
    'Only the size is validated: a non-power-of-two alignment (0 treated as 1) is served instead of BAD_ALIGN',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        return super.alloc(sizeBytes, isPowerOfTwo(alignBytes) ? alignBytes : 1);
      }
    },
  ),
];

/** First fit's public inspection answers (see INSPECTION_MUTANTS in alloc.ts). */
export const FIRST_FIT_INSPECTION_MUTANTS: AnyMutant[] = [
  firstFit(
    'ff-live-in-allocation-order',
    'inspection-answers',
    'live() lists the allocations in the order they were made (from an insertion-ordered map of live sizes) instead of ascending by offset',
    class extends SteppedFirstFit {
      private readonly madeOrder = new Map<number, number>();
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        if (offsetBytes !== null) this.madeOrder.set(offsetBytes, sizeBytes);
        return offsetBytes;
      }
      override free(offsetBytes: number): void {
        super.free(offsetBytes);
        this.madeOrder.delete(offsetBytes);
      }
      override live(): LiveAllocation[] {
        return [...this.madeOrder].map(([offsetBytes, sizeBytes]) => ({ offsetBytes, sizeBytes }));
      }
    },
  ),
  firstFit(
    'ff-blocks-share-view-records',
    'inspection-answers',
    "blocks() copies the view's array but not its records (blocksView().slice()), so the entries a caller keeps are rewritten by the allocator's next call",
    class extends SteppedFirstFit {
      override blocks(): BlockInfo[] {
        return this.blocksView().slice() as BlockInfo[];
      }
    },
  ),
];

/** The empty-pool fast path (see LIVENESS_MUTANTS in alloc.ts). */
export const FIRST_FIT_LIVENESS_MUTANTS: AnyMutant[] = [
  firstFit(
    'ff-pristine-fast-path-strict',
    'empty-pool-liveness',
    'A fast path for a pristine pool (one free block of full size) checks sizeBytes < capacity, written for "leaves a tail", and answers null otherwise: a request for the whole capacity of an empty pool is refused',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        if (
          this.isPristine() &&
          Number.isSafeInteger(sizeBytes) &&
          sizeBytes >= this.capacityBytes &&
          isPowerOfTwo(alignBytes)
        )
          return null;
        return super.alloc(sizeBytes, alignBytes);
      }
    },
  ),
];

/**
 * First fit's self-check (`checkIndexes()`, src/alloc/first-fit-check.ts): each mutant breaks the
 * node store or the chunk directory the way a plausible bug would, and the comment above it
 * names the condition that reports it at the step it breaks (through `block-structure`).
 */
export const FIRST_FIT_SELF_CHECK_MUTANTS: AnyMutant[] = [
  // "chunk C: largest usable size at alignment A is X, should be Y" (a block taken whole)
  firstFit(
    'ff-empty-chunk-kept',
    'block-structure',
    "A free block taken whole (no padding, no tail) skips its chunk's recomputation (only a split rescans), so the chunk keeps a largest usable size although the block is gone",
    class extends SkipsTreeUpdates {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const count = this.blocksView().length;
        return this.allocSkipping(
          sizeBytes,
          alignBytes,
          'fell',
          'all',
          () => this.blocksView().length === count,
        );
      }
    },
  ),
  // "chunk C: largest usable size at alignment A is X, should be Y" (a freed block, no merge)
  firstFit(
    'ff-lone-free-not-raised',
    'block-structure',
    "A freed block with no free neighbour is marked free but its chunk's values are not raised (only the merging paths raise), so the search never finds it",
    class extends SteppedFirstFit {
      override free(offsetBytes: number): void {
        const node = this.liveNodeAt(offsetBytes);
        this.markFree(node);
        const following = this.list.next(node);
        const before = this.list.prev(node);
        const mergesNext = following !== NIL && this.list.isFree(following);
        const mergesBefore = before !== NIL && this.list.isFree(before);
        if (mergesNext) this.absorbNext(node);
        if (mergesBefore) this.absorbNext(before);
        if (mergesNext || mergesBefore) this.chunks.raise(mergesBefore ? before : node);
      }
    },
  ),
  // "node N is listed but not below the H ids handed out"
  firstFit(
    'ff-new-id-not-counted',
    'block-structure',
    'A node id taken from the high-water mark is handed out without moving the mark, so the next new block gets the same id and overwrites the first',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const mark = this.list.highWater;
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        this.list.highWater = mark;
        return offsetBytes;
      }
    },
  ),
  // "chunk C: largest usable size at alignment A is X, should be Y" (a block behind an allocation)
  firstFit(
    'ff-chunk-copy-size-stale',
    'block-structure',
    "Recomputing a chunk's largest usable size walks its blocks only up to the first allocated one (a loop written for a list of free blocks), so a free block behind an allocation is missing from the chunk's copy of the value",
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        if (offsetBytes === null) return null;
        const list = this.list;
        const chunks = this.chunks;
        const live = this.nodeAt(offsetBytes);
        const padding = list.prev(live);
        const carvedStart =
          padding !== NIL && list.isFree(padding) ? list.start(padding) : offsetBytes;
        const chunk = chunks.chunkOf(carvedStart);
        for (let j = 0; j < chunks.slotCount; j++) {
          let value = 0;
          for (
            let node = chunks.first[chunk]!;
            node !== NIL && list.isFree(node) && chunks.chunkOf(list.start(node)) === chunk;
            node = list.next(node)
          ) {
            value = Math.max(
              value,
              usableAt(list.start(node), list.size(node), chunks.slotAlign[j]!),
            );
          }
          chunks.setLeaf(j, chunk, value);
        }
        return offsetBytes;
      }
    },
  ),
  // "the block at X does not start where the block before it ends (Y)" (the tiling, from the list)
  firstFit(
    'ff-tail-before-padding',
    'block-structure',
    'The tail left after an aligned allocation is linked in before the padding block instead of after the allocation, so the list runs out of offset order',
    class extends SteppedFirstFit {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        const list = this.list;
        const live = offsetBytes === null ? NIL : this.nodeAt(offsetBytes);
        const padding = live === NIL ? NIL : list.prev(live);
        const tail = live === NIL ? NIL : list.next(live);
        if (
          padding === NIL ||
          !list.isFree(padding) ||
          tail === NIL ||
          !list.isFree(tail) ||
          list.prev(padding) === NIL
        )
          return offsetBytes;
        list.setNext(live, list.next(tail));
        if (list.next(tail) !== NIL) list.setPrev(list.next(tail), live);
        list.insertAfter(list.prev(padding), tail);
        return offsetBytes;
      }
    },
  ),
  // "spare id N is listed, repeated or never handed out"
  firstFit(
    'ff-merged-end-names-absorbed',
    'block-structure',
    "A free that joins both free neighbours gives back the surviving previous block's id in place of the absorbed next one's: the survivor stays listed with its id also spare (the next new block overwrites it), the absorbed id is lost",
    class extends SteppedFirstFit {
      override free(offsetBytes: number): void {
        const list = this.list;
        const node = this.nodeAt(offsetBytes);
        const following = node === NIL ? NIL : list.next(node);
        const before = node === NIL ? NIL : list.prev(node);
        const both =
          following !== NIL && before !== NIL && list.isFree(following) && list.isFree(before);
        super.free(offsetBytes);
        if (!both) return;
        for (let i = 0; i < list.spareCount; i++)
          if (list.spare[i] === following) list.spare[i] = before;
      }
    },
  ),
  // "chunk C: largest usable size at alignment A is X, should be Y" (a block that shrank)
  firstFit(
    'ff-shrink-keeps-chunk-max',
    'block-structure',
    'A free block that shrinks or is taken never has its chunk recomputed, so the chunk keeps a largest usable size none of its blocks has',
    class extends SkipsTreeUpdates {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        return this.allocSkipping(sizeBytes, alignBytes, 'fell', 'all');
      }
    },
  ),
  // "tree node I of level D at alignment A holds X, the largest of its children is Y" (a value that rose)
  firstFit(
    'ff-raise-skips-group-max',
    'block-structure',
    "A free block that grows (or a freed one) raises its chunk's leaf but not the maxima of the groups of chunks above it (the tree's inner nodes), so the search skips the group",
    innerUpdatesSkipped('rose'),
  ),
  // "tree node I of level D at alignment A holds X, the largest of its children is Y" (a value that fell)
  firstFit(
    'ff-fall-stays-in-leaf',
    'block-structure',
    "A chunk's value that falls (its largest free block taken or merged away) is lowered in its leaf but not in the maxima above it, so an inner node promises a fit none of its chunks holds: a descent that trusts it ends in a chunk without one and misses a fit further up the heap",
    innerUpdatesSkipped('fell'),
  ),
];
