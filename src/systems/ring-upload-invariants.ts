/**
 * The `ring-upload` system's invariants: ranges within the capacity and aligned, nothing handed
 * out over bytes the GPU has not finished, no overlap, the accounting of free bytes against the
 * caller's view, and the ring's answers matching the model's (sampled).
 */
import type { Invariant } from '../harness/system.js';
import type { RingRange } from '../alloc/ring-upload-types.js';
import { bothSides } from './common.js';
import { noFalseOutOfMemory } from './alloc-invariants.js';
import type { RingSide, RingUploadConfig } from './ring-upload-side.js';

/** answers-match-model reads live() and rangeAt() on every step whose number is a multiple of this. */
const ANSWER_SAMPLE_STEPS = 16;

/**
 * The free arc as the caller sees it: from its cursor (the end of its last allocation) forward to
 * the nearest range it still holds; all of the ring when it holds nothing. O(live).
 */
export function expectedFreeBytes(s: RingSide): number {
  if (s.handouts.size === 0) return s.capacityBytes;
  const capacityBytes = s.capacityBytes;
  const cursorBytes = s.lastEndBytes % capacityBytes;
  let freeBytes = capacityBytes;
  for (const offsetBytes of s.handouts.keys()) {
    // (offset - cursor) modulo capacity, in [0, capacity); the remainder is taken only when needed.
    let forwardBytes = offsetBytes - cursorBytes;
    if (forwardBytes < 0 || forwardBytes >= capacityBytes) {
      forwardBytes %= capacityBytes;
      if (forwardBytes < 0) forwardBytes += capacityBytes;
    }
    // As Math.min: NaN wins.
    if (forwardBytes < freeBytes || Number.isNaN(forwardBytes)) freeBytes = forwardBytes;
  }
  return freeBytes;
}

/**
 * The ring's live ranges, ascending by offset (its copy-free view when it has one), read once per
 * step: invariants only inspect, so what the first one read still holds for the others.
 */
function liveRangesOf(s: RingSide): readonly RingRange[] {
  if (s.liveRangesStep !== s.step) {
    s.liveRanges = s.ring.liveView !== undefined ? s.ring.liveView() : s.ring.live();
    s.liveRangesStep = s.step;
  }
  return s.liveRanges;
}

