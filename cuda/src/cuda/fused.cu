// fused.cu — the fused conv -> post-conv op on the CUDA backend: every arm of
// common/arms/fused_list.h through one generic kernel (the per-thread body the host replays), launched
// one-dimensionally over the (head slots, programs) grid with slots varying fastest, and the launch by
// arm id.
#include "common/arms/fused_list.h"
#include "common/backend_ops.h"
#include "cuda/cuda_util.h"
#include "cuda/kernel_of.cuh"

#include <memory>
#include <string>

namespace gdn {
namespace cudaarm {

using conv::bf16_bits;

template <class Arm, class TX, class TC, class TQ, class M, int V>
__global__ void __launch_bounds__(Arm::spec.threads, Arm::spec.min_blocks)
    fused_kernel(const fused::Params p, int64_t gx, int64_t gy) {
  exec::CudaThread<false> t{gx, gy, nullptr};
  Arm::template body<TX, TC, TQ, M, V>(p, t);
}

// The planted build exists for the last variant only (as on the host: arms_host.cpp).
template <class Arm, class TX, class TC, class TQ, class M, int V = 0>
gdn_status fused_variant(gdn_backend* b, const FusedPlan& plan, cudaStream_t stream) {
  if constexpr (M::kPlanted && V < Arm::kVariants - 1) {
    return fused_variant<Arm, TX, TC, TQ, M, V + 1>(b, plan, stream);  // not built: no kernel instantiated
  } else if constexpr (V < Arm::kVariants) {
    if (plan.variant != V) return fused_variant<Arm, TX, TC, TQ, M, V + 1>(b, plan, stream);
    const int64_t gx = plan.result.grid_x, gy = plan.result.grid_y;
    using K = KernelOf<Arm, TC, M, V>;
    fused_kernel<typename K::arm, TX, TC, TQ, M, K::variant><<<(unsigned)(gx * gy), (unsigned)plan.result.threads_per_block, 0, stream>>>(
        plan.params, gx, gy);
    return cuda_check_launch(b, (std::string("fused ") + plan.arm->info.name + " kernel").c_str());
  } else {
    return fail(b, GDN_ERR_INTERNAL, "fused launch: arm %s has no variant %d%s", plan.arm->info.name, (int)plan.variant,
                M::kPlanted ? " in its planted build" : "");
  }
}

template <class Arm, class M>
gdn_status fused_combo(gdn_backend* b, const FusedPlan& plan, cudaStream_t stream) {
  switch (plan.combo) {
    case 0: return fused_variant<Arm, float, float, float, M>(b, plan, stream);
    case 1: return fused_variant<Arm, float, float, bf16_bits, M>(b, plan, stream);
    case 2: return fused_variant<Arm, float, bf16_bits, float, M>(b, plan, stream);
    case 3: return fused_variant<Arm, float, bf16_bits, bf16_bits, M>(b, plan, stream);
    case 4: return fused_variant<Arm, bf16_bits, float, float, M>(b, plan, stream);
    case 5: return fused_variant<Arm, bf16_bits, float, bf16_bits, M>(b, plan, stream);
    case 6: return fused_variant<Arm, bf16_bits, bf16_bits, float, M>(b, plan, stream);
    case 7: return fused_variant<Arm, bf16_bits, bf16_bits, bf16_bits, M>(b, plan, stream);
    default: return fail(b, GDN_ERR_INTERNAL, "fused launch: dtype combination %d", (int)plan.combo);
  }
}

template <class Arm>
gdn_status fused_arm(gdn_backend* b, const FusedPlan& plan, cudaStream_t stream) {
  return plan.build ? fused_combo<Arm, fused::PlantedMutants>(b, plan, stream) : fused_combo<Arm, NoMutant>(b, plan, stream);
}

using FusedLaunch = gdn_status (*)(gdn_backend*, const FusedPlan&, cudaStream_t);
#define GDN_FUSED(Arm) &fused_arm<Arm>,
const FusedLaunch kFused[] = {GDN_FUSED_ARM_LIST(GDN_FUSED)};
#undef GDN_FUSED

}  // namespace cudaarm

namespace cuda {

gdn_status fused_prepare(gdn_backend* b, FusedPlan* plan) {
  if (plan->lists_implicit) return GDN_OK;  // one sequence: no list (common/plan_lists.h)
  return upload_plan_lists(b, plan->programs, plan->qsl_from_host ? &plan->qsl : nullptr, &plan->device_programs,
                           &plan->params.programs, &plan->params.qsl, "fused");
}

gdn_status fused_launch(gdn_backend* b, const FusedPlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  if ((int64_t)plan.result.grid_x * plan.result.grid_y == 0) return GDN_OK;
  if (!plan.lists_implicit && !plan.device_programs)
    return fail(b, GDN_ERR_INTERNAL, "fused launch: the program list was not prepared");
  const int32_t id = plan.arm->info.id;
  if (id < registry::builtin_count(registry::kFused)) return cudaarm::kFused[id](b, plan, cuda_state(b)->stream);
  return fail(b, GDN_ERR_UNSUPPORTED, "fused arm %s: registered arms of the fused op have no CUDA launch", plan.arm->info.name);
}

}  // namespace cuda
}  // namespace gdn
