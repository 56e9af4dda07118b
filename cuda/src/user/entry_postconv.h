// entry_postconv.h — closes a post-conv arm module (docs/USER-ARMS.md): checks that the body defines
//     template <class TC, class TQ, class TG, class Ctx> GDN_HD void postconv_arm(const PostParams& p, Ctx& t)
// and exports one entry per (conv dtype, q/k/v dtype, gate dtype). The grid is (slots, token tiles):
// t.bx() = head slot (postconv::decode_slot: q heads, k heads, value heads, then one gate slot),
// t.by() = tile of tokens_per_program tokens.
//   CUDA:  extern "C" __global__ gdn_arm_postconv_<c>_<q>_<g>(const PostParams p), a 2-D launch
//   host:  extern "C" gdn_arm_postconv_<c>_<q>_<g>(const void* params, exec::HostThread& t)
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
struct missing_postconv_body {};
#if defined(__CUDACC__)
using Thread2D = gdn::exec::CudaThread<true>;
#else
using Thread2D = gdn::exec::HostThread;
#endif
}  // namespace gdn_arm_check

template <class TC, class TQ, class TG, class... A>
GDN_HD gdn_arm_check::missing_postconv_body postconv_arm(A&&...);

namespace gdn_arm_check {
template <class TC, class TQ, class TG>
constexpr bool postconv_body_ok() {
  return !std::is_same<decltype(postconv_arm<TC, TQ, TG>(std::declval<const PostParams&>(), std::declval<Thread2D&>())),
                       missing_postconv_body>::value;
}
constexpr bool k_body_ok = postconv_body_ok<float, float, float>();
}  // namespace gdn_arm_check

static_assert(gdn_arm_check::k_body_ok,
              "arm '" GDN_ARM_NAME "': the body must define  template <class TC, class TQ, class TG, class Ctx> GDN_HD "
              "void postconv_arm(const PostParams& p, Ctx& t)  (a post-conv arm's per-thread body; see docs/USER-ARMS.md)");

#if defined(__CUDACC__)
#define GDN_ARM_POSTCONV_ENTRY(NAME, TC, TQ, TG)                                                  \
  extern "C" __global__ void __launch_bounds__(GDN_ARM_THREADS, GDN_ARM_MIN_BLOCKS) NAME(const PostParams p) {       \
    extern __shared__ float gdn_arm_sm[];                                                         \
    gdn_arm_check::Thread2D t{(int64_t)gridDim.x, (int64_t)gridDim.y, gdn_arm_sm};                \
    if constexpr (gdn_arm_check::k_body_ok) postconv_arm<TC, TQ, TG>(p, t); \
  }
#else
#define GDN_ARM_POSTCONV_ENTRY(NAME, TC, TQ, TG)                                                      \
  extern "C" __attribute__((visibility("default"))) void NAME(const void* params,                  \
                                                              gdn::exec::HostThread& t) {         \
    if constexpr (gdn_arm_check::k_body_ok)                            \
      postconv_arm<TC, TQ, TG>(*static_cast<const PostParams*>(params), t);                          \
  }
#endif

GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_f32_f32_f32, float, float, float)
GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_f32_f32_bf16, float, float, uint16_t)
GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_f32_bf16_f32, float, uint16_t, float)
GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_f32_bf16_bf16, float, uint16_t, uint16_t)
GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_bf16_f32_f32, uint16_t, float, float)
GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_bf16_f32_bf16, uint16_t, float, uint16_t)
GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_bf16_bf16_f32, uint16_t, uint16_t, float)
GDN_ARM_POSTCONV_ENTRY(gdn_arm_postconv_bf16_bf16_bf16, uint16_t, uint16_t, uint16_t)

#if !defined(__CUDACC__)
extern "C" __attribute__((visibility("default"))) void gdn_arm_set_fault_buffer(char* buf) {
  gdn::arm::fault_buffer() = buf;
}
#endif
