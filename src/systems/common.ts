/**
 * Helpers the system definitions share: handle resolution, the skipped observation, the
 * two-sided form of a single-side invariant, list comparison and search by offset. (A contract
 * error becomes an observation in the runner, through `contractErrorObservation`.)
 */
import type { Json } from '../harness/json.js';

/**
 * Arbitraries built once per key and shared after: a campaign builds each op's command arbitrary
 * once per run, from the few config values it depends on (an object count, a queue count), which
 * repeat from run to run. A fast-check arbitrary keeps no state between draws, so a shared one
 * draws exactly what a fresh one would from the same random stream.
 */
export class ArbitraryCache {
  /** More keys than this under one name (hand-written configs of every size) start it afresh. */
  private static readonly LIMIT = 4096;
  private readonly built = new Map<string, Map<number, unknown>>();

  /**
   * The arbitrary built for `name` (an op name) and `key` (the config value it depends on; 0 for
   * none), built by `build` the first time. Two levels, not one joined string: a fresh string
   * per lookup was hashed anew every time.
   */
  get<A>(name: string, key: number, build: () => A): A {
    let byKey = this.built.get(name);
    if (byKey === undefined) {
      byKey = new Map();
      this.built.set(name, byKey);
    }
    let arbitrary = byKey.get(key) as A | undefined;
    if (arbitrary === undefined) {
      if (byKey.size >= ArbitraryCache.LIMIT) byKey.clear();
      arbitrary = build();
      byKey.set(key, arbitrary);
    }
    return arbitrary;
  }
}

/** The observation of a command whose handle resolves to nothing live (a valid no-op). */
export const SKIPPED: Json = { skipped: true };

/**
 * Resolves a plain-data handle against what is live: entry `handle` modulo the live count, or
 * undefined when nothing is live. This is what keeps every subsequence of a program a program.
 */
export function pickLive<T>(live: readonly T[], handle: number): T | undefined {
  return live.length === 0 ? undefined : live[handle % live.length];
}

/**
 * Runs a single-side check (which may read the run's config) on the implementation, then on the
 * model, and names the side that broke it. A model that breaks an invariant is a bug of the
 * model, and reported as such. Built once per invariant; builds nothing per call.
 */
export function bothSides<S, C = unknown>(
  check: (s: S, config: C) => string | null,
): (model: S, impl: S, config: C) => string | null {
  return (model, impl, config) => {
    const fromImpl = check(impl, config);
    if (fromImpl !== null) return `implementation: ${fromImpl}`;
    const fromModel = check(model, config);
    return fromModel === null ? null : `model: ${fromModel}`;
  };
}

/**
 * The first index of `sorted` (ascending by offset) whose offset is >= `offsetBytes`, or > it
 * when `after` (the insert position after every equal offset).
 */
export function searchByOffset(
  sorted: readonly { readonly offsetBytes: number }[],
  offsetBytes: number,
  after: boolean,
): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    const at = sorted[mid]!.offsetBytes;
    if (at < offsetBytes || (after && at === offsetBytes)) low = mid + 1;
    else high = mid;
  }
  return low;
}

/** Whether two number lists hold the same values in the same order (no strings built). */
export function sameNumbers(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
