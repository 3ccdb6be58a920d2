/**
 * System `fast-constant-allocator`: 64 KiB pages of 256-byte aligned constants and the uniform
 * buffers updated through them by "allocate a new location and replace"
 * (docs/spec/engine.md#mem-5-1, #mem-5-4; model models/fast-constant-allocator.ts), against the
 * simulated GPU queue and the upload heap judge shared with the fast allocator's system
 * (src/systems/fast-allocator.ts).
 *
 * `update` gives a uniform buffer (a small integer the caller picks) new contents; `draw`
 * records GPU work reading a uniform buffer where this frame's last update put it; `allocate`
 * and `use` do the same for loose constants. The GPU reads a constant in 256-byte units, so a
 * hand-out covers the size rounded up to 256. The judge of "never rewriting bytes the GPU may be
 * reading" is the GPU timeline: every hand-out is checked against the unfinished reads. A
 * uniform buffer's earlier location this frame is no longer written by the CPU (it was replaced)
 * but draws recorded earlier in the frame may read it, so no-overlap keeps every hand-out of the
 * frame (`frame`), replaced or not. Generated configs use pages of 256 B -
 * 2 KiB so pages turn over within a few commands; the default page is the seed's 64 KiB.
 */
import fc from 'fast-check';
import type { Invariant, RunEnv } from '../harness/system.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Int, Nat, Strict, type Static } from '../harness/schema.js';
import type { QueueTimeline } from '../gpu/queue-timeline.js';
import { FastConstantAllocatorModel } from '../../models/fast-constant-allocator.js';
import { FastConstantAllocatorImpl } from '../alloc/upload-pages.js';
import {
  CONSTANT_ALIGN_BYTES,
  type FastConstantAllocator,
  type UploadHeap,
} from '../alloc/upload-pages-types.js';
import { alignUp } from '../alloc/allocator.js';
import { pickLive, SKIPPED } from './common.js';
import {
  createdOf,
  fastAllocatorConfigCheck,
  frameOps,
  gpuRead,
  heldPages,
  judgeHandOut,
  pageProbes,
  sharedInvariants,
  startStep,
  uploadSide,
  UPLOAD_MAX_MIN_PAGES,
  UPLOAD_MAX_PAGE_BYTES,
  type Handout,
  type UploadSide,
} from './upload-pages-side.js';
import { uploadVisual } from './visuals.js';
import { present } from '../assert.js';

export const FastConstantConfigSchema = Strict({
  pageSizeBytes: Nat({
    description: `bytes per page, a multiple of 256 up to ${UPLOAD_MAX_PAGE_BYTES} (the allocator's default: 64 KiB)`,
  }),
  minPagesToRetain: Nat({
    description: `pool pages cleanup keeps, 0..${UPLOAD_MAX_MIN_PAGES} (default 5)`,
  }),
});
export type FastConstantConfig = Static<typeof FastConstantConfigSchema>;

/** The constant side: the shared frame plus this frame's uniform buffers. */
export interface ConstantSide extends UploadSide<FastConstantAllocator> {
  /** Loose constants handed out this frame (`frame` holds them and every uniform buffer update). */
  readonly loose: Handout[];
  /** Uniform buffers updated this frame, in first-update order, with their current hand-out. */
  readonly uniformBuffers: number[];
  readonly current: Map<number, Handout>;
}

export function constantSide(
  alloc: (heap: UploadHeap, fence: QueueTimeline) => FastConstantAllocator,
  config: FastConstantConfig,
  env: RunEnv,
): ConstantSide {
  const side = uploadSide(alloc, config, env) as ConstantSide & {
    loose: Handout[];
    uniformBuffers: number[];
    current: Map<number, Handout>;
  };
  side.loose = [];
  side.uniformBuffers = [];
  side.current = new Map();
  return side;
}

function handOut(
  s: ConstantSide,
  operation: string,
  sizeBytes: number,
  give: () => { bufferId: number; offsetBytes: number },
): Handout {
  const before = s.alloc.currentPage();
  const pooledBefore = s.alloc.pooledPageCount();
  const location = give();
  const handout = judgeHandOut(
    s,
    operation,
    location,
    alignUp(sizeBytes, CONSTANT_ALIGN_BYTES),
    CONSTANT_ALIGN_BYTES,
    'page',
    s.frame,
    before,
  );
  s.frame.push(handout);
  pageProbes(s, before, pooledBefore, location.bufferId);
  if (alignUp(sizeBytes, CONSTANT_ALIGN_BYTES) === s.pageSizeBytes)
    s.env.probe('constant-fills-page');
  return handout;
}

/** Whether an unfinished GPU read uses the hand-out's bytes. */
function isRead(s: ConstantSide, handout: Handout): boolean {
  const buffer = s.heap.buffers.get(handout.bufferId);
  return (
    buffer !== undefined &&
    s.timeline.findInFlightOverlap(buffer.baseAddress + handout.offsetBytes, handout.sizeBytes) !==
      null
  );
}

const shared = sharedInvariants<FastConstantAllocator, FastConstantConfig>(heldPages);

const invariants: Invariant<ConstantSide, FastConstantConfig>[] = [
  shared.placement(
    'constant-aligned-in-page',
    'every constant starts at a multiple of 256 bytes of a live page and its 256-byte units end inside the page',
  ),
  shared.noOverlap,
  shared.inFlight(
    'no-rewrite-in-flight',
    'no hand-out (a new constant, a uniform buffer update) uses bytes the GPU may be reading: updates allocate a new location, a page is recycled (handed out from again after it left the current page) only once the frame of its last hand-out completed, and no hand-out overlaps an unfinished GPU read (the timeline)',
  ),
  shared.destroyed,
  shared.retained(
    'after cleanup the pool keeps at least min(minPagesToRetain, what it had) pages and keeps no completed page above the minimum',
  ),
  shared.accounting,
];

