/**
 * The systems registry: every system under verification, by name. The property suites, the
 * fuzz CLI, the regression replayer and the mutant report all look systems up here.
 */
import type { SystemDef } from './system';
import { residencySetSystem } from '../systems/residency-set';
import { residencyManagerSystem } from '../systems/residency-manager';
import { allocBuddySystem } from '../systems/alloc-buddy';
import { allocBestFitSystem } from '../systems/alloc-best-fit';
import { allocFirstFitSystem } from '../systems/alloc-first-fit';
import { ringUploadSystem } from '../systems/ring-upload';
import { deferredFreeSystem } from '../systems/deferred-free';
import { userAllocatorSystemForConfig } from '../systems/user-allocator';
import { isPlainObject, type JsonObject } from './json';

export const SYSTEMS: readonly SystemDef[] = [
  residencySetSystem,
  residencyManagerSystem,
  allocBuddySystem,
  allocBestFitSystem,
  allocFirstFitSystem,
  ringUploadSystem,
  deferredFreeSystem,
];

/** The system a user's allocator module becomes (`npm run fuzz -- --allocator <module>`). */
export const USER_ALLOCATOR_SYSTEM = 'user-allocator';

export function systemNames(): string[] {
  return SYSTEMS.map((system) => system.name);
}

export function findSystem(name: string): SystemDef | undefined {
  return SYSTEMS.find((system) => system.name === name);
}

/**
 * The system a regression file names. Registered systems are looked up by name; a
 * 'user-allocator' file names its module and policy in its config, which is loaded here.
 */
export async function systemForFile(name: string, rawConfig: unknown): Promise<SystemDef | undefined> {
  if (name !== USER_ALLOCATOR_SYSTEM) return findSystem(name);
  if (!isPlainObject(rawConfig)) return undefined;
  return userAllocatorSystemForConfig(rawConfig as JsonObject);
}
