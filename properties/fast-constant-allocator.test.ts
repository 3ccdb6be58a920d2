import { describe, expect, it } from 'vitest';
import { fastConstantAllocatorSystem } from '../src/systems/fast-constant-allocator';
import { UploadHeapJudge } from '../src/systems/fast-allocator';
import { FastConstantAllocatorImpl } from '../src/alloc/upload-pages';
import { FastConstantAllocatorModel } from '../models/fast-constant-allocator';
import { FAST_CONSTANT_PAGE_BYTES, UploadPageErrors, type FastConstantAllocator } from '../src/alloc/upload-pages-types';
import { AllocErrors } from '../src/alloc/allocator';
import { QueueTimeline } from '../src/gpu/queue-timeline';
import { runSequence } from '../src/harness/runner';
import type { Command } from '../src/harness/system';
import { FAST_CONSTANT_ALLOCATOR_MUTANTS } from '../mutants/fast-allocator';
import { describeSystem } from './support';

describeSystem(fastConstantAllocatorSystem, { numRuns: 300, mutantRuns: 300 });

describe('fast-constant-allocator: the seed\'s values', () => {
  for (const [name, make] of [
    ['model', (heap: UploadHeapJudge, fence: QueueTimeline) => new FastConstantAllocatorModel(heap, fence)],
    ['implementation', (heap: UploadHeapJudge, fence: QueueTimeline) => new FastConstantAllocatorImpl(heap, fence)],
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
      expect(() => constants.updateUniformBuffer(-1, 16)).toThrow(UploadPageErrors.BAD_UNIFORM_BUFFER);
    });
  }
});

describe('fast-constant-allocator: never rewriting bytes the GPU may be reading', () => {
  const mutant = (name: string) => FAST_CONSTANT_ALLOCATOR_MUTANTS.find((m) => m.name === name)!;
  // A uniform buffer is drawn, then updated with contents of the same size in the same frame.
  const program: Command[] = [
    { op: 'update', uniformBuffer: 0, sizeBytes: 256 },
    { op: 'draw', index: 0 },
    { op: 'update', uniformBuffer: 0, sizeBytes: 200 },
    { op: 'draw', index: 0 },
  ];
  const config = { pageSizeBytes: 1024, minPagesToRetain: 0 };

  it('an update takes a new location while the draw of the old one is in flight', () => {
    expect(runSequence(fastConstantAllocatorSystem, config, program)).toEqual({ ok: true, steps: program.length });
  });

  it('an update in place is caught by the GPU timeline at the update', () => {
    const outcome = runSequence(fastConstantAllocatorSystem, config, program, { implFactory: mutant('constant-update-in-place').createImpl });
    expect(outcome.ok ? null : [outcome.failure.step, outcome.failure.check]).toEqual([2, 'no-rewrite-in-flight']);
  });
});
