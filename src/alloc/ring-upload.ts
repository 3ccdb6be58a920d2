/**
 * The ring upload allocator with three states, as an engine would ship it
 * (docs/spec/allocators.md#al-ring; docs/spec/engine.md#life-ring).
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
 * Accounting: the occupied arc runs from the head forward to the cursor; free is the rest. Waste
 * is counted as it arises, not derived: the padding an allocation sweeps (alignment jump, or the
 * skipped tail of a wrap) and the bytes of a range freed behind the head (a hole) are added; when
 * the head moves forward, the bytes between the old and the new head leave the arc (the freed
 * head's own bytes were used, everything else in between was waste).
 *
 * Steps are protected so the bug catalog (mutants/) can re-create a pitfall by overriding one;
 * nothing in src/ depends on that catalog.
 */
import { ContractError } from '../contract.js';
import { alignUp, validateRequest } from './allocator.js';
import { RingErrors, type RingRange, type RingUploadAllocator } from './ring-upload-types.js';
import { NumberDeque } from './number-deque.js';
import { NumberMap } from './typed-arrays.js';

type MutableRange = { -readonly [K in keyof RingRange]: RingRange[K] };

export const RANGE_FREE = 0;
export const RANGE_RESERVED = 1;
export const RANGE_SUBMITTED = 2;

export const NO_SLOT = -1;
/** Records of a new ring (and entries of its order and in-flight queues); more live ranges grow them. */
export const INITIAL_SLOTS = 16;

export class RingUploadAllocatorImpl implements RingUploadAllocator {
  // Record slab.
  protected offsetOf: Float64Array;
  protected sizeOf: Float64Array;
  protected fenceOf: Float64Array;
  protected stateOf: Uint8Array;
  /** Free slots (a stack). */
  protected freeSlots: Int32Array;
  protected freeSlotCount: number;

  /** Slots in allocation order (front = head). */
  protected readonly order = new NumberDeque(INITIAL_SLOTS);
  /** Submitted slots in submission order. */
  protected readonly inFlight = new NumberDeque(INITIAL_SLOTS);

  /**
   * Offset -> slot of each live range. A typed-array hash (src/alloc/typed-arrays.ts), not a Map:
   * V8 caps a Map at 2^24 entries, and a ring of 2^25 bytes holds that many one-byte ranges.
   */
  protected readonly slotByOffset = new NumberMap();
  protected cursorBytes = 0;
  protected liveCount = 0;
  protected usedByteCount = 0;
  /** Padding, skipped tails and holes inside the occupied arc. */
  protected wasteByteCount = 0;
  protected lastSubmittedValue = 0;

  // Inspection scratch (liveView, rangeView): reused records, never read by the allocator itself.
  private readonly viewRanges: MutableRange[] = [];
  private readonly viewPool: MutableRange[] = [];
  private readonly viewRange: MutableRange = {
    offsetBytes: 0,
    sizeBytes: 0,
    state: 'reserved',
    fenceValue: null,
  };

  constructor(readonly capacityBytes: number) {
    if (!Number.isSafeInteger(capacityBytes) || capacityBytes <= 0)
      throw new Error(`ring: capacityBytes must be a positive integer, got ${capacityBytes}`);
    this.offsetOf = new Float64Array(INITIAL_SLOTS);
    this.sizeOf = new Float64Array(INITIAL_SLOTS);
    this.fenceOf = new Float64Array(INITIAL_SLOTS);
    this.stateOf = new Uint8Array(INITIAL_SLOTS);
    this.freeSlots = new Int32Array(INITIAL_SLOTS);
    for (let i = 0; i < INITIAL_SLOTS; i++) this.freeSlots[i] = INITIAL_SLOTS - 1 - i;
    this.freeSlotCount = INITIAL_SLOTS;
  }

  // ----- the contract -----

