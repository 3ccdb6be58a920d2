// An example D3D12 residency manager, header-only, in the style of the D3D12 Residency Starter
// Library, written from the project's behavioural spec (shared/spec/residency-library.md): an LRU
// of managed objects, residency sets with a 32-slot pool, device-wide sync points over per-queue
// fences, a paging fence, MaxLatency queued paging works, aged and budget trims, and the split of
// a submission that does not fit. It is ordinary Windows code (d3d12.h, dxgi1_4.h, Win32
// threading); on Linux it compiles unchanged against the gpumv D3D12 kit, given only the kit's
// include directories.
//
// Configuration (macros):
// - RESIDENCY_SINGLE_THREADED (default 0): without ID3D12Device3, process paging work inline
//   instead of on the paging thread.
// - GPUMV_RESIDENCY_NAMESPACE (default D3DX12Residency): the namespace, so that one translation
//   unit can hold several builds of this header (the test driver holds the clean build and the
//   planted-bug variants side by side). This header has no include guard for that reason.
// - Planted bugs for the harness's teeth, each 0 (default) or 1:
//   GPUMV_BUG_LRU_TOUCH_SKIPPED  an object already resident is not touched (sync point, timestamp,
//                                LRU position) when a set submits it again;
//   GPUMV_BUG_TRIM_IN_FLIGHT     the aged trim stops only above the first uncompleted generation,
//                                so it evicts objects that generation's lists still read;
//   GPUMV_BUG_FENCE_OFF_BY_ONE   a sync point counts as complete when its queue fence is one value
//                                short of what it recorded;
//   GPUMV_BUG_NO_PAGING_WAIT     the queue's GPU wait on the paging fence is dropped;
//   GPUMV_BUG_LOCAL_USAGE_ONLY   the make-resident batching takes usage from the local segment only;
//   GPUMV_BUG_SPLIT_DROPS_SET    the second half of a split submission is made resident with the
//                                first half's sets;
//   GPUMV_BUG_FAILED_BATCH_COUNTED  a make-resident batch that fails still counts as made (the
//                                library's own latent defect, spec §8 (b)): the loop goes on to the
//                                next objects and the failed ones are never made resident.
//
// Where the spec lists undefined behaviour of the library (§2 Insert with the invalid slot, §6
// WaitForSyncPoint past the end, §8 (a) generation underflow, §8 (b) a failed batch counted as
// made, Destroy leaking queued work), this example takes the safe choice and says so at the place.
// A device call that fails (MakeResident, EnqueueMakeResident, Evict: E_OUTOFMEMORY) is handled
// as the spec model handles it (models/residency-manager.ts): a failed batch goes back to the
// pressure path, a failed fallback make-resident or a failed Evict is retried once.

#include <windows.h>
#include <d3d12.h>
#include <dxgi1_4.h>

#include <stdint.h>
#include <string.h>

#include <new>
#include <vector>

#ifndef RESIDENCY_SINGLE_THREADED
#define RESIDENCY_SINGLE_THREADED 0
#endif
#ifndef GPUMV_RESIDENCY_NAMESPACE
#define GPUMV_RESIDENCY_NAMESPACE D3DX12Residency
#endif
#ifndef GPUMV_BUG_LRU_TOUCH_SKIPPED
#define GPUMV_BUG_LRU_TOUCH_SKIPPED 0
#endif
#ifndef GPUMV_BUG_TRIM_IN_FLIGHT
#define GPUMV_BUG_TRIM_IN_FLIGHT 0
#endif
#ifndef GPUMV_BUG_FENCE_OFF_BY_ONE
#define GPUMV_BUG_FENCE_OFF_BY_ONE 0
#endif
#ifndef GPUMV_BUG_NO_PAGING_WAIT
#define GPUMV_BUG_NO_PAGING_WAIT 0
#endif
#ifndef GPUMV_BUG_LOCAL_USAGE_ONLY
#define GPUMV_BUG_LOCAL_USAGE_ONLY 0
#endif
#ifndef GPUMV_BUG_SPLIT_DROPS_SET
#define GPUMV_BUG_SPLIT_DROPS_SET 0
#endif
#ifndef GPUMV_BUG_FAILED_BATCH_COUNTED
#define GPUMV_BUG_FAILED_BATCH_COUNTED 0
#endif

namespace GPUMV_RESIDENCY_NAMESPACE {

#define GPUMV_MAX_NUM_CONCURRENT_CMD_LISTS 32

class ManagedObject {
 public:
  enum class RESIDENCY_STATUS { RESIDENT, EVICTED };

  ManagedObject() {
    ZeroMemory(CommandListsUsedOn, sizeof(CommandListsUsedOn));
    ListEntry.Flink = ListEntry.Blink = nullptr;
  }
  void Initialize(ID3D12Pageable* pUnderlyingIn, UINT64 ObjectSize, UINT64 InitialGPUSyncPoint = 0) {
    pUnderlying = pUnderlyingIn;
    Size = ObjectSize;
    LastGPUSyncPoint = InitialGPUSyncPoint;
  }
  bool IsInitialized() const { return pUnderlying != nullptr; }

