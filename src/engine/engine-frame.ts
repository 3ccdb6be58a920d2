/**
 * The engine layer (implementation side): resources routed as the seed's ladder routes them,
 * command lists from a pool with one residency set each, the recording paths that register what
 * they touch, the deferred residency set of reserved resources and the two mutually exclusive
 * Close paths, payloads with an update-reserved-resources phase, batches cut by commands per
 * batch, the frame fence with deferred deletion, pool defrag and lifetime-aliased transients.
 *
 * It composes the shipped pieces through their public APIs: the residency manager (through a
 * `ResidencyPort`), one fence-delayed free layer over a best-fit sub-allocator per pool heap, and
 * the simulated GPU. Steps the bug catalog (mutants/engine-frame.ts) overrides are protected
 * methods. docs/engine-frame.md has the frame loop and its diagram.
 */
import { ContractError } from '../contract.js';
import { inspectLive, type LiveAllocation } from '../alloc/allocator.js';
import {
  EngineErrors,
  type DefragMove,
  type EndFrameResult,
  type EngineEvents,
  type EngineFrame,
  type EngineFrameConfig,
  type FlushResult,
  type RecordPath,
  type ResidencyPort,
} from './engine-frame-types.js';
import type { HResult } from '../residency/residency-set-types.js';
import { EngineFrameResources, QUEUE, type EngineResource } from './engine-frame-resources.js';
import { present } from '../assert.js';

export { QUEUE, type EngineResource } from './engine-frame-resources.js';

const enum ListState {
  Free = 0,
  Recording = 1,
  Closed = 2,
  Submitted = 3,
}

export interface EngineList {
  readonly id: number;
  set: number;
  state: ListState;
  /** Resources the recorded commands touch (the D3D command list's true references). */
  readonly touched: number[];
  /** DeferredResidencyUpdateSet: reserved resources registered at submission time. */
  readonly deferred: number[];
  commands: number;
  hasQueries: boolean;
}

/** A payload entry: a list to execute, or a reserved commit (id, tiles). */
interface PayloadEntry {
  readonly list: number;
  readonly commitId: number;
  readonly tiles: number;
}

export class EngineFrameImpl extends EngineFrameResources implements EngineFrame {
  protected readonly lists: EngineList[] = [];
  protected payload: PayloadEntry[] = [];
  protected commitSet = -1;
  protected lastExecutedList = -1;

  constructor(config: EngineFrameConfig, port: ResidencyPort, events: EngineEvents = () => {}) {
    super(config, port, events);
    for (let i = 0; i < config.listCount; i++) {
      this.lists.push({
        id: i,
        set: -1,
        state: ListState.Free,
        touched: [],
        deferred: [],
        commands: 0,
        hasQueries: false,
      });
    }
  }

  protected list(id: number, state: ListState): EngineList {
    const l = this.lists[id];
    if (l === undefined || l.state !== state)
      throw new ContractError(
        EngineErrors.BAD_LIST,
        `list ${id} is not ${['free', 'recording', 'closed', 'submitted'][state]}`,
      );
    return l;
  }

  // ---- command lists ----------------------------------------------------------------------------

  /** ObtainCommandList: the first free list of the pool; a new one creates its set, a pooled one is Reset. */
  protected obtainList(): EngineList | null {
    for (const l of this.lists) {
      if (l.state !== ListState.Free) continue;
      if (l.set < 0) l.set = this.port.sets.createSet();
      else this.events('list-reset');
      this.port.sets.open(l.set);
      l.state = ListState.Recording;
      l.touched.length = 0;
      l.deferred.length = 0;
      l.commands = 0;
      l.hasQueries = false;
      return l;
    }
    this.events('list-pool-empty');
    return null;
  }

  openList(): number | null {
    return this.obtainList()?.id ?? null;
  }

  /** The pageables a registration inserts (GetResidencyHandles); reserved ones go through the deferred set instead. */
  protected residencyHandles(r: EngineResource): readonly number[] {
    switch (r.kind) {
      case 'committed':
      case 'placed':
      case 'transient':
        return [r.object];
      case 'reserved':
        return r.backing;
      default:
        return []; // back buffers and external resources are never tracked
    }
  }

  /** The pageables the GPU touches for a resource right now. */
  protected pageablesNow(r: EngineResource): readonly number[] {
    return r.kind === 'reserved' ? r.backing : [r.object];
  }

  /** AddToResidencySet. */
  protected addToResidencySet(l: EngineList, handles: readonly number[]): void {
    for (let i = 0; i < handles.length; i++) this.port.sets.insert(l.set, handles[i]!);
  }

  /** UpdateResidency: reserved resources wait in the deferred set, everything else is inserted now. */
  protected updateResidency(l: EngineList, r: EngineResource): void {
    if (r.kind === 'reserved') {
      if (!l.deferred.includes(r.id)) l.deferred.push(r.id);
    } else {
      this.addToResidencySet(l, this.residencyHandles(r));
    }
  }

  protected touch(l: EngineList, r: EngineResource): void {
    if (!l.touched.includes(r.id)) l.touched.push(r.id);
  }

