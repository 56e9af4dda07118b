// internal.h — what the pieces of libgdn share behind gdn.h. Not part of the ABI.
//
// Seams between op families: the API layer (api.cpp) validates the backend, records errors and
// dispatches; each op family provides a planner (common/<family>_plan.cpp: a validated plan struct),
// a host runner (host/replay_host.cpp: <family>_run) and a CUDA launcher (cuda/: <family>_launch),
// declared in backend_ops.h. The timing loop (gdn_time_ops) calls the same planner and launcher.
#pragma once

#include "gdn.h"

#include <cstdarg>
#include <cstdint>
#include <string>

namespace gdn {

// ----------------------------------------------------------------- errors
// Records msg as the calling thread's last error and, when backend is not null, as the backend's.
// Returns status so call sites read `return fail(b, GDN_ERR_INVALID_ARGUMENT, "x: ...", ...)`.
gdn_status fail(gdn_backend* backend, gdn_status status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

// ----------------------------------------------------------------- buffers
// OK when [addr, addr + bytes) lies inside one live buffer of backend; otherwise records an error
// naming `what` ("args.x", ...) and returns GDN_ERR_INVALID_BUFFER. bytes == 0 is always OK.
gdn_status check_range(gdn_backend* backend, gdn_addr addr, uint64_t bytes, const char* what);

// One address argument of an op: its name ("args.x"), extent, element size, and whether the op
// writes it. check_arg_ranges checks, in this order: every range lies in a live buffer; every
// non-empty range is aligned to its element size; no written range shares a byte with any other
// range (read-only ranges may share bytes: a and b interleave in one packed buffer).
struct ArgRange {
  const char* name;
  gdn_addr addr;
  uint64_t bytes;
  int elem_bytes;
  const char* dtype;  // for messages: "f32", "bf16", "i32", ...
  bool written;
};
gdn_status check_arg_ranges(gdn_backend* backend, const ArgRange* ranges, size_t n);

// Element size of a dtype (0 for an unknown dtype).
int dtype_size(int32_t dtype);
const char* dtype_name(int32_t dtype);

bool backend_is_cuda(const gdn_backend* backend);

// Copy n bytes from backend memory to host memory (synchronous). For validators that must read
// small device arrays such as query_start_loc.
gdn_status read_to_host(gdn_backend* backend, void* dst, gdn_addr src, uint64_t bytes, const char* what);

// ----------------------------------------------------------------- addresses and backends
// A gdn_addr as a typed pointer: host memory on the host backend, device memory on the CUDA backend.
template <class T>
inline T* addr_ptr(gdn_addr a) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(a));
}

// The CUDA backend's stream as a cudaStream_t (void* so this header needs no CUDA include).
// Only meaningful when backend_is_cuda(backend). Kernels of every op family go on this stream.
void* cuda_stream(gdn_backend* backend);

// cuda/cuda_util.h (CUDA files only) adds:
//   gdn_status cuda_check(gdn_backend*, cudaError_t, const char* what);  // GDN_ERR_DEVICE + message
//   gdn_status cuda_check_launch(gdn_backend*, const char* kernel);      // cudaGetLastError after a launch


}  // namespace gdn
