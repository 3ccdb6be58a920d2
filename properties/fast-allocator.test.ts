import { describe, expect, it } from 'vitest';
import { fastAllocatorSystem, UploadHeapJudge } from '../src/systems/fast-allocator.js';
import { FastAllocatorImpl } from '../src/alloc/upload-pages.js';
import { FastAllocatorModel } from '../models/fast-allocator.js';
import {
  FAST_ALLOCATOR_PAGE_BYTES,
  DEFAULT_MIN_PAGES_TO_RETAIN,
  UploadPageErrors,
  type FastAllocator,
} from '../src/alloc/upload-pages-types.js';
import { FastConstantAllocatorImpl } from '../src/alloc/upload-pages.js';
import { fastConstantAllocatorSystem } from '../src/systems/fast-constant-allocator.js';
import { AllocErrors } from '../src/alloc/allocator.js';
import { QueueTimeline } from '../src/gpu/queue-timeline.js';
import { runSequence } from '../src/harness/runner.js';
import type { Command } from '../src/harness/system.js';
import { FAST_ALLOCATOR_MUTANTS } from '../mutants/fast-allocator.js';
import { describeSystem } from './support.js';

describeSystem(fastAllocatorSystem, { numRuns: 300, mutantRuns: 300 });

const MiB = 1024 * 1024;

describe("fast-allocator: the seed's values", () => {
  for (const [name, make] of [
    ['model', (heap: UploadHeapJudge, fence: QueueTimeline) => new FastAllocatorModel(heap, fence)],
    [
      'implementation',
      (heap: UploadHeapJudge, fence: QueueTimeline) => new FastAllocatorImpl(heap, fence),
    ],
  ] as const) {
    it(`${name}: 4 MiB pages by default; above 4 MiB a dedicated buffer; a page recycled only once its frame completed`, () => {
      const timeline = new QueueTimeline();
      const heap = new UploadHeapJudge(timeline);
      const fast: FastAllocator = make(heap, timeline);
      expect([fast.pageSizeBytes, fast.minPagesToRetain]).toEqual([
        FAST_ALLOCATOR_PAGE_BYTES,
        DEFAULT_MIN_PAGES_TO_RETAIN,
      ]);
      expect(fast.allocate(3 * MiB, 256)).toEqual({ bufferId: 1, offsetBytes: 0 });
      expect(fast.allocate(1 * MiB, 256)).toEqual({ bufferId: 1, offsetBytes: 3 * MiB }); // exactly fills the page
      // Forwarded: a 4 MiB + 1 request gets its own buffer and leaves the page alone.
      expect(fast.allocate(4 * MiB + 1, 16)).toEqual({ bufferId: 2, offsetBytes: 0 });
      expect(heap.buffers.get(2)).toMatchObject({ sizeBytes: 4 * MiB + 1, kind: 'forwarded' });
      // Exactly 4 MiB is not above the page size: the full page retires, a new page takes it.
      expect(fast.allocate(4 * MiB, 1)).toEqual({ bufferId: 3, offsetBytes: 0 });
      expect(fast.pooledPages()).toEqual([{ bufferId: 1, fenceValue: 1 }]);
      timeline.signal();
      expect(fast.allocate(16, 1)).toEqual({ bufferId: 4, offsetBytes: 0 }); // page 1 waits for value 1
      timeline.advance(1);
      fast.cleanup(); // the forwarded buffer goes; one pool page stays (minimum 5)
      expect([...heap.buffers.keys()]).toEqual([1, 3, 4]);
      expect(fast.allocate(4 * MiB, 1)).toEqual({ bufferId: 1, offsetBytes: 0 }); // recycled
      expect(() => fast.allocate(0, 1)).toThrow(AllocErrors.BAD_SIZE);
      expect(() => fast.allocate(8, 3)).toThrow(AllocErrors.BAD_ALIGN);
      expect(heap.violations).toEqual([]);
    });
  }
});

