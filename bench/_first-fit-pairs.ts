/**
 * `node --import tsx bench/_first-fit-pairs.ts [small|mixed] [pairs]` (a probe, not a bench
 * table): first fit alone on the alloc bench's request stream (bench/_alloc-stream.ts) in this
 * process, 10k live allocations on 1 GiB, then `pairs` timed free+alloc pairs (default 2M) after
 * 500k untimed ones. Prints CPU ns per pair and the sum of the offsets the timed allocs returned:
 * two builds that agree on the sum gave the same answers, so the probe times an A/B of first fit's
 * code (run it in two work trees, alternating) without the bench's child processes and tables.
 */
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { fillLive, fillStream, STREAM_LENGTH, stream } from './_alloc-stream.js';

const args = process.argv.slice(2);
if (args.includes('-h') || args.includes('--help')) {
  console.log('usage: node --import tsx bench/_first-fit-pairs.ts [small|mixed] [pairs]');
  process.exit(0);
}
const workload = args[0] ?? 'small';
const pairs = Number(args[1] ?? 2_000_000);
if ((workload !== 'small' && workload !== 'mixed') || !(Number.isSafeInteger(pairs) && pairs > 0)) {
  console.error(`bad arguments ${args.join(' ')}: want [small|mixed] [pairs > 0]`);
  process.exit(2);
}
fillStream(workload);
const { sizes, aligns, picks } = stream;
const LIVE = 10_000;
const pool = new FirstFitAllocator({ capacityBytes: 2 ** 30 });
const { handles, cursor: first } = fillLive(pool, LIVE);
let liveCount = LIVE;
let cursor = first;

/** Runs `count` pairs (free a picked allocation, then allocate the next request); the offsets' sum. */
function run(count: number): number {
  let sum = 0;
  for (let i = 0; i < count; i++) {
    const index = Math.floor(picks[cursor]! * liveCount);
    const handle = handles[index]!;
    handles[index] = handles[--liveCount]!;
    pool.free(handle);
    const offset = pool.alloc(sizes[cursor]!, aligns[cursor]!);
    cursor = (cursor + 1) & (STREAM_LENGTH - 1);
    if (offset !== null) {
      handles[liveCount++] = offset;
      sum += offset;
    }
  }
  return sum;
}

run(500_000);
const before = process.cpuUsage();
const sum = run(pairs);
const used = process.cpuUsage(before);
console.log(
  `first fit, ${workload}: ${(((used.user + used.system) * 1000) / pairs).toFixed(1)} ns/pair, offsets sum ${sum}`,
);
