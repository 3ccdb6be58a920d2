/**
 * Reference model of the ring upload allocator with three states (docs/spec/allocators.md#al-ring;
 * docs/spec/engine.md#life-ring).
 *
 * Written for obviousness: one array of live ranges in allocation order, every conflict decided
 * by scanning all of them. The implementation keeps an O(1) "oldest live range" instead and must
 * agree offset for offset.
 *
 * The policy, in the seed's words: begin = AlignUp(writeCursor, alignment); if the range does
 * not fit before the end of the ring, wrap to offset 0; the range is refused (null) if the bytes
 * it sweeps overlap a reserved or submitted range; otherwise reserve it at once and move the
 * cursor to its end.
 *
 * Choices the spec leaves open, made here and followed by the implementation:
 * - "Swept bytes" are [cursor, end) for a range placed at the tail, and [cursor, capacity) plus
 *   [0, end) for a wrap: alignment padding and the skipped tail count, so neither a wrap nor an
 *   alignment jump ever crosses a live range ("wrap-around never crosses a reserved or in-flight
 *   range"). Holes left inside the occupied arc by an out-of-order cancel or collect are reused
 *   only once the cursor reaches them again.
 * - Only two places are tried (the aligned cursor, else offset 0); no search for another gap.
 * - A request larger than the ring answers null (an answer, not an error).
 * - With no live range the cursor restarts at 0, so an idle ring is back in its initial state.
 * - Bad requests: BAD_SIZE, then BAD_ALIGN (src/alloc/allocator.ts). submit/cancel of an offset
 *   that starts no live range: RING_UNKNOWN_RANGE; of a submitted range: RING_ALREADY_SUBMITTED;
 *   submit with a value below the last submitted value: RING_FENCE_ORDER (checked in that order).
 * - collect pops submitted ranges in submission order while the front's value <= completedValue.
 * - freeBytes is the free arc: bytes from the cursor forward to the nearest live range start
 *   (all of the ring when none is live). wasteBytes counts the gaps of the occupied arc: walking
 *   forward from the end of the free arc, the bytes between one live range and the next and from
 *   the last one back to the cursor (alignment padding, skipped tails, holes). The harness checks
 *   free against the caller's own view and free + used + waste = capacity.
 */
import { ContractError } from '../src/contract.js';
import { alignUp, validateRequest } from '../src/alloc/allocator.js';
import {
  RingErrors,
  type RingRange,
  type RingRangeState,
  type RingUploadAllocator,
} from '../src/alloc/ring-upload-types.js';

interface ModelRange {
  offsetBytes: number;
  sizeBytes: number;
  state: RingRangeState;
  fenceValue: number | null;
}

/** [startBytes, endBytes) */
type Interval = readonly [number, number];

function overlaps(a: Interval, offsetBytes: number, sizeBytes: number): boolean {
  return a[0] < offsetBytes + sizeBytes && offsetBytes < a[1];
}

export class RingUploadModel implements RingUploadAllocator {
  /** Live ranges in allocation order. */
  private ranges: ModelRange[] = [];
  /** Submitted ranges in submission order. */
  private submitted: ModelRange[] = [];
  private cursorBytes = 0;
  private lastSubmittedValue = 0;

  constructor(readonly capacityBytes: number) {}

  allocate(sizeBytes: number, alignBytes: number): number | null {
    validateRequest(sizeBytes, alignBytes);
    if (this.ranges.length === 0) this.cursorBytes = 0;
    const beginBytes = alignUp(this.cursorBytes, alignBytes);
    let offsetBytes: number;
    let swept: Interval[];
    if (beginBytes + sizeBytes <= this.capacityBytes) {
      offsetBytes = beginBytes;
      swept = [[this.cursorBytes, beginBytes + sizeBytes]];
    } else if (sizeBytes <= this.capacityBytes) {
      offsetBytes = 0;
      swept = [
        [this.cursorBytes, this.capacityBytes],
        [0, sizeBytes],
      ];
    } else {
      return null;
    }
    for (const range of this.ranges) {
      if (swept.some((interval) => overlaps(interval, range.offsetBytes, range.sizeBytes)))
        return null;
    }
    this.ranges.push({ offsetBytes, sizeBytes, state: 'reserved', fenceValue: null });
    this.cursorBytes = offsetBytes + sizeBytes;
    return offsetBytes;
  }

