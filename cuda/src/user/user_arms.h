// user_arms.h — arms defined at run time (docs/USER-ARMS.md): the table of registered user arms, their
// launch contracts, running them inside the isolation worker, and sending ops that use them to that
// worker from every other process. Not part of the ABI (gdn_user.h is).
#pragma once

#include "common/conv_plan.h"
#include "common/internal.h"
#include "gdn.h"

#include <string>
#include <vector>

namespace gdn {
struct PlannedOp;

namespace user {

// A registered arm. Modules are loaded only inside the worker (loaded = true there).
struct Arm {
  int32_t id = 0;
  int32_t op = 0;
  uint64_t version = 0;  // bumped when the arm is replaced (the worker re-registers it)
  std::string name, host_module, host_fast_module, cuda_module;
  gdn_user_arm_desc desc{};
};

// True in the worker process: user arms run in-process there, never anywhere else.
bool in_worker();
void set_in_worker();
// The worker's fault page (first 4 KiB of the shared file): handed to every host module it loads.
void set_fault_page(char* page);
// Registers in this process; id_hint >= 0 (the worker) keeps the id the parent assigned.
gdn_status register_arm(const gdn_user_arm_desc* d, int32_t id_hint, int32_t* id_out);
gdn_status unregister_arm(int32_t op, int32_t id);
// The worker times with the unchecked host module (gdn_time_ops) and runs forward with the checked one.
void set_timing(bool timing);

bool is_user(int32_t op, int32_t id);
// A copy of the arm's entry; false when id is not a live user arm of op.
bool find(int32_t op, int32_t id, Arm* out);
std::string name_of(int32_t op, int32_t id);
// All live arms (the worker is sent each one it has not seen at its current version).
std::vector<Arm> all_arms();

// The launch a user conv arm makes (validation of C, K, qsl and mapping done by the caller).
gdn_status conv_contract(gdn_backend* b, int32_t arm, int32_t mapping, int64_t C, const int32_t* qsl,
                         int32_t num_seqs, gdn_launch_contract* ct, std::vector<int32_t>* programs);
// The plan of a user post-conv arm: its grid, or the tree arm when it requires Dk = Dv = 128.
gdn_status postconv_result(gdn_backend* b, const gdn_postconv_args& a, gdn_postconv_result* result);

// ---- in the worker
// Runs a planned conv (host: the module over the schedule's block order; CUDA: the cubin's kernel).
gdn_status run_conv(gdn_backend* b, ConvPlan& plan);
gdn_status run_postconv(gdn_backend* b, const gdn_postconv_args* args, const gdn_postconv_result* plan);
// Enqueue only (CUDA timing loop); the conv plan's program list was prepared by plan_op.
gdn_status launch_conv_cuda(gdn_backend* b, const ConvPlan& plan);
gdn_status launch_postconv_cuda(gdn_backend* b, const gdn_postconv_args* args, const gdn_postconv_result* plan);

// ---- everywhere else: the op runs in the worker (user/worker.cpp)
gdn_status isolated_conv_forward(gdn_backend* b, const gdn_conv_args* args, gdn_launch_contract* contract);
gdn_status isolated_postconv_forward(gdn_backend* b, const gdn_postconv_args* args, gdn_postconv_result* result);
gdn_status isolated_time_ops(gdn_backend* b, const gdn_op* ops, int32_t n_ops, const gdn_timing_config* cfg,
                             float* samples_us);
// Whether gdn_time_ops must go to the worker: some planned op runs a user arm.
bool any_user_op(const std::vector<PlannedOp>& planned);

}  // namespace user
}  // namespace gdn
