// exec.h — the execution interface every arm body is written against, once for both backends
// (docs/SPEC.md §3.5, §12).
//
// A body is a per-thread function template over a context `Ctx`:
//
//     template <class Ctx> GDN_HD void body(const Params& p, Ctx& t);
//
// and sees the launch only through t:
//     t.block()             linear block index, y * grid_x + x
//     t.bx(), t.by()        block coordinates in the logical (grid_x, grid_y) grid
//     t.grid_x(), t.grid_y()
//     t.tid(), t.threads()  thread index in the block, threads per block
//     t.lane(), t.warp()    tid % 32, tid / 32
//     t.smem()              the block's shared memory as float* (dynamic: the arm's declared shared
//                           bytes); smem_as<T>(t) for another element type, t.shared() as void*
//     t.sync()              block barrier (__syncthreads)
//     t.shfl_xor(v, mask)   full-warp butterfly exchange (__shfl_xor_sync(0xffffffff, v, mask)), float or int32
//     t.shfl_xor_n(v, masks, out)
//                           N independent exchanges of one step (N <= kMaxExchange): out[i] = v[i] of lane
//                           lane ^ masks[i]; float or int32 arrays. The GPU does N shuffles in index order;
//                           the host waits once for all N instead of N times (each wait is a fiber switch
//                           per lane, the host replay's largest cost: docs/SPEC.md §13). Only for values
//                           that do not depend on each other's exchange.
//     t.shfl_xor_each(masks, send, use)
//                           the same step written as the loop it replaces: for i < N, use(i, the value
//                           send(i) of lane lane ^ masks[i]). The GPU runs that loop (send, shuffle, use,
//                           in index order: the kernel keeps the dataflow of the single shuffles it
//                           replaces), the host posts every send(i), waits once, then makes every use(i, ·).
//                           Valid when the step's sends and uses do not see each other's effects: no send(j)
//                           reads what a use(i), i < j, writes, and no use reads what a later send writes
//                           (the host would see other values): independent exchanges of one reduction level.
//
// CUDA (CudaThread): thin wrappers of blockIdx / threadIdx / __syncthreads / __shfl_xor_sync and the
// kernel's extern __shared__ array. One-dimensional launches (kGrid2D = false: the conv family, whose
// programs can exceed gridDim.y) carry the logical grid_x and derive (bx, by) from blockIdx.x, in 32-bit
// unsigned arithmetic (blockIdx.x < 2^31 and grid_x > 0 fit; a 64-bit division cost the registers that
// made head-tile and stream spill, CHANGELOG 2026-12-01, 85444e9);
// two-dimensional launches use blockIdx.x/y directly.
//
// Host (HostThread): blocks run one after the other in the launch's order. An arm that declares no
// barrier and no shuffle runs as a plain loop over its threads (no fibers: the common path stays a
// function call per thread). An arm that declares them runs each thread of a block as a cooperative
// fiber (host/exec_host.cpp: our own x86-64 context switch, ucontext elsewhere): sync() parks the
// thread until every live thread of the block has reached a barrier, shfl_xor parks it until every
// live lane of its warp has posted its value, so the host replays CUDA's semantics rather than a
// hand-written phase-by-phase imitation. A body that calls sync() or shfl_xor() without having
// declared them, or whose threads wait at different barriers (a deadlock on the GPU), makes the
// launch fail with a message naming the arm; it never hangs or reads a neighbour's stale value.
#pragma once

#include <stdint.h>

#include <cstddef>

#if defined(__CUDACC__)
#ifndef GDN_HD
#define GDN_HD __host__ __device__
#endif
#define GDN_HDI __host__ __device__ __forceinline__
#define GDN_UNROLL _Pragma("unroll")
#else
#ifndef GDN_HD
#define GDN_HD
#endif
#define GDN_HDI inline __attribute__((always_inline))
#define GDN_UNROLL _Pragma("GCC unroll 16")
#endif

namespace gdn {
namespace exec {

constexpr int kWarp = 32;
constexpr int kMaxThreads = 1024;  // CUDA's block limit; the host fiber pool holds as many
constexpr int kMaxExchange = 16;   // values per shfl_xor_n

// ----------------------------------------------------------------- CUDA
#if defined(__CUDACC__)
template <bool kGrid2D>
struct CudaThread {
  int64_t gx;   // logical grid_x (1-D launches: blockIdx.x = y * gx + x)
  int64_t gy;   // logical grid_y
  void* sm;     // the kernel's extern __shared__ array

