/**
 * The systems' `visual` hooks (SystemDef.visual, src/harness/visual.ts): what the HTML report
 * draws of one side after one step. They read only what a side already exposes to its judges
 * (the caller's ranges, the allocator's inspection, the simulated GPU's timeline and residency),
 * so the picture shows the same state the checks see.
 */
import { inspectBlocks, type Allocator, type BlockAllocator } from '../alloc/allocator.js';
import type { QueueTimeline } from '../gpu/queue-timeline.js';
import type { ResidencyManager } from '../residency/residency-manager-types.js';
import type { ResidencySetPool } from '../residency/residency-set-types.js';
import type { AllocSide } from './alloc-side.js';
import type { DeferredSide } from './deferred-free-side.js';
import type { UploadSide } from './upload-pages-side.js';
import type { RingSide } from './ring-upload-side.js';
import type { UploadPageState } from '../alloc/upload-pages-types.js';
import type { HeapVisual, TimelineRow, TimelineVisual, VisualRange } from '../harness/visual.js';

function isBlockAllocator(allocator: unknown): allocator is BlockAllocator {
  return (
    typeof allocator === 'object' &&
    allocator !== null &&
    ('blocksView' in allocator || 'blocks' in allocator)
  );
}

/** The free blocks of an allocator that exposes its blocks (undefined when it does not). */
export function freeBlocksOf(allocator: Allocator | BlockAllocator): VisualRange[] | undefined {
  if (!isBlockAllocator(allocator)) return undefined;
  const free: VisualRange[] = [];
  for (const block of inspectBlocks(allocator))
    if (block.free) free.push([block.offsetBytes, block.sizeBytes]);
  return free;
}

/** The bytes unfinished GPU reads of a queue timeline still use. */
export function busyRangesOf(timeline: QueueTimeline): VisualRange[] {
  const busy: VisualRange[] = [];
  for (let i = 0; i < timeline.inFlightCount; i++) {
    const read = timeline.inFlightAt(i);
    busy.push([read.offsetBytes, read.sizeBytes]);
  }
  return busy;
}

/** A heap map row from ranges given as records. */
export function heapVisual(
  extentBytes: number,
  live: Iterable<{ readonly offsetBytes: number; readonly sizeBytes: number }>,
  extra: {
    readonly free?: readonly VisualRange[] | undefined;
    readonly busy?: readonly VisualRange[];
    readonly regions?: readonly VisualRange[];
  } = {},
): HeapVisual {
  const ranges: VisualRange[] = [];
  for (const range of live) ranges.push([range.offsetBytes, range.sizeBytes]);
  return {
    kind: 'heap',
    extentBytes,
    live: ranges,
    ...(extra.free === undefined ? {} : { free: extra.free }),
    ...(extra.busy === undefined ? {} : { busy: extra.busy }),
    ...(extra.regions === undefined ? {} : { regions: extra.regions }),
  };
}

const STATUS_OF_OBJECT = {
  resident: 'resident',
  evicted: 'evicted',
  untracked: 'untracked',
} as const;

/**
 * A timeline column of a residency manager: each object's state as the manager books it (in
 * flight: resident and referenced by GPU work whose fence has not been reached), flagged where the
 * simulated GPU disagrees with the bookkeeping or names the object in a violation; the local
 * budget and usage; the queues' and the paging fence's completed values and the work each queue
 * still holds (command lists executed and not yet run, waits, signals).
 */
export function managerVisual(manager: ResidencyManager): TimelineVisual {
  const gpu = manager.gpu;
  const named = new Set<number>();
  for (const violation of gpu.violations) named.add(violation.object);
  const rows: TimelineRow[] = [];
  const sizes = manager.config.objectSizesBytes;
  for (let object = 0; object < sizes.length; object++) {
    const status = manager.status(object);
    const onGpu = gpu.isResident(object);
    const pending = gpu.isReferencedByPendingWork(object);
    const state = status === 'resident' && pending ? 'in-flight' : STATUS_OF_OBJECT[status];
    const diverged = status !== 'untracked' && (status === 'resident') !== onGpu;
    const sync = status === 'untracked' ? '' : `, last sync point ${manager.lastSyncPoint(object)}`;
    rows.push({
      name: `object ${object}`,
      state,
      detail: `${sizes[object]} bytes, ${status}${sync}, on the GPU: ${onGpu ? 'resident' : 'not resident'}${pending ? ', used by unfinished GPU work' : ''}`,
      ...(named.has(object) || diverged ? { flagged: true } : {}),
    });
  }
  const fences: Record<string, number> = {};
  const queued: Record<string, number> = {};
  for (let queue = 0; queue < gpu.queueCount; queue++) {
    fences[`queue ${queue}`] = gpu.fenceCompleted(queue);
    queued[`queue ${queue}`] = gpu.pendingItems(queue);
  }
  fences.paging = gpu.pagingFenceCompleted;
  const memory = gpu.localMemory();
  return {
    kind: 'timeline',
    rows,
    budgetBytes: memory.budgetBytes,
    usageBytes: gpu.localUsageBytes,
    fences,
    queued,
  };
}

