/**
 * System `alloc-first-fit`: the first-fit allocator of Unreal's BigBlockAllocator shape
 * (spec/allocators.md "First-fit"; seed §5.1). Model: models/alloc-first-fit.ts;
 * implementation: src/alloc/first-fit.ts.
 */
import fc from 'fast-check';
import { FirstFitModel } from '../../models/alloc-first-fit';
import { FirstFitAllocator } from '../alloc/first-fit';
import { blockStructure, noAdjacentFreeBlocks } from './alloc-common';
import { subAllocatorSystem } from './alloc-sub';

export const allocFirstFitSystem = subAllocatorSystem({
  name: 'alloc-first-fit',
  summary: 'first-fit allocator: offset-sorted free blocks, padding kept free, coalescing with both neighbours',
  configSchema: { capacityBytes: 'nat' },
  kind: 'first-fit',
  configArb: () =>
    fc
      .oneof(
        { weight: 4, arbitrary: fc.integer({ min: 1, max: 4096 }) },
        { weight: 1, arbitrary: fc.constantFrom(65536, 65537, 1 << 20) },
      )
      .map((capacityBytes) => ({ capacityBytes })),
  grainsBytes: () => [16, 256, 4096],
  createModel: (config) => new FirstFitModel(config),
  createImpl: (config) => new FirstFitAllocator(config),
  structure: blockStructure(
    'blocks tile the capacity; no two free blocks are adjacent; the offset-ordered free index holds exactly the free blocks',
    (blocks) => noAdjacentFreeBlocks(blocks),
  ),
  policyProbes: ['padding-kept-free', 'free-merged-twice'],
});
