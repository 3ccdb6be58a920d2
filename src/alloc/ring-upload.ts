/**
 * The ring upload allocator with three states, as an engine would ship it (spec/allocators.md
 * "Ring upload allocator"; seed gpu-resource-lifetime.zh.txt, 环形上传区间).
 *
 * Why it is O(1): ranges are placed at the write cursor, so in allocation order they follow the
 * ring forward from the oldest live range (the head) to the cursor; that "occupied arc" holds
 * every live byte. A new range is safe exactly when the bytes it sweeps from the cursor do not
 * reach the head, so one comparison against the head replaces the model's scan of every range.
 * A range freed out of order (a cancel, or a collect whose submission order differs from the
 * allocation order) leaves a hole inside the arc; the head skips freed records lazily.
 *
 * Storage:
 * - Range records live in a slab of typed arrays (offset, size, state, fence value), recycled
 *   through a free list; a record's slot index never moves.
 * - `order` is a circular deque of slots in allocation order (front = head).
 * - `inFlight` is a circular queue of slots in submission order; fence values never decrease
 *   along it, so collect pops from the front.
 * - `slotByOffset` finds the record a submit or cancel names.
 *
 * Steps are protected so the bug catalog (mutants/) can re-create a pitfall by overriding one;
 * nothing in src/ depends on that catalog.
 */
import { ContractError } from '../contract';
import { alignUp, validateRequest } from './allocator';
import { RingErrors, type RingRange, type RingUploadAllocator } from './ring-upload-types';

export const RANGE_FREE = 0;
export const RANGE_RESERVED = 1;
export const RANGE_SUBMITTED = 2;

export const NO_SLOT = -1;
const INITIAL_SLOTS = 16;
/** Bound on records: every live record holds at least one byte of the arc, holes included. */
const MAX_SLOTS = 1 << 26;

export class RingUploadAllocatorImpl implements RingUploadAllocator {
  // Record slab.
  protected offsetOf: Float64Array;
  protected sizeOf: Float64Array;
  protected fenceOf: Float64Array;
  protected stateOf: Uint8Array;
  /** Free slots (a stack). */
  protected freeSlots: Int32Array;
  protected freeSlotCount: number;

  // Allocation order: circular deque of slots, capacity a power of two.
  protected order: Int32Array;
  protected orderFront = 0;
  protected orderCount = 0;

  // Submission order: circular queue of slots.
  protected inFlight: Int32Array;
  protected inFlightFront = 0;
  protected inFlightCount = 0;

  protected readonly slotByOffset = new Map<number, number>();
  protected cursorBytes = 0;
  protected liveCount = 0;
  protected usedByteCount = 0;
  protected lastSubmittedValue = 0;

