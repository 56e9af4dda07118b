// conv_host.cpp — the host backend's causal conv: the kernels of common/conv_arms.h and
// common/update_kernels.h run over their (block, thread) index space. Blocks run one after the other
// in the plan's order (forward, reverse, seeded shuffle or an explicit permutation), the threads of
// a block one after the other; the tiled arm runs phase by phase (each phase over all threads, where
// the GPU has a barrier).
#include "common/backend_ops.h"
#include "common/conv_arms.h"
#include "common/update_kernels.h"

#include <vector>

namespace gdn {
namespace host {
namespace {

using conv::bf16_bits;
using conv::kThreads;

template <class Thread>
void run_threads_per_block(const ConvPlan& plan, Thread thread) {
  const int64_t gx = plan.contract.grid_x;
  for (const int64_t lin : plan.order) {
    const int64_t bx = lin % gx, by = lin / gx;
    for (int tid = 0; tid < kThreads; ++tid) thread(plan.params, bx, by, tid);
  }
}

template <class TX, class TO>
void tiled_block(const conv::Params& p, int64_t bx, int64_t by, float* sm) {
  const conv::TiledBlock tb = conv::tiled_block(p, by);
  if (tb.s.end == tb.s.start) return;
  for (int tid = 0; tid < kThreads; ++tid) conv::tiled_init<TX>(p, tb, sm, bx, tid);
  const int64_t tiles = conv::tiled_tiles(tb.s);
  for (int64_t i = 0; i < tiles; ++i) {
    for (int tid = 0; tid < kThreads; ++tid) conv::tiled_load<TX>(p, tb, sm, bx, tid, i);
    for (int tid = 0; tid < kThreads; ++tid) conv::tiled_compute<TX, TO>(p, tb, sm, bx, tid, i);
    if (i + 1 < tiles)
      for (int tid = 0; tid < kThreads; ++tid) conv::tiled_shift(p, sm, tid);
  }
  for (int tid = 0; tid < kThreads; ++tid) conv::tiled_final_state(p, tb, sm, bx, tid);
}

template <class TX, class TO>
void conv_run_typed(const ConvPlan& plan) {
  switch (plan.contract.arm_ran) {
    case GDN_CONV_SCALAR: run_threads_per_block(plan, conv::scalar_thread<TX, TO>); break;
    case GDN_CONV_TILED: {
      std::vector<float> sm((size_t)conv::tiled_rows(plan.params.K) * conv::kTiledTile, 0.0f);
      const int64_t gx = plan.contract.grid_x;
      for (const int64_t lin : plan.order) tiled_block<TX, TO>(plan.params, lin % gx, lin / gx, sm.data());
      break;
    }
    case GDN_CONV_REG: run_threads_per_block(plan, conv::reg_thread<TX, TO>); break;
    case GDN_CONV_REG_K4: run_threads_per_block(plan, conv::reg_k4_thread<TX, TO>); break;
    case GDN_CONV_REG_K4X2: run_threads_per_block(plan, conv::reg_k4x2_thread<TX, TO>); break;
    case GDN_CONV_VEC:
      if (plan.params.K <= 4) run_threads_per_block(plan, conv::vec_thread<TX, TO, 4>);
      else run_threads_per_block(plan, conv::vec_thread<TX, TO, conv::kMaxK>);
      break;
  }
}

template <class TX>
void update_run_typed(const UpdatePlan& plan) {
  const update::Params& p = plan.params;
  for (int64_t by = 0; by < plan.grid_y; ++by)
    for (int64_t bx = 0; bx < plan.grid_x; ++bx)
      for (int tid = 0; tid < update::kThreads; ++tid) {
        if (plan.arm == GDN_UPDATE_REFERENCE) update::reference_thread<TX>(p, bx, by, tid);
        else if (p.K == 4) update::reg_thread<TX, 4>(p, bx, by, tid);
        else update::reg_thread<TX, conv::kMaxK>(p, bx, by, tid);
      }
}

}  // namespace

void conv_run(const ConvPlan& plan) {
  const bool xb = plan.x_dtype == GDN_BF16, ob = plan.out_dtype == GDN_BF16;
  if (xb && ob) conv_run_typed<bf16_bits, bf16_bits>(plan);
  else if (xb) conv_run_typed<bf16_bits, float>(plan);
  else if (ob) conv_run_typed<float, bf16_bits>(plan);
  else conv_run_typed<float, float>(plan);
}

void update_run(const UpdatePlan& plan) {
  if (plan.x_dtype == GDN_BF16) update_run_typed<bf16_bits>(plan);
  else update_run_typed<float>(plan);
}

}  // namespace host
}  // namespace gdn
