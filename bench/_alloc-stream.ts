/**
 * The alloc bench's request streams (bench/alloc.ts), shared with the first-fit pair probe
 * (bench/_first-fit-pairs.ts): 2^20 requests of a workload from a fixed xorshift state, each a
 * size, an alignment and a pick (which live allocation the step frees), the same on every run.
 */
export const STREAM_LENGTH = 1 << 20;
export const WORKLOADS = ['default', 'small', 'mixed'] as const;
export type Workload = (typeof WORKLOADS)[number];

/** The stream's requests (rewritten by fillStream). */
export const stream = {
  sizes: new Float64Array(STREAM_LENGTH),
  aligns: new Float64Array(STREAM_LENGTH),
  picks: new Float64Array(STREAM_LENGTH),
};

/** Fills `stream` with the workload's requests. */
export function fillStream(workload: Workload): void {
  const { sizes, aligns, picks } = stream;
  let state = 0x2545f491;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  for (let i = 0; i < STREAM_LENGTH; i++) {
    const u = next();
    const a = next();
    if (workload === 'default') {
      sizes[i] = Math.round(256 * 2 ** (14 * u * u * u));
      aligns[i] = a < 0.1 ? 16 : a < 0.6 ? 256 : a < 0.85 ? 4096 : 65536;
    } else {
      sizes[i] = Math.round(256 * 2 ** (8 * u));
      aligns[i] = workload === 'small' ? 16 : a < 0.1 ? 16 : a < 0.7 ? 256 : 4096;
    }
    picks[i] = next();
  }
}

/**
 * The probes' fill: allocates the stream's requests from the first on until `live` of them got
 * room. Returns the offsets (with room for one more) and the index of the next request.
 */
export function fillLive(
  pool: { alloc(sizeBytes: number, alignBytes: number): number | null },
  live: number,
): { handles: Float64Array; cursor: number } {
  const handles = new Float64Array(live + 1);
  let held = 0;
  let cursor = 0;
  while (held < live) {
    const offset = pool.alloc(stream.sizes[cursor]!, stream.aligns[cursor]!);
    cursor = (cursor + 1) & (STREAM_LENGTH - 1);
    if (offset !== null) handles[held++] = offset;
  }
  return { handles, cursor };
}