/** A timeline column of a residency-set pool: each live set open or closed (failed: out of memory) with its contents. */
export function setPoolVisual(pool: ResidencySetPool, live: readonly number[]): TimelineVisual {
  const rows: TimelineRow[] = live.map((set) => {
    const open = pool.isOpen(set);
    const outOfMemory = pool.isOutOfMemory(set);
    return {
      name: `set ${set}`,
      state: outOfMemory ? 'failed' : open ? 'open' : 'closed',
      detail: `slot ${pool.slotOf(set)}, ${pool.size(set)} of ${pool.capacity(set)} entries: [${pool.contents(set).join(', ')}]`,
    };
  });
  return { kind: 'timeline', rows };
}

/** A sub-allocator or user allocator side: the caller's live ranges and the free blocks the allocator exposes. */
export function allocVisual<A extends Allocator>(s: AllocSide<A>): HeapVisual {
  return heapVisual(s.capacityBytes, s.sortedLive, { free: freeBlocksOf(s.allocator) });
}

/**
 * A ring side: the ranges the caller holds (reserved, then submitted and not yet collected: two
 * hand-outs at one offset stay two ranges) and the bytes GPU reads still use.
 */
export function ringVisual(s: RingSide): HeapVisual {
  const live: VisualRange[] = [];
  for (const offsetBytes of [...s.reserved, ...s.submitted])
    live.push([offsetBytes, s.handouts.get(offsetBytes)?.sizeBytes ?? 0]);
  live.sort((a, b) => a[0] - b[0]);
  return { kind: 'heap', extentBytes: s.capacityBytes, live, busy: busyRangesOf(s.timeline) };
}

/** A deferred-free side: the caller's allocations, the sub-allocator's free blocks and the bytes GPU reads still use. */
export function deferredVisual(s: DeferredSide): HeapVisual {
  return heapVisual(s.config.capacityBytes, s.liveByOffset, {
    free: freeBlocksOf(s.allocator.inner),
    busy: busyRangesOf(s.timeline),
  });
}

/**
 * An upload page side (fast allocator, fast constant allocator): the upload heap's address space
 * with its live buffers as regions, this frame's hand-outs at their heap addresses and the bytes
 * GPU reads still use. The map ends where the last live buffer ends, so a hand-out past the end
 * of the last buffer is out of bounds; one past its own buffer into the next is not marked.
 */
export function uploadVisual<A extends UploadPageState>(s: UploadSide<A>): HeapVisual {
  const regions: VisualRange[] = [];
  let extentBytes = s.pageSizeBytes;
  for (const buffer of s.heap.buffers.values()) {
    regions.push([buffer.baseAddress, buffer.sizeBytes]);
    extentBytes = Math.max(extentBytes, buffer.baseAddress + buffer.sizeBytes);
  }
  regions.sort((a, b) => a[0] - b[0]);
  const live: VisualRange[] = [];
  for (const handout of s.frame) {
    // A hand-out on a buffer already destroyed has no place in the heap any more (its judge reports it).
    const buffer = s.heap.buffers.get(handout.bufferId);
    if (buffer !== undefined)
      live.push([buffer.baseAddress + handout.offsetBytes, handout.sizeBytes]);
  }
  const busy = busyRangesOf(s.timeline);
  for (const [offset, size] of busy) extentBytes = Math.max(extentBytes, offset + size);
  return { kind: 'heap', extentBytes, live, busy, regions };
}
