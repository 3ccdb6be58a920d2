/**
 * `npm run bench -- upload-pages`: hand-outs per second of the upload page allocators,
 * implementation vs model, with the seed's page sizes (4 MiB and 64 KiB).
 *
 * Workloads (frames, the GPU two frames behind, cleanup at the end of every frame):
 * - fast allocator: 2,000 requests a frame, sizes log-uniform 256 B - 256 KiB, alignment 512
 *   (texture data placement) for a quarter of them and 16 for the rest, one request in 1,000
 *   above the page size (forwarded); minimum 5 pages retained.
 * - fast constant allocator: 10,000 constants a frame, sizes log-uniform 16 B - 4 KiB, two thirds
 *   of them uniform buffer updates over 1,000 uniform buffers.
 * The heap and the fence are bare counters, so the allocators alone are measured. Sizes come
 * from a fixed seed; both sides see the same stream and must hand out the same locations.
 */
import seedrandom from 'seedrandom';
import { performance } from 'node:perf_hooks';
import { COMMANDS, parseOrExit } from '../src/cli/args.js';
import { FastAllocatorImpl, FastConstantAllocatorImpl } from '../src/alloc/upload-pages.js';
import { FastAllocatorModel } from '../models/fast-allocator.js';
import { FastConstantAllocatorModel } from '../models/fast-constant-allocator.js';
import type {
  FastAllocator,
  FastConstantAllocator,
  UploadHeap,
} from '../src/alloc/upload-pages-types.js';

parseOrExit(
  COMMANDS['bench upload-pages'],
  `usage: npm run bench -- upload-pages

Hand-outs per second, implementation vs model, of the fast allocator (4 MiB pages, 2,000
requests a frame, 256 B - 256 KiB, 0.1 % forwarded) and the fast constant allocator (64 KiB
pages, 10,000 constants a frame, 16 B - 4 KiB, two thirds uniform buffer updates), with the GPU
two frames behind and cleanup every frame. Takes no options but -h/--help.`,
);

const FAST_PER_FRAME = 2_000;
const CONSTANTS_PER_FRAME = 10_000;
const FRAMES_IN_STREAM = 16;
const GPU_LAG_FRAMES = 2;

class CountingHeap implements UploadHeap {
  live = 0;
  created = 0;
  private nextId = 1;
  createBuffer(): number {
    this.live++;
    this.created++;
    return this.nextId++;
  }
  destroyBuffer(): void {
    this.live--;
  }
}

class Fence {
  nextValueToSignal = 1;
  completedValue = 0;
  endFrame(): void {
    this.nextValueToSignal++;
    this.completedValue = Math.max(0, this.nextValueToSignal - 1 - GPU_LAG_FRAMES);
  }
}

function logUniform(random: () => number, min: number, max: number): number {
  return Math.max(
    min,
    Math.floor(Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min)))),
  );
}

function fastStream(): { sizes: Float64Array; aligns: Float64Array } {
  const random = seedrandom('bench-upload-pages-fast');
  const count = FAST_PER_FRAME * FRAMES_IN_STREAM;
  const sizes = new Float64Array(count);
  const aligns = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    sizes[i] =
      random() < 0.001
        ? 4 * 1024 * 1024 + logUniform(random, 1, 4 * 1024 * 1024)
        : logUniform(random, 256, 256 * 1024);
    aligns[i] = random() < 0.25 ? 512 : 16;
  }
  return { sizes, aligns };
}

function constantStream(): { sizes: Float64Array; buffers: Int32Array } {
  const random = seedrandom('bench-upload-pages-constant');
  const count = CONSTANTS_PER_FRAME * FRAMES_IN_STREAM;
  const sizes = new Float64Array(count);
  const buffers = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    sizes[i] = logUniform(random, 16, 4096);
    buffers[i] = random() < 2 / 3 ? Math.floor(random() * 1000) : -1;
  }
  return { sizes, buffers };
}

interface Row {
  readonly name: string;
  readonly perSecond: number;
  readonly checksum: number;
  readonly pagesCreated: number;
}

