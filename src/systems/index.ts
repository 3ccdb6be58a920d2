/**
 * The built-in systems and the registry the project's own tools use: the seven systems, the
 * user-allocator system (built from the module a file's config names) and the bug catalog in
 * mutants/, which is loaded by path at run time (src/ never imports mutants/ statically).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { Registry } from '../harness/registry';
import type { AnyMutant, AnySystem } from '../harness/system';
import { residencySetSystem } from './residency-set';
import { residencyManagerSystem } from './residency-manager';
import { allocBuddySystem } from './alloc-buddy';
import { allocBestFitSystem } from './alloc-best-fit';
import { allocFirstFitSystem } from './alloc-first-fit';
import { ringUploadSystem } from './ring-upload';
import { deferredFreeSystem } from './deferred-free';
import { fastAllocatorSystem } from './fast-allocator';
import { fastConstantAllocatorSystem } from './fast-constant-allocator';
import { engineFrameSystem } from './engine-frame';
import { USER_ALLOCATOR_SYSTEM, userAllocatorSystemForConfig } from './user-allocator';

export const BUILTIN_SYSTEMS: readonly AnySystem[] = [
  residencySetSystem,
  residencyManagerSystem,
  allocBuddySystem,
  allocBestFitSystem,
  allocFirstFitSystem,
  ringUploadSystem,
  deferredFreeSystem,
  fastAllocatorSystem,
  fastConstantAllocatorSystem,
  engineFrameSystem,
];

/** The project's root (where mutants/ and regressions/ live). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Loads the built-in bug catalog, mutants/index.ts. */
export async function loadBuiltinMutants(): Promise<readonly AnyMutant[]> {
  const catalog = pathToFileURL(path.join(PROJECT_ROOT, 'mutants', 'index.ts')).href;
  return ((await import(catalog)) as { MUTANTS: readonly AnyMutant[] }).MUTANTS;
}

/** The built-in registry: the seven systems, user allocators from file configs, the bug catalog. */
export const BUILTIN_REGISTRY = new Registry({
  systems: BUILTIN_SYSTEMS,
  loadMutants: loadBuiltinMutants,
  resolvers: { [USER_ALLOCATOR_SYSTEM]: (rawConfig) => userAllocatorSystemForConfig(rawConfig) },
});
