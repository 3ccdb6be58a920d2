/**
 * `npm run bench -- alloc [--workload default,small,mixed] [--live 1000,10000] [--seconds 2] [--only name,name]`
 *
 * Alloc+free pairs per CPU second at a steady number of live allocations, for our sub-allocators,
 * their reference models, @thi.ng/malloc (a first-fit MemPool over an ArrayBuffer, O(n)) and
 * AssemblyScript's runtime TLSF compiled to wasm (bench/_tlsf; the strongest peer that runs
 * here). Each case runs in its own child process, one after the other, on the same request
 * stream; ratios are taken within this one run.
 *
 * Workloads (each its own table):
 * - default: sizes 256 B - 4 MiB, 256 * 2^(14 u^3) for uniform u (mean ~150 KiB: mostly small,
 *   a long tail of large ones); alignments 16 (10%), 256 (50%), 4 KiB (25%), 64 KiB (15%);
 *   3 GiB at 10k live.
 * - small: sizes log-uniform 256 B - 64 KiB (256 * 2^(8u)), alignment 16; 1 GiB at 10k live.
 * - mixed: the small workload's sizes, alignments 16 (10%), 256 (60%), 4 KiB (30%); 1 GiB.
 * First
 * the allocator is filled to `live` allocations (not timed); then each timed step frees a
 * random live allocation and allocates the next request of the stream. A request that finds no
 * room is counted (`null %`); while the live count is below the target, a null is followed by
 * one retry alloc with the next request. Throughput counts every call: (allocs + frees) / 2
 * pairs per second, retries included; `null %` is nulls per alloc call. Each case runs
 * the steps untimed for `seconds` (JIT warm-up, wasm tier-up), then `seconds` split into 5 timed
 * windows, and reports the best window (the machine is shared; noise only slows a window).
 * Seconds are the child process's CPU seconds (process.cpuUsage, user + system, all its threads:
 * GC helpers count), not wall time: a process waiting for a core on the shared machine is not
 * charged for the wait.
 *
 * Capacities: the workload's capacity (3 GiB or 1 GiB) for best fit, first fit, @thi.ng/malloc
 * and AS TLSF at 10k live (a tenth at 1k), the next power of two (4 GiB / 0.5 GiB for the
 * default workload) for the buddy, which needs one. TLSF grows
 * its wasm memory on demand; a block it places past the capacity is freed again and answered
 * null, so it manages the same bytes as the others (its headers included). Peers without
 * per-request alignment (@thi.ng/malloc aligns to 8, TLSF to 16) get size + align - their
 * alignment bytes, as a caller that aligns the pointer itself would ask for.
 *
 * Unlike ours, the two peers keep their headers inside the memory they manage, so at 10k live
 * TLSF writes headers scattered over the ~3 GiB heap (TLB and cache misses): its throughput
 * depends on its memory footprint. The row 'AS TLSF (wasm) sizes/64' runs the same stream
 * with every size divided by 64 (alignment extras unchanged) to show that dependence; it is not
 * the workload the other rows run (default workload only).
 *
 * 'first-fit C++ port (wasm)' is not a peer but a yardstick: our first fit's algorithm ported to
 * C++ (bench/_first-fit-wasm, the same answers offset for offset), compiled to wasm and called once
 * per operation like TLSF. Beside the first-fit row it shows what compiled code of the same
 * algorithm reaches on this machine in this run; a note under the table gives the ratio.
 *
 * `metadata B/live` (ours and their models' rows left empty): the bytes of typed arrays the
 * allocator object reaches (its node pools, indexes and maps, counted by walking its fields), at
 * the end of the run, divided by the live allocations. It includes the per-capacity tables
 * (a size-indexed root table, per-unit lookup arrays), so it falls as the live count grows.
 */
