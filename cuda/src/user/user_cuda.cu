// user_cuda.cu — user arms on the CUDA backend, inside the isolation worker (docs/USER-ARMS.md): the
// arm's cubin is loaded with cudaLibraryLoadFromFile (CUDA >= 12; works with the static runtime) when
// the arm first runs at its current version, and its kernels are launched with cudaLaunchKernel on the
// backend's stream, over the grid the arm's contract planned.
#include "common/backend_ops.h"
#include "common/postconv_kernels.h"
#include "cuda/cuda_util.h"
#include "user/user_arms.h"

#include <mutex>

namespace gdn {
namespace user {
namespace {

constexpr const char* kConvKernels[4] = {"gdn_arm_conv_f32_f32", "gdn_arm_conv_f32_bf16", "gdn_arm_conv_bf16_f32",
                                         "gdn_arm_conv_bf16_bf16"};
constexpr const char* kPostconvKernels[8] = {
    "gdn_arm_postconv_f32_f32_f32",  "gdn_arm_postconv_f32_f32_bf16",  "gdn_arm_postconv_f32_bf16_f32",
    "gdn_arm_postconv_f32_bf16_bf16", "gdn_arm_postconv_bf16_f32_f32", "gdn_arm_postconv_bf16_f32_bf16",
    "gdn_arm_postconv_bf16_bf16_f32", "gdn_arm_postconv_bf16_bf16_bf16"};

struct Loaded {
  uint64_t version = 0;
  cudaLibrary_t lib = nullptr;
  cudaKernel_t kernels[8] = {};
};

std::mutex g_mu;
Loaded g_conv[GDN_USER_ARM_MAX], g_postconv[GDN_USER_ARM_MAX];

// The kernel of arm id for dtype combination k, loading the cubin on first use.
gdn_status kernel_of(gdn_backend* b, int32_t op, int32_t id, int k, Arm* arm, cudaKernel_t* out) {
  if (!find(op, id, arm)) return fail(b, GDN_ERR_INTERNAL, "user arm %d vanished", (int)id);
  if (arm->cuda_module.empty())
    return fail(b, GDN_ERR_UNSUPPORTED, "arm '%s': was defined without a CUDA module (host only)", arm->name.c_str());
  std::lock_guard<std::mutex> lock(g_mu);
  Loaded& l = (op == GDN_OP_CONV ? g_conv : g_postconv)[id - GDN_USER_ARM_FIRST_ID];
  if (l.lib == nullptr || l.version != arm->version) {
    if (l.lib) cudaLibraryUnload(l.lib);
    l = Loaded{};
    gdn_status st = cuda_check(b, cudaLibraryLoadFromFile(&l.lib, arm->cuda_module.c_str(), nullptr, nullptr, 0, nullptr,
                                                          nullptr, 0),
                               ("arm '" + arm->name + "': cudaLibraryLoadFromFile(" + arm->cuda_module + ")").c_str());
    if (st != GDN_OK) {
      l.lib = nullptr;
      return st;
    }
    const int n = op == GDN_OP_CONV ? 4 : 8;
    for (int i = 0; i < n; ++i) {
      const char* name = op == GDN_OP_CONV ? kConvKernels[i] : kPostconvKernels[i];
      st = cuda_check(b, cudaLibraryGetKernel(&l.kernels[i], l.lib, name),
                      ("arm '" + arm->name + "': cudaLibraryGetKernel(" + name + ")").c_str());
      if (st != GDN_OK) return st;
    }
    l.version = arm->version;
  }
  *out = l.kernels[k];
  return GDN_OK;
}

}  // namespace

gdn_status launch_conv_cuda(gdn_backend* b, const ConvPlan& plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  const int k = (plan.x_dtype == GDN_BF16 ? 2 : 0) + (plan.out_dtype == GDN_BF16 ? 1 : 0);
  Arm arm;
  cudaKernel_t kernel = nullptr;
  st = kernel_of(b, GDN_OP_CONV, plan.contract.arm_ran, k, &arm, &kernel);
  if (st != GDN_OK) return st;
  const unsigned blocks = (unsigned)((int64_t)plan.contract.grid_x * plan.contract.grid_y);
  if (blocks == 0) return GDN_OK;
  conv::Params p = plan.params;
  void* args[] = {&p};
  st = cuda_check(b, cudaLaunchKernel((const void*)kernel, dim3(blocks), dim3((unsigned)plan.contract.threads_per_block),
                                      args, (size_t)plan.contract.shared_bytes, cuda_state(b)->stream),
                  ("arm '" + arm.name + "': launch").c_str());
  return st;
}

gdn_status launch_postconv_cuda(gdn_backend* b, const gdn_postconv_args* args, const gdn_postconv_result* plan) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  const int k = (args->conv_dtype == GDN_BF16 ? 4 : 0) + (args->qkv_dtype == GDN_BF16 ? 2 : 0) +
                (args->gate_dtype == GDN_BF16 ? 1 : 0);
  Arm arm;
  cudaKernel_t kernel = nullptr;
  st = kernel_of(b, GDN_OP_POSTCONV, plan->arm_ran, k, &arm, &kernel);
  if (st != GDN_OK) return st;
  if (plan->grid_x == 0 || plan->grid_y == 0) return GDN_OK;
  postconv::Params p = postconv::make_params(*args);
  void* kargs[] = {&p};
  return cuda_check(b, cudaLaunchKernel((const void*)kernel, dim3((unsigned)plan->grid_x, (unsigned)plan->grid_y),
                                        dim3((unsigned)plan->threads_per_block), kargs, (size_t)arm.desc.shared_bytes,
                                        cuda_state(b)->stream),
                    ("arm '" + arm.name + "': launch").c_str());
}

}  // namespace user
}  // namespace gdn
