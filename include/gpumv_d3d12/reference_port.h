// gpumv D3D12 kit: ReferencePort, a small in-process simulated GPU behind the GpuPort seam, for
// the kit's own tests (the harness's simulated GPU, src/gpu/sim-gpu.ts, is the judge in real
// runs, reached through the process protocol).
//
// It follows sim-gpu.ts's rules, generalised from "one fence per queue plus the paging fence" to
// any number of fences a manager creates:
// - device residency per object as a reference count, changed only by MakeResident,
//   EnqueueMakeResident and Evict (and by creating or destroying the object); usage per segment
//   derived from it (an object lives in the local segment unless MoveToSegment moved it);
// - queues whose items (fence waits, command lists, fence signals) run in order only when the
//   test calls Progress or a CPU wait lets the GPU run (AdvanceUntil); a paging queue runs the
//   EnqueueMakeResident operations, each signalling its fence;
// - violations: a list that becomes runnable or runs while it references an object that is not
//   resident ('touch-not-resident') or whose queued make-resident has not reached its fence
//   ('touch-before-paging'); an Evict of an object a runnable or unretired list references
//   ('evict-in-flight'); a MakeResident of a resident object or an Evict of a non-resident one
//   ('refcount'); a CPU wait that can never complete ('deadlock', through Fatal).
#pragma once

#include <gpumv_d3d12/port.h>

#include <stdio.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

namespace gpumv_d3d12 {

class ReferencePort : public GpuPort {
 public:
  struct Violation {
    std::string kind;
    int64_t object;
    std::string message;
  };
  struct Config {
    std::vector<uint64_t> objectSizes;
    uint32_t queueCount = 1;
    uint64_t ticksPerSecond = 1000;
    uint64_t localBudget = 0;
    uint64_t nonLocalBudget = 0;
  };

  explicit ReferencePort(const Config& config)
      : sizes_(config.objectSizes),
        refCount_(config.objectSizes.size(), 0),
        readyFence_(config.objectSizes.size(), 0),
        readyValue_(config.objectSizes.size(), 0),
        nonLocal_(config.objectSizes.size(), false),
        queues_(config.queueCount),
        ticksPerSecond_(config.ticksPerSecond),
        localBudget_(config.localBudget),
        nonLocalBudget_(config.nonLocalBudget) {
    fences_.push_back(FenceState{0, false});  // id 0 is never handed out
  }

  // ---- harness-side controls ------------------------------------------------------------------
  void SetBudgets(uint64_t local, uint64_t nonLocal) {
    localBudget_ = local;
    nonLocalBudget_ = nonLocal;
  }
  void AdvanceClock(uint64_t ticks) { ticks_ += ticks; }
  void CreateObject(uint32_t object, bool resident) {
    Check(object);
    if (resident) AddResidency(object, 0, 0);
    Log(std::string("create ") + std::to_string(object) + (resident ? " resident" : " evicted"));
  }
  void DestroyObject(uint32_t object) {
    Check(object);
    if (refCount_[object] > 0) Usage(object) -= sizes_[object];
    refCount_[object] = 0;
    readyFence_[object] = 0;
    Log("destroy " + std::to_string(object));
  }
  /** The OS moves the object between segments; a resident object's bytes move with it. */
  bool MoveToSegment(uint32_t object, bool nonLocal) {
    Check(object);
    if (nonLocal_[object] == nonLocal) return false;
    bool resident = refCount_[object] > 0;
    if (resident) Usage(object) -= sizes_[object];
    nonLocal_[object] = nonLocal;
    if (resident) Usage(object) += sizes_[object];
    return true;
  }
  /** Runs up to `steps` items of the queue, in order; a wait blocks. Returns the items run. */
  uint32_t Progress(uint32_t queue, uint32_t steps) {
    uint32_t ran = 0;
    while (ran < steps && StepQueue(queue)) ran++;
    return ran;
  }
  uint32_t PagingProgress(uint32_t steps) {
    uint32_t ran = 0;
    while (ran < steps && StepPaging()) ran++;
    return ran;
  }
  /** The next call of this kind ("makeResident", "enqueueMakeResident", "evict") fails with E_OUTOFMEMORY. */
  void FailNext(const std::string& kind) { failArmed_.push_back(kind); }
  /** What Fatal does after recording the finding (must not return); the default prints and exits with 3. */
  void OnFatal(std::function<void(const std::string&)> handler) { onFatal_ = std::move(handler); }

