// postconv_common.h — what every post-conv arm shares (docs/SPEC.md §6): parameters,
// head slots, element loads and stores, the squares, the tree's levels and the token tile's lane
// fold, the L2 scale, the gates. The arm bodies (postconv_tree.h, postconv_token_tile.h, ...) are
// written once against common/exec.h and run on both backends; the backends differ only in how bytes
// travel (the GPU copies value heads in 16-byte vectors, the host with memcpy), which never changes a
// value.
//
// Rules (docs/SPEC.md §9): no implicit contraction (the build sets nvcc --fmad=false and g++
// -ffp-contract=off); every square is a plain multiply x * x; sqrt and division are the IEEE
// correctly rounded ones on both sides (never rsqrtf); exp and log1p come from detmath.h.
#pragma once

// <cmath> and <cstring> first: detmath.h includes them only outside nvcc, yet its host-side
// branches (std::memcpy) and ours (std::sqrt) are compiled by nvcc's host pass too.
#include <cmath>
#include <cstring>
#include <stdint.h>

#include "common/arms/arm_spec.h"
#include "common/detmath.h"
#include "common/exec.h"

namespace gdn {
namespace postconv {

// ----------------------------------------------------------------- launch shapes
constexpr int kTileTokens = 16;    // token-tile arms: tokens per block
constexpr int kTileWarps = 4;      // warps per block
constexpr int kWarpTokens = 4;     // tokens per warp (kTileTokens / kTileWarps)
constexpr int kTileThreads = 128;  // kTileWarps * 32
constexpr int kTileD = 128;        // the token tile needs Dk = Dv = 128: 4 features per lane
constexpr int kMaxD = 1024;        // largest Dk / Dv (tree width and block size at most 1024)
constexpr int64_t kMaxGridY = 65535;  // CUDA's gridDim.y limit

// Token-tile grid: x = fold * slots + slot, y = row; tile = fold * rows + row. rows = min(tiles,
// 65535) and folds = ceil(tiles / rows), so T up to 2^31 tokens fits a 2-D grid with slots varying
// fastest and one tile per block.
GDN_HD inline int64_t tile_count(int64_t T) { return (T + kTileTokens - 1) / kTileTokens; }
GDN_HD inline int64_t tile_grid_rows(int64_t T) {
  const int64_t tiles = tile_count(T);
  return tiles < kMaxGridY ? tiles : kMaxGridY;
}
GDN_HD inline int64_t tile_grid_folds(int64_t T) {
  const int64_t rows = tile_grid_rows(T);
  return rows == 0 ? 0 : (tile_count(T) + rows - 1) / rows;
}

// Tree arm width: the next power of two >= D. Lanes past D hold 0, so the tree over D = 300 is the
// tree over 512 lanes with x_i² = 0 for i >= 300 (adding +0 never changes a sum of squares).
GDN_HD inline int tree_width(int64_t D) {
  int w = 1;
  while (w < D) w *= 2;
  return w;
}
// Tree blocks have max(32, width(Dk)) threads: one lane per tree leaf, at least a full warp.
GDN_HD inline int tree_threads(int64_t Dk) {
  const int w = tree_width(Dk);
  return w < 32 ? 32 : w;
}

// ----------------------------------------------------------------- parameters
// A plain struct passed by value to every kernel. Element types are decided by template
// parameters: float for f32, uint16_t for bf16 bits.
struct Params {
  int64_t T, Hk, Hv, Dk, Dv;
  int64_t C;                 // 2*Hk*Dk + Hv*Dv
  int64_t a_stride, b_stride;
  const void* conv;          // [T, C]
  const void* a;             // row t at a + t*a_stride
  const void* b;
  const float* A_log;        // [Hv]
  const float* dt_bias;      // [Hv]
  void* q;                   // [T, Hk, Dk]
  void* k;                   // [T, Hk, Dk]
  void* v;                   // [T, Hv, Dv]
  float* g;                  // [T, Hv]
  float* beta;               // [T, Hv]
  int32_t vec16;             // 1: conv_out and v are 16-byte aligned (token tile: vector value copies)
  int32_t qkv_vec16;         // 1: conv_out, q, k and v are 16-byte aligned (vec-tile: vectors for every head)
};

// ----------------------------------------------------------------- head slots
// A head slot is one block coordinate of every arm: [0, Hk) q heads, [Hk, 2Hk) k heads, [2Hk, 2Hk+Hv)
// value heads (the tree arm also computes that head's g and beta there), and for the token-tile
// arms one more slot, 2Hk+Hv, computing g and beta of all Hv heads for a tile of 16 tokens.
//   tree:        blockIdx.x = token, blockIdx.y = slot
//   token tile:  blockIdx.x = slot (+ a fold of 65535 tiles per 2Hk+Hv+1), blockIdx.y = token tile.
//                Slots vary fastest so that the blocks resident on an SM at any time mix q/k blocks
//                (which compute between load and store) with value blocks (pure streaming):
//                measured on an H200, 10% faster than tiles varying fastest.
enum SlotKind { kSlotQ = 0, kSlotK = 1, kSlotV = 2, kSlotGates = 3 };

struct Slot {
  int kind;
  int64_t head;
  int64_t width;       // features of the head (Dk or Dv)
  int64_t src_col;     // first channel in a conv_out row
  int64_t dst_row;     // elements between tokens of the destination (Hk*Dk or Hv*Dv)
  int64_t dst_col;     // first element of the head in a destination row
  void* dst;           // q, k or v
};

GDN_HD inline Slot decode_slot(const Params& p, int64_t slot) {
  Slot s;
  if (slot < p.Hk) {
    s.kind = kSlotQ; s.head = slot; s.width = p.Dk;
    s.src_col = slot * p.Dk; s.dst_row = p.Hk * p.Dk; s.dst_col = slot * p.Dk; s.dst = p.q;
  } else if (slot < 2 * p.Hk) {
    const int64_t h = slot - p.Hk;
    s.kind = kSlotK; s.head = h; s.width = p.Dk;
    s.src_col = p.Hk * p.Dk + h * p.Dk; s.dst_row = p.Hk * p.Dk; s.dst_col = h * p.Dk; s.dst = p.k;
  } else if (slot < 2 * p.Hk + p.Hv) {
    const int64_t h = slot - 2 * p.Hk;
    s.kind = kSlotV; s.head = h; s.width = p.Dv;
    s.src_col = 2 * p.Hk * p.Dk + h * p.Dv; s.dst_row = p.Hv * p.Dv; s.dst_col = h * p.Dv; s.dst = p.v;
  } else {
    s.kind = kSlotGates; s.head = 0; s.width = 0; s.src_col = 0; s.dst_row = 0; s.dst_col = 0;
    s.dst = nullptr;
  }
  return s;
}

// ----------------------------------------------------------------- element conversion
GDN_HD inline float to_f32(float x) { return x; }
GDN_HD inline float to_f32(uint16_t bf16) { return bf16_to_f32(bf16); }

template <class T> GDN_HD inline T from_f32(float x);
template <> GDN_HD inline float from_f32<float>(float x) { return x; }
template <> GDN_HD inline uint16_t from_f32<uint16_t>(float x) { return f32_to_bf16(x); }  // nearest even

template <class T>
GDN_HD inline float load_f32(const void* base, int64_t i) {
  return to_f32(static_cast<const T*>(base)[i]);
}
template <class T>
GDN_HD inline void store_f32(void* base, int64_t i, float x) {
  static_cast<T*>(base)[i] = from_f32<T>(x);
}

// conv_out element of token t, feature i of the slot's head
template <class TC>
GDN_HD inline float slot_x(const Params& p, const Slot& s, int64_t t, int64_t i) {
  return load_f32<TC>(p.conv, t * p.C + s.src_col + i);
}
// destination element of token t, feature i of the slot's head, rounded to TQ
template <class TQ>
GDN_HD inline void slot_store(const Slot& s, int64_t t, int64_t i, float y) {
  store_f32<TQ>(s.dst, t * s.dst_row + s.dst_col + i, y);
}

// ----------------------------------------------------------------- IEEE sqrt and division
GDN_HD inline float ieee_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);   // correctly rounded whatever -prec-sqrt says
#else
  return std::sqrt(x);    // sqrtss: correctly rounded
#endif
}
GDN_HD inline float ieee_div(float n, float d) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(n, d); // correctly rounded whatever -prec-div says
#else
  return n / d;
