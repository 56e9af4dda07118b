// update_common.h — the decode update of the causal conv (docs/SPEC.md §5): one new token per sequence, the state in a pool of slots addressed by state_indices.
//
//   win = [state[slot][c][0 .. K-2], x[b][c]];  acc = bias; for j: acc = fmaf(w[c][j], win[j], acc)
//   out[b][c] = round(silu(acc));  state[slot][c] = win[1 .. K-1] (rounded to the state dtype)
// A negative slot skips the sequence: its out row and every state slot stay untouched.
// Grid (channel tiles, B), 2-D: t.bx() = channel tile, t.by() = sequence.
#pragma once

#include "common/arms/arm_spec.h"
#include "common/conv_params.h"

namespace gdn {
namespace update {

constexpr int kThreads = 128;  // one thread per channel, 128 channels per block

struct Params {
  int64_t B, C;
  int32_t K;
  int32_t out_bf16, state_bf16;
  const void* x;     // [B, C] TX
  const void* w;     // [C, K] TX
  const void* bias;  // [C] TX or null
  void* state;       // [num_slots, C, K-1]
  const int32_t* slots;  // [B], or null: the slots are in slot_words (common/plan_lists.h)
  void* out;         // [B, C]
  int32_t slot_words[kInlineSlots];  // up to 64 slots given as a host copy
};

// The pool slot of sequence b (negative: skip it).
GDN_HDI int32_t slot_of(const Params& p, int64_t b) { return p.slots ? p.slots[b] : p.slot_words[b]; }

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

}  // namespace update
}  // namespace gdn
