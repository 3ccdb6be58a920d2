/** The reference model of each sub-allocator kind, built from the one shared config type. */
import type { BlockAllocator } from '../src/alloc/allocator';
import type { SubAllocatorConfig, SubAllocatorKind } from '../src/alloc/config';
import { BestFitModel } from './alloc-best-fit';
import { BuddyModel } from './alloc-buddy';
import { FirstFitModel } from './alloc-first-fit';

export type { SubAllocatorConfig, SubAllocatorKind } from '../src/alloc/config';
export { BestFitModel, BuddyModel, FirstFitModel };

export function createSubAllocatorModel(kind: SubAllocatorKind, config: SubAllocatorConfig): BlockAllocator {
  switch (kind) {
    case 'buddy':
      return new BuddyModel(config);
    case 'best-fit':
      return new BestFitModel(config);
    case 'first-fit':
      return new FirstFitModel(config);
  }
}
