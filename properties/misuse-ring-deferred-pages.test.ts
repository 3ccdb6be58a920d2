/**
 * Misuse answers and inspection views of the ring upload allocator, the deferred-free layer and
 * the upload page allocators, as their contracts state them (docs/spec/allocators.md; the
 * *-types.ts files): each refused call throws the contract code with its exact message and changes
 * nothing, and the views show every live range with its state, in offset order.
 *
 * Written against the mutation survivors of 2026-12-01 (docs/maintainers/mutation-survivors-2026-12-01.txt);
 * /work/notes/survivors-upload.md lists which test answers which survivor and why the others
 * cannot be told apart from the shipped code.
 */
import { describe, expect, it } from 'vitest';
import { ContractError } from '../src/contract.js';
import { RingUploadAllocatorImpl } from '../src/alloc/ring-upload.js';
import { RingErrors, type RingRange } from '../src/alloc/ring-upload-types.js';
import { DeferredFreeAllocatorImpl } from '../src/alloc/deferred-free.js';
import { DeferredErrors, type FrameFence } from '../src/alloc/deferred-free-types.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { AllocErrors } from '../src/alloc/allocator.js';
import { FastAllocatorImpl, FastConstantAllocatorImpl } from '../src/alloc/upload-pages.js';
import { UploadPageErrors, type UploadHeap } from '../src/alloc/upload-pages-types.js';
import { thrownBy } from './support.js';

/** `action` throws a ContractError with exactly this code and message. */
function expectContractError(action: () => unknown, code: string, message: string): void {
  const error = thrownBy(action);
  expect(error).toBeInstanceOf(ContractError);
  expect({
    code: (error as ContractError).code,
    message: (error as ContractError).message,
  }).toEqual({ code, message: `${code}: ${message}` });
}

const reserved = (offsetBytes: number, sizeBytes: number): RingRange => ({
  offsetBytes,
  sizeBytes,
  state: 'reserved',
  fenceValue: null,
});
const submitted = (offsetBytes: number, sizeBytes: number, fenceValue: number): RingRange => ({
  offsetBytes,
  sizeBytes,
  state: 'submitted',
  fenceValue,
});

/** liveView() copied (its records may be reused by the next call). */
const liveViewCopy = (ring: RingUploadAllocatorImpl): RingRange[] =>
  ring.liveView().map((range) => ({ ...range }));

