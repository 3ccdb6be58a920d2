/**
 * Liveness on an empty pool: which valid requests an allocator promises to place when nothing
 * is live (`EmptyPoolPromise`, the built-in policies' promises) and the `empty-pool-liveness`
 * invariant that judges exactly that promise.
 */
import type { Invariant } from '../harness/system.js';
import { alignUp, isPowerOfTwo } from '../alloc/allocator.js';
import type { AllocSide } from './alloc-side.js';
import { countNullAnswer } from './alloc-false-oom.js';

/**
 * Which valid requests a policy promises to place when nothing is live, from the request and
 * the config: 'first-fit' and 'any' every size up to the capacity at any alignment (offset 0 is
 * aligned to every power of two); 'buddy' and 'best-fit' narrow it by their spec (see
 * `emptyPoolPromiseOf`).
 */
export type EmptyPoolPromise<C> = (config: C, capacityBytes: number, sizeBytes: number, alignBytes: number) => boolean;

/** The promise of first fit and of policy 'any': any size up to the capacity, any alignment. */
export const FITS_CAPACITY: EmptyPoolPromise<unknown> = (_config, capacityBytes, sizeBytes) => sizeBytes <= capacityBytes;

/**
 * The promise of a buddy allocator: the request's order (from max(size, align)) is at most the
 * top order, i.e. size and alignment both at most the capacity (spec "Buddy": the order counts
 * the alignment).
 */
export const BUDDY_PROMISE: EmptyPoolPromise<unknown> = (_config, capacityBytes, sizeBytes, alignBytes) => sizeBytes <= capacityBytes && alignBytes <= capacityBytes;

/**
 * The promise of a best-fit pool: the size is within the single-allocation limit (a larger one
 * takes the committed path) and the spec's reservation (alignUp(size, poolAlign), or
 * alignUp(size + align, poolAlign) for an alignment the pool alignment is no multiple of) fits
 * the pool.
 */
export function bestFitPromise(poolAlignBytes: number, maxAllocationBytes: number | undefined): EmptyPoolPromise<unknown> {
  return (_config, capacityBytes, sizeBytes, alignBytes) => {
    if (sizeBytes > (maxAllocationBytes ?? capacityBytes)) return false;
    const reservationBytes = poolAlignBytes % alignBytes === 0 ? alignUp(sizeBytes, poolAlignBytes) : alignUp(sizeBytes + alignBytes, poolAlignBytes);
    return reservationBytes <= capacityBytes;
  };
}

function emptyPoolRefusal<C>(s: AllocSide, config: C, promise: EmptyPoolPromise<C>): string | null {
  if (s.lastAllocResult !== null || s.lastErrorCode !== null || s.live.length !== 0) return null;
  const sizeBytes = s.lastSizeBytes;
  const alignBytes = s.lastAlignBytes;
  if (!Number.isSafeInteger(sizeBytes) || sizeBytes < 1 || !isPowerOfTwo(alignBytes) || !promise(config, s.capacityBytes, sizeBytes, alignBytes)) return null;
  return `nothing is live, yet alloc(${sizeBytes}, ${alignBytes}) answered null on an empty pool of ${s.capacityBytes} bytes (offset 0 is aligned and the request fits)`;
}

/**
 * `empty-pool-liveness` (spec "Common contract", liveness; issue 13): with nothing live, a
 * valid request the policy promises to place must get an offset. Checks the allocator under
 * test, and the model when the side is one. It also counts the metric of every null answer of
 * the allocator under test (NULL_ANSWER_PROBE, FALSE_OOM_PROBE) into the run's probes.
 */
export function emptyPoolLiveness<C>(promise: EmptyPoolPromise<C>, countsImplNulls = false): Invariant<AllocSide, C> {
  return {
    name: 'empty-pool-liveness',
    description: 'with nothing live, every valid request the policy promises to place on an empty pool (any size up to the capacity at any alignment for first fit and policy any) gets an offset',
    check: (model, impl, config) => {
      if (impl.lastAllocResult === null && impl.lastErrorCode === null) {
        if (countsImplNulls) countNullAnswer(impl, model.env, impl.lastSizeBytes, impl.lastAlignBytes);
        const refusal = emptyPoolRefusal(impl, config, promise);
        if (refusal !== null) return `implementation: ${refusal}`;
      }
      if (model.lastAllocResult !== null || !model.isModel) return null;
      const fromModel = emptyPoolRefusal(model, config, promise);
      return fromModel === null ? null : `model: ${fromModel}`;
    },
  };
}
