/**
 * Which native system a driver is: the `system` key of its hello (docs/native-protocol.md)
 * chooses the allocator contract (`allocator`), the ring upload allocator (`ring-upload`) or the
 * fence-delayed free list (`deferred-free`), or the residency manager with call-backs (`residency`:
 * src/native/native-dispatch.ts starts those on their synchronous transport). `--exec`, the config's `executables` and the files'
 * resolvers all start a driver here and take the system it declares.
 */
import type { AnySystem } from '../harness/system.js';
import { DriverStartError, type NativeDriverOptions } from './driver.js';
import {
  NATIVE_ALLOCATOR_SYSTEM,
  nativeAllocatorSystem,
  projectDriver,
} from './native-allocator.js';
import { NATIVE_RING_UPLOAD_SYSTEM, nativeRingUploadSystem } from './native-ring-upload.js';
import { NATIVE_DEFERRED_FREE_SYSTEM, nativeDeferredFreeSystem } from './native-deferred-free.js';
import { NATIVE_RESIDENCY_SYSTEM, nativeResidencyForProject } from './native-residency.js';
import { nativeDriverTarget } from './native-dispatch.js';

/** The harness system of each hello `system` value. */
const BY_HELLO: Readonly<Record<string, string>> = {
  allocator: NATIVE_ALLOCATOR_SYSTEM,
  'ring-upload': NATIVE_RING_UPLOAD_SYSTEM,
  'deferred-free': NATIVE_DEFERRED_FREE_SYSTEM,
};

/** The names of the native systems (as regression files record them). */
export const NATIVE_SYSTEMS: readonly string[] = [
  ...Object.values(BY_HELLO),
  NATIVE_RESIDENCY_SYSTEM,
];

export function isNativeSystem(name: string): boolean {
  return NATIVE_SYSTEMS.includes(name);
}

/**
 * The native system of an executable relative to `root` (what configs and files record), its
 * driver started once per thread; throws DriverStartError when it cannot start or declares a
 * system this harness does not drive.
 */
export function nativeSystemForProject(
  root: string,
  executable: string,
  options: NativeDriverOptions = {},
): AnySystem {
  const { driver, recorded } = projectDriver(root, executable, options);
  const declared = driver.hello.fields.get('system');
  switch (declared === undefined ? undefined : BY_HELLO[declared]) {
    case NATIVE_ALLOCATOR_SYSTEM:
      return nativeAllocatorSystem(driver, recorded);
    case NATIVE_RING_UPLOAD_SYSTEM:
      return nativeRingUploadSystem(driver, recorded);
    case NATIVE_DEFERRED_FREE_SYSTEM:
      return nativeDeferredFreeSystem(driver, recorded);
    default:
      throw new DriverStartError(
        recorded,
        `its hello declares system ${JSON.stringify(declared)}; this harness drives ${[...Object.keys(BY_HELLO), 'residency'].join(', ')}`,
      );
  }
}

/**
 * The resolver of a native system's files: the executable named in the config, relative to the
 * project root; it must declare the file's system.
 */
export function nativeResolver(root: string, system: string) {
  return async (rawConfig: unknown): Promise<AnySystem> => {
    const config =
      typeof rawConfig === 'object' && rawConfig !== null
        ? (rawConfig as Record<string, unknown>)
        : {};
    const executable = config.executable;
    if (typeof executable !== 'string')
      throw new Error(
        `${system} config: executable must be a string, got ${JSON.stringify(executable)}`,
      );
    const resolved =
      system === NATIVE_RESIDENCY_SYSTEM
        ? nativeResidencyForProject(root, executable)
        : nativeSystemForProject(root, executable);
    if (resolved.name !== system)
      throw new DriverStartError(
        executable,
        `the file is of system ${system}, but the executable is a ${resolved.name} driver`,
      );
    return resolved;
  };
}

/**
 * The system of any driver executable (relative to `root`), residency drivers included: what
 * `--exec` and the config's `executables` fuzz.
 */
export function nativeTargetForProject(root: string, executable: string): AnySystem {
  return nativeDriverTarget(root, executable, (r, e) => nativeSystemForProject(r, e));
}

/** The resolvers of every native system's files, for a registry. */
export function nativeResolvers(root: string) {
  return Object.fromEntries(NATIVE_SYSTEMS.map((system) => [system, nativeResolver(root, system)]));
}
