// postconv_wide.h — `wide-tile`, a post-conv variant measured by cuda/tests/tile_tune.cu and not a
// library arm: bit-identical to tree, but no faster than token-tile on an H200 (1.09–1.59x copy
// against token-tile's 1.05–1.24x at T >= 2048, CHANGELOG 2026-12-01, 0cc566a); kept so that the
// comparison can be re-run. Written against the execution interface (t.lane(), t.warp(), t.shfl_xor())
// like a library arm.
//
// Like token-tile, a block of 4 warps owns (head slot, tile of tokens) and each warp a run of WT
// tokens, but a q/k lane moves pairs of features: lane l holds features 2l, 2l+1 (one 32-bit bf16
// pair) and 2l+64, 2l+65 (another), so a warp reads and writes a head row as 2 x 128 contiguous bytes
// per instruction instead of 4 x 64. The sum of squares is still the tree's, level by level:
//   level 64 (node i = x_i² + x_{i+64}², i < 64) in the lane:  a = x_{2l}² + x_{2l+64}²  (node 2l)
//                                                                b = x_{2l+1}² + x_{2l+65}² (node 2l+1)
//   levels 32, 16, 8, 4, 2 (node i += node i + s): the partner of node 2l is node 2l + s, held by lane
//     l + s/2 — xor shuffles 16, 8, 4, 2, 1 on a and on b (each lane adds its partner's value; the
//     two lanes of a pair add the same two numbers, and + is commutative, so both hold the node)
//   level 1: node 0 = node 0 + node 1 = a + b.
// So q and k are bit-identical to tree (and token-tile). Value slots are 16-byte-vector copies as in
// token-tile; the gate slot computes the tile's [tokens, Hv] gates. WT tokens per warp (token-tile:
// 4): more loads in flight per warp and fewer, longer blocks.
#pragma once

#include "common/arms/postconv_common.h"

