// exec_host.cpp — the host side of the execution interface (common/exec.h; docs/SPEC.md §3.5, §12): blocks one after the other in the launch's order; inside a block either a
// plain loop over the threads (arms without barriers or shuffles) or one cooperative fiber per thread.
//
// Fibers. Each thread of a cooperative block runs on its own stack. A thread runs until it reaches
// sync(), shfl_xor() or its end, then switches back to the block's scheduler. After a round in which
// every runnable thread ran up to its next wait, the scheduler releases
//   - every thread at a block barrier, once all live threads of the block are at one;
//   - the lanes of a warp waiting at a shuffle, once all live lanes of that warp are at one;
// and runs the released threads again, in thread order. When no one can be released the block's
// threads wait at barriers that can never all be reached (divergent __syncthreads on a GPU): the launch
// fails with kFaultDeadlock instead of hanging.
//
// A shuffle posts the lane's value in one of two exchange rows (alternating per call), waits, then
// reads lane ^ mask's value of that row. Two rows suffice: a lane can only post into a row again after
// the next shuffle's release, which every lane reaches only after it has read this one. shfl_xor_n posts
// up to kMaxExchange values at once (value i of every lane in column i of the row) and waits once.
//
// Warp mode (arms with shuffles and no barrier, whose warps run one at a time): the lanes run in rounds in
// lane order, each up to its next shuffle or its end; the lane that ends a round releases the waiting lanes
// itself and switches to the first of them, without a round trip through the scheduler (pass_on).
//
// The context switch: on x86-64 a few instructions of our own that save the callee-saved registers
// on the old stack and restore them from the new one (swapcontext would make a sigprocmask system call
// per switch). Elsewhere, or with GDN_EXEC_FORCE_UCONTEXT (the unit test builds both), ucontext.
#include "common/exec.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "host/thread_pool.h"

#if !defined(__x86_64__) || defined(GDN_EXEC_FORCE_UCONTEXT)
#define GDN_FIBER_UCONTEXT 1
#include <ucontext.h>
#else
#define GDN_FIBER_UCONTEXT 0
#endif

namespace gdn {
namespace exec {

#if !GDN_FIBER_UCONTEXT
// gdn_fiber_switch(save, to): pushes rbp, rbx, r12-r15, stores rsp in *save, loads rsp = to, pops the
// same registers of the other fiber and returns into it. gdn_fiber_start is where a new fiber's first
// switch returns to: it calls r13(r12) and never returns (a fiber ends by switching away).
// Local symbols (no .globl): nothing outside this file calls them, and libgdn exports only gdn_* API.
extern "C" void gdn_fiber_switch(void** save, void* to);
extern "C" void gdn_fiber_start();
asm(R"(
  .text
  .p2align 4
  .type gdn_fiber_switch,@function
gdn_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size gdn_fiber_switch,.-gdn_fiber_switch
  .p2align 4
  .type gdn_fiber_start,@function
gdn_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size gdn_fiber_start,.-gdn_fiber_start
)");
#endif

namespace {

// Stacks: 128 KiB per fiber (pages are committed only when touched), each below a guard page so
// that an overflow faults instead of corrupting the next stack. (Backing them with transparent huge
// pages was tried to cut TLB misses on switches: no gain measured, and it needs the guard pages gone.)
constexpr size_t kStackBytes = 128 * 1024;
constexpr size_t kGuardBytes = 4096;

enum State : uint8_t { kReady = 0, kRunning = 1, kAtBlock = 2, kAtWarp = 3, kDone = 4 };

struct Fiber {
#if GDN_FIBER_UCONTEXT
  ucontext_t uc;
#else
  void* sp = nullptr;
#endif
  bool fresh = true;  // needs a new initial frame (never started, or abandoned by a fault)
};

}  // namespace

// The cooperative scheduler of one OS thread. Fibers persist: after a thread's body returns, its
// fiber waits at the top of its loop and runs the body again for the next block (or launch), so a
// block costs no stack setup. A waiting fiber switches straight to the next runnable thread of the
// round (thread order); the last one of a round switches to the scheduler, which releases waiters.
struct HostCoop {
  int n = 0;
  int lo = 0, hi = 0;  // the threads scheduled now: the whole block, or one warp (warp_mode)
  bool warp_mode = false;
  int current = 0;
  int live = 0;
  int64_t block = 0, gx = 1, gy = 1;
  void* sm = nullptr;
  HostThreadFn fn = nullptr;
  const void* closure = nullptr;
  int32_t fault = kFaultNone;
  std::vector<Fiber> fibers;
  Fiber main;
  std::vector<uint8_t> state;
  std::vector<uint8_t> parity;
  std::vector<uint32_t> xw[2];  // exchange rows: value i of thread t at [i * capacity + t]
  // the stacks: one mapping of `capacity` (guard + stack) slots
  char* stacks = nullptr;
  size_t capacity = 0;