  GDN_HDI int64_t block() const {
#if defined(__CUDA_ARCH__)
    return kGrid2D ? (int64_t)blockIdx.y * gridDim.x + blockIdx.x : (int64_t)blockIdx.x;
#else
    return 0;
#endif
  }
  GDN_HDI int64_t bx() const {
#if defined(__CUDA_ARCH__)
    return kGrid2D ? (int64_t)blockIdx.x : (int64_t)(blockIdx.x % (uint32_t)gx);
#else
    return 0;
#endif
  }
  GDN_HDI int64_t by() const {
#if defined(__CUDA_ARCH__)
    return kGrid2D ? (int64_t)blockIdx.y : (int64_t)(blockIdx.x / (uint32_t)gx);
#else
    return 0;
#endif
  }
  GDN_HDI int64_t grid_x() const { return gx; }
  GDN_HDI int64_t grid_y() const { return gy; }
  GDN_HDI int tid() const {
#if defined(__CUDA_ARCH__)
    return (int)threadIdx.x;
#else
    return 0;
#endif
  }
  GDN_HDI int threads() const {
#if defined(__CUDA_ARCH__)
    return (int)blockDim.x;
#else
    return 0;
#endif
  }
  // Unsigned: threadIdx.x / 32 is a shift; the signed (int) form needs a sign fix-up whose extra
  // live values made the token-tile kernel spill at its 32-register cap (CHANGELOG 2026-12-01, 85444e9).
  GDN_HDI int lane() const {
#if defined(__CUDA_ARCH__)
    return (int)(threadIdx.x % (unsigned)kWarp);
#else
    return 0;
#endif
  }
  GDN_HDI int warp() const {
#if defined(__CUDA_ARCH__)
    return (int)(threadIdx.x / (unsigned)kWarp);
#else
    return 0;
#endif
  }
  GDN_HDI void* shared() const { return sm; }
  GDN_HDI float* smem() const { return static_cast<float*>(sm); }
  GDN_HDI void sync() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#endif
  }
  GDN_HDI float shfl_xor(float v, int mask) const {
#if defined(__CUDA_ARCH__)
    return __shfl_xor_sync(0xffffffffu, v, mask);
#else
    (void)mask;
    return v;
#endif
  }
  GDN_HDI int32_t shfl_xor(int32_t v, int mask) const {
#if defined(__CUDA_ARCH__)
    return __shfl_xor_sync(0xffffffffu, v, mask);
#else
    (void)mask;
    return v;
#endif
  }
  template <int N, class T>  // T: float or int32_t (the shfl_xor overloads)
  GDN_HDI void shfl_xor_n(const T (&v)[N], const int (&mask)[N], T (&out)[N]) const {
    static_assert(N >= 1 && N <= kMaxExchange, "shfl_xor_n: 1..kMaxExchange values");
    GDN_UNROLL
    for (int i = 0; i < N; ++i) out[i] = shfl_xor(v[i], mask[i]);
  }
  template <int N, class Send, class Use>
  GDN_HDI void shfl_xor_each(const int (&mask)[N], const Send& send, const Use& use) const {
    static_assert(N >= 1 && N <= kMaxExchange, "shfl_xor_each: 1..kMaxExchange values");
    GDN_UNROLL
    for (int i = 0; i < N; ++i) use(i, shfl_xor(send(i), mask[i]));
  }
};
#endif  // __CUDACC__

// The block's shared memory as T* (a free function: inside a template, t.smem<T>() would need
// `t.template smem<T>()`).
template <class T, class Ctx>
GDN_HDI T* smem_as(const Ctx& t) {
  return static_cast<T*>(t.shared());
}

// ----------------------------------------------------------------- host
// What a host thread calls when it must wait (exec_host.cpp). A table of function pointers, so that
// code compiled outside libgdn (user arms built at run time) needs no symbol of the library.
struct HostCoop;
struct HostCoopOps {
  void (*sync)(HostCoop*, int tid);
  float (*shfl_f32)(HostCoop*, int tid, float v, int mask);
  int32_t (*shfl_i32)(HostCoop*, int tid, int32_t v, int mask);
  // n (1..kMaxExchange) exchanges at one wait: out[i] = v[i] of lane ^ mask[i]
  void (*shfl_n_f32)(HostCoop*, int tid, const float* v, const int* mask, float* out, int n);
  void (*shfl_n_i32)(HostCoop*, int tid, const int32_t* v, const int* mask, int32_t* out, int n);
};

// Why a host launch failed inside a block (HostGrid::run reports it with the arm's name).
enum HostFault : int32_t {
  kFaultNone = 0,
  kFaultUndeclaredSync = 1,     // sync() in an arm that declared no barrier
  kFaultUndeclaredShuffle = 2,  // shfl_xor() in an arm that declared no shuffle
  kFaultDeadlock = 3,           // threads wait at barriers that can never all be reached
  kFaultTooManyThreads = 4,     // more than kMaxThreads threads per block
};

// The value type of an expression's type (float for float, const float& and float&&): <type_traits> is not
// available to NVRTC, which compiles this header for user arms.
template <class T>
struct ValueOf {
  using type = T;
};
template <class T>
struct ValueOf<T&> {
  using type = typename ValueOf<T>::type;
};
template <class T>
struct ValueOf<T&&> {
  using type = typename ValueOf<T>::type;
};
template <class T>
struct ValueOf<const T> {
  using type = T;
};

class HostThread {
 public:
  HostThread() = default;
  HostThread(int64_t block, int64_t gx, int64_t gy, int tid, int threads, void* sm, HostCoop* coop,
             const HostCoopOps* ops, int32_t* fault)
      : block_(block), gx_(gx), gy_(gy), tid_(tid), threads_(threads), sm_(sm), coop_(coop), ops_(ops), fault_(fault) {}

