/**
 * The native ring upload allocator: the `ring-upload` system (src/systems/ring-upload.ts: the
 * same ops, model, GPU timeline and checks) whose implementation side is a driver process that
 * declared `system=ring-upload` in its hello. The harness records the model's calls of the ring's
 * API over the whole run (native-calls.ts), the driver answers them in one batch, and the
 * implementation side's ring hands the answers out call by call.
 *
 * The ring's own inspection (live(), rangeAt(), freeBytes(), ...) is not asked of the driver:
 * the implementation side reads the ranges the driver's answers describe (what it handed out,
 * submitted, cancelled and collected). So the invariants judge the answers: nothing handed out
 * over bytes the GPU still reads (the timeline's judge), no overlap, inside the ring and
 * aligned, every answer the model's.
 */
import type { CommandOf } from '../harness/system.js';
import { Nat, Str, Strict, type Static } from '../harness/schema.js';
import type { RingRange, RingUploadAllocator } from '../alloc/ring-upload-types.js';
import { RingUploadModel } from '../../models/ring-upload.js';
import { ringUploadSystem } from '../systems/ring-upload.js';
import {
  RING_MAX_CAPACITY_BYTES,
  ringSide,
  type RingSide,
  type RingUploadConfig,
} from '../systems/ring-upload-side.js';
import { RING_OPS } from './protocol.js';
import type { CallRecorder, NativeCalls } from './native-calls.js';
import { nativeCallSystem, type CallSystem } from './native-call-system.js';
import type { NativeDriver } from './driver.js';

export const NATIVE_RING_UPLOAD_SYSTEM = 'native-ring-upload';

export const NativeRingUploadConfigSchema = Strict({
  capacityBytes: Nat({ description: `bytes in the ring, 1..${RING_MAX_CAPACITY_BYTES}` }),
  executable: Str({
    description:
      'the driver executable, relative to the project root (the folder of gpumv.config, else the working directory)',
  }),
});
export type NativeRingUploadConfig = Static<typeof NativeRingUploadConfigSchema>;

/** The model's ring, its calls recorded. */
class RecordingRing implements RingUploadAllocator {
  constructor(
    private readonly model: RingUploadModel,
    private readonly recorder: CallRecorder,
  ) {}
  get capacityBytes(): number {
    return this.model.capacityBytes;
  }
  allocate(sizeBytes: number, alignBytes: number): number | null {
    return this.recorder.call(RING_OPS.allocate, [sizeBytes, alignBytes], () =>
      this.model.allocate(sizeBytes, alignBytes),
    );
  }
  submit(offsetBytes: number, fenceValue: number): void {
    this.recorder.call(RING_OPS.submit, [offsetBytes, fenceValue], () =>
      this.model.submit(offsetBytes, fenceValue),
    );
  }
  cancel(offsetBytes: number): void {
    this.recorder.call(RING_OPS.cancel, [offsetBytes], () => this.model.cancel(offsetBytes));
  }
  collect(completedValue: number): number[] {
    return this.recorder.call(RING_OPS.collect, [completedValue], () =>
      this.model.collect(completedValue),
    );
  }
  rangeAt(offsetBytes: number): RingRange | null {
    return this.model.rangeAt(offsetBytes);
  }
  live(): RingRange[] {
    return this.model.live();
  }
  freeBytes(): number {
    return this.model.freeBytes();
  }
  usedBytes(): number {
    return this.model.usedBytes();
  }
  wasteBytes(): number {
    return this.model.wasteBytes();
  }
  isPristine(): boolean {
    return this.model.isPristine();
  }
}

interface ShadowRange {
  offsetBytes: number;
  sizeBytes: number;
  state: 'reserved' | 'submitted';
  fenceValue: number | null;
}

/**
 * The implementation side's ring: the driver's answers, and the ranges they describe (in
 * hand-out order), which its inspection reads.
 */
export class NativeRing implements RingUploadAllocator {
  private readonly ranges: ShadowRange[] = [];
  private cursorBytes = 0;

  constructor(
    readonly capacityBytes: number,
    readonly calls: NativeCalls,
  ) {}

  allocate(sizeBytes: number, alignBytes: number): number | null {
    const what = `allocate(${sizeBytes}, ${alignBytes})`;
    const values = this.calls.take(RING_OPS.allocate, [sizeBytes, alignBytes], what);
    if (values === undefined) return null;
    if (values.length !== 1) return this.calls.wrongShape(what, values) ?? null;
    const offsetBytes = values[0]!;
    if (offsetBytes !== null) {
      this.ranges.push({ offsetBytes, sizeBytes, state: 'reserved', fenceValue: null });
      this.cursorBytes = offsetBytes + sizeBytes;
    }
    return offsetBytes;
  }

