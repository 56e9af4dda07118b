// fused.cu — the fused conv -> post-conv op on the CUDA backend: the per-thread body of
// common/fused_kernels.h (shared with the host replay) wrapped in a __global__, launched
// one-dimensionally over the (head slots, programs) grid with slots varying fastest.
#include "common/backend_ops.h"
#include "common/exec.h"
#include "common/fused_kernels.h"
#include "cuda/cuda_util.h"

#include <memory>

namespace gdn {
namespace {

// 128 threads; at most 128 registers each (4 blocks per SM), as the vec conv arm measured best.
template <class TX, class TC, class TQ, int W, bool kPlanted>
__global__ void __launch_bounds__(fused::kThreads, 4) fused_head_tile_kernel(const fused::Params p, int64_t gx, int64_t gy) {
  exec::CudaThread<false> t{gx, gy, nullptr};
  fused::head_tile_body<TX, TC, TQ, W, kPlanted>(p, t);
}

}  // namespace

namespace cuda {

gdn_status fused_prepare(gdn_backend* b, FusedPlan* plan) {
  if (plan->programs.empty()) {
    plan->params.programs = nullptr;
    return GDN_OK;
  }
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  void* d = nullptr;
  const size_t bytes = plan->programs.size() * sizeof(int32_t);
  st = cuda_check(b, cudaMalloc(&d, bytes), "fused: cudaMalloc of the program list");
  if (st != GDN_OK) return st;
  plan->device_programs = std::shared_ptr<void>(d, [](void* q) { cudaFree(q); });
  cudaStream_t stream = cuda_state(b)->stream;
  st = cuda_check(b, cudaMemcpyAsync(d, plan->programs.data(), bytes, cudaMemcpyHostToDevice, stream),
                  "fused: upload of the program list");
  if (st == GDN_OK) st = cuda_check(b, cudaStreamSynchronize(stream), "fused: upload of the program list");
  plan->params.programs = static_cast<const int32_t*>(d);
  return st;
}

gdn_status fused_launch(gdn_backend* b, const FusedPlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  const gdn_fused_result& r = plan.result;
  const int64_t blocks = (int64_t)r.grid_x * r.grid_y;
  if (blocks == 0) return GDN_OK;
  if (!plan.device_programs) return fail(b, GDN_ERR_INTERNAL, "fused launch: the program list was not prepared");
  cudaStream_t stream = cuda_state(b)->stream;
  const fused::Params& p = plan.params;
  const bool planted = p.mutant != GDN_FUSED_MUTANT_NONE;
  const int64_t gx = r.grid_x, gy = r.grid_y;
  fused::dispatch_dtypes(plan.x_dtype, plan.conv_dtype, plan.qkv_dtype, [&](auto tx, auto tc, auto tq) {
    using TX = typename decltype(tx)::type;
    using TC = typename decltype(tc)::type;
    using TQ = typename decltype(tq)::type;
    if (planted) fused_head_tile_kernel<TX, TC, TQ, conv::kMaxK, true><<<(unsigned)blocks, fused::kThreads, 0, stream>>>(p, gx, gy);
    else if (p.K <= 4) fused_head_tile_kernel<TX, TC, TQ, 4, false><<<(unsigned)blocks, fused::kThreads, 0, stream>>>(p, gx, gy);
    else fused_head_tile_kernel<TX, TC, TQ, conv::kMaxK, false><<<(unsigned)blocks, fused::kThreads, 0, stream>>>(p, gx, gy);
  });
  return cuda_check_launch(b, "fused head-tile kernel");
}

}  // namespace cuda
}  // namespace gdn
