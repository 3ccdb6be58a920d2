/**
 * The allocator side every allocator system runs on (an allocator plus the live allocations as
 * its caller sees them), the effects of the alloc ops on it (single requests, frees, bursts) and
 * the per-command bookkeeping (`allocStep`, every system's `around`). The op records that
 * dispatch to these effects are in alloc-generation.ts.
 */
import type { Json } from '../harness/json.js';
import type { RunEnv } from '../harness/system.js';
import { inspectBlocks, type Allocator, type BlockAllocator } from '../alloc/allocator.js';
import { contractErrorObservation } from '../contract.js';
import { searchByOffset, SKIPPED } from './common.js';
import { countNullAnswer } from './alloc-false-oom.js';

/** A live allocation as the caller tracks it. */
export interface TrackedAllocation {
  readonly offsetBytes: number;
  readonly sizeBytes: number;
  readonly alignBytes: number;
}

export interface AllocSide<A extends Allocator = Allocator> {
  readonly allocator: A;
  readonly capacityBytes: number;
  readonly env: RunEnv;
  /** True for the reference model (reports probes and drains model events). */
  readonly isModel: boolean;
  /** Live allocations in allocation order; `free` handles index into it. */
  readonly live: TrackedAllocation[];
  /**
   * `live` sorted by offset (ties in allocation order, as a stable sort of `live` would put
   * them), kept in step by binary-search insert and remove (several invariants need it).
   */
  readonly sortedLive: TrackedAllocation[];
  /** The offset the last successful free released, for `freeAgain`. */
  lastFreedOffsetBytes: number | null;
  /** The offsets the current step freed (or tried to), in order; reports show them (allocTrace). */
  readonly stepFreedOffsets: number[];
  /** Result of the last alloc command of the current step; undefined when the step was no alloc. */
  lastAllocResult: number | null | undefined;
  /** The contract-error code the current step's command threw, or null when it returned (see `matchesModel`). */
  lastErrorCode: string | null;
  /** Broken promises of the allocator the side saw (a non-integer return, a free of nothing live). */
  readonly violations: string[];
  /** Commands applied so far (the sampled checks read it). */
  steps: number;
  /** The size and alignment of the last alloc request (valid or not). */
  lastSizeBytes: number;
  lastAlignBytes: number;
  /** The most live allocations at once so far (growth probes fire when it crosses a threshold). */
  peakLive: number;
  /** The most free blocks seen at once (counted only past 128 live allocations, on the model). */
  peakFreeBlocks: number;
  /** The largest request placed on an empty pool so far, in percent of the capacity (-1: none yet; empty-pool-liveness records it). */
  largestEmptyPoolPercent: number;
}

/**
 * Reports only (SystemDef.trace): the offset the step's alloc returned, when the step was an
 * alloc; the offset (a list for a burst) the step freed or tried to free, when it freed.
 */
export function allocTrace<A extends Allocator>(s: AllocSide<A>): Json {
  if (s.lastAllocResult !== undefined) return { offsetBytes: s.lastAllocResult };
  const freed = s.stepFreedOffsets;
  if (freed.length === 0) return null;
  return { freedOffsetBytes: freed.length === 1 ? freed[0]! : [...freed] };
}

export function allocSide<A extends Allocator>(
  allocator: A,
  capacityBytes: number,
  env: RunEnv,
  isModel: boolean,
): AllocSide<A> {
  return {
    allocator,
    capacityBytes,
    env,
    isModel,
    live: [],
    sortedLive: [],
    lastFreedOffsetBytes: null,
    stepFreedOffsets: [],
    lastAllocResult: undefined,
    lastErrorCode: null,
    violations: [],
    steps: 0,
    lastSizeBytes: 0,
    lastAlignBytes: 0,
    peakLive: 0,
    peakFreeBlocks: 0,
    largestEmptyPoolPercent: -1,
  };
}

/** Models report what their policy did (splits, merges, padding) as events; probes count them. */
export interface EventSource {
  drainEvents(): string[];
}

function hasEvents<A extends Allocator>(allocator: A): allocator is A & EventSource {
  return 'drainEvents' in allocator && typeof allocator.drainEvents === 'function';
}

