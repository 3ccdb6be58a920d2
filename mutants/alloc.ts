/**
 * Bug catalog for the sub-allocators (`alloc-buddy`, `alloc-best-fit`, `alloc-first-fit`): each
 * mutant re-creates one pitfall (docs/spec/allocators.md,
 * docs/spec/engine.md#mem-3-4/docs/spec/engine.md#mem-5, VMA/Dawn/OffsetAllocator issues) by
 * overriding one step of the shipped implementation (for best fit: a step of SteppedBestFit, the
 * step-by-step twin of its alloc and free, or the index methods both share).
 */
import { mutantsOf } from './define.js';
import type { AnyMutant, RunEnv } from '../src/harness/system.js';
import {
  alignUp,
  badFree,
  isPowerOfTwo,
  validateRequest,
  type BlockAllocator,
  type BlockInfo,
  type LiveAllocation,
} from '../src/alloc/allocator.js';
import type { SubAllocatorConfig } from '../src/alloc/config.js';
import { BuddyAllocator } from '../src/alloc/buddy.js';
import { BestFitAllocator } from '../src/alloc/best-fit.js';
import { HEAP_REGION_MIN_LOG, NIL } from '../src/alloc/best-fit-state.js';
import { subAllocatorSide } from '../src/systems/alloc-sub.js';
import { allocBuddySystem } from '../src/systems/alloc-buddy.js';
import { allocBestFitSystem } from '../src/systems/alloc-best-fit.js';
import {
  FIRST_FIT_INSPECTION_MUTANTS,
  FIRST_FIT_LIVENESS_MUTANTS,
  FIRST_FIT_MUTANTS,
  FIRST_FIT_SELF_CHECK_MUTANTS,
} from './alloc-first-fit.js';

type AllocatorClass = new (config: SubAllocatorConfig) => BlockAllocator;

/** A mutant's side: each system's config is a SubAllocatorConfig, which every allocator class takes. */
const makeSide = (Allocator: AllocatorClass, config: SubAllocatorConfig, env: RunEnv) =>
  subAllocatorSide(new Allocator(config), config, env);
const buddy = mutantsOf(allocBuddySystem, makeSide);
const bestFit = mutantsOf(allocBestFitSystem, makeSide);

