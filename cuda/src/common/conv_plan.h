// conv_plan.h — validation and planning of the causal-conv ops (prefill and decode update): the
// launch contract of each arm and mapping, the exact-chunk program list, the host block order.
#pragma once

#include "common/conv_params.h"
#include "common/internal.h"
#include "common/update_kernels.h"

#include <memory>
#include <vector>

namespace gdn {

// The launch an arm and mapping make (pure: no backend, no buffers). vec_ok says whether the vec arm
// can run (C and x_row_stride multiples of 8, 16-byte aligned x and out); when false vec falls back
// to reg. programs receives the (sequence, chunk) pairs of the exact mappings.
gdn_status conv_contract(gdn_backend* backend, int32_t arm, int32_t mapping, int64_t C, int64_t K,
                         const int32_t* qsl, int32_t num_seqs, bool vec_ok, gdn_launch_contract* contract,
                         std::vector<int32_t>* programs);

// A validated, planned prefill conv.
struct ConvPlan {
  conv::Params params{};  // programs is filled by the backend that runs the plan
  gdn_launch_contract contract{};
  int32_t x_dtype = GDN_F32, out_dtype = GDN_F32;
  std::vector<int32_t> programs;  // host copy of the exact-mapping program list
  std::vector<int64_t> order;     // host backend: linear block indices in run order
  std::shared_ptr<void> device_programs;  // CUDA backend: device copy of programs (freed with the plan)
};

// Validates every field of args against the backend (dtypes, sizes, query_start_loc read back and
// checked, every address range, arm/mapping/mutant, widen and schedule) and plans the launch.
gdn_status conv_plan(gdn_backend* backend, const gdn_conv_args* args, ConvPlan* plan);

// Block order of a schedule over `blocks` blocks (FORWARD, REVERSE, SHUFFLE: splitmix64-seeded
// Fisher-Yates, EXPLICIT: the caller's permutation, checked).
gdn_status build_schedule(gdn_backend* backend, const gdn_schedule& schedule, int64_t blocks, std::vector<int64_t>* order);

// A validated decode update.
struct UpdatePlan {
  update::Params params{};
  int32_t arm = GDN_UPDATE_REFERENCE;
  int32_t x_dtype = GDN_F32;
  int32_t grid_x = 0, grid_y = 0;
};
gdn_status update_plan(gdn_backend* backend, const gdn_conv_update_args* args, UpdatePlan* plan);

}  // namespace gdn
