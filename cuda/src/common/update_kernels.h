// update_kernels.h — the decode update of the causal conv (one new token per sequence, the state in
// a pool of slots addressed by state_indices), per-thread bodies shared by CUDA and the host.
//
//   win = [state[slot][c][0 .. K-2], x[b][c]];  acc = bias; for j: acc = fmaf(w[c][j], win[j], acc)
//   out[b][c] = round(silu(acc));  state[slot][c] = win[1 .. K-1] (rounded to the state dtype)
// A negative slot skips the sequence: its out row and every state slot stay untouched.
#pragma once

#include "common/conv_params.h"

namespace gdn {
namespace update {

constexpr int kThreads = 128;  // one thread per channel, 128 channels per block; grid (tiles, B)

struct Params {
  int64_t B, C;
  int32_t K;
  int32_t out_bf16, state_bf16;
  const void* x;     // [B, C] TX
  const void* w;     // [C, K] TX
  const void* bias;  // [C] TX or null
  void* state;       // [num_slots, C, K-1]
  const int32_t* slots;
  void* out;         // [B, C]
};

GDN_HDI float state_get(const Params& p, int64_t i) {
  return p.state_bf16 ? bf16_to_f32(static_cast<const uint16_t*>(p.state)[i]) : static_cast<const float*>(p.state)[i];
}
GDN_HDI void state_put(const Params& p, int64_t i, float v) {
  if (p.state_bf16) static_cast<uint16_t*>(p.state)[i] = f32_to_bf16(v);
  else static_cast<float*>(p.state)[i] = v;
}
GDN_HDI void out_put(const Params& p, int64_t i, float v) {
  if (p.out_bf16) static_cast<uint16_t*>(p.out)[i] = f32_to_bf16(v);
  else static_cast<float*>(p.out)[i] = v;
}

// reference: plain loops, the state read and shifted element by element.
template <class TX>
GDN_HD inline void reference_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const int64_t c = bx * kThreads + tid;
  if (c >= p.C) return;
  const int32_t slot = p.slots[by];
  if (slot < 0) return;
  const int K = p.K;
  const TX* w = static_cast<const TX*>(p.w) + c * K;
  const int64_t st = ((int64_t)slot * p.C + c) * (K - 1);
  const float xv = conv::load(static_cast<const TX*>(p.x), by * p.C + c);
  float acc = p.bias ? conv::load(static_cast<const TX*>(p.bias), c) : 0.0f;
  for (int j = 0; j < K - 1; ++j) acc = det_fma(conv::load(w, j), state_get(p, st + j), acc);
  acc = det_fma(conv::load(w, K - 1), xv, acc);
  out_put(p, by * p.C + c, gdn_silu(acc));
  for (int j = 0; j + 1 < K - 1; ++j) state_put(p, st + j, state_get(p, st + j + 1));
  state_put(p, st + K - 2, xv);
}

// reg: the whole window in registers (read the K-1 state values, then write the shifted ones);
// W = 4 is the K = 4 specialisation, W = kMaxK serves any K with the low taps skipped.
template <class TX, int W>
GDN_HD inline void reg_thread(const Params& p, int64_t bx, int64_t by, int tid) {
  const int64_t c = bx * kThreads + tid;
  if (c >= p.C) return;
  const int32_t slot = p.slots[by];
  if (slot < 0) return;
  const int K = W == 4 ? 4 : p.K;
  const TX* w = static_cast<const TX*>(p.w) + c * K;
  const int64_t st = ((int64_t)slot * p.C + c) * (K - 1);
  float win[W], wr[W];
  GDN_UNROLL
  for (int jj = 0; jj < W; ++jj) {
    const bool live = jj >= W - K;
    wr[jj] = live ? conv::load(w, jj - (W - K)) : 0.0f;
    win[jj] = live && jj < W - 1 ? state_get(p, st + jj - (W - K)) : 0.0f;
  }
  win[W - 1] = conv::load(static_cast<const TX*>(p.x), by * p.C + c);
  float acc = p.bias ? conv::load(static_cast<const TX*>(p.bias), c) : 0.0f;
  GDN_UNROLL
  for (int jj = 0; jj < W; ++jj)
    if (jj >= W - K) acc = det_fma(wr[jj], win[jj], acc);
  out_put(p, by * p.C + c, gdn_silu(acc));
  GDN_UNROLL
  for (int jj = 1; jj < W; ++jj)
    if (jj >= W - K + 1) state_put(p, st + jj - (W - K + 1), win[jj]);
}

}  // namespace update
}  // namespace gdn
