/**
 * `node --import tsx bench/_first-fit-parts.ts [--workload small|mixed] [--calls N]`
 *
 * Where first fit's time goes on the alloc bench's W1 / W2 streams (bench/alloc.ts): the
 * allocator is brought to the bench's steady state (10k live on 1 GiB, then a million
 * free+alloc pairs), then three loops are timed in CPU time, each on the state left behind:
 * - `search`: the chunk directory's search for the stream's next requests (descent of the max
 *   tree, then the walk of the chosen chunk's blocks); the tree's stale nodes are repaired by the
 *   first calls, so the figure is a lower bound of a search during the bench;
 * - `nodeAt`: the lookup a free() starts with (the walk from a chunk's first block to an offset)
 *   for the live allocations in turn;
 * - `pair`: the bench's own step, a free of a random live allocation and an alloc of the next
 *   request (the figure the bench turns into pairs/s).
 *
 * A probe, not one of `npm run bench`'s benchmarks (hence the leading underscore): its figures
 * split one allocator's cost and have no table of their own (docs/measurements.md).
 */
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { fillStream, STREAM_LENGTH, stream } from './_alloc-stream.js';

const HELP = `usage: node --import tsx bench/_first-fit-parts.ts [--workload small|mixed] [--calls N]

Nanoseconds per call of first fit's search, its offset lookup and a whole free+alloc pair, at the
alloc bench's steady state (10k live on 1 GiB).

  --workload W  small (alignment 16, the bench's W1) or mixed (16/256/4096, W2); default small
  --calls N     timed calls per loop (default 2000000)
  -h, --help    this help`;

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(2);
}

let workload = 'small';
let calls = 2_000_000;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const arg = argv[i];
  if (arg === '-h' || arg === '--help') {
    console.log(HELP);
    process.exit(0);
  } else if (arg === '--workload') {
    workload = argv[++i] ?? '';
    if (workload !== 'small' && workload !== 'mixed')
      fail(`--workload must be small or mixed, got '${workload}'`);
  } else if (arg === '--calls') {
    calls = Number(argv[++i]);
    if (!Number.isSafeInteger(calls) || calls <= 0)
      fail(`--calls must be a positive integer, got '${argv[i] ?? ''}'`);
  } else fail(`unknown option '${arg}' (see --help)`);
}

// The bench's stream (bench/_alloc-stream.ts).
fillStream(workload === 'small' ? 'small' : 'mixed');
const { sizes, aligns, picks } = stream;

/** The allocator with its internals in reach (the probe calls the steps' parts). */
class Probed extends FirstFitAllocator {
  searchFor(sizeBytes: number, alignBytes: number): number {
    return this.chunks.search(sizeBytes, alignBytes, this.chunks.slotFor(alignBytes));
  }
  lookup(offsetBytes: number): number {
    return this.nodeAt(offsetBytes);
  }
}

const LIVE = 10_000;
const subject = new Probed({ capacityBytes: 2 ** 30 });
const handles = new Float64Array(LIVE + 1);
let liveCount = 0;
let cursor = 0;
while (liveCount < LIVE) {
  const handle = subject.alloc(sizes[cursor]!, aligns[cursor]!);
  cursor = (cursor + 1) & (STREAM_LENGTH - 1);
  if (handle !== null) handles[liveCount++] = handle;
}

function pairs(n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const index = Math.floor(picks[cursor]! * liveCount);
    const handle = handles[index]!;
    handles[index] = handles[--liveCount]!;
    subject.free(handle);
    const offset = subject.alloc(sizes[cursor]!, aligns[cursor]!);
    cursor = (cursor + 1) & (STREAM_LENGTH - 1);
    if (offset !== null) {
      handles[liveCount++] = offset;
      sum += offset;
    }
  }
  return sum;
}
pairs(1_000_000);

function searches(n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const at = (cursor + i) & (STREAM_LENGTH - 1);
    sum += subject.searchFor(sizes[at]!, aligns[at]!);
  }
  return sum;
}
function lookups(n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += subject.lookup(handles[i % liveCount]!);
  return sum;
}

console.log(`first fit's parts, workload ${workload}, 10000 live on 1 GiB, ${calls} calls a loop`);
for (const [name, loop] of [
  ['search', searches],
  ['nodeAt', lookups],
  ['pair', pairs],
] as const) {
  loop(Math.min(calls, 300_000));
  const before = process.cpuUsage();
  const checksum = loop(calls);
  const used = process.cpuUsage(before);
  const ns = ((used.user + used.system) * 1000) / calls;
  console.log(`${name.padEnd(7)} ${ns.toFixed(1).padStart(7)} ns/call  (checksum ${checksum})`);
}
