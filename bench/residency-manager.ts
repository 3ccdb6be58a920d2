/**
 * `npm run bench -- residency-manager [--seconds S] [--objects N]`
 *
 * Submissions per second of ExecuteCommandLists (one list, one residency set) for the shipped
 * implementation and the reference model, measured in one run. N objects are tracked (10 000 by
 * default); each submission references a batch of k consecutive objects, the window moving by k
 * every submission so the whole working set cycles through the budget. The budget (local, with
 * no non-local segment) is 50 % or 110 % of the working set's bytes. Inline mode (Device3,
 * queued make-resident), objects start EVICTED as in Unreal. After each submission the
 * GPU completes all but the last two submissions (two in flight, so the pressure path has sync
 * points to wait for and trim to) and the clock moves 20 ticks (60 ticks per second), so idle
 * objects also age out under pressure.
 * Both sides use the simulated GPU in unchecked mode, so the figures measure the managers.
 */
import { performance } from 'node:perf_hooks';
import { ResidencyManagerModel } from '../models/residency-manager.js';
import { ResidencyManagerImpl } from '../src/residency/residency-manager.js';
import type {
  ResidencyManager,
  ResidencyManagerConfig,
} from '../src/residency/residency-manager-types.js';
import { COMMANDS, parseOrExit } from '../src/cli/args.js';

const HELP = `usage: npm run bench -- residency-manager [--seconds S] [--objects N]

ExecuteCommandLists submissions per second, implementation vs model, N tracked objects in
batches of 1000, 5000 and 10000 (those <= N), budget 50 % and 110 % of the working set.

  --seconds S   minimum measuring time per cell (default 1)
  --objects N   tracked objects (default 10000)
  -h, --help    this help`;
const args = parseOrExit(COMMANDS['bench residency-manager'], HELP);
const seconds = args.values.seconds ?? 1;
const objectCount = args.values.objects ?? 10000;
/** A third of a second of simulated time per submission: a working-set cycle outlives the grace period under pressure. */
const TICKS_PER_SUBMISSION = 20;

/** Deterministic object sizes: 64 KiB .. 4 MiB in 64 KiB steps (a small LCG, no Math.random). */
function sizes(count: number): number[] {
  const out: number[] = [];
  let state = 12345;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    out.push((1 + ((state >>> 16) % 64)) * 65536);
  }
  return out;
}

interface Scenario {
  readonly batch: number;
  readonly budgetPercent: number;
}

interface Prepared {
  readonly manager: ResidencyManager;
  readonly sets: number[];
  readonly lists: number[][][];
}

function prepare(
  make: (config: ResidencyManagerConfig) => ResidencyManager,
  objectSizes: number[],
  scenario: Scenario,
): Prepared {
  const workingSetBytes = objectSizes.reduce((a, b) => a + b, 0);
  const config: ResidencyManagerConfig = {
    objectSizesBytes: objectSizes,
    queueCount: 1,
    mode: 'inline',
    startEvicted: true,
    maxLatency: 6,
    ticksPerSecond: 60,
    localBudgetBytes: Math.floor((workingSetBytes * scenario.budgetPercent) / 100),
    nonLocalBudgetBytes: 0,
    unrealBudgetCap: false,
    debugBudgetBytes: -1,
    slotCount: 32,
    initialCapacity: 4096,
  };
  const manager = make(config);
  for (let object = 0; object < objectSizes.length; object++) manager.beginTracking(object);
  const sets: number[] = [];
  const lists: number[][][] = [];
  for (let start = 0; start < objectSizes.length; start += scenario.batch) {
    const set = manager.sets.createSet();
    manager.sets.open(set);
    for (
      let object = start;
      object < Math.min(start + scenario.batch, objectSizes.length);
      object++
    )
      manager.sets.insert(set, object);
    manager.sets.close(set);
    sets.push(set);
    lists.push([manager.sets.contents(set)]);
  }
  return { manager, sets, lists };
}

function submit(prepared: Prepared, index: number): void {
  const { manager, sets, lists } = prepared;
  const which = index % sets.length;
  const hr = manager.executeCommandLists(0, lists[which]!, [sets[which]!]);
  if (hr !== 'S_OK') throw new Error(`submission failed: ${hr}`);
  // Two submissions stay in flight (frames in flight): the GPU completes up to submission
  // index - 2, whose fence value is index - 1 (the queue fence counter starts at 1).
  if (index >= 2) manager.gpu.cpuWait(0, index - 1);
  manager.gpu.advanceClock(TICKS_PER_SUBMISSION);
}

/** Submissions per second over at least `seconds` (and at least 3 submissions) after a warm-up. */
function measure(prepared: Prepared): number {
  const warmUp = Math.max(4, 2 * prepared.sets.length);
  for (let i = 0; i < warmUp; i++) submit(prepared, i);
  let count = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < seconds * 1000 || count < 3) {
    submit(prepared, warmUp + count);
    count++;
    elapsed = performance.now() - started;
  }
  return count / (elapsed / 1000);
}

const objectSizes = sizes(objectCount);
const scenarios: Scenario[] = [];
for (const batch of [1000, 5000, 10000]) {
  if (batch > objectCount) continue;
  for (const budgetPercent of [50, 110]) scenarios.push({ batch, budgetPercent });
}

console.log(
  `residency-manager: ExecuteCommandLists submissions/s, ${objectCount} tracked objects, inline mode, objects start EVICTED, >= ${seconds} s per cell`,
);
console.log(
  `${'batch'.padStart(6)} ${'budget'.padStart(7)} ${'impl sub/s'.padStart(12)} ${'model sub/s'.padStart(12)} ${'impl/model'.padStart(11)}`,
);
for (const scenario of scenarios) {
  const impl = measure(
    prepare(
      (config) => new ResidencyManagerImpl(config, { checked: false }),
      objectSizes,
      scenario,
    ),
  );
  const model = measure(
    prepare(
      (config) => new ResidencyManagerModel(config, { checked: false }),
      objectSizes,
      scenario,
    ),
  );
  console.log(
    `${String(scenario.batch).padStart(6)} ${`${scenario.budgetPercent} %`.padStart(7)} ${impl.toFixed(1).padStart(12)} ${model.toFixed(1).padStart(12)} ${(impl / model).toFixed(1).padStart(10)}x`,
  );
}
