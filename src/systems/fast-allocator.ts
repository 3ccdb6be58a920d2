/**
 * System `fast-allocator`: the fast allocator's 4 MiB bump pages for single-frame upload data
 * (docs/spec/engine.md#mem-1-2-4, #mem-3-2, #mem-5-3, #mem-10; model
 * models/fast-allocator.ts) against the simulated GPU queue (src/gpu/queue-timeline.ts) and an
 * upload heap that judges every buffer it creates and destroys (`UploadHeapJudge`, below; the
 * fast constant allocator's system, src/systems/fast-constant-allocator.ts, shares both).
 *
 * Frames are explicit: `allocate` hands out bytes for this frame, `use` records GPU work reading
 * one of this frame's hand-outs at the frame's fence value, `signal` ends the frame (the caller's
 * hand-outs expire: single-frame data is never touched again), `gpuProgress` completes values,
 * `cleanup` lets the allocator release what the GPU is done with. Generated configs shrink the
 * page (16 B - 4 KiB) so pages turn over, get recycled and are forwarded past within a few dozen
 * commands; the defaults (4 MiB, 5 pages retained) are what a config without overrides means in
 * code (src/alloc/upload-pages-types.ts).
 *
 * The judges read the GPU timeline and the heap, not the allocator's bookkeeping. Single-frame
 * data may be read by any GPU work of its frame, so a buffer is busy until the frame of its last
 * hand-out completes: a page handed out from again after it left the current page (a new life)
 * and every destroyed buffer are held to that frame, and every hand-out and destruction is also
 * checked against the bytes unfinished GPU reads still use. `retain` changes the minimum at run
 * time (docs/spec/engine.md#mem-10: d3d12.FastAllocator.MinPagesToRetain may be changed while
 * running).
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import type { Invariant, RunEnv } from '../harness/system.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Int, Nat, Strict, type Static } from '../harness/schema.js';
import type { QueueTimeline } from '../gpu/queue-timeline.js';
import { FastAllocatorModel } from '../../models/fast-allocator.js';
import { FastAllocatorImpl } from '../alloc/upload-pages.js';
import type { FastAllocator, UploadHeap } from '../alloc/upload-pages-types.js';
import {
  UPLOAD_MAX_MIN_PAGES,
  UPLOAD_MAX_PAGE_BYTES,
  type UploadSide,
  createdOf,
  fastAllocatorConfigCheck,
  frameOps,
  heldPages,
  judgeHandOut,
  pageProbes,
  sharedInvariants,
  startStep,
  uploadSide,
} from './upload-pages-side.js';
import { uploadVisual } from './visuals.js';

export { UploadHeapJudge } from './upload-pages-side.js';

export const FastAllocatorConfigSchema = Strict({
  pageSizeBytes: Nat({
    description: `bytes per page, 1..${UPLOAD_MAX_PAGE_BYTES} (the allocator's default: 4 MiB)`,
  }),
  minPagesToRetain: Nat({
    description: `pool pages cleanup keeps, 0..${UPLOAD_MAX_MIN_PAGES} (default 5)`,
  }),
});
export type FastAllocatorConfig = Static<typeof FastAllocatorConfigSchema>;

export type FastSide = UploadSide<FastAllocator>;

export function fastSide(
  alloc: (heap: UploadHeap, fence: QueueTimeline) => FastAllocator,
  config: FastAllocatorConfig,
  env: RunEnv,
): FastSide {
  return uploadSide(alloc, config, env);
}

function allocate(s: FastSide, sizeBytes: number, alignBytes: number): Json {
  const before = s.alloc.currentPage();
  const pooledBefore = s.alloc.pooledPageCount();
  const location = s.alloc.allocate(sizeBytes, alignBytes);
  const forwarded = sizeBytes > s.pageSizeBytes;
  if (forwarded && s.heap.created.indexOf(location.bufferId) === -1) {
    s.placementViolations.push(
      `a request of ${sizeBytes} bytes above the page size was answered with buffer ${location.bufferId}, not a new dedicated buffer`,
    );
  }
  s.frame.push(
    judgeHandOut(
      s,
      'allocate',
      location,
      sizeBytes,
      alignBytes,
      forwarded ? 'forwarded' : 'page',
      s.frame,
      before,
    ),
  );
  if (forwarded) s.env.probe('forwarded');
  else {
    if (sizeBytes === s.pageSizeBytes) s.env.probe('exact-page-size');
    pageProbes(s, before, pooledBefore, location.bufferId);
  }
  return {
    bufferId: location.bufferId,
    offsetBytes: location.offsetBytes,
    created: createdOf(s.heap),
  };
}

/** The forwarded part of the retained bound: no dedicated buffer whose fence value completed survives cleanup. */
function forwardedKept(s: FastSide): string | null {
  if (s.heap.destroyedForwarded > 0) s.env.probe('forwarded-released');
  const held = s.alloc.forwardedBuffers();
  for (let i = 0; i < held.length; i++) {
    if (held[i]!.fenceValue <= s.timeline.completedValue) {
      return `cleanup kept dedicated buffer ${held[i]!.bufferId} although its fence value ${held[i]!.fenceValue} completed (${s.timeline.completedValue})`;
    }
  }
  return null;
}

