/**
 * The side both upload page systems share (`fast-allocator`, `fast-constant-allocator`): the upload
 * heap judge, the hand-outs and the GPU reads of the frame, the judges of a hand-out over bytes the
 * GPU still reads, cleanup, the shared invariants, the frame ops (use, signal, gpuProgress,
 * cleanup) and the config limits.
 */
import fc from 'fast-check';
import type { Json } from '../harness/json.js';
import type { Invariant, RunEnv } from '../harness/system.js';
import { opsFor } from '../harness/define-system.js';
import { Nat } from '../harness/schema.js';
import { QueueTimeline } from '../gpu/queue-timeline.js';
import {
  pageConfigProblem,
  type UploadBufferKind,
  type UploadHeap,
  type UploadLocation,
  type UploadPageState,
} from '../alloc/upload-pages-types.js';
import { bothSides, pickLive, SKIPPED } from './common.js';

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
    if (!Number.isSafeInteger(sizeBytes) || sizeBytes <= 0)
      throw new Error(`upload heap: createBuffer(${sizeBytes}, ${kind}): bad size`);
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
  else if (
    !Number.isSafeInteger(offsetBytes) ||
    offsetBytes < 0 ||
    offsetBytes + sizeBytes > buffer.sizeBytes
  ) {
    s.placementViolations.push(`${at}, which has ${buffer.sizeBytes} bytes`);
  } else if (offsetBytes % alignBytes !== 0)
    s.placementViolations.push(`${at}: not aligned to ${alignBytes}`);
  else if (buffer.kind !== kind)
    s.placementViolations.push(`${at}: a ${buffer.kind} buffer, where a ${kind} buffer is due`);
  for (let i = 0; i < live.length; i++) {
    const other = live[i]!;
    if (
      other.bufferId === bufferId &&
      other.life === life &&
      other.offsetBytes < offsetBytes + sizeBytes &&
      offsetBytes < other.offsetBytes + other.sizeBytes
    ) {
      s.overlapViolations.push(
        `${at}, overlapping [${other.offsetBytes}, ${other.offsetBytes + other.sizeBytes}) handed out earlier this frame`,
      );
      break;
    }
  }
  if (buffer !== undefined) {
    const violations = s.inFlightViolations;
    const before = violations.length;
    s.timeline.judgeHandOut(operation, buffer.baseAddress + offsetBytes, sizeBytes, violations);
    if (violations.length > before)
      violations[violations.length - 1] += ` (buffer ${bufferId} at offset ${offsetBytes})`;
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
  if (buffer !== undefined)
    s.timeline.submitRead(
      buffer.baseAddress + handout.offsetBytes,
      handout.sizeBytes,
      fenceValue,
      handout.id,
    );
  return { fenceValue };
}

/**
 * Probes of a page hand-out: `before` is the current page before the request, `pooledBefore` the
 * pool's size. Model side only (the implementation's env counts nothing).
 */
export function pageProbes<A extends UploadPageState>(
  s: UploadSide<A>,
  before: number,
  pooledBefore: number,
  bufferId: number,
): void {
  if (before === -1 || before === bufferId) return;
  s.env.probe('page-turnover');
  if (s.heap.created.length === 0) s.env.probe('page-recycled');
  else if (pooledBefore > 0) s.env.probe('new-page-while-pool-waits');
}

