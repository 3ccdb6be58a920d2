// node --import tsx bench/_first-fit-wasm/run.mjs loop  [small|mixed] [pairs] [ff|ff-wasmopt|oracle]
// node --import tsx bench/_first-fit-wasm/run.mjs calls [small|mixed] [pairs] [ff|ff-wasmopt|oracle]
//
// loop:  the whole pair loop inside the wasm module (stream made in wasm, checked against the
//        JS stream of bench/_alloc-stream.ts), timed around one pairs_run call.
// calls: the pair loop of bench/_first-fit-pairs.ts in JS, once per subject in this process:
//        the C++ port in wasm (ff_alloc/ff_free per op), AS TLSF (bench/_tlsf/tlsf.wasm, wrapped
//        as bench/alloc.ts's asTlsf does) and our TS first fit through the same wrapper shape.
//        Each subject runs its own copy of the loop (new Function: no shared type feedback).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WASI } from 'node:wasi';
import { FirstFitAllocator } from '../../src/alloc/first-fit.ts';
import { fillStream, STREAM_LENGTH, stream } from '../_alloc-stream.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const [mode = 'loop', workload = 'small', pairsText = '2000000', variant = 'ff'] =
  process.argv.slice(2);
const pairs = Number(pairsText);
const GiB = 2 ** 30;
const WARM = 500_000;

function instantiate(file) {
  const wasi = new WASI({ version: 'preview1', args: [], env: {} });
  const module = new WebAssembly.Module(readFileSync(path.join(here, 'out', file)));
  const instance = new WebAssembly.Instance(module, wasi.getImportObject());
  wasi.initialize(instance);
  return instance.exports;
}

const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

fillStream(workload);
const { sizes, aligns, picks } = stream;

if (mode === 'loop') {
  const ex = instantiate(`${variant}.wasm`);
  if (variant === 'oracle') ex.oracle_record(workload === 'small' ? 1 : 2, pairs);
  ex.pairs_setup(workload === 'small' ? 1 : 2);
  const mem = ex.memory.buffer;
  const same = (ptr, js) => {
    const w = new Float64Array(mem, ptr, STREAM_LENGTH);
    for (let i = 0; i < STREAM_LENGTH; i++) if (w[i] !== js[i]) return `differs at ${i}`;
    return 'same';
  };
  const check = [
    same(ex.stream_sizes(), sizes),
    same(ex.stream_aligns(), aligns),
    same(ex.stream_picks(), picks),
  ];
  ex.pairs_run(WARM);
  const before = cpuNs();
  const sum = ex.pairs_run(pairs);
  const used = cpuNs() - before;
  console.log(
    `${variant} C++ wasm loop-inside, ${workload}: ${(used / pairs).toFixed(1)} ns/pair, offsets sum ${sum} (wasm stream vs JS: ${check.join('/')})`,
  );
} else {
  const LOOP = `
    const { sizes, aligns, picks, subject, LIVE, STREAM_LENGTH, WARM, pairs, cpuNs } = env;
    const handles = new Float64Array(LIVE + 1);
    let liveCount = 0;
    let cursor = 0;
    while (liveCount < LIVE) {
      const offset = subject.alloc(sizes[cursor], aligns[cursor]);
      cursor = (cursor + 1) & (STREAM_LENGTH - 1);
      if (offset >= 0) handles[liveCount++] = offset;
    }
    function run(count) {
      let sum = 0;
      for (let i = 0; i < count; i++) {
        const index = Math.floor(picks[cursor] * liveCount);
        const handle = handles[index];
        handles[index] = handles[--liveCount];
        subject.free(handle);
        const offset = subject.alloc(sizes[cursor], aligns[cursor]);
        cursor = (cursor + 1) & (STREAM_LENGTH - 1);
        if (offset >= 0) {
          handles[liveCount++] = offset;
          sum += offset;
        }
      }
      return sum;
    }
    run(WARM);
    const before = cpuNs();
    const sum = run(pairs);
    return [(cpuNs() - before) / pairs, sum];`;
  const measure = (subject) =>
    new Function('env', LOOP)({
      sizes,
      aligns,
      picks,
      subject,
      LIVE: 10_000,
      STREAM_LENGTH,
      WARM,
      pairs,
      cpuNs,
    });

  const ffx = instantiate(`${variant}.wasm`);
  if (variant === 'oracle') ffx.oracle_record(workload === 'small' ? 1 : 2, pairs);
  ffx.ff_init(GiB);
  const ffWasm = { alloc: (s, a) => ffx.ff_alloc(s, a), free: (h) => ffx.ff_free(h) };

  const tlsfx = new WebAssembly.Instance(
    new WebAssembly.Module(readFileSync(path.join(here, '..', '_tlsf', 'tlsf.wasm'))),
    {
      env: {
        abort: () => {
          throw new Error('tlsf: abort (out of memory)');
        },
      },
    },
  ).exports;
  const capacityBytes = GiB;
  const tlsf = {
    alloc: (sizeBytes, alignBytes) => {
      const requestBytes =
        Math.max(1, Math.round(sizeBytes)) + (alignBytes > 16 ? alignBytes - 16 : 0);
      let raw;
      try {
        raw = tlsfx.alloc(requestBytes) >>> 0;
      } catch {
        return -1;
      }
      if (raw + requestBytes > capacityBytes) {
        tlsfx.free(raw);
        return -1;
      }
      return raw;
    },
    free: (h) => tlsfx.free(h),
  };

  const pool = new FirstFitAllocator({ capacityBytes: GiB });
  const ts = {
    alloc: (s, a) => {
      const o = pool.alloc(s, a);
      return o === null ? -1 : o;
    },
    free: (h) => pool.free(h),
  };

  const [ffNs, ffSum] = measure(ffWasm);
  const [tlsfNs, tlsfSum] = measure(tlsf);
  const [tsNs, tsSum] = measure(ts);
  console.log(
    `calls, ${workload}: ${variant} C++ wasm ${ffNs.toFixed(1)} ns/pair (sum ${ffSum}), AS TLSF ${tlsfNs.toFixed(1)} ns/pair (sum ${tlsfSum}), TS first fit ${tsNs.toFixed(1)} ns/pair (sum ${tsSum}); TLSF/C++wasm ${(tlsfNs / ffNs).toFixed(2)}x, TLSF/TS ${(tlsfNs / tsNs).toFixed(2)}x`,
  );
}
