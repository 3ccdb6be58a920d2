/**
 * System `alloc-first-fit`: the first-fit allocator of Unreal's BigBlockAllocator shape
 * (spec/allocators.md "First-fit"; seed §5.1). Model: models/alloc-first-fit.ts;
 * implementation: src/alloc/first-fit.ts.
 */
import fc from 'fast-check';
import { Strict, type Static } from '../harness/schema';
import { FirstFitModel } from '../../models/alloc-first-fit';
import { FirstFitAllocator } from '../alloc/first-fit';
import { blockStructure, noAdjacentFreeBlocks } from './alloc-common';
import { SubAllocatorFields, subAllocatorSystem } from './alloc-sub';

export const AllocFirstFitConfigSchema = Strict({ capacityBytes: SubAllocatorFields.capacityBytes });
export type AllocFirstFitConfig = Static<typeof AllocFirstFitConfigSchema>;

export const allocFirstFitSystem = subAllocatorSystem({
  name: 'alloc-first-fit',
  summary: 'first-fit allocator: offset-sorted free blocks, padding kept free, coalescing with both neighbours',
  config: {
    schema: AllocFirstFitConfigSchema,
    arbitrary: () =>
      fc
        .oneof(
          { weight: 4, arbitrary: fc.integer({ min: 1, max: 4096 }) },
          { weight: 1, arbitrary: fc.constantFrom(65536, 65537, 1 << 20) },
        )
        .map((capacityBytes) => ({ capacityBytes })),
  },
  kind: 'first-fit',
  grainsBytes: () => [16, 256, 4096],
  createModel: (config) => new FirstFitModel(config),
  createImpl: (config) => new FirstFitAllocator(config),
  structure: blockStructure<AllocFirstFitConfig>(
    'blocks tile the capacity; no two free blocks are adjacent; the offset-ordered free index holds exactly the free blocks',
    (blocks) => noAdjacentFreeBlocks(blocks),
  ),
  policyProbes: ['padding-kept-free', 'free-merged-twice'],
});
