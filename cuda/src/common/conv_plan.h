// conv_plan.h — validation and planning of the causal-conv ops (prefill and decode update), in the
// style every op family shares (docs/SPEC.md §3.5, §12): a validated plan struct holding the arm's
// registry entry, its dtype combination, build and variant, the launch contract, and what the
// backends need (host block order, the exact-chunk program list).
#pragma once

#include "common/arms/update_common.h"
#include "common/conv_params.h"
#include "common/internal.h"
#include "common/registry.h"

#include <memory>
#include <vector>

namespace gdn {

// The launch an arm and mapping make (pure: no backend, no buffers). vec_ok says whether
// GDN_ARM_REQ_VEC8 holds (C and x_row_stride multiples of 8, 16-byte aligned x and out). programs
// receives the (sequence, chunk) pairs of the exact mappings; ran (may be null) the entry that runs.
gdn_status conv_contract(gdn_backend* backend, int32_t arm, int32_t mapping, int64_t C, int64_t K,
                         const int32_t* qsl, int32_t num_seqs, bool vec_ok, gdn_launch_contract* contract,
                         std::vector<int32_t>* programs, registry::EntryRef* ran);

// A validated, planned prefill conv.
struct ConvPlan {
  conv::Params params{};  // programs / qsl: host arrays, null (one sequence), or (CUDA) device copies
  gdn_launch_contract contract{};
  registry::EntryRef arm;  // the arm that runs (after fallbacks)
  int32_t combo = 0;       // 2 * (x is bf16) + (out is bf16)
  int32_t build = 0;       // 1: the planted-mutant build (args.mutant != 0)
  int32_t variant = 0;
  std::vector<int32_t> programs;  // host copy of the exact-mapping program list
  std::vector<int64_t> order;     // host backend: linear block indices in run order
  int32_t schedule_kind = GDN_SCHED_FORWARD;  // host backend: only FORWARD may replay blocks in parallel
  std::shared_ptr<void> device_programs;  // CUDA backend: device copy of programs (freed with the plan)
  std::vector<int32_t> qsl;               // the sequence offsets on the host (read back, or the caller's copy)
  bool qsl_from_host = false;             // args.query_start_loc_host: the CUDA backend uploads qsl itself
  bool lists_implicit = false;            // one sequence: the kernel computes programs and offsets, nothing to upload
};

// The N+1 sequence offsets of a prefill launch on the host: the caller's host copy (exactly one of
// `host` and `device` is given) or a read-back of the device array; then checked (0 = qsl[0] <= ... <=
// qsl[N] = T). Errors name the argument.
gdn_status load_query_start_loc(gdn_backend* backend, const int32_t* host, gdn_addr device, int64_t N, int64_t T,
                                std::vector<int32_t>* qsl);

// Validates every field of args against the backend (dtypes, sizes, query_start_loc read back and
// checked, every address range, arm/mapping/mutant, widen and schedule) and plans the launch.
gdn_status conv_plan(gdn_backend* backend, const gdn_conv_args* args, ConvPlan* plan);

// Block order of a schedule over `blocks` blocks (FORWARD, REVERSE, SHUFFLE: splitmix64-seeded
// Fisher-Yates, EXPLICIT: the caller's permutation, checked).
gdn_status build_schedule(gdn_backend* backend, const gdn_schedule& schedule, int64_t blocks, std::vector<int64_t>* order);

// A validated decode update. Grid (channel tiles, B), 2-D.
struct UpdatePlan {
  update::Params params{};
  registry::EntryRef arm;
  int32_t combo = 0;  // (x is bf16)
  int32_t variant = 0;
  int32_t threads = 0;
  int32_t grid_x = 0, grid_y = 0;
  std::vector<int32_t> slots;             // the slots on the host (read back, or the caller's copy)
  bool slots_from_host = false;           // args.state_indices_host: no device array of the caller's
  bool slots_inline = false;              // the host copy is in params.slot_words: nothing to upload
  std::shared_ptr<void> device_slots;     // CUDA backend: device copy of a long host copy (freed with the plan)
};
gdn_status update_plan(gdn_backend* backend, const gdn_conv_update_args* args, UpdatePlan* plan);

}  // namespace gdn