import { existsSync, readFileSync } from 'node:fs';
import { WASI } from 'node:wasi';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { MemPool } from '@thi.ng/malloc';
import { BestFitAllocator } from '../src/alloc/best-fit.js';
import { BuddyAllocator } from '../src/alloc/buddy.js';
import { FirstFitAllocator } from '../src/alloc/first-fit.js';
import { BestFitModel } from '../models/alloc-best-fit.js';
import { BuddyModel } from '../models/alloc-buddy.js';
import { FirstFitModel } from '../models/alloc-first-fit.js';
import type { Allocator } from '../src/alloc/allocator.js';
import { COMMANDS, orExit, parseOrExit, UsageError } from '../src/cli/args.js';
import { fillStream, STREAM_LENGTH, stream, WORKLOADS, type Workload } from './_alloc-stream.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const GiB = 2 ** 30;

// --- the request streams (deterministic) --------------------------------------------------------
/** Capacity at 10k live (a multiple of 64 KiB; scaled down below 10k live). */
const WORKLOAD_CAPACITY: Record<Workload, number> = { default: 3 * GiB, small: GiB, mixed: GiB };
const WORKLOAD_TEXT: Record<Workload, string> = {
  default: 'sizes 256 B - 4 MiB (256 * 2^(14 u^3)), alignments 16/256/4K/64K at 10/50/25/15 %',
  small: 'sizes log-uniform 256 B - 64 KiB, alignment 16',
  mixed: 'sizes log-uniform 256 B - 64 KiB, alignments 16/256/4K at 10/60/30 %',
};
// --- contestants -------------------------------------------------------------------------------
/** alloc returns a handle >= 0 to pass to free, or -1 for no room. */
interface Subject {
  alloc(sizeBytes: number, alignBytes: number): number;
  free(handle: number): void;
  /** Bytes of metadata the allocator holds now (ours only). */
  metadataBytes?(): number;
}

function ours(allocator: Allocator, countMetadata = true): Subject {
  return {
    alloc: (sizeBytes, alignBytes) => allocator.alloc(sizeBytes, alignBytes) ?? -1,
    free: (handle) => allocator.free(handle),
    ...(countMetadata ? { metadataBytes: () => typedArrayBytes(allocator) } : {}),
  };
}

/**
 * The bytes of the typed arrays reachable from `root` through its fields, arrays and nested
 * objects (each buffer counted once): the allocators keep all their metadata in typed arrays.
 */
function typedArrayBytes(root: object): number {
  const seen = new Set<object>();
  let total = 0;
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (ArrayBuffer.isView(value)) {
      if (!seen.has(value.buffer)) {
        seen.add(value.buffer);
        total += value.buffer.byteLength;
      }
      return;
    }
    if (value instanceof Map || value instanceof Set) return; // none on our allocators' paths
    for (const key of Object.keys(value)) visit((value as Record<string, unknown>)[key]);
  };
  visit(root);
  return total;
}

function thingMalloc(capacityBytes: number): Subject {
  const pool = new MemPool({ size: capacityBytes + 64, align: 8 });
  return {
    alloc: (sizeBytes, alignBytes) => {
      const extraBytes = alignBytes > 8 ? alignBytes - 8 : 0;
      const raw = pool.malloc(sizeBytes + extraBytes);
      return raw === 0 ? -1 : raw;
    },
    free: (handle) => {
      pool.free(handle);
    },
  };
}

/** The slice of the WebAssembly JS API used here (tsconfig's lib has no DOM/wasm typings). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let tlsfModule: object | undefined;
/** Bytes of wasm memory the last TLSF instance grew to (reported with its result). */
let tlsfMemory: { buffer: { byteLength: number } } | undefined;
/**
 * TLSF managing `capacityBytes`: a block placed past the capacity is freed and answered null.
 * `sizeDivisor` > 1 divides every requested size (the footprint row).
 */
