// A C++17 port of the project's first-fit allocator (src/alloc/first-fit.ts, first-fit-index.ts,
// first-fit-blocks.ts, first-fit-offsets.ts): the same node list, the same free indexes (512 size
// bins, 4-ary heaps keyed by start, 8-ary min tree of the bins' tops, floor bin, own indexes for
// alignments >= 4096 on heaps >= 64 KiB, at most 3), the same hash of live offsets. Same answers,
// offset for offset; no self-checks. Starts and sizes are int64_t (the TS keeps them as float64);
// "Infinity" in the tops is INT64_MAX. Growth by malloc/realloc, no STL on the hot path.
// Written for bench/_first-fit-wasm (a measurement, not shipped).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ff {

typedef int64_t i64;
typedef int32_t i32;

static const i32 NIL = -1;
static const i32 NOT_INDEXED = -1;
static const int BINS = 512;
static const int LEVEL1 = 512;
static const int LEVEL2 = 576;
static const int TOPS_LENGTH = 584;
static const i64 INF = INT64_MAX;
static const i64 OWN_INDEX_ALIGN = 4096;
static const i64 OWN_INDEX_MIN_CAPACITY = 65536;
static const int MAX_OWN_INDEXES = 3;

template <class T>
static inline T *grown(T *p, size_t oldCount, size_t newCount) {
  T *q = static_cast<T *>(realloc(p, newCount * sizeof(T)));
  (void)oldCount;
  return q;
}

static inline int clz64(uint64_t v) { return __builtin_clzll(v); }

// The size bin of sizeBytes (>= 0).
static inline int binOf(i64 sizeBytes) {
  if (sizeBytes < 16) return static_cast<int>(sizeBytes);
  int log = 63 - clz64(static_cast<uint64_t>(sizeBytes));
  return ((log - 2) << 3) + static_cast<int>(sizeBytes >> (log - 3)) - 8;
}

static inline i64 padAt(i64 start, i64 alignBytes) {
  i64 mask = alignBytes - 1;
  return (alignBytes - (start & mask)) & mask;
}

// ---- node store (first-fit-blocks.ts) ----------------------------------------------------------
struct Node {
  i64 start;
  i64 size;
  i32 prev;
  i32 next;
  i32 free;
  i32 pad;
};

struct BlockList {
  Node *nodes = nullptr;
  i32 *spare = nullptr;
  i32 room = 0;
  i32 spareCount = 0;
  i32 highWater = 0;
  i32 head = NIL;

  void init() {
    room = 16;
    nodes = static_cast<Node *>(calloc(room, sizeof(Node)));
    spare = static_cast<i32 *>(calloc(room, sizeof(i32)));
  }
  void destroy() {
    ::free(nodes);
    ::free(spare);
  }
  i32 create(i64 start, i64 size, bool isFree) {
    i32 node;
    if (spareCount > 0) {
      node = spare[--spareCount];
    } else {
      if (highWater == room) grow();
      node = highWater++;
    }
    Node &n = nodes[node];
    n.start = start;
    n.size = size;
    n.free = isFree ? 1 : 0;
    n.prev = NIL;
    n.next = NIL;
    return node;
  }
  void insertAfter(i32 prior, i32 node) {
    i32 following = nodes[prior].next;
    nodes[node].prev = prior;
    nodes[node].next = following;
    nodes[prior].next = node;
    if (following != NIL) nodes[following].prev = node;
  }
  void remove(i32 node) {
    i32 before = nodes[node].prev;
    i32 following = nodes[node].next;
    nodes[before].next = following;
    if (following != NIL) nodes[following].prev = before;
    spare[spareCount++] = node;
  }
  void grow() {
    i32 n = room * 2;
    nodes = grown(nodes, room, n);
    memset(nodes + room, 0, (n - room) * sizeof(Node));
    spare = grown(spare, room, n);
    room = n;
  }
};

// ---- free index (first-fit-index.ts) -----------------------------------------------------------
struct Entry {
  i64 start;
  i32 node;
  i32 pad;
};

struct FreeIndex {
  i64 alignBytes = 1;
  int floorBin = BINS;
  int highBin = -1;
  i32 *bin = nullptr;  // per node
  i32 *pos = nullptr;  // per node
  i32 nodeRoom = 0;
  Entry *heaps[BINS];
  i32 caps[BINS];  // entries each heap has room for (index 0 unused)
  i64 tops[TOPS_LENGTH];
  i32 counts[BINS];
  i32 *stack = nullptr;
  i32 stackLen = 0;

