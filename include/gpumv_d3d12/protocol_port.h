// gpumv D3D12 kit: ProtocolPort, the GpuPort whose calls travel to the harness's simulated GPU
// over the process protocol (docs/native-protocol.md, "Call-backs"): frames on fd 3 (harness to
// driver) and fd 4 (driver to harness).
//
// Throughput: a call whose answer the harness cannot change (MakeResident, Evict,
// EnqueueMakeResident, CreateFence, queue Execute/Signal/Wait, a CPU fence Signal, faults) is
// *posted*: appended to a buffer that goes out with the next call that needs an answer, or with
// the command's answer. The harness sends its GPU state (clock, budgets, usage, every fence's
// completed value, every object's residency count and segment) with each command and each reply,
// so GetCompletedValue, QueryPerformanceCounter and QueryVideoMemoryInfo are answered from that
// state: fences move only when the harness lets the GPU run (a command, or a CPU wait's
// AdvanceUntil, whose reply brings the new state), and usage only by this driver's own posted
// calls, which the port counts as the simulated GPU does (and reports the count it answered, for
// the harness to check). So a command costs one round trip, plus one per CPU wait that lets the
// GPU run, whatever other device calls it makes.
#pragma once

#include <gpumv_d3d12/port.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace gpumv_d3d12 {
namespace wire {

constexpr uint32_t kMagic = 0x564D5047u;  // "GPMV"
constexpr uint32_t kVersion = 1;
constexpr int kInFd = 3;
constexpr int kOutFd = 4;

/** Call codes of a 'C' frame (driver to harness). */
enum Call : uint32_t {
  MakeResident = 1,         // objects...
  EnqueueMakeResident = 2,  // fence, value, objects...
  Evict = 3,                // objects...
  CreateFence = 4,          // fence, initial value
  DestroyFence = 5,         // fence
  Execute = 6,              // queue, lists, then per list: list id, reference count, references...
  Signal = 7,               // queue, fence, value
  Wait = 8,                 // queue, fence, value
  CpuSignal = 9,            // fence, value
  AdvanceUntil = 10,        // fence, value (answered: 1 reached, 0 not now)
  Query = 11,               // (answered: the state)
  Fault = 12,               // text: a kit fault or a driver-loop finding ("kind: message")
  Fatal = 13,               // text: the run ends (a deadlock); the driver exits after sending it
  Usage = 14,               // local usage, non-local usage: what QueryVideoMemoryInfo answered (the harness checks it)
};

/** The call-back extension this port speaks (hello key `callbacks`): 2, state blocks with each object's residency. */
constexpr uint32_t kCallbacks = 2;

/** 'C' frame flag: the last call waits for an 'R' frame. */
constexpr uint32_t kWantsReply = 1;

[[noreturn]] inline void Die(const char* what) {
  fprintf(stderr, "gpumv-d3d12 protocol: %s (%s)\n", what, strerror(errno));
  fflush(stderr);
  _exit(3);
}

inline void WriteAll(const uint8_t* data, size_t size) {
  while (size > 0) {
    ssize_t n = write(kOutFd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) Die("write to fd 4 failed");
    data += n;
    size -= (size_t)n;
  }
}

/**
 * fd 3, buffered: one read takes whatever the pipe holds (a whole frame, usually), so a frame
 * costs one system call instead of one for its header and one for its payload. Only the thread
 * holding the kit's baton reads (the driver loop, or a CPU wait's AdvanceUntil), one at a time.
 */
struct In {
  std::vector<uint8_t> buffer = std::vector<uint8_t>(1 << 16);
  size_t start = 0, end = 0;

  /** Makes `size` bytes available from `start`; false at the end of input before the first byte. */
  bool Fill(size_t size) {
    if (end - start >= size) return true;
    if (start > 0) {
      memmove(buffer.data(), buffer.data() + start, end - start);
      end -= start;
      start = 0;
    }
    if (buffer.size() < size) buffer.resize(size);
    while (end < size) {
      ssize_t n = read(kInFd, buffer.data() + end, buffer.size() - end);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) Die("read from fd 3 failed");
      if (n == 0) {
        if (end == 0) return false;
        errno = 0;
        Die("fd 3 ended inside a frame");
      }
      end += (size_t)n;
    }
    return true;
  }
};

inline In& Input() {
  static In in;
  return in;
}

inline uint32_t Get32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
inline uint64_t Get64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

