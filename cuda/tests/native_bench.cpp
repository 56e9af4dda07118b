// native_bench.cpp — times the causal-conv arms through libgdn's own timing entry (gdn_time_ops: CUDA
// events around each launch, L2 flushed before each, rounds interleaved and rotated) against a
// device-to-device copy of the same bytes, on the CUDA backend (or the host backend with --host).
//   gdn_native_bench [--host] [--arm NAME] [--rounds N] [T] [C ...]
//     (defaults: every arm, T = 8192, C = 8192 10240; bf16, K = 4; --arm times one arm beside the copy,
//     e.g. under perf record)
#include "gdn.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define OK(expr)                                                                                         \
  do {                                                                                                   \
    const gdn_status st_ = (expr);                                                                       \
    if (st_ != GDN_OK) {                                                                                 \
      std::fprintf(stderr, "%s -> %s: %s\n", #expr, gdn_status_name(st_), gdn_last_error());           \
      std::exit(1);                                                                                      \
    }                                                                                                    \
  } while (0)

int main(int argc, char** argv) {
  int kind = GDN_BACKEND_CUDA;
  std::vector<int64_t> Cs;
  int64_t T = 8192;
  int positional = 0;
  const char* only_arm = nullptr;
  int rounds = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--host") == 0) kind = GDN_BACKEND_HOST;
    else if (std::strcmp(argv[i], "--arm") == 0 && i + 1 < argc) only_arm = argv[++i];
    else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (positional++ == 0) T = std::atoll(argv[i]);
    else Cs.push_back(std::atoll(argv[i]));
  }
  if (Cs.empty()) Cs = {8192, 10240};
  gdn_backend* b = nullptr;
  OK(gdn_backend_open(kind, 0, &b));
  gdn_device_info info;
  OK(gdn_device_info_get(b, &info));
  std::printf("%s | SM clock %d MHz (max %d), memory clock %d MHz, driver %s | %s\n", info.name, info.sm_clock_mhz,
              info.max_sm_clock_mhz, info.mem_clock_mhz, info.driver_string, gdn_build_info());
  // Every registered conv arm (gdn_arm_count / gdn_arm_info_get): exact and sequence mappings for
  // the arms with chunk programs, once for the whole-sequence arms.
  const int32_t n_arms = gdn_arm_count(GDN_OP_CONV);
  std::vector<gdn_arm_info> infos((size_t)n_arms);
  for (int32_t arm = 0; arm < n_arms; ++arm) OK(gdn_arm_info_get(GDN_OP_CONV, arm, &infos[(size_t)arm]));
  std::vector<std::string> labels;
  for (int64_t C : Cs) {
    const int64_t K = 4;
    const uint64_t xbytes = (uint64_t)(T * C * 2);
    gdn_addr x, w, out, qsl, his, state;
    OK(gdn_buffer_alloc(b, xbytes, &x));
    OK(gdn_buffer_alloc(b, xbytes, &out));
    OK(gdn_buffer_alloc(b, (uint64_t)(C * K * 2), &w));
    OK(gdn_buffer_alloc(b, 8, &qsl));
    OK(gdn_buffer_alloc(b, 4, &his));
    OK(gdn_buffer_alloc(b, (uint64_t)(C * (K - 1) * 4), &state));
    OK(gdn_buffer_fill_u32(b, x, 0x3f80bf00u, xbytes));  // bf16 pairs (-0.5, 1.0): not zeros
    OK(gdn_buffer_fill_u32(b, w, 0x3e00be80u, (uint64_t)(C * K * 2)));
    OK(gdn_buffer_fill_u32(b, state, 0x3f000000u, (uint64_t)(C * (K - 1) * 4)));
    const int32_t hq[2] = {0, (int32_t)T};
    OK(gdn_buffer_upload(b, qsl, hq, 8));
    OK(gdn_buffer_fill_u32(b, his, 1u, 4));
    std::vector<gdn_op> ops;
    labels.clear();
    for (int arm = 0; arm < n_arms; ++arm) {
      const gdn_arm_info& info = infos[(size_t)arm];
      if (kind == GDN_BACKEND_HOST && (info.flags & GDN_ARM_REFERENCE)) continue;
      if (only_arm && std::strcmp(info.name, only_arm) != 0) continue;
      const bool chunks = (info.mappings & (1 << GDN_MAP_EXACT)) != 0;
      for (int map : {GDN_MAP_EXACT, GDN_MAP_SEQUENCE}) {
        if (map == GDN_MAP_SEQUENCE && !chunks) continue;
        gdn_op op;
        std::memset(&op, 0, sizeof op);
        op.kind = GDN_OP_CONV;
        gdn_conv_args& a = op.conv;
        a.T = T;
        a.C = C;
        a.K = K;
        a.num_seqs = 1;
        a.x_dtype = GDN_BF16;
        a.out_dtype = GDN_BF16;
        a.his_dtype = GDN_I32;
        a.x_row_stride = C;
        a.x = x;
        a.weight = w;
        a.query_start_loc = qsl;
        a.has_initial_state = his;
        a.conv_state = state;
        a.out = out;
        a.arm = arm;
        a.mapping = map;
        ops.push_back(op);
        labels.push_back(std::string(info.name) + (map == GDN_MAP_SEQUENCE ? " (sequence)" : ""));
      }
    }
    gdn_op copy;
    std::memset(&copy, 0, sizeof copy);
    copy.kind = GDN_OP_COPY;
    copy.copy.dst = out;
    copy.copy.src = x;
    copy.copy.bytes = xbytes;
    ops.push_back(copy);
    labels.push_back("copy");
    const int n = (int)ops.size();
    gdn_timing_config cfg = {rounds > 0 ? rounds : kind == GDN_BACKEND_HOST ? 2 : 30, 1, 1, 0};
    std::vector<float> us((size_t)cfg.rounds * n);
    OK(gdn_time_ops(b, ops.data(), n, &cfg, us.data()));
    std::vector<double> med(n);
    for (int i = 0; i < n; ++i) {
      std::vector<float> v;
      for (int r = 0; r < cfg.rounds; ++r) v.push_back(us[(size_t)r * n + i]);
      std::sort(v.begin(), v.end());
      med[i] = v[v.size() / 2];
    }
    const double bytes = 2.0 * xbytes;
    std::printf("T=%lld C=%lld K=4 bf16 (exact mapping unless noted), median of %d:\n", (long long)T, (long long)C, cfg.rounds);
    for (int i = 0; i < n; ++i)
      std::printf("  %-22s %10.1f us %8.0f GB/s %6.1f%% of copy\n", labels[(size_t)i].c_str(), med[i], bytes / med[i] * 1e-3,
                  100.0 * med[n - 1] / med[i]);
    for (gdn_addr a : {x, w, out, qsl, his, state}) OK(gdn_buffer_free(b, a));
  }
  OK(gdn_backend_close(b));
  return 0;
}
