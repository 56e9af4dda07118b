// conv arm `reg-k4x2` (docs/SPEC.md, "Causal conv: arms"): K = 4, two channel stripes per thread
// (c and c + 128) one after the other, a 256-channel tile: the second stripe reads its state only
// after the first stripe's whole chunk (the late read that once exposed #305).
#pragma once

#include "common/arms/conv_common.h"

namespace gdn {
namespace conv {

struct ArmRegK4x2 {
  static constexpr ArmSpec spec = {
      "reg-k4x2", "K = 4, two channels per thread (c, c+128), 256-channel tile",
      kThreads, 1, kRegX2Tile, GDN_CONV_CHUNK, kAllMappings, 0, 0, 4, 0, GDN_CONV_REG, 0, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  template <class TX, class TO, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const Span s = program_span<M>(p, t.by());
    if (s.t0 >= s.t1) return;
    reg_channel<TX, TO, M, 4>(p, s, t.bx() * kRegX2Tile + t.tid());
    reg_channel<TX, TO, M, 4>(p, s, t.bx() * kRegX2Tile + kRegTile + t.tid());
  }
};

}  // namespace conv
}  // namespace gdn
