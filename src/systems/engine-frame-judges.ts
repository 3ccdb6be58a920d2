/**
 * The `engine-frame` side's own judges: pool bytes handed out while a list whose frame has not
 * completed still reads them, releases held back, and the bookkeeping of what executed lists read
 * (src/systems/engine-frame.ts runs them from its ops).
 */
import type { Json } from '../harness/json.js';
import type { CreatedResource, FlushResult } from '../engine/engine-frame-types.js';
import type { LiveAllocation } from '../alloc/allocator.js';
import type { EngineSide } from './engine-frame-side.js';

// ---- the side's judges ---------------------------------------------------------------------------

/** Frames the GPU completed, from the fence values the frames signalled (both only grow). */
export function completedFrames(s: EngineSide): number {
  const done = s.manager.gpu.fenceCompleted(0);
  while (s.framesDone < s.frameValues.length && s.frameValues[s.framesDone]! <= done)
    s.framesDone++;
  return s.framesDone;
}

/** The first entry of `ranges` (object, offset, size, stamp) over the bytes whose frame has not completed, or -1. */
function incompleteOverlap(
  ranges: readonly number[],
  done: number,
  object: number,
  offsetBytes: number,
  sizeBytes: number,
): number {
  for (let i = 0; i < ranges.length; i += 4) {
    if (ranges[i] !== object || ranges[i + 3]! <= done) continue;
    const start = ranges[i + 1]!;
    if (start < offsetBytes + sizeBytes && offsetBytes < start + ranges[i + 2]!) return i;
  }
  return -1;
}

/**
 * A pool block handed out: no list of an incomplete frame may read those bytes, and every
 * release of them must have completed (the frame that released them reached its fence on the GPU).
 */
export function judgeHandOut(
  s: EngineSide,
  what: string,
  object: number,
  offsetBytes: number,
  sizeBytes: number,
): void {
  if (s.reads.length === 0 && s.releases.length === 0) return;
  const done = completedFrames(s);
  const range = `[${offsetBytes}, ${offsetBytes + sizeBytes}) of pool heap ${object}`;
  const read = incompleteOverlap(s.reads, done, object, offsetBytes, sizeBytes);
  if (read >= 0) {
    const r = s.reads;
    s.handoutLog.push(
      `${what} hands out ${range}, which a list of frame ${r[read + 3]} still reads at [${r[read + 1]}, ${r[read + 1]! + r[read + 2]!}) (frames completed: ${done})`,
    );
    return;
  }
  const released = incompleteOverlap(s.releases, done, object, offsetBytes, sizeBytes);
  if (released >= 0) {
    const r = s.releases;
    s.handoutLog.push(
      `${what} hands out ${range}, though [${r[released + 1]}, ${r[released + 1]! + r[released + 2]!}) was released in frame ${r[released + 3]}, whose fence has not completed (frames completed: ${done})`,
    );
  }
}

/** Every block released in a frame whose fence has not completed is still held by its pool heap's sub-allocator. */
export function releasesHeld(s: EngineSide): string | null {
  const r = s.releases;
  if (r.length === 0) return null;
  const done = completedFrames(s);
  let heldHeap = -1;
  let held: readonly LiveAllocation[] = [];
  for (let i = 0; i < r.length; i += 4) {
    if (r[i + 3]! <= done) continue;
    const heap = r[i]! - s.engine.layout.poolHeapBase;
    if (heap !== heldHeap) {
      held = s.engine.heldBlocks(heap);
      heldHeap = heap;
    }
    let found = false;
    for (let k = 0; k < held.length; k++) {
      if (held[k]!.offsetBytes === r[i + 1]! && held[k]!.sizeBytes === r[i + 2]!) {
        found = true;
        break;
      }
    }
    if (!found) {
      return `[${r[i + 1]}, ${r[i + 1]! + r[i + 2]!}) of pool heap ${r[i]} was released in frame ${r[i + 3]}, whose fence has not completed (frames completed: ${done}), but its sub-allocator no longer holds it`;
    }
  }
  return null;
}

/** Drops the entries whose frame completed. */
export function pruneCompleted(ranges: number[], done: number): void {
  let kept = 0;
  for (let i = 0; i < ranges.length; i += 4) {
    if (ranges[i + 3]! <= done) continue;
    for (let k = 0; k < 4; k++) ranges[kept + k] = ranges[i + k]!;
    kept += 4;
  }
  ranges.length = kept;
}

/** What executed lists read of the pool heaps, stamped with the current frame. */
function noteRead(s: EngineSide, id: number): void {
  const info = s.info[id];
  if (info === undefined || info.kind !== 'placed') return;
  s.reads.push(info.object, info.offsetBytes, info.sizeBytes, s.frameValues.length + 1);
}

export function noteExecuted(s: EngineSide, flush: FlushResult): void {
  for (const batch of flush.batches) {
    for (const list of batch) {
      const touched = s.touchedBy[list]!;
      for (let i = 0; i < touched.length; i++) noteRead(s, touched[i]!);
      touched.length = 0;
    }
  }
}

export function forgetList(s: EngineSide, list: number): void {
  const at = s.recording.indexOf(list);
  if (at >= 0) s.recording.splice(at, 1);
  const closedAt = s.closed.indexOf(list);
  if (closedAt >= 0) s.closed.splice(closedAt, 1);
}

export function created(
  s: EngineSide,
  r: CreatedResource | null,
  owned: boolean,
  firstPass = 0,
  lastPass = 0,
): Json {
  if (r === null) return null;
  s.info[r.id] = {
    kind: r.kind,
    object: r.object,
    offsetBytes: r.offsetBytes,
    sizeBytes: r.sizeBytes,
    locked: false,
    firstPass,
    lastPass,
  };
  s.live.push(r.id);
  if (owned) s.owned.push(r.id);
  else s.transients.push(r.id);
  if (r.kind === 'placed')
    judgeHandOut(s, `create of resource ${r.id}`, r.object, r.offsetBytes, r.sizeBytes);
  return { id: r.id, kind: r.kind, object: r.object, offsetBytes: r.offsetBytes };
}

export function flushJson(flush: FlushResult): Json {
  return {
    batches: flush.batches,
    hrs: flush.hrs,
    commits: flush.commits,
    resolved: flush.resolved,
  };
}

export function removeLive(s: EngineSide, id: number): void {
  s.live.splice(s.live.indexOf(id), 1);
}
