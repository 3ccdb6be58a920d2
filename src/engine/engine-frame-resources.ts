/**
 * The engine layer's resources (implementation side): the object layout, the pool heaps (one
 * fence-delayed free layer over a best-fit sub-allocator each), committed slots, backing heaps,
 * the frame fence with deferred deletion, and creation as the routing ladder routes it (committed,
 * placed, reserved, transient with lifetime aliasing). src/engine/engine-frame.ts adds command
 * lists, submission and defrag on top. Steps the bug catalog overrides are protected methods.
 */
import { ContractError } from '../contract.js';
import { createSubAllocator } from '../alloc/index.js';
import { DeferredFreeAllocatorImpl } from '../alloc/deferred-free.js';
import type { DeferredFreeAllocator, FrameFence } from '../alloc/deferred-free-types.js';
import {
  CreateFlags,
  EngineErrors,
  objectLayout,
  type CreatedResource,
  type EngineEvents,
  type EngineFrameConfig,
  type ObjectLayout,
  type ResidencyPort,
  type ResourceKind,
} from './engine-frame-types.js';
import { present } from '../assert.js';

/** The one queue the engine submits to (the direct queue). */
export const QUEUE = 0;

export interface EngineResource {
  readonly id: number;
  readonly kind: ResourceKind;
  /** Committed slot, pool heap, transient heap or untracked object; -1 for reserved. */
  readonly object: number;
  /** Pool heap index of a placed resource, else -1. */
  readonly heap: number;
  offsetBytes: number;
  readonly sizeBytes: number;
  locked: boolean;
  released: boolean;
  /** Reserved: the backing heaps now mapped, in commit order. */
  readonly backing: number[];
  readonly firstPass: number;
  readonly lastPass: number;
}

export abstract class EngineFrameResources {
  readonly layout: ObjectLayout;
  protected readonly resources: EngineResource[] = [];
  protected readonly pools: DeferredFreeAllocator[] = [];
  /** Committed slot -> resource id holding it, or -1 (free), -2 (pending deletion). */
  protected readonly slotOwner: Int32Array;
  /** Backing heap -> 1 when mapped or pending deletion. */
  protected readonly backingTaken: Uint8Array;
  /** Pageables waiting for their frame's fence before they end tracking: object, stamp pairs. */
  protected readonly pendingDeletes: number[] = [];
  /** Queue fence value of each ended frame. */
  protected readonly frameValues: number[] = [];
  protected framesDone = 0;
  protected readonly liveTransients: number[] = [];
  /** The frame fence as the pool heaps see it (FD3D12ManualFence). */
  protected readonly poolFence: FrameFence;

  constructor(
    readonly config: EngineFrameConfig,
    protected readonly port: ResidencyPort,
    protected readonly events: EngineEvents = () => {},
  ) {
    this.layout = objectLayout(config);
    const engine = this;
    this.poolFence = {
      get nextValueToSignal() {
        return engine.frameValues.length + 1;
      },
      get completedValue() {
        return engine.poolCompletedFrames();
      },
    };
    for (let h = 0; h < config.poolHeapCount; h++) {
      const inner = createSubAllocator('best-fit', {
        capacityBytes: config.poolHeapBytes,
        poolAlignBytes: config.poolAlignBytes,
        maxAllocationBytes: config.poolMaxAllocBytes,
      });
      this.pools.push(
        new DeferredFreeAllocatorImpl(inner, this.poolFence, {
          objectSizesBytes: [config.poolAlignBytes],
          objectAlignBytes: config.poolAlignBytes,
        }),
      );
      port.beginTracking(this.layout.poolHeapBase + h);
    }
    this.slotOwner = new Int32Array(config.committedSlotBytes.length).fill(-1);
    this.backingTaken = new Uint8Array(config.backingHeapCount);
    const L = this.layout;
    port.beginTracking(L.transientHeap);
    port.beginTracking(L.queryHeap);
    port.beginTracking(L.queryResult);
    // Resources 0 and 1: the query heap and its result buffer (internal, committed, never released).
    this.addResource('committed', L.queryHeap, -1, 0, 1);
    this.addResource('committed', L.queryResult, -1, 0, 1);
    for (let i = 0; i < config.backBufferCount; i++) {
      this.createUntracked(L.backBufferBase + i);
      this.addResource('backbuffer', L.backBufferBase + i, -1, 0, config.untrackedBytes);
    }
    for (let i = 0; i < config.externalCount; i++) {
      this.createUntracked(L.externalBase + i);
      this.addResource('external', L.externalBase + i, -1, 0, config.untrackedBytes);
    }
  }

