/**
 * The buddy allocator as an engine would ship it (docs/spec/allocators.md#al-buddy; VMA 2.3, Dawn).
 *
 * Offsets are kept in units of minBlockBytes, so a block of order k at unit u has u a multiple of
 * 2^k and its buddy is `u ^ (1 << k)` (the spec's offset XOR size, on 32-bit units).
 * - One BitsetIndex per order is that order's free list: bit (u >> k) set = free block of order
 *   k at unit u. "Lowest-offset free block of order k" is findFirst(): one word per level from
 *   the top, O(log32 n).
 * - `nonEmptyOrders` has bit k set when order k has a free block, so the smallest order >= k
 *   with a free block is one mask and one count-trailing-zeros.
 * - `allocationOrder[u]` is the order of the live allocation starting at unit u, or -1: free()
 *   validates and finds the block in O(1); `allocationSizeBytes[u]` keeps the caller's size - 1.
 * alloc and free are O(maxOrder * log32 n) worst case, with no allocation on the hot path.
 *
 * Steps are protected methods so the bug catalog (mutants/) can re-create a pitfall by
 * overriding one of them; nothing in src/ depends on that catalog.
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
import {
  buddyMaxOrder,
  checkSubAllocatorConfig,
  DEFAULT_MIN_BLOCK_BYTES,
  type SubAllocatorConfig,
} from './config.js';
import { BitsetIndex, lowestBit } from './bitset-index.js';

export class BuddyAllocator implements BlockAllocator {
  readonly capacityBytes: number;
  readonly minBlockBytes: number;
  readonly maxOrder: number;
  /** freeLists[k]: bit (unit >> k) set when a free block of order k starts at that unit. */
  protected readonly freeLists: BitsetIndex[] = [];
  /** Bit k set when freeLists[k] is non-empty. */
  protected nonEmptyOrders = 0;
  /** Order of the live allocation starting at each unit, or -1. */
  protected readonly allocationOrder: Int8Array;
  /**
   * The caller's size minus one of the live allocation starting at each unit: 4 bytes per unit
   * when that fits 32 bits (capacity <= 4 GiB), else 8. With the order byte that is 5 bytes per order-0
   * block, e.g. 80 MiB for a 4 GiB heap of 256-byte blocks.
   */
  protected readonly allocationSizeBytes: Uint32Array | Float64Array;
  protected liveCount = 0;
  protected usedBytesTotal = 0;
  protected blockBytesTotal = 0;
  /**
   * The last walk of the blocks (inspection only), stale after every alloc and free: the blocks
   * as reused objects, the first unit in no block (or null) and the free block count.
   */
  private walkValid = false;
  private readonly walkBlocks: { offsetBytes: number; sizeBytes: number; free: boolean }[] = [];
  /** The records liveView() hands out, rewritten on every call. */
  private readonly livePool: { offsetBytes: number; sizeBytes: number }[] = [];
  private walkError: string | null = null;
  private walkFreeBlockCount = 0;

  constructor(config: SubAllocatorConfig) {
    checkSubAllocatorConfig('buddy', config);
    this.capacityBytes = config.capacityBytes;
    this.minBlockBytes = config.minBlockBytes ?? DEFAULT_MIN_BLOCK_BYTES;
    this.maxOrder = buddyMaxOrder(config);
    const units = 2 ** this.maxOrder;
    for (let order = 0; order <= this.maxOrder; order++)
      this.freeLists.push(new BitsetIndex(2 ** (this.maxOrder - order)));
    this.allocationOrder = new Int8Array(units).fill(-1);
    this.allocationSizeBytes =
      this.capacityBytes <= 2 ** 32 ? new Uint32Array(units) : new Float64Array(units);
    this.pushFree(0, this.maxOrder);
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    this.walkValid = false;
    const order = this.orderFor(sizeBytes, alignBytes);
    if (order > this.maxOrder) return null;
    const fromOrder = this.smallestFreeOrderAtLeast(order);
    if (fromOrder < 0) return null;
    const unit = this.split(this.popLowest(fromOrder), fromOrder, order);
    this.allocationOrder[unit] = order;
    this.allocationSizeBytes[unit] = sizeBytes - 1;
    this.liveCount++;
    this.usedBytesTotal += sizeBytes;
    this.blockBytesTotal += this.minBlockBytes * (1 << order);
    return unit * this.minBlockBytes;
  }

  free(offsetBytes: number): void {
    const unit = this.liveUnitAt(offsetBytes);
    this.walkValid = false;
    const order = this.allocationOrder[unit]!;
    this.allocationOrder[unit] = -1;
    this.liveCount--;
    this.usedBytesTotal -= this.allocationSizeBytes[unit]! + 1;
    this.blockBytesTotal -= this.minBlockBytes * (1 << order);
    this.allocationSizeBytes[unit] = 0;
    this.release(unit, order);
  }

  // --- steps (protected for the bug catalog) ---------------------------------------------------

  /** k = ceil(log2(max(size, align, minBlock) / minBlock)); may exceed maxOrder. */
  protected orderFor(sizeBytes: number, alignBytes: number): number {
    const needBytes = Math.max(sizeBytes, alignBytes, this.minBlockBytes);
    const units = Math.ceil(needBytes / this.minBlockBytes);
    if (units > 2 ** 30) return 31;
    return units <= 1 ? 0 : 32 - Math.clz32(units - 1);
  }

  /** The smallest order >= `order` holding a free block, or -1. */
  protected smallestFreeOrderAtLeast(order: number): number {
    const candidates = this.nonEmptyOrders & ~((1 << order) - 1);
    return candidates === 0 ? -1 : lowestBit(candidates);
  }

  /**
   * Splits the taken block of order `fromOrder` at `unit` down to order `toOrder`, keeping the
   * left half each time (the right halves go to the free lists); returns the unit it keeps.
   */
  protected split(unit: number, fromOrder: number, toOrder: number): number {
    for (let order = fromOrder - 1; order >= toOrder; order--)
      this.pushFree(unit + (1 << order), order);
    return unit;
  }

  /** The buddy unit of the block of order `order` at `unit`. */
  protected buddyOf(unit: number, order: number): number {
    return unit ^ (1 << order);
  }

  /** Returns the block to the free lists, merging with its buddy while the buddy is free. */
  protected release(unit: number, order: number): void {
    let at = unit;
    let k = order;
    while (k < this.maxOrder) {
      const buddy = this.buddyOf(at, k);
      if (!this.freeLists[k]!.test(buddy >>> k)) break;
      this.removeFree(buddy, k);
      at = Math.min(at, buddy);
      k++;
    }
    this.pushFree(at, k);
  }

  /** The unit of the live allocation starting at `offsetBytes`; BAD_FREE otherwise. */
  protected liveUnitAt(offsetBytes: number): number {
    // Dividing by a power of two is exact, so the offset is a multiple of minBlockBytes inside
    // the heap exactly when the quotient is an integer below the unit count (< 2^30). Rejects
    // what the spelled-out test rejects (NaN, fractions, negatives, unsafe integers), without
    // a floating-point remainder.
    const unit = offsetBytes / this.minBlockBytes;
    if (!(unit >= 0 && unit < this.allocationOrder.length && (unit | 0) === unit))
      throw badFree(offsetBytes);
    if (this.allocationOrder[unit]! < 0) throw badFree(offsetBytes);
    return unit;
  }

  protected pushFree(unit: number, order: number): void {
    this.freeLists[order]!.set(unit >>> order);
    this.nonEmptyOrders |= 1 << order;
  }

  protected removeFree(unit: number, order: number): void {
    const list = this.freeLists[order]!;
    list.clear(unit >>> order);
    if (list.count === 0) this.nonEmptyOrders &= ~(1 << order);
  }

  /** Takes the lowest-offset free block of `order` (which must be non-empty). */
  protected popLowest(order: number): number {
    const unit = this.freeLists[order]!.findFirst() << order;
    this.removeFree(unit, order);
    return unit;
  }

  // --- inspection ------------------------------------------------------------------------------

  live(): LiveAllocation[] {
    return copyLive(this.liveView());
  }

  liveView(): readonly LiveAllocation[] {
    const view = this.livePool;
    const blocks = this.walk();
    let live = 0;
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i]!;
      if (!block.free)
        setLiveEntry(
          view,
          live++,
          block.offsetBytes,
          this.allocationSizeBytes[block.offsetBytes / this.minBlockBytes]! + 1,
        );
    }
    view.length = live;
    return view;
  }

  freeBytes(): number {
    return this.capacityBytes - this.blockBytesTotal;
  }

  usedBytes(): number {
    return this.usedBytesTotal;
  }

  wasteBytes(): number {
    return this.blockBytesTotal - this.usedBytesTotal;
  }

  isPristine(): boolean {
    // Only the top order holds a free block, and only one: the whole heap.
    return (
      this.liveCount === 0 &&
      this.nonEmptyOrders === 2 ** this.maxOrder &&
      this.freeLists[this.maxOrder]!.test(0)
    );
  }

  blocks(): BlockInfo[] {
    return copyBlocks(this.walk());
  }

  blocksView(): readonly BlockInfo[] {
    return this.walk();
  }

  checkIndexes(): string | null {
    const blocks = this.walk();
    const error = this.walkError;
    const freeBlockCount = this.walkFreeBlockCount;
    if (error !== null) return error;
    let bits = 0;
    for (let order = 0; order <= this.maxOrder; order++) {
      const count = this.freeLists[order]!.count;
      bits += count;
      if (count > 0 !== ((this.nonEmptyOrders & (1 << order)) !== 0))
        return `order ${order} holds ${count} free blocks but its non-empty bit disagrees`;
    }
    if (bits !== freeBlockCount)
      return `the free lists hold ${bits} blocks, the tiling has ${freeBlockCount} free blocks`;
    const liveBlocks = blocks.length - freeBlockCount;
    return liveBlocks === this.liveCount
      ? null
      : `${liveBlocks} allocated blocks but ${this.liveCount} live allocations counted`;
  }

  /** Walks the blocks from offset 0: an allocation's order, else the free list that holds the unit. */
  private walk(): readonly BlockInfo[] {
    if (!this.walkValid) {
      this.walkNow();
      this.walkValid = true;
    }
    return this.walkBlocks;
  }

  private walkNow(): void {
    const blocks = this.walkBlocks;
    const units = 2 ** this.maxOrder;
    let count = 0;
    let freeBlockCount = 0;
    let unit = 0;
    let error: string | null = null;
    while (unit < units) {
      let order = this.allocationOrder[unit]!;
      let free = false;
      if (order < 0) {
        for (let k = 0; k <= this.maxOrder && order < 0; k++) {
          if (unit % 2 ** k === 0 && this.freeLists[k]!.test(unit >>> k)) order = k;
        }
        if (order < 0) {
          error = `unit ${unit} (offset ${unit * this.minBlockBytes}) is in no block`;
          break;
        }
        free = true;
        freeBlockCount++;
      }
      const blockUnits = 2 ** order;
      const offsetBytes = unit * this.minBlockBytes;
      setBlockEntry(blocks, count, offsetBytes, blockUnits * this.minBlockBytes, free);
      count++;
      unit += blockUnits;
    }
    blocks.length = count;
    this.walkError = error;
    this.walkFreeBlockCount = freeBlockCount;
  }
}
