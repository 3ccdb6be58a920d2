// Test driver for the gpumv D3D12 kit and the example residency manager, against the in-process
// ReferencePort (no process protocol yet).
//
//   driver kit-tests                          the kit's own tests, each in a child process
//   driver matrix                             every variant x device mode x scenario, each in a child
//   driver run VARIANT MODE SCENARIO [--log] [--seed N]
//                                             one run in this process: its findings (and call log)
//   driver list                               the variants, modes and scenarios
//
// Variants: one translation unit holds the clean build, the single-threaded build and one build
// per planted bug of residency_manager.h, each in its own namespace (the header's switches).
// Modes: d3 (the device answers ID3D12Device3: queued make-resident, paging inline) and d0 (it
// does not: the paging thread, or inline paging in the single-threaded build).
// Output lines are for properties/d3d12-kit.test.ts: `RUN variant mode scenario status kinds`,
// `KIT name pass|fail detail`.
#include <gpumv_d3d12/kit.h>
#include <gpumv_d3d12/reference_port.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#include <functional>
#include <set>
#include <string>
#include <vector>

// ---- the variants ------------------------------------------------------------------------------

#ifdef GPUMV_SINGLE_VARIANT
// One build from the command line's switches (e.g. -DGPUMV_BUG_NO_PAGING_WAIT=1).
#define GPUMV_RESIDENCY_NAMESPACE custom
#include "residency_manager.h"
#undef GPUMV_RESIDENCY_NAMESPACE
#else
#include "variants.h"
#endif

// A team's own header-only manager with the starter library's API (ResidencyManager,
// ManagedObject, ResidencySet) runs through the same scenarios as variant `extra`:
//   -DGPUMV_EXTRA_MANAGER_HEADER='"path/to/d3dx12Residency.h"' -DGPUMV_EXTRA_MANAGER_NAMESPACE=D3DX12Residency
#ifdef GPUMV_EXTRA_MANAGER_HEADER
#include GPUMV_EXTRA_MANAGER_HEADER
#endif

using namespace gpumv_d3d12;

namespace {

// ---- the environment one run uses ----------------------------------------------------------------

struct ObjectSpec {
  uint64_t size;
  bool resident;  // created resident (D3D12's default) or CREATE_NOT_RESIDENT
  bool tracked;   // given to the manager (an untracked object still counts in the usage)
  bool nonLocal;  // moved to the non-local segment once created
};

struct ScenarioSpec {
  std::vector<ObjectSpec> objects;
  uint32_t queues;
  uint64_t localBudget;
  uint64_t nonLocalBudget;
};

struct Env {
  ReferencePort* port = nullptr;
  ID3D12Device* device = nullptr;
  IDXGIAdapter3* adapter = nullptr;
  std::vector<ID3D12CommandQueue*> queues;
  std::vector<ID3D12Heap*> heaps;
  ID3D12Fence* appFence = nullptr;
  UINT64 appFenceValue = 0;
  HANDLE appEvent = nullptr;
  std::vector<std::string> checks;  // the driver's own findings (over budget, leaks, failed calls)
};

void Check(Env& env, bool ok, const std::string& kind, const std::string& message) {
  if (!ok) env.checks.push_back(kind + " " + message);
}

/** Lets the other kit threads (the manager's paging thread) run until they block. */
void Yield() { SwitchToThread(); }

/** The app's frame flush: every queue signals the app fence; one CPU wait for each. */
void Flush(Env& env) {
  for (ID3D12CommandQueue* queue : env.queues) {
    env.appFenceValue++;
    queue->Signal(env.appFence, env.appFenceValue);
    env.appFence->SetEventOnCompletion(env.appFenceValue, env.appEvent);
    WaitForSingleObject(env.appEvent, INFINITE);
  }
}

template <class Manager, class Object, class Set>
struct App {
  Env& env;
  Manager rm;
  std::vector<Object> objects;
  uint32_t nextList = 0;

  App(Env& e, const ScenarioSpec& spec, uint32_t maxLatency) : env(e), objects(spec.objects.size()) {
    HRESULT hr = rm.Initialize(env.device, 0, env.adapter, maxLatency);
    Check(env, hr == S_OK, "call-failed", "ResidencyManager::Initialize returned " + std::to_string(hr));
    for (size_t i = 0; i < spec.objects.size(); i++) {
      if (!spec.objects[i].tracked) continue;
      objects[i].Initialize(env.heaps[i], spec.objects[i].size);
      objects[i].ResidencyStatus = spec.objects[i].resident ? Object::RESIDENCY_STATUS::RESIDENT : Object::RESIDENCY_STATUS::EVICTED;
      rm.BeginTrackingObject(&objects[i]);
    }
  }

  /** One ExecuteCommandLists of one list per entry, each with a set of exactly the objects its list references. */
  HRESULT Submit(uint32_t queue, const std::vector<std::vector<uint32_t>>& lists, bool yield) {
    std::vector<ID3D12CommandList*> cls;
    std::vector<Set*> sets;
    for (const auto& refs : lists) {
      cls.push_back(Kit::Get().CreateCommandList(env.device, nextList++, refs));
      Set* set = rm.CreateResidencySet();
      Check(env, set->Open() == S_OK, "call-failed", "ResidencySet::Open");
      for (uint32_t o : refs) set->Insert(&objects[o]);
      Check(env, set->Close() == S_OK, "call-failed", "ResidencySet::Close");
      sets.push_back(set);
    }
    HRESULT hr = rm.ExecuteCommandLists(env.queues[queue], cls.data(), sets.data(), (UINT32)cls.size());
    for (Set* set : sets) rm.DestroyResidencySet(set);
    for (ID3D12CommandList* cl : cls) cl->Release();
    if (yield) Yield();
    return hr;
  }