  // ---- queries --------------------------------------------------------------------------------
  bool IsResident(uint32_t object) const { return refCount_.at(object) > 0; }
  int RefCount(uint32_t object) const { return refCount_.at(object); }
  uint64_t LocalUsage() const { return localUsage_; }
  uint64_t NonLocalUsage() const { return nonLocalUsage_; }
  uint64_t TotalBudget() const { return localBudget_ + nonLocalBudget_; }
  uint64_t PendingItems(uint32_t queue) const { return queues_.at(queue).items.size() - queues_.at(queue).head; }
  const std::vector<Violation>& Violations() const { return violations_; }
  const std::vector<std::string>& Faults() const { return faults_; }
  const std::vector<std::string>& Calls() const { return calls_; }
  size_t LiveFences() const {
    size_t n = 0;
    for (auto& f : fences_) n += f.live ? 1 : 0;
    return n;
  }

  // ---- GpuPort ----------------------------------------------------------------------------------
  HRESULT MakeResident(const uint32_t* objects, uint32_t count) override {
    if (TakeFailure("makeResident")) {
      Log("makeResident " + Ids(objects, count) + " E_OUTOFMEMORY");
      return E_OUTOFMEMORY;
    }
    Log("makeResident " + Ids(objects, count));
    for (uint32_t i = 0; i < count; i++) ApplyMakeResident(objects[i], 0, 0);
    return S_OK;
  }
  HRESULT EnqueueMakeResident(const uint32_t* objects, uint32_t count, uint32_t fence, uint64_t value) override {
    if (!LiveFence(fence, "EnqueueMakeResident")) return E_INVALIDARG;
    if (TakeFailure("enqueueMakeResident")) {
      Log("enqueueMakeResident " + Ids(objects, count) + " fence " + std::to_string(fence) + "=" + std::to_string(value) + " E_OUTOFMEMORY");
      return E_OUTOFMEMORY;
    }
    Log("enqueueMakeResident " + Ids(objects, count) + " fence " + std::to_string(fence) + "=" + std::to_string(value));
    for (uint32_t i = 0; i < count; i++) ApplyMakeResident(objects[i], fence, value);
    paging_.push_back(PagingItem{fence, value});
    return S_OK;
  }
  HRESULT Evict(const uint32_t* objects, uint32_t count) override {
    if (TakeFailure("evict")) {
      Log("evict " + Ids(objects, count) + " E_OUTOFMEMORY");
      return E_OUTOFMEMORY;
    }
    Log("evict " + Ids(objects, count));
    for (uint32_t i = 0; i < count; i++) {
      uint32_t object = objects[i];
      Check(object);
      std::string where = RunnableListReferencing(object);
      if (!where.empty()) Violate("evict-in-flight", object, "Evict of object " + std::to_string(object) + " while " + where + " references it");
      if (refCount_[object] == 0) {
        Violate("refcount", object, "Evict of object " + std::to_string(object) + ", which is not resident");
        continue;
      }
      if (--refCount_[object] == 0) Usage(object) -= sizes_[object];
    }
    return S_OK;
  }
  uint32_t CreateFence(uint64_t initialValue) override {
    fences_.push_back(FenceState{initialValue, true});
    uint32_t id = (uint32_t)fences_.size() - 1;
    Log("createFence " + std::to_string(id) + "=" + std::to_string(initialValue));
    return id;
  }
  void DestroyFence(uint32_t fence) override {
    if (LiveFence(fence, "DestroyFence")) fences_[fence].live = false;
    Log("destroyFence " + std::to_string(fence));
  }
  void Execute(uint32_t queue, const ListRefs* lists, uint32_t count) override {
    Item item;
    item.kind = Item::Execute;
    item.value = ++submissions_;
    for (uint32_t i = 0; i < count; i++) {
      item.lists.emplace_back(lists[i].objects, lists[i].objects + lists[i].count);
      for (uint32_t o : item.lists.back()) Check(o);
    }
    Queue(queue).items.push_back(item);
    Log("execute q" + std::to_string(queue) + " #" + std::to_string(item.value) + " lists " + std::to_string(count));
    VetRunnable();
  }
  HRESULT Signal(uint32_t queue, uint32_t fence, uint64_t value) override {
    if (!LiveFence(fence, "Signal")) return E_INVALIDARG;
    Item item;
    item.kind = Item::Signal;
    item.fence = fence;
    item.value = value;
    Queue(queue).items.push_back(item);
    Log("signal q" + std::to_string(queue) + " fence " + std::to_string(fence) + "=" + std::to_string(value));
    return S_OK;
  }
  HRESULT Wait(uint32_t queue, uint32_t fence, uint64_t value) override {
    if (!LiveFence(fence, "Wait")) return E_INVALIDARG;
    Item item;
    item.kind = Item::Wait;
    item.fence = fence;
    item.value = value;
    Queue(queue).items.push_back(item);
    Log("wait q" + std::to_string(queue) + " fence " + std::to_string(fence) + "=" + std::to_string(value));
    return S_OK;
  }
  uint64_t FenceCompleted(uint32_t fence) override { return LiveFence(fence, "GetCompletedValue") ? fences_[fence].completed : 0; }
  HRESULT CpuSignal(uint32_t fence, uint64_t value) override {
    if (!LiveFence(fence, "Signal")) return E_INVALIDARG;
    fences_[fence].completed = value;
    Log("cpuSignal fence " + std::to_string(fence) + "=" + std::to_string(value));
    VetRunnable();
    return S_OK;
  }
  bool AdvanceUntil(uint32_t fence, uint64_t value) override {
    bool reached = Advance(fence, value, 0);
    Log("advance fence " + std::to_string(fence) + "=" + std::to_string(value) + (reached ? "" : " (stuck)"));
    return reached;
  }
  MemoryInfo QueryVideoMemoryInfo(Segment segment) override {
    MemoryInfo m;
    m.budgetBytes = segment == Segment::Local ? localBudget_ : nonLocalBudget_;
    m.usageBytes = segment == Segment::Local ? localUsage_ : nonLocalUsage_;
    return m;
  }
  uint64_t Ticks() override { return ticks_; }
  uint64_t TicksPerSecond() override { return ticksPerSecond_; }
  void Fault(const char* kind, const std::string& message) override { faults_.push_back(std::string(kind) + ": " + message); }
  void Fatal(const char* kind, const std::string& message) override {
    Violate(kind, -1, message);
    if (onFatal_) onFatal_(std::string(kind) + ": " + message);
    fprintf(stdout, "fatal %s: %s\n", kind, message.c_str());
    fflush(stdout);
    _exit(3);
  }

