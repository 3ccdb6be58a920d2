// gpumv D3D12 kit: GpuPort, the one seam between the kit's COM objects and a simulated GPU.
//
// Every D3D12/DXGI call the kit implements becomes exactly one call on this interface, in terms
// of the harness's numbering: objects (pageables) and queues carry the ids the harness gave them,
// fences get an id from the port when a manager creates one, command lists carry their id and
// the objects the harness says they reference. Two implementations are planned:
// - ReferencePort (reference_port.h): a small in-process simulated GPU, for the kit's own tests;
// - the process-protocol adapter: each call becomes a call-back message from the driver to the
//   harness, answered by the harness's simulated GPU (src/gpu/sim-gpu.ts).
// Nothing here depends on which one is installed.
#pragma once

#include <stdint.h>
#include <string>

#include <wsl/winadapter.h>

namespace gpumv_d3d12 {

enum class Segment : uint32_t { Local = 0, NonLocal = 1 };

struct MemoryInfo {
  uint64_t budgetBytes = 0;
  uint64_t usageBytes = 0;
};

/** One command list in an ExecuteCommandLists call: its id and the objects it references. */
struct ListRefs {
  uint32_t list;
  const uint32_t* objects;
  uint32_t count;
};

struct GpuPort {
  virtual ~GpuPort() = default;

  // ---- ID3D12Device / ID3D12Device3 -----------------------------------------------------------
  /** ID3D12Device::MakeResident: the objects are resident when it returns S_OK. */
  virtual HRESULT MakeResident(const uint32_t* objects, uint32_t count) = 0;
  /** ID3D12Device3::EnqueueMakeResident: resident once `fence` reaches `value` (the GPU signals it). */
  virtual HRESULT EnqueueMakeResident(const uint32_t* objects, uint32_t count, uint32_t fence, uint64_t value) = 0;
  /** ID3D12Device::Evict. */
  virtual HRESULT Evict(const uint32_t* objects, uint32_t count) = 0;
  /** ID3D12Device::CreateFence: a new fence id whose completed value is `initialValue`. */
  virtual uint32_t CreateFence(uint64_t initialValue) = 0;
  /** The last reference to the fence was released. */
  virtual void DestroyFence(uint32_t fence) = 0;

  // ---- ID3D12CommandQueue --------------------------------------------------------------------
  virtual void Execute(uint32_t queue, const ListRefs* lists, uint32_t count) = 0;
  /** Queue-side Signal: the fence takes `value` when the queue reaches this point. */
  virtual HRESULT Signal(uint32_t queue, uint32_t fence, uint64_t value) = 0;
  /** Queue-side Wait: the queue stops here until the fence reaches `value`. */
  virtual HRESULT Wait(uint32_t queue, uint32_t fence, uint64_t value) = 0;

  // ---- ID3D12Fence ---------------------------------------------------------------------------
  virtual uint64_t FenceCompleted(uint32_t fence) = 0;
  /** ID3D12Fence::Signal from the CPU. */
  virtual HRESULT CpuSignal(uint32_t fence, uint64_t value) = 0;
  /**
   * A CPU wait: let the GPU run until the fence reaches `value`. Returns false when it cannot get
   * there now (what it waits for is not submitted yet, or is behind a CPU-signalled fence); the
   * kit then lets other threads run and asks again, and reports a deadlock when nothing can run.
   */
  virtual bool AdvanceUntil(uint32_t fence, uint64_t value) = 0;

  // ---- IDXGIAdapter3 and the clock ---------------------------------------------------------------
  virtual MemoryInfo QueryVideoMemoryInfo(Segment segment) = 0;
  virtual uint64_t Ticks() = 0;
  virtual uint64_t TicksPerSecond() = 0;

  // ---- findings from the kit itself -------------------------------------------------------------
  /** A call the kit does not implement, a misused handle, an unknown pageable: recorded, the call fails. */
  virtual void Fault(const char* kind, const std::string& message) = 0;
  /** A deadlock: ends the run. Must not return (the kit exits with status 70 if it does). */
  virtual void Fatal(const char* kind, const std::string& message) = 0;
};

}  // namespace gpumv_d3d12
