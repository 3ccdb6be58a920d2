/**
 * The `deferred-free` system's invariants: live ranges sound (inside the capacity, aligned,
 * disjoint, each one the sub-allocator holds), nothing handed out over bytes an unfinished GPU read
 * uses, and the accounting of both sides (capacity, bytes, held blocks, back to one free block).
 */
import type { Invariant } from '../harness/system.js';
import { inspectLive, type LiveAllocation } from '../alloc/allocator.js';
import { bothSides, searchByOffset } from './common.js';
import { noFalseOutOfMemory } from './alloc-invariants.js';
import type { DeferredConfig, DeferredSide } from './deferred-free-side.js';

/**
 * The size of the allocation the sub-allocator holds at `offsetBytes` (from its live()), or
 * undefined. live() is read once per step: invariants only inspect, so what the first one read
 * still holds for the others. When it is strictly ascending (as promised) it is bisected,
 * otherwise looked up through a map built from it.
 */
function heldSizeAt(s: DeferredSide, offsetBytes: number): number | undefined {
  if (s.heldStep !== s.step) {
    const held = inspectLive(s.allocator.inner);
    let ascending = true;
    for (let i = 1; i < held.length; i++) {
      if (!(held[i - 1]!.offsetBytes < held[i]!.offsetBytes)) {
        ascending = false;
        break;
      }
    }
    s.held = held;
    s.heldAscending = ascending;
    s.heldMap.clear();
    if (!ascending)
      for (let i = 0; i < held.length; i++) s.heldMap.set(held[i]!.offsetBytes, held[i]!.sizeBytes);
    s.heldStep = s.step;
  }
  if (!s.heldAscending) return s.heldMap.get(offsetBytes);
  const at = searchByOffset(s.held, offsetBytes, false);
  return at < s.held.length && s.held[at]!.offsetBytes === offsetBytes
    ? s.held[at]!.sizeBytes
    : undefined;
}

/** Equal as their decimal texts are equal (NaN matches NaN). */
function sameNumber(a: number, b: number): boolean {
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

function rangeText(allocation: LiveAllocation): string {
  return `[${allocation.offsetBytes}, ${allocation.offsetBytes + allocation.sizeBytes})`;
}

/** The accounting invariant's own checks on each side (built once, not per step). */
const accountingOwnSides = bothSides<DeferredSide>((s) => {
  const inner = s.allocator.inner;
  if (s.allocator.capacityBytes !== s.config.capacityBytes)
    return `capacityBytes is ${s.allocator.capacityBytes}, the config's ${s.config.capacityBytes}`;
  const free = inner.freeBytes();
  const used = inner.usedBytes();
  const waste = inner.wasteBytes();
  if (free < 0 || waste < 0 || free + used + waste !== s.config.capacityBytes) {
    return `free ${free} + used ${used} + waste ${waste} != capacity ${s.config.capacityBytes}`;
  }
  let liveBytes = 0;
  for (let i = 0; i < s.live.length; i++) liveBytes += s.live[i]!.sizeBytes;
  const pending = s.allocator.pendingBytes();
  const pooled = s.allocator.pooledBytes();
  // Read once; the comparison of the two sides below uses the same readings.
  s.readPendingBytes = pending;
  s.readPooledBytes = pooled;
  s.readFreeBytes = free;
  const held = liveBytes + pending + pooled;
  if (used !== held) {
    return `the sub-allocator holds ${used} bytes but live ${liveBytes} + pending ${pending} + pooled ${pooled} = ${held}`;
  }
  if (s.live.length === 0 && s.allocator.heldCount() === 0 && !inner.isPristine()) {
    return 'everything is released and returned but the sub-allocator is not back to one free block';
  }
  return null;
});

export const invariants: Invariant<DeferredSide, DeferredConfig>[] = [
  {
    name: 'live-ranges-sound',
    description:
      'every live allocation lies inside [0, capacity), starts at a multiple of its requested alignment, shares no byte with another, and is exactly an allocation the sub-allocator holds',
    check: bothSides((s) => {
      const sorted = s.liveByOffset;
      for (let i = 0; i < sorted.length; i++) {
        const handout = sorted[i]!;
        const heldBytes = heldSizeAt(s, handout.offsetBytes);
        if (heldBytes !== handout.sizeBytes) {
          return `the caller holds ${rangeText(handout)} but the sub-allocator ${heldBytes === undefined ? 'holds nothing there' : `holds ${heldBytes} bytes there`}`;
        }
        if (
          handout.offsetBytes < 0 ||
          handout.offsetBytes + handout.sizeBytes > s.config.capacityBytes
        ) {
          return `${rangeText(handout)} leaves the capacity of ${s.config.capacityBytes} bytes`;
        }
        if (handout.offsetBytes % handout.alignBytes !== 0)
          return `${rangeText(handout)} is not aligned to ${handout.alignBytes}`;
        if (i > 0 && sorted[i - 1]!.offsetBytes + sorted[i - 1]!.sizeBytes > handout.offsetBytes) {
          return `${rangeText(sorted[i - 1]!)} overlaps ${rangeText(handout)}`;
        }
      }
      return null;
    }),
  },
  {
    name: 'gpu-in-flight-untouched',
    description:
      'nothing is handed out while an unfinished GPU read uses its bytes, and every in-flight read is of bytes the sub-allocator still holds allocated',
    check: bothSides((s) => {
      if (s.violations.length > 0) return s.violations[0]!;
      if (s.timeline.inFlightCount === 0) return null;
      for (let i = 0; i < s.timeline.inFlightCount; i++) {
        const read = s.timeline.inFlightAt(i);
        // The judge's own consistency: a listed read is unfinished and of a value signalled or about to be.
        if (
          !s.timeline.isInFlight(read.fenceValue) ||
          read.fenceValue > s.timeline.lastSignalledValue + 1
        ) {
          return `the timeline lists a read at fence value ${read.fenceValue} as in flight (completed ${s.timeline.completedValue}, last signalled ${s.timeline.lastSignalledValue})`;
        }
        const sizeBytes = heldSizeAt(s, read.offsetBytes);
        if (sizeBytes === undefined || sizeBytes < read.sizeBytes) {
          return (
            `the GPU may still read ${rangeText(read)} until fence value ${read.fenceValue} (completed ${s.timeline.completedValue}) ` +
            `but the sub-allocator no longer holds it allocated`
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
      "free + used + waste = capacity; allocated bytes = live + pending + pooled, split as in the model; heldCount() is the model's; all returned means the sub-allocator is pristine",
    check: (model, impl, config) => {
      const own = accountingOwnSides(model, impl, config);
      if (own !== null) return own;
      // Both sides passed their own checks, which read these this step (nothing changed since).
      const a0 = model.readPendingBytes;
      const a1 = model.readPooledBytes;
      const a2 = model.readFreeBytes;
      const b0 = impl.readPendingBytes;
      const b1 = impl.readPooledBytes;
      const b2 = impl.readFreeBytes;
      if (!sameNumber(a0, b0) || !sameNumber(a1, b1) || !sameNumber(a2, b2))
        return `implementation pending/pooled/free ${b0}/${b1}/${b2}, model ${a0}/${a1}/${a2}`;
      const held = impl.allocator.heldCount();
      const expectedHeld = model.allocator.heldCount();
      if (held !== expectedHeld) return `heldCount() is ${held}, the model's ${expectedHeld}`;
      return null;
    },
  },
];
