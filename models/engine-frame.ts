/**
 * Reference model of the engine layer (src/engine/engine-frame-types.ts): the same frame loop as
 * src/engine/engine-frame.ts written as plainly as possible over the reference models of the
 * pieces (models/residency-manager.ts behind the port, models/alloc-best-fit.ts and
 * models/deferred-free.ts for the pool heaps). Arrays of records and linear scans only.
 *
 * Choices the seeds leave open, fixed here and in the implementation alike:
 * - resource ids count up from 0 (0: the query heap, 1: its result buffer, then back buffers,
 *   then external resources); list ids are pool positions;
 * - placed requests try the pool heaps in order and fall back to a committed slot when none has
 *   room; committed requests take the first free slot large enough;
 * - a list enters the payload stream when it is submitted; a commit enters it when requested;
 * - a batch takes lists while its recorded commands stay within maxCommandsPerBatch;
 * - the query resolve and the defrag copy run on a list of their own from the pool, executed at
 *   once as a batch of one;
 * - defrag tries the highest-offset unlocked block of the heap, and moves it only downwards;
 * - transients are first fit over offsets aligned to poolAlignBytes and die at end of frame;
 * - deletions (committed slots, unmapped backing heaps) are processed at end of frame and before
 *   a committed creation or a commit that grows.
 */
import { assert } from '../src/assert.js';
import { ContractError } from '../src/contract.js';
import { createSubAllocatorModel } from './alloc-index.js';
import { inspectLive, type LiveAllocation } from '../src/alloc/allocator.js';
import { DeferredFreeModel } from './deferred-free.js';
import type { FrameFence } from '../src/alloc/deferred-free-types.js';
import {
  CreateFlags,
  EngineErrors,
  objectLayout,
  type CreatedResource,
  type DefragMove,
  type EndFrameResult,
  type EngineEvents,
  type EngineFrame,
  type EngineFrameConfig,
  type FlushResult,
  type ObjectLayout,
  type RecordPath,
  type ResidencyPort,
  type ResourceKind,
} from '../src/engine/engine-frame-types.js';

interface Res {
  id: number;
  kind: ResourceKind;
  object: number;
  heap: number;
  offset: number;
  size: number;
  locked: boolean;
  released: boolean;
  backing: number[];
  first: number;
  last: number;
}

type State = 'free' | 'recording' | 'closed' | 'submitted';

interface List {
  id: number;
  set: number | null;
  state: State;
  touched: number[];
  deferred: number[];
  commands: number;
  queries: boolean;
}

/** The residency set of a list in use (a list keeps the set it got when it was first obtained). */
function setOf(l: List): number {
  assert(l.set !== null, 'a list in use has its residency set', l.id);
  return l.set;
}

type Entry = { list: number } | { commit: number; tiles: number };

export class EngineFrameModel implements EngineFrame {
  readonly layout: ObjectLayout;
  private res: Res[] = [];
  private lists: List[] = [];
  private pools: DeferredFreeModel[] = [];
  /** Committed slot owners: resource id, 'free' or 'deleting'. */
  private slots: (number | 'free' | 'deleting')[];
  private backingUsed: boolean[];
  private deletes: { object: number; stamp: number }[] = [];
  private payload: Entry[] = [];
  private frameValues: number[] = [];
  private framesDone = 0;
  /** This frame's transients. */
  private transients: Res[] = [];
  private commitSet: number | null = null;

