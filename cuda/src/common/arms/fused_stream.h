// fused arm `stream` (docs/SPEC.md, "Fused conv -> post-conv"): the conv arm `stream`'s way of walking
// rows (conv_stream.h) inside the fused op. One block of 128 threads per (head slot, 64-token program), as
// `head-tile`; warp w computes tokens t0 + 16w .. t0 + 16w + 15 of the program, lane l holds the four
// consecutive features 4l..4l+3 of the head (one 8-byte bf16 / 16-byte f32 vector per row) with a
// register window of the K-1 previous inputs, and takes rows in groups of 4 with the window indexed by
// constants (no register moves inside a group) and one SiLU range test per group.
//
// Why a second arm: `head-tile` gives each lane two 4-feature vectors 64 features apart (so the tree's
// first level is a sum inside the lane), re-reads a 3-row halo every 8 tokens and shifts its window per
// row; on an H200 it ran at 3.0-4.6x a copy of its traffic (docs/BENCHMARKS.md, "Fused conv → post-conv").
// Here a warp covers a whole head row, so the tree's levels are all across lanes: head_sumsq_lanes below
// does them in 8 shuffles, the same pairing as the tree (so the same bits), and head_l2_inv_rows4 does a group's 4 rows
// in 21 shuffles (18 for the sums, 3 to fetch the other rows' scales) with one L2 scale per lane instead
// of 32 and four (the tail rows take head_sumsq_lanes). The host replays those 21 shuffles in 8 waits
// (shfl_xor_each: each level's exchanges are one step).
//
// Ownership of the final state as in head-tile: only warp 0 of chunk 0 reaches back before the sequence
// start (every other warp starts 16 >= K rows into its sequence), so its thread of (sequence, channel)
// is the only reader of the old state, and it writes the final state after its own reads.
#pragma once

#include <type_traits>

#include "common/arms/fused_common.h"