/** An outgoing byte buffer of frames. */
struct Out {
  std::vector<uint8_t> bytes;
  void Put32(uint32_t v) { bytes.insert(bytes.end(), (const uint8_t*)&v, (const uint8_t*)&v + 4); }
  void Put64(uint64_t v) { bytes.insert(bytes.end(), (const uint8_t*)&v, (const uint8_t*)&v + 8); }
  size_t Begin(char kind) {
    bytes.push_back((uint8_t)kind);
    bytes.push_back(0);
    bytes.push_back(0);
    bytes.push_back(0);
    Put32(0);
    return bytes.size();
  }
  void End(size_t start) {
    uint32_t length = (uint32_t)(bytes.size() - start);
    memcpy(bytes.data() + start - 4, &length, 4);
  }
  void Send() {
    if (!bytes.empty()) WriteAll(bytes.data(), bytes.size());
    bytes.clear();
  }
};

/** One incoming frame. */
struct Frame {
  char kind = 0;
  std::vector<uint8_t> payload;
};

/** Reads one frame; false at the end of input. */
inline bool ReadFrame(Frame& frame) {
  In& in = Input();
  if (!in.Fill(8)) return false;
  const uint8_t* header = in.buffer.data() + in.start;
  if (header[1] != 0 || header[2] != 0 || header[3] != 0) {
    errno = 0;
    Die("a frame header with non-zero padding");
  }
  frame.kind = (char)header[0];
  size_t length = Get32(header + 4);
  if (!in.Fill(8 + length)) Die("fd 3 ended inside a frame");
  frame.payload.assign(in.buffer.data() + in.start + 8, in.buffer.data() + in.start + 8 + length);
  in.start += 8 + length;
  return true;
}

}  // namespace wire

/** The harness's GPU state as the last command or reply carried it. */
struct GpuState {
  uint64_t ticks = 0;
  MemoryInfo local, nonLocal;
  /** Per object (the harness's ids): its residency reference count and whether it lives in the non-local segment. */
  std::vector<uint32_t> refs;
  std::vector<uint8_t> inNonLocal;
  /** Live fences and their completed values (a handful: a flat list beats a hash map here). */
  std::vector<std::pair<uint32_t, uint64_t>> fences;
  uint64_t* Find(uint32_t fence) {
    for (auto& f : fences) if (f.first == fence) return &f.second;
    return nullptr;
  }
  void Set(uint32_t fence, uint64_t value) {
    if (uint64_t* v = Find(fence)) *v = value;
    else fences.emplace_back(fence, value);
  }
  void Erase(uint32_t fence) {
    for (size_t i = 0; i < fences.size(); i++)
      if (fences[i].first == fence) {
        fences.erase(fences.begin() + (long)i);
        return;
      }
  }
  /** Parses the state block at `p`; returns the bytes it used, or 0 when it does not fit. */
  size_t Read(const uint8_t* p, size_t size) {
    if (size < 48) return 0;
    ticks = wire::Get64(p);
    local.budgetBytes = wire::Get64(p + 8);
    local.usageBytes = wire::Get64(p + 16);
    nonLocal.budgetBytes = wire::Get64(p + 24);
    nonLocal.usageBytes = wire::Get64(p + 32);
    uint32_t count = wire::Get32(p + 40);
    size_t used = 48 + 16 * (size_t)count;
    if (used + 8 > size) return 0;
    fences.clear();
    for (uint32_t i = 0; i < count; i++) Set((uint32_t)wire::Get64(p + 48 + 16 * i), wire::Get64(p + 56 + 16 * i));
    uint32_t objects = wire::Get32(p + used);
    const uint8_t* o = p + used + 8;
    used += 8 + 8 * (size_t)objects;
    if (used > size) return 0;
    refs.resize(objects);
    inNonLocal.resize(objects);
    for (uint32_t i = 0; i < objects; i++) {
      refs[i] = wire::Get32(o + 8 * i);
      inNonLocal[i] = wire::Get32(o + 8 * i + 4) != 0;
    }
    return used;
  }
};

class ProtocolPort : public GpuPort {
 public:
  explicit ProtocolPort(uint64_t ticksPerSecond = 1000) : ticksPerSecond_(ticksPerSecond) {}