  void init(i64 align, i32 nodes) {
    alignBytes = align;
    nodeRoom = nodes;
    bin = static_cast<i32 *>(malloc(nodes * sizeof(i32)));
    for (i32 i = 0; i < nodes; i++) bin[i] = NOT_INDEXED;
    pos = static_cast<i32 *>(calloc(nodes, sizeof(i32)));
    for (int i = 0; i < BINS; i++) {
      heaps[i] = nullptr;
      caps[i] = 0;
      counts[i] = 0;
    }
    for (int i = 0; i < TOPS_LENGTH; i++) tops[i] = INF;
    stackLen = 16;
    stack = static_cast<i32 *>(malloc(stackLen * sizeof(i32)));
  }
  void destroy() {
    ::free(bin);
    ::free(pos);
    ::free(stack);
    for (int i = 0; i < BINS; i++) ::free(heaps[i]);
  }
  void growNodes(i32 nodes) {
    bin = grown(bin, nodeRoom, nodes);
    for (i32 i = nodeRoom; i < nodes; i++) bin[i] = NOT_INDEXED;
    pos = grown(pos, nodeRoom, nodes);
    memset(pos + nodeRoom, 0, (nodes - nodeRoom) * sizeof(i32));
    nodeRoom = nodes;
  }

  inline int binFor(i64 start, i64 sizeBytes) const {
    i64 usable = alignBytes == 1 ? sizeBytes : sizeBytes - padAt(start, alignBytes);
    if (usable <= 0) return NOT_INDEXED;
    int b = binOf(usable);
    return b < floorBin ? NOT_INDEXED : b;
  }

  inline void add(i32 node, i64 start, i64 sizeBytes) {
    int b = binFor(start, sizeBytes);
    if (b != NOT_INDEXED) insert(b, node, start);
  }

  void remove(i32 node) {
    int b = bin[node];
    if (b == NOT_INDEXED) return;
    bin[node] = NOT_INDEXED;
    i32 count = counts[b];
    counts[b] = count - 1;
    i32 at = pos[node];
    if (at == count) {
      if (count == 1) setTop(b, INF);
      return;
    }
    Entry *heap = heaps[b];
    i32 settled = sift(heap, at, count - 1, heap[count].start, heap[count].node);
    if (at == 1 || settled == 1) setTop(b, heap[1].start);
  }

  void update(i32 node, i64 start, i64 sizeBytes) {
    int b = binFor(start, sizeBytes);
    int was = bin[node];
    if (b == was && b != NOT_INDEXED) {
      Entry *heap = heaps[b];
      i32 at = pos[node];
      if (heap[at].start == start) return;
      i32 settled = sift(heap, at, counts[b], start, node);
      if (at == 1 || settled == 1) setTop(b, heap[1].start);
      return;
    }
    remove(node);
    if (b != NOT_INDEXED) insert(b, node, start);
  }

  void replace(i32 old, i32 node, i64 start, i64 sizeBytes) {
    int b = bin[old];
    if (b != NOT_INDEXED) {
      i32 at = pos[old];
      bin[old] = NOT_INDEXED;
      bin[node] = b;
      pos[node] = at;
      heaps[b][at].node = node;
      update(node, start, sizeBytes);
    } else {
      add(node, start, sizeBytes);
    }
  }

  inline void carved(i32 node, i64 start, i64 paddingBytes, i32 tail, i64 tailStart,
                     i64 tailBytes) {
    if (paddingBytes == 0) {
      if (tail == NIL)
        remove(node);
      else
        replace(node, tail, tailStart, tailBytes);
      return;
    }
    update(node, start, paddingBytes);
    if (tail != NIL) add(tail, tailStart, tailBytes);
  }

  inline void freed(i32 node, i64 start, i64 mergedBytes, i32 absorbed, i32 before,
                    i64 beforeStart) {
    if (before != NIL) {
      if (absorbed != NIL) remove(absorbed);
      update(before, beforeStart, mergedBytes);
    } else if (absorbed != NIL) {
      replace(absorbed, node, start, mergedBytes);
    } else {
      add(node, start, mergedBytes);
    }
  }

