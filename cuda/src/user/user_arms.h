// user_arms.h — arms defined at run time (docs/USER-ARMS.md). gdn_arm_register adds them to the arm
// registry (common/registry.h) of every process, so planning, the host replay and the CUDA dispatch
// treat them like built-in arms; their modules are loaded only inside the isolation worker, and every
// other process sends the ops that run them there (user/worker.cpp). Not part of the ABI (gdn_user.h is).
#pragma once

#include "common/internal.h"
#include "common/registry.h"
#include "gdn.h"

#include <string>
#include <vector>

namespace gdn {
struct PlannedOp;

namespace user {

// What was registered, kept to register the same arm in a (fresh) worker.
struct Arm {
  int32_t id = 0;
  int32_t op = 0;
  uint64_t version = 0;  // bumped when the arm is replaced (the worker registers it again)
  std::string name, host_module, host_fast_module, cuda_module;
  gdn_user_arm_desc desc{};
};

// True in the worker process: user arms run in-process there, never anywhere else.
bool in_worker();
void set_in_worker();
// The worker's fault page (first 4 KiB of the shared file): handed to every host module it loads.
void set_fault_page(char* page);
// In the worker around gdn_time_ops: the unchecked host module runs (the registry variant 1).
void set_timing(bool timing);

// Registers in this process; id_hint >= 0 (the worker) asserts the id the parent assigned.
gdn_status register_arm(const gdn_user_arm_desc* d, int32_t id_hint, int32_t* id_out);
gdn_status unregister_arm(int32_t op, int32_t id);
bool find(int32_t op, int32_t id, Arm* out);
std::string name_of(int32_t op, int32_t id);
std::vector<Arm> all_arms();

inline bool is_user(const registry::EntryRef& e) { return e && (e->info.flags & GDN_ARM_USER) != 0; }

// ---- everywhere but the worker: the op runs in the worker (user/worker.cpp)
gdn_status isolated_conv_forward(gdn_backend* b, const gdn_conv_args* args, gdn_launch_contract* contract);
gdn_status isolated_postconv_forward(gdn_backend* b, const gdn_postconv_args* args, gdn_postconv_result* result);
gdn_status isolated_time_ops(gdn_backend* b, const gdn_op* ops, int32_t n_ops, const gdn_timing_config* cfg,
                             float* samples_us);
// Whether gdn_time_ops must go to the worker: some planned op runs a user arm.
bool any_user_op(const std::vector<PlannedOp>& planned);

#if GDN_HAVE_CUDA
// The registry's CUDA launch hook of a user arm (user_cuda.cu): loads the cubin at first use.
gdn_status cuda_launch(gdn_backend* b, const registry::Entry& e, const void* params, size_t params_bytes, int combo,
                       int variant, uint32_t grid_x, uint32_t grid_y, uint32_t threads, uint32_t shared_bytes,
                       void* stream);
#endif

// What a worker-side entry owns (registry::Entry::owner): the loaded host modules and the cubin's path.
struct Module {
  std::string name, cuda_module;
  int32_t op = 0;
  void* host = nullptr;
  void* host_fast = nullptr;
  void* cuda = nullptr;  // cudaLibrary_t once loaded (user_cuda.cu)
  void* kernels[8] = {};
  ~Module();
};
void cuda_unload(Module* m);  // user_cuda.cu (a no-op without CUDA)

}  // namespace user
}  // namespace gdn