  void SetTicksPerSecond(uint64_t ticksPerSecond) { ticksPerSecond_ = ticksPerSecond; }
  /** The state a command frame carried (the driver loop hands it over before running the command). */
  GpuState& State() { return state_; }
  /** Posted calls not yet sent, for the driver loop to send with a command's answer. */
  wire::Out& Pending() { return out_; }
  /** Closes the posted calls' 'C' frame (if any) so that an 'A' frame can follow in the same write. */
  void ClosePosted() { CloseCalls(0); }
  /** Round trips made (a benchmark's measure). */
  uint64_t RoundTrips() const { return roundTrips_; }

  // A residency call is posted even when it fails: the harness armed the same failure on its
  // simulated GPU, which takes it at the same call and records the call as failed.
  HRESULT MakeResident(const uint32_t* objects, uint32_t count) override {
    Objects(wire::MakeResident, objects, count, {});
    if (TakeFailure(wire::MakeResident)) return E_OUTOFMEMORY;
    Count(objects, count, true);
    return S_OK;
  }
  HRESULT EnqueueMakeResident(const uint32_t* objects, uint32_t count, uint32_t fence, uint64_t value) override {
    Objects(wire::EnqueueMakeResident, objects, count, {fence, value});
    if (TakeFailure(wire::EnqueueMakeResident)) return E_OUTOFMEMORY;
    Count(objects, count, true);
    return S_OK;
  }
  HRESULT Evict(const uint32_t* objects, uint32_t count) override {
    Objects(wire::Evict, objects, count, {});
    if (TakeFailure(wire::Evict)) return E_OUTOFMEMORY;
    Count(objects, count, false);
    return S_OK;
  }
  uint32_t CreateFence(uint64_t initialValue) override {
    uint32_t id = ++lastFence_;
    Post(wire::CreateFence, {id, initialValue});
    state_.Set(id, initialValue);
    return id;
  }
  void DestroyFence(uint32_t fence) override {
    Post(wire::DestroyFence, {fence});
    state_.Erase(fence);
  }
  void Execute(uint32_t queue, const ListRefs* lists, uint32_t count) override {
    uint32_t words = 2;
    for (uint32_t i = 0; i < count; i++) words += 2 + lists[i].count;
    Open(wire::Execute, words);
    out_.Put64(queue);
    out_.Put64(count);
    for (uint32_t i = 0; i < count; i++) {
      out_.Put64(lists[i].list);
      out_.Put64(lists[i].count);
      for (uint32_t j = 0; j < lists[i].count; j++) out_.Put64(lists[i].objects[j]);
    }
  }
  HRESULT Signal(uint32_t queue, uint32_t fence, uint64_t value) override {
    Post(wire::Signal, {queue, fence, value});
    return S_OK;
  }
  HRESULT Wait(uint32_t queue, uint32_t fence, uint64_t value) override {
    Post(wire::Wait, {queue, fence, value});
    return S_OK;
  }
  uint64_t FenceCompleted(uint32_t fence) override {
    const uint64_t* v = state_.Find(fence);
    return v == nullptr ? 0 : *v;
  }
  HRESULT CpuSignal(uint32_t fence, uint64_t value) override {
    Post(wire::CpuSignal, {fence, value});
    uint64_t* v = state_.Find(fence);
    if (v != nullptr && *v < value) *v = value;
    return S_OK;
  }
  bool AdvanceUntil(uint32_t fence, uint64_t value) override {
    Post(wire::AdvanceUntil, {fence, value});
    return Ask() != 0;
  }
  MemoryInfo QueryVideoMemoryInfo(Segment segment) override {
    if (usageCounted_) {
      // The harness checks the count against its own when it applies the calls before this one.
      Post(wire::Usage, {state_.local.usageBytes, state_.nonLocal.usageBytes});
      usageCounted_ = false;
    }
    return segment == Segment::Local ? state_.local : state_.nonLocal;
  }
  uint64_t Ticks() override { return state_.ticks; }
  uint64_t TicksPerSecond() override { return ticksPerSecond_; }
  void Fault(const char* kind, const std::string& message) override { Text(wire::Fault, std::string(kind) + ": " + message); }
  void Fatal(const char* kind, const std::string& message) override {
    Text(wire::Fatal, std::string(kind) + ": " + message);
    CloseCalls(0);
    out_.Send();
    _exit(0);
  }

  /**
   * The harness's `Fail` command: the next call of this kind (MakeResident, EnqueueMakeResident or
   * Evict) fails with E_OUTOFMEMORY and changes nothing, as the simulated GPU's armed failure does.
   */
  void ArmFailure(uint32_t call) { armed_ |= 1u << call; }
  /** A new run: no failure armed. */
  void ClearFailures() { armed_ = 0; }

