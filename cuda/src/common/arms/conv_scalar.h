// conv arm `scalar` — the reference (docs/SPEC.md, "Causal conv: arms").
// One thread per (sequence, channel), serial over tokens; every tap re-reads its input (x or the old
// state). Nothing is cached, so nothing can be stale.
#pragma once

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

struct ArmScalar {
  static constexpr ArmSpec spec = {
      "scalar", "one thread per (sequence, channel), serial over tokens, every tap re-read: the reference",
      kThreads, 1, kScalarTile, 0, kWholeSequences, 0, 0, 0, 0, -1, GDN_ARM_REFERENCE, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const int64_t c_lane = t.bx() * kScalarTile + t.tid();
    const bool in_range = c_lane < p.C;
    if (!in_range && !M::is(p, kNoTailGuard)) return;
    const int64_t c = in_range ? c_lane : p.C - 1;
    const Span s = program_span<M>(p, t.by());
    if (s.end == s.start) return;  // an empty sequence leaves its state as it was
    const int K = p.K;
    const bool init = has_initial_state(p, s.seq);
    const TX* w = static_cast<const TX*>(p.w) + c * K;
    const float b = p.bias ? load(static_cast<const TX*>(p.bias), c) : 0.0f;

    // The final state, taken before any token is computed (the state is read in place).
    float fin[kMaxK - 1];
    for (int j = 0; j < K - 1; ++j) fin[j] = input_at<TX>(p, s, init, s.end - (K - 1) + j, c);

    for (int64_t tok = s.start; tok < s.end; ++tok) {
      float acc = b;
      for (int j = 0; j < K; ++j) {
        const int tap = M::is(p, kTapsReversed) ? K - 1 - j : j;
        acc = det_fma(load(w, tap), input_at<TX>(p, s, init, tok - (K - 1) + j, c), acc);
      }
      const float y = gdn_silu(acc);
      store_out<TO>(p, tok, c_lane, y);
      if (M::is(p, kStateFromOutput) && tok >= s.end - (K - 1)) fin[tok - (s.end - (K - 1))] = y;
    }
    if (in_range) {
      float* st = state_row(p, s.seq, c);
      for (int j = 0; j < K - 1; ++j) st[j] = fin[j];
    }
  }
};

}  // namespace conv
}  // namespace gdn
