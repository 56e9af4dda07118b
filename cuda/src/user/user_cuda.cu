// user_cuda.cu — user arms on the CUDA backend, inside the isolation worker (docs/USER-ARMS.md): the
// registry's CUDA launch hook of a user arm loads its cubin with cudaLibraryLoadFromFile (CUDA >= 12;
// works with the static runtime) the first time it runs, and launches the dtype combination's kernel
// with cudaLaunchKernel over the grid the planner made (conv: 1-D over grid_x * grid_y blocks;
// post-conv: 2-D).
#include "common/backend_ops.h"
#include "cuda/cuda_util.h"
#include "user/user_arms.h"

#include <mutex>
#include <string>

namespace gdn {
namespace user {
namespace {

constexpr const char* kConvKernels[4] = {"gdn_arm_conv_f32_f32", "gdn_arm_conv_f32_bf16", "gdn_arm_conv_bf16_f32",
                                         "gdn_arm_conv_bf16_bf16"};
constexpr const char* kPostconvKernels[8] = {
    "gdn_arm_postconv_f32_f32_f32",  "gdn_arm_postconv_f32_f32_bf16",  "gdn_arm_postconv_f32_bf16_f32",
    "gdn_arm_postconv_f32_bf16_bf16", "gdn_arm_postconv_bf16_f32_f32", "gdn_arm_postconv_bf16_f32_bf16",
    "gdn_arm_postconv_bf16_bf16_f32", "gdn_arm_postconv_bf16_bf16_bf16"};

std::mutex g_mu;

gdn_status load(gdn_backend* b, Module* m) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (m->cuda) return GDN_OK;
  cudaLibrary_t lib = nullptr;
  gdn_status st = cuda_check(b, cudaLibraryLoadFromFile(&lib, m->cuda_module.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0),
                             ("arm '" + m->name + "': cudaLibraryLoadFromFile(" + m->cuda_module + ")").c_str());
  if (st != GDN_OK) return st;
  const int n = m->op == GDN_OP_CONV ? 4 : 8;
  for (int i = 0; i < n; ++i) {
    const char* name = m->op == GDN_OP_CONV ? kConvKernels[i] : kPostconvKernels[i];
    cudaKernel_t k = nullptr;
    st = cuda_check(b, cudaLibraryGetKernel(&k, lib, name), ("arm '" + m->name + "': cudaLibraryGetKernel(" + name + ")").c_str());
    if (st != GDN_OK) {
      cudaLibraryUnload(lib);
      return st;
    }
    m->kernels[i] = (void*)k;
  }
  m->cuda = (void*)lib;
  return GDN_OK;
}

}  // namespace

void cuda_unload(Module* m) {
  if (m->cuda) cudaLibraryUnload((cudaLibrary_t)m->cuda);
  m->cuda = nullptr;
}

gdn_status cuda_launch(gdn_backend* b, const registry::Entry& e, const void* params, size_t params_bytes, int combo,
                       int variant, uint32_t grid_x, uint32_t grid_y, uint32_t threads, uint32_t shared_bytes,
                       void* stream) {
  (void)params_bytes;
  (void)variant;
  Module* m = static_cast<Module*>(e.owner.get());
  if (m == nullptr || m->cuda_module.empty())
    return fail(b, GDN_ERR_UNSUPPORTED, "arm '%s': was defined without a CUDA module (host only)", e.info.name);
  gdn_status st = load(b, m);
  if (st != GDN_OK) return st;
  if (combo < 0 || combo >= (m->op == GDN_OP_CONV ? 4 : 8) || m->kernels[combo] == nullptr)
    return fail(b, GDN_ERR_INTERNAL, "arm '%s': no kernel for dtype combination %d", e.info.name, combo);
  const dim3 grid = m->op == GDN_OP_CONV ? dim3(grid_x * grid_y) : dim3(grid_x, grid_y);
  void* args[] = {const_cast<void*>(params)};
  return cuda_check(b, cudaLaunchKernel((const void*)m->kernels[combo], grid, dim3(threads), args, shared_bytes,
                                        (cudaStream_t)stream),
                    ("arm '" + std::string(e.info.name) + "': launch").c_str());
}

}  // namespace user
}  // namespace gdn
