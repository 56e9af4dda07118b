// post-conv arm `vec-tile` (docs/SPEC.md §6): token-tile's grid, warps, value copies and gate slot,
// with the q/k rows moved in 16-byte vectors. token-tile's q/k lanes load features l, l+32, l+64,
// l+96 of a row, 2 bytes each: 64 bytes per warp instruction, and the profile of that kernel is
// memory-latency-bound (docs/BENCHMARKS.md, "Post-conv": ncu at 41a2db4). Here a warp's 4 tokens are
// two rows at a time, one per 16-lane half; lane q of a half holds features 8q .. 8q+7 of its row
// (one 16-byte load in bf16, two in f32), and the tree's levels are rebuilt from shuffles inside the
// half (tree_sum16). The sums are the tree's, so the bits are `tree`'s and token-tile's.
// Needs Dk = Dv = 128 (else `tree` runs).
#pragma once

#include "common/arms/postconv_token_tile.h"

namespace gdn {
namespace postconv {

constexpr int kRowLanes = 16;  // lanes per 128-feature row: 8 features each
constexpr int kRowFeatures = kTileD / kRowLanes;  // 8
constexpr int kWarpRows = 2;   // rows per half-warp pass: tokens 2r + half, r = 0, 1

// Eight consecutive features of a row as loaded (Row8), or the four of them a lane hands over at the
// first level (Row4). bf16 rows stay packed, two features per 32-bit word, and widen where they are
// read: 4 registers per row instead of 8, and 2 shuffles instead of 4 to move half a row. at() is the
// exact widening of to_f32, so a value is the same whichever form held it.
template <class TC>
struct Row4;
template <class TC>
struct Row8;

template <>
struct Row4<float> {
  float v[4];
  GDN_HDI float at(int e) const { return v[e]; }
  template <class Ctx>
  GDN_HDI Row4 shfl_xor(int mask, Ctx& t) const {
    Row4 r;
    const int masks[4] = {mask, mask, mask, mask};
    t.shfl_xor_each(masks, [&](int e) { return v[e]; }, [&](int e, float got) { r.v[e] = got; });
    return r;
  }
};
template <>
struct Row8<float> {
  float v[kRowFeatures];
  GDN_HDI void load(const float* src, bool vec) { tile_load8(src, v, vec); }
  GDN_HDI void zero() {
    GDN_UNROLL
    for (int e = 0; e < kRowFeatures; ++e) v[e] = 0.0f;
  }
  GDN_HDI float at(int e) const { return v[e]; }
  // features 4h .. 4h+3
  GDN_HDI Row4<float> half(bool h) const {
    Row4<float> r;
    GDN_UNROLL
    for (int e = 0; e < 4; ++e) r.v[e] = h ? v[4 + e] : v[e];
    return r;
  }
};

template <>
struct Row4<uint16_t> {
  uint32_t w[2];
  GDN_HDI float at(int e) const { return bf16_word_at(w, e); }
  template <class Ctx>
  GDN_HDI Row4 shfl_xor(int mask, Ctx& t) const {
    Row4 r;
    const int masks[2] = {mask, mask};
    t.shfl_xor_each(masks, [&](int i) { return (int32_t)w[i]; }, [&](int i, int32_t got) { r.w[i] = (uint32_t)got; });
    return r;
  }
};
template <>
struct Row8<uint16_t> {
  uint32_t w[kRowFeatures / 2];
  GDN_HDI void load(const uint16_t* src, bool vec) {
    if (vec) {
      load16_words(src, w);
    } else {
      GDN_UNROLL
      for (int i = 0; i < kRowFeatures / 2; ++i) w[i] = (uint32_t)load_ro_bits(src + 2 * i) | ((uint32_t)load_ro_bits(src + 2 * i + 1) << 16);
    }
  }
  GDN_HDI void zero() {
    GDN_UNROLL
    for (int i = 0; i < kRowFeatures / 2; ++i) w[i] = 0u;
  }
  GDN_HDI float at(int e) const { return bf16_word_at(w, e); }
  GDN_HDI Row4<uint16_t> half(bool h) const {
    Row4<uint16_t> r;
    r.w[0] = h ? w[2] : w[0];
    r.w[1] = h ? w[3] : w[1];
    return r;
  }
};

// The tree's sum of squares of one 128-feature row held by the 16 lanes of a half-warp, lane q
// holding features 8q + e, e = 0..7. The tree adds node i and node i + stride at levels
// stride = 64 .. 1 (postconv_common.h, tree_level; the leaves are the squares); which lane holds
// which node:
//   level 64: node i = 8m + e pairs with 8(m+8) + e: lanes q and q^8. The lane with q & 8 clear keeps
//             e = 0..3, its partner e = 4..7; each hands over the four features its partner keeps,
//             and squares what it receives (a square is the same plain multiply in every lane);
//   level 32: lanes q and q^4 (m and m+4), each keeping two of its four nodes;
//   level 16: lanes q and q^2, each keeping one;
//   level 8:  lanes q and q^1 hold nodes e and e + 8 of the same e = 4·q3 + 2·q2 + q1 (q's bits);
//             both keep the sum;
//   levels 4, 2, 1: e's bits 2, 1, 0 are q's bits 3, 2, 1: lanes q^8, q^4, q^2.
// Every addition adds the same two nodes as the tree's, and x + y == y + x in IEEE arithmetic, so
// every lane of the half ends with the tree's node 0. The shuffles never cross the halves (offsets
// <= 8): 11 per pair of rows for f32 rows, 9 for bf16; token-tile makes 5 per row. The host waits 7 times
// for them (shfl_xor_each: a half-row's words and level 32's pair are one exchange step each).
template <class TC, class Ctx>
GDN_HD inline float tree_sum16(const Row8<TC>& x, int q, Ctx& t) {
  const bool hi8 = (q & 8) != 0, hi4 = (q & 4) != 0, hi2 = (q & 2) != 0;
  const Row4<TC> kept = x.half(hi8);
  const Row4<TC> got = x.half(!hi8).shfl_xor(8, t);
  float n4[4];
  GDN_UNROLL
  for (int k = 0; k < 4; ++k) n4[k] = square(kept.at(k)) + square(got.at(k));  // level 64
  float n2[2];
  const int masks32[2] = {4, 4};
  t.shfl_xor_each(  // level 32: its two exchanges are one step
      masks32, [&n4, hi4](int k) { return hi4 ? n4[k] : n4[2 + k]; },
      [&n2, &n4, hi4](int k, float got) { n2[k] = (hi4 ? n4[2 + k] : n4[k]) + got; });
  float n = (hi2 ? n2[1] : n2[0]) + t.shfl_xor(hi2 ? n2[0] : n2[1], 2);  // level 16
  n = n + t.shfl_xor(n, 1);  // level 8
  n = n + t.shfl_xor(n, 8);  // level 4
  n = n + t.shfl_xor(n, 4);  // level 2
  n = n + t.shfl_xor(n, 2);  // level 1
  return n;
}

struct ArmVecTile {
  // 0: element loads and stores; 1: 16-byte vectors for every head (conv_out, q, k and v 16-byte
  // aligned). The bits are the same; only how bytes travel differs.
  static constexpr int kVariants = 2;
  static int variant(const Params& p) { return p.qkv_vec16 ? 1 : 0; }

