// matmul_plan.h — out[M, N] = a[M, Kd] · b[N, Kd]ᵀ with f32 accumulation, k ascending, one fmaf per
// product, starting from +0: the order both backends keep, so they give identical bits.
#pragma once

#include "common/internal.h"

namespace gdn {

namespace matmul {
constexpr int kTile = 16;  // CUDA: 16 x 16 outputs per block, one per thread, 16-wide k tiles in shared memory
struct Params {
  int64_t M, N, Kd;
  int32_t in_bf16, out_bf16;
  const void* a;
  const void* b;
  void* out;
};
}  // namespace matmul

struct MatmulPlan {
  matmul::Params params{};
};

gdn_status matmul_plan(gdn_backend* backend, const gdn_matmul_args* args, MatmulPlan* plan);

}  // namespace gdn
