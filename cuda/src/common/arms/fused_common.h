// fused_common.h — what the fused conv -> post-conv arms share (docs/SPEC.md, "Fused conv -> post-conv"): the causal
// conv + SiLU of DOMAIN.md §3 and the split / L2 norm / gates of §4 in one pass. x is read once; q, k, v,
// g, beta and the final conv state are written; the conv output never reaches memory.
//
// The contract is bit-identity with the two-op chain conv (scalar) -> post-conv (tree):
//   - per (sequence, channel, token) the conv accumulates exactly as conv_arms.h does (bias, then
//     fmaf oldest tap to newest; apply_taps), then SiLU (gdn_silu / gdn_silu_fast, equal on the fast
//     range), then the value is ROUNDED TO conv_dtype, where the chain stores conv_out;
//   - q and k: the squares of those rounded values are summed in the tree arm's order for Dk = 128
//     (level 64 pairs x_i² + x_{i+64}², then 32, 16, 8, 4, 2, 1), inv = l2_inv(sum), out = x·inv;
//   - v: the rounded value converted to qkv_dtype; g and beta: postconv::gate_element, the same code.
// Everything that decides a bit is either shared with conv_arms.h / postconv_kernels.h or written here
// once, as a per-thread body over the execution interface (common/exec.h) that both backends run.
//
// Work mapping. Programs are (sequence, 64-token chunk) pairs, in order, none for empty sequences (the
// conv's exact mapping with 64-token chunks). A block of 128 threads owns one head slot for one
// program: slots [0, Hk) q heads, [Hk, 2Hk) k heads, [2Hk, 2Hk+Hv) value heads, 2Hk+Hv the gates of
// the program's tokens. The grid is (slots, programs), slots fastest, so the blocks resident on an SM
// mix compute-heavy q/k heads with streaming v heads (as the post-conv token tile does).
//   Inside a block: 8 groups of 16 lanes (a group is half a warp); group g computes tokens
//   t0 + 8g .. t0 + 8g + 7 of the program, lane j of the group holds features 4j..4j+3 and
//   64+4j..64+4j+3 of the head: two 4-element vectors (8-byte bf16 / 16-byte f32 loads and stores), and
//   a register window of the K-1 previous inputs per feature (re-read as a halo at each group start).
//   That split makes the tree's first level (i, i+64) a sum inside the lane; the remaining levels are
//   7 xor shuffles within the half-warp (see head_sumsq).
//
// The final state is owned by construction (no #305 race): only group 0 of chunk 0 of a sequence reaches
// back before the sequence start (every other group's window starts at least 8 - (K-1) >= 1 rows into
// the sequence, K <= 8), so its thread for (sequence, channel) is the only one that reads the old state;
// the same thread then writes the final state (the last K-1 raw inputs, read from x or, for sequences
// shorter than K-1, from the old state it already holds), after its own reads.
#pragma once

#include <cmath>
#include <cstring>
#include <stdint.h>

#include "common/arms/arm_spec.h"
#include "common/arms/conv_common.h"
#include "common/arms/postconv_common.h"
#include "common/exec.h"
#include "common/plan_lists.h"

