/**
 * System `alloc-buddy`: the buddy allocator (docs/spec/allocators.md#al-buddy;
 * docs/spec/engine.md#mem-5-2, VMA 2.3, Dawn). Model: models/alloc-buddy.ts; implementation:
 * src/alloc/buddy.ts.
 */
import fc from 'fast-check';
import { Strict, type Static } from '../harness/schema.js';
import { BuddyModel } from '../../models/alloc-buddy.js';
import { BuddyAllocator } from '../alloc/buddy.js';
import { blockStructure } from './alloc-blocks.js';
import { BUDDY_PROMISE } from './alloc-promise.js';
import { SubAllocatorFields, subAllocatorSystem } from './alloc-sub.js';

export const AllocBuddyConfigSchema = Strict({
  capacityBytes: SubAllocatorFields.capacityBytes,
  minBlockBytes: SubAllocatorFields.minBlockBytes,
});
export type AllocBuddyConfig = Static<typeof AllocBuddyConfigSchema>;

/** Scale configs have at least 2^SCALE_MIN_ORDER order-0 blocks (ordinary ones at most 2^12). */
const SCALE_MIN_ORDER = 14;
/**
 * One config in SCALE_CONFIG_ODDS is a scale config. A scale run costs about 75 ordinary ones
 * (measured: the model's linear scans and every check at thousands of blocks), so this share
 * keeps a campaign's commands/s within a few per cent while a 6 s campaign still runs several.
 */
export const SCALE_CONFIG_ODDS = 2500;

const ordinaryConfigArb = () =>
  fc
    .tuple(
      fc.constantFrom(1, 16, 256, 4096),
      fc.oneof(
        { weight: 5, arbitrary: fc.integer({ min: 0, max: 6 }) },
        { weight: 1, arbitrary: fc.integer({ min: 7, max: 12 }) },
      ),
    )
    .map(([minBlockBytes, maxOrder]) => ({
      capacityBytes: minBlockBytes * 2 ** maxOrder,
      minBlockBytes,
    }));

/**
 * Scale: 16 K - 64 K order-0 blocks of 16 or 256 bytes, or of 1 MiB: heaps of 16 - 64 GiB, past
 * the 32-bit size table and with offsets, sizes and alignments above 2^32 (GPU heaps and
 * virtual blocks that large exist).
 */
export const allocBuddyScaleConfigArb = () =>
  fc
    .tuple(fc.constantFrom(16, 256, 1 << 20), fc.integer({ min: SCALE_MIN_ORDER, max: 16 }))
    .map(([minBlockBytes, maxOrder]) => ({
      capacityBytes: minBlockBytes * 2 ** maxOrder,
      minBlockBytes,
    }));

export const allocBuddySystem = subAllocatorSystem({
  name: 'alloc-buddy',
  summary:
    'buddy allocator: per-order free lists, split keeping the left half, merge with offset XOR size',
  config: {
    schema: AllocBuddyConfigSchema,
    arbitrary: () =>
      fc.oneof(
        { weight: SCALE_CONFIG_ODDS - 1, arbitrary: ordinaryConfigArb() },
        { weight: 1, arbitrary: allocBuddyScaleConfigArb() },
      ),
  },
  kind: 'buddy',
  isScaleConfig: (config) => config.capacityBytes / config.minBlockBytes >= 2 ** SCALE_MIN_ORDER,
  emptyPoolPromise: BUDDY_PROMISE,
  grainsBytes: (config) => [config.minBlockBytes],
  createModel: (config) => new BuddyModel(config),
  createImpl: (config) => new BuddyAllocator(config),
  structure: blockStructure<AllocBuddyConfig>(
    'blocks tile the capacity, each minBlock * 2^k bytes at a multiple of its size; no free buddy pair is left unmerged; the free lists hold exactly the free blocks',
    (blocks, s, { minBlockBytes }) => {
      for (const block of blocks) {
        const units = block.sizeBytes / minBlockBytes;
        if (!Number.isInteger(units) || !Number.isInteger(Math.log2(units)))
          return `block at ${block.offsetBytes} has size ${block.sizeBytes}, not minBlock * 2^k`;
        if (block.offsetBytes % block.sizeBytes !== 0)
          return `block [${block.offsetBytes}+${block.sizeBytes}] is not aligned to its size`;
      }
      // The blocks tile the capacity (checked before this rule), so the block at a free block's
      // buddy offset that has the same size is its neighbour: the next one for a left half, the
      // previous one for a right half.
      for (let i = 0; i < blocks.length; i++) {
        const { offsetBytes, sizeBytes, free } = blocks[i]!;
        if (!free || sizeBytes === s.capacityBytes) continue;
        const isLeft = (offsetBytes / sizeBytes) % 2 === 0;
        const buddyOffsetBytes = isLeft ? offsetBytes + sizeBytes : offsetBytes - sizeBytes;
        const buddy = blocks[isLeft ? i + 1 : i - 1];
        if (
          buddy?.free &&
          buddy.offsetBytes === buddyOffsetBytes &&
          buddy.sizeBytes === sizeBytes
        ) {
          return `free buddies [${offsetBytes}+${sizeBytes}] and [${buddyOffsetBytes}+${sizeBytes}] are unmerged`;
        }
      }
      return null;
    },
  ),
  policyProbes: ['split-cascade', 'free-merged-twice'],
});
