/**
 * System `fast-allocator`: the fast allocator's 4 MiB bump pages for single-frame upload data
 * (seed d3d12-memory-allocation.zh.txt §1 constraint ④, §3.2, §5.3, §10; model
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
 * time (the seed, §10: d3d12.FastAllocator.MinPagesToRetain may be changed while running).
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import type { Invariant, RunEnv } from '../harness/system.js';
import { defineSystem, opsFor } from '../harness/define-system.js';
import { Int, Nat, Strict, type Static } from '../harness/schema.js';
import { QueueTimeline } from '../gpu/queue-timeline.js';
import { FastAllocatorModel } from '../../models/fast-allocator.js';
import { FastAllocatorImpl } from '../alloc/upload-pages.js';
import {
  pageConfigProblem,
  type FastAllocator,
  type UploadBufferKind,
  type UploadHeap,
  type UploadLocation,
  type UploadPageState,
} from '../alloc/upload-pages-types.js';
import { bothSides, pickLive, SKIPPED } from './common.js';
import { uploadVisual } from './visuals.js';

/** Page size limit of generated and replayed configs. */
export const UPLOAD_MAX_PAGE_BYTES = 1 << 30;
/** Retained-page limit of replayed configs. */
export const UPLOAD_MAX_MIN_PAGES = 1 << 10;

interface HeapBuffer {
  readonly baseAddress: number;
  readonly sizeBytes: number;
  readonly kind: UploadBufferKind;
}

/**
 * The upload heap as the harness sees it: buffer ids from 1 up (never reused), each buffer at
 * its own range of one flat GPU address space (so the timeline's byte ranges name buffers), and
 * every destruction judged against the GPU reads still in flight.
 */
export class UploadHeapJudge implements UploadHeap {
  readonly buffers = new Map<number, HeapBuffer>();
  /** Per page: how many times it was recycled (a hand-out on it after it had left the current page). */
  readonly lives = new Map<number, number>();
  /**
   * Per buffer: the fence value of the frame of its last hand-out. Single-frame data may be read
   * by any GPU work of its frame, so until that value completes the GPU may read the buffer.
   */
  readonly lastFrame = new Map<number, number>();
  /** This step's creations and destructions (the observation of what the allocator did). */
  readonly created: number[] = [];
  readonly destroyed: number[] = [];
  /** Destructions of buffers the GPU may still read, or of buffers that are not alive. */
  readonly violations: string[] = [];
  /** Dedicated (forwarded) buffers among this step's destructions. */
  destroyedForwarded = 0;
  private nextId = 1;
  private nextAddress = 0;

  constructor(private readonly timeline: QueueTimeline) {}

  createBuffer(sizeBytes: number, kind: UploadBufferKind): number {
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0) throw new Error(`upload heap: createBuffer(${sizeBytes}, ${kind}): bad size`);
    const bufferId = this.nextId++;
    this.buffers.set(bufferId, { baseAddress: this.nextAddress, sizeBytes, kind });
    this.nextAddress += sizeBytes;
    this.created.push(bufferId);
    return bufferId;
  }

  destroyBuffer(bufferId: number): void {
    const buffer = this.buffers.get(bufferId);
    if (buffer === undefined) {
      this.violations.push(`destroyBuffer(${bufferId}) of a buffer that is not alive`);
      return;
    }
    const frameValue = this.lastFrame.get(bufferId);
    const read = this.timeline.findInFlightOverlap(buffer.baseAddress, buffer.sizeBytes);
    if (read !== null) {
      this.violations.push(
        `${buffer.kind} buffer ${bufferId} destroyed while the GPU may still read ${read.sizeBytes} bytes of it ` +
          `until fence value ${read.fenceValue} (completed ${this.timeline.completedValue})`,
      );
    } else if (frameValue !== undefined && frameValue > this.timeline.completedValue) {
      this.violations.push(
        `${buffer.kind} buffer ${bufferId} destroyed before the frame that last wrote it completed ` +
          `(fence value ${frameValue}, completed ${this.timeline.completedValue})`,
      );
    }
    this.buffers.delete(bufferId);
    this.lastFrame.delete(bufferId);
    this.lives.delete(bufferId);
    this.destroyed.push(bufferId);
    if (buffer.kind === 'forwarded') this.destroyedForwarded++;
  }

  /** Clears the per-step event lists. */
  startStep(): void {
    if (this.created.length > 0) this.created.length = 0;
    if (this.destroyed.length > 0) this.destroyed.length = 0;
    this.destroyedForwarded = 0;
  }
}

