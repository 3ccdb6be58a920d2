// gpumv D3D12 kit: COM objects that implement what a residency manager calls, each call going
// through one GpuPort (port.h) to a simulated GPU.
//
// - KitDevice: ID3D12Device up to ID3D12Device3 (the version is chosen at creation: QueryInterface
//   answers the versions up to it and E_NOINTERFACE above), with MakeResident, Evict,
//   EnqueueMakeResident, CreateFence, GetNodeCount, GetAdapterLuid and private data;
// - KitQueue: ExecuteCommandLists, Signal, Wait, GetDevice, GetDesc, private data;
// - KitFence: GetCompletedValue, SetEventOnCompletion, Signal;
// - KitHeap / KitResource: pageables with the harness's object id and size (GetDesc);
// - KitCommandList: an ID3D12GraphicsCommandList carrying the objects the harness says it
//   references (GetType, Close);
// - KitAdapter: IDXGIAdapter3 with QueryVideoMemoryInfo (local and non-local) and GetDesc*.
// Every other method of these interfaces reports an "unsupported-call" fault through the port and
// returns E_NOTIMPL (or a zero value): never silently.
//
// A CPU wait on an event that a fence will set (SetEventOnCompletion) lets the simulated GPU run
// towards that fence when no thread can run (win32.h's progress hook), so the GPU moves only
// when every CPU thread is blocked: work stays in flight as long as the program allows.
#pragma once

#include <gpumv_d3d12/win32.h>

#include <directx/d3d12.h>
#include <dxguids/dxguids.h>

#include <gpumv_d3d12/dxgi_adapter.h>
#include <gpumv_d3d12/port.h>
#include <gpumv_d3d12/stubs.generated.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpumv_d3d12 {

class KitDevice;

/** The process-wide kit: the installed port, the registry of kit objects, fence-event registrations. */
class Kit {
 public:
  static Kit& Get() {
    static Kit* kit = new Kit;  // never destroyed (like the scheduler)
    return *kit;
  }

  /** Installs the port every kit object talks to; also the Win32 layer's clock, faults and deadlock report. */
  void Install(GpuPort* port) {
    port_ = port;
    sched::SetClock([](void* p) { return ((GpuPort*)p)->Ticks(); }, port, port->TicksPerSecond());
    sched::SetFaultHandler([](void* p, const char* kind, const std::string& m) { ((GpuPort*)p)->Fault(kind, m); }, port);
    sched::SetDeadlockHandler([](void* p, const std::string& m) { ((GpuPort*)p)->Fatal("deadlock", m); }, port);
    sched::SetProgressHook(&Kit::ProgressHook, this);
    sched::SetCloseHook([](void* k, sched::Object* o) { ((Kit*)k)->ForgetEventLocked(o); }, this);
  }
  GpuPort& Port() {
    if (port_ == nullptr) {
      fprintf(stderr, "gpumv-d3d12: a kit object was used before Kit::Get().Install(port)\n");
      _exit(70);
    }
    return *port_;
  }

  // ---- factories for a driver (the harness chooses ids and sizes) ------------------------------
  inline ID3D12Device* CreateDevice(int version, LUID luid = LUID{0x4750, 0x4d56});
  inline IDXGIAdapter3* CreateAdapter(LUID luid = LUID{0x4750, 0x4d56});
  inline ID3D12CommandQueue* CreateQueue(ID3D12Device* device, uint32_t id, D3D12_COMMAND_LIST_TYPE type = D3D12_COMMAND_LIST_TYPE_DIRECT);
  inline ID3D12Heap* CreateHeap(ID3D12Device* device, uint32_t id, uint64_t sizeBytes);
  inline ID3D12Resource* CreateCommittedResource(ID3D12Device* device, uint32_t id, uint64_t sizeBytes);
  inline ID3D12GraphicsCommandList* CreateCommandList(ID3D12Device* device, uint32_t id, std::vector<uint32_t> references);
  /** Replaces the references of a kit command list (a list recorded again). */
  inline bool SetReferences(ID3D12CommandList* list, std::vector<uint32_t> references);