  RESIDENCY_STATUS ResidencyStatus = RESIDENCY_STATUS::RESIDENT;
  ID3D12Pageable* pUnderlying = nullptr;
  UINT64 Size = 0;
  UINT64 LastGPUSyncPoint = 0;
  UINT64 LastUsedTimestamp = 0;
  bool CommandListsUsedOn[GPUMV_MAX_NUM_CONCURRENT_CMD_LISTS];
  LIST_ENTRY ListEntry;
};

namespace Internal {

/** The slot pool: one per manager, shared by the app's sets and the transient master sets. */
struct SyncManager {
  SyncManager() {
    InitializeCriticalSection(&MutexHandle);
    ZeroMemory(SlotTaken, sizeof(SlotTaken));
  }
  ~SyncManager() { DeleteCriticalSection(&MutexHandle); }
  CRITICAL_SECTION MutexHandle;
  bool SlotTaken[GPUMV_MAX_NUM_CONCURRENT_CMD_LISTS];
};

}  // namespace Internal

class ResidencySet {
 public:
  static const UINT32 InvalidIndex = 0xFFFFFFFFu;

  explicit ResidencySet(Internal::SyncManager* pSyncManagerIn) : pSyncManager(pSyncManagerIn) {}
  ~ResidencySet() { delete[] ppSet; }

  HRESULT Open() {
    EnterCriticalSection(&pSyncManager->MutexHandle);
    HRESULT hr = S_OK;
    if (IsOpen) {
      hr = E_INVALIDARG;
    } else {
      UINT32 slot = InvalidIndex;
      for (UINT32 i = 0; i < GPUMV_MAX_NUM_CONCURRENT_CMD_LISTS; i++) {
        if (!pSyncManager->SlotTaken[i]) {
          slot = i;
          break;
        }
      }
      if (slot == InvalidIndex) {
        hr = E_OUTOFMEMORY;
      } else {
        pSyncManager->SlotTaken[slot] = true;
        CommandListIndex = slot;
        CurrentSetSize = 0;
        IsOpen = true;
        OutOfMemory = false;
      }
    }
    LeaveCriticalSection(&pSyncManager->MutexHandle);
    return hr;
  }

  /** Adds the object once; false for a duplicate, an allocation failure, or (here) a set that is not open. */
  bool Insert(ManagedObject* pObject) {
    // The library indexes with InvalidIndex here (undefined behaviour); this example refuses.
    if (CommandListIndex == InvalidIndex) return false;
    if (pObject->CommandListsUsedOn[CommandListIndex]) return false;
    pObject->CommandListsUsedOn[CommandListIndex] = true;
    if (ppSet == nullptr || CurrentSetSize >= MaxResidencySetSize) Realloc();
    if (ppSet == nullptr) {
      OutOfMemory = true;
      return false;
    }
    ppSet[CurrentSetSize++] = pObject;
    return true;
  }

  HRESULT Close() {
    if (!IsOpen) return E_INVALIDARG;
    if (OutOfMemory) return E_OUTOFMEMORY;
    for (INT32 i = 0; i < CurrentSetSize; i++) ppSet[i]->CommandListsUsedOn[CommandListIndex] = false;
    EnterCriticalSection(&pSyncManager->MutexHandle);
    pSyncManager->SlotTaken[CommandListIndex] = false;
    CommandListIndex = InvalidIndex;
    IsOpen = false;
    LeaveCriticalSection(&pSyncManager->MutexHandle);
    return S_OK;
  }

  /** Preallocates exactly MaxSize entries (the master set). */
  HRESULT Initialize(UINT32 MaxSize) {
    MaxResidencySetSize = (INT32)MaxSize;
    if (MaxSize > 0) {
      ppSet = new (std::nothrow) ManagedObject*[MaxSize];
      if (ppSet == nullptr) return E_OUTOFMEMORY;
    }
    return S_OK;
  }

  ManagedObject** ppSet = nullptr;
  INT32 MaxResidencySetSize = 0;
  INT32 CurrentSetSize = 0;
  UINT32 CommandListIndex = InvalidIndex;
  bool IsOpen = false;
  bool OutOfMemory = false;

 private:
  void Realloc() {
    INT32 newSize = (ppSet == nullptr && MaxResidencySetSize == 0) ? 4096 : (INT32)(float(MaxResidencySetSize) + float(MaxResidencySetSize) / 2.0f);
    if (newSize <= CurrentSetSize) newSize = CurrentSetSize + 1;
    ManagedObject** grown = new (std::nothrow) ManagedObject*[newSize];
    if (grown != nullptr && ppSet != nullptr) memcpy(grown, ppSet, sizeof(ManagedObject*) * (size_t)CurrentSetSize);
    delete[] ppSet;
    ppSet = grown;
    MaxResidencySetSize = grown != nullptr ? newSize : 0;
  }

  Internal::SyncManager* pSyncManager;
};

namespace Internal {

struct QueueFence {
  ID3D12Fence* Fence = nullptr;
  UINT64 FenceValue = 1;  // the next value to signal; the D3D fence completes at 0
  LIST_ENTRY ListEntry;
};

struct DeviceWideSyncPoint {
  UINT64 Generation = 0;
  std::vector<QueueFence*> Queues;
  std::vector<UINT64> Values;
  LIST_ENTRY ListEntry;

