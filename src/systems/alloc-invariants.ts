/**
 * The invariants of the common contract (docs/spec/allocators.md#al-common) every allocator
 * system checks on both sides (in bounds and aligned, no overlap, honest answers), the byte
 * accounting of our block allocators, the comparisons with the model, and the ordered list of a
 * sub-allocator system's invariants.
 */
import type { Invariant } from '../harness/system.js';
import {
  inspectBlocks,
  inspectLive,
  isPowerOfTwo,
  type BlockAllocator,
} from '../alloc/allocator.js';
import { bothSides } from './common.js';
import type { AllocSide, TrackedAllocation } from './alloc-side.js';
import { sampledAtScale } from './alloc-blocks.js';
import { emptyPoolLiveness, type EmptyPoolPromise } from './alloc-promise.js';
import { inspectionAnswers } from './alloc-inspection.js';

function sortedByOffset(s: AllocSide): TrackedAllocation[] {
  return s.sortedLive;
}

/**
 * offsetBytes % alignBytes !== 0 for a power-of-two alignment, by a bit mask when both fit 31
 * bits (the same answer for every integer offset).
 */
function misaligned(offsetBytes: number, alignBytes: number): boolean {
  if ((offsetBytes | 0) === offsetBytes && alignBytes <= 0x40000000)
    return (offsetBytes & (alignBytes - 1)) !== 0;
  return offsetBytes % alignBytes !== 0;
}

export const inBoundsAligned: Invariant<AllocSide, unknown> = {
  name: 'in-bounds-aligned',
  description:
    'every live allocation lies inside [0, capacity) and starts at a multiple of its alignment',
  check: bothSides((s) => {
    for (const allocation of s.live) {
      const { offsetBytes, sizeBytes, alignBytes } = allocation;
      if (offsetBytes < 0 || offsetBytes + sizeBytes > s.capacityBytes) {
        return `[${offsetBytes}, ${offsetBytes + sizeBytes}) leaves [0, ${s.capacityBytes})`;
      }
      // A non-power-of-two alignment was a bad request: if an allocator accepted it, the
      // observation (error against offset) reports that, not this invariant.
      if (isPowerOfTwo(alignBytes) && misaligned(offsetBytes, alignBytes))
        return `offset ${offsetBytes} is not aligned to ${alignBytes}`;
    }
    return null;
  }),
};

export const noOverlap: Invariant<AllocSide, unknown> = {
  name: 'no-overlap',
  description: 'no two live allocations share a byte',
  check: bothSides((s) => {
    const sorted = sortedByOffset(s);
    for (let i = 1; i < sorted.length; i++) {
      const before = sorted[i - 1]!;
      const after = sorted[i]!;
      if (before.offsetBytes + before.sizeBytes > after.offsetBytes) {
        return `[${before.offsetBytes}, ${before.offsetBytes + before.sizeBytes}) overlaps [${after.offsetBytes}, ${after.offsetBytes + after.sizeBytes})`;
      }
    }
    return null;
  }),
};

export const honestAnswers: Invariant<AllocSide, unknown> = {
  name: 'honest-answers',
  description:
    'alloc returns an integer offset or null; a free is accepted only for the start of a live allocation',
  check: bothSides((s) => (s.violations.length === 0 ? null : s.violations[0]!)),
};

/** The caller's live sizes, summed. */
function trackedBytes(s: AllocSide): number {
  let total = 0;
  for (const allocation of s.live) total += allocation.sizeBytes;
  return total;
}

/**
 * One side's byte counts against what they count: free bytes are the free blocks' bytes, used
 * bytes the caller's live sizes, waste the allocated blocks' bytes beyond the caller's sizes;
 * the allocator's live list is the caller's.
 */