  void Teardown() {
    rm.Destroy();
    for (auto& o : objects)
      if (o.IsInitialized()) rm.EndTrackingObject(&o);
  }
};

Env MakeEnv(ReferencePort& port, int deviceVersion, const ScenarioSpec& spec) {
  Env env;
  env.port = &port;
  Kit::Get().Install(&port);
  env.device = Kit::Get().CreateDevice(deviceVersion);
  env.adapter = Kit::Get().CreateAdapter();
  for (uint32_t q = 0; q < spec.queues; q++) env.queues.push_back(Kit::Get().CreateQueue(env.device, q));
  for (uint32_t i = 0; i < spec.objects.size(); i++) {
    env.heaps.push_back(Kit::Get().CreateHeap(env.device, i, spec.objects[i].size));
    port.CreateObject(i, spec.objects[i].resident);
    if (spec.objects[i].nonLocal) port.MoveToSegment(i, true);
  }
  env.device->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&env.appFence));
  env.appEvent = CreateEvent(nullptr, FALSE, FALSE, nullptr);
  return env;
}

void ReleaseEnv(Env& env) {
  CloseHandle(env.appEvent);
  env.appFence->Release();
  for (ID3D12Heap* h : env.heaps) h->Release();
  for (ID3D12CommandQueue* q : env.queues) q->Release();
  env.adapter->Release();
  env.device->Release();
  Check(env, Kit::Get().LiveCount(Kit::Kind::Fence) == 0, "leak",
        std::to_string(Kit::Get().LiveCount(Kit::Kind::Fence)) + " kit fence(s) still referenced after teardown");
  Check(env, env.port->LiveFences() == 0, "leak", std::to_string(env.port->LiveFences()) + " fence(s) not destroyed on the GPU side");
}

/** After the work is flushed the usage must be within the budget: in these scenarios everything needed fits. */
void CheckBudget(Env& env, const char* when) {
  uint64_t usage = env.port->LocalUsage() + env.port->NonLocalUsage();
  Check(env, usage <= env.port->TotalBudget(), "over-budget",
        std::string(when) + ": usage " + std::to_string(usage) + " over the budget of " + std::to_string(env.port->TotalBudget()));
}

// ---- scenarios ---------------------------------------------------------------------------------
// Each is a short, fixed script whose correct outcome is known from the spec (worked through in
// docs/d3d12-kit.md). Sizes in bytes, 1000 ticks per second.

struct Scenario {
  const char* name;
  ScenarioSpec spec;
  uint32_t maxLatency;
  // The script, written once for every variant through this callback table.
  std::function<void(Env&, std::function<HRESULT(uint32_t, const std::vector<std::vector<uint32_t>>&)>)> script;
  /** Yield to the paging thread after each submission (false: it runs only when the app blocks). */
  bool yieldAfterSubmit = true;
};

std::vector<Scenario> Scenarios() {
  std::vector<Scenario> s;
  // Objects created evicted, three frames on two queues: every set made resident before its lists run.
  s.push_back({"frames", {{{10, false, true, false}, {10, false, true, false}, {10, false, true, false}}, 2, 1000, 0}, 2, [](Env& env, auto submit) {
                 submit(0, {{0, 1}});
                 submit(1, {{1, 2}});
                 submit(0, {{0, 2}});
                 Flush(env);
                 CheckBudget(env, "after the frames");
               }});
  // Two lists whose sets do not fit together: split into two submissions, the second trims the first's object.
  s.push_back({"split", {{{60, false, true, false}, {60, false, true, false}}, 1, 60, 40}, 2, [](Env& env, auto submit) {
                 submit(0, {{0}, {1}});
                 Flush(env);
                 CheckBudget(env, "after the split submission");
               }});
  // A resident object submitted twice, then budget pressure: the trim may take it only once its second use completed.
  s.push_back({"reuse-under-pressure", {{{70, false, true, false}, {40, false, true, false}}, 1, 100, 0}, 2, [](Env& env, auto submit) {
                 submit(0, {{0}});
                 submit(0, {{0}});
                 submit(0, {{1}});
                 Flush(env);
                 CheckBudget(env, "after the third submission");
               }});
  // 80 % local pressure and a minute without use: the aged trim must still spare an object in flight.
  s.push_back({"aged-in-flight", {{{80, false, true, false}, {10, false, true, false}}, 1, 100, 0}, 2, [](Env& env, auto submit) {
                 submit(0, {{0}});
                 env.port->AdvanceClock(61000);
                 submit(0, {{1}});
                 Flush(env);
                 CheckBudget(env, "after the aged trim");
               }});
  // An untracked object in the non-local segment: the batching must count its usage.
  s.push_back({"non-local-usage",
               {{{60, true, false, true}, {60, false, true, false}, {60, false, true, false}}, 1, 100, 50},
               2,
               [](Env& env, auto submit) {
                 submit(0, {{1}});
                 submit(0, {{2}});
                 Flush(env);
                 CheckBudget(env, "after the second submission");
               }});
  // MaxLatency 1 and no yield: each submission after the first waits for the paging thread to finish the previous work.
  s.push_back({"latency-backpressure",
               {{{10, false, true, false}, {10, false, true, false}, {10, false, true, false}, {10, false, true, false}}, 1, 1000, 0},
               1,
               [](Env& env, auto submit) {
                 for (uint32_t i = 0; i < 4; i++) submit(0, {{i, (i + 1) % 4}});
                 Flush(env);
                 CheckBudget(env, "after four submissions");
               },
               false});
  return s;
}

