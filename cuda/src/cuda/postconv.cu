// postconv.cu — the post-conv op on the CUDA backend: every arm of common/arms/postconv_list.h
// through the generic kernel of cuda/arm_launch.cuh (tree: a shared-memory tree per (token, head
// slot); token-tile: lane folds and xor shuffles per (head slot, 16 tokens); seq4: the planted
// mutant; vec-tile: the token tile with 16-byte q/k rows), and the launch by arm id.
#include "cuda/arm_launch.cuh"

namespace gdn {
namespace cudaarm {

using PostconvLaunch = gdn_status (*)(gdn_backend*, const PostconvPlan&, cudaStream_t);
#define GDN_POSTCONV(Arm) &postconv_arm<Arm>,
const PostconvLaunch kPostconv[] = {GDN_POSTCONV_ARM_LIST(GDN_POSTCONV)};
#undef GDN_POSTCONV

}  // namespace cudaarm

namespace cuda {

gdn_status postconv_launch(gdn_backend* b, const PostconvPlan& plan) {
  if (plan.result.grid_x == 0 || plan.result.grid_y == 0) return GDN_OK;  // T = 0: nothing to launch
  const gdn_status bound = cuda_bind(b);  // koffi may call from a worker thread
  if (bound != GDN_OK) return bound;
  cudaStream_t stream = cuda_state(b)->stream;
  const int32_t id = plan.arm->info.id;
  if (id < registry::builtin_count(registry::kPostconv)) return cudaarm::kPostconv[id](b, plan, stream);
  return cudaarm::registered_launch(b, *plan.arm, plan.params, plan.combo, plan.variant, (uint32_t)plan.result.grid_x,
                                    (uint32_t)plan.result.grid_y, (uint32_t)plan.result.threads_per_block,
                                    (uint32_t)plan.shared_bytes, stream);
}

}  // namespace cuda
}  // namespace gdn
