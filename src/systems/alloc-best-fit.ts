/**
 * System `alloc-best-fit`: the best-fit pool of Unreal's FRHIMemoryPool shape
 * (docs/spec/allocators.md#al-best-fit; docs/spec/engine.md#mem-3-4), 256-byte and 64 KiB pool
 * alignments, with the single-allocation limit. Model: models/alloc-best-fit.ts; implementation:
 * src/alloc/best-fit.ts.
 */
import fc from 'fast-check';
import { Strict, type Static } from '../harness/schema.js';
import { BestFitModel } from '../../models/alloc-best-fit.js';
import { BestFitAllocator } from '../alloc/best-fit.js';
import { blockStructure, noAdjacentFreeBlocks } from './alloc-blocks.js';
import { bestFitPromise } from './alloc-promise.js';
import { SubAllocatorFields, subAllocatorSystem } from './alloc-sub.js';

export const AllocBestFitConfigSchema = Strict({
  capacityBytes: SubAllocatorFields.capacityBytes,
  poolAlignBytes: SubAllocatorFields.poolAlignBytes,
  maxAllocationBytes: SubAllocatorFields.maxAllocationBytes,
});
export type AllocBestFitConfig = Static<typeof AllocBestFitConfigSchema>;

/** Scale configs have at least this many pool-alignment units (ordinary ones at most 256). */
const SCALE_MIN_UNITS = 8192;
/**
 * One config in SCALE_CONFIG_ODDS is a scale config. A scale run costs about 110 ordinary ones
 * (measured: the model's linear scans and every check at thousands of blocks), so this share
 * keeps a campaign's commands/s within a few per cent while a 6 s campaign still runs several.
 */
export const SCALE_CONFIG_ODDS = 3000;

const ordinaryConfigArb = () =>
  fc
    .tuple(
      fc.constantFrom(256, 65536),
      fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 24 }) },
        { weight: 1, arbitrary: fc.integer({ min: 25, max: 256 }) },
      ),
      fc.oneof(
        { weight: 3, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.constant(0.5) },
        { weight: 1, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
      ),
    )
    .map(([poolAlignBytes, units, limitFraction]) => {
      const capacityBytes = poolAlignBytes * units;
      return {
        capacityBytes,
        poolAlignBytes,
        maxAllocationBytes: Math.max(1, Math.floor(capacityBytes * limitFraction)),
      };
    });

/** Scale: 8 K - 32 K units of 256 bytes, no single-allocation limit. */
export const allocBestFitScaleConfigArb = () =>
  fc.integer({ min: SCALE_MIN_UNITS, max: 4 * SCALE_MIN_UNITS }).map((units) => ({
    capacityBytes: 256 * units,
    poolAlignBytes: 256,
    maxAllocationBytes: 256 * units,
  }));

export const allocBestFitSystem = subAllocatorSystem({
  name: 'alloc-best-fit',
  summary:
    'best-fit pool: offset-ordered block list, size-sorted free blocks, aligned-size rule, single-allocation limit',
  config: {
    schema: AllocBestFitConfigSchema,
    arbitrary: () =>
      fc.oneof(
        { weight: SCALE_CONFIG_ODDS - 1, arbitrary: ordinaryConfigArb() },
        { weight: 1, arbitrary: allocBestFitScaleConfigArb() },
      ),
  },
  kind: 'best-fit',
  isScaleConfig: (config) => config.capacityBytes / config.poolAlignBytes >= SCALE_MIN_UNITS,
  emptyPoolPromise: (config, capacityBytes, sizeBytes, alignBytes) =>
    bestFitPromise(config.poolAlignBytes, config.maxAllocationBytes)(
      config,
      capacityBytes,
      sizeBytes,
      alignBytes,
    ),
  grainsBytes: (config) => [config.poolAlignBytes, config.maxAllocationBytes],
  createModel: (config) => new BestFitModel(config),
  createImpl: (config) => new BestFitAllocator(config),
  structure: blockStructure<AllocBestFitConfig>(
    'blocks tile the pool at multiples of the pool alignment; no two free blocks are adjacent; the size-sorted free array holds exactly the free blocks in (size, offset) order',
    (blocks, _s, { poolAlignBytes }) => {
      for (const block of blocks) {
        if (block.offsetBytes % poolAlignBytes !== 0 || block.sizeBytes % poolAlignBytes !== 0) {
          return `block [${block.offsetBytes}+${block.sizeBytes}] is off the ${poolAlignBytes}-byte pool grid`;
        }
      }
      return noAdjacentFreeBlocks(blocks);
    },
  ),
  policyProbes: [
    'committed-path',
    'best-fit-not-lowest-offset',
    'alignment-reserved',
    'free-merged-twice',
  ],
});