  constructor(readonly capacityBytes: number) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes <= 0) throw new Error(`ring: capacityBytes must be a positive integer, got ${capacityBytes}`);
    this.offsetOf = new Float64Array(INITIAL_SLOTS);
    this.sizeOf = new Float64Array(INITIAL_SLOTS);
    this.fenceOf = new Float64Array(INITIAL_SLOTS);
    this.stateOf = new Uint8Array(INITIAL_SLOTS);
    this.freeSlots = new Int32Array(INITIAL_SLOTS);
    for (let i = 0; i < INITIAL_SLOTS; i++) this.freeSlots[i] = INITIAL_SLOTS - 1 - i;
    this.freeSlotCount = INITIAL_SLOTS;
    this.order = new Int32Array(INITIAL_SLOTS);
    this.inFlight = new Int32Array(INITIAL_SLOTS);
  }

  // ----- the contract -----

  allocate(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const head = this.conflictHead();
    if (head === NO_SLOT) this.cursorBytes = 0;
    const beginBytes = alignUp(this.cursorBytes, alignBytes);
    let offsetBytes: number;
    if (beginBytes + sizeBytes <= this.capacityBytes) {
      if (head !== NO_SLOT && this.tailBlocked(this.offsetOf[head]!, beginBytes + sizeBytes)) return null;
      offsetBytes = beginBytes;
    } else if (sizeBytes <= this.capacityBytes) {
      if (head !== NO_SLOT && this.wrapBlocked(this.offsetOf[head]!, sizeBytes)) return null;
      offsetBytes = 0;
    } else {
      return null;
    }
    const slot = this.takeSlot();
    if (slot === NO_SLOT) return null;
    this.offsetOf[slot] = offsetBytes;
    this.sizeOf[slot] = sizeBytes;
    this.fenceOf[slot] = 0;
    this.stateOf[slot] = RANGE_RESERVED;
    this.pushOrder(slot);
    this.slotByOffset.set(offsetBytes, slot);
    this.liveCount++;
    this.usedByteCount += sizeBytes;
    this.cursorBytes = offsetBytes + sizeBytes;
    return offsetBytes;
  }

  submit(offsetBytes: number, fenceValue: number): void {
    const slot = this.liveSlot(offsetBytes);
    if (this.stateOf[slot] === RANGE_SUBMITTED) {
      throw new ContractError(RingErrors.ALREADY_SUBMITTED, `range at ${offsetBytes} is already submitted`);
    }
    this.checkFenceOrder(fenceValue);
    this.stateOf[slot] = RANGE_SUBMITTED;
    this.fenceOf[slot] = fenceValue;
    this.lastSubmittedValue = Math.max(this.lastSubmittedValue, fenceValue);
    this.pushInFlight(slot);
  }

  cancel(offsetBytes: number): void {
    const slot = this.liveSlot(offsetBytes);
    if (!this.mayCancel(slot)) {
      throw new ContractError(RingErrors.ALREADY_SUBMITTED, `range at ${offsetBytes} is submitted; only completion frees it`);
    }
    this.release(slot);
  }

  collect(completedValue: number): number[] {
    const freed: number[] = [];
    // Bounded: each pass pops one entry of the queue.
    while (this.inFlightCount > 0) {
      const slot = this.inFlight[this.inFlightFront]!;
      if (!this.isComplete(this.fenceOf[slot]!, completedValue)) break;
      this.inFlightFront = (this.inFlightFront + 1) & (this.inFlight.length - 1);
      this.inFlightCount--;
      // Only a contract breach (a cancelled submission, see the bug catalog) leaves a freed slot here.
      if (this.stateOf[slot] !== RANGE_SUBMITTED) continue;
      freed.push(this.offsetOf[slot]!);
      this.release(slot);
    }
    return freed;
  }

  rangeAt(offsetBytes: number): RingRange | null {
    const slot = this.slotByOffset.get(offsetBytes);
    return slot === undefined ? null : this.describe(slot);
  }

  live(): RingRange[] {
    const ranges: RingRange[] = [];
    for (let i = 0; i < this.orderCount; i++) {
      const slot = this.order[(this.orderFront + i) & (this.order.length - 1)]!;
      if (this.stateOf[slot] !== RANGE_FREE) ranges.push(this.describe(slot));
    }
    return ranges.sort((a, b) => a.offsetBytes - b.offsetBytes);
  }

  freeBytes(): number {
    const head = this.headSlot();
    if (head === NO_SLOT) return this.capacityBytes;
    const cursor = this.cursorBytes === this.capacityBytes ? 0 : this.cursorBytes;
    const headOffset = this.offsetOf[head]!;
    return headOffset >= cursor ? headOffset - cursor : headOffset + this.capacityBytes - cursor;
  }

  usedBytes(): number {
    return this.usedByteCount;
  }

  wasteBytes(): number {
    return this.capacityBytes - this.freeBytes() - this.usedBytes();
  }

  isPristine(): boolean {
    return this.liveCount === 0;
  }

  // ----- steps the bug catalog overrides -----

  /**
   * The oldest live range, or NO_SLOT. Freed records are popped from the front of the deque
   * when they are freed, so the front is always live.
   */
  protected headSlot(): number {
    return this.orderCount === 0 ? NO_SLOT : this.order[this.orderFront]!;
  }

  /**
   * The range a new allocation must not reach: the oldest live one, reserved or submitted. A
   * reservation takes part in conflict checks before it is submitted; that is what stops two
   * recording threads from getting the same bytes.
   */
  protected conflictHead(): number {
    return this.headSlot();
  }

  /** A range placed at the tail ending at `endBytes` sweeps [cursor, end): blocked if that holds the head. */
  protected tailBlocked(headOffsetBytes: number, endBytes: number): boolean {
    return headOffsetBytes >= this.cursorBytes && headOffsetBytes < endBytes;
  }

  /** A wrap sweeps [cursor, capacity) and [0, size): blocked if either holds the head. */
  protected wrapBlocked(headOffsetBytes: number, sizeBytes: number): boolean {
    return headOffsetBytes >= this.cursorBytes || headOffsetBytes < sizeBytes;
  }

  protected checkFenceOrder(fenceValue: number): void {
    if (!Number.isSafeInteger(fenceValue) || fenceValue < this.lastSubmittedValue) {
      throw new ContractError(RingErrors.FENCE_ORDER, `fence value ${fenceValue} is below the last submitted ${this.lastSubmittedValue}`);
    }
  }

  protected mayCancel(slot: number): boolean {
    return this.stateOf[slot] === RANGE_RESERVED;
  }

  protected isComplete(fenceValue: number, completedValue: number): boolean {
    return fenceValue <= completedValue;
  }

  /** A free slot from the slab, growing it when empty; NO_SLOT only past MAX_SLOTS. */
  protected takeSlot(): number {
    if (this.freeSlotCount === 0) {
      if (this.offsetOf.length >= MAX_SLOTS) return NO_SLOT;
      this.growSlab();
    }
    return this.freeSlots[--this.freeSlotCount]!;
  }

  /** Frees a live record and pops freed records off the front of the allocation order. */
  protected release(slot: number): void {
    this.slotByOffset.delete(this.offsetOf[slot]!);
    this.stateOf[slot] = RANGE_FREE;
    this.liveCount--;
    this.usedByteCount -= this.sizeOf[slot]!;
    const mask = this.order.length - 1;
    while (this.orderCount > 0) {
      const front = this.order[this.orderFront]!;
      if (this.stateOf[front] !== RANGE_FREE) break;
      this.orderFront = (this.orderFront + 1) & mask;
      this.orderCount--;
      this.freeSlots[this.freeSlotCount++] = front;
    }
  }

  // ----- plumbing -----

  private liveSlot(offsetBytes: number): number {
    const slot = this.slotByOffset.get(offsetBytes);
    if (slot === undefined) throw new ContractError(RingErrors.UNKNOWN_RANGE, `offset ${offsetBytes} starts no live range`);
    return slot;
  }

  private describe(slot: number): RingRange {
    const submitted = this.stateOf[slot] === RANGE_SUBMITTED;
    return {
      offsetBytes: this.offsetOf[slot]!,
      sizeBytes: this.sizeOf[slot]!,
      state: submitted ? 'submitted' : 'reserved',
      fenceValue: submitted ? this.fenceOf[slot]! : null,
    };
  }

  private pushOrder(slot: number): void {
    if (this.orderCount === this.order.length) {
      this.order = regrow(this.order, this.orderFront, this.orderCount);
      this.orderFront = 0;
    }
    this.order[(this.orderFront + this.orderCount) & (this.order.length - 1)] = slot;
    this.orderCount++;
  }

  private pushInFlight(slot: number): void {
    if (this.inFlightCount === this.inFlight.length) {
      this.inFlight = regrow(this.inFlight, this.inFlightFront, this.inFlightCount);
      this.inFlightFront = 0;
    }
    this.inFlight[(this.inFlightFront + this.inFlightCount) & (this.inFlight.length - 1)] = slot;
    this.inFlightCount++;
  }

  private growSlab(): void {
    const oldLength = this.offsetOf.length;
    const newLength = oldLength * 2;
    this.offsetOf = grownCopy(this.offsetOf, new Float64Array(newLength));
    this.sizeOf = grownCopy(this.sizeOf, new Float64Array(newLength));
    this.fenceOf = grownCopy(this.fenceOf, new Float64Array(newLength));
    this.stateOf = grownCopy(this.stateOf, new Uint8Array(newLength));
    const freeSlots = new Int32Array(newLength);
    freeSlots.set(this.freeSlots.subarray(0, this.freeSlotCount));
    for (let slot = newLength - 1; slot >= oldLength; slot--) freeSlots[this.freeSlotCount++] = slot;
    this.freeSlots = freeSlots;
  }
}

function grownCopy<T extends Float64Array | Uint8Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** A circular queue's contents, unrolled into an array twice the size. */
function regrow(queue: Int32Array, front: number, count: number): Int32Array {
  const grown = new Int32Array(queue.length * 2);
  const mask = queue.length - 1;
  for (let i = 0; i < count; i++) grown[i] = queue[(front + i) & mask]!;
  return grown;
}