  bool IsCompleted() const {
    for (size_t i = 0; i < Queues.size(); i++) {
#if GPUMV_BUG_FENCE_OFF_BY_ONE
      if (Queues[i]->Fence->GetCompletedValue() + 1 < Values[i]) return false;
#else
      if (Queues[i]->Fence->GetCompletedValue() < Values[i]) return false;
#endif
    }
    return true;
  }
};

/** Resident and evicted lists; the resident head is the stalest object, the tail the most recent. */
class LRUCache {
 public:
  LRUCache() {
    InitializeListHead(&ResidentObjectListHead);
    InitializeListHead(&EvictedObjectListHead);
  }

  void Insert(ManagedObject* pObject) {
    if (pObject->ResidencyStatus == ManagedObject::RESIDENCY_STATUS::RESIDENT) {
      InsertHeadList(&ResidentObjectListHead, &pObject->ListEntry);
      NumResidentObjects++;
      ResidentSize += pObject->Size;
    } else {
      InsertHeadList(&EvictedObjectListHead, &pObject->ListEntry);
      NumEvictedObjects++;
    }
  }
  void Remove(ManagedObject* pObject) {
    RemoveEntryList(&pObject->ListEntry);
    if (pObject->ResidencyStatus == ManagedObject::RESIDENCY_STATUS::RESIDENT) {
      NumResidentObjects--;
      ResidentSize -= pObject->Size;
    } else {
      NumEvictedObjects--;
    }
  }
  void ObjectReferenced(ManagedObject* pObject) {
    RemoveEntryList(&pObject->ListEntry);
    InsertTailList(&ResidentObjectListHead, &pObject->ListEntry);
  }
  void MakeResident(ManagedObject* pObject) {
    pObject->ResidencyStatus = ManagedObject::RESIDENCY_STATUS::RESIDENT;
    RemoveEntryList(&pObject->ListEntry);
    InsertTailList(&ResidentObjectListHead, &pObject->ListEntry);
    NumEvictedObjects--;
    NumResidentObjects++;
    ResidentSize += pObject->Size;
  }
  void Evict(ManagedObject* pObject) {
    pObject->ResidencyStatus = ManagedObject::RESIDENCY_STATUS::EVICTED;
    RemoveEntryList(&pObject->ListEntry);
    InsertTailList(&EvictedObjectListHead, &pObject->ListEntry);
    NumResidentObjects--;
    ResidentSize -= pObject->Size;
    NumEvictedObjects++;
  }
  ManagedObject* GetResidentListHead() {
    if (IsListEmpty(&ResidentObjectListHead)) return nullptr;
    return CONTAINING_RECORD(ResidentObjectListHead.Flink, ManagedObject, ListEntry);
  }

  /** Prefix trim of objects idle for longer than the grace period and not used by uncompleted work. */
  void TrimAgedAllocations(DeviceWideSyncPoint* pFirstUncompleted, std::vector<ID3D12Pageable*>& EvictionList, UINT64 CurrentTimeStamp,
                           UINT64 EvictionGracePeriod) {
    for (ManagedObject* pHead = GetResidentListHead(); pHead != nullptr; pHead = GetResidentListHead()) {
#if GPUMV_BUG_TRIM_IN_FLIGHT
      if (pFirstUncompleted != nullptr && pHead->LastGPUSyncPoint > pFirstUncompleted->Generation) break;
#else
      if (pFirstUncompleted != nullptr && pHead->LastGPUSyncPoint >= pFirstUncompleted->Generation) break;
#endif
      if (CurrentTimeStamp - pHead->LastUsedTimestamp <= EvictionGracePeriod) break;
      EvictionList.push_back(pHead->pUnderlying);
      Evict(pHead);
    }
  }

  /** Evicts from the head while over budget, up to and including the given generation. */
  void TrimToSyncPointInclusive(INT64 CurrentUsage, INT64 CurrentBudget, std::vector<ID3D12Pageable*>& EvictionList, UINT64 SyncPoint) {
    EvictionList.clear();
    for (ManagedObject* pHead = GetResidentListHead(); pHead != nullptr; pHead = GetResidentListHead()) {
      if (pHead->LastGPUSyncPoint > SyncPoint || CurrentUsage < CurrentBudget) break;
      EvictionList.push_back(pHead->pUnderlying);
      CurrentUsage -= (INT64)pHead->Size;
      Evict(pHead);
    }
  }