describe('ring upload allocator: refused calls and views', () => {
  it('ring: the constructor refuses a capacity that is not a positive integer, with its message', () => {
    for (const capacityBytes of [0, -1, -1024, 0.5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      const error = thrownBy(() => new RingUploadAllocatorImpl(capacityBytes));
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toBe(
        `ring: capacityBytes must be a positive integer, got ${capacityBytes}`,
      );
    }
    // The smallest ring: one byte, handed out whole at 0.
    const ring = new RingUploadAllocatorImpl(1);
    expect(ring.capacityBytes).toBe(1);
    expect(ring.allocate(1, 1)).toBe(0);
    expect(ring.allocate(1, 1)).toBeNull();
  });

  it('ring: a request of exactly the capacity fits an idle ring only', () => {
    const ring = new RingUploadAllocatorImpl(1024);
    expect(ring.allocate(1024, 256)).toBe(0);
    expect(ring.freeBytes()).toBe(0);
    expect(ring.allocate(1, 1)).toBeNull();
    ring.cancel(0);
    expect(ring.isPristine()).toBe(true);
    expect(ring.allocate(16, 1)).toBe(0);
    expect(ring.allocate(1024, 1)).toBeNull(); // not idle: the whole ring would sweep [0, 16)
    ring.cancel(0);
    expect(ring.allocate(1024, 1)).toBe(0); // idle again: the cursor restarts at 0
    expect(ring.allocate(1025, 1)).toBeNull();
  });

  it('ring: submit twice and cancel after submit are ALREADY_SUBMITTED, with their messages; the range is unchanged', () => {
    const ring = new RingUploadAllocatorImpl(1024);
    expect(ring.allocate(64, 16)).toBe(0);
    expect(ring.allocate(64, 16)).toBe(64);
    ring.submit(64, 3);
    expectContractError(
      () => ring.submit(64, 4),
      RingErrors.ALREADY_SUBMITTED,
      'range at 64 is already submitted',
    );
    expectContractError(
      () => ring.cancel(64),
      RingErrors.ALREADY_SUBMITTED,
      'range at 64 is submitted; only completion frees it',
    );
    expect(ring.rangeAt(64)).toEqual(submitted(64, 64, 3));
    expect(liveViewCopy(ring)).toEqual([reserved(0, 64), submitted(64, 64, 3)]);
    // The refused submit did not raise the last submitted value: 3 is still accepted.
    ring.submit(0, 3);
    expect(ring.collect(3)).toEqual([64, 0]);
    expect(ring.isPristine()).toBe(true);
  });

  it('ring: a fence value below the last submitted one is FENCE_ORDER, with its message; the range stays reserved', () => {
    const ring = new RingUploadAllocatorImpl(1024);
    const first = ring.allocate(100, 4)!;
    const second = ring.allocate(100, 4)!;
    expect([first, second]).toEqual([0, 100]);
    ring.submit(first, 5);
    expectContractError(
      () => ring.submit(second, 4),
      RingErrors.FENCE_ORDER,
      'fence value 4 is below the last submitted 5',
    );
    expect(ring.rangeAt(second)).toEqual(reserved(100, 100));
    expect(ring.rangeView(second)).toEqual(reserved(100, 100));
    ring.submit(second, 5);
    expect(ring.rangeView(second)).toEqual(submitted(100, 100, 5));
  });

  it('ring: submit and cancel of an offset that starts no live range are UNKNOWN_RANGE, with their messages', () => {
    const ring = new RingUploadAllocatorImpl(1024);
    expectContractError(
      () => ring.submit(0, 1),
      RingErrors.UNKNOWN_RANGE,
      'offset 0 starts no live range',
    );
    expect(ring.allocate(32, 32)).toBe(0);
    expectContractError(
      () => ring.cancel(8),
      RingErrors.UNKNOWN_RANGE,
      'offset 8 starts no live range',
    ); // interior
    expectContractError(
      () => ring.submit(2048, 1),
      RingErrors.UNKNOWN_RANGE,
      'offset 2048 starts no live range',
    ); // outside
    ring.cancel(0);
    expectContractError(
      () => ring.cancel(0),
      RingErrors.UNKNOWN_RANGE,
      'offset 0 starts no live range',
    ); // double cancel
    expect(ring.isPristine()).toBe(true);
  });

  it('ring: rangeView and rangeAt answer null for an offset that starts no live range', () => {
    const ring = new RingUploadAllocatorImpl(512);
    expect(ring.rangeView(0)).toBeNull();
    expect(ring.allocate(128, 1)).toBe(0);
    expect(ring.rangeView(0)).toEqual(reserved(0, 128));
    for (const offsetBytes of [1, 127, 128, 512]) {
      expect(ring.rangeView(offsetBytes)).toBeNull();
      expect(ring.rangeAt(offsetBytes)).toBeNull();
    }
    ring.submit(0, 1);
    expect(ring.collect(1)).toEqual([0]);
    expect(ring.rangeView(0)).toBeNull();
    expect(ring.rangeAt(0)).toBeNull();
  });

  it('ring: views show reserved ranges as reserved with no fence value, submitted ones with theirs, ascending by offset', () => {
    // Capacity 256: four ranges of 64, the first two completed, two more wrap to the start; then
    // the slab grows past its 16 initial records (40 live ranges on a larger ring).
    const ring = new RingUploadAllocatorImpl(256);
    expect([
      ring.allocate(64, 1),
      ring.allocate(64, 1),
      ring.allocate(64, 1),
      ring.allocate(64, 1),
    ]).toEqual([0, 64, 128, 192]);
    ring.submit(0, 1);
    ring.submit(64, 2);
    ring.submit(192, 2);
    expect(ring.collect(1)).toEqual([0]);
    expect(ring.allocate(64, 1)).toBe(0); // wrapped: allocation order 64, 128, 192, 0
    expect(liveViewCopy(ring)).toEqual([
      reserved(0, 64),
      submitted(64, 64, 2),
      reserved(128, 64),
      submitted(192, 64, 2),
    ]);
    expect(ring.live()).toEqual(liveViewCopy(ring));
    expect(ring.rangeView(128)).toEqual(reserved(128, 64));
    expect(ring.rangeAt(128)).toEqual(reserved(128, 64));
    expect(ring.rangeView(192)).toEqual(submitted(192, 64, 2));
    expect(ring.collect(2)).toEqual([64, 192]);
    expect(liveViewCopy(ring)).toEqual([reserved(0, 64), reserved(128, 64)]);

    const big = new RingUploadAllocatorImpl(4096);
    const expected: RingRange[] = [];
    for (let i = 0; i < 40; i++) {
      expect(big.allocate(24, 8)).toBe(i * 24);
      if (i % 3 === 0) big.submit(i * 24, i);
      expected.push(i % 3 === 0 ? submitted(i * 24, 24, i) : reserved(i * 24, 24));
    }
    expect(liveViewCopy(big)).toEqual(expected);
    expect(big.live()).toEqual(expected);
    expect(big.usedBytes()).toBe(40 * 24);
    expect(big.collect(39)).toEqual(
      expected.filter((range) => range.state === 'submitted').map((range) => range.offsetBytes),
    );
  });
});

describe('deferred-free layer: refused calls', () => {
  const make = (fence: FrameFence = { nextValueToSignal: 1, completedValue: 0 }) =>
    new DeferredFreeAllocatorImpl(new FirstFitAllocator({ capacityBytes: 1024 }), fence, {
      objectSizesBytes: [64, 128],
      objectAlignBytes: 64,
    });

  it('deferred: poolAcquire of a size class the pool does not have is BAD_SIZE_CLASS, with its message', () => {
    const deferred = make();
    for (const sizeClass of [-1, -2, 0.5, 1.5, 2, 3, Number.NaN]) {
      expectContractError(
        () => deferred.poolAcquire(sizeClass),
        DeferredErrors.BAD_SIZE_CLASS,
        `no size class ${sizeClass}`,
      );
    }
    expect(deferred.heldCount()).toBe(0);
    expect(deferred.inner.usedBytes()).toBe(0);
    expect(deferred.poolAcquire(1)).toEqual({ offsetBytes: 0, hit: false });
  });

  it('deferred: poolRelease of a plain allocation is NOT_POOLED and of an unknown offset BAD_FREE, with their messages', () => {
    const deferred = make();
    expect(deferred.alloc(100, 4)).toBe(0);
    expectContractError(
      () => deferred.poolRelease(0),
      DeferredErrors.NOT_POOLED,
      'allocation at 0 did not come from the pool',
    );
    expectContractError(
      () => deferred.poolRelease(512),
      AllocErrors.BAD_FREE,
      'offset 512 is not the start of a live allocation',
    );
    expect(deferred.pooledBytes()).toBe(0);
    expect(deferred.heldCount()).toBe(0);
    deferred.release(0); // still live: the refused poolRelease kept it
    expect(deferred.pendingBytes()).toBe(100);
    expectContractError(
      () => deferred.poolRelease(0),
      AllocErrors.BAD_FREE,
      'offset 0 is not the start of a live allocation',
    );
  });

  it('deferred: a failed alloc makes nothing live, so handing its null answer back is BAD_FREE', () => {
    // A caller that forgets the null check passes the answer on; the layer must refuse it at once
    // rather than queue a release that breaks the sub-allocator at the next endFrame.
    const fence = { nextValueToSignal: 1, completedValue: 0 };
    const deferred = make(fence);
    const failed = deferred.alloc(2048, 1);
    expect(failed).toBeNull();
    const answer = failed as unknown as number;
    expectContractError(
      () => deferred.release(answer),
      AllocErrors.BAD_FREE,
      'offset null is not the start of a live allocation',
    );
    expectContractError(
      () => deferred.poolRelease(answer),
      AllocErrors.BAD_FREE,
      'offset null is not the start of a live allocation',
    );
    expect(deferred.pendingBytes()).toBe(0);
    expect(deferred.heldCount()).toBe(0);
    fence.completedValue = 1;
    expect(deferred.endFrame()).toEqual([]);
  });
});

describe('upload page allocators: refused calls', () => {
  /** A heap that hands out ids 1, 2, ... and records what was created. */
  const heap = (): UploadHeap & { created: number } => {
    const made = { created: 0, createBuffer: () => ++made.created, destroyBuffer: () => undefined };
    return made;
  };
  const fence = { nextValueToSignal: 1, completedValue: 0 };

  it('fast allocator: a bad size is BAD_SIZE and a bad alignment BAD_ALIGN, with their messages; no page is taken', () => {
    const pages = heap();
    const fast = new FastAllocatorImpl(pages, fence, 4096, 0);
    for (const sizeBytes of [0, -8, 2.5]) {
      expectContractError(
        () => fast.allocate(sizeBytes, 16),
        AllocErrors.BAD_SIZE,
        `sizeBytes must be a positive integer, got ${sizeBytes}`,
      );
    }
    for (const alignBytes of [0, 3, 24, 0.5]) {
      expectContractError(
        () => fast.allocate(16, alignBytes),
        AllocErrors.BAD_ALIGN,
        `alignBytes must be a power of two, got ${alignBytes}`,
      );
    }
    expect(fast.currentPage()).toBe(-1);
    expect(pages.created).toBe(0);
    expect(fast.allocate(16, 16)).toEqual({ bufferId: 1, offsetBytes: 0 });
  });

  it('fast constant allocator: BAD_SIZE, CONSTANT_TOO_LARGE and BAD_UNIFORM_BUFFER carry their messages; nothing is placed', () => {
    const pages = heap();
    const constants = new FastConstantAllocatorImpl(pages, fence, 1024, 0);
    for (const sizeBytes of [0, -1, 0.25]) {
      expectContractError(
        () => constants.allocate(sizeBytes),
        AllocErrors.BAD_SIZE,
        `sizeBytes must be a positive integer, got ${sizeBytes}`,
      );
    }
    expectContractError(
      () => constants.allocate(1025),
      UploadPageErrors.CONSTANT_TOO_LARGE,
      'a constant of 1025 bytes is larger than a page of 1024',
    );
    for (const handle of [-1, 1.5, Number.NaN]) {
      expectContractError(
        () => constants.updateUniformBuffer(handle, 16),
        UploadPageErrors.BAD_UNIFORM_BUFFER,
        `uniform buffer handle ${handle} is not a non-negative integer`,
      );
    }
    expectContractError(
      () => constants.updateUniformBuffer(7, 2048),
      UploadPageErrors.CONSTANT_TOO_LARGE,
      'a constant of 2048 bytes is larger than a page of 1024',
    );
    expect(constants.uniformBufferLocation(7)).toBeNull();
    expect(constants.currentPage()).toBe(-1);
    expect(pages.created).toBe(0);
    expect(constants.allocate(1024)).toEqual({ bufferId: 1, offsetBytes: 0 });
  });
});