  protected addResource(
    kind: ResourceKind,
    object: number,
    heap: number,
    offsetBytes: number,
    sizeBytes: number,
    firstPass = 0,
    lastPass = 0,
  ): EngineResource {
    const resource: EngineResource = {
      id: this.resources.length,
      kind,
      object,
      heap,
      offsetBytes,
      sizeBytes,
      locked: false,
      released: false,
      backing: [],
      firstPass,
      lastPass,
    };
    this.resources.push(resource);
    return resource;
  }

  protected view(r: EngineResource): CreatedResource {
    return {
      id: r.id,
      kind: r.kind,
      object: r.object,
      offsetBytes: r.offsetBytes,
      sizeBytes: r.sizeBytes,
    };
  }

  /** A resource the engine listed itself (a transient, a touched or deferred one, a commit's). */
  protected tracked(id: number): EngineResource {
    return present(this.resources[id], 'the engine lists only resources it created', id);
  }

  protected resource(id: number): EngineResource {
    const r = this.resources[id];
    if (r === undefined || r.released)
      throw new ContractError(EngineErrors.BAD_RESOURCE, `resource ${id} is not live`);
    return r;
  }

  // ---- frame fence ------------------------------------------------------------------------------

  /** Frames whose fence value the GPU has completed. */
  completedFrames(): number {
    const done = this.port.gpu.fenceCompleted(QUEUE);
    while (this.framesDone < this.frameValues.length && this.frameValues[this.framesDone]! <= done)
      this.framesDone++;
    return this.framesDone;
  }

  /** The completed value the pool heaps' fence-delayed frees read. */
  protected poolCompletedFrames(): number {
    return this.completedFrames();
  }

  /** Ends tracking of the pageables whose frame completed (~FD3D12Resource / ~FD3D12Heap). */
  protected processDeletions(): void {
    const done = this.completedFrames();
    const pending = this.pendingDeletes;
    let kept = 0;
    for (let i = 0; i < pending.length; i += 2) {
      const object = pending[i]!;
      const stamp = pending[i + 1]!;
      if (stamp <= done) {
        this.port.endTracking(object);
        const L = this.layout;
        if (object >= L.backingBase && object < L.backingBase + this.config.backingHeapCount)
          this.backingTaken[object - L.backingBase] = 0;
        else this.slotOwner[object - L.committedBase] = -1;
        this.events('deferred-delete');
      } else {
        pending[kept++] = object;
        pending[kept++] = stamp;
      }
    }
    pending.length = kept;
  }

  // ---- creation ---------------------------------------------------------------------------------

  /** Back buffers and external resources: created resident by the device, never tracked. */
  protected createUntracked(object: number): void {
    this.port.gpu.createObject(object, true);
  }

  /** The seed's ladder: reserved, then committed for RT/DS, shared, high alignment or above the pool limit, else placed. */
  create(sizeBytes: number, flags: number): CreatedResource | null {
    if (!(sizeBytes >= 1))
      throw new ContractError(EngineErrors.BAD_RESOURCE, `size ${sizeBytes} must be positive`);
    if ((flags & CreateFlags.RESERVED) !== 0) {
      this.events('route-reserved');
      return this.view(this.addResource('reserved', -1, -1, 0, sizeBytes));
    }
    const committed =
      (flags & (CreateFlags.RENDER_TARGET | CreateFlags.SHARED | CreateFlags.HIGH_ALIGN)) !== 0 ||
      sizeBytes > this.config.poolMaxAllocBytes;
    if (!committed) {
      for (let h = 0; h < this.pools.length; h++) {
        const offset = this.pools[h]!.alloc(sizeBytes, this.config.poolAlignBytes);
        if (offset !== null) {
          const r = this.addResource('placed', this.layout.poolHeapBase + h, h, offset, sizeBytes);
          r.locked = (flags & CreateFlags.INITIAL_DATA) !== 0;
          this.events('route-placed');
          return this.view(r);
        }
      }
      this.events('pool-full');
    }
    return this.createCommitted(sizeBytes);
  }

