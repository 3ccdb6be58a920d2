// A fence-delayed free list with a reusable-object pool in front of a first-fit sub-allocator
// (examples/native/first_fit.cpp, included without its main), driven by gpu-memory-verifier
// through include/gpumv_driver.h (system deferred-free: docs/native-protocol.md).
//
// A release records the frame fence's next value; the bytes go back to the sub-allocator only at
// an end of frame after the GPU's completed value reached it, or when an allocation finds no room
// (then completed pooled objects go back too, and the request is tried once more). A pooled
// object is reused only once its stamp has completed. That is the harness's model call for call.
//
// Planted bug (examples/native/build.sh builds it):
//   -DBUG_POOL_NO_FENCE  pool_acquire reuses a pooled object whether or not the GPU is done with it
#define FIRST_FIT_NO_MAIN
#include "first_fit.cpp"

#include <algorithm>
#include <vector>

namespace {

struct Entry {
    uint64_t offset;
    uint64_t size;
    int64_t size_class;  // -1: a plain allocation
    uint64_t fence;      // released or pooled: the fence's next value then
};

struct Deferred {
    void *inner;
    std::vector<uint64_t> sizes;
    uint64_t object_align;
    std::vector<Entry> live, pending, pooled;
};

void *deferred_create(void *, const gpumv_deferred_config *config) {
    Deferred *d = new Deferred();
    d->inner = create(nullptr, config->capacity_bytes);
    d->sizes.assign(config->object_sizes_bytes, config->object_sizes_bytes + config->size_classes);
    d->object_align = config->object_align_bytes;
    return d;
}

void deferred_destroy(void *, void *state) {
    Deferred *d = static_cast<Deferred *>(state);
    destroy(nullptr, d->inner);
    delete d;
}

// Moves the completed entries of `list` back to the sub-allocator; their offsets, in list order.
std::vector<uint64_t> give_back(Deferred *d, std::vector<Entry> &list, const gpumv_fence *fence) {
    std::vector<uint64_t> done;
    std::vector<Entry> kept;
    for (const Entry &e : list) {
        if (e.fence <= fence->completed_value) {
            release(d->inner, e.offset);
            done.push_back(e.offset);
        } else {
            kept.push_back(e);
        }
    }
    list.swap(kept);
    return done;
}

bool any_completed(const std::vector<Entry> &list, const gpumv_fence *fence) {
    for (const Entry &e : list)
        if (e.fence <= fence->completed_value) return true;
    return false;
}

int alloc_inner(Deferred *d, uint64_t size, uint64_t align, const gpumv_fence *fence, uint64_t *offset) {
    if (size == 0) return GPUMV_ERR_BAD_SIZE;
    if (align == 0 || (align & (align - 1)) != 0) return GPUMV_ERR_BAD_ALIGN;
    if (alloc(d->inner, size, align, offset)) return 0;
    *offset = GPUMV_NONE;
    if (!any_completed(d->pending, fence) && !any_completed(d->pooled, fence)) return 0;
    give_back(d, d->pending, fence);
    give_back(d, d->pooled, fence);
    if (!alloc(d->inner, size, align, offset)) *offset = GPUMV_NONE;
    return 0;
}

int deferred_alloc(void *state, uint64_t size, uint64_t align, const gpumv_fence *fence, uint64_t *offset) {
    Deferred *d = static_cast<Deferred *>(state);
    int error = alloc_inner(d, size, align, fence, offset);
    if (!error && *offset != GPUMV_NONE) d->live.push_back(Entry{*offset, size, -1, 0});
    return error;
}

std::vector<Entry>::iterator find_live(Deferred *d, uint64_t offset) {
    return std::find_if(d->live.begin(), d->live.end(), [&](const Entry &e) { return e.offset == offset; });
}

// Takes a live allocation into `list` stamped with the frame's value (a release or a pool release).
int retire(Deferred *d, uint64_t offset, const gpumv_fence *fence, std::vector<Entry> &list, bool pooled_only) {
    auto it = find_live(d, offset);
    if (it == d->live.end()) return GPUMV_ERR_BAD_FREE;
    if (pooled_only && it->size_class < 0) return GPUMV_ERR_DEFERRED_NOT_POOLED;
    Entry e = *it;
    d->live.erase(it);
    e.fence = fence->next_value;
    list.push_back(e);
    return 0;
}

int deferred_release(void *state, uint64_t offset, const gpumv_fence *fence) {
    Deferred *d = static_cast<Deferred *>(state);
    return retire(d, offset, fence, d->pending, false);
}

void deferred_end_frame(void *state, const gpumv_fence *fence, gpumv_out *returned) {
    Deferred *d = static_cast<Deferred *>(state);
    for (uint64_t offset : give_back(d, d->pending, fence)) gpumv_emit(returned, offset);
}

int deferred_pool_acquire(void *state, uint64_t size_class, const gpumv_fence *fence, uint64_t *offset, int *hit) {
    Deferred *d = static_cast<Deferred *>(state);
    if (size_class >= d->sizes.size()) return GPUMV_ERR_DEFERRED_BAD_SIZE_CLASS;
    for (auto it = d->pooled.begin(); it != d->pooled.end(); ++it) {
#ifdef BUG_POOL_NO_FENCE
        bool reusable = it->size_class == static_cast<int64_t>(size_class);
#else
        bool reusable = it->size_class == static_cast<int64_t>(size_class) && it->fence <= fence->completed_value;
#endif
        if (reusable) {
            Entry e = *it;
            d->pooled.erase(it);
            d->live.push_back(e);
            *offset = e.offset;
            *hit = 1;
            return 0;
        }
    }
    uint64_t size = d->sizes[size_class];
    int error = alloc_inner(d, size, d->object_align, fence, offset);
    if (!error && *offset != GPUMV_NONE) d->live.push_back(Entry{*offset, size, static_cast<int64_t>(size_class), 0});
    return error;
}

int deferred_pool_release(void *state, uint64_t offset, const gpumv_fence *fence) {
    Deferred *d = static_cast<Deferred *>(state);
    return retire(d, offset, fence, d->pooled, true);
}

void deferred_pool_trim(void *state, const gpumv_fence *fence, gpumv_out *returned) {
    Deferred *d = static_cast<Deferred *>(state);
    std::vector<uint64_t> done = give_back(d, d->pooled, fence);
    std::sort(done.begin(), done.end());
    for (uint64_t offset : done) gpumv_emit(returned, offset);
}

void deferred_readings(void *state, gpumv_deferred_readings *out) {
    Deferred *d = static_cast<Deferred *>(state);
    for (const Entry &e : d->pending) out->pending_bytes += e.size;
    for (const Entry &e : d->pooled) out->pooled_bytes += e.size;
    out->held_count = d->pending.size() + d->pooled.size();
    // The sub-allocator's own blocks: first fit keeps padding free, so it wastes nothing.
    for (Block *b = static_cast<FirstFit *>(d->inner)->head; b; b = b->next)
        (b->free ? out->free_bytes : out->used_bytes) += b->size;
}

}  // namespace

int main() {
    gpumv_deferred_driver driver = GPUMV_DEFERRED_DRIVER_INIT;
    driver.name = "examples/native/deferred_free.cpp";
    driver.kinds = "first-fit";
    driver.create = deferred_create;
    driver.destroy = deferred_destroy;
    driver.alloc = deferred_alloc;
    driver.release = deferred_release;
    driver.end_frame = deferred_end_frame;
    driver.pool_acquire = deferred_pool_acquire;
    driver.pool_release = deferred_pool_release;
    driver.pool_trim = deferred_pool_trim;
    driver.readings = deferred_readings;
    return gpumv_run_deferred_driver(&driver);
}