function asTlsf(capacityBytes: number, sizeDivisor = 1): Subject {
  if (tlsfModule === undefined) {
    const wasmPath = path.join(here, '_tlsf', 'tlsf.wasm');
    if (!existsSync(wasmPath))
      execFileSync(process.execPath, [path.join(here, '_tlsf', 'build.mjs')], { stdio: 'inherit' });
    tlsfModule = new wasm.Module(readFileSync(wasmPath));
  }
  const instance = new wasm.Instance(tlsfModule, {
    env: {
      abort: () => {
        throw new Error('tlsf: abort (out of memory)');
      },
    },
  });
  const exports = instance.exports as {
    alloc(sizeBytes: number): number;
    free(pointer: number): void;
    memory: { buffer: { byteLength: number } };
  };
  tlsfMemory = exports.memory;
  return {
    alloc: (sizeBytes, alignBytes) => {
      const requestBytes =
        Math.max(1, Math.round(sizeBytes / sizeDivisor)) + (alignBytes > 16 ? alignBytes - 16 : 0);
      let raw: number;
      try {
        raw = exports.alloc(requestBytes) >>> 0;
      } catch {
        return -1;
      }
      if (raw + requestBytes > capacityBytes) {
        exports.free(raw);
        return -1;
      }
      return raw;
    },
    free: (handle) => exports.free(handle),
  };
}

/**
 * Our first fit's C++ port compiled to wasm (a WASI reactor, bench/_first-fit-wasm/first_fit_port.wasm,
 * rebuilt by that folder's build.sh): ff_alloc answers -1 for no room, like a Subject.
 */
function firstFitPort(capacityBytes: number): Subject {
  const wasmPath = path.join(here, '_first-fit-wasm', 'first_fit_port.wasm');
  const wasi = new WASI({ version: 'preview1', args: [], env: {} });
  const instance = new wasm.Instance(
    new wasm.Module(readFileSync(wasmPath)),
    wasi.getImportObject() as object,
  );
  wasi.initialize(instance);
  const exports = instance.exports as {
    ff_init(capacityBytes: number): void;
    ff_alloc(sizeBytes: number, alignBytes: number): number;
    ff_free(offsetBytes: number): void;
  };
  exports.ff_init(capacityBytes);
  return {
    alloc: (sizeBytes, alignBytes) => exports.ff_alloc(sizeBytes, alignBytes),
    free: (handle) => exports.ff_free(handle),
  };
}

interface Contestant {
  readonly name: string;
  /** Which of our implementations this one is the model of (for the ratio column). */
  readonly modelOf?: string;
  /** Runs a different workload (smaller sizes): shown for its memory footprint, in no ratio. */
  readonly footprintOnly?: boolean;
  /** Only in these workloads (default: all). */
  readonly workloads?: readonly Workload[];
  make(capacityBytes: number): Subject;
}

/** The workload's capacity at 10k live, proportionally less below (a multiple of 64 KiB). */
function roundCapacity(workload: Workload, live: number): number {
  return Math.ceil((WORKLOAD_CAPACITY[workload] * Math.min(live, 10000)) / 10000 / 65536) * 65536;
}
const pow2Above = (bytes: number) => 2 ** Math.ceil(Math.log2(bytes));