const shared = sharedInvariants<FastAllocator, FastAllocatorConfig>(
  (alloc) => heldPages(alloc) + alloc.forwardedBufferCount(),
);

const invariants: Invariant<FastSide, FastAllocatorConfig>[] = [
  shared.placement(
    'within-page-aligned',
    'every hand-out lies inside a live buffer at a multiple of its alignment; a request above the page size gets a new dedicated buffer, any other a page',
  ),
  shared.noOverlap,
  shared.inFlight(
    'page-reuse-after-fence',
    'a page is recycled (handed out from again after it left the current page) only once the frame of its last hand-out completed, and no hand-out uses bytes an unfinished GPU read still uses (judged by the GPU timeline)',
  ),
  shared.destroyed,
  shared.retained(
    'after cleanup the pool keeps at least min(minPagesToRetain, what it had) pages, keeps no completed page above the minimum, and keeps no dedicated buffer whose fence value completed',
  ),
  shared.accounting,
];

function sizeArb(pageSizeBytes: number): fc.Arbitrary<number> {
  const third = Math.max(1, Math.floor(pageSizeBytes / 3));
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .constantFrom(pageSizeBytes / 2, pageSizeBytes / 3, pageSizeBytes / 4)
        .map((size) => Math.max(1, Math.floor(size))),
    },
    { weight: 4, arbitrary: fc.integer({ min: 1, max: third }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: pageSizeBytes }) },
    { weight: 1, arbitrary: fc.constant(pageSizeBytes) },
    { weight: 1, arbitrary: fc.integer({ min: pageSizeBytes + 1, max: pageSizeBytes * 3 }) },
    { weight: 1, arbitrary: fc.constantFrom(0, -1) },
  );
}

const alignArb: fc.Arbitrary<number> = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(1, 4, 16, 16, 256) },
  { weight: 1, arbitrary: fc.constantFrom(1024, 0, 3) },
);

const op = opsFor<FastAllocatorConfig, FastSide>();

const frame = frameOps<FastAllocator, FastAllocatorConfig>(forwardedKept);

const ops = {
  allocate: op({
    fields: { sizeBytes: Int(), alignBytes: Int() },
    weight: 12,
    arbitrary: (config, op) =>
      fc
        .tuple(sizeArb(config.pageSizeBytes), alignArb)
        .map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes })),
    apply: (s, command) => allocate(s, command.sizeBytes, command.alignBytes),
  }),
  retain: op({
    fields: { count: Int() },
    weight: 1,
    arbitrary: (_config, op) => fc.constantFrom(0, 1, 2, 3, -1).map((count) => ({ op, count })),
    apply: (s, command) => {
      s.alloc.setMinPagesToRetain(command.count);
      if (command.count < s.minPagesToRetain && s.alloc.pooledPageCount() > command.count)
        s.env.probe('minimum-lowered-below-pool');
      s.minPagesToRetain = command.count;
      return {};
    },
  }),
  use: frame.use,
  signal: frame.signal,
  gpuProgress: frame.gpuProgress,
  cleanup: frame.cleanup,
};

export const fastAllocatorSystem = defineSystem({
  name: 'fast-allocator',
  summary:
    'fast allocator: bump pages for single-frame upload data, recycled after their fence, forwarding above the page size, a minimum pool kept, against a simulated GPU queue',
  config: {
    schema: FastAllocatorConfigSchema,
    check: fastAllocatorConfigCheck(1),
    arbitrary: () =>
      fc.record({
        pageSizeBytes: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(256, 1024) },
          { weight: 2, arbitrary: fc.constant(4096) },
          { weight: 2, arbitrary: fc.integer({ min: 16, max: 4096 }) },
        ),
        minPagesToRetain: fc.integer({ min: 0, max: 3 }),
      }),
  },
  ops,
  around: (s, command, dispatch) => {
    startStep(s);
    return dispatch(s, command);
  },
  sequence: { minLength: 1, maxLength: 200 },
  createModel: (config, env) =>
    fastSide(
      (heap, fence) =>
        new FastAllocatorModel(heap, fence, config.pageSizeBytes, config.minPagesToRetain),
      config,
      env,
    ),
  visual: uploadVisual,
  createImpl: (config, env) =>
    fastSide(
      (heap, fence) =>
        new FastAllocatorImpl(heap, fence, config.pageSizeBytes, config.minPagesToRetain),
      config,
      env,
    ),
  invariants,
  probes: [
    'page-turnover',
    'page-recycled',
    'new-page-while-pool-waits',
    'forwarded',
    'exact-page-size',
    'forwarded-released',
    'minimum-lowered-below-pool',
    'cleanup-destroyed',
    'cleanup-kept-minimum',
    'cleanup-blocked-by-fence',
  ],
});