/** The shared empty list of observations (frozen: nothing may add to it). */
const NONE = Object.freeze([]) as unknown as number[];

/** This step's creations, for an observation (one shared empty list when there are none). */
export function createdOf(heap: UploadHeapJudge): number[] {
  return heap.created.length === 0 ? NONE : heap.created.slice();
}

/** One hand-out of this frame, as the caller saw it. */
export interface Handout {
  readonly id: number;
  readonly bufferId: number;
  readonly offsetBytes: number;
  /** The bytes the caller writes and the GPU reads (a constant's size rounded up to 256). */
  readonly sizeBytes: number;
  /** How many times the buffer had been recycled when this was handed out (its life). */
  readonly life: number;
}

/** What both systems' sides have: the allocator, its queue and heap, and the caller's frame. */
export interface UploadSide<A extends UploadPageState> {
  readonly alloc: A;
  readonly timeline: QueueTimeline;
  readonly heap: UploadHeapJudge;
  readonly env: RunEnv;
  readonly pageSizeBytes: number;
  /** The minimum the caller last set (the config's, or a `retain` command's). */
  minPagesToRetain: number;
  /** This frame's hand-outs the caller may still use (expire at `signal`). */
  readonly frame: Handout[];
  nextHandoutId: number;
  /** Hand-outs outside their buffer, misaligned, on a dead buffer, or on the wrong kind of buffer. */
  readonly placementViolations: string[];
  /** Hand-outs that overlap another live hand-out of this frame. */
  readonly overlapViolations: string[];
  /** Hand-outs of bytes an unfinished GPU read still uses. */
  readonly inFlightViolations: string[];
  /** Cleanups that kept too much or too little. */
  readonly retainViolations: string[];
}

export function uploadSide<A extends UploadPageState>(
  make: (heap: UploadHeap, fence: QueueTimeline) => A,
  config: { readonly pageSizeBytes: number; readonly minPagesToRetain: number },
  env: RunEnv,
): UploadSide<A> {
  const timeline = new QueueTimeline();
  const heap = new UploadHeapJudge(timeline);
  return {
    alloc: make(heap, timeline),
    timeline,
    heap,
    env,
    pageSizeBytes: config.pageSizeBytes,
    minPagesToRetain: config.minPagesToRetain,
    frame: [],
    nextHandoutId: 1,
    placementViolations: [],
    overlapViolations: [],
    inFlightViolations: [],
    retainViolations: [],
  };
}

/**
 * Judges a hand-out of `sizeBytes` at `location` aligned to `alignBytes`, of a buffer of `kind`,
 * and returns it (the caller records it). `live` is what it must not overlap (this frame's
 * hand-outs); `currentBefore` is the allocator's current page before the request.
 *
 * A hand-out on a page that was handed out from before but was not the current page is a
 * recycle: the page starts a new life, which must wait for the frame of its last hand-out to
 * complete (page-reuse). Within one life a bump page only moves forward, so two hand-outs of the
 * frame in the same life that share a byte are an overlap (no-overlap); the GPU timeline judges
 * every hand-out against the unfinished reads, whatever the life.
 */