export const invariants: Invariant<RingSide, RingUploadConfig>[] = [
  {
    name: 'within-capacity-aligned',
    description:
      'every live range lies inside [0, capacity) and starts at a multiple of the alignment it was requested with',
    check: bothSides((s) => {
      const live = liveRangesOf(s);
      for (let i = 0; i < live.length; i++) {
        const { offsetBytes, sizeBytes } = live[i]!;
        if (
          !Number.isSafeInteger(offsetBytes) ||
          offsetBytes < 0 ||
          offsetBytes + sizeBytes > s.capacityBytes
        ) {
          return `range [${offsetBytes}, ${offsetBytes + sizeBytes}) leaves the ring of ${s.capacityBytes} bytes`;
        }
        const handout = s.handouts.get(offsetBytes);
        if (handout === undefined)
          return `live range at ${offsetBytes} was never handed to the caller`;
        if (offsetBytes % handout.alignBytes !== 0)
          return `range at ${offsetBytes} is not aligned to ${handout.alignBytes}`;
      }
      return null;
    }),
  },
  {
    name: 'gpu-in-flight-untouched',
    description:
      'no range is handed out while an unfinished GPU read uses its bytes, and every in-flight read is of a range the ring still holds as submitted',
    check: bothSides((s) => {
      if (s.violations.length > 0) return s.violations[0]!;
      for (let i = 0; i < s.timeline.inFlightCount; i++) {
        const read = s.timeline.inFlightAt(i);
        // The judge's own consistency: a listed read is unfinished and of a value signalled or about to be.
        if (
          !s.timeline.isInFlight(read.fenceValue) ||
          read.fenceValue > s.timeline.lastSignalledValue + 1
        ) {
          return `the timeline lists a read at fence value ${read.fenceValue} as in flight (completed ${s.timeline.completedValue}, last signalled ${s.timeline.lastSignalledValue})`;
        }
        const range =
          s.ring.rangeView !== undefined
            ? s.ring.rangeView(read.offsetBytes)
            : s.ring.rangeAt(read.offsetBytes);
        if (
          range === null ||
          range.state !== 'submitted' ||
          range.sizeBytes !== read.sizeBytes ||
          s.handouts.get(read.offsetBytes)?.id !== read.ownerId
        ) {
          return (
            `the GPU may still read [${read.offsetBytes}, ${read.offsetBytes + read.sizeBytes}) until fence value ${read.fenceValue} ` +
            `(completed ${s.timeline.completedValue}) but the ring no longer holds it as that submitted range`
          );
        }
      }
      return null;
    }),
  },
  {
    name: 'no-overlap',
    description: 'no two live ranges (reserved or submitted) share a byte',
    check: bothSides((s) => {
      const live = liveRangesOf(s);
      for (let i = 1; i < live.length; i++) {
        const before = live[i - 1]!;
        const after = live[i]!;
        if (before.offsetBytes + before.sizeBytes > after.offsetBytes) {
          return (
            `${before.state} [${before.offsetBytes}, ${before.offsetBytes + before.sizeBytes}) overlaps ` +
            `${after.state} [${after.offsetBytes}, ${after.offsetBytes + after.sizeBytes})`
          );
        }
      }
      return null;
    }),
  },
  noFalseOutOfMemory,
  {
    name: 'accounting',
    description:
      "used = the bytes the caller holds; free = the arc from the caller's cursor forward to the nearest range it holds; " +
      'free + used + waste = capacity with waste counted by the ring; pristine exactly when the caller holds nothing',
    check: bothSides((s) => {
      let heldBytes = 0;
      for (const handout of s.handouts.values()) heldBytes += handout.sizeBytes;
      const expectedFree = expectedFreeBytes(s);
      const free = s.ring.freeBytes();
      const used = s.ring.usedBytes();
      const waste = s.ring.wasteBytes();
      if (used !== heldBytes) return `usedBytes ${used} but the caller holds ${heldBytes} bytes`;
      if (free !== expectedFree) {
        return `freeBytes ${free} but the arc from the cursor at ${s.lastEndBytes % s.capacityBytes} to the nearest held range is ${expectedFree} bytes`;
      }
      if (waste < 0 || free + used + waste !== s.capacityBytes)
        return `free ${free} + used ${used} + waste ${waste} != capacity ${s.capacityBytes}`;
      if (s.ring.isPristine() !== (s.handouts.size === 0))
        return `isPristine() is ${s.ring.isPristine()} while the caller holds ${s.handouts.size} ranges`;
      return null;
    }),
  },
  {
    name: 'answers-match-model',
    description:
      "the ring's live() and rangeAt() answer as the model's (every live range, each range's lookup by its offset, and the lookup of " +
      'the offset freed last), read every 16th step',
    check: (model, impl) => {
      // Sampled: live() and rangeAt() build fresh objects (the other invariants read the copy-free views).
      if (impl.step % ANSWER_SAMPLE_STEPS !== 0) return null;
      const expected = model.ring.live();
      const actual = impl.ring.live();
      if (expected.length !== actual.length)
        return `live() lists ${actual.length} ranges, the model's ${expected.length}`;
      for (let i = 0; i < expected.length; i++) {
        const e = expected[i]!;
        if (!sameRange(actual[i]!, e))
          return `live()[${i}] is ${rangeText(actual[i]!)}, the model's ${rangeText(e)}`;
        const found = impl.ring.rangeAt(e.offsetBytes);
        if (found === null || !sameRange(found, e))
          return `rangeAt(${e.offsetBytes}) is ${found === null ? 'null' : rangeText(found)}, the model's ${rangeText(e)}`;
      }
      // The offset freed last (if no range starts there again) is found by neither.
      if (impl.lastFreedOffset >= 0 && model.ring.rangeAt(impl.lastFreedOffset) === null) {
        const stale = impl.ring.rangeAt(impl.lastFreedOffset);
        if (stale !== null)
          return `rangeAt(${impl.lastFreedOffset}) still finds ${rangeText(stale)} after it was freed`;
      }
      return null;
    },
  },
];

function sameRange(a: RingRange, b: RingRange): boolean {
  return (
    a.offsetBytes === b.offsetBytes &&
    a.sizeBytes === b.sizeBytes &&
    a.state === b.state &&
    a.fenceValue === b.fenceValue
  );
}

function rangeText(range: RingRange): string {
  return `${range.state} [${range.offsetBytes}, ${range.offsetBytes + range.sizeBytes})${range.fenceValue === null ? '' : ` @${range.fenceValue}`}`;
}