const contestants: Contestant[] = [
  {
    name: 'best-fit',
    make: (capacityBytes) => ours(new BestFitAllocator({ capacityBytes, poolAlignBytes: 256 })),
  },
  {
    name: 'best-fit model',
    modelOf: 'best-fit',
    make: (capacityBytes) => ours(new BestFitModel({ capacityBytes, poolAlignBytes: 256 }), false),
  },
  {
    name: 'buddy',
    make: (capacityBytes) =>
      ours(new BuddyAllocator({ capacityBytes: pow2Above(capacityBytes), minBlockBytes: 256 })),
  },
  {
    name: 'buddy model',
    modelOf: 'buddy',
    make: (capacityBytes) =>
      ours(new BuddyModel({ capacityBytes: pow2Above(capacityBytes), minBlockBytes: 256 }), false),
  },
  { name: 'first-fit', make: (capacityBytes) => ours(new FirstFitAllocator({ capacityBytes })) },
  {
    name: 'first-fit model',
    modelOf: 'first-fit',
    make: (capacityBytes) => ours(new FirstFitModel({ capacityBytes }), false),
  },
  { name: 'first-fit C++ port (wasm)', make: (capacityBytes) => firstFitPort(capacityBytes) },
  { name: '@thi.ng/malloc', make: (capacityBytes) => thingMalloc(capacityBytes) },
  { name: 'AS TLSF (wasm)', make: (capacityBytes) => asTlsf(capacityBytes) },
  {
    name: 'AS TLSF (wasm) sizes/64',
    footprintOnly: true,
    workloads: ['default'],
    make: (capacityBytes) => asTlsf(capacityBytes, 64),
  },
];

// --- arguments ---------------------------------------------------------------------------------
const HELP = `usage: npm run bench -- alloc [--workload default,small,mixed] [--live 1000,10000] [--seconds 2] [--only NAME,NAME]

Alloc+free pairs per CPU second (the case's own process time, not wall time) at a steady number
of live allocations: our sub-allocators, their models, our first fit's C++ port in wasm (a
yardstick: the same algorithm compiled), @thi.ng/malloc and AssemblyScript's TLSF (wasm), each
case in its own child process.

  --workload W,W  request streams (default all): default (256 B - 4 MiB, 3 GiB), small
                  (256 B - 64 KiB log-uniform, align 16, 1 GiB), mixed (small's sizes,
                  align 16/256/4K at 10/60/30 %, 1 GiB)
  --live N,N      live allocation counts to measure at (default 1000,10000)
  --seconds S     warm-up CPU time, then timed CPU time, per case (default 2)
  --only A,B      only these contestants (default all): CONTESTANTS
  --case NAME     internal: measure one contestant at the first --live count, print JSON
  -h, --help      this help`;
const contestantNames = contestants.map((contestant) => contestant.name);
/** The shared 'bench alloc' options plus --workload (this bench's own). */
const args = parseOrExit(COMMANDS['bench alloc'], () =>
  HELP.replace('CONTESTANTS', contestantNames.join(', ')),
);
const liveCounts = args.values.live ?? [1000, 10000];
const secondsPerCase = args.values.seconds ?? 2;
const only = args.values.only?.split(',').map((name) => name.trim());
const workloads = orExit(() => {
  const check = (option: string, name: string): void => {
    if (!contestantNames.includes(name))
      throw new UsageError(
        `--${option}: unknown contestant '${name}'; known: ${contestantNames.join(', ')} (see npm run bench -- alloc --help)`,
      );
  };
  for (const name of only ?? []) check('only', name);
  if (args.values.case !== undefined) check('case', args.values.case);
  const names = args.values.workload?.split(',').map((name) => name.trim()) ?? [...WORKLOADS];
  for (const name of names) {
    if (!(WORKLOADS as readonly string[]).includes(name))
      throw new UsageError(
        `--workload: unknown workload '${name}'; known: ${WORKLOADS.join(', ')} (see npm run bench -- alloc --help)`,
      );
  }
  return names as Workload[];
});

interface Result {
  readonly name: string;
  readonly pairsPerSecond: number;
  readonly nullPercent: number;
  readonly live: number;
  /** Wasm memory at the end (TLSF only). */
  readonly memoryBytes?: number;
  /** Metadata bytes at the end (ours only). */
  readonly metadataBytes?: number;
}

const TIMED_WINDOWS = 5;

/**
 * This process's CPU time (user + system) in ms: on a machine shared with other jobs, time the
 * process spent waiting for a core is not counted (wall time was; its windows spread 2x and more).
 */
