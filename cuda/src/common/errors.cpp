// errors.cpp — status names and the two last-error channels: per calling thread, and per backend
// (the latter for asynchronous calls, whose worker thread is not the caller's).
#include "common/backend.h"
#include "common/internal.h"

#include <cstdio>

namespace gdn {
namespace {
thread_local std::string t_last_error;
}

void clear_error() { t_last_error.clear(); }

const char* thread_last_error() { return t_last_error.c_str(); }

gdn_status fail(gdn_backend* backend, gdn_status status, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  t_last_error = buf;
  if (backend != nullptr) {
    std::lock_guard<std::mutex> lock(backend->error_mu);
    backend->last_error = buf;
  }
  return status;
}

const char* status_name(int32_t status) {
  switch (status) {
    case GDN_OK: return "GDN_OK";
    case GDN_ERR_INVALID_ARGUMENT: return "GDN_ERR_INVALID_ARGUMENT";
    case GDN_ERR_UNSUPPORTED: return "GDN_ERR_UNSUPPORTED";
    case GDN_ERR_OUT_OF_MEMORY: return "GDN_ERR_OUT_OF_MEMORY";
    case GDN_ERR_NO_DEVICE: return "GDN_ERR_NO_DEVICE";
    case GDN_ERR_DEVICE: return "GDN_ERR_DEVICE";
    case GDN_ERR_INVALID_BUFFER: return "GDN_ERR_INVALID_BUFFER";
    case GDN_ERR_INTERNAL: return "GDN_ERR_INTERNAL";
    case GDN_ERR_ARM_FAULT: return "GDN_ERR_ARM_FAULT";
    case GDN_ERR_INTERRUPTED: return "GDN_ERR_INTERRUPTED";
    default: return "GDN_ERR_UNKNOWN_STATUS";
  }
}

int dtype_size(int32_t dtype) {
  switch (dtype) {
    case GDN_F32: return 4;
    case GDN_BF16: return 2;
    case GDN_F16: return 2;
    case GDN_I32: return 4;
    case GDN_I8: return 1;
    default: return 0;
  }
}

const char* dtype_name(int32_t dtype) {
  switch (dtype) {
    case GDN_F32: return "f32";
    case GDN_BF16: return "bf16";
    case GDN_F16: return "f16";
    case GDN_I32: return "i32";
    case GDN_I8: return "i8";
    default: return "unknown";
  }
}

}  // namespace gdn
