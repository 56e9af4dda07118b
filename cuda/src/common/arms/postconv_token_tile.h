// post-conv arm `token-tile` (docs/SPEC.md §6). One block of 4 warps per (head slot,
// 16 tokens), 4 tokens per warp; slots vary fastest in the grid (see postconv_common.h). A q/k warp:
// lane l loads features l, l+32, l+64, l+96 of its tokens, folds them as the tree's first two levels
// (x0²+x2²)+(x1²+x3²) and finishes with xor shuffles 16..1, the tree's remaining levels: the same
// bits as `tree`. A value warp is a convert-copy in 8-element chunks (16-byte vectors on the GPU when
// conv_out and v are 16-byte aligned: variant 1). The extra slot 2Hk+Hv computes the tile's gates.
// Needs Dk = Dv = 128 (else `tree` runs).
//
// TokenTileBody<Fold> is shared with the planted mutant `seq4` (postconv_seq4.h), which differs only
// in the lane fold.
#pragma once

#include "common/arms/postconv_common.h"

namespace gdn {
namespace postconv {

// Read-only loads through the non-coherent cache on the GPU; loads are exact, stores round once.
GDN_HDI float load_ro(const float* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}
GDN_HDI uint16_t load_ro_bits(const uint16_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}
GDN_HDI float load_ro(const uint16_t* p) { return to_f32(load_ro_bits(p)); }

// 16 bytes at a 16-byte aligned src as four words (eight bf16, the first in the low half of w[0]):
// one 16-byte load on the GPU, memcpy on the host.
GDN_HDI void load16_words(const uint16_t* src, uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(src));
  w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
#else
  std::memcpy(w, src, 16);
#endif
}
// bf16 element e of packed words w, widened exactly.
GDN_HDI float bf16_word_at(const uint32_t* w, int e) {
  return to_f32((uint16_t)((e & 1) ? (w[e / 2] >> 16) : (w[e / 2] & 0xffffu)));
}

// Eight consecutive elements. vec (16-byte aligned): one 16-byte access for bf16, two for f32 on the
// GPU; the host moves the same bytes with memcpy. Element by element otherwise.
GDN_HDI void tile_load8(const float* src, float x[8], bool vec) {
  if (vec) {
#if defined(__CUDA_ARCH__)
    const float4 lo = __ldg(reinterpret_cast<const float4*>(src));
    const float4 hi = __ldg(reinterpret_cast<const float4*>(src) + 1);
    x[0] = lo.x; x[1] = lo.y; x[2] = lo.z; x[3] = lo.w;
    x[4] = hi.x; x[5] = hi.y; x[6] = hi.z; x[7] = hi.w;
#else
    std::memcpy(x, src, 32);
#endif
  } else {
    GDN_UNROLL
    for (int i = 0; i < 8; ++i) x[i] = load_ro(src + i);
  }
}
GDN_HDI void tile_load8(const uint16_t* src, float x[8], bool vec) {
  if (vec) {
    uint32_t words[4];
    load16_words(src, words);
    GDN_UNROLL
    for (int e = 0; e < 8; ++e) x[e] = bf16_word_at(words, e);
  } else {
    GDN_UNROLL
    for (int i = 0; i < 8; ++i) x[i] = load_ro(src + i);
  }
}
GDN_HDI void tile_store8(float* dst, const float y[8], bool vec) {
  if (vec) {
#if defined(__CUDA_ARCH__)
    reinterpret_cast<float4*>(dst)[0] = make_float4(y[0], y[1], y[2], y[3]);
    reinterpret_cast<float4*>(dst)[1] = make_float4(y[4], y[5], y[6], y[7]);
#else
    std::memcpy(dst, y, 32);
#endif
  } else {
    GDN_UNROLL
    for (int i = 0; i < 8; ++i) dst[i] = y[i];
  }
}
GDN_HDI void tile_store8(uint16_t* dst, const float y[8], bool vec) {
  if (vec) {
    uint32_t words[4];
    GDN_UNROLL
    for (int i = 0; i < 4; ++i)
      words[i] = (uint32_t)from_f32<uint16_t>(y[2 * i]) | ((uint32_t)from_f32<uint16_t>(y[2 * i + 1]) << 16);
#if defined(__CUDA_ARCH__)
    *reinterpret_cast<uint4*>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
#else
    std::memcpy(dst, words, 16);
#endif
  } else {
    GDN_UNROLL
    for (int i = 0; i < 8; ++i) dst[i] = from_f32<uint16_t>(y[i]);
  }
}

constexpr int kChunk = 8;
constexpr int kRowChunks = kTileD / kChunk;                  // 16
constexpr int kLaneChunks = kWarpTokens * kRowChunks / 32;  // 2

// The block of every token-tile-layout arm (kLayoutTileSlots): the gate slot, or one warp's tokens of a
// value head (TokenTileBody::value_warp) or of a q/k head (Arm::qk_warp<TC, TQ, kVec>: the arm's own).
template <class Arm, class TC, class TQ, class TG, int V, class Ctx>
GDN_HD inline void tile_block(const Params& p, Ctx& t);

// x[j][m] is loaded and read under the same warp-uniform `j < tokens`; GCC cannot see that.
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
template <bool kSeq4>
struct TokenTileBody {
  static constexpr int kVariants = 2;  // 0: element copies, 1: 16-byte vector copies of value heads
  static int variant(const Params& p) { return p.vec16 ? 1 : 0; }