  int64_t block() const { return block_; }
  int64_t bx() const { return block_ % gx_; }
  int64_t by() const { return block_ / gx_; }
  int64_t grid_x() const { return gx_; }
  int64_t grid_y() const { return gy_; }
  int tid() const { return tid_; }
  int threads() const { return threads_; }
  int lane() const { return tid_ % kWarp; }
  int warp() const { return tid_ / kWarp; }
  void* shared() const { return sm_; }
  float* smem() const { return static_cast<float*>(sm_); }
  void sync() {
    if (coop_ == nullptr) {
      note(kFaultUndeclaredSync);
      return;
    }
    ops_->sync(coop_, tid_);
  }
  float shfl_xor(float v, int mask) {
    if (coop_ == nullptr) {
      note(kFaultUndeclaredShuffle);
      return v;
    }
    return ops_->shfl_f32(coop_, tid_, v, mask);
  }
  int32_t shfl_xor(int32_t v, int mask) {
    if (coop_ == nullptr) {
      note(kFaultUndeclaredShuffle);
      return v;
    }
    return ops_->shfl_i32(coop_, tid_, v, mask);
  }
  template <int N, class T>  // T: float or int32_t (exchange_n below)
  void shfl_xor_n(const T (&v)[N], const int (&mask)[N], T (&out)[N]) {
    static_assert(N >= 1 && N <= kMaxExchange, "shfl_xor_n: 1..kMaxExchange values");
    if (coop_ == nullptr) {
      note(kFaultUndeclaredShuffle);
      for (int i = 0; i < N; ++i) out[i] = v[i];
      return;
    }
    exchange_n(v, mask, out, N);
  }
  template <int N, class Send, class Use>
  void shfl_xor_each(const int (&mask)[N], const Send& send, const Use& use) {
    using T = typename ValueOf<decltype(send(0))>::type;  // a send may return a reference
    T v[N], got[N];
    for (int i = 0; i < N; ++i) v[i] = send(i);
    shfl_xor_n(v, mask, got);
    for (int i = 0; i < N; ++i) use(i, got[i]);
  }

 private:
  void exchange_n(const float* v, const int* mask, float* out, int n) { ops_->shfl_n_f32(coop_, tid_, v, mask, out, n); }
  void exchange_n(const int32_t* v, const int* mask, int32_t* out, int n) { ops_->shfl_n_i32(coop_, tid_, v, mask, out, n); }
  void note(int32_t f) {
    if (fault_ && *fault_ == kFaultNone) *fault_ = f;
  }
  int64_t block_ = 0, gx_ = 1, gy_ = 1;
  int tid_ = 0, threads_ = 1;
  void* sm_ = nullptr;
  HostCoop* coop_ = nullptr;
  const HostCoopOps* ops_ = nullptr;
  int32_t* fault_ = nullptr;
};

// A per-thread body on the host, type-erased: fn(closure, thread).
using HostThreadFn = void (*)(const void* closure, HostThread& t);

// One host launch: blocks of `threads` threads over a logical (grid_x, grid_y) grid, run in `order`
// (linear indices; null = forward), shared_bytes of shared memory per block (zeroed once per
// launch, kept across blocks like an SM's). cooperative: run each block's threads as fibers
// (needed by sync() and shfl_xor()).
struct HostGrid {
  int64_t grid_x = 1, grid_y = 1;
  int threads = 1;
  size_t shared_bytes = 0;
  const int64_t* order = nullptr;
  bool cooperative = false;
  // Cooperative arms only: whether the body may call sync(). Without barriers the warps of a block
  // are independent, so the host runs one warp's fibers at a time (32 hot stacks instead of a
  // block's; exec_host.cpp). Conservative default: the whole block together.
  bool barriers = true;
  // Threads to replay the blocks on (host/thread_pool.h); 1 = the serial loop. Only for launches
  // whose blocks are independent, so that any order gives the serial loop's bits: order must be null
  // (the forward schedule), and the caller sets it only for production builds of built-in arms, not
  // for the racy mapping (host/replay_host.cpp).
  int parallel = 1;
};

// Runs fn over every thread of every block. Returns kFaultNone, or the first fault (the launch
// stops at the block where it happened); *fault_block receives that block's linear index.
int32_t run_host_grid(const HostGrid& grid, HostThreadFn fn, const void* closure, int64_t* fault_block);

// Convenience for lambdas: body(HostThread&).
template <class F>
inline int32_t run_host(const HostGrid& grid, const F& body, int64_t* fault_block) {
  struct Thunk {
    static void call(const void* c, HostThread& t) { (*static_cast<const F*>(c))(t); }
  };
  return run_host_grid(grid, &Thunk::call, &body, fault_block);
}

// Text of a fault ("sync() called by an arm that declares no block barrier", ...).
const char* host_fault_text(int32_t fault);

// Which context switch the host fibers use: "x86-64 asm" or "ucontext".
const char* host_fiber_kind();

}  // namespace exec
}  // namespace gdn
