// gpumv D3D12 kit: the driver loop of a native residency manager (system `native-residency`).
//
// The harness sends the residency manager system's commands one at a time (objects tracked and
// untracked, residency sets recorded, command lists executed with their sets, the paging thread
// let run) with its GPU state; the loop calls a team's callbacks, and every device call the
// manager makes travels back to the harness's simulated GPU through ProtocolPort. The harness
// keeps the GPU-side commands (GPU progress, the clock, budgets, segment moves) to itself.
//
// A team writes a driver file of a few lines:
//
//     #include <gpumv_d3d12/residency_driver.h>
//     #include "my_residency.h"              // the manager, unchanged
//     struct Team : gpumv_d3d12::StarterLibraryCallbacks<My::ResidencyManager, My::ManagedObject, My::ResidencySet> {};
//     int main() { return gpumv_d3d12::RunResidencyDriver<Team>("my manager", ""); }
//
// StarterLibraryCallbacks fits a manager with the D3D12 Residency Starter Library's API; another
// API overrides the static functions it names (Create, Destroy, Track, Untrack, CreateSet,
// DestroySet, Open, Insert, Close, Execute). Wire format: docs/native-protocol.md, "Call-backs".
#pragma once

#include <gpumv_d3d12/kit.h>
#include <gpumv_d3d12/protocol_port.h>

#include <memory>
#include <string>
#include <vector>

namespace gpumv_d3d12 {

/** Callbacks for a manager with the starter library's API (ResidencyManager, ManagedObject, ResidencySet). */
template <class ManagerT, class ObjectT, class SetT>
struct StarterLibraryCallbacks {
  using Manager = ManagerT;
  using Object = ObjectT;
  using Set = SetT;
  static HRESULT Create(Manager& m, ID3D12Device* device, IDXGIAdapter3* adapter, UINT32 maxLatency) {
    return m.Initialize(device, 0, adapter, maxLatency);
  }
  static void Destroy(Manager& m) { m.Destroy(); }
  static void Track(Manager& m, Object& o, ID3D12Pageable* pageable, UINT64 size, bool resident) {
    o.Initialize(pageable, size);
    o.ResidencyStatus = resident ? Object::RESIDENCY_STATUS::RESIDENT : Object::RESIDENCY_STATUS::EVICTED;
    m.BeginTrackingObject(&o);
  }
  static void Untrack(Manager& m, Object& o) { m.EndTrackingObject(&o); }
  static Set* CreateSet(Manager& m) { return m.CreateResidencySet(); }
  static void DestroySet(Manager& m, Set* s) { m.DestroyResidencySet(s); }
  static HRESULT Open(Set* s) { return s->Open(); }
  static bool Insert(Set* s, Object& o) { return s->Insert(&o); }
  static HRESULT Close(Set* s) { return s->Close(); }
  static HRESULT Execute(Manager& m, ID3D12CommandQueue* queue, ID3D12CommandList** lists, Set** sets, UINT32 count) {
    return m.ExecuteCommandLists(queue, lists, sets, count);
  }
};

namespace residency {

/** Command op codes of a residency 'B' frame. */
enum Op : uint32_t {
  Begin = 1,    // device version, queues, max latency, ticks per second, start evicted, seed, permille, objects, sizes...
  End = 2,      // (the manager destroyed, everything released, leaks reported)
  Track = 3,    // object
  Untrack = 4,  // object
  Record = 5,   // set, objects...: open, insert each, close
  Execute = 6,  // queue, lists, then per list: set (or 2^64-1), reference count, references...
  Quiesce = 7,  // the manager's other threads run until every one of them blocks
  Fail = 8,     // call (1 MakeResident, 2 EnqueueMakeResident, 3 Evict): the next such device call fails
};

/** Sets created for a run (the harness's set handles are taken modulo this). */
constexpr uint32_t kSets = 4;

template <class Team>
class Loop {
 public:
  using Manager = typename Team::Manager;
  using Object = typename Team::Object;
  using Set = typename Team::Set;

  explicit Loop(ProtocolPort& port) : port_(port) {}

