// replay_host.cpp — every arm of every op family on the host backend, through one replay loop
// (docs/SPEC.md, "Arms and the execution interface"): the planned grid's blocks in the plan's order
// (forward, reverse, a seeded shuffle or an explicit permutation: conv only), each block's threads
// calling the arm's per-thread body — the same body the CUDA kernel runs — through common/exec.h.
// Arms that declare barriers or shuffles run their threads as cooperative fibers; the others as a
// plain loop.
#include "common/backend_ops.h"
#include "common/exec.h"

#include <cinttypes>

namespace gdn {
namespace host {
namespace {

gdn_status replay(gdn_backend* b, registry::Family family, const registry::Entry& e, const void* params, int combo,
                  int build, int variant, const exec::HostGrid& grid) {
  const exec::HostThreadFn fn =
      combo >= 0 && combo < registry::kMaxCombos && variant >= 0 && variant < registry::kMaxVariants
          ? e.host[combo][build][variant]
          : nullptr;
  if (fn == nullptr)
    return fail(b, GDN_ERR_UNSUPPORTED, "%s arm %s: no host build for dtype combination %d%s (variant %d)",
                registry::family_name(family), e.info.name, combo, build ? " with planted mutants" : "", variant);
  int64_t block = -1;
  const int32_t fault = exec::run_host_grid(grid, fn, params, &block);
  if (fault != exec::kFaultNone)
    return fail(b, GDN_ERR_ARM_FAULT, "%s arm %s: block %" PRId64 ": %s", registry::family_name(family), e.info.name,
                block, exec::host_fault_text(fault));
  return GDN_OK;
}

}  // namespace

gdn_status conv_run(gdn_backend* b, const ConvPlan& plan) {
  exec::HostGrid g;
  g.grid_x = plan.contract.grid_x;
  g.grid_y = plan.contract.grid_y;
  g.threads = plan.contract.threads_per_block;
  g.shared_bytes = (size_t)plan.contract.shared_bytes;
  g.order = plan.order.empty() ? nullptr : plan.order.data();
  g.cooperative = plan.arm->cooperative();
  return replay(b, registry::kConv, *plan.arm, &plan.params, plan.combo, plan.build, plan.variant, g);
}

gdn_status update_run(gdn_backend* b, const UpdatePlan& plan) {
  exec::HostGrid g;
  g.grid_x = plan.grid_x;
  g.grid_y = plan.grid_y;
  g.threads = plan.threads;
  g.shared_bytes = (size_t)plan.arm->shared_bytes(plan.params.K);
  g.cooperative = plan.arm->cooperative();
  return replay(b, registry::kUpdate, *plan.arm, &plan.params, plan.combo, 0, plan.variant, g);
}

gdn_status postconv_run(gdn_backend* b, const PostconvPlan& plan) {
  exec::HostGrid g;
  g.grid_x = plan.result.grid_x;
  g.grid_y = plan.result.grid_y;
  g.threads = plan.result.threads_per_block;
  g.shared_bytes = (size_t)plan.shared_bytes;
  g.cooperative = plan.arm->cooperative();
  return replay(b, registry::kPostconv, *plan.arm, &plan.params, plan.combo, 0, plan.variant, g);
}

}  // namespace host
}  // namespace gdn
