/**
 * Which ranges or objects the HTML report highlights at the failing step, found from the
 * pictures (SystemDef.visual) alone: ranges the caller holds that overlap each other, lie out of
 * bounds or over bytes the GPU still reads; failing that, ranges only one side holds. For a
 * timeline: the objects a judge flags, then the ones whose state differs between the sides.
 */
import type { HeapVisual, TimelineVisual, Visual, VisualRange } from '../harness/visual.js';

export type HighlightReason =
  | 'overlap'
  | 'out-of-bounds'
  | 'in-flight'
  | 'one-side-only'
  | 'flagged'
  | 'state-differs';

export interface Highlight {
  readonly step: number;
  readonly side: 'model' | 'impl';
  readonly reason: HighlightReason;
  /** Heap: the range. */
  readonly range?: VisualRange;
  /** Timeline: the row's name. */
  readonly row?: string;
}

const overlaps = (a: VisualRange, b: VisualRange): boolean =>
  a[0] < b[0] + b[1] && b[0] < a[0] + a[1] && a[1] > 0 && b[1] > 0;

/**
 * Overlapping and out-of-bounds ranges of one side's heap row, and ranges new at this step (not
 * held at the step before) over bytes unfinished GPU reads still use: a range the caller handed
 * to the GPU itself is in flight by design.
 */
function heapProblems(
  visual: HeapVisual,
  before: HeapVisual | undefined,
  step: number,
  side: 'model' | 'impl',
): Highlight[] {
  const found: Highlight[] = [];
  const seen = new Set<string>();
  const add = (range: VisualRange, reason: HighlightReason): void => {
    const key = `${range[0]}+${range[1]}:${reason}`;
    if (seen.has(key)) return;
    seen.add(key);
    found.push({ step, side, reason, range });
  };
  const sorted = [...visual.live].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (let i = 0; i < sorted.length; i++) {
    const range = sorted[i]!;
    if (!Number.isSafeInteger(range[0]) || range[0] < 0 || range[0] + range[1] > visual.extentBytes)
      add(range, 'out-of-bounds');
    // Sorted by offset: the ranges that can overlap this one start before its end.
    for (let j = i + 1; j < sorted.length && sorted[j]![0] < range[0] + range[1]; j++) {
      if (overlaps(range, sorted[j]!)) {
        add(range, 'overlap');
        add(sorted[j]!, 'overlap');
      }
    }
  }
  const held = new Set((before?.live ?? []).map((range) => `${range[0]}+${range[1]}`));
  for (const range of visual.live) {
    if (
      !held.has(`${range[0]}+${range[1]}`) &&
      (visual.busy ?? []).some((busy) => overlaps(range, busy))
    )
      add(range, 'in-flight');
  }
  return found;
}

function rangesOnlyIn(a: HeapVisual, b: HeapVisual): VisualRange[] {
  const other = new Set(b.live.map((range) => `${range[0]}+${range[1]}`));
  return a.live.filter((range) => !other.has(`${range[0]}+${range[1]}`));
}

const asHeap = (visual: Visual | undefined): HeapVisual | undefined =>
  visual?.kind === 'heap' ? visual : undefined;

function heapHighlights(
  step: number,
  model: HeapVisual | undefined,
  impl: HeapVisual | undefined,
  before: SidesVisual,
): Highlight[] {
  const found = [
    ...(impl === undefined ? [] : heapProblems(impl, asHeap(before.impl), step, 'impl')),
    ...(model === undefined ? [] : heapProblems(model, asHeap(before.model), step, 'model')),
  ];
  if (found.length > 0 || model === undefined || impl === undefined) return found;
  return [
    ...rangesOnlyIn(impl, model).map(
      (range): Highlight => ({ step, side: 'impl', reason: 'one-side-only', range }),
    ),
    ...rangesOnlyIn(model, impl).map(
      (range): Highlight => ({ step, side: 'model', reason: 'one-side-only', range }),
    ),
  ];
}

function timelineHighlights(
  model: TimelineVisual | undefined,
  impl: TimelineVisual | undefined,
  step: number,
): Highlight[] {
  const found: Highlight[] = [];
  for (const [side, visual] of [
    ['impl', impl],
    ['model', model],
  ] as const) {
    for (const row of visual?.rows ?? [])
      if (row.flagged === true) found.push({ step, side, reason: 'flagged', row: row.name });
  }
  if (found.length > 0 || model === undefined || impl === undefined) return found;
  const modelStates = new Map(model.rows.map((row) => [row.name, row.state]));
  for (const row of impl.rows) {
    if (modelStates.get(row.name) !== row.state)
      found.push({ step, side: 'impl', reason: 'state-differs', row: row.name });
  }
  return found;
}

/** Both sides' pictures after one step. */
export interface SidesVisual {
  readonly model?: Visual | undefined;
  readonly impl?: Visual | undefined;
}

/**
 * The highlights of the failing step from its pictures and the step before's (none when the
 * sequence passes or the step has no pictures).
 */
export function findHighlights(
  step: number,
  model: Visual | undefined,
  impl: Visual | undefined,
  before: SidesVisual = {},
): Highlight[] {
  if (step < 0) return [];
  const kind = (impl ?? model)?.kind;
  if (kind === 'heap') return heapHighlights(step, asHeap(model), asHeap(impl), before);
  if (kind === 'timeline')
    return timelineHighlights(
      model?.kind === 'timeline' ? model : undefined,
      impl?.kind === 'timeline' ? impl : undefined,
      step,
    );
  return [];
}