  // ---- used by the kit objects ---------------------------------------------------------------
  enum class Kind { Device, Queue, Fence, Heap, Resource, List, Adapter };
  struct Entry {
    Kind kind;
    uint32_t id;
  };
  void Register(const void* object, Kind kind, uint32_t id) { registry_[object] = Entry{kind, id}; }
  void Forget(const void* object) { registry_.erase(object); }
  const Entry* Find(const void* object, Kind kind) const {
    auto it = registry_.find(object);
    return it != registry_.end() && it->second.kind == kind ? &it->second : nullptr;
  }
  /** The harness ids of pageables; false (and a fault) when one is not a kit heap or resource. */
  bool PageableIds(const char* call, UINT count, ID3D12Pageable* const* objects, std::vector<uint32_t>& out) {
    out.clear();
    if (count > 0 && objects == nullptr) {
      Port().Fault("invalid-argument", std::string(call) + " with a null object array");
      return false;
    }
    for (UINT i = 0; i < count; i++) {
      const Entry* e = registry_.count(objects[i]) ? &registry_[objects[i]] : nullptr;
      if (e == nullptr || (e->kind != Kind::Heap && e->kind != Kind::Resource)) {
        Port().Fault("unknown-pageable", std::string(call) + ": object " + std::to_string(i) + " of " + std::to_string(count) +
                                             (objects[i] == nullptr ? " is null" : " is not a live kit heap or resource"));
        return false;
      }
      out.push_back(e->id);
    }
    return true;
  }
  void Unsupported(const char* method) { Port().Fault("unsupported-call", std::string(method) + " is not implemented by the kit"); }

  /** Remembers that `event` is to be set when `fence` reaches `value`. */
  void OnCompletion(uint32_t fence, uint64_t value, HANDLE event) { waits_.push_back(FenceWait{fence, value, (sched::Object*)event}); }
  /** Drops the registrations of a fence that is gone. */
  void ForgetFence(uint32_t fence) {
    for (size_t i = waits_.size(); i-- > 0;) if (waits_[i].fence == fence) waits_.erase(waits_.begin() + (long)i);
  }
  /** Sets the events of every registration whose fence has reached its value (after the harness moved the GPU). */
  void PollFences() {
    sched::State& s = sched::S();
    std::unique_lock<std::mutex> lock(s.m);
    PollLocked();
  }
  /** Live kit objects of a kind (a leak check after teardown). */
  size_t LiveCount(Kind kind) const {
    size_t n = 0;
    for (auto& kv : registry_) n += kv.second.kind == kind ? 1 : 0;
    return n;
  }

 private:
  struct FenceWait {
    uint32_t fence;
    uint64_t value;
    sched::Object* event;
  };

  // Scheduler lock held: a closed event's registrations go with it (its address may be reused).
  void ForgetEventLocked(sched::Object* event) {
    for (size_t i = waits_.size(); i-- > 0;) if (waits_[i].event == event) waits_.erase(waits_.begin() + (long)i);
  }

  // Scheduler lock held: sets the events of completed registrations; true if any was set.
  bool PollLocked() {
    bool any = false;
    sched::State& s = sched::S();
    for (size_t i = 0; i < waits_.size();) {
      if (Port().FenceCompleted(waits_[i].fence) >= waits_[i].value) {
        if (sched::IsLive(s, waits_[i].event)) {
          sched::SignalLocked(waits_[i].event);
          any = true;
        }
        waits_.erase(waits_.begin() + (long)i);
      } else {
        i++;
      }
    }
    return any;
  }

  // No thread can run: let the GPU run towards the fences blocked threads wait for, earliest first.
  static bool ProgressHook(void* context) {
    Kit* kit = (Kit*)context;
    if (kit->port_ == nullptr) return false;
    if (kit->PollLocked()) return true;
    for (sched::Object* event : sched::BlockedEventsLocked()) {
      for (size_t i = 0; i < kit->waits_.size(); i++) {
        if (kit->waits_[i].event != event) continue;
        if (kit->port_->AdvanceUntil(kit->waits_[i].fence, kit->waits_[i].value) && kit->PollLocked()) return true;
      }
    }
    return false;
  }

