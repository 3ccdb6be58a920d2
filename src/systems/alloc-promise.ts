/**
 * Liveness on an empty pool: which valid requests an allocator promises to place when nothing
 * is live (`EmptyPoolPromise`, the built-in policies' promises) and the `empty-pool-liveness`
 * invariant that judges exactly that promise.
 */
import type { Invariant } from '../harness/system.js';
import { alignUp, isPowerOfTwo } from '../alloc/allocator.js';
import type { AllocSide } from './alloc-side.js';
import { countNullAnswer, EMPTY_POOL_SERVED_PROBE } from './alloc-false-oom.js';

/**
 * Which valid requests an allocator promises to place when nothing is live, from the request and
 * the config. Every promise here is built from a declaration (`AllocatorPromise`), the same one a
 * user's module exports: 'first-fit' and 'any' promise every size up to the capacity at any
 * alignment (offset 0 is aligned to every power of two); 'buddy' and 'best-fit' narrow it by
 * their spec.
 */
export type EmptyPoolPromise<C> = (
  config: C,
  capacityBytes: number,
  sizeBytes: number,
  alignBytes: number,
) => boolean;

/**
 * What an allocator promises on an empty pool, in the terms its author thinks in. With nothing
 * live, a request of `sizeBytes` at a power-of-two `alignBytes` is promised an offset when the
 * pool has at least `minPoolBytes`, the size is at most `maxSizeBytes`, the alignment at most
 * `maxAlignBytes`, and the block it takes fits behind the pool's overhead:
 *   overheadBytes + block <= capacityBytes, where
 *   roundsTo 'power-of-two': block = nextPowerOfTwo(max(headerBytes + size, align, minBlockBytes))
 *     (a buddy's block, aligned to its own size);
 *   roundsTo g (default 1): block = roundUp(max(data end - overheadBytes, minBlockBytes), g), with
 *     the data at alignUp(overheadBytes + headerBytes, align); with alignSlack, an alignment g is
 *     no multiple of reserves headerBytes + size + align instead (the allocator over-reserves
 *     rather than looking for an aligned start).
 * Every field is optional; the empty declaration `{}` is the default of policy 'any' and first
 * fit: every size up to the capacity, at any alignment.
 */
export interface AllocatorPromise {
  /** Pools smaller than this are promised nothing (and not generated for a user's allocator). Default 1. */
  readonly minPoolBytes?: number;
  /** Bytes of every pool the allocator keeps for itself, at its start. Default 0. */
  readonly overheadBytes?: number;
  /** Bytes in front of every block's data (a block header). Default 0. */
  readonly headerBytes?: number;
  /** The smallest block the allocator hands out. Default 1. */
  readonly minBlockBytes?: number;
  /** Blocks round up to a multiple of this, or to a power of two. Default 1. */
  readonly roundsTo?: number | 'power-of-two';
  /** An alignment the rounding does not give reserves size + align. Default false. */
  readonly alignSlack?: boolean;
  /** The largest request promised (larger ones may take another path). Default: no limit. */
  readonly maxSizeBytes?: number;
  /** The largest alignment promised. Default: no limit. */
  readonly maxAlignBytes?: number;
}

/** The fields of AllocatorPromise, each with what it must be (validation and docs read this). */
export const PROMISE_FIELDS = {
  minPoolBytes: 'a positive integer',
  overheadBytes: 'a non-negative integer',
  headerBytes: 'a non-negative integer',
  minBlockBytes: 'a positive integer',
  roundsTo: "a positive integer or 'power-of-two'",
  alignSlack: 'a boolean',
  maxSizeBytes: 'a positive integer',
  maxAlignBytes: 'a positive integer',
} as const satisfies Record<keyof AllocatorPromise, string>;

function fieldProblem(name: keyof AllocatorPromise, value: unknown): boolean {
  switch (name) {
    case 'alignSlack':
      return typeof value !== 'boolean';
    case 'roundsTo':
      return value !== 'power-of-two' && !(Number.isSafeInteger(value) && (value as number) >= 1);
    case 'overheadBytes':
    case 'headerBytes':
      return !(Number.isSafeInteger(value) && (value as number) >= 0);
    default:
      return !(Number.isSafeInteger(value) && (value as number) >= 1);
  }
}

/**
 * The problem with a declared promise, naming the field (`promise.headerBytes must be ...`), or
 * null when it is one.
 */