function measure(
  name: string,
  perFrame: number,
  runFrame: (frame: number) => number,
  heap: CountingHeap,
  fence: Fence,
  minMs: number,
): Row {
  let checksum = 0;
  for (let frame = 0; frame < FRAMES_IN_STREAM; frame++) {
    checksum += runFrame(frame); // warm-up: one pass of the stream
    fence.endFrame();
  }
  let frames = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < minMs || frames < FRAMES_IN_STREAM) {
    runFrame(frames % FRAMES_IN_STREAM);
    fence.endFrame();
    frames++;
    if (frames % FRAMES_IN_STREAM === 0) elapsed = performance.now() - started;
  }
  return {
    name,
    perSecond: (frames * perFrame) / (elapsed / 1000),
    checksum,
    pagesCreated: heap.created,
  };
}

function fastRow(name: string, make: (heap: UploadHeap, fence: Fence) => FastAllocator): Row {
  const { sizes, aligns } = fastStream();
  const heap = new CountingHeap();
  const fence = new Fence();
  const fast = make(heap, fence);
  return measure(
    name,
    FAST_PER_FRAME,
    (frame) => {
      let sum = 0;
      const base = frame * FAST_PER_FRAME;
      for (let i = base; i < base + FAST_PER_FRAME; i++) {
        const location = fast.allocate(sizes[i]!, aligns[i]!);
        sum += location.bufferId * 31 + location.offsetBytes;
      }
      fast.cleanup();
      return sum % 1_000_000_007;
    },
    heap,
    fence,
    1500,
  );
}

function constantRow(
  name: string,
  make: (heap: UploadHeap, fence: Fence) => FastConstantAllocator,
): Row {
  const { sizes, buffers } = constantStream();
  const heap = new CountingHeap();
  const fence = new Fence();
  const constants = make(heap, fence);
  return measure(
    name,
    CONSTANTS_PER_FRAME,
    (frame) => {
      let sum = 0;
      const base = frame * CONSTANTS_PER_FRAME;
      for (let i = base; i < base + CONSTANTS_PER_FRAME; i++) {
        const uniformBuffer = buffers[i]!;
        const location =
          uniformBuffer >= 0
            ? constants.updateUniformBuffer(uniformBuffer, sizes[i]!)
            : constants.allocate(sizes[i]!);
        sum += location.bufferId * 31 + location.offsetBytes;
      }
      constants.cleanup();
      return sum % 1_000_000_007;
    },
    heap,
    fence,
    1500,
  );
}

function report(title: string, unit: string, impl: Row, model: Row): void {
  if (impl.checksum !== model.checksum || impl.pagesCreated === 0) {
    throw new Error(
      `${title}: model and implementation disagree on the locations handed out (${model.checksum} vs ${impl.checksum})`,
    );
  }
  console.log(title);
  console.log(`${'side'.padEnd(34)} ${unit.padStart(14)}`);
  for (const row of [impl, model])
    console.log(
      `${row.name.padEnd(34)} ${Math.round(row.perSecond).toLocaleString('en-US').padStart(14)}`,
    );
  console.log(`implementation / model: ${(impl.perSecond / model.perSecond).toFixed(2)}x\n`);
}

// Interleaved: implementation, model, implementation, model; the better of the two rounds each.
const best = (a: Row, b: Row): Row => (a.perSecond >= b.perSecond ? a : b);
const fastImpl = () =>
  fastRow('implementation (number queues)', (heap, fence) => new FastAllocatorImpl(heap, fence));
const fastModel = () =>
  fastRow('model (arrays)', (heap, fence) => new FastAllocatorModel(heap, fence));
const constImpl = () =>
  constantRow(
    'implementation (number queues)',
    (heap, fence) => new FastConstantAllocatorImpl(heap, fence),
  );
const constModel = () =>
  constantRow('model (arrays)', (heap, fence) => new FastConstantAllocatorModel(heap, fence));
const fi1 = fastImpl();
const fm1 = fastModel();
const fi2 = fastImpl();
const fm2 = fastModel();
report(
  'fast allocator: 4 MiB pages, 2,000 requests a frame (256 B - 256 KiB, 0.1 % above 4 MiB), GPU 2 frames behind',
  'requests/s',
  best(fi1, fi2),
  best(fm1, fm2),
);
const ci1 = constImpl();
const cm1 = constModel();
const ci2 = constImpl();
const cm2 = constModel();
report(
  'fast constant allocator: 64 KiB pages, 10,000 constants a frame (16 B - 4 KiB, 2/3 uniform buffer updates), GPU 2 frames behind',
  'constants/s',
  best(ci1, ci2),
  best(cm1, cm2),
);