  constructor(
    readonly config: EngineFrameConfig,
    private readonly port: ResidencyPort,
    private readonly events: EngineEvents = () => {},
  ) {
    this.layout = objectLayout(config);
    const L = this.layout;
    const fence: FrameFence = {
      get nextValueToSignal() {
        return model.frameValues.length + 1;
      },
      get completedValue() {
        return model.completedFrames();
      },
    };
    const model = this;
    for (let h = 0; h < config.poolHeapCount; h++) {
      const inner = createSubAllocatorModel('best-fit', {
        capacityBytes: config.poolHeapBytes,
        poolAlignBytes: config.poolAlignBytes,
        maxAllocationBytes: config.poolMaxAllocBytes,
      });
      this.pools.push(
        new DeferredFreeModel(inner, fence, {
          objectSizesBytes: [config.poolAlignBytes],
          objectAlignBytes: config.poolAlignBytes,
        }),
      );
      port.beginTracking(L.poolHeapBase + h);
    }
    this.slots = config.committedSlotBytes.map(() => 'free');
    this.backingUsed = Array.from({ length: config.backingHeapCount }, () => false);
    port.beginTracking(L.transientHeap);
    port.beginTracking(L.queryHeap);
    port.beginTracking(L.queryResult);
    this.add('committed', L.queryHeap, -1, 0, 1);
    this.add('committed', L.queryResult, -1, 0, 1);
    for (let i = 0; i < config.backBufferCount; i++) {
      port.gpu.createObject(L.backBufferBase + i, true);
      this.add('backbuffer', L.backBufferBase + i, -1, 0, config.untrackedBytes);
    }
    for (let i = 0; i < config.externalCount; i++) {
      port.gpu.createObject(L.externalBase + i, true);
      this.add('external', L.externalBase + i, -1, 0, config.untrackedBytes);
    }
    for (let i = 0; i < config.listCount; i++)
      this.lists.push({
        id: i,
        set: null,
        state: 'free',
        touched: [],
        deferred: [],
        commands: 0,
        queries: false,
      });
  }

  private add(
    kind: ResourceKind,
    object: number,
    heap: number,
    offset: number,
    size: number,
    first = 0,
    last = 0,
  ): Res {
    const r: Res = {
      id: this.res.length,
      kind,
      object,
      heap,
      offset,
      size,
      locked: false,
      released: false,
      backing: [],
      first,
      last,
    };
    this.res.push(r);
    return r;
  }

  private out(r: Res): CreatedResource {
    return { id: r.id, kind: r.kind, object: r.object, offsetBytes: r.offset, sizeBytes: r.size };
  }

  private live(id: number): Res {
    const r = this.res[id];
    if (r === undefined || r.released)
      throw new ContractError(EngineErrors.BAD_RESOURCE, `resource ${id} is not live`);
    return r;
  }

  private listIn(id: number, state: State): List {
    const l = this.lists[id];
    if (l === undefined || l.state !== state)
      throw new ContractError(EngineErrors.BAD_LIST, `list ${id} is not ${state}`);
    return l;
  }

  /** Frames whose fence value the GPU completed (fence values and the completed value only grow). */
  completedFrames(): number {
    const done = this.port.gpu.fenceCompleted(0);
    while (this.framesDone < this.frameValues.length && this.frameValues[this.framesDone]! <= done)
      this.framesDone++;
    return this.framesDone;
  }

  private processDeletes(): void {
    const done = this.completedFrames();
    const L = this.layout;
    const keep: { object: number; stamp: number }[] = [];
    for (const d of this.deletes) {
      if (d.stamp > done) {
        keep.push(d);
        continue;
      }
      this.port.endTracking(d.object);
      if (d.object >= L.backingBase && d.object < L.backingBase + this.config.backingHeapCount)
        this.backingUsed[d.object - L.backingBase] = false;
      else this.slots[d.object - L.committedBase] = 'free';
      this.events('deferred-delete');
    }
    this.deletes = keep;
  }

