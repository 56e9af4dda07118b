// postconv_plan.h — validation and planning of the post-conv op, in the style every op family shares
// (docs/SPEC.md, "Arms"): the plan holds the arm's registry entry, dtype combination and variant,
// the kernel parameters and what the ABI reports (gdn_postconv_result).
#pragma once

#include "common/arms/postconv_common.h"
#include "common/internal.h"
#include "common/registry.h"

namespace gdn {

struct PostconvPlan {
  postconv::Params params{};
  gdn_postconv_result result{};  // arm_ran after fallback, threads per block, grid
  registry::EntryRef arm;
  int32_t combo = 0;  // 4 * (conv_out is bf16) + 2 * (q, k, v are bf16) + (a, b are bf16)
  int32_t variant = 0;
  int32_t shared_bytes = 0;
};

// Validates every field of args (dtypes, sizes, strides, every address range) and plans the launch.
gdn_status postconv_plan(gdn_backend* backend, const gdn_postconv_args* args, PostconvPlan* plan);

}  // namespace gdn