  LIST_ENTRY ResidentObjectListHead;
  LIST_ENTRY EvictedObjectListHead;
  UINT32 NumResidentObjects = 0;
  UINT32 NumEvictedObjects = 0;
  UINT64 ResidentSize = 0;
};

struct AsyncWorkload {
  ResidencySet* pMasterSet = nullptr;
  UINT64 FenceValueToSignal = 0;
  UINT64 SyncPointGeneration = 0;
};

}  // namespace Internal

class ResidencyManager {
 public:
  ResidencyManager() {
    InitializeListHead(&QueueFencesListHead);
    InitializeListHead(&InFlightSyncPointsHead);
    InitializeCriticalSection(&ExecutionCS);
    InitializeCriticalSection(&MutexHandle);
    InitializeCriticalSection(&SyncPointCS);
    InitializeCriticalSection(&AsyncWorkCS);
  }
  ~ResidencyManager() {
    DeleteCriticalSection(&ExecutionCS);
    DeleteCriticalSection(&MutexHandle);
    DeleteCriticalSection(&SyncPointCS);
    DeleteCriticalSection(&AsyncWorkCS);
  }

  HRESULT Initialize(ID3D12Device* ParentDevice, UINT DeviceNodeIndex, IDXGIAdapter* ParentAdapter, UINT32 MaxLatency) {
    if (ParentDevice == nullptr || MaxLatency == 0) return E_INVALIDARG;  // MaxLatency 0 hangs the library's first submit
    Device = ParentDevice;
    NodeIndex = DeviceNodeIndex;
    MaxSoftwareQueueLatency = MaxLatency;
    AsyncWorkQueueSize = MaxLatency + 1;
    if (FAILED(Device->QueryInterface(IID_PPV_ARGS(&Device3)))) {
      Device3 = nullptr;
      AsyncThreadFenceValue = 1;
    }
    if (ParentAdapter != nullptr && FAILED(ParentAdapter->QueryInterface(IID_PPV_ARGS(&Adapter)))) Adapter = nullptr;

    LARGE_INTEGER frequency;
    QueryPerformanceFrequency(&frequency);
    MinEvictionGracePeriodTicks = (UINT64)(frequency.QuadPart * 1.0f);
    MaxEvictionGracePeriodTicks = (UINT64)(frequency.QuadPart * 60.0f);

    HRESULT hr = Device->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&AsyncThreadFence));
    if (FAILED(hr)) return hr;
    CompletionEvent = CreateEvent(nullptr, FALSE, FALSE, nullptr);
    AsyncWorkEvent = CreateEvent(nullptr, FALSE, FALSE, nullptr);
    AsyncWorkCompletedEvent = CreateEvent(nullptr, FALSE, FALSE, nullptr);
    if (CompletionEvent == nullptr || AsyncWorkEvent == nullptr || AsyncWorkCompletedEvent == nullptr) return HRESULT_FROM_WIN32(GetLastError());
    AsyncWorkQueue = new Internal::AsyncWorkload[AsyncWorkQueueSize];

    LUID luid = Device->GetAdapterLuid();
    ZeroMemory(&PrivateDataGuid, sizeof(PrivateDataGuid));
    PrivateDataGuid.Data1 = 0x9e5ad9c3u ^ luid.LowPart;
    PrivateDataGuid.Data2 = (unsigned short)(luid.HighPart & 0xFFFF);
    PrivateDataGuid.Data3 = (unsigned short)((luid.HighPart >> 16) & 0xFFFF);
    PrivateDataGuid.Data4[0] = 0x52;  // 'R'
    PrivateDataGuid.Data4[1] = 0x4d;  // 'M'