namespace gdn {
namespace postconv {

constexpr int kWideWarpTokens = 8;  // tokens per warp of the library's wide-tile (tile_tune.cu)
constexpr int kWideTileTokens = kWideWarpTokens * kTileWarps;

// Two consecutive elements of T at an even index, as floats (one 32-bit access for bf16, 64-bit
// for f32 on the GPU when the row is aligned: kVec).
template <class T, bool kVec>
GDN_HDI void wide_load2(const T* src, float& lo, float& hi) {
#if defined(__CUDA_ARCH__)
  if constexpr (kVec && sizeof(T) == 2) {
    const uint32_t u = __ldg(reinterpret_cast<const unsigned int*>(src));
    lo = to_f32((uint16_t)(u & 0xffffu));
    hi = to_f32((uint16_t)(u >> 16));
    return;
  } else if constexpr (kVec && sizeof(T) == 4) {
    const float2 f = __ldg(reinterpret_cast<const float2*>(src));
    lo = f.x;
    hi = f.y;
    return;
  }
#endif
  lo = to_f32(src[0]);
  hi = to_f32(src[1]);
}
template <class T, bool kVec>
GDN_HDI void wide_store2(T* dst, float lo, float hi) {
#if defined(__CUDA_ARCH__)
  if constexpr (kVec && sizeof(T) == 2) {
    *reinterpret_cast<unsigned int*>(dst) = (uint32_t)from_f32<uint16_t>(lo) | ((uint32_t)from_f32<uint16_t>(hi) << 16);
    return;
  } else if constexpr (kVec && sizeof(T) == 4) {
    *reinterpret_cast<float2*>(dst) = make_float2(lo, hi);
    return;
  }
#endif
  dst[0] = from_f32<T>(lo);
  dst[1] = from_f32<T>(hi);
}

// q/k slot, one warp, `tokens` (<= WT, warp-uniform) tokens from tw: all loads first, then per token
// the tree as above, l2_inv and the stores.
template <class TC, class TQ, bool kVec, int WT, class Ctx>
GDN_HD inline void wide_qk_warp(const Params& p, const Slot& s, int64_t tw, int tokens, Ctx& t) {
  const int lane = t.lane();
  const TC* src = static_cast<const TC*>(p.conv) + tw * p.C + s.src_col + 2 * lane;
  TQ* dst = static_cast<TQ*>(s.dst) + tw * s.dst_row + s.dst_col + 2 * lane;
  float x[WT][4];
  GDN_UNROLL
  for (int j = 0; j < WT; ++j) {
    if (j < tokens) {
      wide_load2<TC, kVec>(src + j * p.C, x[j][0], x[j][1]);
      wide_load2<TC, kVec>(src + j * p.C + 64, x[j][2], x[j][3]);
    }
  }
  GDN_UNROLL
  for (int j = 0; j < WT; ++j) {
    if (j < tokens) {
      float a = square(x[j][0]) + square(x[j][2]);
      float b = square(x[j][1]) + square(x[j][3]);
      GDN_UNROLL
      for (int offset = kFirstShuffle; offset >= 1; offset /= 2) {
        a = a + t.shfl_xor(a, offset);
        b = b + t.shfl_xor(b, offset);
      }
      const float inv = l2_inv(a + b);
      wide_store2<TQ, kVec>(dst + j * s.dst_row, x[j][0] * inv, x[j][1] * inv);
      wide_store2<TQ, kVec>(dst + j * s.dst_row + 64, x[j][2] * inv, x[j][3] * inv);
    }
  }
}

// Value slot, one warp: `tokens` rows of 128 features as chunks of 8 (16 per row); lane l copies
// chunks l, l + 32, ... (WT / 2 per lane).
template <class TC, class TQ, bool kVec, int WT, class Ctx>
GDN_HD inline void wide_value_warp(const Params& p, const Slot& s, int64_t tw, int tokens, Ctx& t) {
  constexpr int kChunks = WT * 16 / 32;
  const int lane = t.lane();
  const TC* src = static_cast<const TC*>(p.conv) + tw * p.C + s.src_col;
  TQ* dst = static_cast<TQ*>(s.dst) + tw * s.dst_row + s.dst_col;
  float v[kChunks][8];
  GDN_UNROLL
  for (int r = 0; r < kChunks; ++r) {
    const int c = lane + 32 * r;
    if (c < tokens * 16) {
      const TC* q = src + (c / 16) * p.C + (c % 16) * 8;
      GDN_UNROLL
      for (int i = 0; i < 8; i += 2) wide_load2<TC, kVec>(q + i, v[r][i], v[r][i + 1]);
    }
  }
  GDN_UNROLL
  for (int r = 0; r < kChunks; ++r) {
    const int c = lane + 32 * r;
    if (c < tokens * 16) {
      TQ* q = dst + (c / 16) * s.dst_row + (c % 16) * 8;
      GDN_UNROLL
      for (int i = 0; i < 8; i += 2) wide_store2<TQ, kVec>(q + i, v[r][i], v[r][i + 1]);
    }
  }
}

// The whole body: block (slot, tile) as token-tile's grid (tile_block_coords), tiles of 4·WT tokens.
template <class TC, class TQ, class TG, bool kVec, int WT, class Ctx>
GDN_HD inline void wide_tile_thread(const Params& p, const TileBlock& blk, Ctx& t) {
  const Slot s = decode_slot(p, blk.slot);
  const int64_t t0 = blk.tile * (kTileWarps * WT);
  if (s.kind == kSlotGates) {
    const int tokens = tile_tokens(p, t0, kTileWarps * WT);
    const int heads = (int)p.Hv;
    for (int e = t.tid(); e < tokens * heads; e += kTileThreads) gate_element<TG>(p, t0 + e / heads, e % heads);
    return;
  }
  const int64_t tw = t0 + (int64_t)t.warp() * WT;
  const int tokens = tile_tokens(p, tw, WT);  // warp-uniform
  if (tokens == 0) return;
  if (s.kind == kSlotV) wide_value_warp<TC, TQ, kVec, WT>(p, s, tw, tokens, t);
  else wide_qk_warp<TC, TQ, kVec, WT>(p, s, tw, tokens, t);
}

}  // namespace postconv
}  // namespace gdn