  /** The driver loop received a command: its state is the harness's latest. */
  void CommandState() { usageCounted_ = false; }
  /** The run's object sizes (the begin command's), by the harness's ids: usage follows the driver's own calls. */
  void SetObjectSizes(const uint64_t* sizes, size_t count) { sizes_.assign(sizes, sizes + count); }

 private:
  void Open(uint32_t call, uint32_t words) {
    if (callsStart_ == 0) {
      callsStart_ = out_.Begin('C');
      out_.Put32(0);  // flags, set when the frame closes
      out_.Put32(0);  // calls
      calls_ = 0;
    }
    out_.Put32(call);
    out_.Put32(words);
    calls_++;
  }
  void Post(uint32_t call, std::initializer_list<uint64_t> words) {
    Open(call, (uint32_t)words.size());
    for (uint64_t w : words) out_.Put64(w);
  }
  void Objects(uint32_t call, const uint32_t* objects, uint32_t count, std::initializer_list<uint64_t> head) {
    Open(call, (uint32_t)head.size() + count);
    for (uint64_t w : head) out_.Put64(w);
    for (uint32_t i = 0; i < count; i++) out_.Put64(objects[i]);
  }
  void Text(uint32_t call, const std::string& text) {
    uint32_t words = 1 + (uint32_t)((text.size() + 7) / 8);
    Open(call, words);
    out_.Put64(text.size());
    size_t at = out_.bytes.size();
    out_.bytes.resize(at + 8 * (words - 1), 0);
    memcpy(out_.bytes.data() + at, text.data(), text.size());
  }
  void CloseCalls(uint32_t flags) {
    if (callsStart_ == 0) return;
    memcpy(out_.bytes.data() + callsStart_, &flags, 4);
    memcpy(out_.bytes.data() + callsStart_ + 4, &calls_, 4);
    out_.End(callsStart_);
    callsStart_ = 0;
  }
  /**
   * Usage after the driver's own residency calls, counted as the simulated GPU counts it: an
   * object's bytes join its segment's usage when its reference count leaves 0 (MakeResident and
   * EnqueueMakeResident alike) and leave it when the count returns to 0; an Evict of an object
   * that is not resident changes nothing. Objects the state does not list are the harness's to
   * refuse (garbage).
   */
  void Count(const uint32_t* objects, uint32_t count, bool makeResident) {
    for (uint32_t i = 0; i < count; i++) {
      uint32_t o = objects[i];
      if (o >= state_.refs.size() || o >= sizes_.size()) continue;
      uint64_t& usage = state_.inNonLocal[o] ? state_.nonLocal.usageBytes : state_.local.usageBytes;
      if (makeResident) {
        if (state_.refs[o]++ == 0) usage += sizes_[o];
      } else if (state_.refs[o] > 0 && --state_.refs[o] == 0) {
        usage -= sizes_[o];
      }
    }
    usageCounted_ = true;
  }

  /** Sends the posted calls, the last of which wants an answer; reads the 'R' frame: its value and state. */
  uint64_t Ask() {
    CloseCalls(wire::kWantsReply);
    out_.Send();
    roundTrips_++;
    wire::Frame frame;
    if (!wire::ReadFrame(frame)) _exit(0);  // the harness went away
    if (frame.kind != 'R' || frame.payload.size() < 8) {
      errno = 0;
      wire::Die("expected a reply frame");
    }
    uint64_t value = wire::Get64(frame.payload.data());
    if (state_.Read(frame.payload.data() + 8, frame.payload.size() - 8) == 0) {
      errno = 0;
      wire::Die("a reply frame with a short state");
    }
    usageCounted_ = false;
    return value;
  }

  GpuState state_;
  wire::Out out_;
  size_t callsStart_ = 0;
  uint32_t calls_ = 0;
  uint32_t lastFence_ = 0;
  uint64_t ticksPerSecond_;
  std::vector<uint64_t> sizes_;
  /** Bit `call` set: the next call of that kind fails (ArmFailure). */
  uint32_t armed_ = 0;
  bool TakeFailure(uint32_t call) {
    if ((armed_ & (1u << call)) == 0) return false;
    armed_ &= ~(1u << call);
    return true;
  }
  bool usageCounted_ = false;  // usage moved by this driver's calls since the last state
  uint64_t roundTrips_ = 0;
};

}  // namespace gpumv_d3d12