 private:
  struct FenceState {
    uint64_t completed;
    bool live;
  };
  struct Item {
    enum Kind { Wait, Execute, Signal } kind = Execute;
    uint32_t fence = 0;
    uint64_t value = 0;  // Wait/Signal: fence value; Execute: submission number
    std::vector<std::vector<uint32_t>> lists;
    bool vetted = false;
  };
  struct QueueState {
    std::vector<Item> items;
    size_t head = 0;
    std::vector<Item> unretired;  // ran, their following signal not yet run
  };
  struct PagingItem {
    uint32_t fence;
    uint64_t value;
  };

  void Check(uint32_t object) const {
    if (object >= sizes_.size()) {
      fprintf(stderr, "reference port: no object %u\n", object);
      _exit(4);
    }
  }
  QueueState& Queue(uint32_t queue) {
    if (queue >= queues_.size()) {
      fprintf(stderr, "reference port: no queue %u\n", queue);
      _exit(4);
    }
    return queues_[queue];
  }
  bool LiveFence(uint32_t fence, const char* call) {
    if (fence > 0 && fence < fences_.size() && fences_[fence].live) return true;
    Fault("unknown-fence", std::string(call) + " on fence " + std::to_string(fence) + ", which is not live");
    return false;
  }
  uint64_t& Usage(uint32_t object) { return nonLocal_[object] ? nonLocalUsage_ : localUsage_; }
  bool TakeFailure(const char* kind) {
    for (size_t i = 0; i < failArmed_.size(); i++)
      if (failArmed_[i] == kind) {
        failArmed_.erase(failArmed_.begin() + (long)i);
        return true;
      }
    return false;
  }
  void AddResidency(uint32_t object, uint32_t fence, uint64_t value) {
    if (refCount_[object] == 0) Usage(object) += sizes_[object];
    refCount_[object]++;
    readyFence_[object] = fence;
    readyValue_[object] = value;
  }
  void ApplyMakeResident(uint32_t object, uint32_t fence, uint64_t value) {
    Check(object);
    if (refCount_[object] > 0)
      Violate("refcount", object, "MakeResident of object " + std::to_string(object) + ", already resident (refcount " + std::to_string(refCount_[object]) +
                                      "): two device calls for one status flip");
    AddResidency(object, fence, value);
  }
  static bool References(const Item& item, uint32_t object) {
    for (auto& list : item.lists)
      for (uint32_t o : list)
        if (o == object) return true;
    return false;
  }
  bool Satisfied(const Item& wait) const { return fences_[wait.fence].completed >= wait.value; }
  std::string RunnableListReferencing(uint32_t object) {
    for (size_t q = 0; q < queues_.size(); q++) {
      QueueState& queue = queues_[q];
      for (auto& item : queue.unretired)
        if (References(item, object)) return "submission #" + std::to_string(item.value) + " on queue " + std::to_string(q) + " (ran, fence signal not yet reached)";
      for (size_t i = queue.head; i < queue.items.size(); i++) {
        Item& item = queue.items[i];
        if (item.kind == Item::Wait && !Satisfied(item)) break;
        if (item.kind == Item::Execute && References(item, object)) return "submission #" + std::to_string(item.value) + " on queue " + std::to_string(q) + " (runnable)";
      }
    }
    return "";
  }
  void VetRunnable() {
    for (size_t q = 0; q < queues_.size(); q++) {
      QueueState& queue = queues_[q];
      for (size_t i = queue.head; i < queue.items.size(); i++) {
        Item& item = queue.items[i];
        if (item.kind == Item::Wait && !Satisfied(item)) break;
        if (item.kind != Item::Execute || item.vetted) continue;
        item.vetted = true;
        CheckResidency((uint32_t)q, item, "became runnable and references");
      }
    }
  }
  void CheckResidency(uint32_t queue, const Item& item, const char* what) {
    for (auto& list : item.lists) {
      for (uint32_t object : list) {
        std::string prefix = "submission #" + std::to_string(item.value) + " on queue " + std::to_string(queue) + " " + what + " object " + std::to_string(object);
        if (refCount_[object] == 0) {
          Violate("touch-not-resident", object, prefix + ", which is not resident on the device");
        } else if (readyFence_[object] != 0 && fences_[readyFence_[object]].completed < readyValue_[object]) {
          Violate("touch-before-paging", object,
                  prefix + " before fence " + std::to_string(readyFence_[object]) + " reached " + std::to_string(readyValue_[object]) + " (its queued make-resident)");
        }
      }
    }
  }
  bool StepPaging() {
    if (pagingHead_ >= paging_.size()) return false;
    PagingItem item = paging_[pagingHead_++];
    if (fences_[item.fence].completed < item.value) fences_[item.fence].completed = item.value;
    Log("paging signals fence " + std::to_string(item.fence) + "=" + std::to_string(item.value));
    VetRunnable();
    return true;
  }
  bool StepQueue(uint32_t index) {
    QueueState& queue = Queue(index);
    if (queue.head >= queue.items.size()) return false;
    Item& item = queue.items[queue.head];
    switch (item.kind) {
      case Item::Wait:
        if (!Satisfied(item)) return false;
        break;
      case Item::Signal:
        fences_[item.fence].completed = item.value;
        queue.unretired.clear();
        break;
      case Item::Execute:
        CheckResidency(index, item, "touched");
        queue.unretired.push_back(item);
        break;
    }
    queue.head++;
    VetRunnable();
    return true;
  }
  // Lets the GPU run the least it must for the fence to reach the value: the paging queue when it
  // signals that fence, else the first queue holding a signal of it (running, first, whatever its
  // own waits need). False when nothing that could get there can run now.
  bool Advance(uint32_t fence, uint64_t value, int depth) {
    if (fence == 0 || fence >= fences_.size()) return false;
    while (fences_[fence].completed < value) {
      if (depth > 16) return false;
      bool stepped = false;
      for (size_t i = pagingHead_; i < paging_.size() && !stepped; i++)
        if (paging_[i].fence == fence) stepped = StepPaging();
      for (uint32_t q = 0; q < queues_.size() && !stepped; q++) {
        QueueState& queue = queues_[q];
        bool signals = false;
        for (size_t i = queue.head; i < queue.items.size(); i++)
          if (queue.items[i].kind == Item::Signal && queue.items[i].fence == fence) signals = true;
        if (!signals) continue;
        Item& head = queue.items[queue.head];
        if (head.kind == Item::Wait && !Satisfied(head)) {
          uint32_t f = head.fence;
          uint64_t v = head.value;
          if (!Advance(f, v, depth + 1)) continue;
        }
        stepped = StepQueue(q);
      }
      if (!stepped) return false;
    }
    return true;
  }
  void Violate(const std::string& kind, int64_t object, const std::string& message) {
    violations_.push_back(Violation{kind, object, message});
    Log("VIOLATION " + kind + ": " + message);
  }
  void Log(const std::string& line) { calls_.push_back("t=" + std::to_string(ticks_) + " " + line); }
  static std::string Ids(const uint32_t* objects, uint32_t count) {
    std::string s = "[";
    for (uint32_t i = 0; i < count; i++) s += (i ? "," : "") + std::to_string(objects[i]);
    return s + "]";
  }

  std::vector<uint64_t> sizes_;
  std::vector<int> refCount_;
  std::vector<uint32_t> readyFence_;
  std::vector<uint64_t> readyValue_;
  std::vector<bool> nonLocal_;
  std::vector<QueueState> queues_;
  std::vector<FenceState> fences_;
  std::vector<PagingItem> paging_;
  size_t pagingHead_ = 0;
  uint64_t submissions_ = 0;
  uint64_t ticks_ = 0;
  uint64_t ticksPerSecond_;
  uint64_t localBudget_;
  uint64_t nonLocalBudget_;
  uint64_t localUsage_ = 0;
  uint64_t nonLocalUsage_ = 0;
  std::vector<std::string> failArmed_;
  std::vector<Violation> violations_;
  std::vector<std::string> faults_;
  std::vector<std::string> calls_;
  std::function<void(const std::string&)> onFatal_;
};

}  // namespace gpumv_d3d12