  GpuPort* port_ = nullptr;
  std::unordered_map<const void*, Entry> registry_;
  std::vector<FenceWait> waits_;
};

namespace detail {

/** ID3D12Object / IDXGIObject private data. */
class PrivateData {
 public:
  HRESULT Get(REFGUID guid, UINT* size, void* data) {
    if (size == nullptr) return E_POINTER;
    auto it = items_.find(Key(guid));
    if (it == items_.end()) {
      *size = 0;
      return DXGI_ERROR_NOT_FOUND;
    }
    UINT have = (UINT)it->second.size();
    if (data == nullptr) {
      *size = have;
      return S_OK;
    }
    if (*size < have) {
      *size = have;
      return DXGI_ERROR_MORE_DATA;
    }
    if (have > 0) memcpy(data, it->second.data(), have);
    *size = have;
    return S_OK;
  }
  HRESULT Set(REFGUID guid, UINT size, const void* data) {
    if (size == 0 || data == nullptr) {
      items_.erase(Key(guid));
      return S_OK;
    }
    items_[Key(guid)].assign((const uint8_t*)data, (const uint8_t*)data + size);
    return S_OK;
  }

 private:
  static std::string Key(REFGUID guid) { return std::string((const char*)&guid, sizeof(GUID)); }
  std::map<std::string, std::vector<uint8_t>> items_;
};

inline bool Same(REFIID a, REFIID b) { return memcmp(&a, &b, sizeof(GUID)) == 0; }

/** True when `riid` is one of the interfaces' IIDs. */
template <class... Interfaces>
bool IsOneOf(REFIID riid) {
  return (Same(riid, __uuidof(Interfaces)) || ...);
}

/** QueryInterface's answer: the object as `Target` (counted) when `yes`, else E_NOINTERFACE. */
template <class Target, class Self>
HRESULT Answer(Self* self, bool yes, void** ppv) {
  if (ppv == nullptr) return E_POINTER;
  *ppv = nullptr;
  if (!yes) return E_NOINTERFACE;
  self->AddRef();
  *ppv = static_cast<Target*>(self);
  return S_OK;
}

/** Reference counting, private data and unsupported-call reporting for the D3D12 objects. */
template <class Stub>
class KitObject : public Stub {
 public:
  ULONG STDMETHODCALLTYPE AddRef() override { return ++refs_; }
  ULONG STDMETHODCALLTYPE Release() override {
    ULONG left = --refs_;
    if (left == 0) {
      Kit::Get().Forget(this);
      OnFinalRelease();
      delete this;
    }
    return left;
  }
  HRESULT STDMETHODCALLTYPE GetPrivateData(REFGUID guid, UINT* size, void* data) override { return data_.Get(guid, size, data); }
  HRESULT STDMETHODCALLTYPE SetPrivateData(REFGUID guid, UINT size, const void* data) override { return data_.Set(guid, size, data); }
  HRESULT STDMETHODCALLTYPE SetName(LPCWSTR) override { return S_OK; }

 protected:
  virtual ~KitObject() = default;
  virtual void OnFinalRelease() {}
  void GpumvUnsupported(const char* method) override { Kit::Get().Unsupported(method); }
  ULONG refs_ = 1;
  PrivateData data_;
};

/** A device child: GetDevice answers through the device's QueryInterface. */
template <class Stub>
class KitChild : public KitObject<Stub> {
 public:
  explicit KitChild(ID3D12Device* device) : device_(device) {}
  HRESULT STDMETHODCALLTYPE GetDevice(REFIID riid, void** ppv) override {
    if (ppv == nullptr) return E_POINTER;
    return device_->QueryInterface(riid, ppv);
  }

 protected:
  ID3D12Device* device_;  // not counted: the driver keeps the device alive while its children live
};

}  // namespace detail