function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function measure(contestant: Contestant, workload: Workload, targetLive: number): Result {
  fillStream(workload);
  const { sizes, aligns, picks } = stream;
  const subject = contestant.make(roundCapacity(workload, targetLive));
  const handles = new Float64Array(targetLive + 1);
  let liveCount = 0;
  let cursor = 0;
  // Fill (not timed); give up after a bounded number of requests.
  for (let attempts = 0; liveCount < targetLive && attempts < targetLive * 4; attempts++) {
    const handle = subject.alloc(sizes[cursor]!, aligns[cursor]!);
    cursor = (cursor + 1) & (STREAM_LENGTH - 1);
    if (handle >= 0) handles[liveCount++] = handle;
  }
  const BATCH = 256;
  const MAX_PAIRS = 50_000_000;
  /**
   * Runs steps for `budgetMs` of this process's CPU time (or MAX_PAIRS); returns [alloc calls,
   * free calls, nulls, CPU ms].
   */
  const run = (budgetMs: number): [number, number, number, number] => {
    let allocs = 0;
    let frees = 0;
    let nulls = 0;
    const started = cpuMs();
    let elapsedMs = 0;
    // CPU time is a system call: read it when 2 ms of wall time have passed, not every batch.
    let nextCheck = performance.now() + 2;
    while (elapsedMs < budgetMs && allocs < MAX_PAIRS) {
      for (let i = 0; i < BATCH; i++) {
        if (liveCount > 0) {
          const index = Math.floor(picks[cursor]! * liveCount);
          const handle = handles[index]!;
          handles[index] = handles[--liveCount]!;
          subject.free(handle);
          frees++;
        }
        const handle = subject.alloc(sizes[cursor]!, aligns[cursor]!);
        allocs++;
        cursor = (cursor + 1) & (STREAM_LENGTH - 1);
        if (handle >= 0) handles[liveCount++] = handle;
        else nulls++;
        // Top up after a null so the live count stays near the target (a counted alloc call).
        if (liveCount < targetLive && handle < 0) {
          const retry = subject.alloc(sizes[cursor]!, aligns[cursor]!);
          allocs++;
          cursor = (cursor + 1) & (STREAM_LENGTH - 1);
          if (retry >= 0) handles[liveCount++] = retry;
          else nulls++;
        }
      }
      const now = performance.now();
      if (now >= nextCheck) {
        elapsedMs = cpuMs() - started;
        nextCheck = now + 2;
      }
    }
    return [allocs, frees, nulls, cpuMs() - started];
  };
  // Warm-up (JIT, wasm tier-up), then TIMED_WINDOWS windows; the best one counts (the machine
  // is shared, so noise only ever slows a window down).
  run(secondsPerCase * 1000);
  let best = 0;
  let nullPercent = 0;
  for (let window = 0; window < TIMED_WINDOWS; window++) {
    const [allocs, frees, nulls, elapsedMs] = run((secondsPerCase * 1000) / TIMED_WINDOWS);
    const pairsPerSecond = ((allocs + frees) / 2 / elapsedMs) * 1000;
    if (pairsPerSecond > best) {
      best = pairsPerSecond;
      nullPercent = (100 * nulls) / allocs;
    }
  }
  return {
    name: contestant.name,
    pairsPerSecond: best,
    nullPercent,
    live: liveCount,
    ...(tlsfMemory === undefined ? {} : { memoryBytes: tlsfMemory.buffer.byteLength }),
    ...(subject.metadataBytes === undefined ? {} : { metadataBytes: subject.metadataBytes() }),
  };
}

