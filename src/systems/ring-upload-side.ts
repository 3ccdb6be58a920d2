/**
 * The `ring-upload` system's config and its side: the ring (model or implementation), the
 * simulated GPU queue whose completed value frees submitted ranges, and the hand-outs the side
 * tracks for its ops and invariants.
 */
import type { RunEnv } from '../harness/system.js';
import { Nat, Strict, type Static } from '../harness/schema.js';
import type { RingRange, RingUploadAllocator } from '../alloc/ring-upload-types.js';
import { QueueTimeline } from '../gpu/queue-timeline.js';

/** Capacity limit of generated and replayed configs. */
export const RING_MAX_CAPACITY_BYTES = 1 << 30;

export const RingUploadConfigSchema = Strict({
  capacityBytes: Nat({ description: `bytes in the ring, 1..${RING_MAX_CAPACITY_BYTES}` }),
});
export type RingUploadConfig = Static<typeof RingUploadConfigSchema>;

/** One side of a run: the ring, its GPU queue, and the caller's handles. */
export interface RingSide {
  readonly ring: RingUploadAllocator;
  readonly timeline: QueueTimeline;
  readonly capacityBytes: number;
  readonly env: RunEnv;
  /** Offsets of outstanding reservations, in reservation order. */
  readonly reserved: number[];
  /** Offsets of submitted, not yet collected ranges, in submission order. */
  readonly submitted: number[];
  /** Per live offset: what the caller was handed (id, size, alignment), from the API results alone. */
  readonly handouts: Map<number, Handout>;
  nextHandoutId: number;
  /** Offset of the last range freed by cancel or collect (for double-free misuse), or -1. */
  lastFreedOffset: number;
  /** End of the last successful allocation (the caller's view of the write cursor while anything is live). */
  lastEndBytes: number;
  /** The highest fence value this caller submitted. */
  lastSubmittedValue: number;
  /** The result of this step's allocate, or undefined if the step was no allocate. */
  lastAllocResult: number | null | undefined;
  /** Ranges handed out while the GPU could still read their bytes (found at hand-out time). */
  readonly violations: string[];
  /** Steps applied so far: the invariants' per-step cache of the ring's live ranges is keyed on it. */
  step: number;
  /** The ring's live ranges as read at step `liveRangesStep` (nothing changes them between steps). */
  liveRanges: readonly RingRange[];
  liveRangesStep: number;
}

export interface Handout {
  readonly id: number;
  readonly sizeBytes: number;
  readonly alignBytes: number;
}

/** Misuse kinds (`kind` modulo their count). */
export const RING_MISUSE_KINDS = [
  'cancel-submitted',
  'submit-twice',
  'interior-offset',
  'double-free',
  'unknown-offset',
  'stale-fence',
] as const;

export function ringSide(
  ring: RingUploadAllocator,
  config: RingUploadConfig,
  env: RunEnv,
): RingSide {
  return {
    ring,
    timeline: new QueueTimeline(),
    capacityBytes: config.capacityBytes,
    env,
    reserved: [],
    submitted: [],
    handouts: new Map(),
    nextHandoutId: 1,
    lastFreedOffset: -1,
    lastEndBytes: 0,
    lastSubmittedValue: 0,
    lastAllocResult: undefined,
    violations: [],
    step: 0,
    liveRanges: [],
    liveRangesStep: -1,
  };
}
