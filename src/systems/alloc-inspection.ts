/**
 * The `inspection-answers` invariant: the implementation's public inspection answers (live(),
 * blocks(), isPristine(), best fit's freeBlocksBySize()) against the truth, on a sample of steps.
 */
import type { Invariant } from '../harness/system.js';
import { inspectBlocks, type Allocator, type BlockAllocator } from '../alloc/allocator.js';
import { searchByOffset } from './common.js';
import type { AllocSide } from './alloc-side.js';

/** Best fit's size-ordered free blocks (the spec's FreeBlocks), on model and implementation. */
export interface FreeBlocksBySize {
  freeBlocksBySize(): { offsetBytes: number; sizeBytes: number }[];
}

function hasFreeBlocksBySize(allocator: Allocator): allocator is Allocator & FreeBlocksBySize {
  return 'freeBlocksBySize' in allocator && typeof allocator.freeBlocksBySize === 'function';
}

function entryText(entry: Entry | undefined): string {
  if (entry === undefined) return 'nothing';
  return `${entry.free === undefined ? '' : entry.free ? 'free' : 'used'}[${entry.offsetBytes}+${entry.sizeBytes}]`;
}

/**
 * Whether the implementation's public inspection answers are checked after this step: at each
 * of a run's first INSPECTION_FULL_STEPS steps (so a shrunk counterexample, which is short, is
 * checked at every step), then every INSPECTION_PERIOD-th step, and with many allocations live
 * every live/4-th: the cost per step stays a small constant share of the other checks
 * (measured on buddy: checking every step cost about 14 % of a campaign's commands/s, this
 * sample about 3 %).
 */
const INSPECTION_FULL_STEPS = 5;
const INSPECTION_PERIOD = 16;

function inspectsAt(s: AllocSide): boolean {
  const steps = s.steps;
  if (steps <= INSPECTION_FULL_STEPS) return true;
  const period = Math.max(INSPECTION_PERIOD, s.live.length >> 2);
  return steps % period === 1;
}

type Entry = { readonly offsetBytes: number; readonly sizeBytes: number; readonly free?: boolean };

function sameRange(a: Entry, b: Entry): boolean {
  return a.offsetBytes === b.offsetBytes && a.sizeBytes === b.sizeBytes;
}

/** live() against the caller's live ranges, ascending by offset. */
function liveMatchesCaller(live: readonly Entry[], tracked: readonly Entry[]): string | null {
  for (let i = 0; i < Math.max(live.length, tracked.length); i++) {
    const reported = live[i];
    const expected = tracked[i];
    if (reported === undefined || expected === undefined || !sameRange(reported, expected)) {
      return `live() entry #${i} is ${entryText(reported)}, the caller holds ${entryText(expected)} (${live.length} entries for ${tracked.length} live)`;
    }
  }
  return null;
}

/** live() is a fresh array of fresh records, not the view liveView() reuses. */
function liveIsFresh(allocator: BlockAllocator, live: readonly Entry[]): string | null {
  if (allocator.liveView === undefined) return null;
  const view = allocator.liveView();
  if (view === live)
    return 'live() returned its view (liveView()), which the allocator rewrites at its next call, not a copy';
  for (let i = 0; i < live.length; i++)
    if (live[i] === view[i])
      return `live() entry #${i} is the view's reused record, which the allocator rewrites at its next call`;
  return null;
}

/** blocks() against its view twin blocksView(), entry by entry, in fresh records. */
function blocksMatchView(blocks: readonly Entry[], twin: readonly Entry[]): string | null {
  if (twin === blocks)
    return 'blocks() returned its view (blocksView()), which the allocator rewrites at its next call, not a copy';
  for (let i = 0; i < Math.max(blocks.length, twin.length); i++) {
    const reported = blocks[i];
    const expected = twin[i];
    if (
      reported === undefined ||
      expected === undefined ||
      !sameRange(reported, expected) ||
      reported.free !== expected.free
    ) {
      return `blocks() entry #${i} is ${entryText(reported)}, blocksView() has ${entryText(expected)} (${blocks.length} blocks, the view ${twin.length})`;
    }
    if (reported === expected)
      return `blocks() entry #${i} is the view's reused record, which the allocator rewrites at its next call`;
  }
  return null;
}