  create(sizeBytes: number, flags: number): CreatedResource | null {
    if (!(sizeBytes >= 1))
      throw new ContractError(EngineErrors.BAD_RESOURCE, `size ${sizeBytes} must be positive`);
    if (flags & CreateFlags.RESERVED) {
      this.events('route-reserved');
      return this.out(this.add('reserved', -1, -1, 0, sizeBytes));
    }
    const committed =
      (flags & (CreateFlags.RENDER_TARGET | CreateFlags.SHARED | CreateFlags.HIGH_ALIGN)) !== 0 ||
      sizeBytes > this.config.poolMaxAllocBytes;
    if (!committed) {
      for (let h = 0; h < this.pools.length; h++) {
        const offset = this.pools[h]!.alloc(sizeBytes, this.config.poolAlignBytes);
        if (offset === null) continue;
        const r = this.add('placed', this.layout.poolHeapBase + h, h, offset, sizeBytes);
        r.locked = (flags & CreateFlags.INITIAL_DATA) !== 0;
        this.events('route-placed');
        return this.out(r);
      }
      this.events('pool-full');
    }
    this.processDeletes();
    const s = this.slots.findIndex(
      (owner, i) => owner === 'free' && this.config.committedSlotBytes[i]! >= sizeBytes,
    );
    if (s < 0) {
      this.events('committed-exhausted');
      return null;
    }
    this.port.beginTracking(this.layout.committedBase + s);
    const r = this.add('committed', this.layout.committedBase + s, -1, 0, sizeBytes);
    this.slots[s] = r.id;
    this.events('route-committed');
    return this.out(r);
  }

  unlock(id: number): void {
    this.live(id).locked = false;
  }

  release(id: number): void {
    const r = this.live(id);
    if (id < 2 || r.kind === 'backbuffer' || r.kind === 'external' || r.kind === 'transient') {
      throw new ContractError(
        EngineErrors.BAD_RESOURCE,
        `resource ${id} (${r.kind}) is not released by the application`,
      );
    }
    r.released = true;
    const stamp = this.frameValues.length + 1;
    if (r.kind === 'placed') this.pools[r.heap]!.release(r.offset);
    else if (r.kind === 'committed') {
      this.slots[r.object - this.layout.committedBase] = 'deleting';
      this.deletes.push({ object: r.object, stamp });
    } else {
      for (const heap of r.backing) this.deletes.push({ object: heap, stamp });
      r.backing = [];
    }
  }

  createTransient(sizeBytes: number, firstPass: number, lastPass: number): CreatedResource | null {
    if (!(sizeBytes >= 1) || lastPass < firstPass)
      throw new ContractError(
        EngineErrors.BAD_RESOURCE,
        `bad transient ${sizeBytes} [${firstPass}, ${lastPass}]`,
      );
    const live = this.transients;
    const sameTime = live.filter((t) => firstPass <= t.last && t.first <= lastPass);
    const align = this.config.poolAlignBytes;
    // First fit: the lowest aligned offset whose bytes no lifetime-overlapping transient uses.
    for (let offset = 0; offset + sizeBytes <= this.config.transientHeapBytes; offset += align) {
      const clash = sameTime.some(
        (t) => t.offset < offset + sizeBytes && offset < t.offset + t.size,
      );
      if (clash) continue;
      if (live.some((t) => t.offset < offset + sizeBytes && offset < t.offset + t.size))
        this.events('transient-aliased');
      const t = this.add(
        'transient',
        this.layout.transientHeap,
        -1,
        offset,
        sizeBytes,
        firstPass,
        lastPass,
      );
      this.transients.push(t);
      return this.out(t);
    }
    this.events('transient-full');
    return null;
  }

  private obtain(): List | null {
    const l = this.lists.find((candidate) => candidate.state === 'free');
    if (l === undefined) {
      this.events('list-pool-empty');
      return null;
    }
    if (l.set === null) l.set = this.port.sets.createSet();
    else this.events('list-reset');
    this.port.sets.open(l.set);
    Object.assign(l, {
      state: 'recording',
      touched: [],
      deferred: [],
      commands: 0,
      queries: false,
    });
    return l;
  }

  openList(): number | null {
    return this.obtain()?.id ?? null;
  }

  /** GetResidencyHandles. */
  private handles(r: Res): number[] {
    if (r.kind === 'reserved') return r.backing;
    if (r.kind === 'backbuffer' || r.kind === 'external') return [];
    return [r.object];
  }

