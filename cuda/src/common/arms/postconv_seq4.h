// post-conv arm `seq4` — a PLANTED MUTANT (docs/SPEC.md, "Post-conv: arms"): the token tile with the
// sequential lane fold ((x0²+x1²)+x2²)+x3² (postconv_common.h, fold_seq4). Wrong f32 bits on about 9%
// of q/k rows, almost none visible in bf16: it exists so that a bit-identity check has something to
// catch.
#pragma once

#include "common/arms/postconv_token_tile.h"

namespace gdn {
namespace postconv {

struct ArmSeq4 : TokenTileBody<true> {
  static constexpr ArmSpec spec = {
      "seq4", "PLANTED MUTANT: the token tile with the sequential fold ((x0²+x1²)+x2²)+x3²",
      kTileThreads, 16, 1, kTileTokens, 0, 0, 0, 0, GDN_ARM_REQ_D128, GDN_POSTCONV_TREE,
      GDN_ARM_SHUFFLE | GDN_ARM_MUTANT, kThreadsFixed, kLayoutTileSlots};
};

}  // namespace postconv
}  // namespace gdn
