/**
 * The allocator metrics of a campaign, counted as probes: the false out-of-memory share (every
 * null answer of an allocator to a valid request is counted, and so is each one given while an
 * aligned free gap large enough existed between the live ranges; `--max-false-oom-share` bounds
 * the share) and the largest request an empty pool served, as a share of its capacity. The fuzz
 * summary prints both (`allocatorMetricsCell`).
 */
import type { RunEnv } from '../harness/system.js';
import { alignUp } from '../alloc/allocator.js';
import type { AllocSide, TrackedAllocation } from './alloc-side.js';

/**
 * Probes the liveness check counts on every run (reported in the summary's probe counts, not
 * declared: a good allocator never reaches the second): the null answers of the allocator under
 * test to valid requests, and those given while an aligned free gap large enough existed
 * between the live allocations the harness tracks.
 */
export const NULL_ANSWER_PROBE = 'null-answers';
export const FALSE_OOM_PROBE = 'null-answers-with-fitting-gap';

/**
 * The false out-of-memory share of a campaign's probe counts: the share of null answers given
 * while an aligned free gap large enough existed, or null when the allocator never answered null.
 */
export function falseOutOfMemoryShare(
  probes: Readonly<Record<string, number>>,
): { readonly nullAnswers: number; readonly withGap: number; readonly share: number } | null {
  const nullAnswers = probes[NULL_ANSWER_PROBE] ?? 0;
  if (nullAnswers === 0) return null;
  const withGap = probes[FALSE_OOM_PROBE] ?? 0;
  return { nullAnswers, withGap, share: withGap / nullAnswers };
}

/**
 * One line per system of a summary whose false out-of-memory share exceeds `maxShare` (what
 * `--max-false-oom-share` turns into a failure); empty when none does.
 */
export function falseOutOfMemoryFailures(
  systems: Readonly<Record<string, { readonly probes: Readonly<Record<string, number>> }>>,
  maxShare: number,
): string[] {
  const lines: string[] = [];
  for (const [name, system] of Object.entries(systems)) {
    const stats = falseOutOfMemoryShare(system.probes);
    if (stats !== null && stats.share > maxShare) {
      lines.push(
        `${name}: ${stats.withGap} of ${stats.nullAnswers} null answers (${(100 * stats.share).toFixed(1)} %) were given while an aligned free gap large enough existed; the limit is ${(100 * maxShare).toFixed(1)} %`,
      );
    }
  }
  return lines;
}

/**
 * Whether some gap between the live ranges (sorted by offset) holds `sizeBytes` at an offset
 * aligned to `alignBytes` inside [0, capacity). O(live).
 */
export function fittingGapExists(
  sortedLive: readonly TrackedAllocation[],
  capacityBytes: number,
  sizeBytes: number,
  alignBytes: number,
): boolean {
  let cursor = 0;
  for (let i = 0; i < sortedLive.length; i++) {
    const allocation = sortedLive[i]!;
    if (alignUp(cursor, alignBytes) + sizeBytes <= allocation.offsetBytes) return true;
    cursor = Math.max(cursor, allocation.offsetBytes + allocation.sizeBytes);
  }
  return alignUp(cursor, alignBytes) + sizeBytes <= capacityBytes;
}

/**
 * Counts a null answer of `s` to a valid request into `env`: NULL_ANSWER_PROBE, and
 * FALSE_OOM_PROBE when a gap between its live ranges held the request. Our own systems count
 * the model's answers (which the implementation's equal in a passing run); a user's allocator's
 * are counted by its empty-pool-liveness check, which sees both sides.
 */
export function countNullAnswer(
  s: AllocSide,
  env: RunEnv,
  sizeBytes: number,
  alignBytes: number,
): void {
  env.probe(NULL_ANSWER_PROBE);
  if (fittingGapExists(s.sortedLive, s.capacityBytes, sizeBytes, alignBytes))
    env.probe(FALSE_OOM_PROBE);
}

/**
 * The largest request an empty pool served, as a share of its capacity: the check records
 * `${EMPTY_POOL_SERVED_PROBE}${percent}` (percent rounded down, 0-100) once per run each time a
 * run's largest grows, so the summary's largest such probe is the campaign's (`largestEmptyPoolShare`).
 */
export const EMPTY_POOL_SERVED_PROBE = 'empty-pool-served-percent-';

/** The largest share (percent of capacity) an empty pool served over a campaign's probes, or null when none was recorded. */
export function largestEmptyPoolShare(probes: Readonly<Record<string, number>>): number | null {
  let largest: number | null = null;
  for (const [name, count] of Object.entries(probes)) {
    if (count > 0 && name.startsWith(EMPTY_POOL_SERVED_PROBE)) {
      const percent = Number(name.slice(EMPTY_POOL_SERVED_PROBE.length));
      if (largest === null || percent > largest) largest = percent;
    }
  }
  return largest;
}

/**
 * The summary cell of an allocator system: its false out-of-memory share and the largest request
 * an empty pool served, e.g. '0.3 % of 1200; 100 %' ('-' for what was never counted).
 */
export function allocatorMetricsCell(probes: Readonly<Record<string, number>>): string {
  const stats = falseOutOfMemoryShare(probes);
  const largest = largestEmptyPoolShare(probes);
  const falseOom =
    stats === null ? '-' : `${(100 * stats.share).toFixed(1)} % of ${stats.nullAnswers}`;
  return largest === null ? falseOom : `${falseOom}; ${largest} %`;
}

/** The title of that cell's column. */
export const ALLOCATOR_METRICS_TITLE = 'false OOM; largest on empty';