#endif
}

// ----------------------------------------------------------------- q/k L2 norm
GDN_HD inline float square(float x) { return x * x; }  // a plain multiply, identical in every arm

// inv = 1 / sqrt(sumsq + 1e-6): IEEE sqrt, then IEEE division (never an approximate rsqrt).
GDN_HD inline float l2_inv(float sumsq) { return ieee_div(1.0f, ieee_sqrt(sumsq + 1e-6f)); }

// One level of the tree: node i adds node i + stride (levels stride = width/2, ..., 2, 1).
GDN_HD inline void tree_level(float* nodes, int i, int stride) { nodes[i] = nodes[i] + nodes[i + stride]; }

// Token-tile lane fold. Lane l holds x0..x3 = features l, l+32, l+64, l+96. (x0² + x2²) is the
// tree's level-64 node l, (x1² + x3²) its node l+32, and their sum the level-32 node l: exactly the
// tree's first two levels. The shuffles 16, 8, 4, 2, 1 that follow are its remaining levels.
GDN_HD inline float fold_tree(float x0, float x1, float x2, float x3) {
  return (square(x0) + square(x2)) + (square(x1) + square(x3));
}
// PLANTED MUTANT (arm seq4): the sequential fold ((x0² + x1²) + x2²) + x3². Same products, another
// summation order: on normal random data the f32 sum of squares differs from the tree's on about 18%
// of rows, 1/sqrt absorbs about half of those (about 9% of stored f32 q/k rows differ), and almost
// none survive rounding to bf16 (about 0.05% of rows). It exists so that a correct bit-identity test
// has something to catch, and to show why a bf16-only comparison cannot.
GDN_HD inline float fold_seq4(float x0, float x1, float x2, float x3) {
  return ((square(x0) + square(x1)) + square(x2)) + square(x3);
}
template <bool kSeq4>
GDN_HD inline float lane_fold(float x0, float x1, float x2, float x3) {
  return kSeq4 ? fold_seq4(x0, x1, x2, x3) : fold_tree(x0, x1, x2, x3);
}
// The shuffle levels follow, in the tree's order: offsets 16, 8, 4, 2, 1, each lane adding the value
// of lane ^ offset (kFirstShuffle, then halving).
constexpr int kFirstShuffle = 16;

