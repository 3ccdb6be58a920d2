/**
 * Block helpers of our block allocators (tiling, live ranges in blocks, the `block-structure`
 * invariant, adjacency of free blocks) and the sampling of whole-state checks at scale.
 */
import type { Invariant } from '../harness/system.js';
import { inspectBlocks, type BlockAllocator, type BlockInfo } from '../alloc/allocator.js';
import { bothSides } from './common.js';
import type { AllocSide, TrackedAllocation } from './alloc-side.js';

export function describeBlocks(blocks: readonly BlockInfo[], max = 12): string {
  const shown = blocks
    .slice(0, max)
    .map((block) => `${block.free ? 'free' : 'used'}[${block.offsetBytes}+${block.sizeBytes}]`);
  return shown.join(' ') + (blocks.length > max ? ` ... (${blocks.length} blocks)` : '');
}

/** Checks that `blocks` tile [0, capacity) in offset order; returns the first gap or overlap. */
export function checkTiling(blocks: readonly BlockInfo[], capacityBytes: number): string | null {
  let expectedOffsetBytes = 0;
  for (const block of blocks) {
    if (block.sizeBytes <= 0) return `empty block at ${block.offsetBytes}`;
    if (block.offsetBytes !== expectedOffsetBytes)
      return `block at ${block.offsetBytes} where the tiling expects ${expectedOffsetBytes}`;
    expectedOffsetBytes += block.sizeBytes;
  }
  return expectedOffsetBytes === capacityBytes
    ? null
    : `blocks end at ${expectedOffsetBytes}, capacity is ${capacityBytes}`;
}

function rangeText(allocation: TrackedAllocation): string {
  return `[${allocation.offsetBytes}, ${allocation.offsetBytes + allocation.sizeBytes})`;
}

/**
 * Every live range as the caller holds it lies inside one allocated block, and every allocated
 * block holds exactly one: a range that spills into a free block (or a neighbour) is found at the
 * step that hands it out. `blocks` tile the capacity in offset order; O(live + blocks).
 */
export function checkLiveInBlocks(
  blocks: readonly BlockInfo[],
  sortedLive: readonly TrackedAllocation[],
): string | null {
  let blockIndex = 0;
  let allocatedBlocks = 0;
  for (const block of blocks) if (!block.free) allocatedBlocks++;
  let previousBlock = -1;
  for (const allocation of sortedLive) {
    const { offsetBytes, sizeBytes } = allocation;
    while (
      blockIndex < blocks.length &&
      blocks[blockIndex]!.offsetBytes + blocks[blockIndex]!.sizeBytes <= offsetBytes
    )
      blockIndex++;
    const block = blocks[blockIndex];
    if (block === undefined || block.offsetBytes > offsetBytes)
      return `live range ${rangeText(allocation)} starts in no block`;
    if (block.free)
      return `live range ${rangeText(allocation)} starts in the free block [${block.offsetBytes}+${block.sizeBytes}]`;
    if (offsetBytes + sizeBytes > block.offsetBytes + block.sizeBytes) {
      return `live range ${rangeText(allocation)} runs past its block [${block.offsetBytes}+${block.sizeBytes}]`;
    }
    if (blockIndex === previousBlock)
      return `live range ${rangeText(allocation)} shares the block [${block.offsetBytes}+${block.sizeBytes}] with another`;
    previousBlock = blockIndex;
  }
  return allocatedBlocks === sortedLive.length
    ? null
    : `${allocatedBlocks} allocated blocks for ${sortedLive.length} live ranges`;
}

/**
 * The `block-structure` invariant: the blocks tile the capacity, the caller's live ranges lie
 * one per allocated block, nothing live means one free block of full size (the spec's "back to
 * its initial state"), the policy's own rule (which reads the typed config), and the
 * allocator's self-check of its indexes.
 */
export function blockStructure<C>(
  description: string,
  policyRule: (
    blocks: readonly BlockInfo[],
    s: AllocSide<BlockAllocator>,
    config: C,
  ) => string | null,
): Invariant<AllocSide<BlockAllocator>, C> {
  return {
    name: 'block-structure',
    description,
    check: bothSides((s: AllocSide<BlockAllocator>, config: C) => {
      const blocks = inspectBlocks(s.allocator);
      const tiling = checkTiling(blocks, s.capacityBytes);
      if (tiling !== null) return tiling;
      const containment = checkLiveInBlocks(blocks, s.sortedLive);
      if (containment !== null) return containment;
      if (s.live.length === 0 && (blocks.length !== 1 || !blocks[0]!.free))
        return `nothing is live but the blocks are ${describeBlocks(blocks)}`;
      return policyRule(blocks, s, config) ?? s.allocator.checkIndexes();
    }),
  };
}

/** No two free blocks are adjacent (best fit and first fit merge with both neighbours). */
export function noAdjacentFreeBlocks(blocks: readonly BlockInfo[]): string | null {
  for (let i = 1; i < blocks.length; i++) {
    if (blocks[i - 1]!.free && blocks[i]!.free)
      return `free blocks at ${blocks[i - 1]!.offsetBytes} and ${blocks[i]!.offsetBytes} are adjacent and unmerged`;
  }
  return null;
}

/** Past this many live allocations (only scale runs get there) the whole-state checks are sampled. */
export const SCALE_SAMPLE_LIVE = 512;
/** ... every SCALE_SAMPLE_PERIOD-th step (and after every burst, which is one step). */
const SCALE_SAMPLE_PERIOD = 8;

/**
 * A whole-state check (O(live + blocks) on both sides) run at every step while at most
 * SCALE_SAMPLE_LIVE allocations are live, and on every SCALE_SAMPLE_PERIOD-th step beyond: at
 * thousands of live blocks checking every step made a scale run cost about 300 ordinary ones,
 * and the states these checks read persist from step to step (a broken tiling stays broken).
 * Ordinary runs stay far below the threshold and are checked at every step as before.
 */
export function sampledAtScale<S extends AllocSide, C>(
  invariant: Invariant<S, C>,
): Invariant<S, C> {
  const check = invariant.check;
  return {
    name: invariant.name,
    description: invariant.description,
    check: (model, impl, config) =>
      impl.live.length > SCALE_SAMPLE_LIVE && impl.steps % SCALE_SAMPLE_PERIOD !== 1
        ? null
        : check(model, impl, config),
  };
}