  i32 search(i64 sizeBytes, i64 align, const Node *nodes) {
    i64 slack = align - alignBytes;
    int sureBin = binOf(sizeBytes + slack - 1) + 1;
    i32 found = NIL;
    i64 best = INF;
    int topBin = lowestTopFrom(sureBin);
    if (topBin >= 0) {
      best = heaps[topBin][1].start;
      found = heaps[topBin][1].node;
    }
    int first = binOf(sizeBytes);
    int lowest = first > floorBin ? first : floorBin;
    for (int b = sureBin - 1; b >= lowest; b--) {
      i32 count = counts[b];
      if (count == 0) continue;
      const Entry *heap = heaps[b];
      if (heap[1].start >= best) continue;
      i32 *st = stack;
      int depth = 0;
      st[depth++] = 1;
      while (depth > 0) {
        i32 at = st[--depth];
        i64 start = heap[at].start;
        if (start >= best) continue;
        i32 node = heap[at].node;
        if (nodes[node].size - padAt(start, align) >= sizeBytes) {
          best = start;
          found = node;
          continue;
        }
        i32 last = 4 * at + 1 < count ? 4 * at + 1 : count;
        for (i32 child = 4 * at - 2; child <= last; child++) st[depth++] = child;
      }
    }
    return found;
  }

  int lowestTopFrom(int from) const {
    i64 best = INF;
    int where = -1;
    int level = 0;
    int end = (from | 7) + 1;
    for (int i = from; i < end; i++) {
      i64 top = tops[i];
      if (top < best) {
        best = top;
        where = i;
      }
    }
    int group = (from >> 3) + 1;
    end = ((group - 1) | 7) + 1;
    for (int i = group; i < end; i++) {
      i64 top = tops[LEVEL1 + i];
      if (top < best) {
        best = top;
        where = i;
        level = 1;
      }
    }
    for (int i = (from >> 6) + 1; i < 8; i++) {
      i64 top = tops[LEVEL2 + i];
      if (top < best) {
        best = top;
        where = i;
        level = 2;
      }
    }
    if (where < 0) return -1;
    if (level == 2) {
      int child = LEVEL1 + (where << 3);
      while (tops[child] != best) child++;
      where = child - LEVEL1;
      level = 1;
    }
    if (level == 1) {
      int child = where << 3;
      while (tops[child] != best) child++;
      where = child;
    }
    return where;
  }

  void insert(int b, i32 node, i64 start) {
    i32 count = counts[b] + 1;
    counts[b] = count;
    Entry *heap = heaps[b];
    if (count >= caps[b]) {
      i32 cap = caps[b] < 4 ? 8 : caps[b] * 2;
      heaps[b] = heap = grown(heap, caps[b], cap);
      caps[b] = cap;
      if (count >= stackLen) {
        ::free(stack);
        stackLen = 2 * count;
        stack = static_cast<i32 *>(malloc(stackLen * sizeof(i32)));
      }
    }
    bin[node] = b;
    if (b > highBin) highBin = b;
    while (count > 1) {
      i32 parent = (count + 2) >> 2;
      i64 parentStart = heap[parent].start;
      if (parentStart <= start) break;
      heap[count].start = parentStart;
      i32 parentNode = heap[parent].node;
      heap[count].node = parentNode;
      pos[parentNode] = count;
      count = parent;
    }
    heap[count].start = start;
    heap[count].node = node;
    pos[node] = count;
    if (count == 1) setTop(b, start);
  }

  i32 sift(Entry *heap, i32 at, i32 count, i64 start, i32 node) {
    i32 i = at;
    if (i > 1 && heap[(i + 2) >> 2].start > start) {
      do {
        i32 parent = (i + 2) >> 2;
        i64 parentStart = heap[parent].start;
        if (parentStart <= start) break;
        heap[i].start = parentStart;
        i32 parentNode = heap[parent].node;
        heap[i].node = parentNode;
        pos[parentNode] = i;
        i = parent;
      } while (i > 1);
    } else {
      for (;;) {
        i32 first = 4 * i - 2;
        if (first > count) break;
        i32 child = first;
        i64 childStart = heap[first].start;
        i32 last = first + 3 < count ? first + 3 : count;
        for (i32 c = first + 1; c <= last; c++) {
          i64 other = heap[c].start;
          if (other < childStart) {
            childStart = other;
            child = c;
          }
        }
        if (childStart >= start) break;
        heap[i].start = childStart;
        i32 childNode = heap[child].node;
        heap[i].node = childNode;
        pos[childNode] = i;
        i = child;
      }
    }
    heap[i].start = start;
    heap[i].node = node;
    pos[node] = i;
    return i;
  }

