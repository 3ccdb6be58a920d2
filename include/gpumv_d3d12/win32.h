// gpumv D3D12 kit: the Win32 calls residency code makes, on pthreads, with a deterministic
// cooperative scheduler.
//
// Debian's wsl/winadapter.h gives the COM base types (IUnknown, HRESULT, GUID, LUID,
// LARGE_INTEGER, SECURITY_ATTRIBUTES) and nothing of Win32's threading. This header adds what a
// D3D12 residency manager uses: events (CreateEvent, SetEvent, ResetEvent, WaitForSingleObject,
// WaitForMultipleObjects, INFINITE, CloseHandle), critical sections, CreateThread, Interlocked*,
// QueryPerformanceCounter/Frequency, LIST_ENTRY and its list functions, CONTAINING_RECORD,
// GetLastError/SetLastError, HRESULT_FROM_WIN32, FORCEINLINE, ZeroMemory, ARRAYSIZE,
// INVALID_HANDLE_VALUE, Sleep, SwitchToThread, GetCurrentThreadId, HeapAlloc with
// HEAP_ZERO_MEMORY, AllocateLocallyUniqueId, MAXUINT32/MAXUINT64, the SDK's unsigned Interlocked
// overloads, and CreateThread for thread functions written `unsigned long WINAPI` (DWORD is
// unsigned long on Windows but 32-bit uint32_t in the WSL stubs).
//
// Scheduling: every thread that makes a kit call (the first one, and the ones CreateThread
// starts) is a real pthread, but only the thread holding the baton runs. The baton moves only
// inside kit calls: when its holder blocks (a wait that is not satisfied, a critical section
// owned by another thread, Sleep, SwitchToThread, a finished thread function), and, when a
// preemption seed is set, at any kit call the seeded generator picks. The next thread is the
// lowest-numbered runnable one after the current (round robin), or the generator's pick. So a
// run replays exactly: same program, same seed, same interleaving.
//
// Time passes only when nothing else can happen: when no thread is runnable, the scheduler first
// asks the installed progress hook (the D3D12 part of the kit: let the simulated GPU run towards
// a fence some blocked thread waits for), then ends the earliest finite-timeout wait with
// WAIT_TIMEOUT; if neither helps, it is a deadlock, reported through the deadlock handler (which
// does not return).
#pragma once

#include <wsl/winadapter.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <semaphore.h>
#include <errno.h>

#include <mutex>
#include <string>
#include <vector>

// ---- constants and small macros ---------------------------------------------------------------

#ifndef FORCEINLINE
#define FORCEINLINE inline __attribute__((always_inline))
#endif
#define INFINITE 0xFFFFFFFFu
#define WAIT_OBJECT_0 0x00000000u
#define WAIT_ABANDONED 0x00000080u
#define WAIT_TIMEOUT 0x00000102u
#define WAIT_FAILED 0xFFFFFFFFu
#define MAXIMUM_WAIT_OBJECTS 64u
#define INVALID_HANDLE_VALUE ((HANDLE)(LONG_PTR)-1)
#define ERROR_SUCCESS 0L
#define ERROR_INVALID_FUNCTION 1L
#define ERROR_INVALID_HANDLE 6L
#define ERROR_NOT_ENOUGH_MEMORY 8L
#define ERROR_OUTOFMEMORY 14L
#define ERROR_INVALID_PARAMETER 87L
#define ERROR_POSSIBLE_DEADLOCK 1131L
#define FACILITY_WIN32 7
#define HEAP_ZERO_MEMORY 0x00000008u
#define CREATE_SUSPENDED 0x00000004u
#define EVENT_ALL_ACCESS 0x1F0003u
#define SYNCHRONIZE 0x00100000u
#define EVENT_MODIFY_STATE 0x0002u
#define CREATE_EVENT_MANUAL_RESET 0x00000001u
#define CREATE_EVENT_INITIAL_SET 0x00000002u
#define MAXUINT32 ((UINT32)~((UINT32)0))
#define MAXUINT64 ((UINT64)~((UINT64)0))
#define MAXDWORD 0xffffffffu
#define ZeroMemory(dest, len) memset((dest), 0, (len))
#define CopyMemory(dest, src, len) memcpy((dest), (src), (len))
#define CONTAINING_RECORD(address, type, field) ((type*)((char*)(address) - offsetof(type, field)))

template <class T, size_t N> constexpr size_t gpumv_d3d12_arraysize(T (&)[N]) { return N; }
#ifndef ARRAYSIZE
#define ARRAYSIZE(a) (gpumv_d3d12_arraysize(a))
#endif

typedef SECURITY_ATTRIBUTES* LPSECURITY_ATTRIBUTES;
typedef DWORD* LPDWORD;
typedef DWORD(WINAPI* LPTHREAD_START_ROUTINE)(LPVOID);
typedef LONG NTSTATUS;