export function promiseProblem(value: unknown): string | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return `promise must be an object of ${Object.keys(PROMISE_FIELDS).join(', ')}; got ${JSON.stringify(value) ?? typeof value}`;
  for (const [name, field] of Object.entries(value)) {
    if (!Object.hasOwn(PROMISE_FIELDS, name))
      return `promise.${name} is no field of a promise (known: ${Object.keys(PROMISE_FIELDS).join(', ')})`;
    if (field !== undefined && fieldProblem(name as keyof AllocatorPromise, field)) {
      return `promise.${name} must be ${PROMISE_FIELDS[name as keyof AllocatorPromise]}; got ${JSON.stringify(field) ?? typeof field}`;
    }
  }
  return null;
}

/** The smallest power of two >= value (value >= 1; exact past 2^31). */
function nextPowerOfTwo(value: number): number {
  let power = 1;
  while (power < value) power *= 2;
  return power;
}

/** The bytes the first block of a request takes behind the pool's overhead. */
function firstBlockBytes(promise: AllocatorPromise, sizeBytes: number, alignBytes: number): number {
  const overheadBytes = promise.overheadBytes ?? 0;
  const headerBytes = promise.headerBytes ?? 0;
  const minBlockBytes = promise.minBlockBytes ?? 1;
  const roundsTo = promise.roundsTo ?? 1;
  if (roundsTo === 'power-of-two')
    return nextPowerOfTwo(Math.max(headerBytes + sizeBytes, alignBytes, minBlockBytes));
  if (promise.alignSlack === true) {
    const slackBytes = roundsTo % alignBytes === 0 ? 0 : alignBytes;
    return alignUp(Math.max(headerBytes + sizeBytes + slackBytes, minBlockBytes), roundsTo);
  }
  const dataEnd = alignUp(overheadBytes + headerBytes, alignBytes) + sizeBytes;
  return alignUp(Math.max(dataEnd - overheadBytes, minBlockBytes), roundsTo);
}

/** Whether `promise` covers a valid request (size >= 1, power-of-two alignment) on an empty pool. */
export function promises(
  promise: AllocatorPromise,
  capacityBytes: number,
  sizeBytes: number,
  alignBytes: number,
): boolean {
  if (capacityBytes < (promise.minPoolBytes ?? 1)) return false;
  if (
    sizeBytes > (promise.maxSizeBytes ?? Infinity) ||
    alignBytes > (promise.maxAlignBytes ?? Infinity)
  )
    return false;
  return (
    (promise.overheadBytes ?? 0) + firstBlockBytes(promise, sizeBytes, alignBytes) <= capacityBytes
  );
}

/** The promise as the check reads it: from a declaration, or a user's function of (capacity, size, align). */
export function emptyPoolPromiseOf(
  declared: AllocatorPromise | PromiseFunction,
): EmptyPoolPromise<unknown> {
  if (typeof declared === 'function')
    return (_config, capacityBytes, sizeBytes, alignBytes) =>
      declared(capacityBytes, sizeBytes, alignBytes) === true;
  return (_config, capacityBytes, sizeBytes, alignBytes) =>
    promises(declared, capacityBytes, sizeBytes, alignBytes);
}

/** A promise stated as a function: true for the requests placed on an empty pool. */
export type PromiseFunction = (
  capacityBytes: number,
  sizeBytes: number,
  alignBytes: number,
) => boolean;

/** The promise of policy 'any' and of first fit, stated: every size up to the capacity, any alignment. */
export const DEFAULT_PROMISE: AllocatorPromise = {};

/** The promise of first fit and of policy 'any': any size up to the capacity, any alignment. */
export const FITS_CAPACITY: EmptyPoolPromise<unknown> = emptyPoolPromiseOf(DEFAULT_PROMISE);

/**
 * The declaration of a buddy allocator's promise: the request's block (a power of two from
 * max(size, align)) is at most the top block, i.e. size and alignment both at most the capacity
 * (spec "Buddy": the order counts the alignment; the capacity is minBlockBytes times a power of two).
 */
export const BUDDY_DECLARATION: AllocatorPromise = { roundsTo: 'power-of-two' };
export const BUDDY_PROMISE: EmptyPoolPromise<unknown> = emptyPoolPromiseOf(BUDDY_DECLARATION);

/**
 * The declaration of a best-fit pool's promise: the size is within the single-allocation limit
 * (a larger one takes the committed path) and the spec's reservation (alignUp(size, poolAlign),
 * or alignUp(size + align, poolAlign) for an alignment the pool alignment is no multiple of)
 * fits the pool.
 */
export function bestFitDeclaration(
  poolAlignBytes: number,
  maxAllocationBytes: number | undefined,
): AllocatorPromise {
  return {
    roundsTo: poolAlignBytes,
    alignSlack: true,
    ...(maxAllocationBytes === undefined ? {} : { maxSizeBytes: maxAllocationBytes }),
  };
}