  private find(offsetBytes: number): ModelRange {
    let range: ModelRange | undefined;
    for (const candidate of this.ranges) {
      if (candidate.offsetBytes === offsetBytes) {
        range = candidate;
        break;
      }
    }
    if (range === undefined)
      throw new ContractError(
        RingErrors.UNKNOWN_RANGE,
        `offset ${offsetBytes} starts no live range`,
      );
    return range;
  }

  submit(offsetBytes: number, fenceValue: number): void {
    const range = this.find(offsetBytes);
    if (range.state === 'submitted')
      throw new ContractError(
        RingErrors.ALREADY_SUBMITTED,
        `range at ${offsetBytes} is already submitted`,
      );
    if (!Number.isSafeInteger(fenceValue) || fenceValue < this.lastSubmittedValue) {
      throw new ContractError(
        RingErrors.FENCE_ORDER,
        `fence value ${fenceValue} is below the last submitted ${this.lastSubmittedValue}`,
      );
    }
    range.state = 'submitted';
    range.fenceValue = fenceValue;
    this.lastSubmittedValue = fenceValue;
    this.submitted.push(range);
  }

  cancel(offsetBytes: number): void {
    const range = this.find(offsetBytes);
    if (range.state === 'submitted')
      throw new ContractError(
        RingErrors.ALREADY_SUBMITTED,
        `range at ${offsetBytes} is submitted; only completion frees it`,
      );
    this.ranges.splice(this.ranges.indexOf(range), 1);
  }

  collect(completedValue: number): number[] {
    const freed: number[] = [];
    while (this.submitted.length > 0 && this.submitted[0]!.fenceValue! <= completedValue) {
      const range = this.submitted.shift()!;
      this.ranges.splice(this.ranges.indexOf(range), 1);
      freed.push(range.offsetBytes);
    }
    return freed;
  }

  rangeAt(offsetBytes: number): RingRange | null {
    const range = this.ranges.find((candidate) => candidate.offsetBytes === offsetBytes);
    return range === undefined ? null : range;
  }

  live(): RingRange[] {
    return this.ranges.slice().sort((a, b) => a.offsetBytes - b.offsetBytes);
  }

  freeBytes(): number {
    if (this.ranges.length === 0) return this.capacityBytes;
    const cursor = this.cursorBytes % this.capacityBytes;
    let nearest = this.capacityBytes;
    for (const range of this.ranges) {
      nearest = Math.min(
        nearest,
        (range.offsetBytes - cursor + this.capacityBytes) % this.capacityBytes,
      );
    }
    return nearest;
  }

  usedBytes(): number {
    return this.ranges.reduce((sum, range) => sum + range.sizeBytes, 0);
  }

  /** Bytes from the cursor forward to the start of `range`. */
  private distance(range: ModelRange): number {
    const cursor = this.cursorBytes % this.capacityBytes;
    return (range.offsetBytes - cursor + this.capacityBytes) % this.capacityBytes;
  }

  wasteBytes(): number {
    if (this.ranges.length === 0) return 0;
    const ahead = [...this.ranges].sort((a, b) => this.distance(a) - this.distance(b));
    let wasteBytes = 0;
    let atBytes = this.distance(ahead[0]!);
    for (const range of ahead) {
      wasteBytes += this.distance(range) - atBytes;
      atBytes = this.distance(range) + range.sizeBytes;
    }
    return wasteBytes + this.capacityBytes - atBytes;
  }

  isPristine(): boolean {
    return this.ranges.length === 0;
  }
}