  /** The indirect-args buffer is read by the GPU without a descriptor: registered by hand. */
  protected registerIndirectArgs(l: EngineList, args: EngineResource): void {
    this.updateResidency(l, args);
  }
  protected registerUavCounter(l: EngineList, counter: EngineResource): void {
    this.updateResidency(l, counter);
  }
  protected registerShaderTable(l: EngineList, table: EngineResource): void {
    this.updateResidency(l, table);
  }

  record(listId: number, path: RecordPath, resId: number, res2Id: number): void {
    const l = this.list(listId, ListState.Recording);
    l.commands++;
    if (path === 'query') {
      const heap = this.resources[0]!;
      this.touch(l, heap);
      this.updateResidency(l, heap);
      l.hasQueries = true;
      return;
    }
    const r = this.resource(resId);
    const r2 = this.resource(res2Id);
    this.touch(l, r);
    switch (path) {
      case 'barrier':
      case 'descriptorTable':
      case 'renderTarget':
      case 'clear':
        this.updateResidency(l, r);
        return;
      case 'copy':
        this.touch(l, r2);
        this.updateResidency(l, r);
        this.updateResidency(l, r2);
        return;
      case 'indirectArgs':
        this.touch(l, r2);
        this.updateResidency(l, r2);
        this.registerIndirectArgs(l, r);
        return;
      case 'uavCounter':
        this.touch(l, r2);
        this.updateResidency(l, r);
        this.registerUavCounter(l, r2);
        return;
      case 'rayTrace':
        this.touch(l, r2);
        this.updateResidency(l, r);
        this.registerShaderTable(l, r2);
        return;
    }
  }

  /** Path A: Close() on the recording thread closes the set only when nothing is deferred. */
  protected closePathA(l: EngineList): void {
    if (l.deferred.length === 0) {
      this.port.sets.close(l.set);
      this.events('close-path-a');
    }
  }

  /** Path B: CloseResidencySet() on the submission thread inserts the deferred resources' heaps now, then closes. */
  protected closePathB(l: EngineList): void {
    for (const id of l.deferred) this.addToResidencySet(l, this.residencyHandles(this.tracked(id)));
    if (l.deferred.length > 0) {
      this.port.sets.close(l.set);
      this.events('close-path-b');
    }
  }

  closeList(listId: number): void {
    const l = this.list(listId, ListState.Recording);
    this.closePathA(l);
    l.state = ListState.Closed;
  }

  submit(listId: number): void {
    const l = this.list(listId, ListState.Closed);
    l.state = ListState.Submitted;
    this.payload.push({ list: l.id, commitId: -1, tiles: 0 });
  }

  commitReserved(id: number, tiles: number): void {
    const r = this.resource(id);
    if (r.kind !== 'reserved')
      throw new ContractError(
        EngineErrors.BAD_RESOURCE,
        `resource ${id} (${r.kind}) is not reserved`,
      );
    this.payload.push({ list: -1, commitId: id, tiles });
  }

  // ---- submission -------------------------------------------------------------------------------

  flush(): FlushResult {
    const result: FlushResult = { batches: [], hrs: [], commits: [], resolved: false };
    const entries = this.payload;
    this.payload = [];
    let pending: EngineList[] = [];
    for (const entry of entries) {
      if (entry.list >= 0) {
        pending.push(present(this.lists[entry.list], 'a payload entry names a list', entry.list));
        continue;
      }
      // An update-reserved-resources phase: earlier lists run (and snapshot their heaps) first.
      if (pending.length > 0) {
        this.events('commit-flushes-earlier');
        this.executeLists(pending, result);
        pending = [];
      }
      const r = this.tracked(entry.commitId);
      if (r.released) continue;
      this.updateReservedResource(r, entry.tiles);
      result.commits.push(r.id);
    }
    if (pending.length > 0) this.executeLists(pending, result);
    return result;
  }

  /** Flush(): CloseResidencySet for every list, then batches cut by commands, each one ExecuteCommandLists. */
  protected executeLists(
    lists: readonly EngineList[],
    result: { batches: number[][]; hrs: HResult[]; resolved: boolean },
  ): void {
    for (const l of lists) this.closePathB(l);
    let start = 0;
    let hasQueries = false;
    while (start < lists.length) {
      let end = start + 1;
      let commands = lists[start]!.commands;
      while (
        end < lists.length &&
        commands + lists[end]!.commands <= this.config.maxCommandsPerBatch
      )
        commands += lists[end++]!.commands;
      if (start > 0) this.events('batch-split');
      const batch = lists.slice(start, end);
      result.hrs.push(this.executeBatch(batch));
      result.batches.push(batch.map((l) => l.id));
      for (const l of batch) if (l.hasQueries) hasQueries = true;
      start = end;
    }
    for (const l of lists) {
      l.state = ListState.Free;
      this.lastExecutedList = l.id;
    }
    if (hasQueries) {
      this.resolveQueries();
      result.resolved = true;
    }
  }