struct Variant {
  const char* name;
  std::function<void(Env&, const Scenario&)> run;
};

template <class Manager, class Object, class Set>
void RunWith(Env& env, const Scenario& sc) {
  App<Manager, Object, Set> app(env, sc.spec, sc.maxLatency);
  sc.script(env, [&](uint32_t q, const std::vector<std::vector<uint32_t>>& lists) {
    HRESULT hr = app.Submit(q, lists, sc.yieldAfterSubmit);
    Check(env, hr == S_OK, "call-failed", "ExecuteCommandLists returned " + std::to_string(hr));
    return hr;
  });
  app.Teardown();
}

#define GPUMV_V(ns) Variant{#ns, [](Env& env, const Scenario& sc) { RunWith<ns::ResidencyManager, ns::ManagedObject, ns::ResidencySet>(env, sc); }}

std::vector<Variant> Variants() {
#ifdef GPUMV_SINGLE_VARIANT
  std::vector<Variant> v{GPUMV_V(custom)};
#else
  std::vector<Variant> v{GPUMV_V(clean),          GPUMV_V(clean_st),           GPUMV_V(bug_lru_touch_skipped), GPUMV_V(bug_trim_in_flight),
                         GPUMV_V(bug_fence_off_by_one), GPUMV_V(bug_no_paging_wait), GPUMV_V(bug_local_usage_only),  GPUMV_V(bug_split_drops_set)};
#endif
#ifdef GPUMV_EXTRA_MANAGER_NAMESPACE
  v.push_back(Variant{"extra", [](Env& env, const Scenario& sc) {
                        RunWith<GPUMV_EXTRA_MANAGER_NAMESPACE::ResidencyManager, GPUMV_EXTRA_MANAGER_NAMESPACE::ManagedObject,
                                GPUMV_EXTRA_MANAGER_NAMESPACE::ResidencySet>(env, sc);
                      }});
#endif
  return v;
}

const char* kModes[] = {"d3", "d0"};

/** One run in this process; prints its findings; returns the number of findings. */
int RunOne(const Variant& v, const char* mode, const Scenario& sc, bool log, uint64_t seed) {
  ReferencePort::Config cfg;
  for (auto& o : sc.spec.objects) cfg.objectSizes.push_back(o.size);
  cfg.queueCount = sc.spec.queues;
  cfg.ticksPerSecond = 1000;
  cfg.localBudget = sc.spec.localBudget;
  cfg.nonLocalBudget = sc.spec.nonLocalBudget;
  ReferencePort port(cfg);
  if (seed != 0) sched::SetPreemption(seed, 300);
  auto report = [&](const std::vector<std::string>& checks) {
    int n = 0;
    if (log)
      for (auto& line : port.Calls()) printf("log %s\n", line.c_str());
    for (auto& vi : port.Violations()) {
      printf("violation %s %s\n", vi.kind.c_str(), vi.message.c_str());
      n++;
    }
    for (auto& f : port.Faults()) {
      printf("fault %s\n", f.c_str());
      n++;
    }
    for (auto& c : checks) {
      printf("check %s\n", c.c_str());
      n++;
    }
    printf("switches %llu\n", (unsigned long long)sched::Switches());
    return n;
  };
  Env* envp = nullptr;
  port.OnFatal([&](const std::string&) { report(envp ? envp->checks : std::vector<std::string>{}); });
  Env env = MakeEnv(port, strcmp(mode, "d3") == 0 ? 3 : 0, sc.spec);
  envp = &env;
  v.run(env, sc);
  ReleaseEnv(env);
  int n = report(env.checks);
  printf("result %s\n", n == 0 ? "clean" : "findings");
  return n;
}

/** Runs `body` in a child process; returns its exit status description and its stdout. */
std::pair<std::string, std::string> InChild(const std::function<int()>& body) {
  fflush(stdout);
  int fds[2];
  if (pipe(fds) != 0) {
    perror("pipe");
    exit(2);
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    int rc = body();
    fflush(stdout);
#if defined(__SANITIZE_ADDRESS__)
    // _exit skips LeakSanitizer's exit-time check: run it here (the kit's own state stays reachable).
    if (__lsan_do_recoverable_leak_check() != 0) _exit(23);
#endif
    _exit(rc == 0 ? 0 : 10);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, (size_t)n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::string st;
  if (WIFSIGNALED(status)) st = "signal-" + std::to_string(WTERMSIG(status));
  else st = "exit-" + std::to_string(WEXITSTATUS(status));
  return {st, out};
}

std::string Kinds(const std::string& out) {
  std::set<std::string> kinds;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t end = out.find('\n', pos);
    if (end == std::string::npos) end = out.size();
    std::string line = out.substr(pos, end - pos);
    pos = end + 1;
    for (const char* prefix : {"violation ", "check ", "fatal "}) {
      if (line.rfind(prefix, 0) != 0) continue;
      std::string rest = line.substr(strlen(prefix));
      std::string kind = rest.substr(0, rest.find_first_of(" :"));
      kinds.insert(kind);
    }
    if (line.rfind("fault ", 0) == 0) kinds.insert("fault:" + line.substr(6, line.find(':') - 6));
  }
  std::string s;
  for (auto& k : kinds) s += (s.empty() ? "" : ",") + k;
  return s.empty() ? "-" : s;
}