export const BUDDY_MUTANTS: AnyMutant[] = [
  buddy(
    'buddy-wrong-buddy',
    'block-structure',
    'The buddy is taken as offset + size instead of offset XOR size, so a right child merges with the next block (misaligned, overlapping orders)',
    class extends BuddyAllocator {
      protected override buddyOf(unit: number, order: number): number {
        return unit + (1 << order);
      }
    },
  ),
  buddy(
    'buddy-split-keeps-right',
    'observation',
    "Splitting keeps the right half and frees the left one: still a valid buddy allocator, but not the spec's (lowest offset first)",
    class extends BuddyAllocator {
      protected override split(unit: number, fromOrder: number, toOrder: number): number {
        let at = unit;
        for (let order = fromOrder - 1; order >= toOrder; order--) {
          this.pushFree(at, order);
          at += 1 << order;
        }
        return at;
      }
    },
  ),
  buddy(
    'buddy-top-order-unreachable',
    'empty-pool-liveness',
    'The search for a larger free order stops below maxOrder (k < maxOrder), so the whole-capacity block is never split: out of memory on an empty allocator',
    class extends BuddyAllocator {
      protected override smallestFreeOrderAtLeast(order: number): number {
        const candidates = this.nonEmptyOrders & ~((1 << order) - 1) & ((1 << this.maxOrder) - 1);
        return candidates === 0 ? -1 : 31 - Math.clz32(candidates & -candidates);
      }
    },
  ),
  buddy(
    'buddy-order-ignores-align',
    'in-bounds-aligned',
    "The order comes from the size alone: the block is smaller than the spec's (less waste than the model counts) and aligned only to its own size, not to a larger requested alignment",
    class extends BuddyAllocator {
      protected override orderFor(sizeBytes: number, _alignBytes: number): number {
        return super.orderFor(sizeBytes, 1);
      }
    },
  ),
  buddy(
    'buddy-oversize-takes-whole-heap',
    'in-bounds-aligned',
    'A request larger than the heap has its order clamped to the top order (Math.min(order, maxOrder), written to keep the free-list index in range) instead of answering null: on an empty heap it gets the whole heap and runs past its end',
    class extends BuddyAllocator {
      protected override orderFor(sizeBytes: number, alignBytes: number): number {
        return Math.min(super.orderFor(sizeBytes, alignBytes), this.maxOrder);
      }
    },
  ),
  buddy(
    'buddy-returns-units',
    'no-overlap',
    'alloc returns the block index in minBlock units instead of its byte offset (index/offset confusion): the caller writes over a neighbour',
    class extends BuddyAllocator {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        return offsetBytes === null ? null : offsetBytes / this.minBlockBytes;
      }
    },
  ),
  buddy(
    'buddy-interior-free-accepted',
    'honest-answers',
    'free() rounds the offset down to the order-0 block, so a free of an interior offset silently frees the allocation',
    class extends BuddyAllocator {
      protected override liveUnitAt(offsetBytes: number): number {
        const rounded = Number.isSafeInteger(offsetBytes)
          ? offsetBytes - (offsetBytes % this.minBlockBytes)
          : offsetBytes;
        return super.liveUnitAt(rounded);
      }
    },
  ),
  buddy(
    'buddy-merge-one-level',
    'block-structure',
    'Free merges with its buddy once and stops, so merges never cascade and everything freed leaves split blocks',
    class extends BuddyAllocator {
      protected override release(unit: number, order: number): void {
        const buddy = this.buddyOf(unit, order);
        if (order < this.maxOrder && this.freeLists[order]!.test(buddy >>> order)) {
          this.removeFree(buddy, order);
          this.pushFree(Math.min(unit, buddy), order + 1);
        } else {
          this.pushFree(unit, order);
        }
      }
    },
  ),
  buddy(
    'buddy-used-counts-blocks',
    'accounting',
    "usedBytes() reports the block bytes instead of the callers' bytes, hiding internal waste from the budget",
    class extends BuddyAllocator {
      override usedBytes(): number {
        return this.blockBytesTotal;
      }
      override wasteBytes(): number {
        return 0;
      }
    },
  ),
  buddy(
    'buddy-free-counts-merged-block',
    'accounting',
    'free() subtracts the size of the block after merging (the buddy pair it became) from the allocated-bytes counter instead of the size of the block it freed, so the free-bytes total drifts from the free blocks',
    class extends BuddyAllocator {
      protected override release(unit: number, order: number): void {
        const before = this.blockBytesTotal;
        let at = unit;
        let k = order;
        while (k < this.maxOrder && this.freeLists[k]!.test(this.buddyOf(at, k) >>> k)) {
          at = Math.min(at, this.buddyOf(at, k));
          k++;
        }
        super.release(unit, order);
        this.blockBytesTotal =
          before + this.minBlockBytes * 2 ** order - this.minBlockBytes * 2 ** k;
      }
    },
  ),
];

/**
 * Best fit's alloc and free spelled out as the steps its pitfalls live in (the limit, the
 * reservation, the choice, the split, the caller offset, the two merges), built from the
 * allocator's own index and node-pool methods. The shipped alloc and free do the same work
 * written out in one piece each (no step seam on the hot path); a mutant overrides one step of
 * this twin. properties/best-fit-stepped.test.ts holds the twin to the shipped allocator, answer
 * for answer and block for block.
 */
