// matmul_host.cpp — gdn_matmul_nt on the host: for each output, acc = +0 then acc = fmaf(a[m][k],
// b[n][k], acc) for k ascending (the CUDA kernel's order). Blocked over 4 rows x 64 columns of out
// with b transposed once, so the inner loop runs 64 independent chains over contiguous memory.
#include "common/backend_ops.h"
#include "common/detmath.h"

#include <vector>

namespace gdn {
namespace host {
namespace {

void to_f32(const void* src, bool bf16, int64_t offset, int64_t n, float* dst) {
  if (bf16) {
    const uint16_t* s = static_cast<const uint16_t*>(src) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
  } else {
    const float* s = static_cast<const float*>(src) + offset;
    for (int64_t i = 0; i < n; ++i) dst[i] = s[i];
  }
}

void put(const matmul::Params& p, int64_t i, float v) {
  if (p.out_bf16) static_cast<uint16_t*>(p.out)[i] = f32_to_bf16(v);
  else static_cast<float*>(p.out)[i] = v;
}

}  // namespace

void matmul_run(const MatmulPlan& plan) {
  const matmul::Params& p = plan.params;
  const int64_t M = p.M, N = p.N, Kd = p.Kd;
  // a in f32, row-major; b transposed to k-major f32 so that a block of outputs of one row of a
  // reads a contiguous run of b for each k (SIMD lanes are different outputs, each its own chain).
  std::vector<float> a((size_t)(M * Kd)), bt((size_t)(Kd * N)), row((size_t)Kd);
  to_f32(p.a, p.in_bf16, 0, M * Kd, a.data());
  for (int64_t n = 0; n < N; ++n) {
    to_f32(p.b, p.in_bf16, n * Kd, Kd, row.data());
    for (int64_t k = 0; k < Kd; ++k) bt[(size_t)(k * N + n)] = row[(size_t)k];
  }
  constexpr int kRows = 4, kCols = 64;
  float acc[kRows][kCols];
  for (int64_t n0 = 0; n0 < N; n0 += kCols) {
    const int64_t nc = N - n0 < kCols ? N - n0 : kCols;
    for (int64_t m0 = 0; m0 < M; m0 += kRows) {
      const int64_t mr = M - m0 < kRows ? M - m0 : kRows;
      for (int r = 0; r < kRows; ++r)
        for (int j = 0; j < kCols; ++j) acc[r][j] = 0.0f;
      for (int64_t k = 0; k < Kd; ++k) {
        const float* bk = &bt[(size_t)(k * N + n0)];
        for (int64_t r = 0; r < mr; ++r) {
          const float av = a[(size_t)((m0 + r) * Kd + k)];
          float* ar = acc[r];
          if (nc == kCols) {
            for (int j = 0; j < kCols; ++j) ar[j] = det_fma(av, bk[j], ar[j]);
          } else {
            for (int64_t j = 0; j < nc; ++j) ar[j] = det_fma(av, bk[j], ar[j]);
          }
        }
      }
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t j = 0; j < nc; ++j) put(p, (m0 + r) * N + n0 + j, acc[r][j]);
    }
  }
}

}  // namespace host
}  // namespace gdn
