import { describe, expect, it } from 'vitest';
import { GROWTH_PROBES, ringUploadSystem, scaleConfigArb } from '../src/systems/ring-upload.js';
import { RunContext } from '../src/harness/runner.js';
import { RingUploadAllocatorImpl } from '../src/alloc/ring-upload.js';
import { RingUploadModel } from '../models/ring-upload.js';
import { RingErrors, type RingUploadAllocator } from '../src/alloc/ring-upload-types.js';
import { AllocErrors } from '../src/alloc/allocator.js';
import { runSequence } from '../src/harness/runner.js';
import { checkSystem } from '../src/harness/property.js';
import type { Command, SystemDef } from '../src/harness/system.js';
import { NumberDeque } from '../src/alloc/number-deque.js';
import { RING_UPLOAD_MUTANTS } from '../mutants/ring-upload.js';
import { QueueTimeline } from '../src/gpu/queue-timeline.js';
import { describeSystem, TEST_SEED } from './support.js';

describeSystem(ringUploadSystem, { numRuns: 400, mutantRuns: 300 });

describe('ring-upload: scale configs reach the growth paths', () => {
  it('dozens of small ranges in flight grow the record table and the queues, with the model agreeing', () => {
    const context = new RunContext();
    const result = checkSystem(
      { ...ringUploadSystem, configArb: scaleConfigArb },
      { seed: TEST_SEED, numRuns: 30, context, unbiased: true },
    );
    expect(result.failed).toBe(false);
    expect(
      GROWTH_PROBES.filter((probe) => (context.probeCounts.get(probe) ?? 0) === 0),
      'growth probes the scale configs never reached',
    ).toEqual([]);
  });
});

function mutantNamed(name: string) {
  const found = RING_UPLOAD_MUTANTS.find((mutant) => mutant.name === name);
  if (found === undefined) throw new Error(`no mutant ${name}`);
  return found;
}

/** The seed's example (docs/spec/engine.md#life-ring) as a plain-data program. */
const SEED_1024_EXAMPLE: Command[] = [
  // Six frames already signalled and completed: the next submission signals value 7.
  ...Array.from({ length: 6 }, (): Command => ({ op: 'signal' })),
  { op: 'gpuProgress', steps: 6 },
  { op: 'allocate', sizeBytes: 512, alignBytes: 256 },
  { op: 'submit', index: 0, endBatch: true },
  // The cursor runs to the end of the ring; the CPU lets go of that range again.
  { op: 'allocate', sizeBytes: 512, alignBytes: 256 },
  { op: 'cancel', index: 0 },
  // Wrap: [0,256) is still read by the GPU until value 7 completes.
  { op: 'allocate', sizeBytes: 256, alignBytes: 256 },
  { op: 'gpuProgress', steps: 1 },
  { op: 'allocate', sizeBytes: 256, alignBytes: 256 },
  { op: 'collect' },
  { op: 'allocate', sizeBytes: 256, alignBytes: 256 },
];