namespace gdn {
namespace fused {

constexpr int kStreamWarpTokens = 16;  // tokens per warp (4 warps x 16 = the 64-token program)
constexpr int kStreamRows = 4;         // rows per group
// 7 resident blocks of 128 threads (registers capped at 72, no spills): with ROWS4, 4-5% less time than 6
// blocks (80 registers) at T >= 8192 and 0-5% less at T = 2048 and on varlen batches; 8 blocks (64 registers)
// spill and are slower (cuda/tests/fused_tune.cu, CHANGELOG 2026-12-02, 7e5d158).
constexpr int kStreamMinBlocks = 7;

// The tree's sum of squares of one head row (Dk = 128) when lane l holds features 4l..4l+3 (x[0..3]).
// Feature i = 4l + e: bit 6 of i is lane bit 4, bit 5 lane bit 3, bits 4..2 lane bits 2..0, bits 1..0 e.
//   level 64: node_64[i] = x_i² + x_{i+64}² pairs lane l with l^16, same e. A reduce-scatter: lanes with
//             bit 4 clear keep e = 0, 1 and send e = 2, 3, lanes with it set the reverse; lane l then
//             holds node_64[4(l&15) + 2·b4 + {0, 1}].
//   level 32: pairs lane l with l^8 (bit 5 of i), same b4: lanes with bit 3 clear keep the first, send
//             the second; lane l holds node_32[4(l&7) + 2·b4 + b3].
//   levels 16, 8, 4: i's bits 4, 3, 2 are lane bits 2, 1, 0: butterflies xor 4, 2, 1.
//   levels 2, 1: i's bits 1, 0 are now b4 and b3: butterflies xor 16, 8.
// 8 shuffles; every lane ends with node_1[0]. IEEE addition is commutative, so which of two lanes adds
// its partner's node on which side does not change a bit; only the pairing does.
template <class Ctx>
GDN_HDI float head_sumsq_lanes(Ctx& t, const float (&x)[kVec], int lane) {
  using postconv::square;
  float sq[kVec];
  GDN_UNROLL
  for (int e = 0; e < kVec; ++e) sq[e] = square(x[e]);
  float m[2];
  scatter_pair(t, sq, (lane & 16) != 0, 16, m);  // level 64
  const float m0 = m[0], m1 = m[1];
  const bool b3 = (lane & 8) != 0;
  float u = (b3 ? m1 : m0) + t.shfl_xor(b3 ? m0 : m1, 8);
  u = u + t.shfl_xor(u, 4);
  u = u + t.shfl_xor(u, 2);
  u = u + t.shfl_xor(u, 1);
  u = u + t.shfl_xor(u, 16);
  u = u + t.shfl_xor(u, 8);
  return u;
}

// The tree's sums of squares of 4 head rows at once (y[r][e]: feature 4l + e of row r in lane l), each
// lane ending with the sum of row 2·b4 + b3 (b4, b3: lane bits 4, 3). The same pairs as head_sumsq_lanes,
// level by level, but the nodes of the 4 rows are spread over the lanes so that no node is computed twice:
//   level 64 (lane bit 4, l^16): lanes with b4 clear keep rows 0, 1 and send rows 2, 3, lanes with it set
//             the reverse: 8 shuffles, 2 rows x 4 nodes left, node index 4(l&15) + e;
//   level 32 (lane bit 3, l^8): b3 clear keeps the first of the two rows, set the second: 4 shuffles, row
//             2·b4 + b3, node index 4(l&7) + e;
//   level 16 (lane bit 2, l^4): b2 clear keeps e = 0, 1, set e = 2, 3: 2 shuffles, index 4(l&3) + 2·b2 + {0, 1};
//   level 8  (lane bit 1, l^2): b1 clear keeps the first, set the second: 1 shuffle, index 4·b0 + 2·b2 + b1;
//   levels 4, 2, 1 (index bits 2, 1, 0 = lane bits 0, 2, 1): butterflies xor 1, 4, 2.
// 18 shuffles and one L2 scale for 4 rows, where head_sumsq_lanes takes 32 and four: the scale of each row is
// then fetched from the lanes that hold it (xor 8, 16, 24). Commutativity makes which side a lane adds its
// partner's node on irrelevant to the bits (as in head_sumsq_lanes).
template <class Ctx>
GDN_HDI void head_l2_inv_rows4(Ctx& t, const float (&y)[kStreamRows][kVec], int lane, float (&inv)[kStreamRows]) {
  static_assert(kStreamRows == 4, "the reduce-scatter spreads 4 rows over lane bits 4 and 3");
  static_assert(kVec == 4, "the mask lists below have 2·kVec and kVec entries");
  using postconv::square;
  const bool b4 = (lane & 16) != 0, b3 = (lane & 8) != 0, b2 = (lane & 4) != 0, b1 = (lane & 2) != 0;
  // Each of levels 64, 32 and 16 is one exchange step (shfl_xor_each: the GPU's loop as before, one wait on
  // the host instead of 8, 4 and 2), and so is the fetch of the other rows' scales. i = 4·rr + e at level 64.
  // Level 64's squares are written in both send and use: on the GPU they are one computation (send(i) and use(i)
  // inline side by side); the host squares twice. Handing the kept square from send to use through an array
  // moved the spills of the K > 4 variants (ptxas -v at 0d412b5), so the GPU's code keeps this form.
  float n64[2][kVec];
  const int masks64[2 * kVec] = {16, 16, 16, 16, 16, 16, 16, 16};
  t.shfl_xor_each(
      masks64,
      [&](int i) {
        const float lo = square(y[i / kVec][i % kVec]), hi = square(y[2 + i / kVec][i % kVec]);
        return b4 ? lo : hi;
      },
      [&](int i, float got) {
        const float lo = square(y[i / kVec][i % kVec]), hi = square(y[2 + i / kVec][i % kVec]);
        n64[i / kVec][i % kVec] = (b4 ? hi : lo) + got;
      });
  float n32[kVec];
  const int masks32[kVec] = {8, 8, 8, 8};
  t.shfl_xor_each(
      masks32, [&](int e) { return b3 ? n64[0][e] : n64[1][e]; },
      [&](int e, float got) { n32[e] = (b3 ? n64[1][e] : n64[0][e]) + got; });
  float n16[2];
  const int masks16[2] = {4, 4};
  t.shfl_xor_each(
      masks16, [&](int ee) { return b2 ? n32[ee] : n32[2 + ee]; },
      [&](int ee, float got) { n16[ee] = (b2 ? n32[2 + ee] : n32[ee]) + got; });
  float u = (b1 ? n16[1] : n16[0]) + t.shfl_xor(b1 ? n16[0] : n16[1], 2);
  u = u + t.shfl_xor(u, 1);
  u = u + t.shfl_xor(u, 4);
  u = u + t.shfl_xor(u, 2);
  const float mine = postconv::l2_inv(u);  // of row 2·b4 + b3
  float flips[3];
  const int flip_masks[3] = {8, 16, 24};
  t.shfl_xor_each(flip_masks, [&](int) { return mine; }, [&](int i, float got) { flips[i] = got; });
  const float flip3 = flips[0], flip4 = flips[1], flip34 = flips[2];
  GDN_UNROLL
  for (int r = 0; r < kStreamRows; ++r) {
    const bool d3 = ((r & 1) != 0) != b3, d4 = ((r & 2) != 0) != b4;  // which lane bits differ from row r's
    inv[r] = d4 ? (d3 ? flip34 : flip4) : (d3 ? flip3 : mine);
  }
}

// PLANTED MUTANT (SEQ_FOLD) of this arm: the lane sums its 4 squares in sequence, then a 32-lane
// butterfly. The same products in another order than the tree's.
template <class Ctx>
GDN_HDI float head_sumsq_lanes_seq_fold(Ctx& t, const float (&x)[kVec]) {
  float u = postconv::square(x[0]);
  for (int e = 1; e < kVec; ++e) u = u + postconv::square(x[e]);
  for (int m = 16; m >= 1; m /= 2) u = u + t.shfl_xor(u, m);
  return u;
}

// The arm's window variants: 0: K = 4 fixed; 1: K < 4 in a 4-slot window; 2: K > 4 in kMaxK slots (also
// the planted build's).
constexpr int kStreamWindowVariants = 3;
GDN_HDI int stream_window_variant(const Params& p) { return p.K == 4 ? 0 : p.K < 4 ? 1 : 2; }

// One thread of the arm with window variant WV, ROWS4 (q and k rows take their L2 scales 4 at a time,
// head_l2_inv_rows4; else one row at a time, head_sumsq_lanes) and the conv's SiLU policy S for whole
// groups (conv_common.h: TileSilu; Bf16ShortcutSilu only where TC is bf16, on the GPU). ROWS4 and S decide
// speed, never bits; the arm takes ROWS4 and TileSilu, and cuda/tests/fused_tune.cu times the others
// (CHANGELOG 2026-12-02, 7e5d158, where a warp per head slot and rows through a shared-memory ring were
// measured too, and lost).
template <class TX, class TC, class TQ, class M, int WV, bool ROWS4, class S, class Ctx>
GDN_HD inline void stream_body(const Params& p, Ctx& t) {
  constexpr int W = WV == 2 ? conv::kMaxK : 4;
  constexpr int H = W - 1;
  constexpr int R = kStreamRows;
  const int tid = t.tid(), w = t.warp(), lane = t.lane();
  const Span s = program_span(p, t.by());
  if (t.bx() >= p.slots) return;  // never with the plan's grid (one block per slot); a guard, not a case
  const Slot slot = decode_slot(p, t.bx());
  if (slot.kind == kSlotGates) {
    gates_thread(p, s, tid);
    return;
  }
  const int64_t tw = s.t0 + (int64_t)w * kStreamWarpTokens;  // the warp's first token
  const int64_t left = s.t1 - tw;
  const int n = left <= 0 ? 0 : (left < kStreamWarpTokens ? (int)left : kStreamWarpTokens);  // warp-uniform
  if (n == 0) return;
  const int K = WV == 0 ? 4 : p.K;
  const TX* x = static_cast<const TX*>(p.x);
  const TX* wt = static_cast<const TX*>(p.w);
  const int64_t c0 = slot.src_col + kVec * lane;  // channels c0 .. c0 + 3
  const bool init = has_initial_state(p, s.seq);

  float wr[kVec][W], h[kVec][H], bias[kVec];
  GDN_UNROLL
  for (int i = 0; i < kVec; ++i) {
    bias[i] = p.bias ? conv::load(static_cast<const TX*>(p.bias), c0 + i) : 0.0f;
    GDN_UNROLL
    for (int jj = 0; jj < W; ++jj)
      wr[i][jj] = jj >= W - K ? conv::load(wt, (c0 + i) * K + conv::tap_of_slot(jj, W, K, false)) : 0.0f;
    GDN_UNROLL
    for (int j = 0; j < H; ++j) h[i][j] = 0.0f;
  }
  // History: h[i][j] = row tw - H + j (slots 1..W-1 of the conv arms' window); rows before the sequence
  // start come from the old state (only the first warp of chunk 0 gets there).
  GDN_UNROLL
  for (int j = 0; j < H; ++j) {
    if (j < W - K) continue;  // taps below W-K are skipped: their slots stay 0
    const int64_t row = tw - H + j;
    if (row >= s.start) {
      float v[kVec];
      load4(x + row * p.x_stride + c0, v);
      GDN_UNROLL
      for (int i = 0; i < kVec; ++i) h[i][j] = v[i];
    } else {
      GDN_UNROLL
      for (int i = 0; i < kVec; ++i)
        h[i][j] = init ? p.state[((int64_t)s.seq * p.C + c0 + i) * (K - 1) + (K - 1) + (row - s.start)] : 0.0f;
    }
  }
  // The final state, by the one thread that read the old state, after its reads: column j = the raw
  // input at row end - (K-1) + j, or the shifted old state before the start.
  if (s.first && w == 0) {
    GDN_UNROLL
    for (int i = 0; i < kVec; ++i) {
      float* st = p.state + ((int64_t)s.seq * p.C + c0 + i) * (K - 1);
      float fin[conv::kMaxK - 1];
      for (int j = 0; j < K - 1; ++j) {
        const int64_t row = s.end - (K - 1) + j;
        fin[j] = row >= s.start ? conv::load(x, row * p.x_stride + c0 + i) : (init ? st[K - 1 + (row - s.start)] : 0.0f);
      }
      for (int j = 0; j < K - 1; ++j) st[j] = fin[j];
    }
  }

  TQ* dst = static_cast<TQ*>(slot.dst) + tw * slot.dst_row + slot.dst_col + kVec * lane;
  const TX* xp = x + tw * p.x_stride + c0;
  const bool qk = slot.kind != kSlotV;
  const bool no_round = M::is(p, kNoRound);
  const bool seq_fold = M::is(p, kSeqFold);
  // A row's conv output rounded to the chain's conv_out dtype (both paths below).
  auto round_row = [&](float (&y)[kVec]) {
    GDN_UNROLL
    for (int i = 0; i < kVec; ++i) y[i] = no_round ? y[i] : round_conv<TC>(y[i]);
  };
  // Row done: rounded, the L2 norm for q and k, the store.
  auto finish_row = [&](float (&y)[kVec], TQ* d) {
    round_row(y);
    if (qk) {
      const float inv = postconv::l2_inv(seq_fold ? head_sumsq_lanes_seq_fold(t, y) : head_sumsq_lanes(t, y, lane));
      GDN_UNROLL
      for (int i = 0; i < kVec; ++i) y[i] = y[i] * inv;
    }
    store4(d, y);
  };
  // One whole group of R rows (inputs in g): conv + SiLU, then each row finished; advances dst. ROWS4:
  // q and k take the group's 4 L2 scales from head_l2_inv_rows4 (the planted seq-fold keeps finish_row's).
  auto group = [&](const float (&g)[R][kVec]) {
    float y[R][kVec];
    const bool fast = conv::window_group<S, W, R, kVec>(h, g, wr, bias, K, y);
    conv::silu_group<S>(y, fast);
    if (ROWS4 && qk && !seq_fold) {
      GDN_UNROLL
      for (int r = 0; r < R; ++r) round_row(y[r]);
      float inv[R];
      head_l2_inv_rows4(t, y, lane, inv);
      GDN_UNROLL
      for (int r = 0; r < R; ++r) {
        GDN_UNROLL
        for (int i = 0; i < kVec; ++i) y[r][i] = y[r][i] * inv[r];
        store4(dst + (int64_t)r * slot.dst_row, y[r]);
      }
    } else {
      GDN_UNROLL
      for (int r = 0; r < R; ++r) finish_row(y[r], dst + (int64_t)r * slot.dst_row);
    }
    dst += R * slot.dst_row;
  };

  int k = 0;
  for (; k + R <= n; k += R) {
    float g[R][kVec];
    GDN_UNROLL
    for (int r = 0; r < R; ++r) load4(xp + (int64_t)r * p.x_stride, g[r]);
    group(g);
    xp += R * p.x_stride;
  }
  for (; k < n; ++k) {  // the last n mod 4 rows
    float v[kVec], y[kVec];
    load4(xp, v);
    GDN_UNROLL
    for (int i = 0; i < kVec; ++i) {
      float w_in[W];
      GDN_UNROLL
      for (int j = 0; j < H; ++j) w_in[j] = h[i][j];
      w_in[W - 1] = v[i];
      y[i] = gdn_silu(conv::apply_taps<W>(wr[i], w_in, K, bias[i]));
      GDN_UNROLL
      for (int j = 0; j < H; ++j) h[i][j] = w_in[j + 1];
    }
    finish_row(y, dst);
    xp += p.x_stride;
    dst += slot.dst_row;
  }
}

// The launch contract of the stream arms: one for both, since stream-mufu launches stream's kernels as its
// twin (cuda/src/cuda/kernel_of.cuh checks that the two agree).
constexpr ArmSpec stream_arm_spec(const char* name, const char* summary) {
  return {name, summary, kThreads, kStreamMinBlocks, 1, kChunk, 0, 0, 0, 0, 0, -1, GDN_ARM_SHUFFLE, kThreadsFixed, kLayoutNone};
}

struct ArmStream {
  static constexpr ArmSpec spec = stream_arm_spec(
      "stream",
      "(head slot, 64-token program) blocks; a warp per 16 tokens, 4 features per lane, rows in groups of 4; a "
      "group's 4 tree-order sums of squares in 21 shuffles, one L2 scale per lane; the conv output never stored");
  static constexpr int kVariants = kStreamWindowVariants;
  static int variant(const Params& p) { return stream_window_variant(p); }

