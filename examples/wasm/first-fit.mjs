// The C++ first fit of first_fit.cpp, compiled to first_fit.wasm by build.sh, as an allocator module:
//   npm run fuzz -- --allocator examples/wasm/first-fit.mjs --budget 30s
// It makes the choices of our first-fit model, so it is compared with it offset for offset.

import { wasmAllocator } from './wasm-allocator.mjs';

export const policy = 'first-fit';
/** An empty pool places every request up to its capacity, at any alignment (offset 0). */
export const promise = {};
export const createAllocator = wasmAllocator(new URL('./first_fit.wasm', import.meta.url));
