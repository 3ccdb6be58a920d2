// Experiment 2: an exact first fit with the same answers as first_fit.hpp, on the same node list
// and live-offset hash, with the free blocks kept per 16 KiB address chunk: each chunk holds its
// free blocks (start, size, node) in a small array sorted by start, and a 16-ary max tree over
// the chunks (65536 leaves for 1 GiB, 280 KB in all) holds each chunk's largest free size.
// A search descends to the lowest chunk whose largest block holds the request's size, scans its
// array for the first block that holds it at the request's alignment (exact test), and goes on to
// the next such chunk on a miss. Any request sizes (no 256-byte assumption); capacity < 4 GiB.
#pragma once
#include "first_fit.hpp"
#include "lean_first_fit.hpp"

namespace chunked {

using ff::i32;
using ff::i64;
using ff::NIL;
using ff::padAt;

static const int SHIFT = 14;  // 16 KiB chunks (12 and 16 measured too, see README)

struct Entry {
  uint32_t start;
  uint32_t size;
  i32 node;
};

struct Chunk {
  Entry *e;
  i32 count;
  i32 cap;
};

struct ChunkFirstFit {
  i64 capacityBytes = 0;
  ff::BlockList list;
  ff::LiveOffsets offsets;
  Chunk *chunks = nullptr;
  i32 chunkCount = 0;
  lean::MaxTree tree;

  void init(i64 capacity) {
    capacityBytes = capacity;
    list.init();
    offsets.init();
    chunkCount = static_cast<i32>((capacity + (i64(1) << SHIFT) - 1) >> SHIFT);
    chunks = static_cast<Chunk *>(calloc(chunkCount, sizeof(Chunk)));
    tree.init(1, chunkCount);
    i32 whole = list.create(0, capacity, true);
    list.head = whole;
    insertBlock(whole, 0, capacity);
  }
  void destroy() {
    for (i32 c = 0; c < chunkCount; c++) ::free(chunks[c].e);
    ::free(chunks);
    tree.destroy();
    list.destroy();
    offsets.destroy();
  }

  inline void mend(i32 c, const Chunk &k) {
    uint32_t m = 0;
    for (i32 i = 0; i < k.count; i++) m = k.e[i].size > m ? k.e[i].size : m;
    tree.set(c, m);
  }
  inline i32 find(const Chunk &k, i64 start) const {
    i32 i = 0;
    while (k.e[i].start != static_cast<uint32_t>(start)) i++;
    return i;
  }
  void insertBlock(i32 node, i64 start, i64 size) {
    i32 c = static_cast<i32>(start >> SHIFT);
    Chunk &k = chunks[c];
    if (k.count == k.cap) {
      k.cap = k.cap < 4 ? 4 : k.cap * 2;
      k.e = static_cast<Entry *>(realloc(k.e, k.cap * sizeof(Entry)));
    }
    i32 i = k.count;
    while (i > 0 && k.e[i - 1].start > start) {
      k.e[i] = k.e[i - 1];
      i--;
    }
    k.e[i].start = static_cast<uint32_t>(start);
    k.e[i].size = static_cast<uint32_t>(size);
    k.e[i].node = node;
    k.count++;
    if (size > tree.level[0][c]) tree.set(c, static_cast<uint32_t>(size));
  }
  void updateBlock(i32 node, i64 start, i64 size) {
    i32 c = static_cast<i32>(start >> SHIFT);
    Chunk &k = chunks[c];
    i32 i = find(k, start);
    uint32_t old = k.e[i].size;
    k.e[i].size = static_cast<uint32_t>(size);
    k.e[i].node = node;
    uint32_t top = tree.level[0][c];
    if (size > top)
      tree.set(c, static_cast<uint32_t>(size));
    else if (old == top && size < top)
      mend(c, k);
  }
  void removeBlock(i64 start) {
    i32 c = static_cast<i32>(start >> SHIFT);
    Chunk &k = chunks[c];
    i32 i = find(k, start);
    uint32_t old = k.e[i].size;
    k.count--;
    for (; i < k.count; i++) k.e[i] = k.e[i + 1];
    if (old == tree.level[0][c]) mend(c, k);
  }

  i64 alloc(i64 sizeBytes, i64 alignBytes) {
    uint32_t want = static_cast<uint32_t>(sizeBytes);
    i32 node = NIL;
    for (i32 c = tree.findFirst(want);; c = tree.findFrom(c + 1, want)) {
      if (c < 0) return -1;
      const Chunk &k = chunks[c];
      for (i32 i = 0; i < k.count; i++) {
        const Entry &e = k.e[i];
        if (e.size - padAt(e.start, alignBytes) >= sizeBytes) {
          node = e.node;
          break;
        }
      }
      if (node != NIL) break;
    }
    ff::Node *ns = list.nodes;
    i64 start = ns[node].start;
    i64 end = start + ns[node].size;
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
    ns = list.nodes;
    if (live == node) {
      ns[node].free = 0;
      ns[node].size = sizeBytes;
      removeBlock(start);
    } else {
      ns[node].size = offsetBytes - start;
      updateBlock(node, start, offsetBytes - start);
    }
    if (tail != NIL) insertBlock(tail, allocEnd, end - allocEnd);
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
      removeBlock(nodes[following].start);
      list.remove(following);
    }
    i32 before = nodes[node].prev;
    if (before != NIL && nodes[before].free == 1) {
      merged += nodes[before].size;
      nodes[before].size = merged;
      updateBlock(before, nodes[before].start, merged);
      list.remove(node);
    } else {
      nodes[node].size = merged;
      insertBlock(node, offsetBytes, merged);
    }
    return true;
  }
};

}  // namespace chunked
