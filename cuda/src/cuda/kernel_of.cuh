// kernel_of.cuh — which compiled kernel a CUDA launch of (arm, dtypes, build, variant) uses.
//
// Most arms own every kernel of their variants. An arm that is another arm plus one change confined to
// some variants (the conv arm stream-mufu: `stream` plus the SiLU shortcut in variants 3..5, for a bf16
// result only, never in the planted build) names that arm as its Twin and says which of its kernels are
// its own:
//   using Twin = ArmStream;
//   template <class T, class M, int V> static constexpr bool own_kernel();   // T: the dtype that decides
// Everywhere else it launches Twin's kernel for variant V % Twin::kVariants, which its body equals by
// construction (the same stream_*body instance with the same policy), so nvcc compiles each distinct
// kernel once. Why: every duplicate costs CUDA compile time, and CI compiles the CUDA backend on two
// cores (docs/MAINTAINING.md, "CI time").
#pragma once

#include <type_traits>

namespace gdn {
namespace cudaarm {

template <class Arm, class T, class M, int V, class = void>
struct KernelOf {
  using arm = Arm;
  static constexpr int variant = V;
};

template <class Arm, class T, class M, int V>
struct KernelOf<Arm, T, M, V, std::void_t<typename Arm::Twin>> {
  using Twin = typename Arm::Twin;
  static constexpr bool own = Arm::template own_kernel<T, M, V>();
  using arm = std::conditional_t<own, Arm, Twin>;
  static constexpr int variant = own ? V : V % Twin::kVariants;
  // The launch is configured from Arm's spec; a twin must share what the kernel's bounds and shared
  // memory depend on.
  static_assert(Twin::spec.threads == Arm::spec.threads && Twin::spec.min_blocks == Arm::spec.min_blocks &&
                    Twin::spec.shared_base == Arm::spec.shared_base && Twin::spec.shared_per_k == Arm::spec.shared_per_k,
                "an arm's twin must have its launch shape");
};

}  // namespace cudaarm
}  // namespace gdn
