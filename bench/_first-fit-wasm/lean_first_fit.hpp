// Experiment: a leaner exact first fit with the same answers as first_fit.hpp (the lowest-start
// free block whose aligned start plus the size fits, padding left free in front, merges with both
// neighbours), built on the same node list and live-offset hash, but with the size bins and
// heaps replaced by a max tree over fixed 256-byte address chunks:
// - every free block is entered in the chunk its start falls in; a leaf holds that block's usable
//   size (0: no free block starts there), a 16-ary tree above holds the maxima (one 64-byte line
//   per node, 6 levels for 1 GiB);
// - a search takes the leftmost leaf whose usable size is >= the request and tests it exactly
//   (the padding at the request's alignment), going right to the next such leaf on a miss;
// - as in the TS allocator, alignments from 4096 up (heaps >= 64 KiB, at most 3) get a tree of
//   their own holding usable sizes at that alignment, so a 4 KiB-aligned search misses rarely.
// LIMITS (an experiment, not a general allocator): at most one free block may start in a 256-byte
// chunk, which holds when every allocation is >= 256 bytes (two free blocks are never adjacent),
// as on W1 and W2; a general version keeps a short list per chunk. Capacity below 4 GiB (uint32).
#pragma once
#include "first_fit.hpp"

namespace lean {

using ff::i32;
using ff::i64;
using ff::NIL;
using ff::padAt;

static const int CHUNK_SHIFT = 8;
static const int FAN_SHIFT = 4;
static const int FAN = 1 << FAN_SHIFT;
static const int MAX_LEVELS = 12;

struct MaxTree {
  i64 alignBytes = 1;
  int levels = 0;
  uint32_t *level[MAX_LEVELS];
  i32 size[MAX_LEVELS];

  void init(i64 align, i32 leaves) {
    alignBytes = align;
    levels = 0;
    i32 n = leaves;
    for (;;) {
      i32 padded = (n + FAN - 1) & ~(FAN - 1);
      level[levels] = static_cast<uint32_t *>(calloc(padded, sizeof(uint32_t)));
      size[levels] = n;
      levels++;
      if (n <= FAN) break;
      n = (n + FAN - 1) >> FAN_SHIFT;
    }
  }
  void destroy() {
    for (int l = 0; l < levels; l++) ::free(level[l]);
  }
  inline uint32_t usable(i64 start, i64 sizeBytes) const {
    i64 u = alignBytes == 1 ? sizeBytes : sizeBytes - padAt(start, alignBytes);
    return u > 0 ? static_cast<uint32_t>(u) : 0;
  }
  // Sets leaf `leaf` to `value` and mends the maxima above it.
  inline void set(i32 leaf, uint32_t value) {
    uint32_t *l0 = level[0];
    uint32_t old = l0[leaf];
    if (old == value) return;
    l0[leaf] = value;
    i32 i = leaf;
    for (int l = 1; l < levels; l++) {
      i32 parent = i >> FAN_SHIFT;
      uint32_t held = level[l][parent];
      uint32_t fresh;
      if (value > held) {
        fresh = value;
      } else if (old == held) {
        const uint32_t *c = level[l - 1] + (parent << FAN_SHIFT);
        uint32_t m = c[0];
        for (int k = 1; k < FAN; k++) m = c[k] > m ? c[k] : m;
        if (m == held) return;
        fresh = m;
      } else {
        return;
      }
      old = held;
      value = fresh;
      level[l][parent] = fresh;
      i = parent;
    }
  }
  // The lowest leaf whose value is >= want, or -1 (top-down from the root).
  inline i32 findFirst(uint32_t want) const {
    int l = levels - 1;
    const uint32_t *v = level[l];
    i32 i = 0;
    while (i < size[l] && v[i] < want) i++;
    if (i == size[l]) return -1;
    while (l > 0) {
      l--;
      i <<= FAN_SHIFT;
      i += firstAtLeast(level[l] + i, want);
    }
    return i;
  }
  // The first of 16 values >= want (one exists), without a branch per value.
  static inline int firstAtLeast(const uint32_t *v, uint32_t want) {
    uint32_t mask = 0;
    for (int k = 0; k < FAN; k++) mask |= static_cast<uint32_t>(v[k] >= want) << k;
    return __builtin_ctz(mask);
  }
  // The lowest leaf >= from whose value is >= want, or -1.
  inline i32 findFrom(i32 from, uint32_t want) const {
    i32 i = from;
    int l = 0;
    for (;;) {
      if (i >= size[l]) return -1;
      const uint32_t *v = level[l];
      i32 end = (i | (FAN - 1)) + 1;
      if (end > size[l]) end = size[l];
      for (; i < end; i++)
        if (v[i] >= want) goto found;
      if (l + 1 == levels) return -1;
      i = ((i - 1) >> FAN_SHIFT) + 1;
      l++;
    }
  found:
    while (l > 0) {
      l--;
      i <<= FAN_SHIFT;
      i += firstAtLeast(level[l] + i, want);
    }
    return i;
  }
};

struct LeanFirstFit {
  i64 capacityBytes = 0;
  ff::BlockList list;
  ff::LiveOffsets offsets;
  i32 *chunkNode = nullptr;  // per chunk: the free block starting in it (meaningful where a leaf > 0)
  i32 chunks = 0;
  MaxTree trees[1 + ff::MAX_OWN_INDEXES];
  int treeCount = 0;
  i64 ownAlign = ff::INF;
  i32 treeOfLog[64];