  /** Runs one command; writes its answer values. Returns false for an unknown op. */
  bool Run(uint32_t op, const uint64_t* a, uint32_t n, std::vector<uint64_t>& answer) {
    switch (op) {
      case Begin: return BeginRun(a, n);
      case End: EndRun(); return true;
      case Track:
        if (n < 1 || a[0] >= objects_.size() || !Live()) return false;
        TrackObject((uint32_t)a[0]);
        return true;
      case Untrack:
        if (n < 1 || a[0] >= objects_.size() || !Live()) return false;
        if (objects_[a[0]]) {
          Team::Untrack(*manager_, *objects_[a[0]]);
          objects_[a[0]].reset();
        }
        return true;
      case Record: return Live() && n >= 1 && RecordSet(a, n, answer);
      case Execute: return Live() && n >= 2 && ExecuteLists(a, n, answer);
      case Quiesce:
        if (!Live()) return false;
        // A finite wait on an event nobody sets: every other thread runs until it blocks (the GPU
        // running towards the fences they wait for), then the wait times out.
        WaitForSingleObject(quiet_, 1);
        return true;
      case Fail:
        if (n < 1 || a[0] < wire::MakeResident || a[0] > wire::Evict || !Live()) return false;
        port_.ArmFailure((uint32_t)a[0]);
        return true;
      default: return false;
    }
  }

  bool Live() const { return manager_ != nullptr; }

 private:
  bool BeginRun(const uint64_t* a, uint32_t n) {
    if (Live()) EndRun();
    if (n < 8 || n < 8 + a[7]) return false;
    port_.SetTicksPerSecond(a[3] == 0 ? 1 : a[3]);
    port_.SetObjectSizes(a + 8, (size_t)a[7]);
    port_.ClearFailures();
    Kit::Get().Install(&port_);  // again: QueryPerformanceFrequency reads the run's ticks per second
    sched::SetPreemption(a[5], (uint32_t)a[6]);
    Kit& kit = Kit::Get();
    device_ = kit.CreateDevice((int)a[0]);
    adapter_ = kit.CreateAdapter();
    for (uint64_t q = 0; q < a[1]; q++) queues_.push_back(kit.CreateQueue(device_, (uint32_t)q));
    startEvicted_ = a[4] != 0;
    uint64_t count = a[7];
    for (uint64_t i = 0; i < count; i++) {
      heaps_.push_back(kit.CreateHeap(device_, (uint32_t)i, a[8 + i]));
      sizes_.push_back(a[8 + i]);
    }
    objects_.resize(count);
    quiet_ = CreateEvent(nullptr, TRUE, FALSE, nullptr);
    fencesAtBegin_ = Kit::Get().LiveCount(Kit::Kind::Fence);  // a fence leaked by an earlier run is that run's
    manager_.reset(new Manager);
    HRESULT hr = Team::Create(*manager_, device_, adapter_, (UINT32)a[2]);
    if (hr != S_OK) port_.Fault("driver-callback", "the manager's Create callback returned " + Hex(hr));
    for (uint32_t s = 0; s < kSets; s++) sets_.push_back(Team::CreateSet(*manager_));
    for (uint32_t i = 0; i < count; i++) TrackObject(i);
    return true;
  }

  void EndRun() {
    Team::Destroy(*manager_);
    for (Set* s : sets_) Team::DestroySet(*manager_, s);
    sets_.clear();
    for (auto& o : objects_)
      if (o) Team::Untrack(*manager_, *o);
    objects_.clear();
    manager_.reset();
    CloseHandle(quiet_);
    for (ID3D12Heap* h : heaps_) h->Release();
    for (ID3D12CommandQueue* q : queues_) q->Release();
    heaps_.clear();
    queues_.clear();
    sizes_.clear();
    adapter_->Release();
    device_->Release();
    size_t live = Kit::Get().LiveCount(Kit::Kind::Fence);
    size_t fences = live > fencesAtBegin_ ? live - fencesAtBegin_ : 0;
    if (fences > 0) port_.Fault("leak", std::to_string(fences) + " fence(s) still referenced after the manager was destroyed and every object released");
    sched::SetPreemption(0, 0);
  }

  void TrackObject(uint32_t i) {
    if (objects_[i]) return;
    objects_[i].reset(new Object);
    Team::Track(*manager_, *objects_[i], heaps_[i], sizes_[i], !startEvicted_);
  }

  // answer: open's HRESULT, then per object 1 (inserted) or 0, then close's HRESULT (when open succeeded)
  bool RecordSet(const uint64_t* a, uint32_t n, std::vector<uint64_t>& answer) {
    Set* set = sets_[a[0] % kSets];
    HRESULT hr = Team::Open(set);
    answer.push_back((uint32_t)hr);
    if (hr != S_OK) return true;
    for (uint32_t i = 1; i < n; i++) {
      if (a[i] >= objects_.size() || !objects_[a[i]]) return false;
      answer.push_back(Team::Insert(set, *objects_[a[i]]) ? 1 : 0);
    }
    answer.push_back((uint32_t)Team::Close(set));
    return true;
  }