  submit(offsetBytes: number, fenceValue: number): void {
    const what = `submit(${offsetBytes}, ${fenceValue})`;
    const values = this.calls.take(RING_OPS.submit, [offsetBytes, fenceValue], what);
    if (values === undefined) return;
    if (values.length !== 0) {
      this.calls.wrongShape(what, values);
      return;
    }
    const range = this.ranges.find((candidate) => candidate.offsetBytes === offsetBytes);
    if (range !== undefined) {
      range.state = 'submitted';
      range.fenceValue = fenceValue;
    }
  }

  cancel(offsetBytes: number): void {
    const what = `cancel(${offsetBytes})`;
    const values = this.calls.take(RING_OPS.cancel, [offsetBytes], what);
    if (values === undefined) return;
    if (values.length !== 0) {
      this.calls.wrongShape(what, values);
      return;
    }
    this.forget(offsetBytes);
  }

  collect(completedValue: number): number[] {
    const values = this.calls.take(
      RING_OPS.collect,
      [completedValue],
      `collect(${completedValue})`,
    );
    if (values === undefined) return [];
    const freed = values.map((value) => value ?? -1);
    for (const offsetBytes of freed) this.forget(offsetBytes);
    return freed;
  }

  private forget(offsetBytes: number): void {
    const at = this.ranges.findIndex((candidate) => candidate.offsetBytes === offsetBytes);
    if (at !== -1) this.ranges.splice(at, 1);
  }

  rangeAt(offsetBytes: number): RingRange | null {
    const range = this.ranges.find((candidate) => candidate.offsetBytes === offsetBytes);
    return range === undefined ? null : { ...range };
  }

  live(): RingRange[] {
    return this.ranges.map((range) => ({ ...range })).sort((a, b) => a.offsetBytes - b.offsetBytes);
  }

  /** The arc from the cursor (the end of the last range handed out) to the nearest live range. */
  freeBytes(): number {
    if (this.ranges.length === 0) return this.capacityBytes;
    const cursor = this.cursorBytes % this.capacityBytes;
    let nearest = this.capacityBytes;
    for (const range of this.ranges) {
      const ahead =
        (((range.offsetBytes - cursor) % this.capacityBytes) + this.capacityBytes) %
        this.capacityBytes;
      if (ahead < nearest) nearest = ahead;
    }
    return nearest;
  }

  usedBytes(): number {
    let used = 0;
    for (const range of this.ranges) used += range.sizeBytes;
    return used;
  }

  /** The rest of the ring (the driver is not asked: its answers are what is judged). */
  wasteBytes(): number {
    return this.capacityBytes - this.freeBytes() - this.usedBytes();
  }

  isPristine(): boolean {
    return this.ranges.length === 0;
  }
}

type RingCommand = CommandOf<typeof ringUploadSystem>;

export type NativeRingUploadSystem = CallSystem<
  typeof NativeRingUploadConfigSchema,
  RingCommand,
  RingSide
>;

/** The system of a started driver that declared `system=ring-upload`; `executable` as configs record it. */
export function nativeRingUploadSystem(
  driver: NativeDriver,
  executable: string,
): NativeRingUploadSystem {
  const base = ringUploadSystem;
  const plain = (config: NativeRingUploadConfig): RingUploadConfig => ({
    capacityBytes: config.capacityBytes,
  });
  return nativeCallSystem({
    name: NATIVE_RING_UPLOAD_SYSTEM,
    summary: `the native ring upload allocator ${executable}`,
    base,
    schema: NativeRingUploadConfigSchema,
    driver,
    executable,
    plain,
    checkConfig: (config) => base.checkConfig(plain(config)),
    configArb: () =>
      base.configArb().map((config) => ({ capacityBytes: config.capacityBytes, executable })),
    callsOf: (side) => (side.ring instanceof NativeRing ? side.ring.calls : null),
    recording: (config, recorder) =>
      ringSide(new RecordingRing(new RingUploadModel(config.capacityBytes), recorder), config, {
        probe() {},
      }),
    capacityBytes: (config) => config.capacityBytes,
    setup: () => [],
    impl: (config, env, calls) =>
      ringSide(new NativeRing(config.capacityBytes, calls), config, env),
  });
}

/** The schemas of native-ring-upload files: its config, and the ring's commands. */
export const nativeRingUploadSchemas = {
  name: NATIVE_RING_UPLOAD_SYSTEM,
  configSchema: NativeRingUploadConfigSchema,
  commandSchemas: ringUploadSystem.commandSchemas,
};