  protected createCommitted(sizeBytes: number): CreatedResource | null {
    this.processDeletions();
    const slots = this.config.committedSlotBytes;
    for (let s = 0; s < slots.length; s++) {
      if (this.slotOwner[s] === -1 && slots[s]! >= sizeBytes) {
        const object = this.layout.committedBase + s;
        this.port.beginTracking(object);
        const r = this.addResource('committed', object, -1, 0, sizeBytes);
        this.slotOwner[s] = r.id;
        this.events('route-committed');
        return this.view(r);
      }
    }
    this.events('committed-exhausted');
    return null;
  }

  unlock(id: number): void {
    this.resource(id).locked = false;
  }

  release(id: number): void {
    const r = this.resource(id);
    if (id < 2 || r.kind === 'backbuffer' || r.kind === 'external' || r.kind === 'transient') {
      throw new ContractError(
        EngineErrors.BAD_RESOURCE,
        `resource ${id} (${r.kind}) is not released by the application`,
      );
    }
    r.released = true;
    const stamp = this.frameValues.length + 1;
    if (r.kind === 'placed') this.pools[r.heap]!.release(r.offsetBytes);
    else if (r.kind === 'committed') {
      this.slotOwner[r.object - this.layout.committedBase] = -2;
      this.pendingDeletes.push(r.object, stamp);
    } else {
      for (const heap of r.backing) this.pendingDeletes.push(heap, stamp);
      r.backing.length = 0;
    }
  }

  /** Do two transient lifetimes (inclusive pass ranges) overlap? */
  protected lifetimesOverlap(
    firstA: number,
    lastA: number,
    firstB: number,
    lastB: number,
  ): boolean {
    return firstA <= lastB && firstB <= lastA;
  }

  /** First fit in the transient heap among the live transients whose lifetimes overlap. */
  createTransient(sizeBytes: number, firstPass: number, lastPass: number): CreatedResource | null {
    if (!(sizeBytes >= 1) || lastPass < firstPass)
      throw new ContractError(
        EngineErrors.BAD_RESOURCE,
        `bad transient ${sizeBytes} [${firstPass}, ${lastPass}]`,
      );
    const align = this.config.poolAlignBytes;
    const capacity = this.config.transientHeapBytes;
    let offset = 0;
    let aliased = false;
    // Candidate offsets ascend; each pass moves past the first conflict found, so the loop ends.
    for (;;) {
      if (offset + sizeBytes > capacity) {
        this.events('transient-full');
        return null;
      }
      let conflictEnd = -1;
      for (const id of this.liveTransients) {
        const t = this.tracked(id);
        const bytesOverlap =
          t.offsetBytes < offset + sizeBytes && offset < t.offsetBytes + t.sizeBytes;
        if (!bytesOverlap) continue;
        if (this.lifetimesOverlap(firstPass, lastPass, t.firstPass, t.lastPass)) {
          conflictEnd = Math.max(conflictEnd, t.offsetBytes + t.sizeBytes);
        }
      }
      if (conflictEnd < 0) break;
      offset = Math.ceil(conflictEnd / align) * align;
    }
    for (const id of this.liveTransients) {
      const t = this.tracked(id);
      if (t.offsetBytes < offset + sizeBytes && offset < t.offsetBytes + t.sizeBytes)
        aliased = true;
    }
    if (aliased) this.events('transient-aliased');
    const r = this.addResource(
      'transient',
      this.layout.transientHeap,
      -1,
      offset,
      sizeBytes,
      firstPass,
      lastPass,
    );
    this.liveTransients.push(r.id);
    return this.view(r);
  }
}