export function bestFitPromise(
  poolAlignBytes: number,
  maxAllocationBytes: number | undefined,
): EmptyPoolPromise<unknown> {
  return emptyPoolPromiseOf(bestFitDeclaration(poolAlignBytes, maxAllocationBytes));
}

/** A promise in one line, as a module would declare it. */
export function promiseText(declared: AllocatorPromise | PromiseFunction): string {
  if (typeof declared === 'function')
    return 'the function promises(capacityBytes, sizeBytes, alignBytes)';
  const fields = Object.entries(declared).filter(([, value]) => value !== undefined);
  if (fields.length === 0) return '{} (every size up to the capacity, at any alignment)';
  return `{ ${fields.map(([name, value]) => `${name}: ${JSON.stringify(value)}`).join(', ')} }`;
}

/** How a finding of empty-pool-liveness names the promise it judged (user allocators; built-ins keep the spec's words). */
export interface PromiseReport {
  /** The promise judged, in one line: 'its declared promise { ... }' or 'the default promise of policy ...'. */
  readonly promise: string;
  /** One line: how to declare a narrower promise when the refusal is by design. */
  readonly hint: string;
}

function emptyPoolRefusal<C>(
  s: AllocSide,
  config: C,
  promise: EmptyPoolPromise<C>,
  report: PromiseReport | undefined,
): string | null {
  if (s.lastAllocResult !== null || s.lastErrorCode !== null || s.live.length !== 0) return null;
  const sizeBytes = s.lastSizeBytes;
  const alignBytes = s.lastAlignBytes;
  if (
    !Number.isSafeInteger(sizeBytes) ||
    sizeBytes < 1 ||
    !isPowerOfTwo(alignBytes) ||
    !promise(config, s.capacityBytes, sizeBytes, alignBytes)
  )
    return null;
  const refused = `nothing is live, yet alloc(${sizeBytes}, ${alignBytes}) answered null on an empty pool of ${s.capacityBytes} bytes`;
  if (report === undefined) return `${refused} (offset 0 is aligned and the request fits)`;
  return `${refused}, a request covered by ${report.promise}\n${report.hint}`;
}

/** Records the share of an alloc the implementation placed on an empty pool (one live allocation: the one just made). */
function recordEmptyPoolServed(impl: AllocSide, env: AllocSide['env']): void {
  if (impl.live.length !== 1 || impl.lastAllocResult === null || impl.lastAllocResult === undefined)
    return;
  const percent = Math.floor((100 * impl.live[0]!.sizeBytes) / impl.capacityBytes);
  if (percent <= impl.largestEmptyPoolPercent) return;
  impl.largestEmptyPoolPercent = percent;
  env.probe(`${EMPTY_POOL_SERVED_PROBE}${Math.min(percent, 100)}`);
}

export interface EmptyPoolLivenessOptions {
  /** Count the implementation's null answers (NULL_ANSWER_PROBE, FALSE_OOM_PROBE): a user's allocator, whose model counts none. */
  readonly countsImplNulls?: boolean;
  /** Name the judged promise and how to narrow it in a finding (a user's allocator). */
  readonly report?: PromiseReport;
}

/**
 * `empty-pool-liveness` (spec "Common contract", liveness; issue 13): with nothing live, a
 * valid request the policy promises to place must get an offset. Checks the allocator under
 * test, and the model when the side is one. It also counts the metric of every null answer of
 * the allocator under test (NULL_ANSWER_PROBE, FALSE_OOM_PROBE) into the run's probes, and the
 * largest request the implementation placed on an empty pool (EMPTY_POOL_SERVED_PROBE).
 */
export function emptyPoolLiveness<C>(
  promise: EmptyPoolPromise<C>,
  options: EmptyPoolLivenessOptions = {},
): Invariant<AllocSide, C> {
  const countsImplNulls = options.countsImplNulls ?? false;
  const report = options.report;
  return {
    name: 'empty-pool-liveness',
    description:
      'with nothing live, every valid request the policy promises to place on an empty pool (any size up to the capacity at any alignment for first fit and policy any) gets an offset',
    check: (model, impl, config) => {
      if (impl.lastAllocResult === null && impl.lastErrorCode === null) {
        if (countsImplNulls)
          countNullAnswer(impl, model.env, impl.lastSizeBytes, impl.lastAlignBytes);
        const refusal = emptyPoolRefusal(impl, config, promise, report);
        if (refusal !== null) return `implementation: ${refusal}`;
      } else if (impl.live.length === 1) {
        recordEmptyPoolServed(impl, model.env);
      }
      if (model.lastAllocResult !== null || !model.isModel) return null;
      const fromModel = emptyPoolRefusal(model, config, promise, undefined);
      return fromModel === null ? null : `model: ${fromModel}`;
    },
  };
}