/** Adds a new live allocation to both tracked lists (sorted: after every equal offset). */
function trackAllocation(s: AllocSide, allocation: TrackedAllocation): void {
  s.live.push(allocation);
  const sorted = s.sortedLive;
  const at = searchByOffset(sorted, allocation.offsetBytes, true);
  if (at === sorted.length) sorted.push(allocation);
  else sorted.splice(at, 0, allocation);
}

/** Removes the tracked allocation (an element of `live`) from the sorted list. */
function untrackSorted(s: AllocSide, allocation: TrackedAllocation): void {
  const sorted = s.sortedLive;
  for (let i = searchByOffset(sorted, allocation.offsetBytes, false); i < sorted.length; i++) {
    if (sorted[i] === allocation) {
      sorted.splice(i, 1);
      return;
    }
  }
  throw new Error('allocator system: the sorted live list lost an allocation');
}

/** Frees `offsetBytes` and keeps the tracked live list in step. */
export function freeOffset(s: AllocSide, offsetBytes: number): Json {
  s.stepFreedOffsets.push(offsetBytes);
  s.allocator.free(offsetBytes);
  const live = s.live;
  let index = -1;
  for (let i = 0; i < live.length; i++) {
    if (live[i]!.offsetBytes === offsetBytes) {
      index = i;
      break;
    }
  }
  if (index === -1) {
    s.violations.push(`free(${offsetBytes}) was accepted but nothing live starts there`);
  } else {
    untrackSorted(s, live[index]!);
    live.splice(index, 1);
  }
  s.lastFreedOffsetBytes = offsetBytes;
  if (s.isModel && s.live.length === 0) s.env.probe('freed-everything');
  return {};
}

/** Asks the allocator for a block and tracks what it answers (an answer that is no offset is recorded as a violation). */
export function allocRequest(s: AllocSide, sizeBytes: number, alignBytes: number): Json {
  s.lastSizeBytes = sizeBytes;
  s.lastAlignBytes = alignBytes;
  return { offsetBytes: allocOne(s, sizeBytes, alignBytes) };
}

/** One alloc call, tracked; its answer (null for no room or an answer that is no offset). */
function allocOne(s: AllocSide, sizeBytes: number, alignBytes: number): number | null {
  const result: unknown = s.allocator.alloc(sizeBytes, alignBytes);
  let offsetBytes: number | null;
  if (result === null) {
    offsetBytes = null;
  } else if (typeof result === 'number' && Number.isSafeInteger(result)) {
    offsetBytes = result;
  } else {
    s.violations.push(
      `alloc(${sizeBytes}, ${alignBytes}) returned ${typeof result === 'number' ? result : (JSON.stringify(result) ?? String(result))}, neither an integer offset nor null`,
    );
    offsetBytes = null;
  }
  s.lastAllocResult = offsetBytes;
  if (offsetBytes !== null) trackAllocation(s, { offsetBytes, sizeBytes, alignBytes });
  else if (s.isModel) {
    s.env.probe(s.live.length === 0 ? 'too-large-for-empty' : 'out-of-memory');
    countNullAnswer(s, s.env, sizeBytes, alignBytes);
  }
  return offsetBytes;
}

/** Multiplier of the size spread inside a burst (request i adds (i * 37) % (spread + 1) bytes). */
const BURST_SPREAD_STEP = 37;

/**
 * Up to `count` allocs in one step, stopping after the first null answer (a caller filling a
 * pool stops when it is full; a model scan of a full pool per further request would make a scale
 * run's cost quadratic for nothing); the observation lists every answer.
 */
export function allocBurst(
  s: AllocSide,
  count: number,
  sizeBytes: number,
  spreadBytes: number,
  alignBytes: number,
): Json {
  const offsets: (number | null)[] = [];
  for (let i = 0; i < count; i++) {
    const size = sizeBytes + ((i * BURST_SPREAD_STEP) % (spreadBytes + 1));
    s.lastSizeBytes = size;
    s.lastAlignBytes = alignBytes;
    const offsetBytes = allocOne(s, size, alignBytes);
    offsets.push(offsetBytes);
    if (offsetBytes === null) break;
  }
  return { offsetBytes: offsets };
}

