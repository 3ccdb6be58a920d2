import { describe, expect, it } from 'vitest';
import {
  deferredFreeSystem,
  createDeferredImpl,
  DEFERRED_KINDS,
  GROWTH_PROBES,
  scaleConfigArb,
  type DeferredConfig,
} from '../src/systems/deferred-free.js';
import { DeferredFreeModel } from '../models/deferred-free.js';
import { createSubAllocatorModel } from '../models/alloc-index.js';
import {
  DeferredErrors,
  type DeferredFreeAllocator,
  type FrameFence,
} from '../src/alloc/deferred-free-types.js';
import { AllocErrors } from '../src/alloc/allocator.js';
import { QueueTimeline } from '../src/gpu/queue-timeline.js';
import { RunContext, runSequence } from '../src/harness/runner.js';
import { checkSystem } from '../src/harness/property.js';
import type { Command } from '../src/harness/system.js';
import type { SubAllocatorKind } from '../src/alloc/config.js';
import { DEFERRED_FREE_MUTANTS } from '../mutants/deferred-free.js';
import { describeSystem, TEST_SEED } from './support.js';

describeSystem(deferredFreeSystem, { numRuns: 400, mutantRuns: 300 });

describe('deferred-free: scale configs reach the growth paths', () => {
  it('dozens of releases and pooled objects held at once grow the queues, with the model agreeing', () => {
    const context = new RunContext();
    const result = checkSystem(
      { ...deferredFreeSystem, configArb: scaleConfigArb },
      { seed: TEST_SEED, numRuns: 30, context, unbiased: true },
    );
    expect(result.failed).toBe(false);
    expect(
      GROWTH_PROBES.filter((probe) => (context.probeCounts.get(probe) ?? 0) === 0),
      'growth probes the scale configs never reached',
    ).toEqual([]);
  });
});

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
  [
    'model',
    (config: DeferredConfig, fence: FrameFence) =>
      new DeferredFreeModel(createSubAllocatorModel(config.kind, config), fence, config),
  ],
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
        expect(allocator.poolTrim()).toEqual(
          [object.offsetBytes, other.offsetBytes].sort((a, b) => a - b),
        );
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
    const mutant = DEFERRED_FREE_MUTANTS.find(
      (candidate) => candidate.name === 'pool-hit-skips-completion-check',
    )!;
    const outcome = runSequence(deferredFreeSystem, config, program, {
      implFactory: mutant.createImpl,
    });
    expect(outcome.ok ? null : [outcome.failure.step, outcome.failure.check]).toEqual([
      3,
      'gpu-in-flight-untouched',
    ]);
  });
});
