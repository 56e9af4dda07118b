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
#if !defined(__CUDA_ARCH__)
    if constexpr (W == 4) {  // the host: the block's channels in one pass (host_block below); threads 1.. return
      if (t.tid() == 0) host_block<TX>(p, t.bx(), t.by());
      return;
    }
#endif
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

#if !defined(__CUDA_ARCH__)
  // The host's replay of one K = 4 block (channels bx·128 .. bx·128 + 127 of sequence b): the thread bodies'
  // operations per channel, in the same order — acc = bias, det_fma over taps 0..3 oldest first, gdn_silu, the
  // stores, the state shifted by one — written as flat loops over the channels, so that GCC vectorises the
  // SiLU (gdn_silu_fast has no branch; a block with a pre-activation outside its range takes gdn_silu for all,
  // the same function). One thread body per channel made the decode update a scalar SiLU chain per call on the
  // host (CHANGELOG 2026-12-04, 3dbaa27). Each channel reads its own state before any is written, as its
  // thread does; channels do not share state, x, out or taps.
  template <class TX>
  static void host_block(const Params& p, int64_t bx, int64_t b) {
    const int32_t slot = slot_of(p, b);
    if (slot < 0) return;
    const int64_t c0 = bx * kThreads;
    const int n = (int)(p.C - c0 < kThreads ? p.C - c0 : kThreads);
    if (n <= 0) return;
    const TX* w = static_cast<const TX*>(p.w) + c0 * 4;
    const TX* x = static_cast<const TX*>(p.x) + b * p.C + c0;
    const int64_t st = ((int64_t)slot * p.C + c0) * 3;
    float win[4][kThreads], acc[kThreads], y[kThreads];
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < 3; ++j) win[j][i] = state_get(p, st + 3 * i + j);
      win[3][i] = conv::load(x, i);
      acc[i] = p.bias ? conv::load(static_cast<const TX*>(p.bias), c0 + i) : 0.0f;
    }
    for (int j = 0; j < 4; ++j)
      for (int i = 0; i < n; ++i) acc[i] = det_fma(conv::load(w, 4 * i + j), win[j][i], acc[i]);
    bool fast = true;
    for (int i = 0; i < n; ++i) fast &= gdn_silu_fast_range(acc[i]);
    if (fast) {
#pragma GCC ivdep
      for (int i = 0; i < n; ++i) y[i] = gdn_silu_fast(acc[i]);
    } else {
      for (int i = 0; i < n; ++i) y[i] = gdn_silu(acc[i]);
    }
    for (int i = 0; i < n; ++i) out_put(p, b * p.C + c0 + i, y[i]);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < 3; ++j) state_put(p, st + 3 * i + j, win[j + 1][i]);
  }
#endif
};

}  // namespace update
}  // namespace gdn