/** Frees up to `count` live allocations, number (index + k * stride) modulo the live count each. */
export function freeBurst(s: AllocSide, index: number, count: number, stride: number): Json {
  if (s.live.length === 0) return SKIPPED;
  let freed = 0;
  for (let k = 0; k < count && s.live.length > 0; k++) {
    const at = (index + k * stride) % s.live.length;
    const allocation = s.live[at]!;
    s.stepFreedOffsets.push(allocation.offsetBytes);
    s.allocator.free(allocation.offsetBytes);
    untrackSorted(s, allocation);
    s.live.splice(at, 1);
    s.lastFreedOffsetBytes = allocation.offsetBytes;
    freed++;
  }
  if (s.isModel && s.live.length === 0) s.env.probe('freed-everything');
  return { freed };
}

/**
 * Growth probes: the allocators' node tables start at 16 entries and double, so 64 live
 * allocations mean at least two doublings, 1024 at least six and 2048 at least seven; the model
 * reports each threshold once per run, when its live count first crosses it. Free blocks beyond
 * 256 grow the per-size and per-offset indexes and their scratch arrays.
 */
export const GROWTH_PROBES = [
  'live-over-64',
  'live-over-1024',
  'live-over-2048',
  'free-blocks-over-256',
] as const;

function growthProbes(s: AllocSide): void {
  const live = s.live.length;
  if (live > s.peakLive) {
    const before = s.peakLive;
    s.peakLive = live;
    if (before <= 64 && live > 64) s.env.probe('live-over-64');
    if (before <= 1024 && live > 1024) s.env.probe('live-over-1024');
    if (before <= 2048 && live > 2048) s.env.probe('live-over-2048');
  }
  const allocator = s.allocator;
  if (live >= 128 && s.peakFreeBlocks <= 256 && isBlockAllocator(allocator)) {
    // The model's block view is its list: its length costs nothing.
    const freeBlocks = inspectBlocks(allocator).length - live;
    if (freeBlocks > 256) s.env.probe('free-blocks-over-256');
    if (freeBlocks > s.peakFreeBlocks) s.peakFreeBlocks = freeBlocks;
  }
}

function isBlockAllocator(allocator: Allocator): allocator is BlockAllocator {
  return 'blocksView' in allocator || 'blocks' in allocator;
}

/** The probe name of each contract-error code (built once, not per error). */
const ERROR_PROBES = new Map<string, string>();

function errorProbe(code: string): string {
  let probe = ERROR_PROBES.get(code);
  if (probe === undefined) {
    probe = `error-${code}`;
    ERROR_PROBES.set(code, probe);
  }
  return probe;
}

/**
 * The `around` of every allocator system: the per-command bookkeeping. It clears the step's alloc
 * result and error code, applies the command with `dispatch`, answers a contract error as the
 * observation the runner makes of it, `{ error: code }` (`contractErrorObservation`, without a
 * second unwind), records its code and counts its probe, and drains the model's events. Any other
 * exception is thrown on (its code: 'exception'). Called once per command; builds nothing.
 */
export function allocStep<S extends AllocSide, Cmd>(
  s: S,
  command: Cmd,
  dispatch: (s: S, command: Cmd) => Json,
): Json {
  s.lastAllocResult = undefined;
  s.stepFreedOffsets.length = 0;
  s.lastErrorCode = null;
  s.steps++;
  try {
    return dispatch(s, command);
  } catch (error) {
    const observation = contractErrorObservation(error);
    if (observation === undefined) {
      s.lastErrorCode = 'exception';
      throw error;
    }
    s.lastErrorCode = observation.error;
    if (s.isModel) s.env.probe(errorProbe(observation.error));
    return observation;
  } finally {
    const allocator = s.allocator;
    if (s.isModel) {
      if (hasEvents(allocator)) {
        const events = allocator.drainEvents();
        for (let i = 0; i < events.length; i++) s.env.probe(events[i]!);
      }
      if (s.live.length > s.peakLive || s.live.length >= 128) growthProbes(s);
    }
  }
}
