// conv update arm `reg` (docs/SPEC.md §5): the whole window in registers
// (read the K-1 state values, then write the shifted ones). Two compile-time variants: W = 4 (the
// K = 4 specialisation) and W = kMaxK (any K, the low taps skipped).
#pragma once

#include "common/arms/update_common.h"

namespace gdn {
namespace update {

struct ArmReg {
  static constexpr ArmSpec spec = {
      "reg", "register window, K = 4 specialised, vectorised state shift",
      kThreads, 1, kThreads, 1, 0, 0, 0, 0, 0, -1, 0, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 2;
  static int variant(const Params& p) { return p.K == 4 ? 0 : 1; }

  template <class TX, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    constexpr int W = V == 0 ? 4 : conv::kMaxK;
    const int64_t c = t.bx() * kThreads + t.tid();
    const int64_t by = t.by();
    if (c >= p.C) return;
    const int32_t slot = slot_of(p, by);
    if (slot < 0) return;
    const int K = W == 4 ? 4 : p.K;
    const TX* w = static_cast<const TX*>(p.w) + c * K;
    const int64_t st = ((int64_t)slot * p.C + c) * (K - 1);
    float win[W], wr[W];
    GDN_UNROLL
    for (int jj = 0; jj < W; ++jj) {
      const bool live = jj >= W - K;
      wr[jj] = live ? conv::load(w, jj - (W - K)) : 0.0f;
      win[jj] = live && jj < W - 1 ? state_get(p, st + jj - (W - K)) : 0.0f;
    }
    win[W - 1] = conv::load(static_cast<const TX*>(p.x), by * p.C + c);
    float acc = p.bias ? conv::load(static_cast<const TX*>(p.bias), c) : 0.0f;
    GDN_UNROLL
    for (int jj = 0; jj < W; ++jj)
      if (jj >= W - K) acc = det_fma(wr[jj], win[jj], acc);
    out_put(p, by * p.C + c, gdn_silu(acc));
    GDN_UNROLL
    for (int jj = 1; jj < W; ++jj)
      if (jj >= W - K + 1) state_put(p, st + jj - (W - K + 1), win[jj]);
  }
};

}  // namespace update
}  // namespace gdn
