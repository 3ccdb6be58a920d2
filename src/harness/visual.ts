/**
 * What a system can give the HTML report (src/report/) for its picture of one side after one
 * step: plain data, read by `SystemDef.visual` and never compared. Allocators give a heap map
 * row (the ranges the caller holds, the free blocks the allocator exposes, the bytes the GPU may
 * still read); residency systems give a timeline column (each object's state, the budget and
 * usage, the fence values).
 */

/** A byte range: [offsetBytes, sizeBytes]. */
export type VisualRange = readonly [number, number];

export interface HeapVisual {
  readonly kind: 'heap';
  /** The map's width: offsets [0, extentBytes) (a range past it is out of bounds). */
  readonly extentBytes: number;
  /** The ranges the caller holds after the step. */
  readonly live: readonly VisualRange[];
  /** Free blocks, where the allocator exposes them. */
  readonly free?: readonly VisualRange[];
  /** Bytes unfinished GPU work may still read, where the system tracks them. */
  readonly busy?: readonly VisualRange[];
  /** The allocator's pages or buffers (outlined), where it has them. */
  readonly regions?: readonly VisualRange[];
}

/** The states a timeline cell can show (the report colours each one). */
export const TIMELINE_STATES = [
  'resident',
  'in-flight',
  'evicted',
  'untracked',
  'open',
  'closed',
  'failed',
] as const;
export type TimelineState = (typeof TIMELINE_STATES)[number];

export interface TimelineRow {
  /** The object's name, e.g. "object 3". */
  readonly name: string;
  readonly state: TimelineState;
  /** One line shown on hover (size, sync point, contents). */
  readonly detail?: string;
  /** Marked: a judge names this object (e.g. the GPU touched it while it was not resident). */
  readonly flagged?: boolean;
}

export interface TimelineVisual {
  readonly kind: 'timeline';
  readonly rows: readonly TimelineRow[];
  /** The memory budget and what is resident against it, when the system has one. */
  readonly budgetBytes?: number;
  readonly usageBytes?: number;
  /** Completed fence values by name ("queue 0", "paging"). */
  readonly fences?: Readonly<Record<string, number>>;
  /** Work submitted and not yet run, per queue ("queue 0": executed command lists, waits and signals still queued). */
  readonly queued?: Readonly<Record<string, number>>;
}

export type Visual = HeapVisual | TimelineVisual;