  template <class TX, class TC, class TQ, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    stream_body<TX, TC, TQ, M, V, true, conv::TileSilu>(p, t);
  }
};

// fused arm `stream-mufu` (docs/SPEC.md §7, §9.2): `stream` with the conv arm stream-mufu's SiLU shortcut
// where the chain stores the conv output as bf16 (conv_dtype bf16). The fused op rounds every SiLU value to
// conv_dtype before its post-conv (finish_row: round_conv), and the shortcut's value is taken only where its
// bf16 rounding is provably gdn_silu's, so q, k, v, g, beta and the state keep `stream`'s bits. Its own
// kernels are variants 3..5: bf16 conv_dtype, the production build, a GPU of compute capability 9.0
// (Params::silu_shortcut); the planted build, an f32 conv_dtype and the host run `stream`'s kernels and
// arithmetic (cuda/src/cuda/kernel_of.cuh), so the planted mutants are caught as in `stream`.
// Why it exists again: 923df6b's version gained 0-2% and was removed; with the shortcut's test decided
// per row of 4 values (5c83917) the same body is 4-11% faster than `stream` on every Qwen3.5 shape
// (cuda/tests/fused_tune.cu, CHANGELOG 2026-12-03, f0e44e1).
struct ArmStreamMufu {
  static constexpr ArmSpec spec = stream_arm_spec(
      "stream-mufu",
      "stream; bf16 conv_dtype on sm_90: SiLU from ex2/rcp.approx where a rounding test proves its bf16 is "
      "gdn_silu's (else gdn_silu)");
  static constexpr int kVariants = 2 * kStreamWindowVariants;
  static int variant(const Params& p) {
    return stream_window_variant(p) + (p.silu_shortcut ? kStreamWindowVariants : 0);
  }
  using Twin = ArmStream;
  template <class TC, class M, int V>
  GDN_HD static constexpr bool own_kernel() {
    return V >= kStreamWindowVariants && std::is_same<TC, conv::bf16_bits>::value && !M::kPlanted;
  }

  template <class TX, class TC, class TQ, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
#if defined(__CUDACC__)
    constexpr bool kShortcut = own_kernel<TC, M, V>();
#else
    constexpr bool kShortcut = false;  // the host computes gdn_silu: stream's instantiation, compiled once
#endif
    stream_body<TX, TC, TQ, M, V % kStreamWindowVariants, true,
                std::conditional_t<kShortcut, conv::Bf16ShortcutSilu, conv::TileSilu>>(p, t);
  }
};

}  // namespace fused
}  // namespace gdn