inline HRESULT HRESULT_FROM_WIN32(unsigned long x) {
  return (HRESULT)(x) <= 0 ? (HRESULT)(x) : (HRESULT)(((x)&0x0000FFFF) | (FACILITY_WIN32 << 16) | 0x80000000);
}

// ---- LIST_ENTRY ---------------------------------------------------------------------------------

typedef struct _LIST_ENTRY {
  struct _LIST_ENTRY* Flink;
  struct _LIST_ENTRY* Blink;
} LIST_ENTRY, *PLIST_ENTRY;

FORCEINLINE void InitializeListHead(PLIST_ENTRY head) { head->Flink = head->Blink = head; }
FORCEINLINE BOOLEAN IsListEmpty(const LIST_ENTRY* head) { return head->Flink == head; }
FORCEINLINE BOOLEAN RemoveEntryList(PLIST_ENTRY entry) {
  PLIST_ENTRY next = entry->Flink;
  PLIST_ENTRY prev = entry->Blink;
  prev->Flink = next;
  next->Blink = prev;
  return (BOOLEAN)(next == prev);
}
FORCEINLINE PLIST_ENTRY RemoveHeadList(PLIST_ENTRY head) {
  PLIST_ENTRY entry = head->Flink;
  RemoveEntryList(entry);
  return entry;
}
FORCEINLINE PLIST_ENTRY RemoveTailList(PLIST_ENTRY head) {
  PLIST_ENTRY entry = head->Blink;
  RemoveEntryList(entry);
  return entry;
}
FORCEINLINE void InsertHeadList(PLIST_ENTRY head, PLIST_ENTRY entry) {
  PLIST_ENTRY first = head->Flink;
  entry->Flink = first;
  entry->Blink = head;
  first->Blink = entry;
  head->Flink = entry;
}
FORCEINLINE void InsertTailList(PLIST_ENTRY head, PLIST_ENTRY entry) {
  PLIST_ENTRY last = head->Blink;
  entry->Flink = head;
  entry->Blink = last;
  last->Flink = entry;
  head->Blink = entry;
}

// ---- Interlocked (sequential under the baton; atomic anyway for threads outside the kit) -------

