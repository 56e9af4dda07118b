// conv arm `reg-k4` (docs/SPEC.md, "Causal conv: arms"): the register window with K = 4 fixed at
// compile time (no tap guards); any other K runs `reg`.
#pragma once

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

struct ArmRegK4 {
  static constexpr ArmSpec spec = {
      "reg-k4", "as reg with K = 4 fixed at compile time, 8-token chunks",
      kThreads, 1, kRegTile, GDN_CONV_CHUNK, kAllMappings, 0, 0, 4, 0, GDN_CONV_REG, 0, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const Span s = program_span<M>(p, t.by());
    if (s.t0 >= s.t1) return;
    reg_channel<TX, TO, M, 4>(p, s, t.bx() * kRegTile + t.tid());
  }
};

}  // namespace conv
}  // namespace gdn
