/** The shipped sub-allocators, built from the one shared config type (src/alloc/config.ts). */
import type { BlockAllocator } from './allocator.js';
import type { SubAllocatorConfig, SubAllocatorKind } from './config.js';
import { BestFitAllocator } from './best-fit.js';
import { BuddyAllocator } from './buddy.js';
import { FirstFitAllocator } from './first-fit.js';

export type { SubAllocatorConfig, SubAllocatorKind } from './config.js';
export { BestFitAllocator, BuddyAllocator, FirstFitAllocator };

export function createSubAllocator(
  kind: SubAllocatorKind,
  config: SubAllocatorConfig,
): BlockAllocator {
  switch (kind) {
    case 'buddy':
      return new BuddyAllocator(config);
    case 'best-fit':
      return new BestFitAllocator(config);
    case 'first-fit':
      return new FirstFitAllocator(config);
  }
}