class KitDevice final : public detail::KitObject<Unsupported_ID3D12Device3> {
 public:
  KitDevice(int version, LUID luid) : version_(version), luid_(luid) {}
  int Version() const { return version_; }

  HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
    bool yes = detail::IsOneOf<IUnknown, ID3D12Object, ID3D12Device>(riid) || (version_ >= 1 && detail::IsOneOf<ID3D12Device1>(riid)) ||
               (version_ >= 2 && detail::IsOneOf<ID3D12Device2>(riid)) || (version_ >= 3 && detail::IsOneOf<ID3D12Device3>(riid));
    return detail::Answer<ID3D12Device3>(this, yes, ppv);
  }
  UINT STDMETHODCALLTYPE GetNodeCount() override { return 1; }
  LUID STDMETHODCALLTYPE GetAdapterLuid() override { return luid_; }

  HRESULT STDMETHODCALLTYPE MakeResident(UINT count, ID3D12Pageable* const* objects) override {
    std::vector<uint32_t> ids;
    if (!Kit::Get().PageableIds("ID3D12Device::MakeResident", count, objects, ids)) return E_INVALIDARG;
    return Kit::Get().Port().MakeResident(ids.data(), (uint32_t)ids.size());
  }
  HRESULT STDMETHODCALLTYPE Evict(UINT count, ID3D12Pageable* const* objects) override {
    std::vector<uint32_t> ids;
    if (!Kit::Get().PageableIds("ID3D12Device::Evict", count, objects, ids)) return E_INVALIDARG;
    return Kit::Get().Port().Evict(ids.data(), (uint32_t)ids.size());
  }
  HRESULT STDMETHODCALLTYPE EnqueueMakeResident(D3D12_RESIDENCY_FLAGS, UINT count, ID3D12Pageable* const* objects, ID3D12Fence* fence,
                                                UINT64 value) override {
    if (version_ < 3) {
      Kit::Get().Port().Fault("unsupported-call", "ID3D12Device3::EnqueueMakeResident on a device created as version " + std::to_string(version_));
      return E_NOTIMPL;
    }
    const Kit::Entry* f = Kit::Get().Find(fence, Kit::Kind::Fence);
    if (f == nullptr) {
      Kit::Get().Port().Fault("unknown-fence", "ID3D12Device3::EnqueueMakeResident with a fence that is not a live kit fence");
      return E_INVALIDARG;
    }
    std::vector<uint32_t> ids;
    if (!Kit::Get().PageableIds("ID3D12Device3::EnqueueMakeResident", count, objects, ids)) return E_INVALIDARG;
    return Kit::Get().Port().EnqueueMakeResident(ids.data(), (uint32_t)ids.size(), f->id, value);
  }
  inline HRESULT STDMETHODCALLTYPE CreateFence(UINT64 initial, D3D12_FENCE_FLAGS flags, REFIID riid, void** ppFence) override;

 private:
  int version_;
  LUID luid_;
};

