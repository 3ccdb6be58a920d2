// A first-fit allocator driven by gpu-memory-verifier through include/gpumv_driver.h.
//
// Blocks tile [0, capacity) in a doubly linked address-ordered list; the free ones are also on a
// singly linked free list in address order. An allocation takes the first free block whose
// aligned start plus size fits (the lowest address), keeps the alignment padding in front as a
// free block and the tail as another; a free merges with free neighbours. That is the policy
// 'first-fit' of the harness offset for offset, so the driver declares it.
//
// Planted bugs, one per compile-time switch (examples/native/build.sh builds each):
//   -DBUG_OFF_BY_ONE   the used-block table grows one entry too late: a write past its end (ASan)
//   -DBUG_USE_AFTER_FREE  a merge reads the absorbed free-list node after deleting it (ASan)
//   -DBUG_SIZE_WRAP    the fit tests compare sizes as int32_t: sizes >= 2^31 wrap and "fit"
//   -DBUG_WRONG_MERGE  a free merges with the previous block whenever the next one was free
//   -DBUG_UNINIT       the padding block's free flag is never set (an uninitialised read)
//   -DBUG_CYCLE        a block freed into an empty free list links to itself (a hang)
#include "gpumv_driver.h"

#include <cstdint>
#include <cstdlib>
#include <new>
#include <unordered_map>