namespace gdn {
namespace fused {

// ----------------------------------------------------------------- launch shape
constexpr int kThreads = 128;
constexpr int kD = 128;                         // Dk = Dv = 128: every Qwen3.5 model
constexpr int kLanes = 16;                      // lanes per token row: a half-warp
constexpr int kGroups = kThreads / kLanes;      // 8 token groups per block
constexpr int kGroupTokens = 8;                 // tokens per group
constexpr int kChunk = kGroups * kGroupTokens;  // 64 tokens per program
constexpr int kRows = 4;                        // rows of x loaded before any is used (loads in flight)
constexpr int kVec = 4;                         // features per vector
constexpr int kFeat = 2 * kVec;                 // features per lane: 4j..4j+3 and 64+4j..64+4j+3
constexpr int kHalf = kD / 2;                   // 64: offset of a lane's second vector

constexpr int kSeqFold = GDN_FUSED_MUTANT_SEQ_FOLD;
constexpr int kNoRound = GDN_FUSED_MUTANT_NO_ROUND;

// ----------------------------------------------------------------- parameters
struct Params {
  int64_t T, Hk, Hv, C, x_stride;
  int32_t K, N;
  int32_t slots;      // 2*Hk + Hv + 1
  int32_t mutant;     // gdn_fused_mutant (read only by the planted instantiation)
  int32_t gate_bf16;  // a and b are bf16
  int32_t his_i32;
  const void* x;      // [T, x_stride] TX
  const void* w;      // [C, K] TX
  const void* bias;   // [C] TX or null
  const int32_t* qsl; // [N+1], or null: one sequence, offsets [0, T] (plan_lists.h)
  const void* his;    // [N] i8 / i32, or null
  float* state;       // [N, C, K-1]
  void* q;            // [T, Hk, 128]
  void* k;            // [T, Hk, 128]
  void* v;            // [T, Hv, 128]
  const int32_t* programs;  // (sequence, chunk) pairs, program y at [2y, 2y+1]; null: one sequence, (0, y)
  postconv::Params gates;   // a, b, strides, A_log, dt_bias, g, beta, Hv: postconv::gate_element reads these
  int32_t silu_shortcut;    // 1: bf16 conv_dtype on a GPU that may take silu_bf16_shortcut (arm stream-mufu)
};

// ----------------------------------------------------------------- planted mutants
// Compiled into a separate instantiation (the plan picks it when args.mutant != 0): production bodies
// take gdn::NoMutant, whose every test folds to false at compile time.
using gdn::NoMutant;
struct PlantedMutants {
  static constexpr bool kPlanted = true;
  GDN_HDI static bool is(const Params& p, int mutant) { return p.mutant == mutant; }
};

// ----------------------------------------------------------------- head slots
enum SlotKind { kSlotQ = 0, kSlotK = 1, kSlotV = 2, kSlotGates = 3 };

struct Slot {
  int kind;
  int64_t src_col;  // first channel of the head in a row of x
  int64_t dst_row;  // elements between tokens of the destination
  int64_t dst_col;  // first element of the head in a destination row
  void* dst;
};

GDN_HDI Slot decode_slot(const Params& p, int64_t slot) {
  Slot s;
  if (slot < p.Hk) {
    s.kind = kSlotQ; s.src_col = slot * kD; s.dst_row = p.Hk * kD; s.dst_col = slot * kD; s.dst = p.q;
  } else if (slot < 2 * p.Hk) {
    const int64_t h = slot - p.Hk;
    s.kind = kSlotK; s.src_col = (p.Hk + h) * kD; s.dst_row = p.Hk * kD; s.dst_col = h * kD; s.dst = p.k;
  } else if (slot < 2 * p.Hk + p.Hv) {
    const int64_t h = slot - 2 * p.Hk;
    s.kind = kSlotV; s.src_col = (2 * p.Hk + h) * kD; s.dst_row = p.Hv * kD; s.dst_col = h * kD; s.dst = p.v;
  } else {
    s.kind = kSlotGates; s.src_col = 0; s.dst_row = 0; s.dst_col = 0; s.dst = nullptr;
  }
  return s;
}

// ----------------------------------------------------------------- programs
struct Span {
  int32_t seq;
  int64_t start, end;  // the sequence's rows
  int64_t t0, t1;      // the program's rows
  bool first;          // chunk 0: owns the final-state write
};

GDN_HDI Span program_span(const Params& p, int64_t y) {
  Span s;
  s.seq = program_word(p, 2 * y);
  const int32_t chunk = program_word(p, 2 * y + 1);
  s.start = offset_word(p, s.seq);
  s.end = offset_word(p, s.seq + 1);
  s.t0 = s.start + (int64_t)chunk * kChunk;
  s.t1 = s.t0 + kChunk < s.end ? s.t0 + kChunk : s.end;
  s.first = chunk == 0;
  return s;
}

GDN_HDI bool has_initial_state(const Params& p, int32_t seq) {
  if (p.his == nullptr) return false;
  return p.his_i32 ? static_cast<const int32_t*>(p.his)[seq] != 0 : static_cast<const int8_t*>(p.his)[seq] != 0;
}

// Tokens of group g in a program: [t0 + 8g, min(t0 + 8g + 8, t1)), as a count (0 past the program's end).
GDN_HDI int group_tokens(const Span& s, int g) {
  const int64_t first = s.t0 + (int64_t)g * kGroupTokens;
  const int64_t left = s.t1 - first;
  return left <= 0 ? 0 : (left < kGroupTokens ? (int)left : kGroupTokens);
}

// ----------------------------------------------------------------- 4-element vectors
// Loads are exact; stores round once (postconv::from_f32). The GPU moves a vector in one access (8 bytes
// of bf16, 16 of f32; alignment is checked by the plan), the host byte for byte: the same values.
GDN_HDI void load4(const uint16_t* src, float (&v)[kVec]) {
#if defined(__CUDA_ARCH__)
  const uint2 u = __ldg(reinterpret_cast<const uint2*>(src));
  v[0] = bf16_to_f32((uint16_t)(u.x & 0xffffu)); v[1] = bf16_to_f32((uint16_t)(u.x >> 16));
  v[2] = bf16_to_f32((uint16_t)(u.y & 0xffffu)); v[3] = bf16_to_f32((uint16_t)(u.y >> 16));
#else
  uint16_t h[kVec];
  std::memcpy(h, src, sizeof h);
  for (int i = 0; i < kVec; ++i) v[i] = bf16_to_f32(h[i]);
#endif
}
GDN_HDI void load4(const float* src, float (&v)[kVec]) {
#if defined(__CUDA_ARCH__)
  const float4 u = __ldg(reinterpret_cast<const float4*>(src));
  v[0] = u.x; v[1] = u.y; v[2] = u.z; v[3] = u.w;
#else
  std::memcpy(v, src, sizeof v);
#endif
}

// Written as PTX vector stores (NVVM splits plain vector assignments; see conv_arms.h store8).
GDN_HDI void store4(uint16_t* dst, const float (&y)[kVec]) {
  const uint32_t lo = f32x2_to_bf16x2(y[0], y[1]);
  const uint32_t hi = f32x2_to_bf16x2(y[2], y[3]);
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(dst), "r"(lo), "r"(hi) : "memory");
#else
  const uint32_t u[2] = {lo, hi};
  std::memcpy(dst, u, sizeof u);
#endif
}
GDN_HDI void store4(float* dst, const float (&y)[kVec]) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "f"(y[0]), "f"(y[1]), "f"(y[2]), "f"(y[3])
               : "memory");
