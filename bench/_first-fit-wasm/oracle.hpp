// A floor, not an allocator: the pair loop's cost without the free index. RecordingFirstFit is
// the port (first_fit.hpp) recording the node each alloc's search chose; OracleFirstFit replays
// those choices with the same node list, carving, merging and live-offset hash, but no index
// (no search, no heap or tree upkeep). Same node ids (the list's operations are the same), so
// the same answers and checksum. native.cpp's "oracle" runs the recording untimed first.
#pragma once
#include "first_fit.hpp"
#include "pairs.hpp"

namespace oracle {

using ff::i32;
using ff::i64;
using ff::NIL;

struct RecordingFirstFit : ff::FirstFit {
  i32 *record = nullptr;
  i64 at = 0;
  i64 alloc(i64 sizeBytes, i64 alignBytes) {
    ff::FreeIndex *index = alignBytes < ownIndexAlign ? indexes[0] : indexFor(alignBytes);
    int b = ff::binOf(sizeBytes);
    if (b < index->floorBin) lowerFloor(index, b & ~7);
    i32 node = index->search(sizeBytes, alignBytes, list.nodes);
    record[at++] = node;
    if (node == NIL) return -1;
    // The rest as ff::FirstFit::alloc (the search again finds the same node).
    return ff::FirstFit::alloc(sizeBytes, alignBytes);
  }
};

struct OracleFirstFit {
  ff::BlockList list;
  ff::LiveOffsets offsets;
  const i32 *record = nullptr;
  i64 at = 0;

  void init(i64 capacity) {
    list.init();
    offsets.init();
    list.head = list.create(0, capacity, true);
  }
  void destroy() {
    list.destroy();
    offsets.destroy();
  }
  i64 alloc(i64 sizeBytes, i64 alignBytes) {
    i32 node = record[at++];
    if (node == NIL) return -1;
    ff::Node *ns = list.nodes;
    i64 start = ns[node].start;
    i64 end = start + ns[node].size;
    i64 offsetBytes = start + ff::padAt(start, alignBytes);
    i64 allocEnd = offsetBytes + sizeBytes;
    i32 live = node;
    if (offsetBytes != start) {
      live = list.create(offsetBytes, sizeBytes, false);
      list.insertAfter(node, live);
    }
    if (allocEnd < end) {
      i32 tail = list.create(allocEnd, end - allocEnd, true);
      list.insertAfter(live, tail);
    }
    ns = list.nodes;
    if (live == node) ns[node].free = 0;
    ns[node].size = live == node ? sizeBytes : offsetBytes - start;
    offsets.put(offsetBytes, live);
    return offsetBytes;
  }
  bool free(i64 offsetBytes) {
    i32 node = offsets.take(offsetBytes);
    if (node == NIL) return false;
    ff::Node *nodes = list.nodes;
    i64 merged = nodes[node].size;
    nodes[node].free = 1;
    i32 absorbed = NIL;
    i32 following = nodes[node].next;
    if (following != NIL && nodes[following].free == 1) {
      absorbed = following;
      merged += nodes[following].size;
    }
    i32 before = nodes[node].prev;
    if (!(before != NIL && nodes[before].free == 1)) before = NIL;
    else merged += nodes[before].size;
    if (absorbed != NIL) list.remove(absorbed);
    if (before != NIL) {
      nodes[before].size = merged;
      list.remove(node);
    } else {
      nodes[node].size = merged;
    }
    return true;
  }
};

// Runs the port over the pair loop's whole sequence on `s` (the fill, 500k pairs, then `count`)
// and returns the node each search chose, for OracleFirstFit to replay.
inline i32 *recordChoices(const pairs::Stream &s, int count) {
  static RecordingFirstFit rec;
  rec.init(int64_t(1) << 30);
  rec.at = 0;
  rec.record = static_cast<i32 *>(malloc(sizeof(i32) * (count + 600000 + 20000)));
  static pairs::Pairs<RecordingFirstFit> p;  // static: its handles are too large for wasm's stack
  p.pool = &rec;
  p.s = &s;
  p.liveCount = 0;
  p.cursor = 0;
  p.fill();
  p.run(500000);
  p.run(count);
  rec.destroy();
  return rec.record;
}

}  // namespace oracle
