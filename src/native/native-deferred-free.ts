/**
 * The native fence-delayed free list: the `deferred-free` system (src/systems/deferred-free.ts:
 * the same ops, model, GPU timeline and checks) whose implementation side is a driver process
 * that declared `system=deferred-free` in its hello, and which sub-allocator kinds it sits on
 * (`kinds=first-fit`, say: the generated configs use those). The harness records the model's
 * calls of the deferred layer's API over the whole run, each with the frame fence's values at
 * that moment (native-calls.ts); the driver answers them in one batch, each answer followed by
 * its readings (pending, pooled, held count, and its sub-allocator's free, used and waste bytes).
 *
 * The sub-allocator's live allocations are not asked of the driver: the implementation side
 * keeps what the answers say it holds (live allocations, pending releases, pooled objects; an
 * allocation whose readings show fewer held entries gave back every completed one, as the
 * model's rule says, and a driver that gave back others disagrees with the model's held count).
 */
import type { CommandOf } from '../harness/system.js';
import { Str, Strict, type Static } from '../harness/schema.js';
import type { BlockAllocator, BlockInfo, LiveAllocation } from '../alloc/allocator.js';
import type { SubAllocatorKind } from '../alloc/config.js';
import type {
  DeferredFreeAllocator,
  FrameFence,
  PoolAcquireResult,
} from '../alloc/deferred-free-types.js';
import { createSubAllocatorModel } from '../../models/alloc-index.js';
import { DeferredFreeModel } from '../../models/deferred-free.js';
import { deferredFreeSystem } from '../systems/deferred-free.js';
import {
  DEFERRED_KINDS,
  DeferredFreeConfigSchema,
  deferredSide,
  type DeferredConfig,
  type DeferredSide,
} from '../systems/deferred-free-side.js';
import { DEFERRED_KIND_CODES, DEFERRED_OPS, type WireCall } from './protocol.js';
import type { CallAnswer, CallRecorder, NativeCalls } from './native-calls.js';
import { nativeCallSystem, type CallSystem } from './native-call-system.js';
import { DriverStartError, type NativeDriver } from './driver.js';

export const NATIVE_DEFERRED_FREE_SYSTEM = 'native-deferred-free';

export const NativeDeferredFreeConfigSchema = Strict({
  ...DeferredFreeConfigSchema.properties,
  executable: Str({
    description:
      'the driver executable, relative to the project root (the folder of gpumv.config, else the working directory)',
  }),
});
export type NativeDeferredFreeConfig = Static<typeof NativeDeferredFreeConfigSchema>;

/** The readings that follow every answer of a deferred-free driver. */
const READINGS = 6;

/** A call's fence arguments: the frame fence's next value to signal and its completed value. */
function fenceArgs(fence: FrameFence): [number, number] {
  return [fence.nextValueToSignal, fence.completedValue];
}

/** The model's deferred layer, its calls recorded with the fence's values. */
class RecordingDeferred implements DeferredFreeAllocator {
  constructor(
    private readonly model: DeferredFreeModel,
    private readonly fence: FrameFence,
    private readonly recorder: CallRecorder,
  ) {}
  get capacityBytes(): number {
    return this.model.capacityBytes;
  }
  get inner(): BlockAllocator {
    return this.model.inner;
  }
  private call<T>(code: number, a: number, b: number, run: () => T): T {
    return this.recorder.call(code, [a, b, ...fenceArgs(this.fence)], run);
  }
  alloc(sizeBytes: number, alignBytes: number): number | null {
    return this.call(DEFERRED_OPS.alloc, sizeBytes, alignBytes, () =>
      this.model.alloc(sizeBytes, alignBytes),
    );
  }
  release(offsetBytes: number): void {
    this.call(DEFERRED_OPS.release, offsetBytes, 0, () => this.model.release(offsetBytes));
  }
  endFrame(): number[] {
    return this.call(DEFERRED_OPS.endFrame, 0, 0, () => this.model.endFrame());
  }
  poolAcquire(sizeClass: number): PoolAcquireResult | null {
    return this.call(DEFERRED_OPS.poolAcquire, sizeClass, 0, () =>
      this.model.poolAcquire(sizeClass),
    );
  }
  poolRelease(offsetBytes: number): void {
    this.call(DEFERRED_OPS.poolRelease, offsetBytes, 0, () => this.model.poolRelease(offsetBytes));
  }
  poolTrim(): number[] {
    return this.call(DEFERRED_OPS.poolTrim, 0, 0, () => this.model.poolTrim());
  }
  pendingBytes(): number {
    return this.model.pendingBytes();
  }
  pooledBytes(): number {
    return this.model.pooledBytes();
  }
  heldCount(): number {
    return this.model.heldCount();
  }
}

/** What the implementation side knows the sub-allocator holds, from the answers. */
interface Held {
  readonly offsetBytes: number;
  readonly sizeBytes: number;
  state: 'live' | 'pending' | 'pooled';
  /** The fence's next value when it was released or pooled. */
  stamp: number;
}

