/**
 * The bug catalog: every mutant of every system. Loaded by path (src/harness/mutant-catalog.ts)
 * by the tools that need it; the implementations in src/ never import this folder.
 */
import type { AnyMutant } from '../src/harness/system.js';
import { RESIDENCY_SET_MUTANTS } from './residency-set.js';
import { RESIDENCY_MANAGER_MUTANTS } from './residency-manager.js';
import { ALLOC_MUTANTS } from './alloc.js';
import { RING_UPLOAD_MUTANTS } from './ring-upload.js';
import { DEFERRED_FREE_MUTANTS } from './deferred-free.js';
import { FAST_ALLOCATOR_MUTANTS, FAST_CONSTANT_ALLOCATOR_MUTANTS } from './fast-allocator.js';
import { ENGINE_FRAME_MUTANTS } from './engine-frame.js';

export const MUTANTS: readonly AnyMutant[] = [
  ...RESIDENCY_SET_MUTANTS,
  ...RESIDENCY_MANAGER_MUTANTS,
  ...ALLOC_MUTANTS,
  ...RING_UPLOAD_MUTANTS,
  ...DEFERRED_FREE_MUTANTS,
  ...FAST_ALLOCATOR_MUTANTS,
  ...FAST_CONSTANT_ALLOCATOR_MUTANTS,
  ...ENGINE_FRAME_MUTANTS,
];
