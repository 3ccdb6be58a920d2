/**
 * System `alloc-first-fit`: the first-fit allocator of Unreal's BigBlockAllocator shape
 * (docs/spec/allocators.md#al-first-fit; docs/spec/engine.md#mem-5-1). Model:
 * models/alloc-first-fit.ts; implementation: src/alloc/first-fit.ts.
 */
import fc from 'fast-check';
import { Strict, type Static } from '../harness/schema.js';
import { FirstFitModel } from '../../models/alloc-first-fit.js';
import { FirstFitAllocator } from '../alloc/first-fit.js';
import { blockStructure, noAdjacentFreeBlocks } from './alloc-blocks.js';
import { FITS_CAPACITY } from './alloc-promise.js';
import { SubAllocatorFields, subAllocatorSystem } from './alloc-sub.js';

export const AllocFirstFitConfigSchema = Strict({
  capacityBytes: SubAllocatorFields.capacityBytes,
});
export type AllocFirstFitConfig = Static<typeof AllocFirstFitConfigSchema>;

/** Scale configs have at least this many bytes (ordinary ones at most 1 MiB). */
const SCALE_MIN_BYTES = 1 << 22;
/**
 * One config in SCALE_CONFIG_ODDS is a scale config. A scale run costs about 225 ordinary ones
 * (measured: the model's linear scans and every check at thousands of blocks), so this share
 * keeps a campaign's commands/s within a few per cent while a 6 s campaign still runs several.
 */
export const SCALE_CONFIG_ODDS = 6000;

/**
 * Scale: 4 - 16 MiB, or 8 - 32 GiB (one in three): offsets, sizes and alignments above 2^32
 * (first fit's structures grow with its blocks, not its capacity).
 */
export const allocFirstFitScaleConfigArb = () =>
  fc
    .oneof(
      { weight: 2, arbitrary: fc.integer({ min: SCALE_MIN_BYTES, max: 4 * SCALE_MIN_BYTES }) },
      { weight: 1, arbitrary: fc.integer({ min: 2 ** 33, max: 2 ** 35 }) },
    )
    .map((capacityBytes) => ({ capacityBytes }));

export const allocFirstFitSystem = subAllocatorSystem({
  name: 'alloc-first-fit',
  summary:
    'first-fit allocator: offset-sorted free blocks, padding kept free, coalescing with both neighbours',
  config: {
    schema: AllocFirstFitConfigSchema,
    arbitrary: () =>
      fc.oneof(
        {
          weight: SCALE_CONFIG_ODDS - 1,
          arbitrary: fc
            .oneof(
              { weight: 4, arbitrary: fc.integer({ min: 1, max: 4096 }) },
              { weight: 1, arbitrary: fc.constantFrom(65536, 65537, 1 << 20) },
            )
            .map((capacityBytes) => ({ capacityBytes })),
        },
        { weight: 1, arbitrary: allocFirstFitScaleConfigArb() },
      ),
  },
  kind: 'first-fit',
  isScaleConfig: (config) => config.capacityBytes >= SCALE_MIN_BYTES,
  emptyPoolPromise: FITS_CAPACITY,
  grainsBytes: () => [16, 256, 4096],
  createModel: (config) => new FirstFitModel(config),
  createImpl: (config) => new FirstFitAllocator(config),
  structure: blockStructure<AllocFirstFitConfig>(
    'blocks tile the capacity; no two free blocks are adjacent; every free block sits in the size bin its usable size gives, in each free index (checkIndexes)',
    (blocks) => noAdjacentFreeBlocks(blocks),
  ),
  policyProbes: ['padding-kept-free', 'free-merged-twice'],
});