/** Runs cleanup and judges the retained-page bound; `extra` judges what else it must release. */
export function doCleanup<A extends UploadPageState>(
  s: UploadSide<A>,
  extra?: () => string | null,
): Json {
  const pooledBefore = s.alloc.pooledPageCount();
  s.alloc.cleanup();
  const pool = s.alloc.pooledPages();
  const completedValue = s.timeline.completedValue;
  const min = s.minPagesToRetain;
  if (pool.length < Math.min(min, pooledBefore)) {
    s.retainViolations.push(
      `cleanup left ${pool.length} of ${pooledBefore} pool pages, below the minimum of ${min}`,
    );
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
  if (pool.length === min && min > 0 && pool[0]!.fenceValue <= completedValue)
    s.env.probe('cleanup-kept-minimum');
  if (pool.length > min) s.env.probe('cleanup-blocked-by-fence');
  return { destroyed: s.heap.destroyed.length === 0 ? NONE : s.heap.destroyed.slice() };
}

function firstOf(list: readonly string[]): string | null {
  return list.length > 0 ? list[0]! : null;
}

/** Invariants both systems share, by name; each reads what its judge recorded. */
export function sharedInvariants<A extends UploadPageState, C>(
  heldBuffers: (alloc: A) => number,
): {
  placement: (name: string, description: string) => Invariant<UploadSide<A>, C>;
  noOverlap: Invariant<UploadSide<A>, C>;
  inFlight: (name: string, description: string) => Invariant<UploadSide<A>, C>;
  destroyed: Invariant<UploadSide<A>, C>;
  retained: (description: string) => Invariant<UploadSide<A>, C>;
  accounting: Invariant<UploadSide<A>, C>;
} {
  return {
    placement: (name, description) => ({
      name,
      description,
      check: bothSides((s) => firstOf(s.placementViolations)),
    }),
    noOverlap: {
      name: 'no-overlap',
      description:
        'no two hand-outs of this frame in the same life of a page share a byte (within a life a bump page only moves forward)',
      check: bothSides((s) => firstOf(s.overlapViolations)),
    },
    inFlight: (name, description) => ({
      name,
      description,
      check: bothSides((s) => firstOf(s.inFlightViolations)),
    }),
    destroyed: {
      name: 'destroyed-while-in-flight',
      description:
        'no upload buffer is destroyed while the GPU may still read it: before the frame of its last hand-out completed, or with an unfinished GPU read of it (the timeline); nor one that is not alive',
      check: bothSides((s) => firstOf(s.heap.violations)),
    },
    retained: (description) => ({
      name: 'retained-bound',
      description,
      check: bothSides((s) => firstOf(s.retainViolations)),
    }),
    accounting: {
      name: 'device-accounting',
      description:
        "the upload heap's live buffers are exactly the allocator's current page, pool pages and held dedicated buffers",
      check: bothSides((s) => {
        const held = heldBuffers(s.alloc);
        if (held !== s.heap.buffers.size)
          return `the allocator holds ${held} buffers but the upload heap has ${s.heap.buffers.size} alive`;
        const current = s.alloc.currentPage();
        if (current !== -1 && !s.heap.buffers.has(current))
          return `the current page ${current} is not alive in the upload heap`;
        // With equal counts the held set changes only with the heap's own creations and destructions.
        if (s.heap.created.length === 0 && s.heap.destroyed.length === 0) return null;
        const pool = s.alloc.pooledPages();
        for (let i = 0; i < pool.length; i++) {
          if (!s.heap.buffers.has(pool[i]!.bufferId))
            return `pool page ${pool[i]!.bufferId} is not alive in the upload heap`;
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

/** Ops both systems share: the frame, the GPU and cleanup. */
export function frameOps<A extends UploadPageState, C>(
  cleanupExtra?: (s: UploadSide<A>) => string | null,
) {
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
        fc
          .oneof(
            { weight: 5, arbitrary: fc.integer({ min: 1, max: 2 }) },
            { weight: 1, arbitrary: fc.constantFrom(0, 5) },
          )
          .map((steps) => ({ op, steps })),
      apply: (s, command) => ({ completedValue: s.timeline.advance(command.steps) }),
    }),
    cleanup: frameOp({
      fields: {},
      weight: 2,
      apply: (s) => doCleanup(s, cleanupExtra === undefined ? undefined : () => cleanupExtra(s)),
    }),
  };
}
/** Starts a step: clears the heap's per-step events. */
export function startStep<A extends UploadPageState>(s: UploadSide<A>): void {
  s.heap.startStep();
}

export const fastAllocatorConfigCheck =
  (granuleBytes: number) =>
  (config: { pageSizeBytes: number; minPagesToRetain: number }): string | null => {
    if (config.pageSizeBytes > UPLOAD_MAX_PAGE_BYTES)
      return `pageSizeBytes must be at most ${UPLOAD_MAX_PAGE_BYTES}, got ${config.pageSizeBytes}`;
    if (config.minPagesToRetain > UPLOAD_MAX_MIN_PAGES)
      return `minPagesToRetain must be at most ${UPLOAD_MAX_MIN_PAGES}, got ${config.minPagesToRetain}`;
    return pageConfigProblem(config.pageSizeBytes, config.minPagesToRetain, granuleBytes);
  };
