// A first-fit allocator in C++ compiled to WebAssembly (examples/wasm/build.sh) and run in-process
// by gpu-memory-verifier through the allocator module examples/wasm/first-fit.mjs.
//
// The free ranges are a std::map from start to end (address order); an allocation takes the
// lowest free range whose aligned start plus size fits, keeps the alignment padding in front free
// and the tail free; a free merges with the free neighbours. Those are the choices of the
// harness's policy 'first-fit', offset for offset, so the module declares it.
//
// The exports take and return doubles: JavaScript numbers cross the boundary as they are (an i64
// would cross as a BigInt), and every offset and size of a heap up to 64 GiB is an exact integer
// in a double. Inside, sizes and offsets are 64-bit integers.
//   create(capacity)     a fresh allocator over [0, capacity), replacing the previous one; 0 or -1
//   alloc(size, align)   the offset, or -1 for no room
//   free(offset)         0 accepted, -1 when no live allocation starts at offset
// One allocator lives at a time (the harness runs one per run). The standard library (std::map,
// std::unordered_map, wasi-libc's malloc) links in without a single import: no WASI calls.
//
// Planted bug, behind a compile-time switch (build.sh builds it as first_fit_bug_size_t.wasm):
//   -DBUG_SIZE_T   the allocator keeps sizes and offsets in size_t, 64 bits on the host it was
//                  written for but 32 bits on wasm32: heaps past 4 GiB wrap
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <unordered_map>

namespace {

#ifdef BUG_SIZE_T
using bytes_t = size_t;
#else
using bytes_t = uint64_t;
#endif

class FirstFit {
  public:
    explicit FirstFit(bytes_t capacity) { free_[0] = capacity; }

    // The offset of a new allocation of `size` bytes aligned to `align` (a power of two), or
    // false when no free range holds it.
    bool alloc(bytes_t size, bytes_t align, bytes_t *offset) {
        for (auto it = free_.begin(); it != free_.end(); ++it) {
            bytes_t start = it->first;
            bytes_t end = it->second;
            bytes_t aligned = (start + align - 1) & ~(align - 1);
            if (aligned < start || aligned > end || end - aligned < size) continue;
            free_.erase(it);
            if (aligned > start) free_[start] = aligned;         // the padding stays free
            if (aligned + size < end) free_[aligned + size] = end;  // and the tail
            live_[aligned] = size;
            *offset = aligned;
            return true;
        }
        return false;
    }

    // Frees the allocation at `offset`; false when none starts there.
    bool release(bytes_t offset) {
        auto found = live_.find(offset);
        if (found == live_.end()) return false;
        bytes_t start = offset;
        bytes_t end = offset + found->second;
        live_.erase(found);
        auto next = free_.lower_bound(start);
        if (next != free_.end() && next->first == end) {  // merge with the free range after
            end = next->second;
            next = free_.erase(next);
        }
        if (next != free_.begin()) {
            auto prev = std::prev(next);
            if (prev->second == start) {  // and with the one before
                prev->second = end;
                return true;
            }
        }
        free_[start] = end;
        return true;
    }

  private:
    std::map<bytes_t, bytes_t> free_;            // start -> end, address order, never adjacent
    std::unordered_map<bytes_t, bytes_t> live_;  // offset -> size
};

FirstFit *current = nullptr;

// The API is 64-bit whatever the allocator keeps inside: a double holding an integer in
// [least, 2^53]. NaN, infinities, fractions and negatives are not.
bool is_integer(double value, double least) {
    return value >= least && value <= 9007199254740992.0 &&
           value == static_cast<double>(static_cast<uint64_t>(value));
}

uint64_t to_u64(double value) { return static_cast<uint64_t>(value); }

}  // namespace

extern "C" {

__attribute__((export_name("create"))) int gpumv_create(double capacity) {
    delete current;
    current = nullptr;
    if (!is_integer(capacity, 1)) return -1;
    current = new FirstFit(static_cast<bytes_t>(to_u64(capacity)));
    return 0;
}

__attribute__((export_name("alloc"))) double gpumv_alloc(double size, double align) {
    if (current == nullptr || !is_integer(size, 1) || !is_integer(align, 1)) return -1;
    uint64_t a = to_u64(align);
    if ((a & (a - 1)) != 0) return -1;
    bytes_t offset = 0;
    if (!current->alloc(static_cast<bytes_t>(to_u64(size)), static_cast<bytes_t>(a), &offset))
        return -1;
    return static_cast<double>(offset);
}

__attribute__((export_name("free"))) int gpumv_free(double offset) {
    if (current == nullptr || !is_integer(offset, 0)) return -1;
    return current->release(static_cast<bytes_t>(to_u64(offset))) ? 0 : -1;
}

}  // extern "C"
