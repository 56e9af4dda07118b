// arm_launch.cuh — the one generic __global__ per op family (docs/SPEC.md §3.5, §12): each calls an arm's per-thread body (common/arms/*.h, the same code the host replays)
// with a CUDA execution context, instantiated for every dtype combination and compile-time variant
// of every arm in the family lists. Built-in arm ids index the launch tables of conv.cu,
// conv_planted.cu and postconv.cu; registered arms launch through their registry entry's hook.
#pragma once

#include "common/arms/conv_list.h"
#include "common/arms/postconv_list.h"
#include "common/arms/update_list.h"
#include "common/backend_ops.h"
#include "cuda/cuda_util.h"
#include "cuda/kernel_of.cuh"

#include <string>

namespace gdn {
namespace cudaarm {

using conv::bf16_bits;

// ----------------------------------------------------------------- conv (1-D grid: programs can exceed gridDim.y)
template <class Arm, class TX, class TO, class M, int V>
__global__ void __launch_bounds__(Arm::spec.threads, Arm::spec.min_blocks) conv_kernel(const conv::Params p) {
  extern __shared__ __align__(16) float gdn_smem[];
  exec::CudaThread<false> t{p.grid_x, 0, gdn_smem};
  Arm::template body<TX, TO, M, V>(p, t);
}

// "conv vec kernel", "post-conv tree kernel": what a launch error names.
inline std::string kernel_name(const registry::Entry& e) {
  registry::Family f = registry::kConv;
  registry::family_of_op(e.info.op, &f);
  return std::string(registry::family_name(f)) + " " + e.info.name + " kernel";
}

template <class Arm, class TX, class TO, class M, int V = 0>
gdn_status conv_variant(gdn_backend* b, const ConvPlan& plan, cudaStream_t stream) {
  if constexpr (V < Arm::kVariants) {
    if (plan.variant != V) return conv_variant<Arm, TX, TO, M, V + 1>(b, plan, stream);
    const gdn_launch_contract& ct = plan.contract;
    const unsigned blocks = (unsigned)((int64_t)ct.grid_x * ct.grid_y);
    using K = KernelOf<Arm, TO, M, V>;
    conv_kernel<typename K::arm, TX, TO, M, K::variant><<<blocks, (unsigned)ct.threads_per_block, (size_t)ct.shared_bytes, stream>>>(plan.params);
    return cuda_check_launch(b, kernel_name(*plan.arm).c_str());
  } else {
    return fail(b, GDN_ERR_INTERNAL, "conv launch: arm %s has no variant %d", plan.arm->info.name, (int)plan.variant);
  }
}

template <class Arm, class M>
gdn_status conv_arm(gdn_backend* b, const ConvPlan& plan, cudaStream_t stream) {
  switch (plan.combo) {
    case 0: return conv_variant<Arm, float, float, M>(b, plan, stream);
    case 1: return conv_variant<Arm, float, bf16_bits, M>(b, plan, stream);
    case 2: return conv_variant<Arm, bf16_bits, float, M>(b, plan, stream);
    case 3: return conv_variant<Arm, bf16_bits, bf16_bits, M>(b, plan, stream);
    default: return fail(b, GDN_ERR_INTERNAL, "conv launch: dtype combination %d", (int)plan.combo);
  }
}

using ConvLaunch = gdn_status (*)(gdn_backend*, const ConvPlan&, cudaStream_t);
// conv.cu: the production builds; conv_planted.cu: the planted-mutant builds (a separate file so the
// two compile in parallel). Indexed by built-in arm id.
extern const ConvLaunch kConvProduction[];
extern const ConvLaunch kConvPlanted[];

// ----------------------------------------------------------------- conv update (2-D grid: channel tiles x B)
template <class Arm, class TX, int V>
__global__ void __launch_bounds__(Arm::spec.threads, Arm::spec.min_blocks) update_kernel(const __grid_constant__ update::Params p) {
  extern __shared__ __align__(16) float gdn_smem[];
  exec::CudaThread<true> t{gridDim.x, gridDim.y, gdn_smem};
  Arm::template body<TX, NoMutant, V>(p, t);
}

template <class Arm, class TX, int V = 0>
gdn_status update_variant(gdn_backend* b, const UpdatePlan& plan, cudaStream_t stream) {
  if constexpr (V < Arm::kVariants) {
    if (plan.variant != V) return update_variant<Arm, TX, V + 1>(b, plan, stream);
    const dim3 grid((unsigned)plan.grid_x, (unsigned)plan.grid_y);
    update_kernel<Arm, TX, V><<<grid, (unsigned)plan.threads, (size_t)plan.arm->shared_bytes(plan.params.K), stream>>>(
        plan.params);
    return cuda_check_launch(b, kernel_name(*plan.arm).c_str());
  } else {
    return fail(b, GDN_ERR_INTERNAL, "conv update launch: arm %s has no variant %d", plan.arm->info.name, (int)plan.variant);
  }
}

template <class Arm>
gdn_status update_arm(gdn_backend* b, const UpdatePlan& plan, cudaStream_t stream) {
  return plan.combo == 1 ? update_variant<Arm, bf16_bits>(b, plan, stream) : update_variant<Arm, float>(b, plan, stream);
}

// ----------------------------------------------------------------- post-conv (2-D grid of the arm's layout)
template <class Arm, class TC, class TQ, class TG, int V>
__global__ void __launch_bounds__(Arm::spec.threads, Arm::spec.min_blocks) postconv_kernel(const postconv::Params p) {
  extern __shared__ __align__(16) float gdn_smem[];
  exec::CudaThread<true> t{gridDim.x, gridDim.y, gdn_smem};
  Arm::template body<TC, TQ, TG, NoMutant, V>(p, t);
}

template <class Arm, class TC, class TQ, class TG, int V = 0>
gdn_status postconv_variant(gdn_backend* b, const PostconvPlan& plan, cudaStream_t stream) {
  if constexpr (V < Arm::kVariants) {
    if (plan.variant != V) return postconv_variant<Arm, TC, TQ, TG, V + 1>(b, plan, stream);
    const dim3 grid((unsigned)plan.result.grid_x, (unsigned)plan.result.grid_y);
    postconv_kernel<Arm, TC, TQ, TG, V>
        <<<grid, (unsigned)plan.result.threads_per_block, (size_t)plan.shared_bytes, stream>>>(plan.params);
    return cuda_check_launch(b, kernel_name(*plan.arm).c_str());
  } else {
    return fail(b, GDN_ERR_INTERNAL, "post-conv launch: arm %s has no variant %d", plan.arm->info.name, (int)plan.variant);
  }
}

template <class Arm>
gdn_status postconv_arm(gdn_backend* b, const PostconvPlan& plan, cudaStream_t stream) {
  switch (plan.combo) {
    case 0: return postconv_variant<Arm, float, float, float>(b, plan, stream);
    case 1: return postconv_variant<Arm, float, float, bf16_bits>(b, plan, stream);
    case 2: return postconv_variant<Arm, float, bf16_bits, float>(b, plan, stream);
    case 3: return postconv_variant<Arm, float, bf16_bits, bf16_bits>(b, plan, stream);
    case 4: return postconv_variant<Arm, bf16_bits, float, float>(b, plan, stream);
    case 5: return postconv_variant<Arm, bf16_bits, float, bf16_bits>(b, plan, stream);
    case 6: return postconv_variant<Arm, bf16_bits, bf16_bits, float>(b, plan, stream);
    case 7: return postconv_variant<Arm, bf16_bits, bf16_bits, bf16_bits>(b, plan, stream);
    default: return fail(b, GDN_ERR_INTERNAL, "post-conv launch: dtype combination %d", (int)plan.combo);
  }
}

// A registered arm (id past the built-ins): its own launch hook, or a clear refusal.
template <class Params>
gdn_status registered_launch(gdn_backend* b, const registry::Entry& e, const Params& p, int combo, int variant,
                             uint32_t gx, uint32_t gy, uint32_t threads, uint32_t shared, cudaStream_t stream) {
  if (e.cuda_launch == nullptr)
    return fail(b, GDN_ERR_UNSUPPORTED, "arm %s: has no CUDA build (registered for the host backend only)", e.info.name);
  return e.cuda_launch(b, e, &p, sizeof p, combo, variant, gx, gy, threads, shared, stream);
}

}  // namespace cudaarm
}  // namespace gdn