class KitFence final : public detail::KitChild<Unsupported_ID3D12Fence> {
 public:
  KitFence(ID3D12Device* device, uint32_t id) : KitChild(device), id_(id) {}
  uint32_t Id() const { return id_; }
  HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
    return detail::Answer<ID3D12Fence>(this, detail::IsOneOf<IUnknown, ID3D12Object, ID3D12DeviceChild, ID3D12Pageable, ID3D12Fence>(riid), ppv);
  }
  UINT64 STDMETHODCALLTYPE GetCompletedValue() override { return Kit::Get().Port().FenceCompleted(id_); }
  HRESULT STDMETHODCALLTYPE SetEventOnCompletion(UINT64 value, HANDLE event) override {
    Kit& kit = Kit::Get();
    if (event == nullptr) {
      // Blocks until the fence reaches the value (D3D12's null-event form).
      if (kit.Port().FenceCompleted(id_) >= value) return S_OK;
      HANDLE own = CreateEventW(nullptr, FALSE, FALSE, nullptr);
      kit.OnCompletion(id_, value, own);
      DWORD r = WaitForSingleObject(own, INFINITE);
      CloseHandle(own);
      return r == WAIT_OBJECT_0 ? S_OK : E_FAIL;
    }
    sched::State& s = sched::S();
    {
      std::unique_lock<std::mutex> lock(s.m);
      if (!sched::IsLive(s, (sched::Object*)event) || ((sched::Object*)event)->kind != sched::Object::Event) {
        lock.unlock();
        kit.Port().Fault("invalid-handle", "ID3D12Fence::SetEventOnCompletion with a handle that is not an open kit event");
        return E_INVALIDARG;
      }
    }
    if (kit.Port().FenceCompleted(id_) >= value) return SetEvent(event) ? S_OK : E_FAIL;
    kit.OnCompletion(id_, value, event);
    return S_OK;
  }
  HRESULT STDMETHODCALLTYPE Signal(UINT64 value) override {
    HRESULT hr = Kit::Get().Port().CpuSignal(id_, value);
    Kit::Get().PollFences();
    return hr;
  }

 private:
  void OnFinalRelease() override {
    Kit::Get().ForgetFence(id_);
    Kit::Get().Port().DestroyFence(id_);
  }
  uint32_t id_;
};

HRESULT STDMETHODCALLTYPE KitDevice::CreateFence(UINT64 initial, D3D12_FENCE_FLAGS, REFIID riid, void** ppFence) {
  if (ppFence == nullptr) return E_POINTER;
  *ppFence = nullptr;
  uint32_t id = Kit::Get().Port().CreateFence(initial);
  KitFence* fence = new KitFence(this, id);
  Kit::Get().Register(static_cast<ID3D12Fence*>(fence), Kit::Kind::Fence, id);
  HRESULT hr = fence->QueryInterface(riid, ppFence);
  fence->Release();  // the caller's reference is the one QueryInterface added
  return hr;
}

class KitQueue final : public detail::KitChild<Unsupported_ID3D12CommandQueue> {
 public:
  KitQueue(ID3D12Device* device, uint32_t id, D3D12_COMMAND_LIST_TYPE type) : KitChild(device), id_(id) {
    desc_.Type = type;
    desc_.Priority = 0;
    desc_.Flags = D3D12_COMMAND_QUEUE_FLAG_NONE;
    desc_.NodeMask = 0;
  }
  HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
    return detail::Answer<ID3D12CommandQueue>(this, detail::IsOneOf<IUnknown, ID3D12Object, ID3D12DeviceChild, ID3D12Pageable, ID3D12CommandQueue>(riid), ppv);
  }
  void STDMETHODCALLTYPE ExecuteCommandLists(UINT count, ID3D12CommandList* const* lists) override;
  HRESULT STDMETHODCALLTYPE Signal(ID3D12Fence* fence, UINT64 value) override {
    const Kit::Entry* f = LiveFence(fence, "ID3D12CommandQueue::Signal");
    return f == nullptr ? E_INVALIDARG : Kit::Get().Port().Signal(id_, f->id, value);
  }
  HRESULT STDMETHODCALLTYPE Wait(ID3D12Fence* fence, UINT64 value) override {
    const Kit::Entry* f = LiveFence(fence, "ID3D12CommandQueue::Wait");
    return f == nullptr ? E_INVALIDARG : Kit::Get().Port().Wait(id_, f->id, value);
  }
  D3D12_COMMAND_QUEUE_DESC STDMETHODCALLTYPE GetDesc() override { return desc_; }

 private:
  /** The registry entry of a live kit fence, or null after an "unknown-fence" fault. */
  static const Kit::Entry* LiveFence(ID3D12Fence* fence, const char* call) {
    const Kit::Entry* f = Kit::Get().Find(fence, Kit::Kind::Fence);
    if (f == nullptr) Kit::Get().Port().Fault("unknown-fence", std::string(call) + " with a fence that is not a live kit fence");
    return f;
  }
  uint32_t id_;
  D3D12_COMMAND_QUEUE_DESC desc_;
};

