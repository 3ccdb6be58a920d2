/**
 * The simulated GPU's per-object history (src/gpu/sim-gpu.ts): what happened to each object and
 * when, quoted in violation reports. Entries are recorded as numbers (tick, kind, two arguments)
 * and turned into text only when a report asks, so a checked run that reports nothing builds no
 * strings for them. The most recent HISTORY_LIMIT entries per object are kept.
 */
import type { MakeResidentReason } from './sim-gpu-types.js';

/** Longest history kept per object (most recent entries); generated sequences stay far below it. */
export const HISTORY_LIMIT = 1000;

export const enum HistoryKind {
  MovedToNonLocal = 0,
  MovedToLocal = 1,
  CreatedResident = 2,
  CreatedEvicted = 3,
  Destroyed = 4,
  /** a: reason code */
  MadeResident = 5,
  /** a: paging fence value, b: reason code */
  EnqueuedResident = 6,
  Evicted = 7,
  /** a: submission, b: queue */
  Touched = 8,
}

const FIELDS = 4;
const REASONS: readonly MakeResidentReason[] = ['batch', 'fallback'];

export function reasonCode(reason: MakeResidentReason): number {
  return reason === 'batch' ? 0 : 1;
}

export class ObjectHistory {
  /** Per object: FIELDS numbers per entry (tick, kind, a, b), oldest first. */
  private readonly entries: number[][];

  constructor(objectCount: number) {
    // A loop, not Array.from of an array-like: a GPU is built per side and per run.
    const entries: number[][] = [];
    for (let object = 0; object < objectCount; object++) entries.push([]);
    this.entries = entries;
  }

  record(object: number, tick: number, kind: HistoryKind, a = 0, b = 0): void {
    const entries = this.entries[object]!;
    entries.push(tick, kind, a, b);
    if (entries.length > HISTORY_LIMIT * FIELDS) entries.splice(0, FIELDS);
  }

  /** The object's entries as text, oldest first. */
  lines(object: number): string[] {
    const entries = this.entries[object]!;
    const lines: string[] = [];
    for (let i = 0; i < entries.length; i += FIELDS)
      lines.push(`t=${entries[i]}: ${describe(entries[i + 1]!, entries[i + 2]!, entries[i + 3]!)}`);
    return lines;
  }
}

function describe(kind: HistoryKind, a: number, b: number): string {
  switch (kind) {
    case HistoryKind.MovedToNonLocal:
      return 'moved to the non-local segment';
    case HistoryKind.MovedToLocal:
      return 'moved to the local segment';
    case HistoryKind.CreatedResident:
      return 'created resident';
    case HistoryKind.CreatedEvicted:
      return 'created evicted';
    case HistoryKind.Destroyed:
      return 'destroyed';
    case HistoryKind.MadeResident:
      return `made resident (${REASONS[a]})`;
    case HistoryKind.EnqueuedResident:
      return `enqueued resident at paging ${a} (${REASONS[b]})`;
    case HistoryKind.Evicted:
      return 'evicted';
    case HistoryKind.Touched:
      return `touched by submission #${a} on queue ${b}`;
  }
}
