// fused arm `head-tile` (docs/SPEC.md, "Fused conv -> post-conv"): one block of 128 threads per (head
// slot, 64-token program of a sequence); 8 groups of 16 lanes, group g computing tokens 8g..8g+7 of the
// program, lane j holding features 4j..4j+3 and 64+4j..64+4j+3 of the head (two 4-element vectors) with a
// register window of the K-1 previous inputs per feature. The conv of each feature exactly as the conv
// arms compute it, rounded to conv_dtype; for q and k the tree's sum of squares (level 64 in the lane,
// levels 32..1 in 7 xor shuffles: head_sumsq); the gates slot computes g and beta of the program's
// tokens. Group 0 of chunk 0 alone reads the old state, and writes the final state after its reads.
#pragma once

#include "common/arms/fused_common.h"

namespace gdn {
namespace fused {

struct ArmHeadTile {
  static constexpr ArmSpec spec = {
      "head-tile",
      "(head slot, 64-token program) blocks; 16 lanes x 8 features per token row, register window, tree-order "
      "sum of squares in 7 shuffles; the conv output never stored",
      kThreads, 4, 1, kChunk, 0, 0, 0, 0, 0, -1, GDN_ARM_SHUFFLE, kThreadsFixed, kLayoutNone};
  static constexpr int kVariants = 2;
  static int variant(const Params& p) { return p.K <= 4 ? 0 : 1; }