function format(value: number): string {
  if (value >= 1e6) return `${(value / 1e6).toFixed(2)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return value.toFixed(0);
}

// Each (workload, contestant, live count) is measured in a fresh child process: its own JIT
// feedback (no call site turns megamorphic because other contestants ran before) and its own memory.
const caseName = args.values.case;
if (caseName !== undefined) {
  const contestant = contestants.find((c) => c.name === caseName)!; // checked with the arguments
  console.log(JSON.stringify(measure(contestant, workloads[0]!, liveCounts[0]!)));
} else {
  console.log(
    `alloc bench: node ${process.version}, ${secondsPerCase}s per case, workloads ${workloads.join(', ')}, live ${liveCounts.join(', ')}, one child process per case`,
  );
  for (const workload of workloads) {
    for (const targetLive of liveCounts) {
      const results = new Map<string, Result>();
      for (const contestant of contestants) {
        if (only !== undefined && !only.includes(contestant.name)) continue;
        if (contestant.workloads !== undefined && !contestant.workloads.includes(workload))
          continue;
        const output = execFileSync(
          process.execPath,
          [
            ...process.execArgv,
            // node:wasi (the C++ port's row) warns that it is experimental, once per child.
            '--disable-warning=ExperimentalWarning',
            fileURLToPath(import.meta.url),
            '--case',
            contestant.name,
            '--workload',
            workload,
            '--live',
            String(targetLive),
            '--seconds',
            String(secondsPerCase),
          ],
          { encoding: 'utf8', maxBuffer: 1 << 20 },
        );
        results.set(contestant.name, JSON.parse(output.trim().split('\n').pop()!) as Result);
      }
      const thing = results.get('@thi.ng/malloc');
      const tlsf = results.get('AS TLSF (wasm)');
      const capacityBytes = roundCapacity(workload, targetLive);
      console.log(
        `\nworkload ${workload} (${WORKLOAD_TEXT[workload]}), ${targetLive} live (best/first fit, @thi.ng/malloc, AS TLSF: ${(capacityBytes / GiB).toFixed(3)} GiB; buddy: ${(pow2Above(capacityBytes) / GiB).toFixed(3)} GiB)`,
      );
      console.log(
        '| allocator | alloc+free pairs/s | null % | live at end | metadata B/live | vs its model | vs @thi.ng/malloc | vs AS TLSF |',
      );
      console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
      for (const contestant of contestants) {
        const result = results.get(contestant.name);
        if (result === undefined) continue;
        const model = contestants.find((c) => c.modelOf === contestant.name);
        const modelResult = model === undefined ? undefined : results.get(model.name);
        const ratio = (other: Result | undefined) =>
          other === undefined || other === result || contestant.footprintOnly
            ? ''
            : `${(result.pairsPerSecond / other.pairsPerSecond).toFixed(2)}x`;
        const metadata =
          result.metadataBytes === undefined || result.live === 0
            ? ''
            : (result.metadataBytes / result.live).toFixed(0);
        console.log(
          `| ${result.name} | ${format(result.pairsPerSecond)} | ${result.nullPercent.toFixed(1)} | ${result.live} | ${metadata} | ${ratio(modelResult)} | ${ratio(thing)} | ${ratio(tlsf)} |`,
        );
      }
      for (const contestant of contestants) {
        const memoryBytes = results.get(contestant.name)?.memoryBytes;
        if (memoryBytes !== undefined)
          console.log(
            `${contestant.name}: wasm memory ${(memoryBytes / GiB).toFixed(2)} GiB at the end`,
          );
      }
      const firstFit = results.get('first-fit');
      const port = results.get('first-fit C++ port (wasm)');
      if (firstFit !== undefined && port !== undefined)
        console.log(
          `first-fit runs at ${(firstFit.pairsPerSecond / port.pairsPerSecond).toFixed(2)}x its C++ port in wasm (the same algorithm and answers, compiled).`,
        );
      if (tlsf !== undefined && workload === 'default') {
        console.log(
          'Note: AS TLSF writes its block headers into the heap it manages (here up to the capacity above), ' +
            'so its throughput depends on that footprint (TLB and cache misses); the sizes/64 row shows how much. ' +
            'Ours keep their metadata in typed arrays beside the pool.',
        );
      }
    }
  }
}