/** A pageable with the harness's object id (in the registry) and its size. */
template <class Stub, class Interface>
class KitPageable : public detail::KitChild<Stub> {
 public:
  KitPageable(ID3D12Device* device, uint64_t size) : detail::KitChild<Stub>(device), size_(size) {}
  HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
    return detail::Answer<Interface>(this, detail::IsOneOf<IUnknown, ID3D12Object, ID3D12DeviceChild, ID3D12Pageable, Interface>(riid), ppv);
  }

 protected:
  uint64_t size_;
};

class KitHeap final : public KitPageable<Unsupported_ID3D12Heap, ID3D12Heap> {
 public:
  using KitPageable::KitPageable;
  D3D12_HEAP_DESC STDMETHODCALLTYPE GetDesc() override {
    D3D12_HEAP_DESC desc{};
    desc.SizeInBytes = size_;
    desc.Properties.Type = D3D12_HEAP_TYPE_DEFAULT;
    desc.Alignment = D3D12_DEFAULT_RESOURCE_PLACEMENT_ALIGNMENT;
    return desc;
  }
};

class KitResource final : public KitPageable<Unsupported_ID3D12Resource, ID3D12Resource> {
 public:
  using KitPageable::KitPageable;
  D3D12_RESOURCE_DESC STDMETHODCALLTYPE GetDesc() override {
    D3D12_RESOURCE_DESC desc{};
    desc.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
    desc.Width = size_;
    desc.Height = 1;
    desc.DepthOrArraySize = 1;
    desc.MipLevels = 1;
    desc.Format = DXGI_FORMAT_UNKNOWN;
    desc.SampleDesc.Count = 1;
    desc.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
    return desc;
  }
};

class KitCommandList final : public detail::KitChild<Unsupported_ID3D12GraphicsCommandList> {
 public:
  KitCommandList(ID3D12Device* device, uint32_t id, std::vector<uint32_t> references) : KitChild(device), id_(id), refs_(std::move(references)) {}
  uint32_t Id() const { return id_; }
  const std::vector<uint32_t>& References() const { return refs_; }
  void SetReferences(std::vector<uint32_t> references) { refs_ = std::move(references); }
  HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
    return detail::Answer<ID3D12GraphicsCommandList>(this, detail::IsOneOf<IUnknown, ID3D12Object, ID3D12DeviceChild, ID3D12CommandList, ID3D12GraphicsCommandList>(riid), ppv);
  }
  D3D12_COMMAND_LIST_TYPE STDMETHODCALLTYPE GetType() override { return D3D12_COMMAND_LIST_TYPE_DIRECT; }
  /** The references were chosen by the harness; recording is not simulated, so Close only succeeds. */
  HRESULT STDMETHODCALLTYPE Close() override { return S_OK; }

 private:
  uint32_t id_;
  std::vector<uint32_t> refs_;
};

void STDMETHODCALLTYPE KitQueue::ExecuteCommandLists(UINT count, ID3D12CommandList* const* lists) {
  Kit& kit = Kit::Get();
  std::vector<ListRefs> refs;
  for (UINT i = 0; i < count; i++) {
    const Kit::Entry* e = kit.Find(lists[i], Kit::Kind::List);
    if (e == nullptr) {
      kit.Port().Fault("unknown-command-list", "ID3D12CommandQueue::ExecuteCommandLists: list " + std::to_string(i) + " is not a live kit command list");
      return;  // nothing executes: a real runtime removes the device
    }
    const KitCommandList* list = static_cast<const KitCommandList*>(static_cast<const ID3D12GraphicsCommandList*>(lists[i]));
    refs.push_back(ListRefs{list->Id(), list->References().data(), (uint32_t)list->References().size()});
  }
  kit.Port().Execute(id_, refs.data(), (uint32_t)refs.size());
}