export function judgeHandOut<A extends UploadPageState>(
  s: UploadSide<A>,
  operation: string,
  location: UploadLocation,
  sizeBytes: number,
  alignBytes: number,
  kind: UploadBufferKind,
  live: readonly Handout[],
  currentBefore: number,
): Handout {
  const { bufferId, offsetBytes } = location;
  const buffer = s.heap.buffers.get(bufferId);
  const frameValue = s.heap.lastFrame.get(bufferId);
  let life = s.heap.lives.get(bufferId) ?? 0;
  if (kind === 'page' && bufferId !== currentBefore && frameValue !== undefined) {
    s.heap.lives.set(bufferId, ++life);
    if (frameValue > s.timeline.completedValue) {
      s.inFlightViolations.push(
        `${operation} recycled page ${bufferId} before the frame that last wrote it completed ` +
          `(fence value ${frameValue}, completed ${s.timeline.completedValue}; hand-out at offset ${offsetBytes})`,
      );
    }
  }
  const at = `${operation} handed out [${offsetBytes}, ${offsetBytes + sizeBytes}) of buffer ${bufferId}`;
  if (buffer === undefined) s.placementViolations.push(`${at}, which is not alive`);
  else if (!Number.isSafeInteger(offsetBytes) || offsetBytes < 0 || offsetBytes + sizeBytes > buffer.sizeBytes) {
    s.placementViolations.push(`${at}, which has ${buffer.sizeBytes} bytes`);
  } else if (offsetBytes % alignBytes !== 0) s.placementViolations.push(`${at}: not aligned to ${alignBytes}`);
  else if (buffer.kind !== kind) s.placementViolations.push(`${at}: a ${buffer.kind} buffer, where a ${kind} buffer is due`);
  for (let i = 0; i < live.length; i++) {
    const other = live[i]!;
    if (other.bufferId === bufferId && other.life === life && other.offsetBytes < offsetBytes + sizeBytes && offsetBytes < other.offsetBytes + other.sizeBytes) {
      s.overlapViolations.push(`${at}, overlapping [${other.offsetBytes}, ${other.offsetBytes + other.sizeBytes}) handed out earlier this frame`);
      break;
    }
  }
  if (buffer !== undefined) {
    const violations = s.inFlightViolations;
    const before = violations.length;
    s.timeline.judgeHandOut(operation, buffer.baseAddress + offsetBytes, sizeBytes, violations);
    if (violations.length > before) violations[violations.length - 1] += ` (buffer ${bufferId} at offset ${offsetBytes})`;
    s.heap.lastFrame.set(bufferId, s.timeline.nextValueToSignal);
  }
  return { id: s.nextHandoutId++, bufferId, offsetBytes, sizeBytes, life };
}

/** Records GPU work reading a hand-out; it completes with the frame's fence value. */
export function gpuRead<A extends UploadPageState>(s: UploadSide<A>, handout: Handout): Json {
  const buffer = s.heap.buffers.get(handout.bufferId);
  const fenceValue = s.timeline.nextValueToSignal;
  // A read of a dead buffer is already a placement violation of its hand-out or a destruction
  // violation; the GPU cannot read it again.
  if (buffer !== undefined) s.timeline.submitRead(buffer.baseAddress + handout.offsetBytes, handout.sizeBytes, fenceValue, handout.id);
  return { fenceValue };
}

/**
 * Probes of a page hand-out: `before` is the current page before the request, `pooledBefore` the
 * pool's size. Model side only (the implementation's env counts nothing).
 */
export function pageProbes<A extends UploadPageState>(s: UploadSide<A>, before: number, pooledBefore: number, bufferId: number): void {
  if (before === -1 || before === bufferId) return;
  s.env.probe('page-turnover');
  if (s.heap.created.length === 0) s.env.probe('page-recycled');
  else if (pooledBefore > 0) s.env.probe('new-page-while-pool-waits');
}

/** Runs cleanup and judges the retained-page bound; `extra` judges what else it must release. */
export function doCleanup<A extends UploadPageState>(s: UploadSide<A>, extra?: () => string | null): Json {
  const pooledBefore = s.alloc.pooledPageCount();
  s.alloc.cleanup();
  const pool = s.alloc.pooledPages();
  const completedValue = s.timeline.completedValue;
  const min = s.minPagesToRetain;
  if (pool.length < Math.min(min, pooledBefore)) {
    s.retainViolations.push(`cleanup left ${pool.length} of ${pooledBefore} pool pages, below the minimum of ${min}`);
  } else if (pool.length > min) {
    for (let i = 0; i < pool.length; i++) {
      if (pool[i]!.fenceValue <= completedValue) {
        s.retainViolations.push(
          `cleanup kept ${pool.length} pool pages (minimum ${min}) although page ${pool[i]!.bufferId} completed ` +
            `(fence value ${pool[i]!.fenceValue}, completed ${completedValue})`,
        );
        break;
      }
    }
  }
  const problem = extra?.() ?? null;
  if (problem !== null) s.retainViolations.push(problem);
  if (s.heap.destroyed.length > 0) s.env.probe('cleanup-destroyed');
  if (pool.length === min && min > 0 && pool[0]!.fenceValue <= completedValue) s.env.probe('cleanup-kept-minimum');
  if (pool.length > min) s.env.probe('cleanup-blocked-by-fence');
  return { destroyed: s.heap.destroyed.length === 0 ? NONE : s.heap.destroyed.slice() };
}

function firstOf(list: readonly string[]): string | null {
  return list.length > 0 ? list[0]! : null;
}