describe("ring-upload: the seed's examples", () => {
  for (const [name, make] of [
    ['model', (capacityBytes: number) => new RingUploadModel(capacityBytes)],
    ['implementation', (capacityBytes: number) => new RingUploadAllocatorImpl(capacityBytes)],
  ] as const) {
    it(`${name}: capacity 1024, [0,512) submitted with 7 and completed 6: a wrapped 256-byte request waits for 7`, () => {
      const ring: RingUploadAllocator = make(1024);
      expect(ring.allocate(512, 256)).toBe(0);
      ring.submit(0, 7);
      expect(ring.allocate(512, 256)).toBe(512);
      ring.cancel(512);
      expect(ring.collect(6)).toEqual([]);
      expect(ring.allocate(256, 256)).toBeNull();
      expect(ring.live()).toEqual([
        { offsetBytes: 0, sizeBytes: 512, state: 'submitted', fenceValue: 7 },
      ]);
      expect(ring.collect(7)).toEqual([0]);
      expect(ring.isPristine()).toBe(true);
      expect(ring.freeBytes()).toBe(1024);
      expect(ring.allocate(256, 256)).toBe(0);
    });

    it(`${name}: two recording threads reserve before either submits and get different bytes`, () => {
      const ring = make(1024);
      const first = ring.allocate(300, 4);
      const second = ring.allocate(300, 4);
      expect([first, second]).toEqual([0, 300]);
      ring.submit(second!, 1);
      ring.submit(first!, 1);
      expect(ring.collect(1)).toEqual([300, 0]);
    });

    it(`${name}: a hole left by an out-of-order free is reused only when the cursor comes back`, () => {
      const ring = make(100);
      expect(ring.allocate(40, 1)).toBe(0);
      expect(ring.allocate(40, 1)).toBe(40);
      ring.cancel(40);
      // [40,80) is free again but the cursor sits at 80 and [0,40) is still reserved.
      expect(ring.freeBytes()).toBe(20);
      expect(ring.wasteBytes()).toBe(40);
      expect(ring.allocate(30, 1)).toBeNull();
      ring.cancel(0);
      expect(ring.allocate(30, 1)).toBe(0);
    });

    it(`${name}: typed errors for bad requests, bad submits and bad cancels`, () => {
      const ring = make(64);
      expect(() => ring.allocate(0, 1)).toThrow(AllocErrors.BAD_SIZE);
      expect(() => ring.allocate(8, 3)).toThrow(AllocErrors.BAD_ALIGN);
      expect(ring.allocate(65, 1)).toBeNull();
      expect(ring.allocate(16, 16)).toBe(0);
      expect(() => ring.cancel(4)).toThrow(RingErrors.UNKNOWN_RANGE);
      ring.submit(0, 3);
      expect(() => ring.submit(0, 3)).toThrow(RingErrors.ALREADY_SUBMITTED);
      expect(() => ring.cancel(0)).toThrow(RingErrors.ALREADY_SUBMITTED);
      expect(ring.allocate(16, 16)).toBe(16);
      expect(() => ring.submit(16, 2)).toThrow(RingErrors.FENCE_ORDER);
      ring.cancel(16);
      expect(() => ring.cancel(16)).toThrow(RingErrors.UNKNOWN_RANGE);
    });
  }

  it("the seed's 1024-byte example passes side by side and catches a wrap that ignores submitted ranges", () => {
    const config = { capacityBytes: 1024 };
    expect(runSequence(ringUploadSystem, config, SEED_1024_EXAMPLE)).toEqual({
      ok: true,
      steps: SEED_1024_EXAMPLE.length,
    });
    const outcome = runSequence(ringUploadSystem, config, SEED_1024_EXAMPLE, {
      implFactory: mutantNamed('ring-wrap-ignores-submitted').createImpl,
    });
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.failure.step).toBe(
        SEED_1024_EXAMPLE.findIndex((command) => command.op === 'cancel') + 1,
      );
      expect(outcome.failure.check).toBe('gpu-in-flight-untouched');
      expect(outcome.failure.implObservation).toEqual({ offsetBytes: 0 });
    }
  });

  it("the seed's race: a ring that checks only submitted ranges gives two reservations the same bytes", () => {
    const program: Command[] = [
      { op: 'allocate', sizeBytes: 256, alignBytes: 1 },
      { op: 'allocate', sizeBytes: 256, alignBytes: 1 },
    ];
    const config = { capacityBytes: 1024 };
    expect(runSequence(ringUploadSystem, config, program).ok).toBe(true);
    const outcome = runSequence(ringUploadSystem, config, program, {
      implFactory: mutantNamed('ring-tracks-only-submitted').createImpl,
    });
    expect(outcome.ok ? null : outcome.failure.check).toBe('no-overlap');
  });
});