/** IDXGIAdapter3 answering from the port: budget and usage per segment. */
class KitAdapter final : public IDXGIAdapter3 {
 public:
  explicit KitAdapter(LUID luid) : luid_(luid) {}
  HRESULT STDMETHODCALLTYPE QueryInterface(REFIID riid, void** ppv) override {
    return detail::Answer<IDXGIAdapter3>(this, detail::IsOneOf<IUnknown, IDXGIObject, IDXGIAdapter, IDXGIAdapter1, IDXGIAdapter2, IDXGIAdapter3>(riid), ppv);
  }
  ULONG STDMETHODCALLTYPE AddRef() override { return ++refs_; }
  ULONG STDMETHODCALLTYPE Release() override {
    ULONG left = --refs_;
    if (left == 0) {
      Kit::Get().Forget(static_cast<IDXGIAdapter3*>(this));
      delete this;
    }
    return left;
  }
  HRESULT STDMETHODCALLTYPE SetPrivateData(REFGUID guid, UINT size, const void* data) override { return data_.Set(guid, size, data); }
  HRESULT STDMETHODCALLTYPE SetPrivateDataInterface(REFGUID, const IUnknown*) override { return Unsupported("IDXGIObject::SetPrivateDataInterface"); }
  HRESULT STDMETHODCALLTYPE GetPrivateData(REFGUID guid, UINT* size, void* data) override { return data_.Get(guid, size, data); }
  HRESULT STDMETHODCALLTYPE GetParent(REFIID, void**) override { return Unsupported("IDXGIObject::GetParent"); }
  HRESULT STDMETHODCALLTYPE EnumOutputs(UINT, IDXGIOutput**) override { return Unsupported("IDXGIAdapter::EnumOutputs"); }
  HRESULT STDMETHODCALLTYPE GetDesc(DXGI_ADAPTER_DESC* desc) override {
    if (desc == nullptr) return E_INVALIDARG;
    DXGI_ADAPTER_DESC2 d2;
    Fill(d2);
    memcpy(desc, &d2, sizeof *desc);  // DESC is a prefix of DESC2
    return S_OK;
  }
  HRESULT STDMETHODCALLTYPE CheckInterfaceSupport(REFGUID, LARGE_INTEGER*) override { return Unsupported("IDXGIAdapter::CheckInterfaceSupport"); }
  HRESULT STDMETHODCALLTYPE GetDesc1(DXGI_ADAPTER_DESC1* desc) override {
    if (desc == nullptr) return E_INVALIDARG;
    DXGI_ADAPTER_DESC2 d2;
    Fill(d2);
    memcpy(desc, &d2, sizeof *desc);  // DESC1 is a prefix of DESC2
    return S_OK;
  }
  HRESULT STDMETHODCALLTYPE GetDesc2(DXGI_ADAPTER_DESC2* desc) override {
    if (desc == nullptr) return E_INVALIDARG;
    Fill(*desc);
    return S_OK;
  }
  HRESULT STDMETHODCALLTYPE RegisterHardwareContentProtectionTeardownStatusEvent(HANDLE, DWORD*) override {
    return Unsupported("IDXGIAdapter3::RegisterHardwareContentProtectionTeardownStatusEvent");
  }
  void STDMETHODCALLTYPE UnregisterHardwareContentProtectionTeardownStatus(DWORD) override {
    Unsupported("IDXGIAdapter3::UnregisterHardwareContentProtectionTeardownStatus");
  }
  HRESULT STDMETHODCALLTYPE QueryVideoMemoryInfo(UINT node, DXGI_MEMORY_SEGMENT_GROUP group, DXGI_QUERY_VIDEO_MEMORY_INFO* info) override {
    if (info == nullptr || node != 0 || (group != DXGI_MEMORY_SEGMENT_GROUP_LOCAL && group != DXGI_MEMORY_SEGMENT_GROUP_NON_LOCAL)) {
      Kit::Get().Port().Fault("invalid-argument", "IDXGIAdapter3::QueryVideoMemoryInfo with node " + std::to_string(node) + ", segment group " +
                                                      std::to_string((int)group) + (info == nullptr ? ", null output" : ""));
      return E_INVALIDARG;
    }
    MemoryInfo m = Kit::Get().Port().QueryVideoMemoryInfo(group == DXGI_MEMORY_SEGMENT_GROUP_LOCAL ? Segment::Local : Segment::NonLocal);
    info->Budget = m.budgetBytes;
    info->CurrentUsage = m.usageBytes;
    info->AvailableForReservation = m.budgetBytes / 2;
    info->CurrentReservation = 0;
    return S_OK;
  }
  HRESULT STDMETHODCALLTYPE SetVideoMemoryReservation(UINT, DXGI_MEMORY_SEGMENT_GROUP, UINT64) override {
    return Unsupported("IDXGIAdapter3::SetVideoMemoryReservation");
  }
  HRESULT STDMETHODCALLTYPE RegisterVideoMemoryBudgetChangeNotificationEvent(HANDLE, DWORD*) override {
    return Unsupported("IDXGIAdapter3::RegisterVideoMemoryBudgetChangeNotificationEvent");
  }
  void STDMETHODCALLTYPE UnregisterVideoMemoryBudgetChangeNotification(DWORD) override {
    Unsupported("IDXGIAdapter3::UnregisterVideoMemoryBudgetChangeNotification");
  }