FORCEINLINE LONG InterlockedIncrement(LONG volatile* p) { return __atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG InterlockedDecrement(LONG volatile* p) { return __atomic_sub_fetch(p, 1, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG InterlockedExchange(LONG volatile* p, LONG v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG InterlockedExchangeAdd(LONG volatile* p, LONG v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG InterlockedAdd(LONG volatile* p, LONG v) { return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG InterlockedCompareExchange(LONG volatile* p, LONG exchange, LONG comparand) {
  __atomic_compare_exchange_n(p, &comparand, exchange, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return comparand;
}
FORCEINLINE LONG64 InterlockedIncrement64(LONG64 volatile* p) { return __atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG64 InterlockedDecrement64(LONG64 volatile* p) { return __atomic_sub_fetch(p, 1, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG64 InterlockedExchange64(LONG64 volatile* p, LONG64 v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG64 InterlockedExchangeAdd64(LONG64 volatile* p, LONG64 v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG64 InterlockedAdd64(LONG64 volatile* p, LONG64 v) { return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE LONG64 InterlockedCompareExchange64(LONG64 volatile* p, LONG64 exchange, LONG64 comparand) {
  __atomic_compare_exchange_n(p, &comparand, exchange, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return comparand;
}
// The SDK's C++ overloads for unsigned operands (a UINT32 counter, for instance).
FORCEINLINE unsigned InterlockedIncrement(unsigned volatile* p) { return __atomic_add_fetch(p, 1u, __ATOMIC_SEQ_CST); }
FORCEINLINE unsigned InterlockedDecrement(unsigned volatile* p) { return __atomic_sub_fetch(p, 1u, __ATOMIC_SEQ_CST); }
FORCEINLINE unsigned InterlockedExchange(unsigned volatile* p, unsigned v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE unsigned InterlockedExchangeAdd(unsigned volatile* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE unsigned InterlockedCompareExchange(unsigned volatile* p, unsigned exchange, unsigned comparand) {
  __atomic_compare_exchange_n(p, &comparand, exchange, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return comparand;
}
FORCEINLINE UINT64 InterlockedIncrement(UINT64 volatile* p) { return __atomic_add_fetch(p, 1u, __ATOMIC_SEQ_CST); }
FORCEINLINE UINT64 InterlockedDecrement(UINT64 volatile* p) { return __atomic_sub_fetch(p, 1u, __ATOMIC_SEQ_CST); }
FORCEINLINE PVOID InterlockedExchangePointer(PVOID volatile* p, PVOID v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
FORCEINLINE PVOID InterlockedCompareExchangePointer(PVOID volatile* p, PVOID exchange, PVOID comparand) {
  __atomic_compare_exchange_n(p, &comparand, exchange, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return comparand;
}

// ---- critical sections --------------------------------------------------------------------------

typedef struct _RTL_CRITICAL_SECTION {
  void* OwningThread;   // the kit thread that owns it, or null
  LONG RecursionCount;
  LONG Magic;           // GPUMV_CS_MAGIC once initialised, 0 after DeleteCriticalSection
  LONG Waiters;
  LONG Reserved;
} CRITICAL_SECTION, *LPCRITICAL_SECTION, *PCRITICAL_SECTION;
#define GPUMV_CS_MAGIC 0x43534B54L

// ---- the scheduler --------------------------------------------------------------------------------

namespace gpumv_d3d12 {
namespace sched {

struct Thread;

/** A kernel object behind a HANDLE: an event or a thread. */
struct Object {
  enum Kind { Event, ThreadObject } kind;
  bool signalled = false;
  bool manualReset = false;
  Thread* thread = nullptr;  // ThreadObject: its thread
  uint32_t serial = 0;       // creation order, for messages
};

struct Thread {
  uint32_t id = 0;
  enum State { Runnable, Blocked, Finished } state = Runnable;
  // Posted once each time the thread is given the baton; the thread waits on nothing else. A
  // handoff is one wake of the next thread and one wait of this one, with the scheduler lock
  // released in between (a condition variable would wake the next thread into a lock still held).
  sem_t baton;
  Thread() { sem_init(&baton, 0, 0); }
  ~Thread() { sem_destroy(&baton); }
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;
  // What a blocked thread waits for: handles (any or all) or a critical section.
  std::vector<Object*> waitOn;
  bool waitAll = false;
  bool finiteTimeout = false;
  LPCRITICAL_SECTION wantCs = nullptr;
  uint64_t blockedSeq = 0;
  DWORD waitResult = WAIT_FAILED;
  Object* handle = nullptr;  // ThreadObject of a CreateThread thread
  LPTHREAD_START_ROUTINE start = nullptr;
  unsigned long (*startLong)(LPVOID) = nullptr;  // a thread function written with `unsigned long` (Windows' DWORD)
  LPVOID arg = nullptr;
  bool suspended = false;
  DWORD exitCode = 0;
};

/** Called under the scheduler lock when no thread is runnable; returns true if it signalled anything. */
typedef bool (*ProgressHook)(void* context);
/** Reports a deadlock; must not return (the scheduler exits with status 70 if it does). */
typedef void (*DeadlockHandler)(void* context, const std::string& message);
/** Reports a misuse of the Win32 layer (a bad handle, a foreign thread); the call then fails as Win32 would. */
typedef void (*FaultHandler)(void* context, const char* kind, const std::string& message);
typedef uint64_t (*ClockSource)(void* context);
/** Called under the scheduler lock when a handle is closed (the kit drops fence registrations of that event). */
typedef void (*CloseHook)(void* context, Object* object);

struct State {
  std::mutex m;
  Thread* current = nullptr;
  // The threads that have not finished, in creation order (a finished thread leaves the list; its
  // record lives on while its handle is open, for GetExitCodeThread).
  std::vector<Thread*> threads;
  uint32_t nextThreadId = 0;
  std::vector<Thread*> scratch;  // SatisfyPass's order, kept to spare an allocation per call
  std::vector<Object*> live;  // handles not yet closed
  uint64_t seq = 0;
  uint32_t objectSerial = 0;
  uint64_t rng = 0;            // xorshift state; 0: no preemption
  uint32_t preemptPermille = 0;
  ProgressHook progress = nullptr;
  void* progressContext = nullptr;
  DeadlockHandler deadlock = nullptr;
  void* deadlockContext = nullptr;
  FaultHandler fault = nullptr;
  void* faultContext = nullptr;
  ClockSource clock = nullptr;
  void* clockContext = nullptr;
  CloseHook onClose = nullptr;
  void* onCloseContext = nullptr;
  uint64_t frequency = 10000000;
  uint64_t switches = 0;
};

// Never destroyed: threads still blocked at process exit keep waiting for a baton that never comes.
inline State& S() {
  static State* s = new State;
  return *s;
}
inline thread_local Thread* self = nullptr;
inline thread_local DWORD lastError = 0;

inline void Fault(const char* kind, const std::string& message) {
  State& s = S();
  if (s.fault != nullptr) s.fault(s.faultContext, kind, message);
  else fprintf(stderr, "gpumv-d3d12 fault %s: %s\n", kind, message.c_str());
}

/** The calling thread's record; the first thread to call the kit becomes thread 0 and holds the baton. */
inline Thread* Me(State& s) {
  if (self != nullptr) return self;
  if (s.current == nullptr) {
    Thread* t = new Thread;
    t->id = s.nextThreadId++;
    s.threads.push_back(t);
    s.current = t;
    self = t;
    return t;
  }
  // A thread not started by CreateThread while another holds the baton: no determinism possible.
  fprintf(stderr, "gpumv-d3d12: a kit call from a thread not created through CreateThread\n");
  fflush(stderr);
  _exit(70);
}

inline bool IsLive(State& s, Object* o) {
  for (Object* x : s.live) if (x == o) return true;
  return false;
}

inline uint64_t NextRandom(State& s) {
  uint64_t x = s.rng;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  s.rng = x;
  return x;
}

/** Tries to satisfy a blocked thread's wait; consumes auto-reset events on success. */
inline bool TrySatisfy(Thread* t) {
  if (t->wantCs != nullptr) {
    LPCRITICAL_SECTION cs = t->wantCs;
    if (cs->OwningThread != nullptr && cs->OwningThread != t) return false;
    cs->OwningThread = t;
    cs->RecursionCount++;
    cs->Waiters--;
    t->wantCs = nullptr;
    return true;
  }
  if (t->waitAll) {
    for (Object* o : t->waitOn) if (!o->signalled) return false;
    for (Object* o : t->waitOn) if (o->kind == Object::Event && !o->manualReset) o->signalled = false;
    t->waitResult = WAIT_OBJECT_0;
    return true;
  }
  for (size_t i = 0; i < t->waitOn.size(); i++) {
    Object* o = t->waitOn[i];
    if (!o->signalled) continue;
    if (o->kind == Object::Event && !o->manualReset) o->signalled = false;
    t->waitResult = WAIT_OBJECT_0 + (DWORD)i;
    return true;
  }
  return false;
}

/** Wakes every blocked thread whose wait is satisfiable, earliest-blocked first (waking consumes nothing another wake could need). */
inline void SatisfyPass(State& s) {
  std::vector<Thread*>& order = s.scratch;
  order.clear();
  for (Thread* t : s.threads) if (t->state == Thread::Blocked) order.push_back(t);
  if (order.empty()) return;
  for (size_t i = 1; i < order.size(); i++)
    for (size_t j = i; j > 0 && order[j]->blockedSeq < order[j - 1]->blockedSeq; j--) std::swap(order[j], order[j - 1]);
  for (Thread* t : order) {
    if (!TrySatisfy(t)) continue;
    t->state = Thread::Runnable;
    t->waitOn.clear();
  }
}

inline std::string DescribeWaits(State& s) {
  std::string out;
  for (Thread* t : s.threads) {
    if (t->state != Thread::Blocked) continue;
    out += "\n    thread " + std::to_string(t->id) + " waits for ";
    if (t->wantCs != nullptr) {
      Thread* owner = (Thread*)t->wantCs->OwningThread;
      out += "a critical section owned by thread " + (owner ? std::to_string(owner->id) : std::string("?"));
      continue;
    }
    out += t->waitAll ? "all of" : "any of";
    for (Object* o : t->waitOn) {
      out += o->kind == Object::Event ? " event#" : " thread#";
      out += std::to_string(o->kind == Object::Event ? o->serial : o->thread->id);
    }
  }
  return out;
}

/** Blocks until the baton is posted to `t`. */
inline void WaitForBaton(Thread* t) {
  while (sem_wait(&t->baton) != 0) {
    if (errno != EINTR) {
      fprintf(stderr, "gpumv-d3d12: sem_wait failed\n");
      fflush(stderr);
      _exit(70);
    }
  }
}

/**
 * Picks the thread to run next and hands it the baton; returns when `me` holds it again (at
 * once if `me` is picked). `yield`: prefer another runnable thread over `me`.
 */
inline void Switch(State& s, std::unique_lock<std::mutex>& lock, Thread* me, bool yield) {
  for (;;) {
    SatisfyPass(s);
    size_t runnable = 0;
    for (Thread* t : s.threads) if (t->state == Thread::Runnable && !t->suspended) runnable++;
    if (runnable == 0) {
      if (s.progress != nullptr && s.progress(s.progressContext)) continue;
      // Time passes: the earliest finite-timeout wait ends.
      Thread* timed = nullptr;
      for (Thread* t : s.threads)
        if (t->state == Thread::Blocked && t->finiteTimeout && (timed == nullptr || t->blockedSeq < timed->blockedSeq)) timed = t;
      if (timed != nullptr) {
        timed->state = Thread::Runnable;
        timed->waitResult = WAIT_TIMEOUT;
        timed->waitOn.clear();
        if (timed->wantCs != nullptr) { timed->wantCs->Waiters--; timed->wantCs = nullptr; }
        continue;
      }
      std::string message = "no thread can run:" + DescribeWaits(s);
      if (s.deadlock != nullptr) {
        lock.unlock();
        s.deadlock(s.deadlockContext, message);
      }
      fprintf(stderr, "gpumv-d3d12 deadlock: %s\n", message.c_str());
      fflush(stderr);
      _exit(70);
    }
    Thread* next = nullptr;
    bool meRunnable = me->state == Thread::Runnable && !me->suspended;
    if (meRunnable && !yield) {
      next = me;
    } else if (s.rng != 0 && yield && meRunnable) {
      // The generator's pick among the runnable threads, in creation order.
      size_t pick = (size_t)(NextRandom(s) % runnable);
      for (Thread* t : s.threads)
        if (t->state == Thread::Runnable && !t->suspended && pick-- == 0) { next = t; break; }
    } else {
      // Round robin: the first runnable thread after `me` by id, wrapping.
      Thread* first = nullptr;
      for (Thread* t : s.threads) {
        if (t->state != Thread::Runnable || t->suspended) continue;
        if (first == nullptr) first = t;
        if (t->id > me->id) { next = t; break; }
      }
      if (next == nullptr) next = first;
    }
    if (next != me) {
      s.switches++;
      s.current = next;
      if (me->state == Thread::Finished) {
        // Its pthread ends; the baton never comes back. The lock stays held until that pthread
        // has stopped touching its record (the next thread may then close its handle).
        sem_post(&next->baton);
        return;
      }
      // Only the baton's holder touches the scheduler's state, so the lock can go before the
      // wake: the next thread then finds it free.
      lock.unlock();
      sem_post(&next->baton);
      WaitForBaton(me);
      lock.lock();
    }
    return;
  }
}

/** A preemption point: with a seed set, the generator may hand the baton to another runnable thread. */
inline void Point(State& s, std::unique_lock<std::mutex>& lock, Thread* me) {
  if (s.rng == 0 || s.preemptPermille == 0) return;
  if (NextRandom(s) % 1000 >= s.preemptPermille) return;
  Switch(s, lock, me, true);
}

/** Blocks `me` on its wait (set by the caller) until it is satisfied; returns the wait result. */
inline DWORD Block(State& s, std::unique_lock<std::mutex>& lock, Thread* me) {
  me->state = Thread::Blocked;
  me->blockedSeq = ++s.seq;
  Switch(s, lock, me, false);
  return me->waitResult;
}

// ---- configuration (for the D3D12 part of the kit and for tests) --------------------------------

/** Changes the scheduler's configuration under its lock. */
template <class F>
void Configure(F change) {
  State& s = S();
  std::unique_lock<std::mutex> lock(s.m);
  change(s);
}

/** Seeds preemption: at each kit call, with probability permille/1000, the baton may move. 0: never. */
inline void SetPreemption(uint64_t seed, uint32_t permille) {
  Configure([&](State& s) {
  s.rng = seed == 0 ? 0 : (seed * 0x9E3779B97F4A7C15ull) | 1;
  s.preemptPermille = permille;
  });
}
inline void SetProgressHook(ProgressHook hook, void* context) {
  Configure([&](State& s) {
  s.progress = hook;
  s.progressContext = context;
  });
}
inline void SetDeadlockHandler(DeadlockHandler handler, void* context) {
  Configure([&](State& s) {
  s.deadlock = handler;
  s.deadlockContext = context;
  });
}
inline void SetFaultHandler(FaultHandler handler, void* context) {
  Configure([&](State& s) {
  s.fault = handler;
  s.faultContext = context;
  });
}
inline void SetClock(ClockSource clock, void* context, uint64_t frequency) {
  Configure([&](State& s) {
  s.clock = clock;
  s.clockContext = context;
  s.frequency = frequency;
  });
}
inline void SetCloseHook(CloseHook hook, void* context) {
  Configure([&](State& s) {
  s.onClose = hook;
  s.onCloseContext = context;
  });
}
/** How many times the baton moved (a replay check compares it). */
inline uint64_t Switches() {
  State& s = S();
  std::unique_lock<std::mutex> lock(s.m);
  return s.switches;
}
/** The events blocked threads wait on, earliest-blocked thread first (for the progress hook; lock held). */
inline std::vector<Object*> BlockedEventsLocked() {
  State& s = S();
  std::vector<Thread*> order;
  for (Thread* t : s.threads) if (t->state == Thread::Blocked && t->wantCs == nullptr) order.push_back(t);
  for (size_t i = 1; i < order.size(); i++)
    for (size_t j = i; j > 0 && order[j]->blockedSeq < order[j - 1]->blockedSeq; j--) std::swap(order[j], order[j - 1]);
  std::vector<Object*> out;
  for (Thread* t : order) for (Object* o : t->waitOn) if (o->kind == Object::Event) out.push_back(o);
  return out;
}
/** Signals an event while the scheduler lock is held (the progress hook uses it). */
inline void SignalLocked(Object* event) { event->signalled = true; }

inline Object* NewEvent(State& s, bool manualReset, bool initialState) {
  Object* o = new Object;
  o->kind = Object::Event;
  o->manualReset = manualReset;
  o->signalled = initialState;
  o->serial = ++s.objectSerial;
  s.live.push_back(o);
  return o;
}

/** A kit call's prologue: the scheduler locked and the calling thread known; its scheduling steps. */
struct Call {
  State& s;
  std::unique_lock<std::mutex> lock;
  Thread* me;
  Call() : s(S()), lock(s.m), me(Me(s)) {}
  void Point() { sched::Point(s, lock, me); }
  DWORD Block() { return sched::Block(s, lock, me); }
  void Yield() { Switch(s, lock, me, true); }
};

inline DWORD WINAPI ThreadTrampoline(Thread* t);

}  // namespace sched
}  // namespace gpumv_d3d12

// ---- the Win32 functions ---------------------------------------------------------------------------

inline DWORD GetLastError() { return gpumv_d3d12::sched::lastError; }
inline void SetLastError(DWORD e) { gpumv_d3d12::sched::lastError = e; }

inline HANDLE CreateEventW(LPSECURITY_ATTRIBUTES, BOOL manualReset, BOOL initialState, LPCWSTR) {
  using namespace gpumv_d3d12::sched;
  Call c;
  HANDLE h = (HANDLE)NewEvent(c.s, manualReset != 0, initialState != 0);
  c.Point();
  return h;
}
inline HANDLE CreateEventA(LPSECURITY_ATTRIBUTES sa, BOOL manualReset, BOOL initialState, LPCSTR) {
  return CreateEventW(sa, manualReset, initialState, nullptr);
}
inline HANDLE CreateEventExW(LPSECURITY_ATTRIBUTES sa, LPCWSTR, DWORD flags, DWORD) {
  return CreateEventW(sa, (flags & CREATE_EVENT_MANUAL_RESET) != 0, (flags & CREATE_EVENT_INITIAL_SET) != 0, nullptr);
}
inline HANDLE CreateEventExA(LPSECURITY_ATTRIBUTES sa, LPCSTR, DWORD flags, DWORD access) {
  return CreateEventExW(sa, nullptr, flags, access);
}
#define CreateEvent CreateEventW
#define CreateEventEx CreateEventExW

namespace gpumv_d3d12 {
namespace sched {
inline Object* Checked(State& s, HANDLE h, const char* call) {
  Object* o = (Object*)h;
  if (h == nullptr || h == INVALID_HANDLE_VALUE || !IsLive(s, o)) {
    // No pointer values in messages: a report must read the same in every run.
    const char* which = h == nullptr ? "a null handle" : h == INVALID_HANDLE_VALUE ? "INVALID_HANDLE_VALUE" : "a handle that is not an open kit handle";
    Fault("invalid-handle", std::string(call) + " on " + which);
    lastError = ERROR_INVALID_HANDLE;
    return nullptr;
  }
  return o;
}
}  // namespace sched
}  // namespace gpumv_d3d12

inline BOOL SetEvent(HANDLE h) {
  using namespace gpumv_d3d12::sched;
  Call c;
  Object* o = Checked(c.s, h, "SetEvent");
  if (o == nullptr || o->kind != Object::Event) return FALSE;
  o->signalled = true;
  c.Point();
  return TRUE;
}

inline BOOL ResetEvent(HANDLE h) {
  using namespace gpumv_d3d12::sched;
  Call c;
  Object* o = Checked(c.s, h, "ResetEvent");
  if (o == nullptr || o->kind != Object::Event) return FALSE;
  o->signalled = false;
  c.Point();
  return TRUE;
}

inline DWORD WaitForMultipleObjects(DWORD count, const HANDLE* handles, BOOL waitAll, DWORD milliseconds) {
  using namespace gpumv_d3d12::sched;
  Call c;
  if (count == 0 || count > MAXIMUM_WAIT_OBJECTS || handles == nullptr) {
    Fault("invalid-argument", "WaitForMultipleObjects with " + std::to_string(count) + " handles");
    lastError = ERROR_INVALID_PARAMETER;
    return WAIT_FAILED;
  }
  c.me->waitOn.clear();
  for (DWORD i = 0; i < count; i++) {
    Object* o = Checked(c.s, handles[i], "WaitForMultipleObjects");
    if (o == nullptr) { c.me->waitOn.clear(); return WAIT_FAILED; }
    c.me->waitOn.push_back(o);
  }
  c.me->waitAll = waitAll != 0;
  c.me->finiteTimeout = milliseconds != INFINITE;
  c.Point();
  if (TrySatisfy(c.me)) { c.me->waitOn.clear(); return c.me->waitResult; }
  if (milliseconds == 0) { c.me->waitOn.clear(); return WAIT_TIMEOUT; }
  return c.Block();
}

inline DWORD WaitForSingleObject(HANDLE h, DWORD milliseconds) { return WaitForMultipleObjects(1, &h, FALSE, milliseconds); }

inline BOOL CloseHandle(HANDLE h) {
  using namespace gpumv_d3d12::sched;
  Call c;
  Object* o = Checked(c.s, h, "CloseHandle");
  if (o == nullptr) return FALSE;
  for (Thread* t : c.s.threads)
    for (Object* w : t->waitOn)
      if (w == o) {
        Fault("invalid-handle", "CloseHandle of a handle thread " + std::to_string(t->id) + " is waiting on (refused)");
        lastError = ERROR_INVALID_HANDLE;
        return FALSE;
      }
  for (size_t i = 0; i < c.s.live.size(); i++) if (c.s.live[i] == o) { c.s.live.erase(c.s.live.begin() + (long)i); break; }
  if (c.s.onClose != nullptr) c.s.onClose(c.s.onCloseContext, o);
  if (o->kind == Object::ThreadObject) {
    o->thread->handle = nullptr;
    if (o->thread->state == Thread::Finished) delete o->thread;  // its pthread is gone
  }
  delete o;
  return TRUE;
}

inline void InitializeCriticalSection(LPCRITICAL_SECTION cs) {
  memset(cs, 0, sizeof *cs);
  cs->Magic = GPUMV_CS_MAGIC;
}
inline BOOL InitializeCriticalSectionAndSpinCount(LPCRITICAL_SECTION cs, DWORD) {
  InitializeCriticalSection(cs);
  return TRUE;
}
inline void EnterCriticalSection(LPCRITICAL_SECTION cs) {
  using namespace gpumv_d3d12::sched;
  Call c;
  if (cs->Magic != GPUMV_CS_MAGIC) {
    Fault("invalid-critical-section", "EnterCriticalSection on a critical section that is not initialised");
    return;
  }
  c.Point();
  if (cs->OwningThread == nullptr || cs->OwningThread == c.me) {
    cs->OwningThread = c.me;
    cs->RecursionCount++;
    return;
  }
  c.me->wantCs = cs;
  c.me->waitOn.clear();
  c.me->finiteTimeout = false;
  cs->Waiters++;
  c.Block();
}
inline BOOL TryEnterCriticalSection(LPCRITICAL_SECTION cs) {
  using namespace gpumv_d3d12::sched;
  Call c;
  if (cs->Magic != GPUMV_CS_MAGIC) {
    Fault("invalid-critical-section", "TryEnterCriticalSection on a critical section that is not initialised");
    return FALSE;
  }
  if (cs->OwningThread == nullptr || cs->OwningThread == c.me) {
    cs->OwningThread = c.me;
    cs->RecursionCount++;
    return TRUE;
  }
  return FALSE;
}
inline void LeaveCriticalSection(LPCRITICAL_SECTION cs) {
  using namespace gpumv_d3d12::sched;
  Call c;
  if (cs->Magic != GPUMV_CS_MAGIC || cs->OwningThread != c.me) {
    Fault("invalid-critical-section", "LeaveCriticalSection by a thread that does not own it");
    return;
  }
  if (--cs->RecursionCount == 0) cs->OwningThread = nullptr;
  c.Point();
}
inline void DeleteCriticalSection(LPCRITICAL_SECTION cs) {
  using namespace gpumv_d3d12::sched;
  Call c;
  if (cs->Magic != GPUMV_CS_MAGIC) {
    Fault("invalid-critical-section", "DeleteCriticalSection on a critical section that is not initialised");
    return;
  }
  if (cs->OwningThread != nullptr || cs->Waiters != 0) Fault("invalid-critical-section", "DeleteCriticalSection while it is owned or waited for");
  cs->Magic = 0;
}

namespace gpumv_d3d12 {
namespace sched {
inline void* PthreadStart(void* arg) {
  Thread* t = (Thread*)arg;
  State& s = S();
  self = t;
  WaitForBaton(t);
  DWORD code = t->start != nullptr ? t->start(t->arg) : (DWORD)t->startLong(t->arg);
  std::unique_lock<std::mutex> lock(s.m);
  t->exitCode = code;
  t->state = Thread::Finished;
  if (t->handle != nullptr) t->handle->signalled = true;
  for (size_t i = 0; i < s.threads.size(); i++)
    if (s.threads[i] == t) { s.threads.erase(s.threads.begin() + (long)i); break; }
  Switch(s, lock, t, false);  // hands the baton on; `t` is never picked again
  // Still under the lock: the record goes now if its handle is already closed, else with the handle.
  if (t->handle == nullptr) delete t;
  return nullptr;
}
}  // namespace sched
}  // namespace gpumv_d3d12

namespace gpumv_d3d12 {
namespace sched {
inline HANDLE StartThread(LPTHREAD_START_ROUTINE start, unsigned long (*startLong)(LPVOID), LPVOID arg, DWORD flags, LPDWORD threadId) {
  Call c;
  Thread* t = new Thread;
  t->id = c.s.nextThreadId;  // taken below, once the pthread exists
  t->start = start;
  t->startLong = startLong;
  t->arg = arg;
  t->suspended = (flags & CREATE_SUSPENDED) != 0;
  Object* h = new Object;
  h->kind = Object::ThreadObject;
  h->thread = t;
  h->serial = ++c.s.objectSerial;
  t->handle = h;
  pthread_t pt;
  if (pthread_create(&pt, nullptr, &PthreadStart, t) != 0) {
    delete h;
    delete t;
    lastError = ERROR_NOT_ENOUGH_MEMORY;
    return nullptr;
  }
  pthread_detach(pt);
  c.s.nextThreadId++;
  c.s.threads.push_back(t);
  c.s.live.push_back(h);
  if (threadId != nullptr) *threadId = t->id;
  c.Point();
  return (HANDLE)h;
}
}  // namespace sched
}  // namespace gpumv_d3d12

inline HANDLE CreateThread(LPSECURITY_ATTRIBUTES, SIZE_T, LPTHREAD_START_ROUTINE start, LPVOID arg, DWORD flags, LPDWORD threadId) {
  return gpumv_d3d12::sched::StartThread(start, nullptr, arg, flags, threadId);
}
inline HANDLE CreateThread(LPSECURITY_ATTRIBUTES, SIZE_T, unsigned long (*start)(LPVOID), LPVOID arg, DWORD flags, LPDWORD threadId) {
  return gpumv_d3d12::sched::StartThread(nullptr, start, arg, flags, threadId);
}

/** A process-unique LUID: a counter, so runs stay deterministic. */
inline BOOL AllocateLocallyUniqueId(LUID* luid) {
  static uint64_t next = 0x1000;
  gpumv_d3d12::sched::Call c;
  uint64_t v = ++next;
  luid->LowPart = (ULONG)(v & 0xFFFFFFFFu);
  luid->HighPart = (LONG)(v >> 32);
  return TRUE;
}

inline DWORD ResumeThread(HANDLE h) {
  using namespace gpumv_d3d12::sched;
  Call c;
  Object* o = Checked(c.s, h, "ResumeThread");
  if (o == nullptr || o->kind != Object::ThreadObject) return (DWORD)-1;
  DWORD was = o->thread->suspended ? 1 : 0;
  o->thread->suspended = false;
  c.Point();
  return was;
}

inline BOOL GetExitCodeThread(HANDLE h, LPDWORD code) {
  using namespace gpumv_d3d12::sched;
  Call c;
  Object* o = Checked(c.s, h, "GetExitCodeThread");
  if (o == nullptr || o->kind != Object::ThreadObject) return FALSE;
  *code = o->thread->state == Thread::Finished ? o->thread->exitCode : 259 /* STILL_ACTIVE */;
  return TRUE;
}

inline DWORD GetCurrentThreadId() {
  using namespace gpumv_d3d12::sched;
  State& s = S();
  std::unique_lock<std::mutex> lock(s.m);
  return Me(s)->id;
}

/** Yields the baton to the next runnable thread, if any; time does not pass otherwise. */
inline void Sleep(DWORD) {
  using namespace gpumv_d3d12::sched;
  Call c;
  c.Yield();
}
inline BOOL SwitchToThread() {
  Sleep(0);
  return TRUE;
}

/** The clock the kit installed (the harness's simulated QPC), or 0 ticks when none is. */
inline BOOL QueryPerformanceCounter(LARGE_INTEGER* counter) {
  using namespace gpumv_d3d12::sched;
  Call c;
  counter->QuadPart = c.s.clock != nullptr ? (int64_t)c.s.clock(c.s.clockContext) : 0;
  return TRUE;
}
inline BOOL QueryPerformanceFrequency(LARGE_INTEGER* frequency) {
  using namespace gpumv_d3d12::sched;
  State& s = S();
  std::unique_lock<std::mutex> lock(s.m);
  frequency->QuadPart = (int64_t)s.frequency;
  return TRUE;
}

// basetsd.h maps HeapAlloc to malloc and drops the flags; HEAP_ZERO_MEMORY must zero.
#undef HeapAlloc
#undef HeapFree
inline HANDLE GetProcessHeap() { return (HANDLE)(uintptr_t)0x4850; }
inline LPVOID HeapAlloc(HANDLE, DWORD flags, SIZE_T bytes) {
  return (flags & HEAP_ZERO_MEMORY) != 0 ? calloc(1, bytes == 0 ? 1 : bytes) : malloc(bytes == 0 ? 1 : bytes);
}
inline BOOL HeapFree(HANDLE, DWORD, LPVOID p) {
  free(p);
  return TRUE;
}