  void init(i64 capacity) {
    capacityBytes = capacity;
    list.init();
    offsets.init();
    chunks = static_cast<i32>((capacity + (1 << CHUNK_SHIFT) - 1) >> CHUNK_SHIFT);
    chunkNode = static_cast<i32 *>(malloc(chunks * sizeof(i32)));
    for (int i = 0; i < 64; i++) treeOfLog[i] = 0;
    treeCount = 1;
    trees[0].init(1, chunks);
    ownAlign = capacity >= ff::OWN_INDEX_MIN_CAPACITY ? ff::OWN_INDEX_ALIGN : ff::INF;
    i32 whole = list.create(0, capacity, true);
    list.head = whole;
    enter(whole, 0, capacity);
  }
  void destroy() {
    for (int k = 0; k < treeCount; k++) trees[k].destroy();
    ::free(chunkNode);
    list.destroy();
    offsets.destroy();
  }

  // The free block `node` spans [start, start + sizeBytes) (entered or re-entered).
  inline void enter(i32 node, i64 start, i64 sizeBytes) {
    i32 c = static_cast<i32>(start >> CHUNK_SHIFT);
    chunkNode[c] = node;
    for (int k = 0; k < treeCount; k++) trees[k].set(c, trees[k].usable(start, sizeBytes));
  }
  // No free block starts at `start` any more.
  inline void leave(i64 start) {
    i32 c = static_cast<i32>(start >> CHUNK_SHIFT);
    for (int k = 0; k < treeCount; k++) trees[k].set(c, 0);
  }

  MaxTree &treeFor(i64 alignBytes) {
    int log = 63 - ff::clz64(static_cast<uint64_t>(alignBytes));
    i32 at = treeOfLog[log];
    if (at != 0) return trees[at];
    if (treeCount <= ff::MAX_OWN_INDEXES) {
      treeOfLog[log] = treeCount;
      MaxTree &t = trees[treeCount++];
      t.init(alignBytes, chunks);
      for (i32 n = list.head; n != NIL; n = list.nodes[n].next)
        if (list.nodes[n].free)
          t.set(static_cast<i32>(list.nodes[n].start >> CHUNK_SHIFT),
                t.usable(list.nodes[n].start, list.nodes[n].size));
      return t;
    }
    int best = 0;
    for (int k = 1; k < treeCount; k++)
      if (trees[k].alignBytes < alignBytes && trees[k].alignBytes > trees[best].alignBytes)
        best = k;
    return trees[best];
  }

  i64 alloc(i64 sizeBytes, i64 alignBytes) {
    MaxTree &t = alignBytes < ownAlign ? trees[0] : treeFor(alignBytes);
    const ff::Node *nodes = list.nodes;
    i32 node = NIL;
    uint32_t want = static_cast<uint32_t>(sizeBytes);
    for (i32 leaf = t.findFirst(want);; leaf = t.findFrom(leaf + 1, want)) {
      if (leaf < 0) return -1;
      i32 n = chunkNode[leaf];
      if (nodes[n].size - padAt(nodes[n].start, alignBytes) >= sizeBytes) {
        node = n;
        break;
      }
    }
    i64 start = nodes[node].start;
    i64 end = start + nodes[node].size;
    i64 offsetBytes = start + padAt(start, alignBytes);
    i64 allocEnd = offsetBytes + sizeBytes;
    i32 live = node;
    i32 tail = NIL;
    if (offsetBytes != start) {
      live = list.create(offsetBytes, sizeBytes, false);
      list.insertAfter(node, live);
    }
    if (allocEnd < end) {
      tail = list.create(allocEnd, end - allocEnd, true);
      list.insertAfter(live, tail);
    }
    ff::Node *ns = list.nodes;
    if (live == node) {
      ns[node].free = 0;
      ns[node].size = sizeBytes;
      leave(start);
    } else {
      ns[node].size = offsetBytes - start;
      enter(node, start, offsetBytes - start);
    }
    if (tail != NIL) enter(tail, allocEnd, end - allocEnd);
    offsets.put(offsetBytes, live);
    return offsetBytes;
  }

  bool free(i64 offsetBytes) {
    i32 node = offsets.take(offsetBytes);
    if (node == NIL) return false;
    ff::Node *nodes = list.nodes;
    i64 merged = nodes[node].size;
    nodes[node].free = 1;
    i32 following = nodes[node].next;
    if (following != NIL && nodes[following].free == 1) {
      merged += nodes[following].size;
      leave(nodes[following].start);
      list.remove(following);
    }
    i32 before = nodes[node].prev;
    if (before != NIL && nodes[before].free == 1) {
      merged += nodes[before].size;
      nodes[before].size = merged;
      enter(before, nodes[before].start, merged);
      list.remove(node);
    } else {
      nodes[node].size = merged;
      enter(node, offsetBytes, merged);
    }
    return true;
  }
};

}  // namespace lean
