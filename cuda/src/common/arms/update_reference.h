// conv update arm `reference` (docs/SPEC.md §5): plain loops, the state
// read and shifted element by element.
#pragma once

#include "common/arms/update_common.h"

namespace gdn {
namespace update {

struct ArmReference {
  static constexpr ArmSpec spec = {
      "reference", "one thread per (sequence, channel), plain loops: the reference",
      kThreads, 1, kThreads, 1, 0, 0, 0, 0, 0, -1, GDN_ARM_REFERENCE, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  template <class TX, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const int64_t c = t.bx() * kThreads + t.tid();
    const int64_t by = t.by();
    if (c >= p.C) return;
    const int32_t slot = slot_of(p, by);
    if (slot < 0) return;
    const int K = p.K;
    const TX* w = static_cast<const TX*>(p.w) + c * K;
    const int64_t st = ((int64_t)slot * p.C + c) * (K - 1);
    const float xv = conv::load(static_cast<const TX*>(p.x), by * p.C + c);
    float acc = p.bias ? conv::load(static_cast<const TX*>(p.bias), c) : 0.0f;
    for (int j = 0; j < K - 1; ++j) acc = det_fma(conv::load(w, j), state_get(p, st + j), acc);
    acc = det_fma(conv::load(w, K - 1), xv, acc);
    out_put(p, by * p.C + c, gdn_silu(acc));
    for (int j = 0; j + 1 < K - 1; ++j) state_put(p, st + j, state_get(p, st + j + 1));
    state_put(p, st + K - 2, xv);
  }
};

}  // namespace update
}  // namespace gdn
