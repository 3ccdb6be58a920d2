/**
 * Loading a user's allocator module for `npm run fuzz -- --allocator <module>` (the contract is
 * in allocator.ts and the README): the module exports `createAllocator(capacityBytes)` returning
 * `{ alloc(sizeBytes, alignBytes): number | null, free(offsetBytes): void }`, and optionally
 *   export const policy = 'first-fit' | 'best-fit' | 'buddy' | 'any'   (default 'any')
 *   export const minBlockBytes = 256     (policy 'buddy': its order-0 block size; default 256)
 *   export const poolAlignBytes = 256    (policy 'best-fit': its pool alignment; default 256)
 *   export const promise = { minPoolBytes, overheadBytes, headerBytes, minBlockBytes, roundsTo,
 *     alignSlack, maxSizeBytes, maxAlignBytes }   (what it promises on an empty pool; see
 *     AllocatorPromise in src/systems/alloc-promise.ts; default: its policy's promise)
 *   or export function promises(capacityBytes, sizeBytes, alignBytes) => boolean
 *   export const maxCapacityBytes = 2 ** 32 - 1   (the largest heap it supports; default 64 GiB)
 * Every problem with the module is one line naming the file and the export.
 *
 * It sits beside the other loaders of a user's files (project.ts: the config; load-module.ts:
 * TypeScript modules), not in src/alloc: it reads and validates a module, it allocates nothing.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { exportNames, loadErrorText } from './load-module.js';
import { isPowerOfTwo, type Allocator, type AllocatorPolicy } from './alloc/allocator.js';
import {
  promiseProblem,
  type AllocatorPromise,
  type PromiseFunction,
} from './systems/alloc-promise.js';

export const ALLOCATOR_POLICIES: readonly AllocatorPolicy[] = [
  'first-fit',
  'best-fit',
  'buddy',
  'any',
];
const MODULE_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts', '.mts'];

export interface UserAllocatorModule {
  /** Absolute path of the module. */
  readonly modulePath: string;
  readonly createAllocator: (capacityBytes: number) => Allocator;
  readonly policy: AllocatorPolicy;
  /** Policy 'buddy': the order-0 block size our model assumes. */
  readonly minBlockBytes: number;
  /** Policy 'best-fit': the pool alignment our model assumes. */
  readonly poolAlignBytes: number;
  /** What it promises on an empty pool (export promise or promises); undefined: its policy's promise. */
  readonly promise?: AllocatorPromise | PromiseFunction;
  /** The largest heap it supports (export maxCapacityBytes); undefined: no limit of its own. */
  readonly maxCapacityBytes?: number;
}

/** A problem with a user's allocator module; the message is one line naming the file. */
export class UserAllocatorError extends Error {
  constructor(
    readonly modulePath: string,
    detail: string,
  ) {
    super(`${modulePath}: ${detail}`);
    this.name = 'UserAllocatorError';
  }
}

function isPow2(value: unknown): value is number {
  return typeof value === 'number' && isPowerOfTwo(value);
}

/** Imports and validates a user's allocator module (path relative to the working directory). */
export async function loadUserAllocator(modulePath: string): Promise<UserAllocatorModule> {
  const absolute = path.resolve(modulePath);
  if (!existsSync(absolute)) throw new UserAllocatorError(modulePath, 'no such file');
  if (!MODULE_EXTENSIONS.includes(path.extname(absolute))) {
    throw new UserAllocatorError(
      modulePath,
      `expected a module ending in ${MODULE_EXTENSIONS.join(', ')}`,
    );
  }
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (error) {
    throw new UserAllocatorError(modulePath, `failed to load: ${loadErrorText(error, absolute)}`);
  }
  // A CommonJS module or a default export object may hold the named exports.
  const fallback = (loaded.default ?? {}) as Record<string, unknown>;
  const pick = (name: string): unknown => (name in loaded ? loaded[name] : fallback[name]);
  const createAllocator = pick('createAllocator');
  if (typeof createAllocator !== 'function') {
    const found =
      createAllocator === undefined
        ? `no such export (it exports: ${exportNames(loaded).join(', ') || 'nothing'})`
        : typeof createAllocator;
    throw new UserAllocatorError(
      modulePath,
      `must export a function createAllocator(capacityBytes); found ${found}`,
    );
  }
  const policy = pick('policy') ?? 'any';
  if (!ALLOCATOR_POLICIES.includes(policy as AllocatorPolicy)) {
    throw new UserAllocatorError(
      modulePath,
      `export policy must be one of ${ALLOCATOR_POLICIES.map((p) => `'${p}'`).join(', ')}; got ${JSON.stringify(policy)}`,
    );
  }
  const minBlockBytes = pick('minBlockBytes') ?? 256;
  if (!isPow2(minBlockBytes))
    throw new UserAllocatorError(
      modulePath,
      `export minBlockBytes must be a power of two; got ${JSON.stringify(minBlockBytes)}`,
    );
  const poolAlignBytes = pick('poolAlignBytes') ?? 256;
  if (!isPow2(poolAlignBytes))
    throw new UserAllocatorError(
      modulePath,
      `export poolAlignBytes must be a power of two; got ${JSON.stringify(poolAlignBytes)}`,
    );
  const promise = declaredPromise(modulePath, pick('promise'), pick('promises'));
  const maxCapacityBytes = pick('maxCapacityBytes');
  if (
    maxCapacityBytes !== undefined &&
    !(Number.isSafeInteger(maxCapacityBytes) && (maxCapacityBytes as number) >= 1)
  ) {
    throw new UserAllocatorError(
      modulePath,
      `export maxCapacityBytes must be a positive integer (bytes); got ${JSON.stringify(maxCapacityBytes)}`,
    );
  }
  const minPoolBytes =
    promise === undefined || typeof promise === 'function' ? 1 : (promise.minPoolBytes ?? 1);
  if (maxCapacityBytes !== undefined && (maxCapacityBytes as number) < minPoolBytes) {
    throw new UserAllocatorError(
      modulePath,
      `export maxCapacityBytes (${String(maxCapacityBytes)}) is below promise.minPoolBytes (${minPoolBytes}): no pool is left to test`,
    );
  }
  return {
    modulePath: absolute,
    createAllocator: createAllocator as (capacityBytes: number) => Allocator,
    policy: policy as AllocatorPolicy,
    minBlockBytes,
    poolAlignBytes,
    ...(promise === undefined ? {} : { promise }),
    ...(maxCapacityBytes === undefined ? {} : { maxCapacityBytes: maxCapacityBytes as number }),
  };
}

/** The promise a module declares: export promise (an object) or export promises (a function), not both. */
function declaredPromise(
  modulePath: string,
  promise: unknown,
  promises: unknown,
): AllocatorPromise | PromiseFunction | undefined {
  if (promise !== undefined && promises !== undefined)
    throw new UserAllocatorError(
      modulePath,
      'export either promise (an object) or promises (a function), not both',
    );
  if (promises !== undefined) {
    if (typeof promises !== 'function')
      throw new UserAllocatorError(
        modulePath,
        `export promises must be a function (capacityBytes, sizeBytes, alignBytes) => boolean; got ${typeof promises}`,
      );
    return promises as PromiseFunction;
  }
  if (promise === undefined) return undefined;
  const problem = promiseProblem(promise);
  if (problem !== null) throw new UserAllocatorError(modulePath, `export ${problem}`);
  return { ...(promise as AllocatorPromise) };
}
