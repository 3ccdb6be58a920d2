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
import { binOf, BINS, FreeIndex, NOT_INDEXED, padAt } from '../src/alloc/first-fit-index.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { subAllocatorSide } from '../src/systems/alloc-sub.js';
import { allocFirstFitSystem } from '../src/systems/alloc-first-fit.js';

/**
 * First fit made of steps: the shipped allocator's alloc and free (src/alloc/first-fit.ts, each
 * written out in one piece) taken apart into the helpers the catalog's mutants override or call
 * (`search`, `carve`, `liveNodeAt`, `markFree`, `absorbNext`, `reindex`), on the same node store,
 * free indexes and live offsets. Where the shipped code hands a block's index entry to its
 * successor in place, the twin takes the entry out and puts the successor in: the same bins,
 * counts and lowest starts (properties/first-fit-stepped.test.ts holds the two to that after every
 * command), so a mutant of this twin is a bug of the shipped allocator.
 */
export class SteppedFirstFit extends FirstFitAllocator {
  override alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const node = this.search(sizeBytes, alignBytes);
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
    this.reindex(survivor);
  }

  // --- the steps (called by alloc and free; the catalog's mutants call them too) ---------------

  /** The request's index (its floor lowered first when the request's bin is below it), searched. */
  protected search(sizeBytes: number, alignBytes: number): number {
    const index = alignBytes < this.ownIndexAlign ? this.indexes[0]! : this.indexFor(alignBytes);
    const bin = binOf(sizeBytes);
    if (bin < index.floorBin) this.lowerFloor(index, bin & ~7);
    return index.search(sizeBytes, alignBytes, this.list.f64);
  }

  /**
   * Allocates `sizeBytes` at `alignBytes` from the free block `node` (which must fit) and returns
   * the offset: the padding in front stays free as `node` (or, with no padding, `node` becomes
   * the allocation), the tail behind becomes a new free block. The block leaves the indexes; the
   * padding and the tail enter them.
   */
  protected carve(node: number, sizeBytes: number, alignBytes: number): number {
    const list = this.list;
    const start = list.start(node);
    const end = start + list.size(node);
    const offsetBytes = start + padAt(start, alignBytes);
    const allocEnd = offsetBytes + sizeBytes;
    this.unindex(node);
    let live = node;
    if (offsetBytes === start) {
      list.setFree(node, false);
      list.setSize(node, sizeBytes);
    } else {
      list.setSize(node, offsetBytes - start);
      live = list.create(offsetBytes, sizeBytes, false);
      list.insertAfter(node, live);
    }
    let tail = NIL;
    if (allocEnd < end) {
      tail = list.create(allocEnd, end - allocEnd, true);
      list.insertAfter(live, tail);
    }
    if (list.room !== this.indexes[0]!.bin.length) this.growIndexes();
    if (live !== node) this.reindex(node);
    if (tail !== NIL) this.reindex(tail);
    this.offsets.put(offsetBytes, live);
    this.usedBytesTotal += sizeBytes;
    this.liveCount++;
    this.changes++;
    return offsetBytes;
  }

  /** The allocated block starting at `offsetBytes`, or BAD_FREE. */
  protected liveNodeAt(offsetBytes: number): number {
    const node = this.offsets.get(offsetBytes);
    if (node === NIL) throw badFree(offsetBytes);
    return node;
  }

  /** Turns the allocated block `node` into a free one (not yet merged, not yet indexed). */
  protected markFree(node: number): void {
    const list = this.list;
    this.offsets.take(list.start(node));
    this.usedBytesTotal -= list.size(node);
    this.liveCount--;
    list.setFree(node, true);
    this.changes++;
  }

  /** `node` takes over the free block after it, which leaves the indexes (the caller reindexes `node`). */
  protected absorbNext(node: number): void {
    const list = this.list;
    const following = list.next(node);
    this.unindex(following);
    list.setSize(node, list.size(node) + list.size(following));
    list.remove(following);
  }

  /** The free block `node` enters (or moves within) every index as it is now. */
  protected reindex(node: number): void {
    const list = this.list;
    for (const index of this.indexes) index.update(node, list.start(node), list.size(node));
  }

  /** `node` leaves every index. */
  protected unindex(node: number): void {
    for (const index of this.indexes) index.remove(node);
  }

  /** The block (free or allocated) starting at `offsetBytes`, or NIL: a walk of the list. */
  nodeAt(offsetBytes: number): number {
    const list = this.list;
    for (let node = list.head; node !== NIL; node = list.next(node)) {
      if (list.start(node) === offsetBytes) return node;
      if (list.start(node) > offsetBytes) break;
    }
    return NIL;
  }

  /** The free indexes (for the catalog's bookkeeping mutants and the tests). */
  get freeIndexes(): readonly FreeIndex[] {
    return this.indexes;
  }
}