#else
  std::memcpy(dst, y, sizeof y);
#endif
}

// The value the two-op chain reads back from conv_out: y rounded to TC (identity for f32).
template <class TC>
GDN_HDI float round_conv(float y) {
  return postconv::to_f32(postconv::from_f32<TC>(y));
}

// ----------------------------------------------------------------- the sum of squares, tree order
// x[0..3] = features 4j..4j+3, x[4..7] = features 64+4j..64+4j+3 of lane j (0..15) of a half-warp.
// Tree nodes: level L holds node_L[i] = node_2L[i] + node_2L[i+L] (i < L), node_128[i] = x_i²; the sum is
// node_1[0]. Additions are commutative in IEEE arithmetic (a + b == b + a, NaNs aside, which carry one
// canonical payload here), so a lane may add its partner's node on either side; only the pairing matters.
//   level 64: node_64[4j+e] = x_{4j+e}² + x_{4j+e+64}², e = 0..3: inside the lane.
//   level 32: node_64[i + 32] sits in lane j^8. A reduce-scatter: lanes with bit 3 clear keep e = 0, 1
//             and send e = 2, 3; lanes with it set the reverse. Lane j then holds
//             node_32[4(j&7) + 2·b3 + {0, 1}] (b3 = bit 3 of j).
//   level 16: i + 16 flips bit 2 of j; keep one, send one: lane j holds node_16[8·b1 + 4·b0 + 2·b3 + b2].
//   level 8, 4, 2, 1: the index bits 8, 4, 2, 1 are lane bits 1, 0, 3, 2: butterflies xor 2, 1, 8, 4.
// 7 shuffles per token; every lane of the half-warp ends with node_1[0].
// One reduce-scatter step over a lane's four nodes n[0..3]: lanes with `upper` set keep nodes 2, 3 and send nodes
// 0, 1 to lane ^ mask, the others the reverse; m[i] = kept node i + the partner's sent node i. Its two exchanges
// are one step (shfl_xor_each: one wait on the host). head_sumsq and fused_stream.h's head_sumsq_lanes share it.
template <class Ctx>
GDN_HDI void scatter_pair(Ctx& t, const float (&n)[kVec], bool upper, int mask, float (&m)[2]) {
  const float send0 = upper ? n[0] : n[2], send1 = upper ? n[1] : n[3];
  const float keep0 = upper ? n[2] : n[0], keep1 = upper ? n[3] : n[1];
  const int masks[2] = {mask, mask};
  t.shfl_xor_each(
      masks, [&](int i) { return i == 0 ? send0 : send1; },
      [&](int i, float got) { m[i] = (i == 0 ? keep0 : keep1) + got; });
}