  void setTop(int b, i64 value) {
    i64 old = tops[b];
    tops[b] = value;
    i64 fresh = value;
    int node = b >> 3;
    int base = LEVEL1;
    int childBase = 0;
    for (int level = 1; level <= 2; level++) {
      i64 held = tops[base + node];
      if (fresh < held) {
        tops[base + node] = fresh;
        old = held;
      } else if (old == held) {
        int first = childBase + (node << 3);
        i64 least = tops[first];
        for (int i = 1; i < 8; i++) {
          i64 top = tops[first + i];
          if (top < least) least = top;
        }
        tops[base + node] = least;
        fresh = least;
      } else {
        return;
      }
      childBase = base;
      base = LEVEL2;
      node >>= 3;
    }
  }
};

// ---- live offsets (first-fit-offsets.ts) -------------------------------------------------------
struct LiveOffsets {
  i64 *offsets = nullptr;
  i32 *nodes = nullptr;
  i32 length = 0;
  i32 count = 0;
  i32 mask = 0;
  int shift = 0;

  void init() {
    length = 8;
    offsets = static_cast<i64 *>(malloc(length * sizeof(i64)));
    for (i32 i = 0; i < length; i++) offsets[i] = -1;
    nodes = static_cast<i32 *>(calloc(length, sizeof(i32)));
    mask = length - 1;
    shift = 29;
    count = 0;
  }
  void destroy() {
    ::free(offsets);
    ::free(nodes);
  }
  inline i32 slotOf(i64 offset) const {
    uint32_t lo = static_cast<uint32_t>(offset);
    uint32_t hi = static_cast<uint32_t>(static_cast<uint64_t>(offset) >> 32);
    return static_cast<i32>(((lo ^ hi) * 0x9e3779b1u) >> shift);
  }
  void put(i64 offset, i32 node) {
    if (2 * (count + 1) > length) grow();
    i32 i = slotOf(offset);
    while (offsets[i] != -1) i = (i + 1) & mask;
    offsets[i] = offset;
    nodes[i] = node;
    count++;
  }
  i32 take(i64 offset) {
    if (!(offset >= 0)) return NIL;
    i32 hole = slotOf(offset);
    for (;;) {
      i64 held = offsets[hole];
      if (held == offset) break;
      if (held == -1) return NIL;
      hole = (hole + 1) & mask;
    }
    i32 node = nodes[hole];
    count--;
    for (i32 i = (hole + 1) & mask;; i = (i + 1) & mask) {
      i64 held = offsets[i];
      if (held == -1) break;
      if (((i - slotOf(held)) & mask) >= ((i - hole) & mask)) {
        offsets[hole] = held;
        nodes[hole] = nodes[i];
        hole = i;
      }
    }
    offsets[hole] = -1;
    return node;
  }
  void grow() {
    i64 *oldOffsets = offsets;
    i32 *oldNodes = nodes;
    i32 oldLength = length;
    length = oldLength * 2;
    offsets = static_cast<i64 *>(malloc(length * sizeof(i64)));
    for (i32 i = 0; i < length; i++) offsets[i] = -1;
    nodes = static_cast<i32 *>(calloc(length, sizeof(i32)));
    mask = length - 1;
    shift--;
    count = 0;
    for (i32 i = 0; i < oldLength; i++)
      if (oldOffsets[i] != -1) put(oldOffsets[i], oldNodes[i]);
    ::free(oldOffsets);
    ::free(oldNodes);
  }
};

// ---- the allocator (first-fit.ts) --------------------------------------------------------------
struct FirstFit {
  i64 capacityBytes = 0;
  BlockList list;
  FreeIndex *indexes[1 + MAX_OWN_INDEXES];
  int indexCount = 0;
  i64 ownIndexAlign = INF;
  i32 indexOfLog[64];
  LiveOffsets offsets;
  i64 usedBytesTotal = 0;
  i64 liveCount = 0;
  i64 changes = 0;

