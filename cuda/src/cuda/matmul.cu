// matmul.cu — gdn_matmul_nt on the CUDA backend: a plain shared-memory tiled kernel, 16 x 16 outputs
// per block, one per thread. Each output is acc = +0, then acc = fmaf(a[m][k], b[n][k], acc) for k
// ascending — the host loop's order, so both backends give the same bits. Correctness over speed.
#include "common/backend_ops.h"
#include "common/detmath.h"
#include "cuda/cuda_util.h"

namespace gdn {
namespace {

constexpr int kT = matmul::kTile;

__device__ __forceinline__ float in_at(const matmul::Params& p, const void* base, int64_t i) {
  return p.in_bf16 ? bf16_to_f32(static_cast<const uint16_t*>(base)[i]) : static_cast<const float*>(base)[i];
}

__global__ void __launch_bounds__(kT * kT) matmul_nt_kernel(const matmul::Params p) {
  __shared__ float as[kT][kT + 1], bs[kT][kT + 1];
  const int tx = threadIdx.x % kT, ty = threadIdx.x / kT;
  const int64_t m0 = (int64_t)blockIdx.y * kT, n0 = (int64_t)blockIdx.x * kT;
  float acc = 0.0f;
  for (int64_t k0 = 0; k0 < p.Kd; k0 += kT) {
    const int64_t k = k0 + tx;
    as[ty][tx] = (m0 + ty < p.M && k < p.Kd) ? in_at(p, p.a, (m0 + ty) * p.Kd + k) : 0.0f;
    bs[ty][tx] = (n0 + ty < p.N && k < p.Kd) ? in_at(p, p.b, (n0 + ty) * p.Kd + k) : 0.0f;
    __syncthreads();
    const int kn = p.Kd - k0 < kT ? (int)(p.Kd - k0) : kT;  // no padded terms: they could flip a -0
    for (int kk = 0; kk < kn; ++kk) acc = __fmaf_rn(as[ty][kk], bs[tx][kk], acc);
    __syncthreads();
  }
  const int64_t m = m0 + ty, n = n0 + tx;
  if (m < p.M && n < p.N) {
    if (p.out_bf16) static_cast<uint16_t*>(p.out)[m * p.N + n] = f32_to_bf16(acc);
    else static_cast<float*>(p.out)[m * p.N + n] = acc;
  }
}

}  // namespace

namespace cuda {

gdn_status matmul_launch(gdn_backend* b, const MatmulPlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  const matmul::Params& p = plan.params;
  const dim3 grid((unsigned)((p.N + kT - 1) / kT), (unsigned)((p.M + kT - 1) / kT));
  matmul_nt_kernel<<<grid, kT * kT, 0, cuda_state(b)->stream>>>(p);
  return cuda_check_launch(b, "matmul_nt kernel");
}

}  // namespace cuda
}  // namespace gdn