  private register(l: List, r: Res): void {
    if (r.kind === 'reserved') {
      if (!l.deferred.includes(r.id)) l.deferred.push(r.id);
    } else {
      for (const object of this.handles(r)) this.port.sets.insert(setOf(l), object);
    }
  }

  private touch(l: List, r: Res): void {
    if (!l.touched.includes(r.id)) l.touched.push(r.id);
  }

  record(listId: number, path: RecordPath, resId: number, res2Id: number): void {
    const l = this.listIn(listId, 'recording');
    l.commands++;
    if (path === 'query') {
      this.touch(l, this.res[0]!);
      this.register(l, this.res[0]!);
      l.queries = true;
      return;
    }
    const r = this.live(resId);
    const r2 = this.live(res2Id);
    this.touch(l, r);
    if (
      path === 'barrier' ||
      path === 'descriptorTable' ||
      path === 'renderTarget' ||
      path === 'clear'
    ) {
      this.register(l, r);
      return;
    }
    this.touch(l, r2);
    if (path === 'indirectArgs') {
      this.register(l, r2);
      this.register(l, r);
    } else {
      this.register(l, r);
      this.register(l, r2);
    }
  }

  closeList(listId: number): void {
    const l = this.listIn(listId, 'recording');
    if (l.deferred.length === 0) {
      this.port.sets.close(setOf(l));
      this.events('close-path-a');
    }
    l.state = 'closed';
  }

  submit(listId: number): void {
    this.listIn(listId, 'closed').state = 'submitted';
    this.payload.push({ list: listId });
  }

  commitReserved(id: number, tiles: number): void {
    const r = this.live(id);
    if (r.kind !== 'reserved')
      throw new ContractError(
        EngineErrors.BAD_RESOURCE,
        `resource ${id} (${r.kind}) is not reserved`,
      );
    this.payload.push({ commit: id, tiles });
  }

  flush(): FlushResult {
    const result = {
      batches: [] as number[][],
      hrs: [] as FlushResult['hrs'],
      commits: [] as number[],
      resolved: false,
    };
    const entries = this.payload;
    this.payload = [];
    let pending: List[] = [];
    for (const entry of entries) {
      if ('list' in entry) {
        pending.push(this.lists[entry.list]!);
        continue;
      }
      if (pending.length > 0) {
        this.events('commit-flushes-earlier');
        this.execute(pending, result);
        pending = [];
      }
      const r = this.res[entry.commit]!;
      if (r.released) continue;
      this.updateReserved(r, entry.tiles);
      result.commits.push(r.id);
    }
    if (pending.length > 0) this.execute(pending, result);
    return result;
  }

  private execute(
    lists: List[],
    result: { batches: number[][]; hrs: FlushResult['hrs']; resolved: boolean },
  ): void {
    // CloseResidencySet: path B for the lists that deferred reserved resources.
    for (const l of lists) {
      if (l.deferred.length === 0) continue;
      for (const id of l.deferred)
        for (const object of this.res[id]!.backing) this.port.sets.insert(setOf(l), object);
      this.port.sets.close(setOf(l));
      this.events('close-path-b');
    }
    let i = 0;
    while (i < lists.length) {
      const batch = [lists[i]!];
      let commands = lists[i]!.commands;
      for (
        i++;
        i < lists.length && commands + lists[i]!.commands <= this.config.maxCommandsPerBatch;
        i++
      ) {
        commands += lists[i]!.commands;
        batch.push(lists[i]!);
      }
      if (result.batches.length > 0 && batch[0] !== lists[0]) this.events('batch-split');
      result.hrs.push(this.run(batch));
      result.batches.push(batch.map((l) => l.id));
    }
    for (const l of lists) l.state = 'free';
    if (lists.some((l) => l.queries)) {
      result.resolved = true;
      const l = this.obtain();
      if (l !== null) {
        this.events('query-resolve');
        this.port.sets.insert(setOf(l), this.layout.queryHeap);
        this.port.sets.insert(setOf(l), this.layout.queryResult);
        l.touched = [0, 1];
        l.commands = 1;
        this.port.sets.close(setOf(l));
        this.events('close-path-a');
        l.state = 'free';
        this.run([l]);
      }
    }
  }