function ownAccounting(s: AllocSide<BlockAllocator>): string | null {
  const a = s.allocator;
  const freeBytes = a.freeBytes();
  const usedBytes = a.usedBytes();
  const wasteBytes = a.wasteBytes();
  if (freeBytes < 0 || usedBytes < 0 || wasteBytes < 0)
    return `negative count: free ${freeBytes}, used ${usedBytes}, waste ${wasteBytes}`;
  const heldBytes = trackedBytes(s);
  if (usedBytes !== heldBytes)
    return `usedBytes ${usedBytes} but the caller holds ${heldBytes} bytes`;
  let freeBlockBytes = 0;
  let allocatedBlockBytes = 0;
  for (const block of inspectBlocks(a)) {
    if (block.free) freeBlockBytes += block.sizeBytes;
    else allocatedBlockBytes += block.sizeBytes;
  }
  if (freeBytes !== freeBlockBytes)
    return `freeBytes() says ${freeBytes}, the free blocks hold ${freeBlockBytes}`;
  if (wasteBytes !== allocatedBlockBytes - heldBytes) {
    return `wasteBytes() says ${wasteBytes}, the allocated blocks hold ${allocatedBlockBytes} bytes for ${heldBytes} live bytes`;
  }
  if (freeBytes + usedBytes + wasteBytes !== s.capacityBytes) {
    return `free ${freeBytes} + used ${usedBytes} + waste ${wasteBytes} != capacity ${s.capacityBytes}`;
  }
  const reported = inspectLive(a);
  const tracked = sortedByOffset(s);
  if (reported.length !== tracked.length)
    return `the allocator reports ${reported.length} live allocations, the caller holds ${tracked.length}`;
  for (let i = 0; i < tracked.length; i++) {
    if (
      reported[i]!.offsetBytes !== tracked[i]!.offsetBytes ||
      reported[i]!.sizeBytes !== tracked[i]!.sizeBytes
    ) {
      return `live allocation #${i} is ${JSON.stringify(reported[i])}, the caller holds ${JSON.stringify(tracked[i])}`;
    }
  }
  return null;
}

export const accounting: Invariant<AllocSide<BlockAllocator>, unknown> = {
  name: 'accounting',
  description:
    "free + used + waste = capacity, where freeBytes() must be the free blocks' bytes, usedBytes() the caller's live sizes and wasteBytes() the allocated blocks' bytes beyond them; the allocator's live list is the caller's",
  check: bothSides(ownAccounting),
};

/**
 * The cross-side half of the byte counts: both sides' counts are checked against their own
 * blocks by `accounting`, this compares them with each other. It runs after
 * no-false-out-of-memory (a request only the model placed is that check's finding) and skips a
 * step one side refused with a contract error and the other did not: the observation reports
 * that, and the bytes after two different answers would only restate it.
 */
export const matchesModel: Invariant<AllocSide<BlockAllocator>, unknown> = {
  name: 'matches-model',
  description:
    'after every step both sides accepted or refused alike, the implementation reports the free and waste bytes the model reports',
  check: (model, impl) => {
    if (model.lastErrorCode !== impl.lastErrorCode) return null;
    const modelFree = model.allocator.freeBytes();
    const implFree = impl.allocator.freeBytes();
    const modelWaste = model.allocator.wasteBytes();
    const implWaste = impl.allocator.wasteBytes();
    if (modelFree !== implFree || modelWaste !== implWaste) {
      return `implementation free ${implFree} / waste ${implWaste} bytes, model free ${modelFree} / waste ${modelWaste}`;
    }
    return null;
  },
};

/** Reads only `lastAllocResult`, so the ring-upload and deferred-free sides (which hold it with the same meaning) use it too. */
export const noFalseOutOfMemory: Invariant<Pick<AllocSide, 'lastAllocResult'>, unknown> = {
  name: 'no-false-out-of-memory',
  description: 'when the model finds room for a request, the implementation does too',
  check: (model, impl) =>
    model.lastAllocResult !== undefined &&
    model.lastAllocResult !== null &&
    impl.lastAllocResult === null
      ? `the model placed the request at ${model.lastAllocResult}, the implementation answered null`
      : null,
};

/** The invariants of a sub-allocator system, in the order the runner checks them. */
export function subAllocatorInvariants<C>(
  structure: Invariant<AllocSide<BlockAllocator>, C>,
  promise: EmptyPoolPromise<C>,
): Invariant<AllocSide<BlockAllocator>, C>[] {
  return [
    sampledAtScale(noOverlap),
    sampledAtScale(inBoundsAligned),
    honestAnswers,
    sampledAtScale(accounting),
    emptyPoolLiveness(promise),
    noFalseOutOfMemory,
    matchesModel,
    sampledAtScale(structure),
    inspectionAnswers,
  ];
}