export class SteppedBestFit extends BestFitAllocator {
  override alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    if (!this.withinLimit(sizeBytes)) return null;
    const reservationUnits = this.reservationBytes(sizeBytes, alignBytes) / this.poolAlignBytes;
    if (reservationUnits > this.capacityUnits) return null;
    const node = this.chooseFree(reservationUnits);
    if (node === NIL) return null;
    this.indexRemove(node);
    this.takeLowEnd(node, reservationUnits);
    const offsetBytes = this.callerOffset(node, alignBytes);
    this.isFree[node] = 0;
    this.userOffsetBytes[node] = offsetBytes;
    this.userSizeBytes[node] = sizeBytes;
    this.liveAtUnit[offsetBytes / this.poolAlignBytes] = node + 1;
    this.liveCount++;
    this.usedBytesTotal += sizeBytes;
    this.reservedBytesTotal += reservationUnits * this.poolAlignBytes;
    this.blocksValid = false;
    return offsetBytes;
  }

  override free(offsetBytes: number): void {
    const node = this.liveNodeOrNil(offsetBytes);
    if (node === NIL) throw badFree(offsetBytes);
    this.liveAtUnit[offsetBytes / this.poolAlignBytes] = 0;
    this.liveCount--;
    this.usedBytesTotal -= this.userSizeBytes[node]!;
    this.reservedBytesTotal -= this.sizeUnits[node]! * this.poolAlignBytes;
    this.isFree[node] = 1;
    this.userSizeBytes[node] = 0;
    this.mergeNext(node);
    this.indexInsert(this.mergePrevious(node));
    this.blocksValid = false;
  }

  /** The single-allocation limit: larger requests belong to the committed path. */
  protected withinLimit(sizeBytes: number): boolean {
    return sizeBytes <= this.maxAllocationBytes;
  }

  /** The spec's aligned-size rule (the pool alignment is a multiple of alignBytes, or not). */
  protected reservationBytes(sizeBytes: number, alignBytes: number): number {
    const pool = this.poolAlignBytes;
    return alignBytes <= pool ? alignUp(sizeBytes, pool) : alignUp(sizeBytes + alignBytes, pool);
  }

  /** The first free block in (size, offset) order that holds `reservationUnits`, or NIL. */
  protected chooseFree(reservationUnits: number): number {
    const size = this.freeSizes.findNext(reservationUnits);
    return size < 0 ? NIL : this.heapArena[this.heapBase[size]! + 3]!;
  }

  /** Shrinks the (unindexed) block to its low `units`; the rest becomes a free, indexed block. */
  protected takeLowEnd(node: number, units: number): void {
    const restUnits = this.sizeUnits[node]! - units;
    if (restUnits === 0) return;
    this.sizeUnits[node] = units;
    const rest = this.newNode(this.offsetUnits[node]! + units, restUnits, node, this.next[node]!);
    if (this.next[node] !== NIL) this.prev[this.next[node]!] = rest;
    this.next[node] = rest;
    this.indexInsert(rest);
  }

  /** Where the caller's bytes start inside the block. */
  protected callerOffset(node: number, alignBytes: number): number {
    return alignUp(this.offsetUnits[node]! * this.poolAlignBytes, alignBytes);
  }

  /** Absorbs a free next neighbour into the (unindexed, free) block. */
  protected mergeNext(node: number): void {
    const after = this.next[node]!;
    if (after === NIL || this.isFree[after] === 0) return;
    this.indexRemove(after);
    this.sizeUnits[node]! += this.sizeUnits[after]!;
    this.unlink(after);
  }

  /** Lets a free previous neighbour absorb the (unindexed, free) block; returns the survivor. */
  protected mergePrevious(node: number): number {
    const before = this.prev[node]!;
    if (before === NIL || this.isFree[before] === 0) return node;
    this.indexRemove(before);
    this.sizeUnits[before]! += this.sizeUnits[node]!;
    this.unlink(node);
    return before;
  }
}

