// conv.cu — the causal-conv ops on the CUDA backend: the production build of every conv and conv
// update arm (cuda/arm_launch.cuh's generic kernels over the family lists), the program-list upload,
// and the launch by arm id.
//
// Prefill launches are one-dimensional over the linear block index y * grid_x + x of the contract's
// (channel tiles, programs) grid, so any number of programs fits and the hardware sees blocks in the
// same order as the host backend's FORWARD schedule.
#include "cuda/arm_launch.cuh"

#include <memory>

namespace gdn {
namespace cudaarm {

#define GDN_PRODUCTION(Arm) &conv_arm<Arm, NoMutant>,
const ConvLaunch kConvProduction[] = {GDN_CONV_ARM_LIST(GDN_PRODUCTION)};
#undef GDN_PRODUCTION

using UpdateLaunch = gdn_status (*)(gdn_backend*, const UpdatePlan&, cudaStream_t);
#define GDN_UPDATE(Arm) &update_arm<Arm>,
const UpdateLaunch kUpdate[] = {GDN_UPDATE_ARM_LIST(GDN_UPDATE)};
#undef GDN_UPDATE

}  // namespace cudaarm

namespace cuda {

gdn_status conv_prepare(gdn_backend* b, ConvPlan* plan) {
  if (plan->lists_implicit) return GDN_OK;  // one sequence: no list (common/plan_lists.h)
  return upload_plan_lists(b, plan->programs, plan->qsl_from_host ? &plan->qsl : nullptr, &plan->device_programs,
                           &plan->params.programs, &plan->params.qsl, "conv");
}

gdn_status conv_launch(gdn_backend* b, const ConvPlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  if ((!plan.programs.empty() || plan.qsl_from_host) && !plan.lists_implicit && !plan.device_programs)
    return fail(b, GDN_ERR_INTERNAL, "conv launch: the program list (or the host offsets) was not prepared");
  const gdn_launch_contract& ct = plan.contract;
  if ((int64_t)ct.grid_x * ct.grid_y == 0) return GDN_OK;
  cudaStream_t stream = cuda_state(b)->stream;
  const int32_t id = plan.arm->info.id;
  if (id < registry::builtin_count(registry::kConv))
    return (plan.build ? cudaarm::kConvPlanted : cudaarm::kConvProduction)[id](b, plan, stream);
  if (plan.build) return fail(b, GDN_ERR_UNSUPPORTED, "args.mutant: arm %s has no planted-mutant build", plan.arm->info.name);
  return cudaarm::registered_launch(b, *plan.arm, plan.params, plan.combo, plan.variant,
                                    (uint32_t)((int64_t)ct.grid_x * ct.grid_y), 1, (uint32_t)ct.threads_per_block,
                                    (uint32_t)ct.shared_bytes, stream);
}

gdn_status update_prepare(gdn_backend* b, UpdatePlan* plan) {
  if (!plan->slots_from_host || plan->slots_inline) return GDN_OK;  // the caller's device array, or in the parameters
  return upload_program_list(b, plan->slots, &plan->device_slots, &plan->params.slots, "conv update");
}

gdn_status update_launch(gdn_backend* b, const UpdatePlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  if (plan.slots_from_host && !plan.slots_inline && !plan.device_slots)
    return fail(b, GDN_ERR_INTERNAL, "conv update launch: the host copy of the slots was not prepared");
  cudaStream_t stream = cuda_state(b)->stream;
  const int32_t id = plan.arm->info.id;
  if (id < registry::builtin_count(registry::kUpdate)) return cudaarm::kUpdate[id](b, plan, stream);
  return cudaarm::registered_launch(b, *plan.arm, plan.params, plan.combo, plan.variant, (uint32_t)plan.grid_x,
                                    (uint32_t)plan.grid_y, (uint32_t)plan.threads,
                                    (uint32_t)plan.arm->shared_bytes(plan.params.K), stream);
}

}  // namespace cuda
}  // namespace gdn
