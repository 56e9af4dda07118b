// conv.cu — the causal-conv kernels on the CUDA backend: each arm's per-thread body
// (common/conv_arms.h, common/update_kernels.h) wrapped in a __global__.
//
// Prefill launches are one-dimensional over the linear block index y * grid_x + x of the contract's
// (channel tiles, programs) grid, so any number of programs fits and the hardware sees blocks in the
// same order as the host backend's FORWARD schedule.
#include "common/backend_ops.h"
#include "common/conv_arms.h"
#include "common/update_kernels.h"
#include "cuda/cuda_util.h"

#include <memory>

namespace gdn {
namespace {

using conv::bf16_bits;
using conv::kThreads;

__device__ __forceinline__ int64_t block_x(const conv::Params& p) { return (int64_t)blockIdx.x % p.grid_x; }
__device__ __forceinline__ int64_t block_y(const conv::Params& p) { return (int64_t)blockIdx.x / p.grid_x; }

template <class TX, class TO>
__global__ void __launch_bounds__(kThreads) conv_scalar_kernel(const conv::Params p) {
  conv::scalar_thread<TX, TO>(p, block_x(p), block_y(p), threadIdx.x);
}

template <class TX, class TO>
__global__ void __launch_bounds__(kThreads) conv_tiled_kernel(const conv::Params p) {
  extern __shared__ float sm[];  // (16 + K-1) rows x 32 channels
  const int64_t bx = block_x(p);
  const conv::TiledBlock tb = conv::tiled_block(p, block_y(p));
  if (tb.s.end == tb.s.start) return;  // whole block
  const int tid = threadIdx.x;
  conv::tiled_init<TX>(p, tb, sm, bx, tid);
  const int64_t tiles = conv::tiled_tiles(tb.s);
  for (int64_t i = 0; i < tiles; ++i) {
    __syncthreads();
    conv::tiled_load<TX>(p, tb, sm, bx, tid, i);
    __syncthreads();
    conv::tiled_compute<TX, TO>(p, tb, sm, bx, tid, i);
    if (i + 1 < tiles) {
      __syncthreads();
      conv::tiled_shift(p, sm, tid);
    }
  }
  __syncthreads();
  conv::tiled_final_state(p, tb, sm, bx, tid);
}

template <class TX, class TO>
__global__ void __launch_bounds__(kThreads) conv_reg_kernel(const conv::Params p) {
  conv::reg_thread<TX, TO>(p, block_x(p), block_y(p), threadIdx.x);
}

template <class TX, class TO>
__global__ void __launch_bounds__(kThreads) conv_reg_k4_kernel(const conv::Params p) {
  conv::reg_k4_thread<TX, TO>(p, block_x(p), block_y(p), threadIdx.x);
}

template <class TX, class TO>
__global__ void __launch_bounds__(kThreads) conv_reg_k4x2_kernel(const conv::Params p) {
  conv::reg_k4x2_thread<TX, TO>(p, block_x(p), block_y(p), threadIdx.x);
}

// Registers capped at 128 (4 blocks per SM): measured fastest on an H200 (cuda/tests/vec_tune.cu).
template <class TX, class TO, int W>
__global__ void __launch_bounds__(kThreads, conv::kVecMinBlocks) conv_vec_kernel(const conv::Params p) {
  conv::vec_thread<TX, TO, W>(p, block_x(p), block_y(p), threadIdx.x);
}

template <class TX, class TO>
gdn_status launch_typed(gdn_backend* b, const ConvPlan& plan, cudaStream_t stream) {
  const conv::Params& p = plan.params;
  const gdn_launch_contract& ct = plan.contract;
  const unsigned blocks = (unsigned)((int64_t)ct.grid_x * ct.grid_y);
  if (blocks == 0) return GDN_OK;
  const char* name = "conv kernel";
  switch (ct.arm_ran) {
    case GDN_CONV_SCALAR:
      conv_scalar_kernel<TX, TO><<<blocks, kThreads, 0, stream>>>(p);
      name = "conv scalar kernel";
      break;
    case GDN_CONV_TILED:
      conv_tiled_kernel<TX, TO><<<blocks, kThreads, (size_t)ct.shared_bytes, stream>>>(p);
      name = "conv tiled kernel";
      break;
    case GDN_CONV_REG:
      conv_reg_kernel<TX, TO><<<blocks, kThreads, 0, stream>>>(p);
      name = "conv reg kernel";
      break;
    case GDN_CONV_REG_K4:
      conv_reg_k4_kernel<TX, TO><<<blocks, kThreads, 0, stream>>>(p);
      name = "conv reg-k4 kernel";
      break;
    case GDN_CONV_REG_K4X2:
      conv_reg_k4x2_kernel<TX, TO><<<blocks, kThreads, 0, stream>>>(p);
      name = "conv reg-k4x2 kernel";
      break;
    case GDN_CONV_VEC:
      if (p.K <= 4) conv_vec_kernel<TX, TO, 4><<<blocks, kThreads, 0, stream>>>(p);
      else conv_vec_kernel<TX, TO, conv::kMaxK><<<blocks, kThreads, 0, stream>>>(p);
      name = "conv vec kernel";
      break;
    default: return fail(b, GDN_ERR_INTERNAL, "conv launch: arm %d was not planned", (int)ct.arm_ran);
  }
  return cuda_check_launch(b, name);
}

template <class TX>
gdn_status update_typed(gdn_backend* b, const UpdatePlan& plan, cudaStream_t stream);

template <class TX>
__global__ void __launch_bounds__(update::kThreads) update_reference_kernel(const update::Params p) {
  update::reference_thread<TX>(p, blockIdx.x, blockIdx.y, threadIdx.x);
}

template <class TX, int W>
__global__ void __launch_bounds__(update::kThreads) update_reg_kernel(const update::Params p) {
  update::reg_thread<TX, W>(p, blockIdx.x, blockIdx.y, threadIdx.x);
}

template <class TX>
gdn_status update_typed(gdn_backend* b, const UpdatePlan& plan, cudaStream_t stream) {
  const dim3 grid((unsigned)plan.grid_x, (unsigned)plan.grid_y);
  if (plan.arm == GDN_UPDATE_REFERENCE) update_reference_kernel<TX><<<grid, update::kThreads, 0, stream>>>(plan.params);
  else if (plan.params.K == 4) update_reg_kernel<TX, 4><<<grid, update::kThreads, 0, stream>>>(plan.params);
  else update_reg_kernel<TX, conv::kMaxK><<<grid, update::kThreads, 0, stream>>>(plan.params);
  return cuda_check_launch(b, plan.arm == GDN_UPDATE_REFERENCE ? "conv update reference kernel" : "conv update reg kernel");
}

}  // namespace

namespace cuda {

gdn_status conv_prepare(gdn_backend* b, ConvPlan* plan) {
  if (plan->programs.empty()) {
    plan->params.programs = nullptr;
    return GDN_OK;
  }
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  // A scratch block of the buffer cache (no cudaMalloc/cudaFree per call); it goes back to the cache
  // with the plan, which is safe in stream order (common/buffer_cache.h).
  const size_t bytes = plan->programs.size() * sizeof(int32_t);
  uint64_t addr = 0;
  st = b->cache->allocate(bytes, &addr);
  if (st == GDN_ERR_OUT_OF_MEMORY)
    return fail(b, st, "conv: out of device memory for the program list (%llu bytes)", (unsigned long long)bytes);
  if (st != GDN_OK) return st;
  BufferCache* cache = b->cache.get();
  void* d = reinterpret_cast<void*>((uintptr_t)addr);
  plan->device_programs = std::shared_ptr<void>(d, [cache](void* q) { cache->release((uint64_t)(uintptr_t)q); });
  // From pageable memory the copy returns once the source is staged, so the vector may go at once;
  // the launch that reads the list follows it on the stream. No synchronisation needed.
  st = cuda_check(b, cudaMemcpyAsync(d, plan->programs.data(), bytes, cudaMemcpyHostToDevice, cuda_state(b)->stream),
                  "conv: upload of the program list");
  plan->params.programs = static_cast<const int32_t*>(d);
  return st;
}

gdn_status conv_launch(gdn_backend* b, const ConvPlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  if (!plan.programs.empty() && !plan.device_programs)
    return fail(b, GDN_ERR_INTERNAL, "conv launch: the program list was not prepared");
  cudaStream_t stream = cuda_state(b)->stream;
  const bool xb = plan.x_dtype == GDN_BF16, ob = plan.out_dtype == GDN_BF16;
  if (xb && ob) return launch_typed<bf16_bits, bf16_bits>(b, plan, stream);
  if (xb) return launch_typed<bf16_bits, float>(b, plan, stream);
  if (ob) return launch_typed<float, bf16_bits>(b, plan, stream);
  return launch_typed<float, float>(b, plan, stream);
}

gdn_status update_launch(gdn_backend* b, const UpdatePlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  cudaStream_t stream = cuda_state(b)->stream;
  return plan.x_dtype == GDN_BF16 ? update_typed<bf16_bits>(b, plan, stream) : update_typed<float>(b, plan, stream);
}

}  // namespace cuda
}  // namespace gdn
