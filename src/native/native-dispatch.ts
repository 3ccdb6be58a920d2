/**
 * `--exec DRIVER`: which native system a driver implements, from the `system` key of its hello
 * (`allocator`: src/native/native-allocator.ts; `residency`: src/native/native-residency.ts).
 */
import path from 'node:path';
import type { AnySystem } from '../harness/system.js';
import { nativeResidencyOfDriver } from './native-residency.js';
import { SyncDriver } from './sync-driver.js';

/** Residency drivers already started, by absolute path (the dispatch keeps the process it started). */
const STARTED = new Map<string, AnySystem>();

/**
 * The system of a driver executable (relative to `root`): a residency driver keeps the process its
 * hello was read from; any other driver is handed to `allocator` (the allocator system, which
 * starts its own process and checks its hello).
 */
export function nativeDriverTarget(
  root: string,
  executable: string,
  allocator: (root: string, executable: string) => AnySystem,
): AnySystem {
  const absolute = path.resolve(root, executable);
  const known = STARTED.get(absolute);
  if (known !== undefined) return known;
  const driver = new SyncDriver(absolute);
  if (driver.hello.fields.get('system') !== 'residency') {
    driver.close();
    return allocator(root, executable);
  }
  const system = nativeResidencyOfDriver(root, driver);
  STARTED.set(absolute, system);
  return system;
}