namespace {

struct Block {
    uint64_t offset;
    uint64_t size;
    bool free;
    Block *prev;       // address order
    Block *next;
    Block *next_free;  // free list, address order
    size_t used_at;    // a used block's index in the used table
};

struct FirstFit {
    uint64_t capacity;
    Block *head;
    Block *free_head;
    Block **used;      // the used blocks, for a debug dump
    size_t used_count;
    size_t used_cap;
    std::unordered_map<uint64_t, Block *> by_offset;  // the used blocks by offset
};

Block *new_block(uint64_t offset, uint64_t size, bool is_free) {
    Block *b = static_cast<Block *>(std::malloc(sizeof(Block)));
    if (!b) std::abort();
    b->offset = offset;
    b->size = size;
    b->free = is_free;
    b->prev = b->next = b->next_free = nullptr;
    return b;
}

void track_used(FirstFit *a, Block *b) {
#ifdef BUG_OFF_BY_ONE
    if (a->used_count > a->used_cap) {
#else
    if (a->used_count == a->used_cap) {
#endif
        size_t cap = a->used_cap * 2;
        Block **grown = static_cast<Block **>(std::realloc(a->used, cap * sizeof(Block *)));
        if (!grown) std::abort();
        a->used = grown;
        a->used_cap = cap;
    }
    b->used_at = a->used_count;
    a->used[a->used_count++] = b;
    a->by_offset[b->offset] = b;
}

void untrack_used(FirstFit *a, Block *b) {
    a->by_offset.erase(b->offset);
    Block *last = a->used[--a->used_count];
    a->used[b->used_at] = last;
    last->used_at = b->used_at;
}

// The free block before b in address order (the free-list predecessor of a block being freed).
Block *free_before(Block *b) {
    for (Block *p = b->prev; p; p = p->prev)
        if (p->free) return p;
    return nullptr;
}

void *create(void *, uint64_t capacity) {
    FirstFit *a = new FirstFit();
    a->capacity = capacity;
    a->head = new_block(0, capacity, true);
    a->free_head = a->head;
    a->used_cap = 16;
    a->used_count = 0;
    a->used = static_cast<Block **>(std::malloc(a->used_cap * sizeof(Block *)));
    return a;
}

void destroy(void *, void *state) {
    FirstFit *a = static_cast<FirstFit *>(state);
    for (Block *b = a->head; b;) {
        Block *next = b->next;
        std::free(b);
        b = next;
    }
    std::free(a->used);
    delete a;
}

// Whether `need` bytes fit in `have`.
bool at_most(uint64_t need, uint64_t have) {
#ifdef BUG_SIZE_WRAP
    return static_cast<int32_t>(need) <= static_cast<int32_t>(have);
#else
    return need <= have;
#endif
}

bool fits(const Block *b, uint64_t aligned, uint64_t size) {
    return at_most(aligned - b->offset + size, b->size);
}

int alloc(void *state, uint64_t size, uint64_t align, uint64_t *offset) {
    FirstFit *a = static_cast<FirstFit *>(state);
    // A quick reject: the largest free block (one walk of the free list).
    uint64_t largest = 0;
    for (const Block *f = a->free_head; f; f = f->next_free)
        if (f->size > largest) largest = f->size;
    if (!at_most(size, largest)) return 0;
    Block *before = nullptr;  // free-list predecessor of b
    for (Block *b = a->free_head; b; before = b, b = b->next_free) {
        uint64_t aligned = (b->offset + align - 1) & ~(align - 1);
        if (!fits(b, aligned, size)) continue;
        uint64_t end = b->offset + b->size;
        if (aligned > b->offset) {  // the padding stays free, in front of b
            Block *pad = new_block(b->offset, aligned - b->offset, true);
#ifdef BUG_UNINIT
            Block *raw = static_cast<Block *>(std::malloc(sizeof(Block)));
            raw->offset = pad->offset;
            raw->size = pad->size;
            raw->prev = raw->next = raw->next_free = nullptr;
            std::free(pad);
            pad = raw;  // raw->free is never set
#endif
            pad->prev = b->prev;
            pad->next = b;
            if (b->prev) b->prev->next = pad; else a->head = pad;
            b->prev = pad;
            pad->next_free = b;
            if (before) before->next_free = pad; else a->free_head = pad;
            before = pad;
            b->offset = aligned;
            b->size = end - aligned;
        }
        Block *after = b->next_free;
        if (aligned + size < end) {  // the tail stays free, after b
            Block *tail = new_block(aligned + size, end - aligned - size, true);
            tail->prev = b;
            tail->next = b->next;
            if (b->next) b->next->prev = tail;
            b->next = tail;
            tail->next_free = after;
            after = tail;
            b->size = size;
        }
        if (before) before->next_free = after; else a->free_head = after;
        b->free = false;
        b->next_free = nullptr;
        track_used(a, b);
        *offset = aligned;
        return 1;
    }
    return 0;
}

int release(void *state, uint64_t offset) {
    FirstFit *a = static_cast<FirstFit *>(state);
    auto found = a->by_offset.find(offset);
    if (found == a->by_offset.end()) return 1;  // nothing live starts there: rejected
    Block *b = found->second;
    untrack_used(a, b);
    b->free = true;
    Block *fp = free_before(b);
    if (fp) {
        b->next_free = fp->next_free;
        fp->next_free = b;
    } else {
#ifdef BUG_CYCLE
        b->next_free = a->free_head ? a->free_head : b;
#else
        b->next_free = a->free_head;
#endif
        a->free_head = b;
    }
    Block *next = b->next;
    bool next_was_free = next && next->free;
    if (next_was_free) {  // absorb the next block (it follows b on the free list)
        b->size += next->size;
        b->next = next->next;
        if (next->next) next->next->prev = b;
#ifdef BUG_USE_AFTER_FREE
        std::free(next);
        b->next_free = next->next_free;
#else
        b->next_free = next->next_free;
        std::free(next);
#endif
    }
    Block *prev = b->prev;
#ifdef BUG_WRONG_MERGE
    bool merge_prev = prev && (prev->free || next_was_free);
#else
    bool merge_prev = prev && prev->free;
#endif
    if (merge_prev) {  // the previous block absorbs b
        prev->size += b->size;
        prev->next = b->next;
        if (b->next) b->next->prev = prev;
        if (fp == prev) prev->next_free = b->next_free;
        else if (fp) fp->next_free = b->next_free;
        else a->free_head = b->next_free;
        std::free(b);
    }
    return 0;
}

}  // namespace

#ifndef FIRST_FIT_NO_MAIN  // examples/native/deferred_free.cpp includes the allocator alone
int main() {
    gpumv_alloc_driver driver = GPUMV_ALLOC_DRIVER_INIT;
    driver.name = "examples/native/first_fit.cpp";
    driver.policy = "first-fit";
    driver.create = create;
    driver.destroy = destroy;
    driver.alloc = alloc;
    driver.free = release;
    return gpumv_run_alloc_driver(&driver);
}
#endif
