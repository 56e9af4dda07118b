// cuda_util.h — the CUDA backend's state and its error checks (CUDA files only).
#pragma once

#include "common/backend.h"
#include "common/internal.h"

#include <cuda_runtime.h>

#include <memory>
#include <vector>

namespace gdn {

struct CudaState {
  cudaStream_t stream = nullptr;  // every op of the backend runs on this one stream
  cudaEvent_t ev_start = nullptr, ev_stop = nullptr;
  void* flush = nullptr;          // 2 x L2 bytes, allocated at the first timed run with flush_l2
  size_t flush_bytes = 0;
  // The GPU-side hold before each timed launch (timing.cu, "host ahead of the GPU"): starts short and
  // doubles whenever a sample finds the host was not ahead; kept for the backend's life so that later
  // runs start from what worked.
  unsigned long long hold_ns = 20000;
  unsigned long long late_samples = 0;  // samples retaken because the host fell behind (diagnostics)
  int l2_bytes = 0;
  // Pinned host memory for small device-to-host reads (query_start_loc and state_indices read back
  // by the validators, small downloads): a copy into pageable memory goes through the driver's
  // staging path and costs several µs more per call. Used under the backend's exec lock only.
  void* pinned = nullptr;
  size_t pinned_bytes = 0;
};

inline CudaState* cuda_state(gdn_backend* b) { return static_cast<CudaState*>(b->cuda); }

// GDN_ERR_DEVICE naming what failed and the runtime's text, or GDN_OK.
inline gdn_status cuda_check(gdn_backend* b, cudaError_t err, const char* what) {
  if (err == cudaSuccess) return GDN_OK;
  return fail(b, GDN_ERR_DEVICE, "%s: CUDA error %s: %s", what, cudaGetErrorName(err), cudaGetErrorString(err));
}

// The launch error (bad configuration, missing kernel image, ...) right after a launch.
inline gdn_status cuda_check_launch(gdn_backend* b, const char* kernel) {
  return cuda_check(b, cudaGetLastError(), kernel);
}

// Makes the backend's device current on the calling thread (koffi may call from worker threads).
inline gdn_status cuda_bind(gdn_backend* b) { return cuda_check(b, cudaSetDevice(b->device_ordinal), "cudaSetDevice"); }

// A plan's program list (sequence, chunk pairs) on the device: a block of the buffer cache, not a
// cudaMalloc/cudaFree per call (cudaFree synchronises the device), uploaded on the backend's stream with
// no wait. *owner gives the block back to the cache when the plan goes, which is safe in stream order
// (common/buffer_cache.h). From pageable memory the copy returns once the source is staged, so the
// vector may change afterwards; the launch that reads the list follows it on the stream. `op` names the
// op in errors ("conv", "fused").
gdn_status upload_program_list(gdn_backend* b, const std::vector<int32_t>& programs, std::shared_ptr<void>* owner,
                               const int32_t** device, const char* op);

// What a prefill plan (conv, fused) puts on the device before its launch: the program list and, when the
// caller gave the offsets as a host array (host_qsl != nullptr), those offsets after it in the same block
// and the same upload: [programs..., qsl...]. *programs becomes nullptr for an empty list, and *qsl is set
// only when host_qsl is given. Nothing to upload: no block, no copy.
gdn_status upload_plan_lists(gdn_backend* b, const std::vector<int32_t>& programs, const std::vector<int32_t>* host_qsl,
                             std::shared_ptr<void>* owner, const int32_t** device_programs, const int32_t** device_qsl,
                             const char* op);

}  // namespace gdn