  // q/k slot, one warp, `tokens` (<= 4, warp-uniform) tokens from tw: half h takes tokens h and
  // 2 + h. Both rows are loaded before either is reduced. A lane whose token is past `tokens` holds
  // zeros and still takes part in the shuffles (they need the whole warp), and stores nothing.
  template <class TC, class TQ, bool kVec, class Ctx>
  GDN_HD static void qk_warp(const Params& p, const Slot& s, int64_t tw, int tokens, int lane, Ctx& t) {
    const int half = lane / kRowLanes;
    const int q = lane % kRowLanes;
    const TC* src = static_cast<const TC*>(p.conv) + tw * p.C + s.src_col + kRowFeatures * q;
    TQ* dst = static_cast<TQ*>(s.dst) + tw * s.dst_row + s.dst_col + kRowFeatures * q;
    Row8<TC> x[kWarpRows];
    GDN_UNROLL
    for (int r = 0; r < kWarpRows; ++r) {
      const int j = 2 * r + half;
      if (j < tokens) x[r].load(src + j * p.C, kVec);
      else x[r].zero();
    }
    GDN_UNROLL
    for (int r = 0; r < kWarpRows; ++r) {
      const int j = 2 * r + half;
      const float inv = l2_inv(tree_sum16(x[r], q, t));
      if (j < tokens) {
        float y[kRowFeatures];
        GDN_UNROLL
        for (int e = 0; e < kRowFeatures; ++e) y[e] = x[r].at(e) * inv;
        tile_store8(dst + j * s.dst_row, y, kVec);
      }
    }
  }

  template <class TC, class TQ, class TG, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    tile_block<ArmVecTile, TC, TQ, TG, V>(p, t);
  }

  static constexpr ArmSpec spec = {
      "vec-tile", "token-tile's blocks; q/k rows in 16-byte vectors, 16 lanes x 8 features per row, the tree rebuilt from shuffles",
      kTileThreads, 16, 1, kTileTokens, 0, 0, 0, 0, GDN_ARM_REQ_D128, GDN_POSTCONV_TREE, GDN_ARM_SHUFFLE,
      kThreadsFixed, kLayoutTileSlots};
};

}  // namespace postconv
}  // namespace gdn
