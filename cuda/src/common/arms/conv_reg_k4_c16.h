// conv arm `reg-k4-c16` (docs/SPEC.md §3.5): the K = 4 register window of reg-k4 with
// 16-token exact-mapping programs instead of 8: half the programs, so half the K-1 halo rows
// re-read from x and half the chunk-0 state reads, for twice the serial tokens per thread. Any
// other K runs `reg`. The arm that docs/MAINTAINING.md walks through ("Adding a conv arm").
#pragma once

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

struct ArmRegK4C16 {
  static constexpr ArmSpec spec = {
      "reg-k4-c16", "as reg-k4 (K = 4 fixed) with 16-token chunks: half the programs and halo re-reads",
      kThreads, 1, kRegTile, 16, kAllMappings, 0, 0, 4, 0, GDN_CONV_REG, 0, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const Span s = program_span<M>(p, t.by());  // the plan's chunk: spec.tokens_per_program = 16
    if (s.t0 >= s.t1) return;
    reg_channel<TX, TO, M, 4>(p, s, t.bx() * kRegTile + t.tid());
  }
};

}  // namespace conv
}  // namespace gdn