/** Invariants both systems share, by name; each reads what its judge recorded. */
export function sharedInvariants<A extends UploadPageState, C>(heldBuffers: (alloc: A) => number): {
  placement: (name: string, description: string) => Invariant<UploadSide<A>, C>;
  noOverlap: Invariant<UploadSide<A>, C>;
  inFlight: (name: string, description: string) => Invariant<UploadSide<A>, C>;
  destroyed: Invariant<UploadSide<A>, C>;
  retained: (description: string) => Invariant<UploadSide<A>, C>;
  accounting: Invariant<UploadSide<A>, C>;
} {
  return {
    placement: (name, description) => ({ name, description, check: bothSides((s) => firstOf(s.placementViolations)) }),
    noOverlap: {
      name: 'no-overlap',
      description: 'no two hand-outs of this frame in the same life of a page share a byte (within a life a bump page only moves forward)',
      check: bothSides((s) => firstOf(s.overlapViolations)),
    },
    inFlight: (name, description) => ({ name, description, check: bothSides((s) => firstOf(s.inFlightViolations)) }),
    destroyed: {
      name: 'destroyed-while-in-flight',
      description:
        'no upload buffer is destroyed while the GPU may still read it: before the frame of its last hand-out completed, or with an unfinished GPU read of it (the timeline); nor one that is not alive',
      check: bothSides((s) => firstOf(s.heap.violations)),
    },
    retained: (description) => ({ name: 'retained-bound', description, check: bothSides((s) => firstOf(s.retainViolations)) }),
    accounting: {
      name: 'device-accounting',
      description: "the upload heap's live buffers are exactly the allocator's current page, pool pages and held dedicated buffers",
      check: bothSides((s) => {
        const held = heldBuffers(s.alloc);
        if (held !== s.heap.buffers.size) return `the allocator holds ${held} buffers but the upload heap has ${s.heap.buffers.size} alive`;
        const current = s.alloc.currentPage();
        if (current !== -1 && !s.heap.buffers.has(current)) return `the current page ${current} is not alive in the upload heap`;
        // With equal counts the held set changes only with the heap's own creations and destructions.
        if (s.heap.created.length === 0 && s.heap.destroyed.length === 0) return null;
        const pool = s.alloc.pooledPages();
        for (let i = 0; i < pool.length; i++) {
          if (!s.heap.buffers.has(pool[i]!.bufferId)) return `pool page ${pool[i]!.bufferId} is not alive in the upload heap`;
        }
        return null;
      }),
    },
  };
}

/** The page part of the held-buffer count. */
export function heldPages(alloc: UploadPageState): number {
  return (alloc.currentPage() === -1 ? 0 : 1) + alloc.pooledPageCount();
}

export const FastAllocatorConfigSchema = Strict({
  pageSizeBytes: Nat({ description: `bytes per page, 1..${UPLOAD_MAX_PAGE_BYTES} (the allocator's default: 4 MiB)` }),
  minPagesToRetain: Nat({ description: `pool pages cleanup keeps, 0..${UPLOAD_MAX_MIN_PAGES} (default 5)` }),
});
export type FastAllocatorConfig = Static<typeof FastAllocatorConfigSchema>;

export type FastSide = UploadSide<FastAllocator>;

export function fastSide(alloc: (heap: UploadHeap, fence: QueueTimeline) => FastAllocator, config: FastAllocatorConfig, env: RunEnv): FastSide {
  return uploadSide(alloc, config, env);
}