// ---- the kit's own tests -------------------------------------------------------------------------

struct KitTest {
  const char* name;
  std::function<std::string()> body;  // "" when it passes, else what went wrong
  const char* expectStatus = "exit-0";  // how its child process ends
};

#define EXPECT(cond)                                             \
  do {                                                           \
    if (!(cond)) return std::string("expected: ") + #cond;       \
  } while (0)

ReferencePort::Config SmallConfig() {
  ReferencePort::Config c;
  c.objectSizes = {10, 20, 30};
  c.queueCount = 2;
  c.ticksPerSecond = 1000;
  c.localBudget = 100;
  c.nonLocalBudget = 50;
  return c;
}

/** A reference GPU installed in the kit for one kit test (each runs in its own child process). */
ReferencePort& InstalledPort() {
  static ReferencePort* port = new ReferencePort(SmallConfig());
  Kit::Get().Install(port);
  return *port;
}

std::vector<KitTest> KitTests() {
  std::vector<KitTest> t;
  t.push_back({"device-versions", [] {
                 ReferencePort& port = InstalledPort();
                 ID3D12Device* d0 = Kit::Get().CreateDevice(0);
                 ID3D12Device* d3 = Kit::Get().CreateDevice(3);
                 ID3D12Device3* p3 = nullptr;
                 ID3D12Device1* p1 = nullptr;
                 ID3D12Device4* p4 = nullptr;
                 EXPECT(d0->QueryInterface(IID_PPV_ARGS(&p3)) == E_NOINTERFACE && p3 == nullptr);
                 EXPECT(d0->QueryInterface(IID_PPV_ARGS(&p1)) == E_NOINTERFACE);
                 EXPECT(d3->QueryInterface(IID_PPV_ARGS(&p3)) == S_OK && p3 != nullptr);
                 EXPECT(d3->QueryInterface(IID_PPV_ARGS(&p1)) == S_OK && p1 != nullptr);
                 EXPECT(d3->QueryInterface(IID_PPV_ARGS(&p4)) == E_NOINTERFACE && p4 == nullptr);
                 EXPECT(d3->QueryInterface(__uuidof(ID3D12Device), nullptr) == E_POINTER);
                 EXPECT(p3->Release() == 2 && p1->Release() == 1);
                 EXPECT(d3->GetNodeCount() == 1);
                 EXPECT(port.Faults().empty());
                 d0->Release();
                 d3->Release();
                 return std::string();
               }});
  t.push_back({"unsupported-calls-fail-loudly", [] {
                 ReferencePort& port = InstalledPort();
                 ID3D12Device* d = Kit::Get().CreateDevice(3);
                 ID3D12CommandQueue* q = nullptr;
                 D3D12_COMMAND_QUEUE_DESC desc{};
                 EXPECT(d->CreateCommandQueue(&desc, IID_PPV_ARGS(&q)) == E_NOTIMPL);
                 EXPECT(port.Faults().size() == 1 && port.Faults()[0] == "unsupported-call: ID3D12Device::CreateCommandQueue is not implemented by the kit");
                 EXPECT(d->GetDescriptorHandleIncrementSize(D3D12_DESCRIPTOR_HEAP_TYPE_RTV) == 0 && port.Faults().size() == 2);
                 ID3D12Device* d0 = Kit::Get().CreateDevice(0);
                 EXPECT(static_cast<ID3D12Device3*>(d0)->EnqueueMakeResident(D3D12_RESIDENCY_FLAG_NONE, 0, nullptr, nullptr, 1) == E_NOTIMPL);
                 EXPECT(port.Faults().size() == 3);
                 IDXGIAdapter3* a = Kit::Get().CreateAdapter();
                 EXPECT(a->SetVideoMemoryReservation(0, DXGI_MEMORY_SEGMENT_GROUP_LOCAL, 1) == E_NOTIMPL && port.Faults().size() == 4);
                 ID3D12GraphicsCommandList* l = Kit::Get().CreateCommandList(d, 0, {});
                 l->DrawInstanced(3, 1, 0, 0);
                 EXPECT(port.Faults().size() == 5 && port.Faults()[4].find("ID3D12GraphicsCommandList::DrawInstanced") != std::string::npos);
                 EXPECT(l->Close() == S_OK && l->GetType() == D3D12_COMMAND_LIST_TYPE_DIRECT);
                 l->Release();
                 a->Release();
                 d0->Release();
                 d->Release();
                 return std::string();
               }});
  t.push_back({"private-data-and-descs", [] {
                 ReferencePort& port = InstalledPort();
                 ID3D12Device* d = Kit::Get().CreateDevice(3);
                 ID3D12CommandQueue* q = Kit::Get().CreateQueue(d, 1);
                 GUID g{1, 2, 3, {4, 5, 6, 7, 8, 9, 10, 11}};
                 UINT size = 8;
                 uint64_t value = 0;
                 EXPECT(q->GetPrivateData(g, &size, &value) == DXGI_ERROR_NOT_FOUND && size == 0);
                 uint64_t stored = 0x1122334455667788ull;
                 EXPECT(q->SetPrivateData(g, sizeof stored, &stored) == S_OK);
                 size = 4;
                 EXPECT(q->GetPrivateData(g, &size, &value) == DXGI_ERROR_MORE_DATA && size == 8);
                 EXPECT(q->GetPrivateData(g, &size, &value) == S_OK && value == stored);
                 ID3D12Device* back = nullptr;
                 EXPECT(q->GetDevice(IID_PPV_ARGS(&back)) == S_OK && back == d);
                 back->Release();
                 EXPECT(q->GetDesc().Type == D3D12_COMMAND_LIST_TYPE_DIRECT);
                 ID3D12Heap* h = Kit::Get().CreateHeap(d, 2, 30);
                 EXPECT(h->GetDesc().SizeInBytes == 30);
                 ID3D12Resource* r = Kit::Get().CreateCommittedResource(d, 1, 20);
                 EXPECT(r->GetDesc().Width == 20);
                 ID3D12Pageable* pageable = nullptr;
                 EXPECT(r->QueryInterface(IID_PPV_ARGS(&pageable)) == S_OK && pageable == static_cast<ID3D12Pageable*>(r));
                 pageable->Release();
                 EXPECT(port.Faults().empty());
                 r->Release();
                 h->Release();
                 q->Release();
                 d->Release();
                 return std::string();
               }});
  t.push_back({"residency-calls-reach-the-port", [] {
                 ReferencePort& port = InstalledPort();
                 ID3D12Device* d = Kit::Get().CreateDevice(3);
                 ID3D12Heap* h0 = Kit::Get().CreateHeap(d, 0, 10);
                 ID3D12Resource* r2 = Kit::Get().CreateCommittedResource(d, 2, 30);
                 port.CreateObject(0, false);
                 port.CreateObject(2, false);
                 ID3D12Pageable* both[2] = {h0, r2};
                 EXPECT(d->MakeResident(2, both) == S_OK && port.IsResident(0) && port.IsResident(2) && port.LocalUsage() == 40);
                 EXPECT(d->Evict(1, both) == S_OK && !port.IsResident(0) && port.LocalUsage() == 30);
                 EXPECT(d->Evict(1, both) == S_OK && port.Violations().size() == 1 && port.Violations()[0].kind == "refcount");
                 EXPECT(d->MakeResident(1, both + 1) == S_OK && port.Violations().size() == 2 && port.Violations()[1].kind == "refcount" &&
                        port.RefCount(2) == 2);
                 EXPECT(d->Evict(1, both + 1) == S_OK && port.RefCount(2) == 1 && port.IsResident(2));
                 port.FailNext("makeResident");
                 EXPECT(d->MakeResident(1, both) == E_OUTOFMEMORY && !port.IsResident(0));
                 ID3D12Pageable* bogus[1] = {reinterpret_cast<ID3D12Pageable*>(d)};
                 EXPECT(d->MakeResident(1, bogus) == E_INVALIDARG && port.Faults().size() == 1 && port.Faults()[0].rfind("unknown-pageable", 0) == 0);
                 port.MoveToSegment(2, true);
                 IDXGIAdapter3* a = Kit::Get().CreateAdapter();
                 DXGI_QUERY_VIDEO_MEMORY_INFO local{}, nonLocal{};
                 EXPECT(a->QueryVideoMemoryInfo(0, DXGI_MEMORY_SEGMENT_GROUP_LOCAL, &local) == S_OK && local.Budget == 100 && local.CurrentUsage == 0);
                 EXPECT(a->QueryVideoMemoryInfo(0, DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL, &nonLocal) == S_OK && nonLocal.Budget == 50 && nonLocal.CurrentUsage == 30);
                 EXPECT(a->QueryVideoMemoryInfo(1, DXGI_MEMORY_SEGMENT_GROUP_LOCAL, &local) == E_INVALIDARG && port.Faults().size() == 2);
                 IDXGIAdapter* base = nullptr;
                 EXPECT(a->QueryInterface(IID_PPV_ARGS(&base)) == S_OK);
                 base->Release();
                 a->Release();
                 r2->Release();
                 h0->Release();
                 d->Release();
                 return std::string();
               }});
  t.push_back({"gpu-judges-touches-and-evictions", [] {
                 ReferencePort& port = InstalledPort();
                 ID3D12Device* d = Kit::Get().CreateDevice(3);
                 ID3D12CommandQueue* q = Kit::Get().CreateQueue(d, 0);
                 ID3D12Heap* h0 = Kit::Get().CreateHeap(d, 0, 10);
                 port.CreateObject(0, false);
                 ID3D12Fence* f = nullptr;
                 EXPECT(d->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&f)) == S_OK);
                 ID3D12CommandList* l = Kit::Get().CreateCommandList(d, 7, {0});
                 // A list referencing an evicted object is flagged when it becomes runnable.
                 q->ExecuteCommandLists(1, &l);
                 EXPECT(port.Violations().size() == 1 && port.Violations()[0].kind == "touch-not-resident");
                 q->Signal(f, 1);
                 EXPECT(f->GetCompletedValue() == 0 && port.Progress(0, 10) == 2 && f->GetCompletedValue() == 1);
                 EXPECT(port.Violations().size() == 2);  // and again when it runs
                 // Queued make-resident: a list behind a wait for its fence is fine; one without the wait is not.
                 ID3D12Device3* d3 = nullptr;
                 d->QueryInterface(IID_PPV_ARGS(&d3));
                 ID3D12Pageable* p[1] = {h0};
                 EXPECT(d3->EnqueueMakeResident(D3D12_RESIDENCY_FLAG_NONE, 1, p, f, 2) == S_OK);
                 q->Wait(f, 2);
                 q->ExecuteCommandLists(1, &l);
                 EXPECT(port.Violations().size() == 2);
                 ID3D12CommandQueue* q1 = Kit::Get().CreateQueue(d, 1);
                 q1->ExecuteCommandLists(1, &l);
                 EXPECT(port.Violations().size() == 3 && port.Violations()[2].kind == "touch-before-paging");
                 // Evicting what a runnable list reads.
                 EXPECT(port.PagingProgress(1) == 1 && f->GetCompletedValue() == 2);
                 EXPECT(d->Evict(1, p) == S_OK && port.Violations().size() == 4 && port.Violations()[3].kind == "evict-in-flight");
                 EXPECT(port.Faults().empty());
                 d3->Release();
                 l->Release();
                 f->Release();
                 q1->Release();
                 h0->Release();
                 q->Release();
                 d->Release();
                 EXPECT(port.LiveFences() == 0);
                 return std::string();
               }});
  t.push_back({"fence-wait-advances-the-gpu", [] {
                 ReferencePort& port = InstalledPort();
                 ID3D12Device* d = Kit::Get().CreateDevice(0);
                 ID3D12CommandQueue* q = Kit::Get().CreateQueue(d, 0);
                 ID3D12Fence* f = nullptr;
                 d->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&f));
                 ID3D12CommandList* l = Kit::Get().CreateCommandList(d, 0, {});
                 q->ExecuteCommandLists(1, &l);
                 q->Signal(f, 5);
                 HANDLE e = CreateEvent(nullptr, FALSE, FALSE, nullptr);
                 EXPECT(f->SetEventOnCompletion(5, e) == S_OK);
                 EXPECT(WaitForSingleObject(e, 0) == WAIT_TIMEOUT);  // the GPU has not run
                 EXPECT(WaitForSingleObject(e, INFINITE) == WAIT_OBJECT_0 && f->GetCompletedValue() == 5 && port.PendingItems(0) == 0);
                 q->Signal(f, 6);
                 EXPECT(f->SetEventOnCompletion(6, nullptr) == S_OK && f->GetCompletedValue() == 6);  // the blocking form
                 EXPECT(f->Signal(9) == S_OK && f->GetCompletedValue() == 9);
                 EXPECT(f->SetEventOnCompletion(7, e) == S_OK && WaitForSingleObject(e, 0) == WAIT_OBJECT_0);  // already reached
                 HANDLE closed = CreateEvent(nullptr, FALSE, FALSE, nullptr);
                 EXPECT(f->SetEventOnCompletion(100, closed) == S_OK && CloseHandle(closed));
                 EXPECT(f->Signal(100) == S_OK && port.Faults().empty());  // the closed event's registration went with it
                 CloseHandle(e);
                 l->Release();
                 EXPECT(Kit::Get().LiveCount(Kit::Kind::Fence) == 1 && port.LiveFences() == 1);
                 f->Release();
                 EXPECT(Kit::Get().LiveCount(Kit::Kind::Fence) == 0 && port.LiveFences() == 0);  // the teardown leak check's measure
                 q->Release();
                 d->Release();
                 return std::string();
               }});
  t.push_back({"deadlock-is-reported", [] {
                 InstalledPort();
                 ID3D12Device* d = Kit::Get().CreateDevice(0);
                 ID3D12CommandQueue* q = Kit::Get().CreateQueue(d, 0);
                 ID3D12Fence* f = nullptr;
                 d->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&f));
                 q->Wait(f, 1);  // nobody will signal 1
                 q->Signal(f, 2);
                 HANDLE e = CreateEvent(nullptr, FALSE, FALSE, nullptr);
                 f->SetEventOnCompletion(2, e);
                 WaitForSingleObject(e, INFINITE);  // Fatal ends the process here (status 3)
                 return std::string("the wait returned");
               },
               "exit-3"});
  t.push_back({"threads-events-critical-sections", [] {
                 ReferencePort& port = InstalledPort();
                 struct Shared {
                   CRITICAL_SECTION cs;
                   HANDLE go, done, manual;
                   std::vector<int> trace;
                   LONG counter = 0;
                 } sh;
                 InitializeCriticalSection(&sh.cs);
                 sh.go = CreateEvent(nullptr, FALSE, FALSE, nullptr);
                 sh.done = CreateEvent(nullptr, FALSE, FALSE, nullptr);
                 sh.manual = CreateEvent(nullptr, TRUE, FALSE, nullptr);
                 auto worker = [](LPVOID p) -> DWORD {
                   Shared* s = (Shared*)p;
                   WaitForSingleObject(s->go, INFINITE);
                   EnterCriticalSection(&s->cs);  // blocks: the main thread holds it
                   s->trace.push_back(2);
                   LeaveCriticalSection(&s->cs);
                   InterlockedIncrement(&s->counter);
                   SetEvent(s->done);
                   WaitForSingleObject(s->manual, INFINITE);
                   return 7;
                 };
                 HANDLE t1 = CreateThread(nullptr, 0, worker, &sh, 0, nullptr);
                 EnterCriticalSection(&sh.cs);
                 SetEvent(sh.go);
                 Sleep(0);  // the worker runs until it blocks on the critical section
                 sh.trace.push_back(1);
                 LeaveCriticalSection(&sh.cs);
                 HANDLE both[2] = {sh.done, sh.manual};
                 EXPECT(WaitForMultipleObjects(2, both, FALSE, INFINITE) == WAIT_OBJECT_0);
                 EXPECT(sh.trace.size() == 2 && sh.trace[0] == 1 && sh.trace[1] == 2 && sh.counter == 1);
                 EXPECT(WaitForMultipleObjects(2, both, TRUE, 5) == WAIT_TIMEOUT);  // a finite wait ends when nothing else can run
                 EXPECT(!CloseHandle(sh.manual) && GetLastError() == ERROR_INVALID_HANDLE);  // the worker is waiting on it
                 EXPECT(port.Faults().size() == 1 && port.Faults()[0] == "invalid-handle: CloseHandle of a handle thread 1 is waiting on (refused)");
                 SetEvent(sh.manual);
                 EXPECT(WaitForSingleObject(t1, INFINITE) == WAIT_OBJECT_0);
                 // A thread function written as Windows code writes it: `unsigned long WINAPI f(void*)`.
                 struct Long {
                   static unsigned long WINAPI Run(void* p) { return (unsigned long)(uintptr_t)p + 1; }
                 };
                 HANDLE t2 = CreateThread(nullptr, 0, &Long::Run, (void*)(uintptr_t)41, 0, nullptr);
                 DWORD code2 = 0;
                 EXPECT(WaitForSingleObject(t2, INFINITE) == WAIT_OBJECT_0 && GetExitCodeThread(t2, &code2) && code2 == 42);
                 CloseHandle(t2);
                 DWORD code = 0;
                 EXPECT(GetExitCodeThread(t1, &code) && code == 7);
                 EXPECT(WaitForSingleObject(sh.manual, 0) == WAIT_OBJECT_0 && WaitForSingleObject(sh.manual, 0) == WAIT_OBJECT_0);  // manual reset stays set
                 EXPECT(ResetEvent(sh.manual) && WaitForSingleObject(sh.manual, 0) == WAIT_TIMEOUT);
                 EXPECT(!SetEvent(INVALID_HANDLE_VALUE) && GetLastError() == ERROR_INVALID_HANDLE && port.Faults().size() == 2);
                 EXPECT(port.Faults()[1] == "invalid-handle: SetEvent on INVALID_HANDLE_VALUE");
                 CloseHandle(t1);
                 CloseHandle(sh.go);
                 CloseHandle(sh.done);
                 CloseHandle(sh.manual);
                 DeleteCriticalSection(&sh.cs);
                 return std::string();
               }});
  t.push_back({"win32-basics", [] {
                 ReferencePort& port = InstalledPort();
                 struct Node {
                   int v;
                   LIST_ENTRY link;
                 } a{1, {}}, b{2, {}}, c{3, {}};
                 LIST_ENTRY head;
                 InitializeListHead(&head);
                 EXPECT(IsListEmpty(&head));
                 InsertTailList(&head, &b.link);
                 InsertHeadList(&head, &a.link);
                 InsertTailList(&head, &c.link);
                 EXPECT(CONTAINING_RECORD(head.Flink, Node, link)->v == 1 && CONTAINING_RECORD(head.Blink, Node, link)->v == 3);
                 RemoveEntryList(&b.link);
                 EXPECT(CONTAINING_RECORD(RemoveHeadList(&head), Node, link)->v == 1);
                 EXPECT(CONTAINING_RECORD(RemoveHeadList(&head), Node, link)->v == 3 && IsListEmpty(&head));
                 LONG x = 5;
                 EXPECT(InterlockedIncrement(&x) == 6 && InterlockedCompareExchange(&x, 9, 6) == 6 && x == 9 && InterlockedExchange(&x, 1) == 9);
                 EXPECT(HRESULT_FROM_WIN32(ERROR_INVALID_HANDLE) == (HRESULT)0x80070006 && HRESULT_FROM_WIN32(0) == S_OK);
                 UINT32 seen = 0;  // the starter library counts queues in a UINT32
                 EXPECT(InterlockedIncrement(&seen) == 1 && seen == 1 && MAXUINT64 == ~0ull && MAXUINT32 == 0xFFFFFFFFu);
                 LUID l1{}, l2{};
                 EXPECT(AllocateLocallyUniqueId(&l1) && AllocateLocallyUniqueId(&l2) && (l1.LowPart != l2.LowPart || l1.HighPart != l2.HighPart));
                 int arr[7];
                 ZeroMemory(arr, sizeof arr);
                 EXPECT(ARRAYSIZE(arr) == 7 && arr[6] == 0);
                 LARGE_INTEGER now, freq;
                 port.AdvanceClock(1234);
                 EXPECT(QueryPerformanceCounter(&now) && now.QuadPart == 1234 && QueryPerformanceFrequency(&freq) && freq.QuadPart == 1000);
                 int* z = (int*)HeapAlloc(GetProcessHeap(), HEAP_ZERO_MEMORY, 64 * sizeof(int));
                 bool zeroed = true;
                 for (int i = 0; i < 64; i++) zeroed = zeroed && z[i] == 0;
                 HeapFree(GetProcessHeap(), 0, z);
                 EXPECT(zeroed);
                 return std::string();
               }});
  t.push_back({"foreign-objects-are-faults", [] {
                 ReferencePort& port = InstalledPort();
                 ID3D12Device* d = Kit::Get().CreateDevice(3);
                 ID3D12CommandQueue* q = Kit::Get().CreateQueue(d, 0);
                 ID3D12Fence* notAFence = reinterpret_cast<ID3D12Fence*>(q);
                 EXPECT(q->Signal(notAFence, 1) == E_INVALIDARG && q->Wait(nullptr, 1) == E_INVALIDARG);
                 ID3D12CommandList* notAList = reinterpret_cast<ID3D12CommandList*>(d);
                 q->ExecuteCommandLists(1, &notAList);
                 EXPECT(port.PendingItems(0) == 0);
                 ID3D12Fence* f = nullptr;
                 d->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&f));
                 EXPECT(f->SetEventOnCompletion(1, INVALID_HANDLE_VALUE) == E_INVALIDARG);
                 f->Release();
                 EXPECT(port.Faults().size() == 4);
                 EXPECT(port.Faults()[0].rfind("unknown-fence: ID3D12CommandQueue::Signal", 0) == 0 && port.Faults()[1].rfind("unknown-fence: ID3D12CommandQueue::Wait", 0) == 0);
                 EXPECT(port.Faults()[2].rfind("unknown-command-list:", 0) == 0 && port.Faults()[3].rfind("invalid-handle:", 0) == 0);
                 q->Release();
                 d->Release();
                 return std::string();
               }});
  t.push_back({"teardown-leak-check-fires", [] {
                 ReferencePort port(SmallConfig());
                 ScenarioSpec spec{{{10, false, true, false}}, 1, 100, 0};
                 Env env = MakeEnv(port, 3, spec);
                 env.appFence->AddRef();  // one reference too many: the fence outlives the teardown
                 ReleaseEnv(env);
                 EXPECT(env.checks.size() == 2);
                 EXPECT(env.checks[0] == "leak 1 kit fence(s) still referenced after teardown" && env.checks[1] == "leak 1 fence(s) not destroyed on the GPU side");
                 env.appFence->Release();
                 EXPECT(Kit::Get().LiveCount(Kit::Kind::Fence) == 0);
                 return std::string();
               }});
  t.push_back({"foreign-thread-is-refused", [] {
                 InstalledPort();
                 HANDLE e = CreateEvent(nullptr, FALSE, FALSE, nullptr);  // this thread now holds the baton
                 pthread_t other;
                 pthread_create(&other, nullptr, [](void* h) -> void* { SetEvent((HANDLE)h); return nullptr; }, e);
                 pthread_join(other, nullptr);  // the kit ends the process (status 70) before this returns
                 return std::string("a thread the kit did not start made a kit call");
               },
               "exit-70"});
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s kit-tests | matrix | list | run VARIANT MODE SCENARIO [--log] [--seed N]\n", argv[0]);
    return 2;
  }
  std::string cmd = argv[1];
  if (cmd == "list") {
    for (auto& v : Variants()) printf("variant %s\n", v.name);
    for (const char* m : kModes) printf("mode %s\n", m);
    for (auto& s : Scenarios()) printf("scenario %s\n", s.name);
    return 0;
  }
  if (cmd == "kit-tests") {
    int failed = 0;
    for (auto& kt : KitTests()) {
      auto [status, out] = InChild([&] {
        std::string err = kt.body();
        printf("%s\n", err.empty() ? "PASS" : ("FAIL " + err).c_str());
        return err.empty() ? 0 : 1;
      });
      std::string first = out.substr(0, out.find('\n'));
      bool ok = status == kt.expectStatus;
      printf("KIT %s %s %s %s\n", kt.name, ok ? "pass" : "fail", status.c_str(), first.c_str());
      if (!ok) failed++;
    }
    return failed == 0 ? 0 : 1;
  }
  if (cmd == "matrix") {
    for (auto& v : Variants())
      for (const char* mode : kModes)
        for (auto& sc : Scenarios()) {
          auto [status, out] = InChild([&] { return RunOne(v, mode, sc, false, 0); });
          printf("RUN %s %s %s %s %s\n", v.name, mode, sc.name, status.c_str(), Kinds(out).c_str());
          fflush(stdout);
        }
    return 0;
  }
  if (cmd == "run" && argc >= 5) {
    bool log = false;
    uint64_t seed = 0;
    for (int i = 5; i < argc; i++) {
      if (strcmp(argv[i], "--log") == 0) log = true;
      else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], nullptr, 10);
      else {
        fprintf(stderr, "error: run: unknown option %s\n", argv[i]);
        return 2;
      }
    }
    for (auto& v : Variants())
      for (auto& sc : Scenarios())
        if (v.name == std::string(argv[2]) && sc.name == std::string(argv[4]) && (strcmp(argv[3], "d3") == 0 || strcmp(argv[3], "d0") == 0))
          return RunOne(v, argv[3], sc, log, seed) == 0 ? 0 : 1;
    fprintf(stderr, "error: run: no variant %s, mode %s or scenario %s (see `list`)\n", argv[2], argv[3], argv[4]);
    return 2;
  }
  fprintf(stderr, "error: unknown command %s\n", cmd.c_str());
  return 2;
}
