// Native driver: ./native [small|mixed] [pairs] [ff|oracle]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include "first_fit.hpp"
#include "pairs.hpp"
#include "oracle.hpp"

static double cpuNs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static pairs::Stream stream;

template <class Pool>
static void measure(Pool &pool, const char *name, const char *workload, int count) {
  static pairs::Pairs<Pool> p;
  p.pool = &pool;
  p.s = &stream;
  p.fill();
  p.run(500000);
  double before = cpuNs();
  int64_t sum = p.run(count);
  double used = cpuNs() - before;
  printf("%s, %s: %.1f ns/pair, offsets sum %lld\n", name, workload, used / count,
         static_cast<long long>(sum));
}

int main(int argc, char **argv) {
  const char *workload = argc > 1 ? argv[1] : "small";
  int count = argc > 2 ? atoi(argv[2]) : 2000000;
  const char *which = argc > 3 ? argv[3] : "ff";
  int w = strcmp(workload, "small") == 0 ? 1 : strcmp(workload, "mixed") == 0 ? 2 : 0;
  if (w == 0 || count <= 0) {
    fprintf(stderr, "usage: native [small|mixed] [pairs] [ff|oracle]\n");
    return 2;
  }
  pairs::fillStream(stream, w);
  if (strcmp(which, "ff") == 0) {
    static ff::FirstFit pool;
    pool.init(int64_t(1) << 30);
    measure(pool, "first fit C++ native", workload, count);
  }
  else if (strcmp(which, "oracle") == 0) {
    // Record the port's choices (untimed), then replay them without the index.
    int32_t *record = oracle::recordChoices(stream, count);
    static oracle::OracleFirstFit pool;
    pool.init(int64_t(1) << 30);
    pool.record = record;
    measure(pool, "oracle (no free index) C++ native", workload, count);
  }
  else {
    fprintf(stderr, "unknown allocator %s\n", which);
    return 2;
  }
  return 0;
}