  // TX: x / weight / bias; TC: the chain's conv_out dtype; TQ: q, k, v. Variant 0: window width W = 4
  // (K <= 4); variant 1: W = 8 (K <= 8) — the window and weights right-aligned in W slots, taps below W-K
  // skipped, as the conv arms do. M: NoMutant, or PlantedMutants (the planted build).
  template <class TX, class TC, class TQ, class M, int V, class Ctx>
  GDN_HD static void body(const Params& p, Ctx& t) {
    constexpr int W = V == 0 ? 4 : conv::kMaxK;
    const int tid = t.tid();
    const Span s = program_span(p, t.by());
    const Slot slot = decode_slot(p, t.bx());
    if (slot.kind == kSlotGates) {
      gates_thread(p, s, tid);
      return;
    }
    const int g = tid / kLanes, j = tid % kLanes;
    const int n = group_tokens(s, g);
    // Both halves of a warp run the same number of row batches, so every lane takes part in every
    // shuffle (a half with fewer tokens computes on zeros and stores nothing).
    const int n_warp = n > group_tokens(s, g ^ 1) ? n : group_tokens(s, g ^ 1);
    if (n_warp == 0) return;
    const int K = p.K;
    const TX* x = static_cast<const TX*>(p.x);
    const TX* w = static_cast<const TX*>(p.w);
    const int64_t c_lo = slot.src_col + kVec * j;  // features 4j.. ; c_lo + kHalf: features 64+4j..
    const bool init = has_initial_state(p, s.seq);
    const int64_t tg = s.t0 + (int64_t)g * kGroupTokens;  // the group's first token
    auto channel = [&](int i) -> int64_t { return c_lo + (i < kVec ? i : kHalf + i - kVec); };

    float wr[kFeat][W], win[kFeat][W], bias[kFeat];
    GDN_UNROLL
    for (int i = 0; i < kFeat; ++i) {
      const int64_t c = channel(i);
      bias[i] = p.bias ? conv::load(static_cast<const TX*>(p.bias), c) : 0.0f;
      GDN_UNROLL
      for (int jj = 0; jj < W; ++jj) {
        wr[i][jj] = jj >= W - K ? conv::load(w, c * K + conv::tap_of_slot(jj, W, K, false)) : 0.0f;
        win[i][jj] = 0.0f;
      }
    }
    // The K-1 history rows of the group's first token: slot jj holds row tg - (W - jj).
    if (n > 0) {
      GDN_UNROLL
      for (int jj = 1; jj < W; ++jj) {
        if (jj < W - K + 1) continue;
        const int64_t row = tg - (W - jj);
        if (row >= s.start) {
          float lo[kVec], hi[kVec];
          load4(x + row * p.x_stride + c_lo, lo);
          load4(x + row * p.x_stride + c_lo + kHalf, hi);
          GDN_UNROLL
          for (int e = 0; e < kVec; ++e) {
            win[e][jj] = lo[e];
            win[kVec + e][jj] = hi[e];
          }
        } else {
          // Only group 0 of chunk 0 gets here: the old state, column K-1 + (row - start).
          GDN_UNROLL
          for (int i = 0; i < kFeat; ++i)
            win[i][jj] = init ? p.state[((int64_t)s.seq * p.C + channel(i)) * (K - 1) + (K - 1) + (row - s.start)] : 0.0f;
        }
      }
    }
    // The final state: written by the one thread that read the old state (group 0 of chunk 0), after its
    // reads. State column j = the raw input at row end - (K-1) + j, or the shifted old state before the start.
    if (s.first && g == 0 && n > 0) {
      GDN_UNROLL
      for (int i = 0; i < kFeat; ++i) {
        float* st = p.state + ((int64_t)s.seq * p.C + channel(i)) * (K - 1);
        float fin[conv::kMaxK - 1];
        for (int jj = 0; jj < K - 1; ++jj) {
          const int64_t row = s.end - (K - 1) + jj;
          fin[jj] = row >= s.start ? conv::load(x, row * p.x_stride + channel(i)) : (init ? st[K - 1 + (row - s.start)] : 0.0f);
        }
        for (int jj = 0; jj < K - 1; ++jj) st[jj] = fin[jj];
      }
    }

    TQ* dst = static_cast<TQ*>(slot.dst);
    const bool qk = slot.kind != kSlotV;
    const bool no_round = M::is(p, kNoRound);
    const bool seq_fold = M::is(p, kSeqFold);
    for (int r0 = 0; r0 < n_warp; r0 += kRows) {
      float rows[kRows][kFeat];
      GDN_UNROLL
      for (int r = 0; r < kRows; ++r) {
        if (r0 + r < n) {
          const int64_t row = tg + r0 + r;
          float lo[kVec], hi[kVec];
          load4(x + row * p.x_stride + c_lo, lo);
          load4(x + row * p.x_stride + c_lo + kHalf, hi);
          GDN_UNROLL
          for (int e = 0; e < kVec; ++e) {
            rows[r][e] = lo[e];
            rows[r][kVec + e] = hi[e];
          }
        } else {
          GDN_UNROLL
          for (int i = 0; i < kFeat; ++i) rows[r][i] = 0.0f;
        }
      }
      // Pre-activations of the kRows x 8 outputs; when all are within gdn_silu_fast_range (nearly always) the
      // activations are straight-line code (gdn_silu_fast == gdn_silu there, and only there: an early form
      // this tested exp's wider range, |x| <= 87, and gave other bits for 80 < |x| <= 87 — caught by the
      // matrices' edge pre-activation cases).
      float y[kRows][kFeat];
      bool fast = true;
      GDN_UNROLL
      for (int r = 0; r < kRows; ++r) {
        GDN_UNROLL
        for (int i = 0; i < kFeat; ++i) {
          GDN_UNROLL
          for (int jj = 0; jj + 1 < W; ++jj) win[i][jj] = win[i][jj + 1];
          win[i][W - 1] = rows[r][i];
          y[r][i] = conv::apply_taps<W>(wr[i], win[i], K, bias[i]);
          fast = fast && gdn_silu_fast_range(y[r][i]);
        }
      }
      conv::silu_group<conv::TileSilu>(y, fast);
      GDN_UNROLL
      for (int r = 0; r < kRows; ++r)
        GDN_UNROLL
        for (int i = 0; i < kFeat; ++i) y[r][i] = no_round ? y[r][i] : round_conv<TC>(y[r][i]);
      if (qk) {
        float inv[kRows];
        GDN_UNROLL
        for (int r = 0; r < kRows; ++r)
          inv[r] = postconv::l2_inv(seq_fold ? head_sumsq_seq_fold(t, y[r]) : head_sumsq(t, y[r], j));
        GDN_UNROLL
        for (int r = 0; r < kRows; ++r)
          GDN_UNROLL
          for (int i = 0; i < kFeat; ++i) y[r][i] = y[r][i] * inv[r];
      }
      GDN_UNROLL
      for (int r = 0; r < kRows; ++r) {
        if (r0 + r >= n) continue;
        TQ* d = dst + (tg + r0 + r) * slot.dst_row + slot.dst_col + kVec * j;
        const float lo[kVec] = {y[r][0], y[r][1], y[r][2], y[r][3]};
        const float hi[kVec] = {y[r][4], y[r][5], y[r][6], y[r][7]};
        store4(d, lo);
        store4(d + kHalf, hi);
      }
    }
  }
};

}  // namespace fused
}  // namespace gdn
