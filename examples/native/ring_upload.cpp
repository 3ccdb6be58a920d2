// A ring upload allocator driven by gpu-memory-verifier through include/gpumv_driver.h
// (system ring-upload: docs/native-protocol.md).
//
// Ranges move reserved -> submitted(fence value) -> freed by collect once the GPU's completed
// value reaches their value. An allocation starts at the aligned write cursor, or wraps to 0 when
// the tail is too short; it is refused when the bytes it sweeps (padding and a skipped tail
// included) touch a live range. With nothing live the cursor restarts at 0. That is the harness's
// ring model offset for offset.
//
// Planted bugs, one per compile-time switch (examples/native/build.sh builds each):
//   -DBUG_EARLY_COLLECT  collect frees ranges one fence value too early (the GPU still reads them)
//   -DBUG_WRAP_OVERLAP   a wrapped allocation does not check the bytes at the start of the ring
#include "gpumv_driver.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace {

struct Range {
    uint64_t offset;
    uint64_t size;
    bool submitted;
    uint64_t fence;
};

struct Ring {
    uint64_t capacity = 0;
    uint64_t cursor = 0;
    uint64_t last_submitted = 0;
    std::vector<Range> ranges;        // allocation order
    std::deque<uint64_t> submitted;   // offsets, submission order
};

void *create(void *, uint64_t capacity) {
    Ring *r = new Ring();
    r->capacity = capacity;
    return r;
}

void destroy(void *, void *ring) { delete static_cast<Ring *>(ring); }

bool touches(const Ring *r, uint64_t begin, uint64_t end) {
    for (const Range &range : r->ranges)
        if (range.offset < end && begin < range.offset + range.size) return true;
    return false;
}

int allocate(void *state, uint64_t size, uint64_t align, uint64_t *offset) {
    Ring *r = static_cast<Ring *>(state);
    if (size == 0) return GPUMV_ERR_BAD_SIZE;
    if (align == 0 || (align & (align - 1)) != 0) return GPUMV_ERR_BAD_ALIGN;
    if (r->ranges.empty()) r->cursor = 0;
    uint64_t begin = (r->cursor + align - 1) / align * align;
    if (begin >= r->cursor && begin <= r->capacity && size <= r->capacity - begin) {
        if (touches(r, r->cursor, begin + size)) return 0;  // *offset stays GPUMV_NONE
        *offset = begin;
    } else if (size <= r->capacity) {
#ifdef BUG_WRAP_OVERLAP
        if (touches(r, r->cursor, r->capacity)) return 0;
#else
        if (touches(r, r->cursor, r->capacity) || touches(r, 0, size)) return 0;
#endif
        *offset = 0;
    } else {
        return 0;
    }
    r->ranges.push_back(Range{*offset, size, false, 0});
    r->cursor = *offset + size;
    return 0;
}

Range *find(Ring *r, uint64_t offset) {
    for (Range &range : r->ranges)
        if (range.offset == offset) return &range;
    return nullptr;
}

int submit(void *state, uint64_t offset, uint64_t fence) {
    Ring *r = static_cast<Ring *>(state);
    Range *range = find(r, offset);
    if (!range) return GPUMV_ERR_RING_UNKNOWN_RANGE;
    if (range->submitted) return GPUMV_ERR_RING_ALREADY_SUBMITTED;
    if (fence < r->last_submitted) return GPUMV_ERR_RING_FENCE_ORDER;
    range->submitted = true;
    range->fence = fence;
    r->last_submitted = fence;
    r->submitted.push_back(offset);
    return 0;
}

void erase(Ring *r, uint64_t offset) {
    for (size_t i = 0; i < r->ranges.size(); i++) {
        if (r->ranges[i].offset == offset) {
            r->ranges.erase(r->ranges.begin() + static_cast<std::ptrdiff_t>(i));
            return;
        }
    }
}

int cancel(void *state, uint64_t offset) {
    Ring *r = static_cast<Ring *>(state);
    Range *range = find(r, offset);
    if (!range) return GPUMV_ERR_RING_UNKNOWN_RANGE;
    if (range->submitted) return GPUMV_ERR_RING_ALREADY_SUBMITTED;
    erase(r, offset);
    return 0;
}

void collect(void *state, uint64_t completed, gpumv_out *freed) {
    Ring *r = static_cast<Ring *>(state);
    while (!r->submitted.empty()) {
        uint64_t offset = r->submitted.front();
#ifdef BUG_EARLY_COLLECT
        if (find(r, offset)->fence > completed + 1) break;
#else
        if (find(r, offset)->fence > completed) break;
#endif
        r->submitted.pop_front();
        erase(r, offset);
        gpumv_emit(freed, offset);
    }
}

}  // namespace

int main() {
    gpumv_ring_driver driver = GPUMV_RING_DRIVER_INIT;
    driver.name = "examples/native/ring_upload.cpp";
    driver.create = create;
    driver.destroy = destroy;
    driver.allocate = allocate;
    driver.submit = submit;
    driver.cancel = cancel;
    driver.collect = collect;
    return gpumv_run_ring_driver(&driver);
}