/** A free index whose sifts only write the entry at the hole (for ff-sift-skipped). */
class UnsiftedIndex extends FreeIndex {
  protected override sift(
    heap: Float64Array,
    at: number,
    _count: number,
    start: number,
    node: number,
  ): number {
    heap[2 * at] = start;
    heap[2 * at + 1] = node;
    this.pos[node] = at;
    return at;
  }
}

const firstFit = mutantsOf(
  allocFirstFitSystem,
  (Allocator: new (config: SubAllocatorConfig) => SteppedFirstFit, config, env) =>
    subAllocatorSide(new Allocator(config), config, env),
);

/** What a step changed in each index's tree, kept to put part of it back. */
interface TopsSnapshot {
  tops: Float64Array[];
}

function snapshotTops(indexes: readonly FreeIndex[]): TopsSnapshot {
  return { tops: indexes.map((index) => index.tops.slice()) };
}

/**
 * After a step, puts back the tree values that changed in `direction` (leaves or inner nodes):
 * what the step leaves when it skips those updates. Indexes made by the step are left alone.
 */
function putBack(
  indexes: readonly FreeIndex[],
  before: TopsSnapshot,
  direction: 'fell' | 'rose',
  nodes: 'leaves' | 'inner',
): void {
  for (let k = 0; k < before.tops.length; k++) {
    const tops = indexes[k]!.tops;
    const old = before.tops[k]!;
    const first = nodes === 'leaves' ? 0 : BINS;
    const last = nodes === 'leaves' ? BINS : tops.length;
    for (let i = first; i < last; i++) {
      if (direction === 'fell' ? tops[i]! < old[i]! : tops[i]! > old[i]!) tops[i] = old[i]!;
    }
  }
}

