// vec_host_test.cpp — the host backend's traversal of a `vec` block (common/arms/conv_vec.h,
// vec_block_host: one pass over the block's token rows) against the `vec` thread bodies replayed one
// by one (vec_thread: the body the GPU runs) and against the op's per-element definition
// (docs/SPEC.md §3.2, §3.3), written out plainly here. Raw bits of out and of the final state, for
// both window widths (K <= 4 and K <= 8), every x/out dtype pair, the exact, exact-racy and sequence
// mappings, varlen batches with empty, short and multi-program sequences, initial state present or
// absent (i8 and i32 flags), bias or none, strided x, channel counts that are not a multiple of a pass
// or of a block tile, and pre-activations beyond SiLU's fast range, NaN and infinities.
// Compiled with the host replay's flags (-O3, AVX2 where the CPU has it), like src/host/*.cpp.
#include "common/arms/conv_vec.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

#include "check_count.h"
#include "splitmix.h"

using namespace gdn;
using namespace gdn::conv;

namespace {

template <class T>
uint32_t bits_of(T v) {
  if constexpr (sizeof(T) == 2) {
    return v;
  } else {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return u;
  }
}

template <class T>
T from_float(float f) {
  if constexpr (sizeof(T) == 2)
    return f32_to_bf16(f);
  else
    return f;
}

template <class T>
int64_t differing(const std::vector<T>& a, const std::vector<T>& b) {
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += bits_of(a[i]) != bits_of(b[i]);
  return n;
}

struct Case {
  int K;
  int64_t C, x_stride;
  std::vector<int32_t> lengths;
  int mapping;  // GDN_MAP_EXACT, GDN_MAP_EXACT_RACY or GDN_MAP_SEQUENCE
  bool bias, his_i32;
  float scale;  // magnitude of x: 40 puts many pre-activations beyond SiLU's fast range (|x| > 80)
  bool specials;
};

template <class TX, class TO>
void run_case(const Case& c, uint64_t seed) {
  const int K = c.K;
  const int32_t N = (int32_t)c.lengths.size();
  std::vector<int32_t> qsl(N + 1, 0);
  for (int32_t s = 0; s < N; ++s) qsl[s + 1] = qsl[s] + c.lengths[s];
  const int64_t T = qsl[N], C = c.C;
  Rng rng(seed);
  std::vector<TX> x((size_t)(T > 0 ? T : 1) * c.x_stride), w((size_t)C * K), bias((size_t)C);
  for (auto& v : x) v = from_float<TX>(rng.uniform(-c.scale, c.scale));
  for (auto& v : w) v = from_float<TX>(rng.uniform(-1.0f, 1.0f));
  for (auto& v : bias) v = from_float<TX>(rng.uniform(-0.5f, 0.5f));
  if (c.specials && T > 3) {
    x[(size_t)1 * c.x_stride + 0] = from_float<TX>(f32_from_bits(0x7fc00000u));  // NaN
    x[(size_t)2 * c.x_stride + 1] = from_float<TX>(f32_from_bits(0x7f800000u));  // +Inf
    x[(size_t)3 * c.x_stride + 2] = from_float<TX>(f32_from_bits(0xff800000u));  // -Inf
  }
  std::vector<int32_t> his32(N);
  std::vector<int8_t> his8(N);
  for (int32_t s = 0; s < N; ++s) his32[s] = his8[s] = (int8_t)(s % 3 != 1);
  std::vector<float> state0((size_t)N * C * (K - 1 > 0 ? K - 1 : 1));
  for (auto& v : state0) v = rng.uniform(-3.0f, 3.0f);

  // The definition (SPEC §3.2, §3.3), element by element.
  std::vector<TO> out_ref((size_t)T * C, 0);
  std::vector<float> state_ref = state0;
  for (int32_t s = 0; s < N; ++s) {
    const bool init = his32[s] != 0;
    const int64_t len = c.lengths[s];
    auto v_at = [&](int64_t pos, int64_t ch) -> float {  // pos relative to the sequence start
      if (pos >= 0) return load(x.data(), (qsl[s] + pos) * c.x_stride + ch);
      return init ? state0[((size_t)s * C + ch) * (K - 1) + (K - 1 + pos)] : 0.0f;
    };
    for (int64_t ch = 0; ch < C; ++ch) {
      for (int64_t t = 0; t < len; ++t) {
        float acc = c.bias ? load(bias.data(), ch) : 0.0f;
        for (int j = 0; j < K; ++j) acc = det_fma(load(w.data(), ch * K + j), v_at(t - (K - 1) + j, ch), acc);
        store(out_ref.data(), (qsl[s] + t) * C + ch, gdn_silu(acc));
      }
      if (len > 0)
        for (int j = 0; j < K - 1; ++j) state_ref[((size_t)s * C + ch) * (K - 1) + j] = v_at(len - (K - 1) + j, ch);
    }
  }

  // The launch as the planner makes it: programs (sequence, chunk) for the exact mappings.
  Params p{};
  p.T = T;
  p.C = C;
  p.x_stride = c.x_stride;
  p.K = K;
  p.N = N;
  p.x = x.data();
  p.w = w.data();
  p.bias = c.bias ? bias.data() : nullptr;
  p.qsl = qsl.data();
  p.his = c.his_i32 ? (const void*)his32.data() : (const void*)his8.data();
  p.his_i32 = c.his_i32 ? 1 : 0;
  p.mapping = c.mapping;
  p.chunk = kVecChunk;
  p.grid_x = (int32_t)((C + kVecTile - 1) / kVecTile);
  std::vector<int32_t> programs;
  for (int32_t s = 0; s < N; ++s)
    for (int64_t k = 0; k * kVecChunk < c.lengths[s]; ++k) {
      programs.push_back(s);
      programs.push_back((int32_t)k);
    }
  p.programs = programs.data();
  const int64_t grid_y = c.mapping == GDN_MAP_SEQUENCE ? N : (int64_t)programs.size() / 2;

  auto run = [&](bool block_pass, std::vector<TO>& out, std::vector<float>& state) {
    out.assign((size_t)T * C, from_float<TO>(-12345.0f));  // poison: every element must be written
    state = state0;
    p.out = out.data();
    p.state = state.data();
    for (int64_t by = 0; by < grid_y; ++by)
      for (int64_t bx = 0; bx < p.grid_x; ++bx) {
        if (block_pass) {
          if (K <= 4)
            vec_block_host<TX, TO, 4, kThreads>(p, bx, by);
          else
            vec_block_host<TX, TO, kMaxK, kThreads>(p, bx, by);
        } else {
          for (int tid = 0; tid < kThreads; ++tid) {
            if (K <= 4)
              vec_thread<TX, TO, NoMutant, 4>(p, bx, by, tid);
            else
              vec_thread<TX, TO, NoMutant, kMaxK>(p, bx, by, tid);
          }
        }
      }
  };
  std::vector<TO> out_thread, out_block;
  std::vector<float> state_thread, state_block;
  run(false, out_thread, state_thread);
  run(true, out_block, state_block);

  const char* map = c.mapping == GDN_MAP_SEQUENCE ? "sequence" : c.mapping == GDN_MAP_EXACT ? "exact" : "exact-racy";
  char what[256];
  const int64_t d_out_ref = differing(out_block, out_ref), d_out_thr = differing(out_block, out_thread);
  const int64_t d_st_ref = differing(state_block, state_ref), d_st_thr = differing(state_block, state_thread);
  std::snprintf(what, sizeof what,
                "%s->%s K=%d C=%" PRId64 " stride=%" PRId64 " N=%d %s%s scale=%g: out %" PRId64 " / %" PRId64
                " differ from the definition, %" PRId64 " from the thread bodies; state %" PRId64 " and %" PRId64,
                sizeof(TX) == 2 ? "bf16" : "f32", sizeof(TO) == 2 ? "bf16" : "f32", K, C, c.x_stride, N, map,
                c.bias ? " bias" : "", c.scale, d_out_ref, (int64_t)out_ref.size(), d_out_thr, d_st_ref, d_st_thr);
  check(d_out_ref == 0 && d_st_ref == 0, what);
  check(d_out_thr == 0 && d_st_thr == 0, what);
  // The thread bodies against the definition as well: a disagreement above must name the side.
  check(differing(out_thread, out_ref) == 0 && differing(state_thread, state_ref) == 0, what);
}

template <class TX, class TO>
void run_all(uint64_t& seed) {
  const std::vector<int32_t> varlen = {0, 1, 2, 3, 5, 64, 65, 130, 7, 0, 200};
  const std::vector<int32_t> one_long = {300};
  const int maps[] = {GDN_MAP_EXACT, GDN_MAP_EXACT_RACY, GDN_MAP_SEQUENCE};
  for (int K = 1; K <= kMaxK; ++K)
    for (int m : maps) {
      run_case<TX, TO>({K, 1288, 1288, varlen, m, K % 2 == 0, K % 3 == 0, 2.0f, false}, ++seed);
      run_case<TX, TO>({K, 2048, 2064, one_long, m, true, false, 40.0f, K == 4}, ++seed);
    }
  run_case<TX, TO>({4, 8, 8, varlen, GDN_MAP_EXACT, true, true, 2.0f, true}, ++seed);
  run_case<TX, TO>({4, 264, 272, {1, 2}, GDN_MAP_SEQUENCE, false, false, 100.0f, false}, ++seed);
}

}  // namespace

int main() {
  uint64_t seed = 0x5eed;
  run_all<bf16_bits, bf16_bits>(seed);
  run_all<bf16_bits, float>(seed);
  run_all<float, float>(seed);
  run_all<float, bf16_bits>(seed);
  std::printf("vec host traversal: %d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
