// first_fit.cpp built with -DBUG_SIZE_T (first_fit_bug_size_t.wasm): sizes and offsets kept in
// size_t, which is 32 bits on wasm32. Correct on heaps below 4 GiB; found on larger ones:
//   npm run fuzz -- --allocator examples/wasm/first-fit-bug-size-t.mjs --budget 30s

import { wasmAllocator } from './wasm-allocator.mjs';

export const policy = 'first-fit';
export const promise = {};
export const createAllocator = wasmAllocator(
  new URL('./first_fit_bug_size_t.wasm', import.meta.url),
);
