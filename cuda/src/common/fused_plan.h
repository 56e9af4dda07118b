// fused_plan.h — validation and planning of the fused conv -> post-conv op (common/fused_kernels.h):
// every field of gdn_fused_args checked (the message names it), query_start_loc read back, the
// (sequence, 64-token chunk) program list built, the kernel parameters filled. Plain C++: both
// backends launch exactly this plan.
#pragma once

#include "common/fused_kernels.h"
#include "common/internal.h"

#include <memory>
#include <vector>

namespace gdn {

struct FusedPlan {
  fused::Params params{};  // params.programs: the host list, or (CUDA) the device copy
  gdn_fused_result result{};
  int32_t x_dtype = GDN_F32, conv_dtype = GDN_F32, qkv_dtype = GDN_F32;
  std::vector<int32_t> programs;          // (sequence, chunk) pairs
  std::shared_ptr<void> device_programs;  // CUDA backend: device copy of programs (freed with the plan)
};

gdn_status fused_plan(gdn_backend* backend, const gdn_fused_args* args, FusedPlan* plan);

}  // namespace gdn