  void init(i64 capacity) {
    capacityBytes = capacity;
    list.init();
    i32 whole = list.create(0, capacity, true);
    list.head = whole;
    for (int i = 0; i < 64; i++) indexOfLog[i] = 0;
    indexCount = 0;
    indexes[indexCount++] = newIndex(1);
    ownIndexAlign = capacity >= OWN_INDEX_MIN_CAPACITY ? OWN_INDEX_ALIGN : INF;
    offsets.init();
    usedBytesTotal = liveCount = changes = 0;
  }
  void destroy() {
    for (int k = 0; k < indexCount; k++) {
      indexes[k]->destroy();
      ::free(indexes[k]);
    }
    list.destroy();
    offsets.destroy();
  }
  FreeIndex *newIndex(i64 align) {
    FreeIndex *index = static_cast<FreeIndex *>(malloc(sizeof(FreeIndex)));
    new (index) FreeIndex();
    index->init(align, list.room);
    return index;
  }

  // The offset, or -1 (null).
  i64 alloc(i64 sizeBytes, i64 alignBytes) {
    FreeIndex *index = alignBytes < ownIndexAlign ? indexes[0] : indexFor(alignBytes);
    int b = binOf(sizeBytes);
    if (b < index->floorBin) lowerFloor(index, b & ~7);
    i32 node = index->search(sizeBytes, alignBytes, list.nodes);
    if (node == NIL) return -1;
    i64 start = list.nodes[node].start;
    i64 end = start + list.nodes[node].size;
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
    if (list.room != indexes[0]->nodeRoom) growIndexes();
    i64 paddingBytes = offsetBytes - start;
    if (live == node) list.nodes[node].free = 0;
    list.nodes[node].size = live == node ? sizeBytes : paddingBytes;
    for (int k = 0; k < indexCount; k++)
      indexes[k]->carved(node, start, paddingBytes, tail, allocEnd, end - allocEnd);
    offsets.put(offsetBytes, live);
    usedBytesTotal += sizeBytes;
    liveCount++;
    changes++;
    return offsetBytes;
  }

  // Returns false for a bad free.
  bool free(i64 offsetBytes) {
    i32 node = offsets.take(offsetBytes);
    if (node == NIL) return false;
    Node *nodes = list.nodes;
    i64 merged = nodes[node].size;
    usedBytesTotal -= merged;
    liveCount--;
    changes++;
    nodes[node].free = 1;
    i32 absorbed = NIL;
    i32 following = nodes[node].next;
    if (following != NIL && nodes[following].free == 1) {
      absorbed = following;
      merged += nodes[following].size;
    }
    i32 before = nodes[node].prev;
    i64 beforeStart = 0;
    if (before != NIL && nodes[before].free == 1) {
      beforeStart = nodes[before].start;
      merged += nodes[before].size;
    } else {
      before = NIL;
    }
    for (int k = 0; k < indexCount; k++)
      indexes[k]->freed(node, offsetBytes, merged, absorbed, before, beforeStart);
    if (absorbed != NIL) list.remove(absorbed);
    if (before != NIL) {
      nodes[before].size = merged;
      list.remove(node);
    } else {
      nodes[node].size = merged;
    }
    return true;
  }

  FreeIndex *indexFor(i64 alignBytes) {
    int log = 63 - clz64(static_cast<uint64_t>(alignBytes));
    i32 at = indexOfLog[log];
    if (at != 0) return indexes[at];
    if (indexCount <= MAX_OWN_INDEXES) {
      indexOfLog[log] = indexCount;
      indexes[indexCount++] = newIndex(alignBytes);
      return indexes[indexCount - 1];
    }
    FreeIndex *below = indexes[0];
    for (int k = 0; k < indexCount; k++)
      if (indexes[k]->alignBytes < alignBytes && indexes[k]->alignBytes > below->alignBytes)
        below = indexes[k];
    return below;
  }

  void lowerFloor(FreeIndex *index, int floorBin) {
    int above = index->floorBin;
    index->floorBin = floorBin;
    for (i32 node = list.head; node != NIL; node = list.nodes[node].next) {
      const Node &n = list.nodes[node];
      if (!n.free) continue;
      int b = index->binFor(n.start, n.size);
      if (b != NOT_INDEXED && b < above) index->add(node, n.start, n.size);
    }
  }

  void growIndexes() {
    for (int k = 0; k < indexCount; k++) indexes[k]->growNodes(list.room);
  }
};

}  // namespace ff
