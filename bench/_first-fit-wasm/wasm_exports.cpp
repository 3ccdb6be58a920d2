// The wasm module (a WASI reactor): the C++ port's alloc/free, exported for a JS pair loop
// (calls per op, as bench/alloc.ts drives AS TLSF), and the whole pair loop inside wasm.
// Numbers cross the boundary as f64 (offsets are any safe integer in the TS allocator).
#include "first_fit.hpp"
#include "pairs.hpp"

#define EXPORT(name) extern "C" __attribute__((export_name(name)))

#ifdef ORACLE
#include "oracle.hpp"
typedef oracle::OracleFirstFit Pool;
#else
typedef ff::FirstFit Pool;
#endif

static Pool pool;
static bool made = false;
static pairs::Stream stream;
static pairs::Pairs<Pool> loop;

#ifdef ORACLE
static int32_t *record = nullptr;
// Records the port's choices over the pair loop's whole sequence (fill, 500k, count): ff_init
// and pairs_setup then replay them (so the oracle module answers that sequence only).
EXPORT("oracle_record") void oracleRecord(int workload, int count) {
  static pairs::Stream recStream;
  pairs::fillStream(recStream, workload);
  record = oracle::recordChoices(recStream, count);
}
#endif

EXPORT("ff_init") void ffInit(double capacityBytes) {
  if (made) pool.destroy();
  pool.init(static_cast<int64_t>(capacityBytes));
#ifdef ORACLE
  pool.record = record;
  pool.at = 0;
#endif
  made = true;
}
EXPORT("ff_alloc") double ffAlloc(double sizeBytes, double alignBytes) {
  return static_cast<double>(
      pool.alloc(static_cast<int64_t>(sizeBytes), static_cast<int64_t>(alignBytes)));
}
EXPORT("ff_free") void ffFree(double offsetBytes) { pool.free(static_cast<int64_t>(offsetBytes)); }

// Generates the stream in wasm (1 small, 2 mixed), makes a 1 GiB pool and fills it to 10k live.
EXPORT("pairs_setup") void pairsSetup(int workload) {
  pairs::fillStream(stream, workload);
  ffInit(1073741824.0);
  loop.pool = &pool;
  loop.s = &stream;
  loop.liveCount = 0;
  loop.cursor = 0;
  loop.fill();
}
EXPORT("pairs_run") double pairsRun(int count) { return static_cast<double>(loop.run(count)); }
// Where the wasm-made stream lies (to compare it with the JS one).
EXPORT("stream_sizes") double *streamSizes() { return stream.sizes; }
EXPORT("stream_picks") double *streamPicks() { return stream.picks; }
EXPORT("stream_aligns") double *streamAligns() { return stream.aligns; }