 private:
  ~KitAdapter() = default;
  HRESULT Unsupported(const char* method) {
    Kit::Get().Unsupported(method);
    return E_NOTIMPL;
  }
  void Fill(DXGI_ADAPTER_DESC2& d) {
    memset(&d, 0, sizeof d);
    const char* name = "gpumv simulated GPU";
    for (size_t i = 0; name[i] != 0; i++) d.Description[i] = (WCHAR)name[i];
    d.DedicatedVideoMemory = (SIZE_T)Kit::Get().Port().QueryVideoMemoryInfo(Segment::Local).budgetBytes;
    d.AdapterLuid = luid_;
  }
  ULONG refs_ = 1;
  LUID luid_;
  detail::PrivateData data_;
};

// ---- Kit factories ----------------------------------------------------------------------------

ID3D12Device* Kit::CreateDevice(int version, LUID luid) {
  KitDevice* device = new KitDevice(version < 0 ? 0 : (version > 3 ? 3 : version), luid);
  Register(static_cast<ID3D12Device3*>(device), Kind::Device, 0);
  return device;
}
IDXGIAdapter3* Kit::CreateAdapter(LUID luid) {
  KitAdapter* adapter = new KitAdapter(luid);
  Register(static_cast<IDXGIAdapter3*>(adapter), Kind::Adapter, 0);
  return adapter;
}
ID3D12CommandQueue* Kit::CreateQueue(ID3D12Device* device, uint32_t id, D3D12_COMMAND_LIST_TYPE type) {
  KitQueue* queue = new KitQueue(device, id, type);
  Register(static_cast<ID3D12CommandQueue*>(queue), Kind::Queue, id);
  return queue;
}
ID3D12Heap* Kit::CreateHeap(ID3D12Device* device, uint32_t id, uint64_t sizeBytes) {
  KitHeap* heap = new KitHeap(device, sizeBytes);
  Register(static_cast<ID3D12Heap*>(heap), Kind::Heap, id);
  return heap;
}
ID3D12Resource* Kit::CreateCommittedResource(ID3D12Device* device, uint32_t id, uint64_t sizeBytes) {
  KitResource* resource = new KitResource(device, sizeBytes);
  Register(static_cast<ID3D12Resource*>(resource), Kind::Resource, id);
  return resource;
}
ID3D12GraphicsCommandList* Kit::CreateCommandList(ID3D12Device* device, uint32_t id, std::vector<uint32_t> references) {
  KitCommandList* list = new KitCommandList(device, id, std::move(references));
  Register(static_cast<ID3D12GraphicsCommandList*>(list), Kind::List, id);
  return list;
}
bool Kit::SetReferences(ID3D12CommandList* list, std::vector<uint32_t> references) {
  if (Find(list, Kind::List) == nullptr) return false;
  static_cast<KitCommandList*>(static_cast<ID3D12GraphicsCommandList*>(list))->SetReferences(std::move(references));
  return true;
}

}  // namespace gpumv_d3d12
