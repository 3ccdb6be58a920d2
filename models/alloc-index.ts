/** The reference model of each sub-allocator kind, built from the one shared config type. */
import type { BlockAllocator } from '../src/alloc/allocator.js';
import type { SubAllocatorConfig, SubAllocatorKind } from '../src/alloc/config.js';
import { BestFitModel } from './alloc-best-fit.js';
import { BuddyModel } from './alloc-buddy.js';
import { FirstFitModel } from './alloc-first-fit.js';

export type { SubAllocatorConfig, SubAllocatorKind } from '../src/alloc/config.js';
export { BestFitModel, BuddyModel, FirstFitModel };

export function createSubAllocatorModel(
  kind: SubAllocatorKind,
  config: SubAllocatorConfig,
): BlockAllocator {
  switch (kind) {
    case 'buddy':
      return new BuddyModel(config);
    case 'best-fit':
      return new BestFitModel(config);
    case 'first-fit':
      return new FirstFitModel(config);
  }
}