/**
 * The implementation side's deferred layer: the driver's answers and readings, and what they say
 * the sub-allocator holds (its `inner`, read by the invariants).
 */
export class NativeDeferred implements DeferredFreeAllocator {
  /** pending, pooled, held count, free, used, waste: the last answer's readings. */
  private readings: number[];
  private readonly held: Held[] = [];
  readonly inner: BlockAllocator;

  constructor(
    private readonly config: DeferredConfig,
    private readonly fence: FrameFence,
    readonly calls: NativeCalls,
  ) {
    this.readings = [0, 0, 0, config.capacityBytes, 0, 0];
    this.inner = this.shadowInner();
  }

  get capacityBytes(): number {
    return this.config.capacityBytes;
  }

  /** The driver's answer to a call: its values before the readings (which are kept), or undefined. */
  private take(
    code: number,
    a: number,
    b: number,
    what: string,
    n: number | null,
  ): CallAnswer | undefined {
    const values = this.calls.take(code, [a, b, ...fenceArgs(this.fence)], what);
    if (values === undefined) return undefined;
    const results = values.length - READINGS;
    if (results < 0 || (n !== null && results !== n) || values.slice(results).includes(null))
      return this.calls.wrongShape(what, values);
    this.readings = values.slice(results) as number[];
    return values.slice(0, results);
  }

  private find(offsetBytes: number, state: Held['state']): number {
    return this.held.findIndex((h) => h.offsetBytes === offsetBytes && h.state === state);
  }

  /** An allocation whose readings show fewer held entries gave back every completed one. */
  private reclaimed(heldBefore: number): void {
    if (this.heldCount() >= heldBefore) return;
    for (let i = this.held.length - 1; i >= 0; i--) {
      const h = this.held[i]!;
      if (h.state !== 'live' && h.stamp <= this.fence.completedValue) this.held.splice(i, 1);
    }
  }

  alloc(sizeBytes: number, alignBytes: number): number | null {
    const heldBefore = this.heldCount();
    const values = this.take(
      DEFERRED_OPS.alloc,
      sizeBytes,
      alignBytes,
      `alloc(${sizeBytes}, ${alignBytes})`,
      1,
    );
    if (values === undefined) return null;
    this.reclaimed(heldBefore);
    const offsetBytes = values[0] ?? null;
    if (offsetBytes !== null) this.held.push({ offsetBytes, sizeBytes, state: 'live', stamp: 0 });
    return offsetBytes;
  }

  private stamp(
    offsetBytes: number,
    code: number,
    state: 'pending' | 'pooled',
    what: string,
  ): void {
    if (this.take(code, offsetBytes, 0, what, 0) === undefined) return;
    const at = this.find(offsetBytes, 'live');
    if (at !== -1) {
      this.held[at]!.state = state;
      this.held[at]!.stamp = this.fence.nextValueToSignal;
    }
  }

  release(offsetBytes: number): void {
    this.stamp(offsetBytes, DEFERRED_OPS.release, 'pending', `release(${offsetBytes})`);
  }

  poolRelease(offsetBytes: number): void {
    this.stamp(offsetBytes, DEFERRED_OPS.poolRelease, 'pooled', `poolRelease(${offsetBytes})`);
  }

  private returned(code: number, state: 'pending' | 'pooled', what: string): number[] {
    const values = this.take(code, 0, 0, what, null);
    if (values === undefined) return [];
    const offsets = values.map((value) => value ?? -1);
    for (const offsetBytes of offsets) {
      const at = this.find(offsetBytes, state);
      if (at !== -1) this.held.splice(at, 1);
    }
    return offsets;
  }

  endFrame(): number[] {
    return this.returned(DEFERRED_OPS.endFrame, 'pending', 'endFrame()');
  }

  poolTrim(): number[] {
    return this.returned(DEFERRED_OPS.poolTrim, 'pooled', 'poolTrim()');
  }

  poolAcquire(sizeClass: number): PoolAcquireResult | null {
    const heldBefore = this.heldCount();
    const what = `poolAcquire(${sizeClass})`;
    const values = this.take(DEFERRED_OPS.poolAcquire, sizeClass, 0, what, 2);
    if (values === undefined) return null;
    const offsetBytes = values[0] ?? null;
    if (offsetBytes === null) {
      this.reclaimed(heldBefore);
      return null;
    }
    const hit = values[1] === 1;
    if (hit) {
      const at = this.find(offsetBytes, 'pooled');
      if (at !== -1) this.held[at]!.state = 'live';
    } else {
      this.reclaimed(heldBefore);
      const sizeBytes = this.config.objectSizesBytes[sizeClass] ?? 0;
      this.held.push({ offsetBytes, sizeBytes, state: 'live', stamp: 0 });
    }
    return { offsetBytes, hit };
  }

  pendingBytes(): number {
    return this.readings[0]!;
  }
  pooledBytes(): number {
    return this.readings[1]!;
  }
  heldCount(): number {
    return this.readings[2]!;
  }