function allocate(s: FastSide, sizeBytes: number, alignBytes: number): Json {
  const before = s.alloc.currentPage();
  const pooledBefore = s.alloc.pooledPageCount();
  const location = s.alloc.allocate(sizeBytes, alignBytes);
  const forwarded = sizeBytes > s.pageSizeBytes;
  if (forwarded && s.heap.created.indexOf(location.bufferId) === -1) {
    s.placementViolations.push(`a request of ${sizeBytes} bytes above the page size was answered with buffer ${location.bufferId}, not a new dedicated buffer`);
  }
  s.frame.push(judgeHandOut(s, 'allocate', location, sizeBytes, alignBytes, forwarded ? 'forwarded' : 'page', s.frame, before));
  if (forwarded) s.env.probe('forwarded');
  else {
    if (sizeBytes === s.pageSizeBytes) s.env.probe('exact-page-size');
    pageProbes(s, before, pooledBefore, location.bufferId);
  }
  return { bufferId: location.bufferId, offsetBytes: location.offsetBytes, created: createdOf(s.heap) };
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

const shared = sharedInvariants<FastAllocator, FastAllocatorConfig>((alloc) => heldPages(alloc) + alloc.forwardedBufferCount());

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
    { weight: 5, arbitrary: fc.constantFrom(pageSizeBytes / 2, pageSizeBytes / 3, pageSizeBytes / 4).map((size) => Math.max(1, Math.floor(size))) },
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

/** Ops both systems share: the frame, the GPU and cleanup. */
export function frameOps<A extends UploadPageState, C>(cleanupExtra?: (s: UploadSide<A>) => string | null) {
  const frameOp = opsFor<C, UploadSide<A>>();
  return {
    use: frameOp({
      fields: { index: Nat() },
      weight: 6,
      arbitrary: (_config, op) => fc.nat({ max: 7 }).map((index) => ({ op, index })),
      apply: (s, command) => {
        const handout = pickLive(s.frame, command.index);
        if (handout === undefined) return SKIPPED;
        return gpuRead(s, handout);
      },
    }),
    signal: frameOp({
      fields: {},
      weight: 3,
      apply: (s) => {
        s.frame.length = 0;
        return { signalled: s.timeline.signal() };
      },
    }),
    gpuProgress: frameOp({
      fields: { steps: Nat() },
      weight: 3,
      arbitrary: (_config, op) =>
        fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 2 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 5) }).map((steps) => ({ op, steps })),
      apply: (s, command) => ({ completedValue: s.timeline.advance(command.steps) }),
    }),
    cleanup: frameOp({
      fields: {},
      weight: 2,
      apply: (s) => doCleanup(s, cleanupExtra === undefined ? undefined : () => cleanupExtra(s)),
    }),
  };
}

const frame = frameOps<FastAllocator, FastAllocatorConfig>(forwardedKept);

const ops = {
  allocate: op({
    fields: { sizeBytes: Int(), alignBytes: Int() },
    weight: 12,
    arbitrary: (config, op) => fc.tuple(sizeArb(config.pageSizeBytes), alignArb).map(([sizeBytes, alignBytes]) => ({ op, sizeBytes, alignBytes })),
    apply: (s, command) => allocate(s, command.sizeBytes, command.alignBytes),
  }),
  retain: op({
    fields: { count: Int() },
    weight: 1,
    arbitrary: (_config, op) => fc.constantFrom(0, 1, 2, 3, -1).map((count) => ({ op, count })),
    apply: (s, command) => {
      s.alloc.setMinPagesToRetain(command.count);
      if (command.count < s.minPagesToRetain && s.alloc.pooledPageCount() > command.count) s.env.probe('minimum-lowered-below-pool');
      s.minPagesToRetain = command.count;
      return {};
    },
  }),
  use: frame.use,
  signal: frame.signal,
  gpuProgress: frame.gpuProgress,
  cleanup: frame.cleanup,
};

/** Starts a step: clears the heap's per-step events. */
export function startStep<A extends UploadPageState>(s: UploadSide<A>): void {
  s.heap.startStep();
}

export const fastAllocatorConfigCheck = (granuleBytes: number) => (config: { pageSizeBytes: number; minPagesToRetain: number }): string | null => {
  if (config.pageSizeBytes > UPLOAD_MAX_PAGE_BYTES) return `pageSizeBytes must be at most ${UPLOAD_MAX_PAGE_BYTES}, got ${config.pageSizeBytes}`;
  if (config.minPagesToRetain > UPLOAD_MAX_MIN_PAGES) return `minPagesToRetain must be at most ${UPLOAD_MAX_MIN_PAGES}, got ${config.minPagesToRetain}`;
  return pageConfigProblem(config.pageSizeBytes, config.minPagesToRetain, granuleBytes);
};

export const fastAllocatorSystem = defineSystem({
  name: 'fast-allocator',
  summary: 'fast allocator: bump pages for single-frame upload data, recycled after their fence, forwarding above the page size, a minimum pool kept, against a simulated GPU queue',
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
  createModel: (config, env) => fastSide((heap, fence) => new FastAllocatorModel(heap, fence, config.pageSizeBytes, config.minPagesToRetain), config, env),
  visual: uploadVisual,
  createImpl: (config, env) => fastSide((heap, fence) => new FastAllocatorImpl(heap, fence, config.pageSizeBytes, config.minPagesToRetain), config, env),
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