  bool ExecuteLists(const uint64_t* a, uint32_t n, std::vector<uint64_t>& answer) {
    if (a[0] >= queues_.size()) return false;
    uint64_t count = a[1];
    std::vector<ID3D12CommandList*> lists;
    std::vector<Set*> sets;
    uint32_t at = 2;
    bool ok = true;
    for (uint64_t l = 0; l < count && ok; l++) {
      if (at + 2 > n || at + 2 + a[at + 1] > n) {
        ok = false;
        break;
      }
      sets.push_back(a[at] == UINT64_MAX ? nullptr : sets_[a[at] % kSets]);
      std::vector<uint32_t> refs(a + at + 2, a + at + 2 + a[at + 1]);
      lists.push_back(Kit::Get().CreateCommandList(device_, nextList_++, std::move(refs)));
      at += 2 + (uint32_t)a[at + 1];
    }
    if (ok) answer.push_back((uint32_t)Team::Execute(*manager_, queues_[a[0]], lists.data(), sets.data(), (UINT32)lists.size()));
    for (ID3D12CommandList* l : lists) l->Release();
    return ok;
  }

  static std::string Hex(HRESULT hr) {
    char text[16];
    snprintf(text, sizeof text, "0x%08X", (unsigned)hr);
    return text;
  }

  ProtocolPort& port_;
  std::unique_ptr<Manager> manager_;
  ID3D12Device* device_ = nullptr;
  IDXGIAdapter3* adapter_ = nullptr;
  std::vector<ID3D12CommandQueue*> queues_;
  std::vector<ID3D12Heap*> heaps_;
  std::vector<uint64_t> sizes_;
  std::vector<std::unique_ptr<Object>> objects_;
  std::vector<Set*> sets_;
  HANDLE quiet_ = nullptr;
  bool startEvicted_ = false;
  uint32_t nextList_ = 0;
  size_t fencesAtBegin_ = 0;
};

}  // namespace residency

/**
 * The driver's main: the hello, then one command per 'B' frame until a 'Q' frame or the end of
 * fd 3. `extraHello` adds `key=value\n` lines (e.g. "pagingThread=1\n": without ID3D12Device3 the
 * manager pages on a thread of its own).
 */
template <class Team>
int RunResidencyDriver(const char* name, const char* extraHello) {
  if (fcntl(wire::kInFd, F_GETFD) < 0 || fcntl(wire::kOutFd, F_GETFD) < 0) {
    fprintf(stderr, "error: this is a gpumv residency driver: run it with `npm run fuzz -- --exec <this file>` (it talks to the harness on fds 3 and 4)\n");
    return 2;
  }
  // The harness may hand fd 3 over non-blocking; the loop reads it blocking.
  fcntl(wire::kInFd, F_SETFL, fcntl(wire::kInFd, F_GETFL) & ~O_NONBLOCK);
  ProtocolPort port;
  Kit::Get().Install(&port);
  residency::Loop<Team> loop(port);
  wire::Out& out = port.Pending();
  size_t start = out.Begin('H');
  out.Put32(wire::kMagic);
  out.Put32(wire::kVersion);
  std::string lines = "system=residency\ncallbacks=" + std::to_string(wire::kCallbacks) + "\nfailures=1\nname=" + name + "\n" + (extraHello == nullptr ? "" : extraHello);
  out.bytes.insert(out.bytes.end(), lines.begin(), lines.end());
  out.End(start);
  out.Send();
  wire::Frame frame;
  std::vector<uint64_t> args, answer;
  while (wire::ReadFrame(frame)) {
    if (frame.kind == 'Q') return 0;
    const uint8_t* p = frame.payload.data();
    size_t size = frame.payload.size();
    size_t used = frame.kind == 'B' ? port.State().Read(p, size) : 0;
    if (used == 0 || used + 8 > size) {
      errno = 0;
      wire::Die("expected a residency command frame");
    }
    port.CommandState();
    uint32_t op = wire::Get32(p + used);
    uint32_t n = wire::Get32(p + used + 4);
    if (used + 8 + 8 * (size_t)n != size) {
      errno = 0;
      wire::Die("a command frame whose length does not match its words");
    }
    args.resize(n);
    for (uint32_t i = 0; i < n; i++) args[i] = wire::Get64(p + used + 8 + 8 * i);
    Kit::Get().PollFences();
    answer.clear();
    bool known = loop.Run(op, args.data(), n, answer);
    port.ClosePosted();
    size_t a = out.Begin('A');
    out.Put32(known ? 0 : 2);
    out.Put32((uint32_t)answer.size());
    for (uint64_t v : answer) out.Put64(v);
    out.End(a);
    out.Send();
  }
  return 0;
}

}  // namespace gpumv_d3d12
