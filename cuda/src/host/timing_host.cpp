// timing_host.cpp — running planned ops on the host backend, and gdn_time_ops there: a monotonic
// clock (clock_gettime(CLOCK_MONOTONIC)) around each single run; flush_l2 overwrites twice the
// last-level cache outside the timed region.
#include "common/backend_ops.h"

#include <cstring>
#include <ctime>
#include <vector>

namespace gdn {
namespace host {

gdn_status run_op(gdn_backend* b, const PlannedOp& op) {
  switch (op.kind) {
    case GDN_OP_CONV: return conv_run(b, op.conv);
    case GDN_OP_CONV_UPDATE: return update_run(b, op.update);
    case GDN_OP_POSTCONV: return postconv_run(b, op.postconv);
    case GDN_OP_COPY:
      if (op.copy.bytes > 0)
        std::memmove(reinterpret_cast<void*>((uintptr_t)op.copy.dst), reinterpret_cast<const void*>((uintptr_t)op.copy.src),
                     (size_t)op.copy.bytes);
      return GDN_OK;
    default: return fail(b, GDN_ERR_INTERNAL, "run_op: op kind %d was not planned", (int)op.kind);
  }
}

namespace {
double now_us() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
}  // namespace

gdn_status time_ops(gdn_backend* b, const std::vector<PlannedOp>& ops, const gdn_timing_config& cfg, float* samples_us) {
  const int32_t n = (int32_t)ops.size();
  // flush_l2 on the host: overwrite twice the last-level cache before each run, at most 64 MiB.
  // Virtual machines can report the whole host's cache (hundreds of MiB, seen: 480 MiB), which no
  // single core's working set reaches; flushing that much would cost ~0.4 s per sample.
  constexpr size_t kMaxFlush = (size_t)64 << 20;
  std::vector<unsigned char> flush;
  if (cfg.flush_l2) {
    gdn_device_info info;
    device_info(b, &info);
    const size_t want = info.l2_bytes > 0 ? (size_t)info.l2_bytes * 2 : kMaxFlush;
    flush.resize(want < kMaxFlush ? want : kMaxFlush);
  }
  for (int32_t r = 0; r < cfg.rounds; ++r) {
    for (int32_t k = 0; k < n; ++k) {
      const int32_t i = cfg.rotate_order ? (r + k) % n : k;
      if (!flush.empty()) std::memset(flush.data(), (int)((r + k) & 0xff), flush.size());
      const double t0 = now_us();
      const gdn_status st = run_op(b, ops[(size_t)i]);
      const double t1 = now_us();
      if (st != GDN_OK) return st;
      samples_us[(size_t)r * n + i] = (float)(t1 - t0);
    }
  }
  return GDN_OK;
}

}  // namespace host
}  // namespace gdn