describe('ring-upload: accounting is judged against the caller, not against the other side', () => {
  /** The system with the model replaced too: model and implementation are the same code and always agree. */
  function twin(createImpl: SystemDef['createImpl']): SystemDef {
    return { ...ringUploadSystem, createModel: createImpl };
  }

  it('a ring that counts holes and padding as free is caught by accounting even when it is both sides', () => {
    const mutant = mutantNamed('ring-free-ignores-holes');
    const result = checkSystem(twin(mutant.createImpl), {
      seed: TEST_SEED,
      numRuns: 300,
      implFactory: mutant.createImpl,
    });
    expect(result.failed).toBe(true);
    if (result.failed) expect(result.failure.check).toBe('accounting');
    // The smallest case: a hole behind the head, model and implementation in full agreement.
    const program: Command[] = [
      { op: 'allocate', sizeBytes: 40, alignBytes: 1 },
      { op: 'allocate', sizeBytes: 40, alignBytes: 1 },
      { op: 'cancel', index: 1 },
    ];
    const outcome = runSequence(twin(mutant.createImpl), { capacityBytes: 100 }, program, {
      implFactory: mutant.createImpl,
    });
    expect(
      outcome.ok ? null : [outcome.failure.step, outcome.failure.check, outcome.failure.diff],
    ).toEqual([2, 'accounting', []]);
  });

  it('the shipped ring is its own twin: the checks against the caller hold', () => {
    const system = twin(ringUploadSystem.createImpl);
    const result = checkSystem(system, { seed: TEST_SEED, numRuns: 200 });
    expect(result.failed ? result.failure.message : null).toBeNull();
  });

  for (const [name, make] of [
    ['model', (capacityBytes: number) => new RingUploadModel(capacityBytes)],
    ['implementation', (capacityBytes: number) => new RingUploadAllocatorImpl(capacityBytes)],
  ] as const) {
    it(`${name}: waste counts padding, the skipped tail of a wrap and holes, and leaves the arc with the head`, () => {
      const ring: RingUploadAllocator = make(100);
      expect(ring.allocate(10, 1)).toBe(0);
      expect(ring.allocate(10, 16)).toBe(16); // 6 bytes of padding
      expect(ring.allocate(64, 1)).toBe(26);
      expect([ring.freeBytes(), ring.usedBytes(), ring.wasteBytes()]).toEqual([10, 84, 6]);
      ring.cancel(0); // the head moves to 16: the 6 bytes of padding leave the arc
      expect([ring.freeBytes(), ring.usedBytes(), ring.wasteBytes()]).toEqual([26, 74, 0]);
      expect(ring.allocate(12, 1)).toBe(0); // wraps: the 10-byte tail is skipped
      expect([ring.freeBytes(), ring.usedBytes(), ring.wasteBytes()]).toEqual([4, 86, 10]);
      ring.cancel(26); // a hole behind the head
      expect([ring.freeBytes(), ring.usedBytes(), ring.wasteBytes()]).toEqual([4, 22, 74]);
      ring.cancel(16); // the head jumps over the hole and the skipped tail to 0
      expect([ring.freeBytes(), ring.usedBytes(), ring.wasteBytes()]).toEqual([88, 12, 0]);
    });
  }
});

describe('number deque (the ring buffers under the ring and the deferred-free FIFOs)', () => {
  it('keeps FIFO order across wrap-around and growth', () => {
    const deque = new NumberDeque(4);
    const expected: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < (round % 5) + 1; i++) {
        deque.push(next);
        expected.push(next++);
      }
      for (let i = 0; i < round % 3 && expected.length > 0; i++) {
        expect(deque.peekFront()).toBe(expected.shift());
        deque.popFront();
      }
      expect(deque.count).toBe(expected.length);
      expect(Array.from({ length: deque.count }, (_, i) => deque.at(i))).toEqual(expected);
    }
    expect(() => new NumberDeque(6)).toThrow();
  });
});

describe('queue timeline (the GPU judge)', () => {
  it('completes only signalled values and forgets reads once their value completed', () => {
    const timeline = new QueueTimeline();
    timeline.submitRead(0, 64, timeline.nextValueToSignal, 1);
    expect(timeline.advance(5)).toBe(0);
    expect(timeline.findInFlightOverlap(32, 1)).toEqual({
      offsetBytes: 0,
      sizeBytes: 64,
      fenceValue: 1,
      ownerId: 1,
    });
    expect(timeline.findInFlightOverlap(64, 1)).toBeNull();
    expect(timeline.signal()).toBe(1);
    timeline.submitRead(64, 64, timeline.nextValueToSignal, 2);
    expect(timeline.advance(5)).toBe(1);
    expect(timeline.findInFlightOverlap(0, 64)).toBeNull();
    expect(timeline.inFlightCount).toBe(1);
    // Work stamped with an already completed value is done at once.
    timeline.submitRead(0, 8, 1, 3);
    expect(timeline.inFlightCount).toBe(1);
  });
});