  allocate(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    const head = this.conflictHead();
    if (head === NO_SLOT) this.cursorBytes = 0;
    const beginBytes = alignUp(this.cursorBytes, alignBytes);
    let offsetBytes: number;
    let paddingBytes: number;
    if (beginBytes + sizeBytes <= this.capacityBytes) {
      if (head !== NO_SLOT && this.tailBlocked(this.offsetOf[head]!, beginBytes + sizeBytes))
        return null;
      offsetBytes = beginBytes;
      paddingBytes = beginBytes - this.cursorBytes;
    } else if (sizeBytes <= this.capacityBytes) {
      if (head !== NO_SLOT && this.wrapBlocked(this.offsetOf[head]!, sizeBytes)) return null;
      offsetBytes = 0;
      paddingBytes = this.capacityBytes - this.cursorBytes;
    } else {
      return null;
    }
    const slot = this.takeSlot();
    if (slot === NO_SLOT) return null;
    this.offsetOf[slot] = offsetBytes;
    this.sizeOf[slot] = sizeBytes;
    this.fenceOf[slot] = 0;
    this.stateOf[slot] = RANGE_RESERVED;
    this.order.push(slot);
    this.slotByOffset.set(offsetBytes, slot);
    this.liveCount++;
    this.usedByteCount += sizeBytes;
    // The first range of an idle ring starts the arc; later ones extend it by their padding.
    this.wasteByteCount = head === NO_SLOT ? 0 : this.wasteByteCount + paddingBytes;
    this.cursorBytes = offsetBytes + sizeBytes;
    return offsetBytes;
  }

  submit(offsetBytes: number, fenceValue: number): void {
    const slot = this.liveSlot(offsetBytes);
    if (this.stateOf[slot] === RANGE_SUBMITTED) {
      throw new ContractError(
        RingErrors.ALREADY_SUBMITTED,
        `range at ${offsetBytes} is already submitted`,
      );
    }
    this.checkFenceOrder(fenceValue);
    this.stateOf[slot] = RANGE_SUBMITTED;
    this.fenceOf[slot] = fenceValue;
    this.lastSubmittedValue = Math.max(this.lastSubmittedValue, fenceValue);
    this.inFlight.push(slot);
  }

  cancel(offsetBytes: number): void {
    const slot = this.liveSlot(offsetBytes);
    if (!this.mayCancel(slot)) {
      throw new ContractError(
        RingErrors.ALREADY_SUBMITTED,
        `range at ${offsetBytes} is submitted; only completion frees it`,
      );
    }
    this.release(slot);
  }

  collect(completedValue: number): number[] {
    const freed: number[] = [];
    // Bounded: each pass pops one entry of the queue.
    while (this.inFlight.count > 0) {
      const slot = this.inFlight.peekFront();
      if (!this.isComplete(this.fenceOf[slot]!, completedValue)) break;
      this.inFlight.popFront();
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
    for (let i = 0; i < this.order.count; i++) {
      const slot = this.order.at(i);
      if (this.stateOf[slot] !== RANGE_FREE) ranges.push(this.describe(slot));
    }
    return ranges.sort((a, b) => a.offsetBytes - b.offsetBytes);
  }

  /** live() without fresh objects: a reused array of reused records, sorted by insertion (short, nearly sorted). */
  liveView(): readonly RingRange[] {
    const view = this.viewRanges;
    let count = 0;
    for (let i = 0; i < this.order.count; i++) {
      const slot = this.order.at(i);
      if (this.stateOf[slot] === RANGE_FREE) continue;
      let record = view[count];
      if (record === undefined) {
        record = this.viewPool.pop() ?? {
          offsetBytes: 0,
          sizeBytes: 0,
          state: 'reserved',
          fenceValue: null,
        };
        view.push(record);
      }
      this.describeInto(slot, record);
      // Insertion sort by offset: the records before `count` are sorted.
      let at = count;
      while (at > 0 && view[at - 1]!.offsetBytes > record.offsetBytes) {
        view[at] = view[at - 1]!;
        at--;
      }
      view[at] = record;
      count++;
    }
    if (view.length > count) this.viewSpare(view, count);
    return view;
  }

  rangeView(offsetBytes: number): RingRange | null {
    const slot = this.slotByOffset.get(offsetBytes);
    if (slot === undefined) return null;
    this.describeInto(slot, this.viewRange);
    return this.viewRange;
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
    return this.wasteByteCount;
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
    return this.order.count === 0 ? NO_SLOT : this.order.peekFront();
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
      throw new ContractError(
        RingErrors.FENCE_ORDER,
        `fence value ${fenceValue} is below the last submitted ${this.lastSubmittedValue}`,
      );
    }
  }