  // q/k slot, one warp, `tokens` (<= 4, warp-uniform) tokens from tw. Lane l loads features l, l+32,
  // l+64, l+96 of every token first (16 independent loads in flight), then per token: the lane fold,
  // five xor-shuffle levels 16..1, l2_inv, and the stores. Measured on an H200, these lane-strided
  // loads beat staging the rows through shared memory with 16-byte vectors (by 2-5%). The loads are
  // element loads whatever the variant (kVec is tile_block's common signature; vec-tile uses it).
  template <class TC, class TQ, bool kVec, class Ctx>
  GDN_HD static void qk_warp(const Params& p, const Slot& s, int64_t tw, int tokens, int lane, Ctx& t) {
    const TC* src = static_cast<const TC*>(p.conv) + tw * p.C + s.src_col + lane;
    TQ* dst = static_cast<TQ*>(s.dst) + tw * s.dst_row + s.dst_col + lane;
    float x[kWarpTokens][4];
    GDN_UNROLL
    for (int j = 0; j < kWarpTokens; ++j)
      GDN_UNROLL
      for (int m = 0; m < 4; ++m) if (j < tokens) x[j][m] = load_ro(src + j * p.C + 32 * m);
    GDN_UNROLL
    for (int j = 0; j < kWarpTokens; ++j) {
      if (j < tokens) {
        float sum = lane_fold<kSeq4>(x[j][0], x[j][1], x[j][2], x[j][3]);
        GDN_UNROLL
        for (int offset = kFirstShuffle; offset >= 1; offset /= 2) sum = sum + t.shfl_xor(sum, offset);
        const float inv = l2_inv(sum);
        GDN_UNROLL
        for (int m = 0; m < 4; ++m) dst[j * s.dst_row + 32 * m] = from_f32<TQ>(x[j][m] * inv);
      }
    }
  }

  // Value slot, one warp: a convert-copy of `tokens` rows of 128 features in chunks of 8 (16 per row,
  // 2 per lane). kVec is a template parameter: a run-time test cost 10% on an H200 (bf16,
  // T = 8192..32768).
  template <class TC, class TQ, bool kVec>
  GDN_HD static void value_warp(const Params& p, const Slot& s, int64_t tw, int tokens, int lane) {
    const TC* src = static_cast<const TC*>(p.conv) + tw * p.C + s.src_col;
    TQ* dst = static_cast<TQ*>(s.dst) + tw * s.dst_row + s.dst_col;
    float x[kLaneChunks][kChunk];
    GDN_UNROLL
    for (int r = 0; r < kLaneChunks; ++r) {  // all loads first
      const int c = lane + 32 * r;
      if (c < tokens * kRowChunks) tile_load8(src + (c / kRowChunks) * p.C + (c % kRowChunks) * kChunk, x[r], kVec);
    }
    GDN_UNROLL
    for (int r = 0; r < kLaneChunks; ++r) {
      const int c = lane + 32 * r;
      if (c < tokens * kRowChunks) tile_store8(dst + (c / kRowChunks) * s.dst_row + (c % kRowChunks) * kChunk, x[r], kVec);
    }
  }

  // Block (x, y): slot x % slots, token tile (x / slots) * grid_y + y (tile_block_coords). One tile
  // per block and no loop: a grid-stride loop over tiles kept values live across iterations and took
  // the kernel to 71 registers (7 blocks per SM, 25% slower on an H200). 32 registers give the full
  // 16 blocks (64 warps) per SM without spills.
  template <class TC, class TQ, class TG, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    tile_block<TokenTileBody, TC, TQ, TG, V>(p, t);
  }
};

#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

template <class Arm, class TC, class TQ, class TG, int V, class Ctx>
GDN_HD inline void tile_block(const Params& p, Ctx& t) {
  const TileBlock b = tile_block_coords(p, (uint32_t)t.bx(), (uint32_t)t.by(), (uint32_t)t.grid_y());
  const Slot s = decode_slot(p, b.slot);
  const int64_t t0 = b.tile * kTileTokens;
  if (s.kind == kSlotGates) {
    tile_gates_thread<TG>(p, t0, t.tid());
    return;
  }
  const int warp = t.warp();
  const int lane = t.lane();
  const int64_t tw = t0 + (int64_t)warp * kWarpTokens;
  const int tokens = tile_tokens(p, tw, kWarpTokens);  // warp-uniform: every lane takes part in the shuffles
  if (tokens == 0) return;
  if (s.kind == kSlotV) TokenTileBody<false>::value_warp<TC, TQ, V == 1>(p, s, tw, tokens, lane);
  else Arm::template qk_warp<TC, TQ, V == 1>(p, s, tw, tokens, lane, t);
}

struct ArmTokenTile : TokenTileBody<false> {
  static constexpr ArmSpec spec = {
      "token-tile", "16 tokens x 4 warps per block, lane fold (x0²+x2²)+(x1²+x3²), then xor shuffles 16..1",
      kTileThreads, 16, 1, kTileTokens, 0, 0, 0, 0, GDN_ARM_REQ_D128, GDN_POSTCONV_TREE, GDN_ARM_SHUFFLE,
      kThreadsFixed, kLayoutTileSlots};
};

}  // namespace postconv
}  // namespace gdn