export const BEST_FIT_MUTANTS: AnyMutant[] = [
  bestFit(
    'bf-chooses-first-fit',
    'observation',
    'The search takes the lowest-offset block that is large enough instead of the smallest (first fit posing as best fit)',
    class extends SteppedBestFit {
      protected override chooseFree(reservationUnits: number): number {
        for (let node = this.head; node !== -1; node = this.next[node]!) {
          if (this.isFree[node] === 1 && this.sizeUnits[node]! >= reservationUnits) return node;
        }
        return -1;
      }
    },
  ),
  bestFit(
    'bf-padding-not-reserved',
    'in-bounds-aligned',
    'The block is sized alignUp(size, poolAlign) even when the alignment exceeds the pool alignment: less reserved than the spec (the model counts more waste), and the aligned-up offset can run past the block into its neighbour',
    class extends SteppedBestFit {
      protected override reservationBytes(sizeBytes: number): number {
        return alignUp(sizeBytes, this.poolAlignBytes);
      }
    },
  ),
  bestFit(
    'bf-returns-units',
    'no-overlap',
    'alloc returns the caller offset in pool-alignment units instead of bytes (index/offset confusion): the caller writes over a neighbour',
    class extends BestFitAllocator {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        return offsetBytes === null ? null : offsetBytes / this.poolAlignBytes;
      }
    },
  ),
  bestFit(
    'bf-offset-not-aligned',
    'in-bounds-aligned',
    'The caller gets the block start instead of alignUp(blockStart, align) when the alignment exceeds the pool alignment',
    class extends SteppedBestFit {
      protected override callerOffset(node: number): number {
        return this.offsetUnits[node]! * this.poolAlignBytes;
      }
    },
  ),
  bestFit(
    'bf-double-free-ignored',
    'honest-answers',
    'A free of an offset whose block is already free returns silently (FRHIMemoryPool does not check) instead of BAD_FREE',
    class extends BestFitAllocator {
      override free(offsetBytes: number): void {
        for (let node = this.head; node !== -1; node = this.next[node]!) {
          if (
            this.isFree[node] === 1 &&
            this.offsetUnits[node]! * this.poolAlignBytes === offsetBytes
          )
            return;
        }
        super.free(offsetBytes);
      }
    },
  ),
  bestFit(
    'bf-used-drops-block-size',
    'accounting',
    "Free subtracts the block's reserved size from the used total instead of the caller's size, so used bytes drift below what callers hold",
    class extends BestFitAllocator {
      override free(offsetBytes: number): void {
        const node = this.liveNodeOrNil(offsetBytes);
        const wasteBytes =
          node === -1 ? 0 : this.sizeUnits[node]! * this.poolAlignBytes - this.userSizeBytes[node]!;
        super.free(offsetBytes);
        this.usedBytesTotal -= wasteBytes;
      }
    },
  ),
  bestFit(
    'bf-limit-rounds-size',
    'empty-pool-liveness',
    'The single-allocation limit compares the pool-rounded size, so a request just under the limit is sent to the committed path',
    class extends SteppedBestFit {
      protected override withinLimit(sizeBytes: number): boolean {
        return alignUp(sizeBytes, this.poolAlignBytes) <= this.maxAllocationBytes;
      }
    },
  ),
  bestFit(
    'bf-no-merge-next',
    'block-structure',
    'Free merges with the previous neighbour only; free space after the block stays split (false out of memory later)',
    class extends SteppedBestFit {
      protected override mergeNext(): void {}
    },
  ),
  bestFit(
    'bf-split-rest-unindexed',
    'block-structure',
    'Splitting links the remainder into the block list but forgets to add it to the size-sorted free blocks',
    class extends SteppedBestFit {
      protected override takeLowEnd(node: number, units: number): void {
        const restUnits = this.sizeUnits[node]! - units;
        if (restUnits === 0) return;
        super.takeLowEnd(node, units);
        const rest = this.next[node]!;
        this.indexRemove(rest);
      }
    },
  ),
];

/**
 * The public inspection answers (issue 11): bugs confined to live(), blocks() and best fit's
 * freeBlocksBySize(), which callers use and the other checks never read (they read the view
 * twins liveView()/blocksView()). Each is caught by `inspection-answers`. They override public
 * methods only, so they stay valid whatever the allocators' internals become.
 */