  /** The sub-allocator as the answers describe it: what it holds, and the driver's readings of its bytes. */
  private shadowInner(): BlockAllocator {
    const self = this;
    const refuse = (): never => {
      throw new Error('the native sub-allocator is inspected only');
    };
    return {
      get capacityBytes() {
        return self.config.capacityBytes;
      },
      alloc: refuse,
      free: refuse,
      live(): LiveAllocation[] {
        return self.held
          .map((h) => ({ offsetBytes: h.offsetBytes, sizeBytes: h.sizeBytes }))
          .sort((a, b) => a.offsetBytes - b.offsetBytes);
      },
      freeBytes: () => self.readings[3]!,
      usedBytes: () => self.readings[4]!,
      wasteBytes: () => self.readings[5]!,
      isPristine: () => self.readings[3] === self.config.capacityBytes && self.held.length === 0,
      blocks: (): BlockInfo[] => refuse(),
      checkIndexes: () => null,
    };
  }
}

type DeferredCommand = CommandOf<typeof deferredFreeSystem>;

export type NativeDeferredFreeSystem = CallSystem<
  typeof NativeDeferredFreeConfigSchema,
  DeferredCommand,
  DeferredSide
> & { readonly kinds: readonly SubAllocatorKind[] };

function baseConfig(config: NativeDeferredFreeConfig): DeferredConfig {
  const { executable: _executable, ...rest } = config;
  return rest;
}

/** The set-up records of a run: the sub-allocator's kind, its config and the pool's size classes. */
function setupCalls(config: DeferredConfig): WireCall[] {
  return [
    { code: DEFERRED_OPS.kind, args: [DEFERRED_KIND_CODES.indexOf(config.kind)] },
    {
      code: DEFERRED_OPS.config,
      args: [
        config.minBlockBytes,
        config.poolAlignBytes,
        config.maxAllocationBytes,
        config.objectAlignBytes,
      ],
    },
    ...config.objectSizesBytes.map((size) => ({ code: DEFERRED_OPS.sizeClass, args: [size] })),
  ];
}

/** The sub-allocator kinds a driver's hello declares (`kinds=first-fit,buddy`); a string names the problem. */
export function declaredKinds(driver: NativeDriver): SubAllocatorKind[] | string {
  const text = driver.hello.fields.get('kinds');
  if (text === undefined)
    return `its hello declares no kinds (one or more of ${DEFERRED_KINDS.join(', ')})`;
  const kinds = text.split(',').map((kind) => kind.trim());
  const unknown = kinds.find((kind) => !DEFERRED_KINDS.includes(kind as SubAllocatorKind));
  if (unknown !== undefined || kinds.length === 0)
    return `its hello declares kinds=${text}; expected one or more of ${DEFERRED_KINDS.join(', ')}`;
  return kinds as SubAllocatorKind[];
}

/** The system of a started driver that declared `system=deferred-free`; `executable` as configs record it. */
export function nativeDeferredFreeSystem(
  driver: NativeDriver,
  executable: string,
): NativeDeferredFreeSystem {
  const kinds = declaredKinds(driver);
  if (typeof kinds === 'string') throw new DriverStartError(executable, kinds);
  const base = deferredFreeSystem;
  const system = nativeCallSystem({
    name: NATIVE_DEFERRED_FREE_SYSTEM,
    summary: `the native fence-delayed free list ${executable} (over ${kinds.join(', ')})`,
    base,
    schema: NativeDeferredFreeConfigSchema,
    driver,
    executable,
    plain: baseConfig,
    checkConfig: (config) =>
      kinds.includes(config.kind)
        ? base.checkConfig(baseConfig(config))
        : `kind ${config.kind} is not one the driver declares (${kinds.join(', ')})`,
    // A kind the driver does not declare becomes one it does (the shapes suit every kind).
    configArb: () =>
      base.configArb().map((config) => ({
        ...config,
        kind: kinds.includes(config.kind)
          ? config.kind
          : kinds[DEFERRED_KINDS.indexOf(config.kind) % kinds.length]!,
        executable,
      })),
    callsOf: (side) => (side.allocator instanceof NativeDeferred ? side.allocator.calls : null),
    recording: (config, recorder) =>
      deferredSide(
        config,
        { probe() {} },
        (c, fence) =>
          new RecordingDeferred(
            new DeferredFreeModel(createSubAllocatorModel(c.kind, c), fence, c),
            fence,
            recorder,
          ),
      ),
    capacityBytes: (config) => config.capacityBytes,
    setup: setupCalls,
    impl: (config, env, calls) =>
      deferredSide(config, env, (c, fence) => new NativeDeferred(c, fence, calls)),
  });
  return { ...system, kinds };
}

/** The schemas of native-deferred-free files: its config, and the deferred layer's commands. */
export const nativeDeferredFreeSchemas = {
  name: NATIVE_DEFERRED_FREE_SYSTEM,
  configSchema: NativeDeferredFreeConfigSchema,
  commandSchemas: deferredFreeSystem.commandSchemas,
};