// ----------------------------------------------------------------- gates
// g = -exp(A_log[h]) * softplus(a + dt_bias[h]); beta = 1 / (1 + exp(-b)). Both f32.
template <class TG>
GDN_HD inline void gate_element(const Params& p, int64_t t, int64_t h) {
  const float a = load_f32<TG>(p.a, t * p.a_stride + h);
  const float b = load_f32<TG>(p.b, t * p.b_stride + h);
  const float neg_decay = -gdn_expf(p.A_log[h]);
  p.g[t * p.Hv + h] = neg_decay * gdn_softplus(a + p.dt_bias[h]);
  p.beta[t * p.Hv + h] = gdn_sigmoid(b);
}

// ----------------------------------------------------------------- tree arm, per thread
// Block (token t, slot), tree_threads(Dk) threads. A q/k slot runs three phases separated by block
// barriers: leaf (thread i holds x_i², or 0 past D), the levels stride = width/2 .. 1 (thread
// i < stride adds node i + stride to node i), and the store of x_i * l2_inv(node 0).
GDN_HD inline float tree_leaf(float x, int tid, int64_t D) { return tid < D ? square(x) : 0.0f; }

template <class TQ>
GDN_HD inline void tree_store(const Slot& s, int64_t t, int tid, float x, float sumsq) {
  if (tid < s.width) slot_store<TQ>(s, t, tid, x * l2_inv(sumsq));
}

// A value slot: thread tid copies features tid, tid + threads, ... and thread 0 computes the gates
// of (t, head).
template <class TC, class TQ, class TG>
GDN_HD inline void tree_value_thread(const Params& p, const Slot& s, int64_t t, int tid, int threads) {
  for (int64_t i = tid; i < s.width; i += threads) slot_store<TQ>(s, t, i, slot_x<TC>(p, s, t, i));
  if (tid == 0) gate_element<TG>(p, t, s.head);
}

// ----------------------------------------------------------------- token-tile arms, per thread
struct TileBlock {
  int64_t slot, tile;
};
GDN_HD inline TileBlock tile_block_coords(const Params& p, uint32_t x, uint32_t y, uint32_t rows) {
  const uint32_t slots = (uint32_t)(2 * p.Hk + p.Hv + 1);  // < 65536, and x < 2^31: 32-bit division
  TileBlock b;
  b.slot = x % slots;
  b.tile = (int64_t)(x / slots) * rows + y;  // past the last tile (when folds * rows > tiles): no tokens
  return b;
}

// Tokens of tile y: [y*16, y*16 + 16) clipped to T; warp w owns tokens y*16 + 4w .. + 3.
GDN_HD inline int tile_tokens(const Params& p, int64_t t_first, int64_t count) {
  const int64_t left = p.T - t_first;
  return left <= 0 ? 0 : (left < count ? (int)left : (int)count);
}

// The gate slot: thread tid of 128 computes elements e = tid, tid + 128, ... of the block's
// [tokens, Hv] gate tile (consecutive threads take consecutive heads of a row).
template <class TG>
GDN_HD inline void tile_gates_thread(const Params& p, int64_t t0, int tid) {
  const int tokens = tile_tokens(p, t0, kTileTokens);
  const int heads = (int)p.Hv;  // < 65535
  for (int e = tid; e < tokens * heads; e += kTileThreads) gate_element<TG>(p, t0 + e / heads, e % heads);
}

}  // namespace postconv
}  // namespace gdn