export const INSPECTION_MUTANTS: AnyMutant[] = [
  buddy(
    'buddy-live-reports-block-size',
    'inspection-answers',
    "live() is derived from the allocated blocks and reports each block's size (a power of two of the order-0 size) instead of the size the caller asked for",
    class extends BuddyAllocator {
      override live(): LiveAllocation[] {
        return this.blocks()
          .filter((block) => !block.free)
          .map((block) => ({ offsetBytes: block.offsetBytes, sizeBytes: block.sizeBytes }));
      }
    },
  ),
  buddy(
    'buddy-blocks-skip-top-order',
    'inspection-answers',
    'blocks() collects the free blocks from the free lists of orders below the top one (k < maxOrder), so the whole-heap free block of an empty heap is missing and blocks() answers an empty list',
    class extends BuddyAllocator {
      override blocks(): BlockInfo[] {
        return super
          .blocks()
          .filter((block) => !(block.free && block.sizeBytes === this.capacityBytes));
      }
    },
  ),
  bestFit(
    'bf-live-returns-view',
    'inspection-answers',
    "live() returns the reused view (liveView()) instead of a copy: the array a caller keeps is rewritten by the allocator's next call",
    class extends BestFitAllocator {
      override live(): LiveAllocation[] {
        return this.liveView() as LiveAllocation[];
      }
    },
  ),
  bestFit(
    'bf-blocks-caller-ranges',
    'inspection-answers',
    "blocks() reports each allocated block as the caller's range (aligned offset, requested size) instead of the reserved block, so the padding and the rounding vanish from the tiling it shows",
    class extends BestFitAllocator {
      override blocks(): BlockInfo[] {
        const live = this.live();
        let next = 0;
        return super.blocks().map((block) => {
          if (block.free) return block;
          const range = live[next++]!;
          return { offsetBytes: range.offsetBytes, sizeBytes: range.sizeBytes, free: false };
        });
      }
    },
  ),
  bestFit(
    'bf-pristine-ignores-free-flag',
    'inspection-answers',
    'isPristine() checks that the first block spans the pool but not that it is free, so a pool holding one allocation of its whole capacity calls itself pristine',
    class extends BestFitAllocator {
      override isPristine(): boolean {
        const blocks = this.blocksView();
        return blocks.length === 1 && blocks[0]!.sizeBytes === this.capacityBytes;
      }
    },
  ),
  bestFit(
    'bf-free-by-size-ties-descending',
    'inspection-answers',
    "freeBlocksBySize() walks each size's free blocks from the top of its tree down, so equal-size free blocks come out by descending offset instead of the spec's ascending (FreeBlocks ties: lower offset first)",
    class extends BestFitAllocator {
      override freeBlocksBySize(): { offsetBytes: number; sizeBytes: number }[] {
        const ascending = super.freeBlocksBySize();
        const out: { offsetBytes: number; sizeBytes: number }[] = [];
        for (let start = 0; start < ascending.length; ) {
          let end = start;
          while (
            end < ascending.length &&
            ascending[end]!.sizeBytes === ascending[start]!.sizeBytes
          )
            end++;
          for (let i = end - 1; i >= start; i--) out.push(ascending[i]!);
          start = end;
        }
        return out;
      }
    },
  ),
  ...FIRST_FIT_INSPECTION_MUTANTS,
];

/**
 * A budget check carried over from a CPU heap: before searching, alloc refuses a request larger
 * than the free bytes minus a 16-byte header per live allocation. GPU sub-allocators keep no
 * headers in the pool, so with allocations live a request that fits the remaining free bytes is
 * refused: a false out-of-memory that never shows on an empty pool.
 */
const HEADER_BUDGET_BYTES = 16;

/** The liveness bugs (issue 13) and the byte counts the shifted catalog left without a mutant. */
export const LIVENESS_MUTANTS: AnyMutant[] = [
  buddy(
    'buddy-header-budget',
    'no-false-out-of-memory',
    `alloc refuses a request larger than freeBytes() minus ${HEADER_BUDGET_BYTES} bytes per live allocation (a CPU heap's header budget): false out of memory while allocations are live`,
    class extends BuddyAllocator {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const live = this.liveView().length;
        const valid = Number.isSafeInteger(sizeBytes) && sizeBytes > 0 && isPowerOfTwo(alignBytes);
        if (valid && live > 0 && sizeBytes > this.freeBytes() - HEADER_BUDGET_BYTES * live)
          return null;
        return super.alloc(sizeBytes, alignBytes);
      }
    },
  ),
  bestFit(
    'bf-header-budget',
    'no-false-out-of-memory',
    `alloc refuses a request larger than freeBytes() minus ${HEADER_BUDGET_BYTES} bytes per live allocation (a CPU heap's header budget): false out of memory while allocations are live`,
    class extends BestFitAllocator {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const live = this.liveView().length;
        const valid = Number.isSafeInteger(sizeBytes) && sizeBytes > 0 && isPowerOfTwo(alignBytes);
        if (valid && live > 0 && sizeBytes > this.freeBytes() - HEADER_BUDGET_BYTES * live)
          return null;
        return super.alloc(sizeBytes, alignBytes);
      }
    },
  ),
  ...FIRST_FIT_LIVENESS_MUTANTS,
  buddy(
    'buddy-exact-power-one-order-up',
    'matches-model',
    'The order is computed as bit length of the size in order-0 units (32 - clz32(units)) instead of that of units - 1, so a request of exactly minBlock * 2^k takes a block twice as large: the same offsets at first, twice the waste the spec counts',
    class extends BuddyAllocator {
      protected override orderFor(sizeBytes: number, alignBytes: number): number {
        const order = super.orderFor(sizeBytes, alignBytes);
        const units = Math.max(sizeBytes, alignBytes) / this.minBlockBytes;
        return units >= 1 && isPowerOfTwo(units) ? order + 1 : order;
      }
    },
  ),
  bestFit(
    'bf-reservation-extra-unit',
    'matches-model',
    'The reservation is alignUp(size + 1, poolAlign) (a terminator byte kept from a string pool), so a size that is a multiple of the pool alignment reserves one unit more than the spec: the same offsets at first, more waste than the model counts',
    class extends SteppedBestFit {
      protected override reservationBytes(sizeBytes: number, alignBytes: number): number {
        return super.reservationBytes(sizeBytes + 1, alignBytes);
      }
    },
  ),
];