    if (Device3 == nullptr && !RESIDENCY_SINGLE_THREADED) {
      AsyncThreadHandle = CreateThread(nullptr, 0, &ResidencyManager::AsyncThreadStart, this, 0, nullptr);
      if (AsyncThreadHandle == nullptr) return HRESULT_FROM_WIN32(GetLastError());
    }
    return S_OK;
  }

  /**
   * Stops the paging thread after it has processed every queued work, then frees the queue fences
   * and sync points. (The library drains queued work without processing it, leaking its master
   * sets; this example processes it, so nothing leaks and no GPU wait is left unsatisfiable.)
   */
  void Destroy() {
    if (AsyncThreadHandle != nullptr) {
      EnterCriticalSection(&AsyncWorkCS);
      AsyncThreadExit = true;
      LeaveCriticalSection(&AsyncWorkCS);
      SetEvent(AsyncWorkEvent);
      WaitForSingleObject(AsyncThreadHandle, INFINITE);
      CloseHandle(AsyncThreadHandle);
      AsyncThreadHandle = nullptr;
    }
    Internal::AsyncWorkload work;
    while (DequeueAsyncWork(work)) delete work.pMasterSet;
    delete[] AsyncWorkQueue;
    AsyncWorkQueue = nullptr;
    while (!IsListEmpty(&InFlightSyncPointsHead)) {
      delete CONTAINING_RECORD(RemoveHeadList(&InFlightSyncPointsHead), Internal::DeviceWideSyncPoint, ListEntry);
    }
    while (!IsListEmpty(&QueueFencesListHead)) {
      Internal::QueueFence* qf = CONTAINING_RECORD(RemoveHeadList(&QueueFencesListHead), Internal::QueueFence, ListEntry);
      qf->Fence->Release();
      delete qf;
    }
    if (AsyncThreadFence != nullptr) AsyncThreadFence->Release();
    AsyncThreadFence = nullptr;
    if (CompletionEvent != nullptr) CloseHandle(CompletionEvent);
    if (AsyncWorkEvent != nullptr) CloseHandle(AsyncWorkEvent);
    if (AsyncWorkCompletedEvent != nullptr) CloseHandle(AsyncWorkCompletedEvent);
    CompletionEvent = AsyncWorkEvent = AsyncWorkCompletedEvent = nullptr;
    if (Device3 != nullptr) Device3->Release();
    if (Adapter != nullptr) Adapter->Release();
    Device3 = nullptr;
    Adapter = nullptr;
  }

  void BeginTrackingObject(ManagedObject* pObject) {
    if (pObject == nullptr) return;
    EnterCriticalSection(&MutexHandle);
    LRU.Insert(pObject);
    LeaveCriticalSection(&MutexHandle);
  }
  void EndTrackingObject(ManagedObject* pObject) {
    EnterCriticalSection(&MutexHandle);
    LRU.Remove(pObject);
    LeaveCriticalSection(&MutexHandle);
  }

  ResidencySet* CreateResidencySet() { return new ResidencySet(&SlotPool); }
  void DestroyResidencySet(ResidencySet* pSet) { delete pSet; }

  /** Executes the lists on the queue after making every object of their sets resident. */
  HRESULT ExecuteCommandLists(ID3D12CommandQueue* Queue, ID3D12CommandList** CommandLists, ResidencySet** ResidencySets, UINT32 Count) {
    return ExecuteSubset(Queue, CommandLists, ResidencySets, Count);
  }

  // Read-only views for a driver's checks.
  UINT32 NumResidentObjects() const { return LRU.NumResidentObjects; }
  UINT32 NumEvictedObjects() const { return LRU.NumEvictedObjects; }
  UINT64 CurrentGeneration() const { return CurrentSyncPointGeneration; }

 private:
  static DWORD WINAPI AsyncThreadStart(void* pData) {
    ((ResidencyManager*)pData)->AsyncThreadLoop();
    return 0;
  }

  void AsyncThreadLoop() {
    for (;;) {
      Internal::AsyncWorkload work;
      while (DequeueAsyncWork(work)) {
        ProcessPagingWork(work);
        SetEvent(AsyncWorkCompletedEvent);
      }
      EnterCriticalSection(&AsyncWorkCS);
      bool exit = AsyncThreadExit && AsyncWorkHead == AsyncWorkTail;
      LeaveCriticalSection(&AsyncWorkCS);
      if (exit) return;
      WaitForSingleObject(AsyncWorkEvent, INFINITE);
    }
  }

  HRESULT EnqueueAsyncWork(ResidencySet* pMasterSet, UINT64 FenceValueToSignal, UINT64 Generation) {
    EnterCriticalSection(&AsyncWorkCS);
    while (AsyncWorkTail - AsyncWorkHead >= MaxSoftwareQueueLatency) {
      LeaveCriticalSection(&AsyncWorkCS);
      WaitForSingleObject(AsyncWorkCompletedEvent, INFINITE);
      EnterCriticalSection(&AsyncWorkCS);
    }
    Internal::AsyncWorkload& slot = AsyncWorkQueue[AsyncWorkTail % AsyncWorkQueueSize];
    slot.pMasterSet = pMasterSet;
    slot.FenceValueToSignal = FenceValueToSignal;
    slot.SyncPointGeneration = Generation;
    AsyncWorkTail++;
    LeaveCriticalSection(&AsyncWorkCS);
    return SetEvent(AsyncWorkEvent) ? S_OK : E_FAIL;
  }

  bool DequeueAsyncWork(Internal::AsyncWorkload& out) {
    EnterCriticalSection(&AsyncWorkCS);
    bool any = AsyncWorkHead != AsyncWorkTail;
    if (any) {
      out = AsyncWorkQueue[AsyncWorkHead % AsyncWorkQueueSize];
      AsyncWorkHead++;
    }
    LeaveCriticalSection(&AsyncWorkCS);
    return any;
  }

  void GetCurrentBudget(DXGI_QUERY_VIDEO_MEMORY_INFO* pInfo, DXGI_MEMORY_SEGMENT_GROUP Segment) {
    ZeroMemory(pInfo, sizeof(*pInfo));
    if (Adapter != nullptr) Adapter->QueryVideoMemoryInfo(NodeIndex, Segment, pInfo);
  }

  UINT64 GetCurrentEvictionGracePeriod(const DXGI_QUERY_VIDEO_MEMORY_INFO& LocalMemory) {
    double pressure = (double)LocalMemory.CurrentUsage / (double)LocalMemory.Budget;
    pressure = pressure < 1.0 ? pressure : 1.0;  // NaN and +inf become 1.0
    if (pressure > 0.7f) {
      double q = (pressure - 0.7f) / (1.0 - 0.7f);
      return (UINT64)((MaxEvictionGracePeriodTicks - MinEvictionGracePeriodTicks) * (1.0 - q)) + MinEvictionGracePeriodTicks;
    }
    return UINT64_MAX;
  }

  HRESULT GetQueueFence(ID3D12CommandQueue* Queue, Internal::QueueFence** ppOut) {
    Internal::QueueFence* qf = nullptr;
    UINT size = sizeof(qf);
    if (SUCCEEDED(Queue->GetPrivateData(PrivateDataGuid, &size, &qf)) && size == sizeof(qf) && qf != nullptr) {
      *ppOut = qf;
      return S_OK;
    }
    qf = new Internal::QueueFence;
    HRESULT hr = Device->CreateFence(0, D3D12_FENCE_FLAG_NONE, IID_PPV_ARGS(&qf->Fence));
    if (FAILED(hr)) {
      delete qf;
      return hr;
    }
    hr = Queue->SetPrivateData(PrivateDataGuid, sizeof(qf), &qf);
    if (FAILED(hr)) {
      qf->Fence->Release();
      delete qf;
      return hr;
    }
    InsertTailList(&QueueFencesListHead, &qf->ListEntry);
    NumQueuesSeen++;
    *ppOut = qf;
    return S_OK;
  }

  /** GPU-signals the queue's next fence value and records a device-wide sync point for the current generation. */
  HRESULT SignalFence(ID3D12CommandQueue* Queue) {
    Internal::QueueFence* qf = nullptr;
    HRESULT hr = GetQueueFence(Queue, &qf);
    if (SUCCEEDED(hr)) {
      hr = Queue->Signal(qf->Fence, qf->FenceValue);
      qf->FenceValue++;
    }
    if (SUCCEEDED(hr)) {
      Internal::DeviceWideSyncPoint* point = new Internal::DeviceWideSyncPoint;
      point->Generation = CurrentSyncPointGeneration;
      for (LIST_ENTRY* e = QueueFencesListHead.Flink; e != &QueueFencesListHead; e = e->Flink) {
        Internal::QueueFence* known = CONTAINING_RECORD(e, Internal::QueueFence, ListEntry);
        point->Queues.push_back(known);
        point->Values.push_back(known->FenceValue - 1);
      }
      EnterCriticalSection(&SyncPointCS);
      InsertTailList(&InFlightSyncPointsHead, &point->ListEntry);
      LeaveCriticalSection(&SyncPointCS);
    }
    CurrentSyncPointGeneration++;
    return hr;
  }

  /** Pops completed sync points; returns the first uncompleted one, or null. */
  Internal::DeviceWideSyncPoint* DequeueCompletedSyncPoints() {
    EnterCriticalSection(&SyncPointCS);
    Internal::DeviceWideSyncPoint* first = nullptr;
    while (!IsListEmpty(&InFlightSyncPointsHead)) {
      Internal::DeviceWideSyncPoint* head = CONTAINING_RECORD(InFlightSyncPointsHead.Flink, Internal::DeviceWideSyncPoint, ListEntry);
      if (!head->IsCompleted()) {
        first = head;
        break;
      }
      RemoveEntryList(&head->ListEntry);
      delete head;
    }
    LeaveCriticalSection(&SyncPointCS);
    return first;
  }

  /** CPU-waits for the generation's sync point; earlier points are popped without waiting (completion is monotone). */
  void WaitForSyncPoint(UINT64 Generation) {
    EnterCriticalSection(&SyncPointCS);
    while (!IsListEmpty(&InFlightSyncPointsHead)) {  // the library runs past the end here; this example stops
      Internal::DeviceWideSyncPoint* head = CONTAINING_RECORD(InFlightSyncPointsHead.Flink, Internal::DeviceWideSyncPoint, ListEntry);
      if (head->Generation > Generation) break;
      RemoveEntryList(&head->ListEntry);
      if (head->Generation == Generation) {
        for (size_t i = 0; i < head->Queues.size(); i++) {
          ID3D12Fence* fence = head->Queues[i]->Fence;
          if (fence->GetCompletedValue() < head->Values[i]) {
            fence->SetEventOnCompletion(head->Values[i], CompletionEvent);
            WaitForSingleObject(CompletionEvent, INFINITE);
          }
        }
        delete head;
        break;
      }
      delete head;
    }
    LeaveCriticalSection(&SyncPointCS);
  }

  HRESULT MakeResidentBatch(ID3D12Pageable** ppObjects, UINT32 Count) {
    if (Device3 != nullptr) {
      HRESULT hr = Device3->EnqueueMakeResident(D3D12_RESIDENCY_FLAG_NONE, Count, ppObjects, AsyncThreadFence, AsyncThreadFenceValue + 1);
      if (SUCCEEDED(hr)) AsyncThreadFenceValue++;
      return hr;
    }
    return Device->MakeResident(Count, ppObjects);
  }

  void ProcessPagingWork(Internal::AsyncWorkload& Work) {
    const UINT64 G = Work.SyncPointGeneration;
    Internal::DeviceWideSyncPoint* pFirstUncompleted = DequeueCompletedSyncPoints();
    LARGE_INTEGER now;
    QueryPerformanceCounter(&now);
    const UINT64 CurrentTime = (UINT64)now.QuadPart;

    EnterCriticalSection(&MutexHandle);
    ResidencySet* master = Work.pMasterSet;
    std::vector<ManagedObject*> MakeResidentList;
    std::vector<ID3D12Pageable*> EvictionList;
    MakeResidentList.reserve((size_t)master->CurrentSetSize);
    EvictionList.reserve(LRU.NumResidentObjects);
    UINT64 SizeToMakeResident = 0;

    for (INT32 i = 0; i < master->CurrentSetSize; i++) {
      ManagedObject* obj = master->ppSet[i];
      bool wasEvicted = obj->ResidencyStatus == ManagedObject::RESIDENCY_STATUS::EVICTED;
      if (wasEvicted) {
        MakeResidentList.push_back(obj);
        LRU.MakeResident(obj);
        SizeToMakeResident += obj->Size;
      }
#if GPUMV_BUG_LRU_TOUCH_SKIPPED
      if (!wasEvicted) continue;
#endif
      obj->LastGPUSyncPoint = G;
      obj->LastUsedTimestamp = CurrentTime;
      LRU.ObjectReferenced(obj);
    }

    DXGI_QUERY_VIDEO_MEMORY_INFO local, nonLocal;
    GetCurrentBudget(&local, DXGI_MEMORY_SEGMENT_GROUP_LOCAL);
    LRU.TrimAgedAllocations(pFirstUncompleted, EvictionList, CurrentTime, GetCurrentEvictionGracePeriod(local));
    if (!EvictionList.empty()) {
      if (FAILED(Device->Evict((UINT)EvictionList.size(), EvictionList.data())))
        Device->Evict((UINT)EvictionList.size(), EvictionList.data());  // retried once (the library ignores it)
      EvictionList.clear();
    }

    const UINT32 Total = (UINT32)MakeResidentList.size();
    if (Total > 0) {
      std::vector<ID3D12Pageable*> batch;
      UINT32 made = 0, idx = 0;
      for (;;) {
        GetCurrentBudget(&local, DXGI_MEMORY_SEGMENT_GROUP_LOCAL);
        GetCurrentBudget(&nonLocal, DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL);
#if GPUMV_BUG_LOCAL_USAGE_ONLY
        INT64 usage = (INT64)local.CurrentUsage;
#else
        INT64 usage = (INT64)(local.CurrentUsage + nonLocal.CurrentUsage);
#endif
        INT64 budget = (INT64)(local.Budget + nonLocal.Budget);
        INT64 avail = budget - usage;
        HRESULT hr = S_OK;
        if (avail > 0) {
          UINT64 batchBytes = 0;
          const UINT32 batchStart = idx, madeBefore = made;
          batch.clear();
          while (idx < Total && (INT64)(batchBytes + MakeResidentList[idx]->Size) <= avail) {
            batchBytes += MakeResidentList[idx]->Size;
            batch.push_back(MakeResidentList[idx]->pUnderlying);
            idx++;
            made++;
          }
          // Issued even when nothing fits (a batch of 0 objects), as the library does.
          hr = MakeResidentBatch(batch.data(), (UINT32)batch.size());
          if (SUCCEEDED(hr)) {
            SizeToMakeResident -= batchBytes;
          } else {
#if GPUMV_BUG_FAILED_BATCH_COUNTED
            (void)batchStart;
            (void)madeBefore;
#else
            // Not made: the pressure path below waits and trims (or falls back), then retries them.
            idx = batchStart;
            made = madeBefore;
#endif
          }
        }
        if (FAILED(hr) || made < Total) {
          ManagedObject* head = LRU.GetResidentListHead();
          pFirstUncompleted = DequeueCompletedSyncPoints();
          // The library's G-1 underflows at G = 0 (spec §8 (a)); this example takes the fallback there.
          if (head == nullptr || head->LastGPUSyncPoint >= G || pFirstUncompleted == nullptr || G == 0) {
            batch.clear();
            for (UINT32 i = idx; i < Total; i++) batch.push_back(MakeResidentList[i]->pUnderlying);
            // The over-budget overcommit; the library ignores its failure, this example retries once.
            if (FAILED(MakeResidentBatch(batch.data(), (UINT32)batch.size())))
              MakeResidentBatch(batch.data(), (UINT32)batch.size());
            break;
          }
          UINT64 waitGen = pFirstUncompleted->Generation == G ? G - 1 : pFirstUncompleted->Generation;
          WaitForSyncPoint(waitGen);
          LRU.TrimToSyncPointInclusive(usage + (INT64)SizeToMakeResident, budget, EvictionList, waitGen);
          // May be 0 objects, as in the library; a failure is retried once (the library ignores it).
          if (FAILED(Device->Evict((UINT)EvictionList.size(), EvictionList.data())))
            Device->Evict((UINT)EvictionList.size(), EvictionList.data());
          EvictionList.clear();
          continue;
        }
        break;
      }
    }
    LeaveCriticalSection(&MutexHandle);

    if (Device3 == nullptr) AsyncThreadFence->Signal(Work.FenceValueToSignal);
    delete master;
  }

  HRESULT ExecuteSubset(ID3D12CommandQueue* Queue, ID3D12CommandList** CommandLists, ResidencySet** ResidencySets, UINT32 Count) {
    DXGI_QUERY_VIDEO_MEMORY_INFO local, nonLocal;
    GetCurrentBudget(&local, DXGI_MEMORY_SEGMENT_GROUP_LOCAL);
    GetCurrentBudget(&nonLocal, DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL);

    UINT32 maxRefs = 0;
    for (UINT32 i = 0; i < Count; i++) {
      if (ResidencySets[i] == nullptr) continue;
      if (ResidencySets[i]->IsOpen) return E_INVALIDARG;
      maxRefs += (UINT32)ResidencySets[i]->CurrentSetSize;
    }

    ResidencySet* master = new (std::nothrow) ResidencySet(&SlotPool);
    if (master == nullptr) return E_OUTOFMEMORY;
    HRESULT hr = master->Initialize(maxRefs);
    if (SUCCEEDED(hr)) hr = master->Open();
    if (FAILED(hr)) {
      delete master;  // the library leaks it here
      return hr;
    }
    UINT64 TotalSizeNeeded = 0;
    for (UINT32 i = 0; i < Count; i++) {
      ResidencySet* set = ResidencySets[i];
      if (set == nullptr) continue;
      for (INT32 j = 0; j < set->CurrentSetSize; j++) {
        if (master->Insert(set->ppSet[j])) TotalSizeNeeded += set->ppSet[j]->Size;
      }
    }
    hr = master->Close();
    if (FAILED(hr)) {
      delete master;
      return hr;
    }

    if (Count > 1 && TotalSizeNeeded > local.Budget + nonLocal.Budget) {
      delete master;
      const UINT32 half = Count / 2;
      HRESULT first = ExecuteSubset(Queue, CommandLists, ResidencySets, half);
#if GPUMV_BUG_SPLIT_DROPS_SET
      HRESULT second = ExecuteSubset(Queue, CommandLists + half, ResidencySets, Count - half);
#else
      HRESULT second = ExecuteSubset(Queue, CommandLists + half, ResidencySets + half, Count - half);
#endif
      return first == S_OK && second == S_OK ? S_OK : E_FAIL;
    }

    Internal::QueueFence* qf = nullptr;
    hr = GetQueueFence(Queue, &qf);
    if (FAILED(hr)) {
      delete master;
      return hr;
    }

    EnterCriticalSection(&ExecutionCS);
    Internal::AsyncWorkload work;
    work.pMasterSet = master;
    work.FenceValueToSignal = AsyncThreadFenceValue;
    work.SyncPointGeneration = CurrentSyncPointGeneration;
    if (Device3 != nullptr || RESIDENCY_SINGLE_THREADED) {
      ProcessPagingWork(work);  // inline: the master set is freed there
      hr = S_OK;
    } else {
      hr = EnqueueAsyncWork(master, work.FenceValueToSignal, work.SyncPointGeneration);
    }
    if (SUCCEEDED(hr)) {
      if (Device3 != nullptr) {
#if !GPUMV_BUG_NO_PAGING_WAIT
        if (AsyncThreadFenceValue > 0) hr = Queue->Wait(AsyncThreadFence, AsyncThreadFenceValue);
#endif
      } else {
#if !GPUMV_BUG_NO_PAGING_WAIT
        hr = Queue->Wait(AsyncThreadFence, AsyncThreadFenceValue);
#endif
        AsyncThreadFenceValue++;
      }
    }
    Queue->ExecuteCommandLists(Count, CommandLists);  // always executed here, as in the library
    if (SUCCEEDED(hr)) hr = SignalFence(Queue);
    LeaveCriticalSection(&ExecutionCS);
    return hr;
  }

  ID3D12Device* Device = nullptr;
  ID3D12Device3* Device3 = nullptr;
  IDXGIAdapter3* Adapter = nullptr;
  UINT NodeIndex = 0;
  UINT32 MaxSoftwareQueueLatency = 6;
  UINT32 AsyncWorkQueueSize = 7;
  UINT64 MinEvictionGracePeriodTicks = 0;
  UINT64 MaxEvictionGracePeriodTicks = 0;

  Internal::SyncManager SlotPool;
  Internal::LRUCache LRU;
  CRITICAL_SECTION ExecutionCS;
  CRITICAL_SECTION MutexHandle;
  CRITICAL_SECTION SyncPointCS;
  CRITICAL_SECTION AsyncWorkCS;

  ID3D12Fence* AsyncThreadFence = nullptr;
  UINT64 AsyncThreadFenceValue = 0;
  UINT64 CurrentSyncPointGeneration = 0;
  GUID PrivateDataGuid;
  LIST_ENTRY QueueFencesListHead;
  UINT32 NumQueuesSeen = 0;
  LIST_ENTRY InFlightSyncPointsHead;

  HANDLE CompletionEvent = nullptr;
  HANDLE AsyncWorkEvent = nullptr;
  HANDLE AsyncWorkCompletedEvent = nullptr;
  HANDLE AsyncThreadHandle = nullptr;
  bool AsyncThreadExit = false;
  Internal::AsyncWorkload* AsyncWorkQueue = nullptr;
  UINT64 AsyncWorkHead = 0;
  UINT64 AsyncWorkTail = 0;
};

}  // namespace GPUMV_RESIDENCY_NAMESPACE
