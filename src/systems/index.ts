/**
 * The built-in systems and the registry the project's own tools use: the seven systems, the
 * user-allocator system (built from the module a file's config names) and the bug catalog in
 * mutants/, which is loaded by path at run time (src/ never imports mutants/ statically).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';
import { Registry } from '../harness/registry.js';
import { PACKAGE_ROOT } from '../package-root.js';
import type { AnyMutant, AnySystem } from '../harness/system.js';
import { residencySetSystem } from './residency-set.js';
import { residencyManagerSystem } from './residency-manager.js';
import { allocBuddySystem } from './alloc-buddy.js';
import { allocBestFitSystem } from './alloc-best-fit.js';
import { allocFirstFitSystem } from './alloc-first-fit.js';
import { ringUploadSystem } from './ring-upload.js';
import { deferredFreeSystem } from './deferred-free.js';
import { fastAllocatorSystem } from './fast-allocator.js';
import { fastConstantAllocatorSystem } from './fast-constant-allocator.js';
import { engineFrameSystem } from './engine-frame.js';
import { USER_ALLOCATOR_SYSTEM, userAllocatorSystemForConfig } from './user-allocator.js';
import { nativeResolvers } from '../native/native-systems.js';

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

/** The package's root (package.json, schema/, the repo's regressions/). */
export const PROJECT_ROOT = PACKAGE_ROOT;

/** Loads the built-in bug catalog: mutants/index.ts next to src/ (compiled: dist/mutants/index.js next to dist/src/). */
export async function loadBuiltinMutants(): Promise<readonly AnyMutant[]> {
  const here = fileURLToPath(import.meta.url);
  const catalog = pathToFileURL(
    path.resolve(path.dirname(here), '..', '..', 'mutants', `index${path.extname(here)}`),
  ).href;
  return ((await import(catalog)) as { MUTANTS: readonly AnyMutant[] }).MUTANTS;
}

/** The built-in registry: the seven systems, user allocators from file configs, the bug catalog. */
export const BUILTIN_REGISTRY = new Registry({
  systems: BUILTIN_SYSTEMS,
  loadMutants: loadBuiltinMutants,
  resolvers: {
    [USER_ALLOCATOR_SYSTEM]: (rawConfig) => userAllocatorSystemForConfig(rawConfig),
    ...nativeResolvers(process.cwd()),
  },
});