function sizeArb(pageSizeBytes: number): fc.Arbitrary<number> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 1, max: Math.max(1, pageSizeBytes / 2) }) },
    { weight: 2, arbitrary: fc.constantFrom(1, 256, 257) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: pageSizeBytes }) },
    { weight: 1, arbitrary: fc.constant(pageSizeBytes) },
    { weight: 1, arbitrary: fc.constantFrom(0, pageSizeBytes + 1) },
  );
}

const uniformBufferArb = fc.oneof(
  { weight: 20, arbitrary: fc.nat({ max: 5 }) },
  { weight: 1, arbitrary: fc.constant(-1) },
);

const op = opsFor<FastConstantConfig, ConstantSide>();
const frame = frameOps<FastConstantAllocator, FastConstantConfig>();

const ops = {
  update: op({
    fields: { uniformBuffer: Int(), sizeBytes: Int() },
    weight: 8,
    arbitrary: (config, op) =>
      fc
        .tuple(uniformBufferArb, sizeArb(config.pageSizeBytes))
        .map(([uniformBuffer, sizeBytes]) => ({ op, uniformBuffer, sizeBytes })),
    apply: (s, command) => {
      const { uniformBuffer, sizeBytes } = command;
      const previous = s.current.get(uniformBuffer);
      const handout = handOut(s, 'update', sizeBytes, () =>
        s.alloc.updateUniformBuffer(uniformBuffer, sizeBytes),
      );
      if (previous === undefined) s.uniformBuffers.push(uniformBuffer);
      else if (isRead(s, previous)) s.env.probe('uniform-buffer-replaced-while-read');
      s.current.set(uniformBuffer, handout);
      const location = s.alloc.uniformBufferLocation(uniformBuffer);
      return {
        bufferId: handout.bufferId,
        offsetBytes: handout.offsetBytes,
        created: createdOf(s.heap),
        location: location === null ? null : [location.bufferId, location.offsetBytes],
      };
    },
  }),
  draw: op({
    fields: { index: Nat() },
    weight: 6,
    arbitrary: (_config, op) => fc.nat({ max: 7 }).map((index) => ({ op, index })),
    apply: (s, command) => {
      const uniformBuffer = pickLive(s.uniformBuffers, command.index);
      if (uniformBuffer === undefined) return SKIPPED;
      return gpuRead(
        s,
        present(
          s.current.get(uniformBuffer),
          'a live uniform buffer has a current page',
          uniformBuffer,
        ),
      );
    },
  }),
  allocate: op({
    fields: { sizeBytes: Int() },
    weight: 4,
    arbitrary: (config, op) =>
      sizeArb(config.pageSizeBytes).map((sizeBytes) => ({ op, sizeBytes })),
    apply: (s, command) => {
      const handout = handOut(s, 'allocate', command.sizeBytes, () =>
        s.alloc.allocate(command.sizeBytes),
      );
      s.loose.push(handout);
      return {
        bufferId: handout.bufferId,
        offsetBytes: handout.offsetBytes,
        created: createdOf(s.heap),
      };
    },
  }),
  use: op({
    fields: { index: Nat() },
    weight: 2,
    arbitrary: (_config, op) => fc.nat({ max: 7 }).map((index) => ({ op, index })),
    apply: (s, command) => {
      const handout = pickLive(s.loose, command.index);
      if (handout === undefined) return SKIPPED;
      return gpuRead(s, handout);
    },
  }),
  signal: op({
    fields: {},
    weight: 3,
    apply: (s) => {
      s.frame.length = 0;
      s.loose.length = 0;
      s.uniformBuffers.length = 0;
      s.current.clear();
      return { signalled: s.timeline.signal() };
    },
  }),
  gpuProgress: frame.gpuProgress,
  cleanup: frame.cleanup,
};

export const fastConstantAllocatorSystem = defineSystem({
  name: 'fast-constant-allocator',
  summary:
    'fast constant allocator: 256-byte aligned constants in bump pages, uniform buffers updated by allocating a new location and replacing, pages recycled after their fence, against a simulated GPU queue',
  config: {
    schema: FastConstantConfigSchema,
    check: fastAllocatorConfigCheck(CONSTANT_ALIGN_BYTES),
    arbitrary: () =>
      fc.record({
        pageSizeBytes: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(256, 512, 1024) },
          { weight: 1, arbitrary: fc.constant(2048) },
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
    constantSide(
      (heap, fence) =>
        new FastConstantAllocatorModel(heap, fence, config.pageSizeBytes, config.minPagesToRetain),
      config,
      env,
    ),
  visual: uploadVisual,
  createImpl: (config, env) =>
    constantSide(
      (heap, fence) =>
        new FastConstantAllocatorImpl(heap, fence, config.pageSizeBytes, config.minPagesToRetain),
      config,
      env,
    ),
  invariants,
  probes: [
    'page-turnover',
    'page-recycled',
    'new-page-while-pool-waits',
    'constant-fills-page',
    'uniform-buffer-replaced-while-read',
    'cleanup-destroyed',
    'cleanup-kept-minimum',
    'cleanup-blocked-by-fence',
  ],
});
