/**
 * `node --import tsx bench/_first-fit-ab.ts OTHER_ROOT [small|mixed] [chunks]` (a probe, not a
 * bench table): first fit of this tree against first fit of another checkout (OTHER_ROOT, e.g. a
 * `git worktree add --detach /tmp/base <commit>`), both in this one process on the alloc bench's
 * request stream, 10k live allocations on 1 GiB each. After 500k untimed pairs each, the two
 * run 200k-pair chunks in turn (the order alternating every round), `chunks` times each (default
 * 20). Prints each one's median CPU ns per pair, every chunk, and its offsets sum (equal sums:
 * the same answers). Interleaving in one process cancels most of what a shared machine's load does
 * to separate runs of bench/_first-fit-pairs.ts.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { fillLive, fillStream, STREAM_LENGTH, stream } from './_alloc-stream.js';

const USAGE = 'usage: node --import tsx bench/_first-fit-ab.ts OTHER_ROOT [small|mixed] [chunks]';
const args = process.argv.slice(2);
if (args.includes('-h') || args.includes('--help')) {
  console.log(USAGE);
  process.exit(0);
}
const [otherRoot, workload = 'small', chunksText = '20'] = args;
const chunks = Number(chunksText);
if (
  otherRoot === undefined ||
  (workload !== 'small' && workload !== 'mixed') ||
  !(Number.isSafeInteger(chunks) && chunks > 0)
) {
  console.error(`bad arguments '${args.join(' ')}'\n${USAGE}`);
  process.exit(2);
}
const CHUNK = 200_000;
const LIVE = 10_000;
type FirstFitClass = typeof FirstFitAllocator;

async function load(root: string): Promise<FirstFitClass> {
  const file = path.resolve(root, 'src', 'alloc', 'first-fit.ts');
  return ((await import(pathToFileURL(file).href)) as { FirstFitAllocator: FirstFitClass })
    .FirstFitAllocator;
}

/**
 * A pair loop of its own (its own JIT feedback) over one allocator filled to LIVE: runs `count`
 * pairs, returns the offsets' sum.
 */
function pairLoop(Allocator: FirstFitClass): (count: number) => number {
  const { sizes, aligns, picks } = stream;
  const pool = new Allocator({ capacityBytes: 2 ** 30 });
  const { handles, cursor } = fillLive(pool, LIVE);
  return new Function(
    'pool',
    'handles',
    'sizes',
    'aligns',
    'picks',
    'state',
    `return (count) => {
      let sum = 0;
      for (let i = 0; i < count; i++) {
        const index = Math.floor(picks[state.cursor] * state.liveCount);
        const handle = handles[index];
        handles[index] = handles[--state.liveCount];
        pool.free(handle);
        const offset = pool.alloc(sizes[state.cursor], aligns[state.cursor]);
        state.cursor = (state.cursor + 1) & ${STREAM_LENGTH - 1};
        if (offset !== null) {
          handles[state.liveCount++] = offset;
          sum += offset;
        }
      }
      return sum;
    };`,
  )(pool, handles, sizes, aligns, picks, { cursor, liveCount: LIVE }) as (count: number) => number;
}

fillStream(workload);
const names = ['this tree', otherRoot];
const loops = [pairLoop(await load(path.resolve('.'))), pairLoop(await load(otherRoot))];
for (const run of loops) run(500_000);
const times: number[][] = [[], []];
const sums = [0, 0];
for (let round = 0; round < chunks; round++) {
  for (let k = 0; k < 2; k++) {
    const j = (k + round) % 2;
    const before = process.cpuUsage();
    sums[j]! += loops[j]!(CHUNK);
    const used = process.cpuUsage(before);
    times[j]!.push(((used.user + used.system) * 1000) / CHUNK);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
for (let j = 0; j < 2; j++)
  console.log(
    `${names[j]}: ${median(times[j]!).toFixed(1)} ns/pair (median of ${chunks}), offsets sum ${sums[j]}; chunks ${times[j]!.map((t) => t.toFixed(0)).join(' ')}`,
  );
console.log(
  `this tree / other: ${(median(times[0]!) / median(times[1]!)).toFixed(3)} of the time, ${workload}`,
);
