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

export const SYSTEMS: readonly SystemDef[] = [residencySetSystem, residencyManagerSystem, allocBuddySystem, allocBestFitSystem, allocFirstFitSystem, ringUploadSystem, deferredFreeSystem];

export function systemNames(): string[] {
  return SYSTEMS.map((system) => system.name);
}

export function findSystem(name: string): SystemDef | undefined {
  return SYSTEMS.find((system) => system.name === name);
}
