// The example residency manager (residency_manager.h, compiled unchanged) as a native-residency
// driver: `npm run fuzz -- --exec <executable>` runs it side by side with the spec model.
//
// A team's driver file is the last four lines of this one. This file holds more because the
// project's teeth need every build of the header: the clean build, the single-threaded one and
// one per planted bug, each in its own namespace (variants.h). One
// executable serves them all, chosen by the name it is started under (tools/d3d12-kit/build.ts
// links `residency-<variant>` to it): a campaign names the variant it runs by its path.
#include <gpumv_d3d12/residency_driver.h>

#include <string.h>

#include <string>

#include "variants.h"

using gpumv_d3d12::RunResidencyDriver;
using gpumv_d3d12::StarterLibraryCallbacks;

// What a team's driver file holds, once per build here.
#define GPUMV_TEAM(NS) \
  struct Team_##NS : StarterLibraryCallbacks<NS::ResidencyManager, NS::ManagedObject, NS::ResidencySet> {}

GPUMV_TEAM(clean);
GPUMV_TEAM(clean_st);
GPUMV_TEAM(bug_lru_touch_skipped);
GPUMV_TEAM(bug_trim_in_flight);
GPUMV_TEAM(bug_fence_off_by_one);
GPUMV_TEAM(bug_no_paging_wait);
GPUMV_TEAM(bug_local_usage_only);
GPUMV_TEAM(bug_split_drops_set);
GPUMV_TEAM(bug_failed_batch_counted);

// Misuse teams: the clean manager driven with callbacks that break a rule the harness checks,
// each the proof that a check of the native-residency system fires (properties/native-residency.test.ts).
namespace misuse {

using Base = Team_clean;

/** Creates a fence of its own at Create and never releases it: `no-leak`. */
struct Leak : Base {
  static HRESULT Create(Manager& m, ID3D12Device* device, IDXGIAdapter3* adapter, UINT32 maxLatency) {
    ID3D12Fence* fence = nullptr;
    device->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&fence));
    return Base::Create(m, device, adapter, maxLatency);
  }
};

/** Asks the queue for its timestamp frequency, which the kit does not implement: `kit-calls-supported`. */
struct UnsupportedCall : Base {
  static HRESULT Execute(Manager& m, ID3D12CommandQueue* queue, ID3D12CommandList** lists, Set** sets, UINT32 count) {
    UINT64 frequency = 0;
    queue->GetTimestampFrequency(&frequency);
    return Base::Execute(m, queue, lists, sets, count);
  }
};

/**
 * After each submission, makes the evicted tracked objects resident behind the manager's back
 * (its bookkeeping left as it was, once per object): the manager's own MakeResident of such an
 * object later is a second call for one status flip, `residency-balanced`.
 */
struct ResidentBehindBack : Base {
  static std::vector<Object*>& Tracked() {
    static std::vector<Object*> tracked;
    return tracked;
  }
  static void Track(Manager& m, Object& o, ID3D12Pageable* pageable, UINT64 size, bool resident) {
    Base::Track(m, o, pageable, size, resident);
    Tracked().push_back(&o);
  }
  static void Untrack(Manager& m, Object& o) {
    Base::Untrack(m, o);
    for (size_t i = 0; i < Tracked().size(); i++)
      if (Tracked()[i] == &o) Tracked().erase(Tracked().begin() + (long)i--);
  }
  static HRESULT Execute(Manager& m, ID3D12CommandQueue* queue, ID3D12CommandList** lists, Set** sets, UINT32 count) {
    HRESULT hr = Base::Execute(m, queue, lists, sets, count);
    std::vector<ID3D12Pageable*> evicted;
    for (Object* o : Tracked())
      if (o->ResidencyStatus == Object::RESIDENCY_STATUS::EVICTED && o->CommandListsUsedOn[GPUMV_MAX_NUM_CONCURRENT_CMD_LISTS - 1] == false) {
        evicted.push_back(o->pUnderlying);
        o->CommandListsUsedOn[GPUMV_MAX_NUM_CONCURRENT_CMD_LISTS - 1] = true;  // the last slot (never taken here) marks it done
      }
    ID3D12Device* device = nullptr;
    queue->GetDevice(IID_PPV_ARGS(&device));
    if (!evicted.empty()) device->MakeResident((UINT)evicted.size(), evicted.data());
    device->Release();
    return hr;
  }
};

}  // namespace misuse

int main(int, char** argv) {
  const char* slash = strrchr(argv[0], '/');
  std::string name = slash == nullptr ? argv[0] : slash + 1;
  // The build script links the release build (-O2, no sanitizers) as residency-<variant>-release.
  const std::string release = "-release";
  if (name.size() > release.size() && name.compare(name.size() - release.size(), release.size(), release) == 0)
    name.resize(name.size() - release.size());
  if (name == "residency-misuse-leak") return RunResidencyDriver<misuse::Leak>("clean manager, a fence leaked by the driver file", "pagingThread=1\npolicy=any\n");
  if (name == "residency-misuse-unsupported-call")
    return RunResidencyDriver<misuse::UnsupportedCall>("clean manager, an unsupported call in the driver file", "pagingThread=1\npolicy=any\n");
  if (name == "residency-misuse-resident-behind-back")
    return RunResidencyDriver<misuse::ResidentBehindBack>("clean manager, objects made resident behind its back", "pagingThread=1\npolicy=any\n");
  // Without ID3D12Device3 the clean build and the bugs page on a thread of their own.
  const char* thread = "pagingThread=1\n";
  if (name == "residency-clean") return RunResidencyDriver<Team_clean>("example residency manager (clean)", thread);
  if (name == "residency-single-threaded")
    return RunResidencyDriver<Team_clean_st>("example residency manager (RESIDENCY_SINGLE_THREADED=1)", "pagingThread=0\n");
  if (name == "residency-bug-lru-touch-skipped") return RunResidencyDriver<Team_bug_lru_touch_skipped>("example residency manager (GPUMV_BUG_LRU_TOUCH_SKIPPED)", thread);
  if (name == "residency-bug-trim-in-flight") return RunResidencyDriver<Team_bug_trim_in_flight>("example residency manager (GPUMV_BUG_TRIM_IN_FLIGHT)", thread);
  if (name == "residency-bug-fence-off-by-one") return RunResidencyDriver<Team_bug_fence_off_by_one>("example residency manager (GPUMV_BUG_FENCE_OFF_BY_ONE)", thread);
  if (name == "residency-bug-no-paging-wait") return RunResidencyDriver<Team_bug_no_paging_wait>("example residency manager (GPUMV_BUG_NO_PAGING_WAIT)", thread);
  if (name == "residency-bug-local-usage-only") return RunResidencyDriver<Team_bug_local_usage_only>("example residency manager (GPUMV_BUG_LOCAL_USAGE_ONLY)", thread);
  if (name == "residency-bug-split-drops-set") return RunResidencyDriver<Team_bug_split_drops_set>("example residency manager (GPUMV_BUG_SPLIT_DROPS_SET)", thread);
  if (name == "residency-bug-failed-batch-counted")
    return RunResidencyDriver<Team_bug_failed_batch_counted>("example residency manager (GPUMV_BUG_FAILED_BATCH_COUNTED)", thread);
  fprintf(stderr, "error: started as %s; start this driver as residency-clean, residency-single-threaded, residency-bug-<name> or residency-misuse-<name> (tools/d3d12-kit/build.ts links them)\n", name.c_str());
  return 2;
}