  protected mayCancel(slot: number): boolean {
    return this.stateOf[slot] === RANGE_RESERVED;
  }

  protected isComplete(fenceValue: number, completedValue: number): boolean {
    return fenceValue <= completedValue;
  }

  /**
   * A free slot from the slab, growing it when empty. Records need no bound of their own: each
   * one (a live range, or a hole not yet popped behind the head) holds at least one byte of the
   * arc, so there are never more than capacityBytes. This class never answers NO_SLOT; a
   * subclass may (the bug catalog's record-limit pitfalls), and allocate then answers null.
   */
  protected takeSlot(): number {
    if (this.freeSlotCount === 0) this.growSlab();
    return this.freeSlots[--this.freeSlotCount]!;
  }

  /**
   * Frees a live record and pops freed records off the front of the allocation order. Freed
   * behind the head, its bytes become a hole (waste); freed at the head, the arc shrinks from the
   * old head to the new one.
   */
  protected release(slot: number): void {
    const sizeBytes = this.sizeOf[slot]!;
    const oldHead = this.headSlot();
    const oldHeadOffsetBytes = oldHead === NO_SLOT ? 0 : this.offsetOf[oldHead]!;
    this.slotByOffset.delete(this.offsetOf[slot]!);
    this.stateOf[slot] = RANGE_FREE;
    this.liveCount--;
    this.usedByteCount -= sizeBytes;
    this.wasteByteCount += sizeBytes;
    while (this.order.count > 0) {
      const front = this.order.peekFront();
      if (this.stateOf[front] !== RANGE_FREE) break;
      this.order.popFront();
      this.freeSlots[this.freeSlotCount++] = front;
    }
    const head = this.headSlot();
    if (head === NO_SLOT) this.wasteByteCount = 0;
    else this.wasteByteCount -= this.forwardBytes(oldHeadOffsetBytes, this.offsetOf[head]!);
  }

  /** Bytes from `fromBytes` forward around the ring to `toBytes`. */
  protected forwardBytes(fromBytes: number, toBytes: number): number {
    return toBytes >= fromBytes ? toBytes - fromBytes : toBytes + this.capacityBytes - fromBytes;
  }

  // ----- plumbing -----

  private liveSlot(offsetBytes: number): number {
    const slot = this.slotByOffset.get(offsetBytes);
    if (slot === undefined)
      throw new ContractError(
        RingErrors.UNKNOWN_RANGE,
        `offset ${offsetBytes} starts no live range`,
      );
    return slot;
  }

  /** Drops the records past `count` from the view (kept for reuse in `viewPool`). */
  private viewSpare(view: MutableRange[], count: number): void {
    while (view.length > count) this.viewPool.push(view.pop()!);
  }

  private describeInto(slot: number, record: MutableRange): void {
    const submitted = this.stateOf[slot] === RANGE_SUBMITTED;
    record.offsetBytes = this.offsetOf[slot]!;
    record.sizeBytes = this.sizeOf[slot]!;
    record.state = submitted ? 'submitted' : 'reserved';
    record.fenceValue = submitted ? this.fenceOf[slot]! : null;
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

  private growSlab(): void {
    const oldLength = this.offsetOf.length;
    const newLength = oldLength * 2;
    this.offsetOf = grownCopy(this.offsetOf, new Float64Array(newLength));
    this.sizeOf = grownCopy(this.sizeOf, new Float64Array(newLength));
    this.fenceOf = grownCopy(this.fenceOf, new Float64Array(newLength));
    this.stateOf = grownCopy(this.stateOf, new Uint8Array(newLength));
    const freeSlots = new Int32Array(newLength);
    freeSlots.set(this.freeSlots.subarray(0, this.freeSlotCount));
    for (let slot = newLength - 1; slot >= oldLength; slot--)
      freeSlots[this.freeSlotCount++] = slot;
    this.freeSlots = freeSlots;
  }
}

function grownCopy<T extends Float64Array | Uint8Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
