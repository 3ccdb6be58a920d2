/**
 * The allocator systems' shared parts, re-exported from the modules that hold them (one concept
 * each): alloc-side.ts (the side, its bookkeeping and the ops' effects), alloc-generation.ts
 * (op records, arbitraries, weights), alloc-invariants.ts (the common contract's invariants),
 * alloc-promise.ts (the empty-pool promise and its liveness check), alloc-false-oom.ts (the false
 * out-of-memory metrics), alloc-inspection.ts (the inspection check) and alloc-blocks.ts (block
 * helpers and scale sampling). New code imports from those modules.
 */
export { bothSides } from './common.js';
export * from './alloc-side.js';
export * from './alloc-generation.js';
export * from './alloc-invariants.js';
export * from './alloc-promise.js';
export * from './alloc-false-oom.js';
export * from './alloc-inspection.js';
export * from './alloc-blocks.js';