  protected executeBatch(batch: readonly EngineList[]): HResult {
    const refs: number[][] = [];
    const sets: number[] = [];
    for (const l of batch) {
      const objects: number[] = [];
      for (const id of l.touched) {
        const now = this.pageablesNow(this.tracked(id));
        for (let i = 0; i < now.length; i++) if (!objects.includes(now[i]!)) objects.push(now[i]!);
      }
      refs.push(objects);
      sets.push(l.set);
    }
    return this.port.executeCommandLists(QUEUE, refs, sets);
  }

  /** The list the query resolve records on: a fresh list from the pool (its set is open). */
  protected resolveList(): EngineList | null {
    return this.obtainList();
  }

  /** Query results are read back on the submission thread: a fresh list registers the query heap and the result buffer. */
  protected registerQueryResolve(l: EngineList): void {
    this.addToResidencySet(l, [this.layout.queryHeap, this.layout.queryResult]);
  }

  protected resolveQueries(): void {
    const l = this.resolveList();
    if (l === null) return;
    this.events('query-resolve');
    this.registerQueryResolve(l);
    this.touch(l, this.resources[0]!);
    this.touch(l, this.resources[1]!);
    l.commands++;
    if (l.state === ListState.Recording) this.closePathA(l);
    l.state = ListState.Free;
    this.executeBatch([l]);
  }

  /**
   * UpdateReservedResources: maps `tiles` backing heaps. New heaps start tracking and are made
   * resident for the queue through a set of their own (UpdateTileMappings touches them), then the
   * queue signals; unmapped heaps end tracking once the frame's fence completes.
   */
  protected updateReservedResource(r: EngineResource, tiles: number): void {
    if (tiles < r.backing.length) {
      const stamp = this.frameValues.length + 1;
      for (const heap of r.backing.splice(tiles)) this.pendingDeletes.push(heap, stamp);
      this.events('reserved-shrink');
      return;
    }
    if (tiles === r.backing.length) return;
    this.processDeletions();
    const added: number[] = [];
    for (let b = 0; b < this.config.backingHeapCount && r.backing.length < tiles; b++) {
      if (this.backingTaken[b] !== 0) continue;
      this.backingTaken[b] = 1;
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
    if (this.commitSet < 0) this.commitSet = this.port.sets.createSet();
    this.port.sets.open(this.commitSet);
    for (const heap of added) this.port.sets.insert(this.commitSet, heap);
    this.port.sets.close(this.commitSet);
    if (this.port.makeResidentForQueue(QUEUE, this.commitSet) === 'S_OK') {
      this.port.gpu.executeCommandLists(QUEUE, [added]);
      this.port.signalFence(QUEUE);
    }
  }

  // ---- defrag and frames ------------------------------------------------------------------------

  /** Only unlocked blocks move (a locked one is still being written by its initial upload). */
  protected isMovable(r: EngineResource): boolean {
    return !r.locked;
  }

  defrag(heap: number): DefragMove | null {
    const h = heap % this.pools.length;
    const candidates = this.resources
      .filter((r) => r.kind === 'placed' && !r.released && r.heap === h)
      .sort((a, b) => b.offsetBytes - a.offsetBytes);
    for (const r of candidates) {
      if (!this.isMovable(r)) {
        this.events('defrag-skip-locked');
        continue;
      }
      const pool = this.pools[h]!;
      const to = pool.alloc(r.sizeBytes, this.config.poolAlignBytes);
      if (to === null) return null;
      if (to >= r.offsetBytes) {
        pool.release(to);
        return { id: r.id, fromBytes: r.offsetBytes, toBytes: to, moved: false };
      }
      const l = this.obtainList();
      if (l === null) {
        pool.release(to);
        return { id: r.id, fromBytes: r.offsetBytes, toBytes: to, moved: false };
      }
      const from = r.offsetBytes;
      pool.release(from);
      r.offsetBytes = to;
      // The GPU copy: old and new bytes are both in the heap.
      this.touch(l, r);
      this.updateResidency(l, r);
      l.commands++;
      this.closePathA(l);
      l.state = ListState.Free;
      this.executeBatch([l]);
      this.events('defrag-move');
      return { id: r.id, fromBytes: from, toBytes: to, moved: true };
    }
    return null;
  }

  endFrame(): EndFrameResult {
    for (const l of this.lists) {
      if (l.state === ListState.Recording) this.closeList(l.id);
      if (l.state === ListState.Closed) this.submit(l.id);
    }
    const flush = this.flush();
    for (const id of this.liveTransients) this.tracked(id).released = true;
    this.liveTransients.length = 0;
    const value = this.port.signalFence(QUEUE);
    this.frameValues.push(value);
    this.processDeletions();
    for (const pool of this.pools) pool.endFrame();
    return { value, flush };
  }

  heldBlocks(heap: number): readonly LiveAllocation[] {
    return inspectLive(present(this.pools[heap], 'no such backing heap', heap).inner);
  }

  backingOf(id: number): readonly number[] {
    return this.resources[id]?.backing ?? [];
  }
}