/**
 * The allocators' self-checks (issues 11 and 14): each mutant corrupts exactly one internal index
 * the way a plausible bug would, so that `checkIndexes()` reports it with the message of one
 * condition (named in the comment above each) at the step the index breaks, before any answer
 * goes wrong. Their stored regressions make every campaign's preflight run those conditions and
 * the defensive fallbacks for a broken index.
 */
export const SELF_CHECK_MUTANTS: AnyMutant[] = [
  ...FIRST_FIT_SELF_CHECK_MUTANTS,
  // best fit: "size S has its bit set but no free blocks"
  bestFit(
    'bf-emptied-size-bit-kept',
    'block-structure',
    "Removing a size's last free block gives its heap back but leaves the size's bit set in the bitset of sizes, so the search can pick a size with no block",
    class extends SteppedBestFit {
      protected override indexRemove(node: number): void {
        const size = this.sizeUnits[node]!;
        const last = this.heapView(size)[0] === 1;
        super.indexRemove(node);
        if (last) this.freeSizes.set(size);
      }
    },
  ),
  // best fit: "size S: the heap counts N entries but has room for M"
  bestFit(
    'bf-heap-grows-late',
    'block-structure',
    "Heaps start with room for one entry (most sizes hold one free block) and move to a longer region only once the entry count exceeds half the region's length (count > length / 2) instead of when the next (offset, node) pair would not fit, so the second block of a size is written past the region's end",
    class extends SteppedBestFit {
      protected override indexInsert(node: number): void {
        const size = this.sizeUnits[node]!;
        let base = this.heapBase[size]!;
        if (base === -1) {
          base = this.newRegion(2);
          this.heapBase[size] = base;
          this.freeSizes.set(size);
        }
        const count = this.heapArena[base]! + 1;
        if (count > this.heapArena[base + 1]! >> 1) base = this.moveToLongerRegion(size, base);
        this.heapArena[base] = count;
        this.siftUp(base, count, this.offsetUnits[node]!, node);
        this.indexedCount++;
      }
    },
  ),
  // best fit: "size S: heap entry I names no node (N)"
  bestFit(
    'bf-heap-pair-swapped',
    'block-structure',
    "A new heap entry is stored as (node, offset) instead of (offset, node), so the entry's node is the block's offset in units",
    class extends SteppedBestFit {
      protected override indexInsert(node: number): void {
        super.indexInsert(node);
        const heap = this.heapView(this.sizeUnits[node]!);
        const at = this.heapPos[node]!;
        heap[2 * at] = node;
        heap[2 * at + 1] = this.offsetUnits[node]!;
      }
    },
  ),
  // best fit: "the size index reaches node N twice"
  bestFit(
    'bf-heap-hole-count-kept',
    'block-structure',
    "Removing an entry from the middle of a size's heap moves the last entry into the hole but does not shrink the heap, so the moved block is listed twice",
    class extends SteppedBestFit {
      protected override indexRemove(node: number): void {
        const heap = this.heapView(this.sizeUnits[node]!);
        const count = heap[0]!;
        const at = this.heapPos[node]!;
        super.indexRemove(node);
        if (count > 1 && at !== count) heap[0] = count;
      }
    },
  ),
  // best fit: "the size index lists node N under size S but it is not a free block of that size"
  bestFit(
    'bf-exact-fit-stays-indexed',
    'block-structure',
    'A block taken whole (no remainder to split off) stays in the size index: only the split path takes the chosen block out',
    class extends SteppedBestFit {
      protected override takeLowEnd(node: number, units: number): void {
        if (this.sizeUnits[node] === units) this.indexInsert(node);
        else super.takeLowEnd(node, units);
      }
    },
  ),
  // best fit: "size S: heap entry I keeps offset X for node N at Y"
  bestFit(
    'bf-heap-keyed-by-bytes',
    'block-structure',
    "The size heaps are keyed by the block's offset in bytes instead of pool-alignment units (unit/byte confusion): the order is the same, the keys are not the blocks' offsets",
    class extends SteppedBestFit {
      protected override indexInsert(node: number): void {
        super.indexInsert(node);
        const heap = this.heapView(this.sizeUnits[node]!);
        heap[2 * this.heapPos[node]!] = this.offsetUnits[node]! * this.poolAlignBytes;
      }
    },
  ),
  // best fit: "size S: node N records heap position P but sits at I"
  bestFit(
    'bf-sift-up-parent-position-stale',
    'block-structure',
    'Sifting an entry up a size heap moves the parents down without recording their new positions, so removing one later takes the wrong entry out',
    class extends SteppedBestFit {
      protected override siftUp(base: number, at: number, key: number, node: number): void {
        const heap = this.heapArena;
        let i = at;
        while (i > 1 && heap[base + 2 * (i >> 1)]! > key) {
          heap[base + 2 * i] = heap[base + 2 * (i >> 1)]!;
          heap[base + 2 * i + 1] = heap[base + 2 * (i >> 1) + 1]!;
          i >>= 1;
        }
        heap[base + 2 * i] = key;
        heap[base + 2 * i + 1] = node;
        this.heapPos[node] = i;
      }
    },
  ),
  // best fit: "size S: node N sits below a parent with a higher offset"
  bestFit(
    'bf-insert-without-sift',
    'block-structure',
    "A new entry is appended at the end of its size's heap without sifting up (new blocks usually lie at higher offsets), so a lower offset can sit below a higher one",
    class extends SteppedBestFit {
      protected override siftUp(base: number, at: number, key: number, node: number): void {
        this.heapArena[base + 2 * at] = key;
        this.heapArena[base + 2 * at + 1] = node;
        this.heapPos[node] = at;
      }
    },
  ),
  // best fit: "size S: node N sits below a parent with a higher offset" (by a removal)
  bestFit(
    'bf-sift-down-left-child-only',
    'block-structure',
    'Sifting an entry down a size heap compares it with the left child only, so when the right child has the lower offset the heap order breaks (and the lowest offset of a size is no longer on top)',
    class extends SteppedBestFit {
      protected override siftDown(
        base: number,
        at: number,
        count: number,
        key: number,
        node: number,
      ): void {
        const heap = this.heapArena;
        let i = at;
        while (2 * i <= count && heap[base + 4 * i]! < key) {
          heap[base + 2 * i] = heap[base + 4 * i]!;
          heap[base + 2 * i + 1] = heap[base + 4 * i + 1]!;
          this.heapPos[heap[base + 2 * i + 1]!] = i;
          i *= 2;
        }
        heap[base + 2 * i] = key;
        heap[base + 2 * i + 1] = node;
        this.heapPos[node] = i;
      }
    },
  ),
  // best fit: "size S has free blocks but its bit is clear"
  bestFit(
    'bf-reused-heap-bit-clear',
    'block-structure',
    "A size's bit is set only when a new heap region is carved from the arena, not when the size takes a region another heap gave back, so the search never sees that size",
    class extends SteppedBestFit {
      protected override indexInsert(node: number): void {
        const size = this.sizeUnits[node]!;
        const reused =
          this.heapBase[size] === -1 && (this.spareRegions[HEAP_REGION_MIN_LOG]?.length ?? 0) > 0;
        super.indexInsert(node);
        if (reused) this.freeSizes.clear(size);
      }
    },
  ),
  // best fit: "the size index holds N entries but counts M"
  bestFit(
    'bf-last-entry-uncounted',
    'block-structure',
    "Removing a size's last free block gives the heap back and returns before the index's entry count is decremented",
    class extends SteppedBestFit {
      protected override indexRemove(node: number): void {
        const last = this.heapView(this.sizeUnits[node]!)[0] === 1;
        super.indexRemove(node);
        if (last) this.indexedCount++;
      }
    },
  ),
  // best fit: "node N: prev link does not point at the previous block"
  bestFit(
    'bf-split-prev-stale',
    'block-structure',
    "Splitting links the remainder after the block but leaves the next block's prev link pointing at the block, skipping the remainder",
    class extends SteppedBestFit {
      protected override takeLowEnd(node: number, units: number): void {
        const split = this.sizeUnits[node]! > units;
        super.takeLowEnd(node, units);
        const after = split ? this.next[this.next[node]!]! : -1;
        if (after !== -1) this.prev[after] = node;
      }
    },
  ),
  // best fit: "allocated block at X is not found by its caller offset"
  bestFit(
    'bf-live-keyed-by-block-start',
    'block-structure',
    "The live allocation is filed under its block's start instead of the caller's (aligned) offset, so with an alignment above the pool's a later free of that offset is refused",
    class extends BestFitAllocator {
      override alloc(sizeBytes: number, alignBytes: number): number | null {
        const offsetBytes = super.alloc(sizeBytes, alignBytes);
        if (offsetBytes === null) return null;
        const node = this.liveAtUnit[offsetBytes / this.poolAlignBytes]! - 1;
        this.liveAtUnit[offsetBytes / this.poolAlignBytes] = 0;
        this.liveAtUnit[this.offsetUnits[node]!] = node + 1;
        return offsetBytes;
      }
    },
  ),
  // best fit: "the size index holds N entries for M free blocks"
  bestFit(
    'bf-merge-next-relinked-by-hand',
    'block-structure',
    'Merging with the next free block relinks the list around it by hand and forgets to take it out of the size index (and to recycle its node)',
    class extends SteppedBestFit {
      protected override mergeNext(node: number): void {
        const after = this.next[node]!;
        if (after === -1 || this.isFree[after] === 0) return;
        this.sizeUnits[node]! += this.sizeUnits[after]!;
        const further = this.next[after]!;
        this.next[node] = further;
        if (further !== -1) this.prev[further] = node;
      }
    },
  ),
  // best fit: "L live allocations counted for A allocated blocks"
  bestFit(
    'bf-free-keeps-live-count',
    'block-structure',
    'free() forgets to decrement the live-allocation count (read only by isPristine and the self-check)',
    class extends BestFitAllocator {
      override free(offsetBytes: number): void {
        super.free(offsetBytes);
        this.liveCount++;
      }
    },
  ),
  // buddy: "order K holds N free blocks but its non-empty bit disagrees"
  buddy(
    'buddy-nonempty-bit-kept',
    'block-structure',
    "Taking a block off a free list clears its bit but never the order's non-empty bit, so the search can pick an order with no free block",
    class extends BuddyAllocator {
      protected override removeFree(unit: number, order: number): void {
        this.freeLists[order]!.clear(unit >>> order);
      }
    },
  ),
  // buddy: "the free lists hold B blocks, the tiling has F free blocks"
  buddy(
    'buddy-taken-block-bit-kept',
    'block-structure',
    'Taking the lowest free block of an order for an allocation finds it but leaves its free-list bit set, so the block is both allocated and listed free',
    class extends BuddyAllocator {
      protected override popLowest(order: number): number {
        return this.freeLists[order]!.findFirst() << order;
      }
    },
  ),
  // buddy: "A allocated blocks but L live allocations counted"
  buddy(
    'buddy-free-keeps-live-count',
    'block-structure',
    'free() forgets to decrement the live-allocation count (read only by isPristine and the self-check)',
    class extends BuddyAllocator {
      override free(offsetBytes: number): void {
        super.free(offsetBytes);
        this.liveCount++;
      }
    },
  ),
];

export const ALLOC_MUTANTS: AnyMutant[] = [
  ...BUDDY_MUTANTS,
  ...BEST_FIT_MUTANTS,
  ...FIRST_FIT_MUTANTS,
  ...INSPECTION_MUTANTS,
  ...LIVENESS_MUTANTS,
  ...SELF_CHECK_MUTANTS,
];