template <class Ctx>
GDN_HDI float head_sumsq(Ctx& t, const float (&x)[kFeat], int j) {
  using postconv::square;
  float n[kVec];
  GDN_UNROLL
  for (int e = 0; e < kVec; ++e) n[e] = square(x[e]) + square(x[kVec + e]);
  float m[2];
  scatter_pair(t, n, (j & 8) != 0, 8, m);  // level 32
  const float m0 = m[0], m1 = m[1];
  const bool b2 = (j & 4) != 0;
  float u = (b2 ? m1 : m0) + t.shfl_xor(b2 ? m0 : m1, 4);
  u = u + t.shfl_xor(u, 2);
  u = u + t.shfl_xor(u, 1);
  u = u + t.shfl_xor(u, 8);
  u = u + t.shfl_xor(u, 4);
  return u;
}

// PLANTED MUTANT (SEQ_FOLD): the lane sums its 8 squares in sequence, then a 16-lane butterfly. The same
// products in another order: a correct check must see it in the f32 q and k (bf16 hides most of it).
template <class Ctx>
GDN_HDI float head_sumsq_seq_fold(Ctx& t, const float (&x)[kFeat]) {
  float u = postconv::square(x[0]);
  for (int e = 1; e < kFeat; ++e) u = u + postconv::square(x[e]);
  for (int m = 8; m >= 1; m /= 2) u = u + t.shfl_xor(u, m);
  return u;
}

// ----------------------------------------------------------------- the gates slot
// Thread tid of 128 computes elements e = tid, tid + 128, ... of the program's [tokens, Hv] gate tile.
GDN_HDI void gates_thread(const Params& p, const Span& s, int tid) {
  const int64_t n = (s.t1 - s.t0) * p.Hv;
  for (int64_t e = tid; e < n; e += kThreads) {
    const int64_t tok = s.t0 + e / p.Hv, h = e % p.Hv;
    if (p.gate_bf16) postconv::gate_element<uint16_t>(p.gates, tok, h);
    else postconv::gate_element<float>(p.gates, tok, h);
  }
}

}  // namespace fused
}  // namespace gdn