  ~HostCoop() {
    if (stacks) munmap(stacks, capacity * (kStackBytes + kGuardBytes));
  }
  bool reserve(int threads);
  void start(int tid);
  // Fiber `tid` has set its state (a wait or done): run the next runnable thread of this round, or
  // return to the scheduler. Returns when `tid` is resumed.
  void pass_on(int tid);
  void enter(int tid);  // scheduler -> fiber tid
  int next_ready(int from) const {
    for (int t = from; t < hi; ++t)
      if (state[(size_t)t] == kReady) return t;
    return -1;
  }
};

extern const HostCoopOps kCoopOps;

namespace {

[[noreturn]] void fiber_main(HostCoop* c) {
  const int tid = c->current;
  for (;;) {
    HostThread t(c->block, c->gx, c->gy, tid, c->n, c->sm, c, &kCoopOps, &c->fault);
    c->fn(c->closure, t);
    c->state[(size_t)tid] = kDone;
    --c->live;
    c->pass_on(tid);  // resumed at the next block that runs this thread
  }
}

#if GDN_FIBER_UCONTEXT
void fiber_main_uc(unsigned hi, unsigned lo) {
  fiber_main(reinterpret_cast<HostCoop*>(((uintptr_t)hi << 32) | (uintptr_t)lo));
}
#endif

}  // namespace

bool HostCoop::reserve(int threads) {
  if ((size_t)threads <= capacity) return true;
  size_t want = 128;
  while (want < (size_t)threads) want *= 2;
  const size_t slot = kStackBytes + kGuardBytes;
  void* m = mmap(nullptr, want * slot, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return false;
  for (size_t i = 0; i < want; ++i) mprotect(static_cast<char*>(m) + i * slot, kGuardBytes, PROT_NONE);
  if (stacks) munmap(stacks, capacity * slot);  // only between launches: no fiber is in the middle of a body
  stacks = static_cast<char*>(m);
  capacity = want;
  fibers.assign(want, Fiber());
  state.assign(want, kDone);
  parity.resize(want);
  for (auto& v : xw) v.resize(want * (size_t)kMaxExchange);
  return true;
}

void HostCoop::start(int tid) {
  Fiber& f = fibers[(size_t)tid];
  f.fresh = false;
  char* lo = stacks + (size_t)tid * (kStackBytes + kGuardBytes) + kGuardBytes;
#if GDN_FIBER_UCONTEXT
  ucontext_t& uc = f.uc;
  getcontext(&uc);
  uc.uc_stack.ss_sp = lo;
  uc.uc_stack.ss_size = kStackBytes - (size_t)((tid * 17) % 64) * 64;  // coloured like the asm stacks
  uc.uc_link = nullptr;
  const uintptr_t self = reinterpret_cast<uintptr_t>(this);
  makecontext(&uc, (void (*)())fiber_main_uc, 2, (unsigned)(self >> 32), (unsigned)(self & 0xffffffffu));
#else
  // The first switch into the fiber pops r15..rbp and returns into gdn_fiber_start with rsp 16-byte
  // aligned, which then calls fiber_main(this) as the ABI expects.
  // Stack tops are staggered by a cache line per fiber: stacks exactly kStackBytes + kGuardBytes
  // apart would put every fiber's hot frame into the same L1/L2 sets (measured: the switches
  // dominated the tree arm until they were coloured).
  const uintptr_t colour = (uintptr_t)((tid * 17) % 64) * 64;
  uintptr_t top = (reinterpret_cast<uintptr_t>(lo) + kStackBytes - colour) & ~(uintptr_t)15;
  void** s = reinterpret_cast<void**>(top - 16);
  *--s = reinterpret_cast<void*>(&gdn_fiber_start);
  *--s = nullptr;                                      // rbp
  *--s = nullptr;                                      // rbx
  *--s = this;                                         // r12: the argument
  *--s = reinterpret_cast<void*>(&fiber_main);         // r13: the entry
  *--s = nullptr;                                      // r14
  *--s = nullptr;                                      // r15
  f.sp = s;
#endif
}

namespace {
inline void switch_fibers(Fiber& from, Fiber& to) {
#if GDN_FIBER_UCONTEXT
  swapcontext(&from.uc, &to.uc);
#else
  gdn_fiber_switch(&from.sp, to.sp);
#endif
}
}  // namespace

inline void HostCoop::pass_on(int tid) {
  // Usually the next thread is the one to run (everyone was released together).
  int next = tid + 1 < hi && state[(size_t)tid + 1] == kReady ? tid + 1 : next_ready(tid + 1);
  if (next < 0 && warp_mode && live > 0) {
    // The round is over and (warp mode: no barriers) every live lane waits at a shuffle: release them and
    // start the next round at the first lane here, as the scheduler would, without a round trip through it.
    for (int t = lo; t < hi; ++t) {
      if (state[(size_t)t] != kAtWarp) continue;
      state[(size_t)t] = kReady;
      if (next < 0) next = t;
    }
    if (next == tid) {  // the only live lane: it goes on by itself
      state[(size_t)tid] = kRunning;
      return;
    }
  }
  if (next < 0) {
    switch_fibers(fibers[(size_t)tid], main);
    return;
  }
  current = next;
  state[(size_t)next] = kRunning;
  if (fibers[(size_t)next].fresh) start(next);
  switch_fibers(fibers[(size_t)tid], fibers[(size_t)next]);
}

void HostCoop::enter(int tid) {
  current = tid;
  state[(size_t)tid] = kRunning;
  if (fibers[(size_t)tid].fresh) start(tid);
  switch_fibers(main, fibers[(size_t)tid]);
}

namespace {

void coop_sync(HostCoop* c, int tid) {
  if (c->warp_mode) {  // the arm declared no barrier: its warps run one at a time, so none can wait here
    if (c->fault == kFaultNone) c->fault = kFaultUndeclaredSync;
    return;
  }
  c->state[(size_t)tid] = kAtBlock;
  c->pass_on(tid);
}

// Source lane of a full-warp xor shuffle: lane ^ the mask's low 5 bits, as PTX's shfl.bfly takes it (a mask of
// 32 reads the caller's own lane, 33 lane ^ 1, -1 lane ^ 31). A source past the block's last thread (a partial
// last warp) gives the caller's own value here; on a GPU that read is undefined.
inline int shuffle_source(const HostCoop* c, int tid, int mask) {
  const unsigned lane = (unsigned)tid % kWarp;  // tid >= 0
  const unsigned src_lane = lane ^ ((unsigned)mask & (unsigned)(kWarp - 1));
  const int src = tid - (int)lane + (int)src_lane;
  return src < c->n ? src : tid;
}

// n exchanges at one wait (32-bit words: floats and ints travel as their bits). NF > 0: n == NF, known at
// compile time (the loops unroll); 0: n read at run time.
template <int NF>
inline void coop_exchange(HostCoop* c, int tid, const uint32_t* v, const int* mask, uint32_t* out, int n) {
  const int count = NF > 0 ? NF : n;
  const int row = c->parity[(size_t)tid];
  c->parity[(size_t)tid] ^= 1;
  uint32_t* words = c->xw[row].data();  // rows are only resized between launches
  const size_t col = c->capacity;
  for (int i = 0; i < count; ++i) words[(size_t)i * col + (size_t)tid] = v[i];
  c->state[(size_t)tid] = kAtWarp;
  c->pass_on(tid);
  for (int i = 0; i < count; ++i) out[i] = words[(size_t)i * col + (size_t)shuffle_source(c, tid, mask[i])];
}

template <class T>
T coop_shfl(HostCoop* c, int tid, T v, int mask) {
  static_assert(sizeof(T) == 4, "32-bit values");
  uint32_t w, got;
  std::memcpy(&w, &v, 4);
  coop_exchange<1>(c, tid, &w, &mask, &got, 1);
  std::memcpy(&v, &got, 4);
  return v;
}

template <int NF, class T>
inline void coop_shfl_n_of(HostCoop* c, int tid, const T* v, const int* mask, T* out, int n) {
  uint32_t w[kMaxExchange], got[kMaxExchange];
  const int count = NF > 0 ? NF : n;  // 1..kMaxExchange: HostThread::shfl_xor_n checks N at compile time
  for (int i = 0; i < count; ++i) std::memcpy(&w[i], &v[i], 4);
  coop_exchange<NF>(c, tid, w, mask, got, count);
  for (int i = 0; i < count; ++i) std::memcpy(&out[i], &got[i], 4);
}

// The widths the built-in arms use get loops unrolled at compile time; other widths loop at run time.
template <class T>
void coop_shfl_n(HostCoop* c, int tid, const T* v, const int* mask, T* out, int n) {
  static_assert(sizeof(T) == 4, "32-bit values");
  switch (n) {
    case 2: return coop_shfl_n_of<2>(c, tid, v, mask, out, n);
    case 3: return coop_shfl_n_of<3>(c, tid, v, mask, out, n);
    case 4: return coop_shfl_n_of<4>(c, tid, v, mask, out, n);
    case 8: return coop_shfl_n_of<8>(c, tid, v, mask, out, n);
    default: return coop_shfl_n_of<0>(c, tid, v, mask, out, n);
  }
}

// Rounds over the threads [c.lo, c.hi) (each round runs every runnable thread up to its next wait,
// in thread order) until all of them are done: the whole block, or one warp of it (warp_mode).
int32_t run_coop_range(HostCoop& c) {
  const int lo = c.lo, hi = c.hi;
  for (int t = lo; t < hi; ++t) {
    c.state[(size_t)t] = kReady;
    c.parity[(size_t)t] = 0;
  }
  c.live = hi - lo;
  for (;;) {
    const int first = c.next_ready(lo);
    if (first >= 0) c.enter(first);
    if (c.live == 0) return c.fault;
    int at_block = 0;
    for (int t = lo; t < hi; ++t) at_block += c.state[(size_t)t] == kAtBlock;
    if (at_block == c.live) {
      for (int t = lo; t < hi; ++t)
        if (c.state[(size_t)t] == kAtBlock) c.state[(size_t)t] = kReady;
      continue;
    }
    bool released = false;
    for (int w0 = lo; w0 < hi; w0 += kWarp) {
      const int w1 = w0 + kWarp < hi ? w0 + kWarp : hi;
      int lanes_live = 0, at_warp = 0;
      for (int t = w0; t < w1; ++t) {
        lanes_live += c.state[(size_t)t] != kDone;
        at_warp += c.state[(size_t)t] == kAtWarp;
      }
      if (at_warp > 0 && at_warp == lanes_live) {
        for (int t = w0; t < w1; ++t)
          if (c.state[(size_t)t] == kAtWarp) c.state[(size_t)t] = kReady;
        released = true;
      }
    }
    if (!released) {
      // The waiting fibers are abandoned mid-body: they start afresh at their next use.
      for (int t = lo; t < hi; ++t) {
        if (c.state[(size_t)t] != kDone) c.fibers[(size_t)t].fresh = true;
        c.state[(size_t)t] = kDone;
      }
      return kFaultDeadlock;
    }
  }
}

// One cooperative block. An arm with block barriers runs all its threads in each round. An arm with
// shuffles only runs warp by warp: its warps cannot wait for each other, so the order of warps
// changes no value a correct body computes, and a warp's 32 stacks stay in the L1 cache and TLB
// while it runs (a block's 128 or more do not): measured in CHANGELOG 2026-12-03, 626ae04.
int32_t run_coop_block(HostCoop& c, bool barriers) {
  c.warp_mode = !barriers;
  if (barriers) {
    c.lo = 0;
    c.hi = c.n;
    return run_coop_range(c);
  }
  for (int w0 = 0; w0 < c.n; w0 += kWarp) {
    c.lo = w0;
    c.hi = w0 + kWarp < c.n ? w0 + kWarp : c.n;
    const int32_t fault = run_coop_range(c);
    if (fault != kFaultNone) return fault;
  }
  return kFaultNone;
}


thread_local HostCoop* t_coop = nullptr;
thread_local struct CoopReaper {
  ~CoopReaper() { delete t_coop; }
} t_reaper;

}  // namespace

const HostCoopOps kCoopOps = {coop_sync, coop_shfl<float>, coop_shfl<int32_t>, coop_shfl_n<float>, coop_shfl_n<int32_t>};

namespace {

// One block of a launch on the calling thread: a plain loop over its threads, or (cooperative) one
// fiber per thread on this thread's fiber set. Returns the block's fault.
int32_t run_block(const HostGrid& g, HostThreadFn fn, const void* closure, int64_t lin, void* sm) {
  int32_t fault = kFaultNone;
  if (!g.cooperative) {
    for (int tid = 0; tid < g.threads; ++tid) {
      HostThread t(lin, g.grid_x, g.grid_y, tid, g.threads, sm, nullptr, nullptr, &fault);
      fn(closure, t);
    }
    return fault;
  }
  if (t_coop == nullptr) t_coop = new HostCoop();
  HostCoop& c = *t_coop;
  (void)t_reaper;
  if (!c.reserve(g.threads)) return kFaultTooManyThreads;
  c.n = g.threads;
  c.gx = g.grid_x;
  c.gy = g.grid_y;
  c.sm = sm;
  c.fn = fn;
  c.closure = closure;
  c.block = lin;
  c.fault = kFaultNone;
  return run_coop_block(c, g.barriers);
}

// Shared memory: one block's worth per replaying thread, zeroed once per launch and reused by every
// block that thread runs (as an SM reuses it: a block must not rely on what the previous one left).
// 16-byte aligned.
struct SharedArena {
  std::vector<uint64_t> words;
  size_t stride = 0;  // in uint64_t
  SharedArena(size_t bytes, int replayers) : stride((bytes + 15) / 16 * 2 + 2) { words.assign(stride * (size_t)replayers, 0); }
  void* of(int worker) { return words.data() + stride * (size_t)worker; }
};

// A parallel launch: blocks handed to the pool (host/thread_pool.h) in any order. Only launches
// whose blocks are independent come here (HostGrid::parallel, set by the caller), so the bits are
// the serial loop's. A fault is reported for the lowest faulting block, as the serial loop would:
// every block below it ran, and a block's fault depends on that block alone.
struct ParallelLaunch {
  const HostGrid* g;
  HostThreadFn fn;
  const void* closure;
  SharedArena* arena;
  std::atomic<int64_t> first_fault_block{INT64_MAX};
  std::atomic<int32_t> first_fault{kFaultNone};
  std::mutex mu;
};

void parallel_block(void* ctx, int32_t worker, int64_t lin) {
  ParallelLaunch& L = *static_cast<ParallelLaunch*>(ctx);
  if (lin > L.first_fault_block.load(std::memory_order_relaxed)) return;  // the serial loop stops there
  const int32_t fault = run_block(*L.g, L.fn, L.closure, lin, L.arena->of(worker));
  if (fault != kFaultNone) {
    std::lock_guard<std::mutex> lock(L.mu);
    if (lin < L.first_fault_block.load(std::memory_order_relaxed)) {
      L.first_fault_block.store(lin, std::memory_order_relaxed);
      L.first_fault.store(fault, std::memory_order_relaxed);
    }
  }
}

}  // namespace

int32_t run_host_grid(const HostGrid& g, HostThreadFn fn, const void* closure, int64_t* fault_block) {
  if (fault_block) *fault_block = -1;
  const int64_t blocks = g.grid_x * g.grid_y;
  if (blocks <= 0) return kFaultNone;
  if (g.threads < 1 || g.threads > kMaxThreads) return kFaultTooManyThreads;
  const int replayers = g.order == nullptr && g.parallel > 1 ? (int)std::min<int64_t>(g.parallel, blocks) : 1;
  SharedArena arena(g.shared_bytes, replayers);
  if (replayers > 1) {
    ParallelLaunch L;
    L.g = &g;
    L.fn = fn;
    L.closure = closure;
    L.arena = &arena;
    host::parallel_for(replayers, blocks, parallel_block, &L);
    const int32_t fault = L.first_fault.load();
    if (fault != kFaultNone && fault_block) *fault_block = L.first_fault_block.load();
    return fault;
  }
  for (int64_t i = 0; i < blocks; ++i) {
    const int64_t lin = g.order ? g.order[i] : i;
    const int32_t fault = run_block(g, fn, closure, lin, arena.of(0));
    if (fault != kFaultNone) {
      if (fault_block) *fault_block = lin;
      return fault;
    }
  }
  return kFaultNone;
}

const char* host_fault_text(int32_t fault) {
  switch (fault) {
    case kFaultNone: return "no fault";
    case kFaultUndeclaredSync: return "sync() was called by an arm that declares no block barrier (flag GDN_ARM_BARRIER)";
    case kFaultUndeclaredShuffle: return "shfl_xor() was called by an arm that declares no warp shuffle (flag GDN_ARM_SHUFFLE)";
    case kFaultDeadlock:
      return "the block's threads wait at barriers or shuffles that can never all be reached (divergent sync(); a GPU "
             "would hang or misbehave)";
    case kFaultTooManyThreads: return "threads per block must be in 1..1024";
    default: return "unknown fault";
  }
}

const char* host_fiber_kind() { return GDN_FIBER_UCONTEXT ? "ucontext" : "x86-64 asm"; }

}  // namespace exec
}  // namespace gdn
