// post-conv arm `tree` — the reference (docs/SPEC.md, "Post-conv: arms"). One block per (token, head
// slot) with max(32, next power of two >= Dk) threads. A q/k slot: thread i holds x_i² (0 past D) as
// a leaf in shared memory; the levels stride = width/2 .. 1 add node i + stride to node i, a block
// barrier before each; then every thread stores x_i * l2_inv(node 0). A value slot copies its head and
// thread 0 computes the gates of (token, head).
#pragma once

#include "common/arms/postconv_common.h"

namespace gdn {
namespace postconv {

struct ArmTree {
  static constexpr ArmSpec spec = {
      "tree", "shared-memory reduction tree over the next power of two >= Dk lanes per (token, head): the reference",
      kMaxD, 1, 1, 1, 0, kMaxD * 4, 0, 0, 0, -1, GDN_ARM_REFERENCE | GDN_ARM_BARRIER, kThreadsTreeOfD,
      kLayoutTokenSlot};
  static constexpr int kVariants = 1;
  static int variant(const Params&) { return 0; }

  template <class TC, class TQ, class TG, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    const int64_t tok = t.bx();
    const Slot s = decode_slot(p, t.by());
    const int tid = t.tid();
    if (s.kind == kSlotV) {  // the whole block: no thread reaches a barrier
      tree_value_thread<TC, TQ, TG>(p, s, tok, tid, t.threads());
      return;
    }
    float* nodes = t.smem();
    const int width = tree_width(s.width);
    const float x = tid < s.width ? slot_x<TC>(p, s, tok, tid) : 0.0f;
    if (tid < width) nodes[tid] = tree_leaf(x, tid, s.width);
    for (int stride = width / 2; stride >= 1; stride /= 2) {
      t.sync();
      if (tid < stride) tree_level(nodes, tid, stride);
    }
    t.sync();
    tree_store<TQ>(s, tok, tid, x, nodes[0]);
  }
};

}  // namespace postconv
}  // namespace gdn
