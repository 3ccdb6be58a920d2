// The first fit of simple-first-fit-allocator.mjs with a planted bug of C-derived code: its
// alignUp is 32-bit arithmetic,
//   const alignUp = (v, a) => (v + a - 1) & ~(a - 1);
// right while v + a - 1 stays under 2^31 (heaps up to 1 GiB), wrong past it (the & works on
// 32-bit integers, so an offset of 2 GiB or more comes back negative). GPU heaps are 256 MiB to 64 GiB; the default campaign
// generates a share of configs that size and finds it:
//   npm run fuzz -- --allocator examples/thirty-two-bit-first-fit.mjs --budget 30s
// A 32-bit allocator that knows it would say so instead: export const maxCapacityBytes = 2 ** 30
// (v + a - 1 stays under 2^31 while offsets and alignments are under 2^30).

import { createFirstFit } from './simple-first-fit-allocator.mjs';

export const policy = 'any';

const alignUp = (value, align) => (value + align - 1) & ~(align - 1);

export function createAllocator(capacityBytes) {
  return createFirstFit(capacityBytes, alignUp);
}