  /** ExecuteCommandLists with each list's true references as the GPU sees them now. */
  private run(batch: List[]): FlushResult['hrs'][number] {
    const refs = batch.map((l) => {
      const objects: number[] = [];
      for (const id of l.touched) {
        const r = this.res[id]!;
        for (const object of r.kind === 'reserved' ? r.backing : [r.object])
          if (!objects.includes(object)) objects.push(object);
      }
      return objects;
    });
    return this.port.executeCommandLists(
      0,
      refs,
      batch.map((l) => setOf(l)),
    );
  }

  private updateReserved(r: Res, tiles: number): void {
    if (tiles < r.backing.length) {
      const stamp = this.frameValues.length + 1;
      for (const heap of r.backing.splice(tiles)) this.deletes.push({ object: heap, stamp });
      this.events('reserved-shrink');
      return;
    }
    if (tiles === r.backing.length) return;
    this.processDeletes();
    const added: number[] = [];
    for (let b = 0; b < this.backingUsed.length && r.backing.length < tiles; b++) {
      if (this.backingUsed[b]) continue;
      this.backingUsed[b] = true;
      const heap = this.layout.backingBase + b;
      this.port.beginTracking(heap);
      r.backing.push(heap);
      added.push(heap);
    }
    if (added.length === 0) {
      this.events('backing-exhausted');
      return;
    }
    this.events('reserved-grow');
    if (this.commitSet === null) this.commitSet = this.port.sets.createSet();
    this.port.sets.open(this.commitSet);
    for (const heap of added) this.port.sets.insert(this.commitSet, heap);
    this.port.sets.close(this.commitSet);
    if (this.port.makeResidentForQueue(0, this.commitSet) === 'S_OK') {
      this.port.gpu.executeCommandLists(0, [added]);
      this.port.signalFence(0);
    }
  }

  defrag(heap: number): DefragMove | null {
    const h = heap % this.pools.length;
    const blocks = this.res
      .filter((r) => r.kind === 'placed' && !r.released && r.heap === h)
      .sort((a, b) => b.offset - a.offset);
    for (const r of blocks) {
      if (r.locked) {
        this.events('defrag-skip-locked');
        continue;
      }
      const pool = this.pools[h]!;
      const to = pool.alloc(r.size, this.config.poolAlignBytes);
      if (to === null) return null;
      if (to >= r.offset) {
        pool.release(to);
        return { id: r.id, fromBytes: r.offset, toBytes: to, moved: false };
      }
      const l = this.obtain();
      if (l === null) {
        pool.release(to);
        return { id: r.id, fromBytes: r.offset, toBytes: to, moved: false };
      }
      const from = r.offset;
      pool.release(from);
      r.offset = to;
      l.touched = [r.id];
      l.commands = 1;
      this.port.sets.insert(setOf(l), r.object);
      this.port.sets.close(setOf(l));
      this.events('close-path-a');
      l.state = 'free';
      this.run([l]);
      this.events('defrag-move');
      return { id: r.id, fromBytes: from, toBytes: to, moved: true };
    }
    return null;
  }

  endFrame(): EndFrameResult {
    for (const l of this.lists) {
      if (l.state === 'recording') this.closeList(l.id);
      if (l.state === 'closed') this.submit(l.id);
    }
    const flush = this.flush();
    for (const t of this.transients) t.released = true;
    this.transients = [];
    const value = this.port.signalFence(0);
    this.frameValues.push(value);
    this.processDeletes();
    for (const pool of this.pools) pool.endFrame();
    return { value, flush };
  }

  heldBlocks(heap: number): readonly LiveAllocation[] {
    return inspectLive(this.pools[heap]!.inner);
  }

  backingOf(id: number): readonly number[] {
    return this.res[id]?.backing ?? [];
  }
}
