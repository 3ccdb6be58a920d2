/**
 * The `deferred-free` system's config and its side: the fence-delayed free layer (model or
 * implementation) over its sub-allocator, the frame fence of the simulated GPU queue, and the
 * hand-outs the side tracks for its ops and invariants.
 */
import type { RunEnv } from '../harness/system.js';
import { Nat, OneOf, Strict, Type, type Static } from '../harness/schema.js';
import type { LiveAllocation } from '../alloc/allocator.js';
import type { SubAllocatorKind } from '../alloc/config.js';
import { createSubAllocator } from '../alloc/index.js';
import { DeferredFreeAllocatorImpl } from '../alloc/deferred-free.js';
import type { DeferredFreeAllocator, FrameFence } from '../alloc/deferred-free-types.js';
import { QueueTimeline } from '../gpu/queue-timeline.js';

export const DEFERRED_KINDS: readonly SubAllocatorKind[] = ['buddy', 'best-fit', 'first-fit'];

/** The sub-allocator's config (every field given) and the pool's, with the sub-allocator's kind. */
export const DeferredFreeConfigSchema = Strict({
  kind: OneOf(DEFERRED_KINDS, { description: 'the sub-allocator behind the deferred layer' }),
  capacityBytes: Nat({ description: 'bytes managed by the sub-allocator, at most 2^30' }),
  minBlockBytes: Nat({ description: 'buddy: size of an order-0 block, a power of two' }),
  poolAlignBytes: Nat({
    description: 'best fit: granularity of every block offset and size, a power of two',
  }),
  maxAllocationBytes: Nat({ description: 'best fit: the single-allocation limit' }),
  objectSizesBytes: Type.Array(Nat(), {
    description: "the pool's size classes: one distinct positive size each",
  }),
  objectAlignBytes: Nat({ description: 'alignment of pooled objects, a power of two' }),
});
export type DeferredConfig = Static<typeof DeferredFreeConfigSchema>;

/** An allocation as the caller holds it, from the API results alone. */
export interface DeferredHandout {
  readonly id: number;
  readonly offsetBytes: number;
  readonly sizeBytes: number;
  readonly alignBytes: number;
  /** Came from poolAcquire. */
  readonly pooled: boolean;
}

export interface DeferredSide {
  readonly allocator: DeferredFreeAllocator;
  readonly timeline: QueueTimeline;
  readonly config: DeferredConfig;
  readonly env: RunEnv;
  /** Live allocations in hand-out order. */
  readonly live: DeferredHandout[];
  nextHandoutId: number;
  /** The offset released last (for double-release misuse), or -1. */
  lastReleasedOffset: number;
  /** The result of this step's alloc or poolAcquire, or undefined if the step was neither. */
  lastAllocResult: number | null | undefined;
  /** Hand-outs of bytes an unfinished GPU read still uses (found at hand-out time). */
  readonly violations: string[];
  /** The same handouts as `live`, ascending by offset (equal offsets in hand-out order), kept as they come and go. */
  readonly liveByOffset: DeferredHandout[];
  /** Steps applied so far: the invariants' per-step reading of the sub-allocator is keyed on it. */
  step: number;
  /** The sub-allocator's live() as read at step `heldStep`. */
  held: readonly LiveAllocation[];
  /** True when `held` is strictly ascending by offset (as live() promises): then it is searched by bisection. */
  heldAscending: boolean;
  /** Otherwise offset -> size of `held` (a reused map, filled only then; a later entry wins, as Map.set does). */
  readonly heldMap: Map<number, number>;
  heldStep: number;
  /** pendingBytes(), pooledBytes() and the sub-allocator's freeBytes() as the accounting invariant read them this step. */
  readPendingBytes: number;
  readPooledBytes: number;
  readFreeBytes: number;
}

export const DEFERRED_MISUSE_KINDS = [
  'double-release',
  'interior-offset',
  'unknown-offset',
  'pool-release-plain',
  'bad-size-class',
] as const;

/** Builds a side around a deferred allocator made from the side's own timeline (its frame fence). */
export function deferredSide(
  config: DeferredConfig,
  env: RunEnv,
  make: (config: DeferredConfig, fence: FrameFence) => DeferredFreeAllocator,
): DeferredSide {
  const timeline = new QueueTimeline();
  return {
    allocator: make(config, timeline),
    timeline,
    config,
    env,
    live: [],
    nextHandoutId: 1,
    lastReleasedOffset: -1,
    lastAllocResult: undefined,
    violations: [],
    liveByOffset: [],
    step: 0,
    held: [],
    heldAscending: true,
    heldMap: new Map(),
    heldStep: -1,
    readPendingBytes: 0,
    readPooledBytes: 0,
    readFreeBytes: 0,
  };
}

export function createDeferredImpl(
  config: DeferredConfig,
  fence: FrameFence,
): DeferredFreeAllocatorImpl {
  return new DeferredFreeAllocatorImpl(createSubAllocator(config.kind, config), fence, config);
}
