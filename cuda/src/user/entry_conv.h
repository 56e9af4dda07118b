// entry_conv.h — closes a conv arm module (docs/USER-ARMS.md): checks that the body defines
//     template <class TX, class TO, class Ctx> GDN_HD void conv_arm(const Params& p, Ctx& t)
// and exports one entry per (x dtype, out dtype):
//   CUDA:  extern "C" __global__ gdn_arm_conv_<x>_<out>(const Params p): a one-dimensional launch over
//          the linear block index y * grid_x + x of the contract's (channel tiles, programs) grid;
//   host:  extern "C" gdn_arm_conv_<x>_<out>(const void* params, exec::HostThread& t), the per-thread
//          function libgdn runs through exec::run_host_grid in the schedule's block order.
#pragma once

#include <type_traits>
#include <utility>

#ifndef GDN_ARM_THREADS
#define GDN_ARM_THREADS 128
#endif
#ifndef GDN_ARM_MIN_BLOCKS
#define GDN_ARM_MIN_BLOCKS 1  // __launch_bounds__' minimum resident blocks per SM (caps registers)
#endif

namespace gdn_arm_check {
struct missing_body {};
#if defined(__CUDACC__)
using Thread = gdn::exec::CudaThread<false>;
#else
using Thread = gdn::exec::HostThread;
#endif
}  // namespace gdn_arm_check

// Chosen only when the cell's conv_arm cannot be called as conv_arm<TX, TO>(p, t).
template <class TX, class TO, class... A>
GDN_HD gdn_arm_check::missing_body conv_arm(A&&...);

namespace gdn_arm_check {
template <class TX, class TO>
constexpr bool conv_body_ok() {
  return !std::is_same<decltype(conv_arm<TX, TO>(std::declval<const Params&>(), std::declval<Thread&>())),
                       missing_body>::value;
}
constexpr bool k_body_ok = conv_body_ok<float, float>();
}  // namespace gdn_arm_check

static_assert(gdn_arm_check::k_body_ok,
              "arm '" GDN_ARM_NAME "': the body must define  template <class TX, class TO, class Ctx> GDN_HD void "
              "conv_arm(const Params& p, Ctx& t)  (a conv arm's per-thread body; see docs/USER-ARMS.md)");

#if defined(__CUDACC__)
#define GDN_ARM_CONV_ENTRY(NAME, TX, TO)                                                        \
  extern "C" __global__ void __launch_bounds__(GDN_ARM_THREADS, GDN_ARM_MIN_BLOCKS) NAME(const Params p) {         \
    extern __shared__ float gdn_arm_sm[];                                                       \
    gdn_arm_check::Thread t{p.grid_x, (int64_t)gridDim.x / p.grid_x, gdn_arm_sm};               \
    if constexpr (gdn_arm_check::k_body_ok) conv_arm<TX, TO>(p, t);          \
  }
#else
#define GDN_ARM_CONV_ENTRY(NAME, TX, TO)                                                              \
  extern "C" __attribute__((visibility("default"))) void NAME(const void* params,                  \
                                                              gdn::exec::HostThread& t) {         \
    if constexpr (gdn_arm_check::k_body_ok)                                       \
      conv_arm<TX, TO>(*static_cast<const Params*>(params), t);                                      \
  }
#endif

GDN_ARM_CONV_ENTRY(gdn_arm_conv_f32_f32, float, float)
GDN_ARM_CONV_ENTRY(gdn_arm_conv_f32_bf16, float, bf16_bits)
GDN_ARM_CONV_ENTRY(gdn_arm_conv_bf16_f32, bf16_bits, float)
GDN_ARM_CONV_ENTRY(gdn_arm_conv_bf16_bf16, bf16_bits, bf16_bits)

#if !defined(__CUDACC__)
// Checked mode reports its fault into this buffer before ending the worker (prelude.h).
extern "C" __attribute__((visibility("default"))) void gdn_arm_set_fault_buffer(char* buf) {
  gdn::arm::fault_buffer() = buf;
}
#endif