/** isPristine(): back to the initial state, one free block of full size, exactly when nothing is live. */
function pristineMatches(
  allocator: BlockAllocator,
  liveCount: number,
  twin: readonly Entry[],
  capacityBytes: number,
): string | null {
  const pristine =
    liveCount === 0 &&
    twin.length === 1 &&
    twin[0]!.free === true &&
    twin[0]!.sizeBytes === capacityBytes;
  if (allocator.isPristine() === pristine) return null;
  return `isPristine() answers ${!pristine} with ${liveCount} allocations live and ${twin.length} blocks`;
}

/** Whether `before` may precede `entry` in the spec's FreeBlocks order (size ascending, then offset). */
function inFreeBlocksOrder(before: Entry, entry: Entry): boolean {
  return (
    before.sizeBytes < entry.sizeBytes ||
    (before.sizeBytes === entry.sizeBytes && before.offsetBytes < entry.offsetBytes)
  );
}

/**
 * Best fit's freeBlocksBySize() against the free blocks of the view in the spec's FreeBlocks
 * order (size ascending, ties by lower offset); the model keeps the same order
 * (models/alloc-best-fit.ts).
 */
function freeBlocksBySizeMatchView(
  allocator: FreeBlocksBySize,
  twin: readonly Entry[],
): string | null {
  const bySize = allocator.freeBlocksBySize();
  let free = 0;
  for (let i = 0; i < twin.length; i++) if (twin[i]!.free) free++;
  if (bySize.length !== free)
    return `freeBlocksBySize() lists ${bySize.length} free blocks, blocksView() has ${free}`;
  for (let i = 0; i < bySize.length; i++) {
    const entry = bySize[i]!;
    const block = twin[searchByOffset(twin, entry.offsetBytes, false)];
    if (block === undefined || !block.free || !sameRange(block, entry)) {
      return `freeBlocksBySize() entry #${i} is ${entryText(entry)}, which is no free block of blocksView()`;
    }
    const before = bySize[i - 1];
    if (before !== undefined && !inFreeBlocksOrder(before, entry)) {
      return `freeBlocksBySize() lists ${entryText(before)} before ${entryText(entry)}: not by size ascending, then offset ascending`;
    }
  }
  return null;
}

/**
 * The implementation's public answers against the truth, on a sample of steps (`inspectsAt`):
 * live() against the caller's live ranges (ascending by offset), blocks() against its view twin
 * blocksView() (which block-structure holds to the spec), best fit's freeBlocksBySize() against
 * the free blocks of that view in the spec's FreeBlocks order; and live() and blocks() hand the
 * caller its own array of its own records, not the view twin or its reused records, which the
 * allocator rewrites under the caller at its next call. (Compared with the implementation's own
 * view rather than the model's blocks, so a wrong choice of block stays the observation's
 * finding.) The calls run in this order: live(), liveView(), blocks(), blocksView().
 */
export const inspectionAnswers: Invariant<AllocSide<BlockAllocator>, unknown> = {
  name: 'inspection-answers',
  description:
    "the implementation's live(), blocks(), isPristine() and (best fit) freeBlocksBySize() agree with the caller's live ranges, its blocksView() and that view's free blocks by size then offset, in fresh arrays of fresh records (sampled: each of a run's first 5 steps, then every 16th, or every live/4-th)",
  check: (_model, impl) => {
    if (!inspectsAt(impl)) return null;
    const allocator = impl.allocator;
    const live = allocator.live();
    const problem = liveMatchesCaller(live, impl.sortedLive) ?? liveIsFresh(allocator, live);
    if (problem !== null) return problem;
    const blocks = allocator.blocks();
    const twin = inspectBlocks(allocator);
    return (
      blocksMatchView(blocks, twin) ??
      pristineMatches(allocator, impl.sortedLive.length, twin, impl.capacityBytes) ??
      (hasFreeBlocksBySize(allocator) ? freeBlocksBySizeMatchView(allocator, twin) : null)
    );
  },
};
