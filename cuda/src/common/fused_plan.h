// fused_plan.h — validation and planning of the fused conv -> post-conv op (common/arms/fused_*.h):
// every field of gdn_fused_args checked (the message names it), query_start_loc read back (or the
// caller's host copy taken), the (sequence, 64-token chunk) program list built, the kernel parameters
// filled. Plain C++: both backends launch exactly this plan.
#pragma once

#include "common/arms/fused_common.h"
#include "common/internal.h"
#include "common/registry.h"

#include <memory>
#include <vector>

namespace gdn {

struct FusedPlan {
  fused::Params params{};  // programs / qsl: host arrays, null (one sequence), or (CUDA) device copies
  gdn_fused_result result{};
  registry::EntryRef arm;  // the arm that runs
  int32_t combo = 0;       // 4 * (x is bf16) + 2 * (conv_dtype is bf16) + (q, k, v are bf16)
  int32_t build = 0;       // 1: the planted-mutant build (args.mutant != 0)
  int32_t variant = 0;
  std::vector<int32_t> programs;          // (sequence, chunk) pairs
  std::shared_ptr<void> device_programs;  // CUDA backend: device copy of programs (freed with the plan)
  std::vector<int32_t> qsl;               // the sequence offsets on the host (read back, or the caller's copy)
  bool qsl_from_host = false;             // args.query_start_loc_host: the CUDA backend uploads qsl itself
  bool lists_implicit = false;            // one sequence: the kernel computes programs and offsets, nothing to upload
};

gdn_status fused_plan(gdn_backend* backend, const gdn_fused_args* args, FusedPlan* plan);

}  // namespace gdn
