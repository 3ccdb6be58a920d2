import { describe, expect, it } from 'vitest';
import { fastConstantAllocatorSystem } from '../src/systems/fast-constant-allocator.js';
import { UploadHeapJudge } from '../src/systems/fast-allocator.js';
import { FastConstantAllocatorImpl } from '../src/alloc/upload-pages.js';
import { FastConstantAllocatorModel } from '../models/fast-constant-allocator.js';
import {
  FAST_CONSTANT_PAGE_BYTES,
  UploadPageErrors,
  type FastConstantAllocator,
} from '../src/alloc/upload-pages-types.js';
import { AllocErrors } from '../src/alloc/allocator.js';
import { QueueTimeline } from '../src/gpu/queue-timeline.js';
import { runSequence } from '../src/harness/runner.js';
import type { Command } from '../src/harness/system.js';
import { FAST_CONSTANT_ALLOCATOR_MUTANTS } from '../mutants/fast-allocator.js';
import { describeSystem } from './support.js';

describeSystem(fastConstantAllocatorSystem, { numRuns: 300, mutantRuns: 300 });

describe("fast-constant-allocator: the seed's values", () => {
  for (const [name, make] of [
    [
      'model',
      (heap: UploadHeapJudge, fence: QueueTimeline) => new FastConstantAllocatorModel(heap, fence),
    ],
    [
      'implementation',
      (heap: UploadHeapJudge, fence: QueueTimeline) => new FastConstantAllocatorImpl(heap, fence),
    ],
  ] as const) {
    it(`${name}: 64 KiB pages, 256-byte units, an update allocates a new location and replaces`, () => {
      const timeline = new QueueTimeline();
      const heap = new UploadHeapJudge(timeline);
      const constants: FastConstantAllocator = make(heap, timeline);
      expect(constants.pageSizeBytes).toBe(FAST_CONSTANT_PAGE_BYTES);
      expect(constants.allocate(1)).toEqual({ bufferId: 1, offsetBytes: 0 });
      expect(constants.updateUniformBuffer(7, 300)).toEqual({ bufferId: 1, offsetBytes: 256 });
      expect(constants.updateUniformBuffer(7, 16)).toEqual({ bufferId: 1, offsetBytes: 768 }); // never in place
      expect(constants.uniformBufferLocation(7)).toEqual({ bufferId: 1, offsetBytes: 768 });
      expect(constants.uniformBufferLocation(8)).toBeNull();
      expect(constants.allocate(64 * 1024 - 1024)).toEqual({ bufferId: 1, offsetBytes: 1024 }); // fills the page
      expect(constants.allocate(1)).toEqual({ bufferId: 2, offsetBytes: 0 });
      expect(() => constants.allocate(64 * 1024 + 1)).toThrow(UploadPageErrors.CONSTANT_TOO_LARGE);
      expect(() => constants.allocate(0)).toThrow(AllocErrors.BAD_SIZE);
      expect(() => constants.updateUniformBuffer(-1, 16)).toThrow(
        UploadPageErrors.BAD_UNIFORM_BUFFER,
      );
    });
  }
});

describe('fast-constant-allocator: never rewriting bytes the GPU may be reading', () => {
  const mutant = (name: string) => FAST_CONSTANT_ALLOCATOR_MUTANTS.find((m) => m.name === name)!;
  const config = { pageSizeBytes: 1024, minPagesToRetain: 0 };
  // A uniform buffer is drawn, then updated with contents of the same size: in the same frame,
  // and in the next frame while the GPU has not finished the first.
  const sameFrame: Command[] = [
    { op: 'update', uniformBuffer: 0, sizeBytes: 256 },
    { op: 'draw', index: 0 },
    { op: 'update', uniformBuffer: 0, sizeBytes: 200 },
    { op: 'draw', index: 0 },
  ];
  const nextFrame: Command[] = [
    { op: 'update', uniformBuffer: 0, sizeBytes: 256 },
    { op: 'draw', index: 0 },
    { op: 'signal' },
    { op: 'update', uniformBuffer: 0, sizeBytes: 200 },
    { op: 'draw', index: 0 },
  ];

  it('an update takes a new location while the draw of the old one is in flight', () => {
    expect(runSequence(fastConstantAllocatorSystem, config, sameFrame)).toEqual({
      ok: true,
      steps: sameFrame.length,
    });
    expect(runSequence(fastConstantAllocatorSystem, config, nextFrame)).toEqual({
      ok: true,
      steps: nextFrame.length,
    });
  });

  it("an update in place overlaps the location this frame's draw reads, and in the next frame the bytes the GPU still reads", () => {
    const createImpl = mutant('constant-update-in-place').createImpl;
    const inFrame = runSequence(fastConstantAllocatorSystem, config, sameFrame, {
      implFactory: createImpl,
    });
    expect(inFrame.ok ? null : [inFrame.failure.step, inFrame.failure.check]).toEqual([
      2,
      'no-overlap',
    ]);
    const acrossFrames = runSequence(fastConstantAllocatorSystem, config, nextFrame, {
      implFactory: createImpl,
    });
    expect(
      acrossFrames.ok ? null : [acrossFrames.failure.step, acrossFrames.failure.check],
    ).toEqual([3, 'no-rewrite-in-flight']);
  });
});