/** A first fit whose alloc and free skip some tree updates (see putBack). */
function treeUpdatesSkipped(direction: 'fell' | 'rose', nodes: 'leaves' | 'inner') {
  return class extends SteppedFirstFit {
    override alloc(sizeBytes: number, alignBytes: number): number | null {
      validateRequest(sizeBytes, alignBytes);
      // The request's index is made (and its floor lowered) before the snapshot.
      const node = this.search(sizeBytes, alignBytes);
      if (node === NIL) return null;
      const before = snapshotTops(this.indexes);
      const offsetBytes = this.carve(node, sizeBytes, alignBytes);
      putBack(this.indexes, before, direction, nodes);
      return offsetBytes;
    }
    override free(offsetBytes: number): void {
      const before = snapshotTops(this.indexes);
      super.free(offsetBytes);
      putBack(this.indexes, before, direction, nodes);
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
        this.reindex(before !== NIL && this.list.isFree(before) ? before : node);
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
 * node store, a free index or the live offsets the way a plausible bug would, and the comment
 * above it names the condition that reports it at the step it breaks (through `block-structure`).
 */
export const FIRST_FIT_SELF_CHECK_MUTANTS: AnyMutant[] = [
  // "the allocated block at X is in bin B of the index at alignment A"
  firstFit(
    'ff-taken-block-stays-indexed',
    'block-structure',
    'A free block taken whole (no padding, no tail) is marked allocated but stays in its bin, so a later search can hand the allocated block out again',
    class extends SteppedFirstFit {
      override carve(node: number, sizeBytes: number, alignBytes: number): number {
        const list = this.list;
        const start = list.start(node);
        const whole = padAt(start, alignBytes) === 0 && sizeBytes === list.size(node);
        if (!whole) return super.carve(node, sizeBytes, alignBytes);
        const bins = this.indexes.map((index) => index.bin[node]!);
        const offsetBytes = super.carve(node, sizeBytes, alignBytes);
        this.indexes.forEach((index, k) => {
          if (bins[k] !== NOT_INDEXED) index.insert(bins[k]!, node, start);
        });
        return offsetBytes;
      }
    },
  ),
  // "the free block at X (usable U, floor bin F) belongs in bin B of the index at alignment A, it is in none" (a freed block)
  firstFit(
    'ff-lone-free-not-indexed',
    'block-structure',
    'A freed block with no free neighbour is marked free but never enters the indexes (only the merging paths reindex), so the search never finds it',
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
        if (mergesNext || mergesBefore) this.reindex(mergesBefore ? before : node);
      }
    },
  ),
  // "the free block at X ... belongs in bin B of the index at alignment A, it is in bin B'" (padding)
  firstFit(
    'ff-padding-keeps-bin',
    'block-structure',
    'The padding left free in front of an aligned allocation stays in the bin of the block it was cut from (a shrink that only touches the list), so the index promises a size the padding lacks',
    class extends SteppedFirstFit {
      override carve(node: number, sizeBytes: number, alignBytes: number): number {
        const start = this.list.start(node);
        const bins = this.indexes.map((index) => index.bin[node]!);
        const offsetBytes = super.carve(node, sizeBytes, alignBytes);
        if (offsetBytes === start) return offsetBytes;
        this.indexes.forEach((index, k) => {
          if (bins[k] === NOT_INDEXED) return;
          index.remove(node);
          index.insert(bins[k]!, node, start);
        });
        return offsetBytes;
      }
    },
  ),
  // "the free block at X ... belongs in bin B of the index at alignment A, it is in none" (a lowered floor)
  firstFit(
    'ff-floor-walk-from-request-bin',
    'block-structure',
    "Lowering an index's floor indexes only the blocks the request itself could use (bins from the request's up), not the whole octave the floor now covers: the blocks in the bins between are left out although the floor says they are kept, so a later, smaller request misses them",
    class extends SteppedFirstFit {
      private requestBin = BINS;
      protected override search(sizeBytes: number, alignBytes: number): number {
        this.requestBin = binOf(sizeBytes);
        return super.search(sizeBytes, alignBytes);
      }
      protected override lowerFloor(index: FreeIndex, floorBin: number): void {
        super.lowerFloor(index, Math.min(index.floorBin, Math.max(floorBin, this.requestBin)));
        index.floorBin = floorBin;
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
        const node = this.offsets.get(offsetBytes);
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
  // "the live offsets hold C entries for D allocations"
  firstFit(
    'ff-free-keeps-offset',
    'block-structure',
    "free() looks the allocation up without taking its offset out of the live offsets (a get where a take belongs), so a second free of the offset finds the block's node again",
    class extends SteppedFirstFit {
      override free(offsetBytes: number): void {
        const node = this.liveNodeAt(offsetBytes);
        super.free(offsetBytes);
        this.offsets.put(offsetBytes, node);
      }
    },
  ),
  // "the free block at X (node N) records position P in bin B at alignment A, which holds node M at Y"
  firstFit(
    'ff-sift-keeps-old-position',
    'block-structure',
    "A heap sift moves entries without updating the positions their nodes record, so a later removal or re-key of such a block works on another block's entry",
    class extends SteppedFirstFit {
      override free(offsetBytes: number): void {
        const before = this.indexes.map((index) => index.pos.slice());
        super.free(offsetBytes);
        this.indexes.forEach((index, k) => {
          const old = before[k]!;
          for (let node = 0; node < old.length; node++) {
            if (index.bin[node] !== NOT_INDEXED && index.pos[node] !== old[node] && old[node] !== 0)
              index.pos[node] = old[node]!;
          }
        });
      }
    },
  ),
  // "bin B at alignment A: the entry at position I starts at X, not after its parent's Y"
  firstFit(
    'ff-sift-skipped',
    'block-structure',
    "A bin's heap writes a moved entry where the hole is without sifting it (the fill after a removal, the in-place re-key of a block that stays in its bin), so the heap runs out of offset order and its top is not the bin's lowest start",
    class extends SteppedFirstFit {
      protected override newIndex(alignBytes: number): FreeIndex {
        return new UnsiftedIndex(alignBytes, this.list.room);
      }
    },
  ),
  // "bin B at alignment A counts C entries, D free blocks are in it"
  firstFit(
    'ff-emptied-bin-keeps-count',
    'block-structure',
    "Removing a bin's last entry returns early before the count is lowered (the early return written for an empty heap), so the bin counts an entry it does not hold",
    class extends SteppedFirstFit {
      override carve(node: number, sizeBytes: number, alignBytes: number): number {
        const counts = this.indexes.map((index) => index.counts.slice());
        const offsetBytes = super.carve(node, sizeBytes, alignBytes);
        this.indexes.forEach((index, k) => {
          for (let b = 0; b < BINS; b++)
            if (index.counts[b] === 0 && counts[k]![b] === 1) index.counts[b] = 1;
        });
        return offsetBytes;
      }
    },
  ),
  // "bin B at alignment A: its lowest start is X, the tree holds Y"
  firstFit(
    'ff-top-kept-after-removal',
    'block-structure',
    "A bin whose lowest entry leaves (taken, merged away or moved) keeps that entry's start in the tree, so the search picks a bin for a block it no longer holds",
    treeUpdatesSkipped('rose', 'leaves'),
  ),
  // "tree node I of level L at alignment A holds X, the least of its children is Y" (a value that fell)
  firstFit(
    'ff-lower-top-not-raised-to-groups',
    'block-structure',
    "A bin's new lowest start (a freed block below its others) is written to its leaf but not to the minima of the groups of bins above it, so a search scanning those groups misses the block",
    treeUpdatesSkipped('fell', 'inner'),
  ),
  // "tree node I of level L at alignment A holds X, the least of its children is Y" (a value that rose)
  firstFit(
    'ff-group-min-stays-low',
    'block-structure',
    "A bin's lowest start that rises (its lowest block taken) is raised in its leaf but not in the minima above it, so a group promises a start none of its bins holds and the descent to it finds no bin",
    treeUpdatesSkipped('rose', 'inner'),
  ),
];
