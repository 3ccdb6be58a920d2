import { describe, expect, it } from 'vitest';
import { deferredFreeSystem, createDeferredImpl, DEFERRED_KINDS, type DeferredConfig } from '../src/systems/deferred-free';
import { DeferredFreeModel } from '../models/deferred-free';
import { createSubAllocatorModel } from '../models/alloc-index';
import { DeferredErrors, type DeferredFreeAllocator, type FrameFence } from '../src/alloc/deferred-free-types';
import { AllocErrors } from '../src/alloc/allocator';
import { QueueTimeline } from '../src/gpu/queue-timeline';
import { runSequence } from '../src/harness/runner';
import type { Command } from '../src/harness/system';
import type { SubAllocatorKind } from '../src/alloc/config';
import { DEFERRED_FREE_MUTANTS } from '../mutants/deferred-free';
import { describeSystem } from './support';

describeSystem(deferredFreeSystem, { numRuns: 400, mutantRuns: 300 });

function configFor(kind: SubAllocatorKind): DeferredConfig {
  return {
    kind,
    capacityBytes: 1024,
    minBlockBytes: 256,
    poolAlignBytes: 256,
    maxAllocationBytes: 1024,
    objectSizesBytes: [256, 512],
    objectAlignBytes: 256,
  };
}

const MAKERS = [
  ['model', (config: DeferredConfig, fence: FrameFence) => new DeferredFreeModel(createSubAllocatorModel(config.kind, config), fence, config)],
  ['implementation', createDeferredImpl],
] as const;

describe('deferred-free: the frame fence (FD3D12ManualFence) and the pool', () => {
  for (const kind of DEFERRED_KINDS) {
    for (const [name, make] of MAKERS) {
      const setup = (): { timeline: QueueTimeline; allocator: DeferredFreeAllocator } => {
        const timeline = new QueueTimeline();
        return { timeline, allocator: make(configFor(kind), timeline) };
      };

      it(`${name} (${kind}): a release returns its bytes only once the GPU completed the frame's value`, () => {
        const { timeline, allocator } = setup();
        expect(allocator.alloc(1024, 1)).toBe(0);
        allocator.release(0);
        expect(allocator.pendingBytes()).toBe(1024);
        // End of frame 1: the fence signals 1, the GPU has completed nothing.
        timeline.signal();
        expect(allocator.endFrame()).toEqual([]);
        expect(allocator.alloc(256, 1)).toBeNull();
        timeline.advance(1);
        // Completed: an allocation that finds no room gives the release back and retries.
        expect(allocator.alloc(256, 1)).toBe(0);
        expect(allocator.pendingBytes()).toBe(0);
      });

      it(`${name} (${kind}): endFrame returns completed releases and the allocator ends pristine`, () => {
        const { timeline, allocator } = setup();
        const first = allocator.alloc(256, 1)!;
        const second = allocator.alloc(256, 1)!;
        allocator.release(first);
        timeline.signal();
        allocator.release(second);
        timeline.signal();
        timeline.advance(1);
        expect(allocator.endFrame()).toEqual([first]);
        timeline.advance(1);
        expect(allocator.endFrame()).toEqual([second]);
        expect(allocator.heldCount()).toBe(0);
        expect(allocator.inner.isPristine()).toBe(true);
      });

      it(`${name} (${kind}): a pool hit checks the completion value, not only that no CPU owner holds the object`, () => {
        const { timeline, allocator } = setup();
        const object = allocator.poolAcquire(0)!;
        expect(object.hit).toBe(false);
        allocator.poolRelease(object.offsetBytes);
        // No CPU owner, but the GPU may still read it: a second acquire gets a new object.
        const other = allocator.poolAcquire(0)!;
        expect(other.hit).toBe(false);
        expect(other.offsetBytes).not.toBe(object.offsetBytes);
        timeline.signal();
        timeline.advance(1);
        expect(allocator.poolAcquire(0)).toEqual({ offsetBytes: object.offsetBytes, hit: true });
        allocator.poolRelease(other.offsetBytes);
        allocator.poolRelease(object.offsetBytes);
        timeline.signal();
        timeline.advance(1);
        expect(allocator.poolTrim()).toEqual([object.offsetBytes, other.offsetBytes].sort((a, b) => a - b));
        expect(allocator.inner.isPristine()).toBe(true);
      });

      it(`${name} (${kind}): typed errors for double, interior and unknown releases and misuse of the pool`, () => {
        const { allocator } = setup();
        expect(() => allocator.alloc(0, 1)).toThrow(AllocErrors.BAD_SIZE);
        expect(() => allocator.alloc(8, 3)).toThrow(AllocErrors.BAD_ALIGN);
        const offset = allocator.alloc(100, 1)!;
        expect(() => allocator.poolRelease(offset)).toThrow(DeferredErrors.NOT_POOLED);
        expect(() => allocator.release(offset + 1)).toThrow(AllocErrors.BAD_FREE);
        allocator.release(offset);
        expect(() => allocator.release(offset)).toThrow(AllocErrors.BAD_FREE);
        expect(() => allocator.poolRelease(4096)).toThrow(AllocErrors.BAD_FREE);
        expect(() => allocator.poolAcquire(2)).toThrow(DeferredErrors.BAD_SIZE_CLASS);
      });
    }
  }

  it('side by side, a pool hit that skips the completion check hands out bytes the GPU still reads', () => {
    const program: Command[] = [
      { op: 'poolAcquire', sizeClass: 0 },
      { op: 'poolRelease', index: 0 },
      { op: 'endFrame' },
      { op: 'poolAcquire', sizeClass: 0 },
    ];
    const config = configFor('first-fit');
    expect(runSequence(deferredFreeSystem, config, program).ok).toBe(true);
    const mutant = DEFERRED_FREE_MUTANTS.find((candidate) => candidate.name === 'pool-hit-skips-completion-check')!;
    const outcome = runSequence(deferredFreeSystem, config, program, { implFactory: mutant.createImpl });
    expect(outcome.ok ? null : [outcome.failure.step, outcome.failure.check]).toEqual([3, 'gpu-in-flight-untouched']);
  });
});
