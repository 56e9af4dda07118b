// replay_host.cpp — every arm of every op family on the host backend, through one replay loop
// (docs/SPEC.md §3.5, §12): the planned grid's blocks in the plan's order
// (forward, reverse, a seeded shuffle or an explicit permutation: conv only), each block's threads
// calling the arm's per-thread body — the same body the CUDA kernel runs — through common/exec.h.
// Arms that declare barriers or shuffles run their threads as cooperative fibers; the others as a
// plain loop.
#include "common/backend_ops.h"
#include "common/exec.h"
#include "host/thread_pool.h"

#include <chrono>
#include <cinttypes>
#include <vector>

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
  const auto t0 = std::chrono::steady_clock::now();
  const int32_t fault = exec::run_host_grid(grid, fn, params, &block);
  b->last_kernel_ns.store((uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
                          std::memory_order_relaxed);
  if (fault != exec::kFaultNone)
    return fail(b, GDN_ERR_ARM_FAULT, "%s arm %s: block %" PRId64 ": %s", registry::family_name(family), e.info.name,
                block, exec::host_fault_text(fault));
  return GDN_OK;
}

// Replay threads for a launch (host/thread_pool.h). Parallel only where the bits cannot depend on
// the order of blocks: built-in arms of the production build, whose blocks write disjoint outputs
// (the planted-mutant build is excluded: NO_TAIL_GUARD spills into the next block's row); arms
// registered at run time are replayed serially, since nothing proves their blocks independent. The
// conv caller also requires the forward schedule and a mapping other than exact-racy. Launches of
// little work stay serial: waking the pool costs more than it saves.
constexpr int64_t kParallelMinThreadBodies = 1024;

int parallel_threads(gdn_backend* b, const registry::Entry& e, int build, const exec::HostGrid& g) {
  if (build != 0 || (e.info.flags & GDN_ARM_USER) != 0) return 1;
  const int64_t blocks = g.grid_x * g.grid_y;
  if (blocks < 2 || blocks * g.threads < kParallelMinThreadBodies) return 1;
  return host::effective_threads(b->host_threads);
}

// The index lists a plan validated and built its launch from (the sequence offsets, the decode slots) are replayed
// from the plan's host copy, never read again from the caller's buffer: an output written into that buffer during
// the replay (possible only if an overlap check were wrong) cannot send a block outside the rows or slots that were
// validated, and a test of the check fails on its assertion instead of a crash.
template <class Params>
Params with_validated_list(const Params& params, const int32_t* Params::*list, const std::vector<int32_t>& validated) {
  Params p = params;
  if (p.*list != nullptr) p.*list = validated.data();
  return p;
}

}  // namespace

gdn_status conv_run(gdn_backend* b, const ConvPlan& plan) {
  exec::HostGrid g;
  g.grid_x = plan.contract.grid_x;
  g.grid_y = plan.contract.grid_y;
  g.threads = plan.contract.threads_per_block;
  g.shared_bytes = (size_t)plan.contract.shared_bytes;
  g.cooperative = plan.arm->cooperative();
  g.barriers = plan.arm->barriers();
  // The forward schedule of a correct mapping: blocks in any order (the racy mapping's final state
  // depends on which chunk writes last, so it keeps the serial order, as every other schedule does).
  if (plan.schedule_kind == GDN_SCHED_FORWARD && plan.contract.mapping_ran != GDN_MAP_EXACT_RACY) {
    g.order = nullptr;
    g.parallel = parallel_threads(b, *plan.arm, plan.build, g);
  } else {
    g.order = plan.order.empty() ? nullptr : plan.order.data();
  }
  const conv::Params p = with_validated_list(plan.params, &conv::Params::qsl, plan.qsl);
  return replay(b, registry::kConv, *plan.arm, &p, plan.combo, plan.build, plan.variant, g);
}

gdn_status update_run(gdn_backend* b, const UpdatePlan& plan) {
  exec::HostGrid g;
  g.grid_x = plan.grid_x;
  g.grid_y = plan.grid_y;
  g.threads = plan.threads;
  g.shared_bytes = (size_t)plan.arm->shared_bytes(plan.params.K);
  g.cooperative = plan.arm->cooperative();
  g.barriers = plan.arm->barriers();
  g.parallel = parallel_threads(b, *plan.arm, 0, g);
  const update::Params p = with_validated_list(plan.params, &update::Params::slots, plan.slots);
  return replay(b, registry::kUpdate, *plan.arm, &p, plan.combo, 0, plan.variant, g);
}

gdn_status postconv_run(gdn_backend* b, const PostconvPlan& plan) {
  exec::HostGrid g;
  g.grid_x = plan.result.grid_x;
  g.grid_y = plan.result.grid_y;
  g.threads = plan.result.threads_per_block;
  g.shared_bytes = (size_t)plan.shared_bytes;
  g.cooperative = plan.arm->cooperative();
  g.barriers = plan.arm->barriers();
  g.parallel = parallel_threads(b, *plan.arm, 0, g);
  return replay(b, registry::kPostconv, *plan.arm, &plan.params, plan.combo, 0, plan.variant, g);
}

gdn_status fused_run(gdn_backend* b, const FusedPlan& plan) {
  exec::HostGrid g;
  g.grid_x = plan.result.grid_x;
  g.grid_y = plan.result.grid_y;
  g.threads = plan.result.threads_per_block;
  g.cooperative = plan.arm->cooperative();
  g.barriers = plan.arm->barriers();
  // Blocks are independent: chunk 0's thread for (sequence, channel) alone reads the old state and
  // writes the final one (common/arms/fused_common.h, "owned by construction").
  g.parallel = parallel_threads(b, *plan.arm, plan.build, g);
  const fused::Params p = with_validated_list(plan.params, &fused::Params::qsl, plan.qsl);
  return replay(b, registry::kFused, *plan.arm, &p, plan.combo, plan.build, plan.variant, g);
}

}  // namespace host
}  // namespace gdn
