// The request stream of bench/_alloc-stream.ts and the pair loop of bench/_first-fit-pairs.ts,
// for the C++ port (first_fit.hpp) and the lean variant (lean_first_fit.hpp).
#pragma once
#include <cmath>
#include <cstdint>

namespace pairs {

static const int STREAM_LENGTH = 1 << 20;
static const int LIVE = 10000;

struct Stream {
  double sizes[STREAM_LENGTH];
  double aligns[STREAM_LENGTH];
  double picks[STREAM_LENGTH];
};

// workload: 1 small, 2 mixed (the probe's two).
inline void fillStream(Stream &s, int workload) {
  uint32_t state = 0x2545f491u;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return static_cast<double>(state) / 4294967296.0;
  };
  for (int i = 0; i < STREAM_LENGTH; i++) {
    double u = next();
    double a = next();
    // Math.round(256 * 2 ** (8 * u)): positive, so round-half-up == std::round.
    s.sizes[i] = std::round(256.0 * std::pow(2.0, 8.0 * u));
    s.aligns[i] = workload == 1 ? 16 : a < 0.1 ? 16 : a < 0.7 ? 256 : 4096;
    s.picks[i] = next();
  }
}

template <class Pool>
struct Pairs {
  Pool *pool;
  const Stream *s;
  double handles[LIVE + 1];
  int liveCount = 0;
  int cursor = 0;

  void fill() {
    while (liveCount < LIVE) {
      int64_t offset = pool->alloc(static_cast<int64_t>(s->sizes[cursor]),
                                   static_cast<int64_t>(s->aligns[cursor]));
      cursor = (cursor + 1) & (STREAM_LENGTH - 1);
      if (offset >= 0) handles[liveCount++] = static_cast<double>(offset);
    }
  }
  // `count` pairs; the sum of the offsets the allocs returned.
  int64_t run(int count) {
    int64_t sum = 0;
    for (int i = 0; i < count; i++) {
      int index = static_cast<int>(std::floor(s->picks[cursor] * liveCount));
      double handle = handles[index];
      handles[index] = handles[--liveCount];
      pool->free(static_cast<int64_t>(handle));
      int64_t offset = pool->alloc(static_cast<int64_t>(s->sizes[cursor]),
                                   static_cast<int64_t>(s->aligns[cursor]));
      cursor = (cursor + 1) & (STREAM_LENGTH - 1);
      if (offset >= 0) {
        handles[liveCount++] = static_cast<double>(offset);
        sum += offset;
      }
    }
    return sum;
  }
};

}  // namespace pairs
