// fused_host.cpp — the host backend's fused conv -> post-conv: the per-thread body of
// common/fused_kernels.h over the planned (head slots, programs) grid, blocks in forward order. The body
// shuffles within half-warps, so a block's threads run as cooperative fibers (common/exec.h): the
// shuffles have CUDA's semantics and the same lanes exchange the same values in the same order.
#include "common/backend_ops.h"
#include "common/exec.h"
#include "common/fused_kernels.h"

#include <cinttypes>

namespace gdn {
namespace host {

gdn_status fused_run(gdn_backend* b, const FusedPlan& plan) {
  const gdn_fused_result& r = plan.result;
  if ((int64_t)r.grid_x * r.grid_y == 0) return GDN_OK;
  exec::HostGrid grid;
  grid.grid_x = r.grid_x;
  grid.grid_y = r.grid_y;
  grid.threads = fused::kThreads;
  grid.cooperative = true;
  const fused::Params& p = plan.params;
  const bool planted = p.mutant != GDN_FUSED_MUTANT_NONE;
  int32_t fault = exec::kFaultNone;
  int64_t fault_block = -1;
  fused::dispatch_dtypes(plan.x_dtype, plan.conv_dtype, plan.qkv_dtype, [&](auto tx, auto tc, auto tq) {
    using TX = typename decltype(tx)::type;
    using TC = typename decltype(tc)::type;
    using TQ = typename decltype(tq)::type;
    if (planted) {
      fault = exec::run_host(grid, [&](exec::HostThread& t) { fused::head_tile_body<TX, TC, TQ, conv::kMaxK, true>(p, t); },
                             &fault_block);
    } else if (p.K <= 4) {
      fault = exec::run_host(grid, [&](exec::HostThread& t) { fused::head_tile_body<TX, TC, TQ, 4, false>(p, t); },
                             &fault_block);
    } else {
      fault = exec::run_host(grid, [&](exec::HostThread& t) { fused::head_tile_body<TX, TC, TQ, conv::kMaxK, false>(p, t); },
                             &fault_block);
    }
  });
  if (fault != exec::kFaultNone)
    return fail(b, GDN_ERR_INTERNAL, "fused head-tile (host): block %" PRId64 ": %s", fault_block,
                exec::host_fault_text(fault));
  return GDN_OK;
}

}  // namespace host
}  // namespace gdn
