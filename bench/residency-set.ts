/**
 * `npm run bench -- residency-set`: inserts per second, implementation vs model, 1024 slots.
 *
 * Workload (insert-heavy, as a frame's recording is): 8 sets open at once over 20,000 tracked
 * objects; each set receives 4,000 inserts of which about a third are duplicates (descriptor
 * caches re-register on every bind), then all close and one execute merges them. Object ids
 * come from a fixed seed, so both sides see the same stream.
 */
import seedrandom from 'seedrandom';
import { performance } from 'node:perf_hooks';
import { ResidencySetPoolImpl } from '../src/residency/residency-set.js';
import { ResidencySetModel } from '../models/residency-set.js';
import type { ResidencySetPool } from '../src/residency/residency-set-types.js';
import { COMMANDS, parseOrExit } from '../src/cli/args.js';

parseOrExit(
  COMMANDS['bench residency-set'],
  `usage: npm run bench -- residency-set

Inserts per second, implementation vs model: 1024 slots, 8 open sets of 4000 inserts over 20,000
objects (about a third duplicates), then close and execute. Takes no options but -h/--help.`,
);

const SLOT_COUNT = 1024;
const OBJECT_COUNT = 20_000;
const OPEN_SETS = 8;
const INSERTS_PER_SET = 4_000;
const DISTINCT_PER_SET = 2_700;

function makeStream(): Int32Array {
  const random = seedrandom('bench-residency-set');
  const stream = new Int32Array(OPEN_SETS * INSERTS_PER_SET);
  for (let set = 0; set < OPEN_SETS; set++) {
    const distinct = Array.from({ length: DISTINCT_PER_SET }, () =>
      Math.floor(random() * OBJECT_COUNT),
    );
    for (let i = 0; i < INSERTS_PER_SET; i++)
      stream[set * INSERTS_PER_SET + i] = distinct[Math.floor(random() * distinct.length)]!;
  }
  return stream;
}

function frame(pool: ResidencySetPool, sets: number[], stream: Int32Array): number {
  let inserted = 0;
  for (let s = 0; s < sets.length; s++) pool.open(sets[s]!);
  for (let s = 0; s < sets.length; s++) {
    const base = s * INSERTS_PER_SET;
    for (let i = 0; i < INSERTS_PER_SET; i++)
      if (pool.insert(sets[s]!, stream[base + i]!)) inserted++;
  }
  for (let s = 0; s < sets.length; s++) pool.close(sets[s]!);
  pool.execute(sets);
  return inserted;
}

function measure(
  name: string,
  make: () => ResidencySetPool,
  minMs: number,
): { name: string; insertsPerSecond: number; checksum: number } {
  const pool = make();
  const sets = Array.from({ length: OPEN_SETS }, () => pool.createSet());
  const stream = makeStream();
  let checksum = frame(pool, sets, stream); // warm-up
  let frames = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < minMs || frames < 2) {
    checksum += frame(pool, sets, stream);
    frames++;
    elapsed = performance.now() - started;
  }
  return {
    name,
    insertsPerSecond: (frames * OPEN_SETS * INSERTS_PER_SET) / (elapsed / 1000),
    checksum: checksum / (frames + 1),
  };
}

const config = {
  slotCount: SLOT_COUNT,
  initialCapacity: 4096,
  objectSizesBytes: new Array<number>(OBJECT_COUNT).fill(65536),
};
const impl = measure(
  'implementation (bitset flags, typed storage)',
  () => new ResidencySetPoolImpl(config),
  1500,
);
const model = measure('model (arrays, includes)', () => new ResidencySetModel(config), 1500);
if (impl.checksum !== model.checksum)
  throw new Error(
    `model and implementation disagree on inserted counts (${model.checksum} vs ${impl.checksum})`,
  );

const flagBytes = new ResidencySetPoolImpl(config).flagBytesPerObject;
console.log(
  `residency-set: ${SLOT_COUNT} slots, ${OBJECT_COUNT} objects, ${OPEN_SETS} open sets x ${INSERTS_PER_SET} inserts (~1/3 duplicates), then close + execute`,
);
console.log('');
console.log(`${'side'.padEnd(46)} ${'inserts/s'.padStart(14)}`);
for (const row of [impl, model])
  console.log(
    `${row.name.padEnd(46)} ${Math.round(row.insertsPerSecond).toLocaleString('en-US').padStart(14)}`,
  );
console.log('');
console.log(
  `implementation / model: ${(impl.insertsPerSecond / model.insertsPerSecond).toFixed(1)}x`,
);
console.log(
  `flag memory per object: implementation ${flagBytes} bytes (bitset); Unreal's bool array ${SLOT_COUNT} bytes; the model stores no flags (it derives them from set contents, O(set size) per insert)`,
);
