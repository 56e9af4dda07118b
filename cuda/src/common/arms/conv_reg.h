// conv arm `reg` (docs/SPEC.md, "Causal conv: arms"): a register window, one thread per channel,
// 128-channel tile, K at run time (taps below the window's width skipped).
#pragma once

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

struct ArmReg {
  static constexpr ArmSpec spec = {
      "reg", "register window, one thread per channel, 128-channel tile, K at run time",
      kThreads, 1, kRegTile, GDN_CONV_CHUNK, kAllMappings, 0, 0, 0, 0, -1, 0, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const Span s = program_span<M>(p, t.by());
    if (s.t0 >= s.t1) return;
    reg_channel<TX, TO, M, 0>(p, s, t.bx() * kRegTile + t.tid());
  }
};

}  // namespace conv
}  // namespace gdn