describe('upload page allocators: configuration and minimum answers', () => {
  // The shipped constructors refuse what the systems' config checks refuse, with the same words:
  // a page size that is not a positive multiple of the granule (1 byte; 256 for constants), a
  // minimum that is not a non-negative integer.
  const fastProblem = (page: number) =>
    `pageSizeBytes must be a positive multiple of 1, got ${page}`;
  const constProblem = (page: number) =>
    `pageSizeBytes must be a positive multiple of 256, got ${page}`;
  const minProblem = (count: number) =>
    `minPagesToRetain must be a non-negative integer, got ${count}`;
  const make = {
    fast: (page: number, min: number) =>
      new FastAllocatorImpl(
        new UploadHeapJudge(new QueueTimeline()),
        new QueueTimeline(),
        page,
        min,
      ),
    constant: (page: number, min: number) =>
      new FastConstantAllocatorImpl(
        new UploadHeapJudge(new QueueTimeline()),
        new QueueTimeline(),
        page,
        min,
      ),
  };

  it('page sizes: the fast allocator takes any positive integer, the constant allocator multiples of 256', () => {
    for (const page of [0, -1, -256, 1.5, Number.NaN, 2 ** 53]) {
      expect(() => make.fast(page, 0)).toThrow(`fast allocator: ${fastProblem(page)}`);
      expect(fastAllocatorSystem.checkConfig({ pageSizeBytes: page, minPagesToRetain: 0 })).toBe(
        page > 2 ** 40
          ? 'pageSizeBytes must be at most 1073741824, got 9007199254740992'
          : fastProblem(page),
      );
    }
    for (const page of [0, 128, 255, -256, 384, 256.5]) {
      expect(() => make.constant(page, 0)).toThrow(
        `fast constant allocator: ${constProblem(page)}`,
      );
      expect(
        fastConstantAllocatorSystem.checkConfig({ pageSizeBytes: page, minPagesToRetain: 0 }),
      ).toBe(constProblem(page));
    }
    for (const page of [1, 3, 256]) expect(make.fast(page, 0).pageSizeBytes).toBe(page);
    for (const page of [256, 512, 65536]) expect(make.constant(page, 0).pageSizeBytes).toBe(page);
    expect(fastAllocatorSystem.checkConfig({ pageSizeBytes: 1, minPagesToRetain: 0 })).toBeNull();
    expect(
      fastConstantAllocatorSystem.checkConfig({ pageSizeBytes: 256, minPagesToRetain: 0 }),
    ).toBeNull();
  });

  it('minimums: a non-negative integer at construction and at run time; a refused change keeps the old one', () => {
    for (const count of [-1, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => make.fast(256, count)).toThrow(`fast allocator: ${minProblem(count)}`);
      expect(() => make.constant(256, count)).toThrow(
        `fast constant allocator: ${minProblem(count)}`,
      );
      expect(fastAllocatorSystem.checkConfig({ pageSizeBytes: 256, minPagesToRetain: count })).toBe(
        count === Number.POSITIVE_INFINITY
          ? 'minPagesToRetain must be at most 1024, got Infinity'
          : minProblem(count),
      );
      const fast = make.fast(256, 2);
      let thrown: unknown;
      try {
        fast.setMinPagesToRetain(count);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({
        code: UploadPageErrors.BAD_MIN_PAGES,
        message: expect.stringContaining(minProblem(count)),
      });
      expect(fast.minPagesToRetain).toBe(2);
    }
    const fast = make.fast(256, 0);
    fast.setMinPagesToRetain(0);
    fast.setMinPagesToRetain(7);
    expect(fast.minPagesToRetain).toBe(7);
    expect(make.constant(256, 0).minPagesToRetain).toBe(0);
  });
});

describe('fast-allocator: the judges', () => {
  const mutant = (name: string) => FAST_ALLOCATOR_MUTANTS.find((m) => m.name === name)!;
  // Pages of 256 bytes: page 1 is filled, read and retired in frame 1; in frame 2 page 2 retires
  // while the GPU has not finished frame 1, so a new page comes; once it has, page 1 is recycled.
  const program: Command[] = [
    { op: 'allocate', sizeBytes: 256, alignBytes: 1 },
    { op: 'use', index: 0 },
    { op: 'allocate', sizeBytes: 256, alignBytes: 1 },
    { op: 'signal' },
    { op: 'allocate', sizeBytes: 256, alignBytes: 1 },
    { op: 'gpuProgress', steps: 1 },
    { op: 'allocate', sizeBytes: 256, alignBytes: 1 },
  ];
  const config = { pageSizeBytes: 256, minPagesToRetain: 0 };

  it('a page is recycled after its frame completed, not before', () => {
    expect(runSequence(fastAllocatorSystem, config, program)).toEqual({
      ok: true,
      steps: program.length,
    });
  });

  it('a page stamped with the completed value is recycled while the GPU runs the frame that wrote it, and caught at that hand-out', () => {
    const outcome = runSequence(fastAllocatorSystem, config, program, {
      implFactory: mutant('fast-page-stamped-with-completed').createImpl,
    });
    expect(outcome.ok ? null : [outcome.failure.step, outcome.failure.check]).toEqual([
      4,
      'page-reuse-after-fence',
    ]);
    if (!outcome.ok)
      expect(outcome.failure.implObservation).toMatchObject({ bufferId: 1, offsetBytes: 0 });
  });
});
