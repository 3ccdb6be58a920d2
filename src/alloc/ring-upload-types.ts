/**
 * The ring upload allocator's contract (docs/spec/allocators.md#al-ring;
 * docs/spec/engine.md#life-ring), shared by the model and the implementation.
 *
 * A range moves reserved -> submitted(fenceValue) -> completed (freed by `collect`). Ranges are
 * named by their start offset, which is unique among live ranges (they never overlap and are at
 * least one byte long).
 */

export const RingErrors = {
  /** submit/cancel of an offset that is not the start of a live range (double, interior, unknown). */
  UNKNOWN_RANGE: 'RING_UNKNOWN_RANGE',
  /** submit or cancel of a range that is already submitted: only the GPU's completion frees it. */
  ALREADY_SUBMITTED: 'RING_ALREADY_SUBMITTED',
  /** submit with a fence value below the last submitted one: one queue's values never decrease. */
  FENCE_ORDER: 'RING_FENCE_ORDER',
} as const;

export type RingRangeState = 'reserved' | 'submitted';

export interface RingRange {
  readonly offsetBytes: number;
  readonly sizeBytes: number;
  readonly state: RingRangeState;
  /** The completion value attached by submit; null while reserved. */
  readonly fenceValue: number | null;
}

export interface RingUploadAllocator {
  readonly capacityBytes: number;
  /**
   * Reserves `sizeBytes` at the write cursor (aligned), wrapping to offset 0 when the tail is too
   * short. Null when the bytes swept from the cursor to the end of the new range would touch a
   * reserved or submitted range (the caller waits for completion or grows the ring).
   */
  allocate(sizeBytes: number, alignBytes: number): number | null;
  /** Attaches the completion value to a reserved range. */
  submit(offsetBytes: number, fenceValue: number): void;
  /** Releases a reserved (never submitted) range. */
  cancel(offsetBytes: number): void;
  /** Frees, in submission order, every submitted range whose value <= completedValue; returns their offsets. */
  collect(completedValue: number): number[];
  /** The live range starting at `offsetBytes`, or null. */
  rangeAt(offsetBytes: number): RingRange | null;
  /** Live ranges, ascending by offset. */
  live(): RingRange[];
  /**
   * Optional copy-free form of live() for inspection: the same ranges in the same order, but the
   * array and its objects may be reused, valid only until the next call or the next operation.
   */
  liveView?(): readonly RingRange[];
  /** Optional copy-free form of rangeAt(): the object may be reused, valid until the next call or operation. */
  rangeView?(offsetBytes: number): RingRange | null;
  /** Bytes the cursor can still sweep before it meets the oldest live range (the free arc). */
  freeBytes(): number;
  /** Bytes in live ranges. */
  usedBytes(): number;
  /** The rest: alignment padding, skipped tails and holes inside the occupied arc. */
  wasteBytes(): number;
  /** No live range: the whole ring is one free block and the next range starts at 0. */
  isPristine(): boolean;
}
