/** The shipped sub-allocators, built from the one shared config type (src/alloc/config.ts). */
import type { BlockAllocator } from './allocator';
import type { SubAllocatorConfig, SubAllocatorKind } from './config';
import { BestFitAllocator } from './best-fit';
import { BuddyAllocator } from './buddy';
import { FirstFitAllocator } from './first-fit';

export type { SubAllocatorConfig, SubAllocatorKind } from './config';
export { BestFitAllocator, BuddyAllocator, FirstFitAllocator };

export function createSubAllocator(kind: SubAllocatorKind, config: SubAllocatorConfig): BlockAllocator {
  switch (kind) {
    case 'buddy':
      return new BuddyAllocator(config);
    case 'best-fit':
      return new BestFitAllocator(config);
    case 'first-fit':
      return new FirstFitAllocator(config);
  }
}
