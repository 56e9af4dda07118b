// native_smoke.cpp — a native smoke test of libgdn through its C ABI (gdn.h), on the host backend
// (and on the CUDA backend when one is usable: --cuda, or automatically when a GPU is found).
//
// Checks, each one able to fail:
//   * scalar equals a plain-loop reference written here (docs/SPEC.md §3.2), bit for bit — in the
//     kernels' own arithmetic (gdn_silu, f32_to_bf16), so it pins the loops, not the arithmetic;
//   * scalar agrees with the independent float64 reference of f64_reference.h (no detmath): f32
//     outputs within a few f32 ulps, bf16 outputs rounded to nearest even;
//   * every arm x mapping equals scalar bit for bit (out and conv_state), under forward, reverse and
//     shuffled block orders, over C = 129, 385 (padded stride), 136/1032 (vec), K = 2..5 and 8,
//     f32/bf16, with and without initial state (i8 and i32 masks), T_s in {0, 1, 2, 8, 9, 33, 200};
//   * the #305 race: exact-racy under REVERSE corrupts exactly rows 0..K-2 of sequences longer than
//     one chunk that have initial state, in whole channel tiles, and nothing else; an explicit order
//     that runs one end block early corrupts exactly that channel tile;
//   * every planted mutant is caught against scalar; decode update arms agree with each other and
//     with a one-token prefill; matmul matches a plain loop bit for bit; error paths name the field.
// Exit status 0 when every check passed.
#include "gdn.h"
#include "detmath.h"

#include <chrono>
#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "splitmix.h"
#include "f64_reference.h"

namespace {

int g_failures = 0, g_checks = 0;

void check(bool ok, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void check(bool ok, const char* fmt, ...) {
  ++g_checks;
  if (ok) return;
  ++g_failures;
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "FAIL: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

#define REQUIRE_OK(expr)                                                                            \
  do {                                                                                              \
    const gdn_status st_ = (expr);                                                                  \
    if (st_ != GDN_OK) {                                                                            \
      std::fprintf(stderr, "FATAL %s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #expr, gdn_status_name(st_), \
                   gdn_last_error());                                                               \
      std::exit(2);                                                                                 \
    }                                                                                               \
  } while (0)


gdn_backend* g_b = nullptr;
bool g_cuda = false;

// A backend buffer.
struct Buf {
  gdn_addr addr = 0;
  uint64_t bytes = 0;
  Buf() = default;
  explicit Buf(uint64_t n) : bytes(n) { REQUIRE_OK(gdn_buffer_alloc(g_b, n, &addr)); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  Buf(Buf&& o) noexcept : addr(o.addr), bytes(o.bytes) { o.addr = 0; }
  Buf& operator=(Buf&& o) noexcept {
    std::swap(addr, o.addr);
    std::swap(bytes, o.bytes);
    return *this;
  }
  ~Buf() {
    if (addr) gdn_buffer_free(g_b, addr);
  }
  void upload(const void* src, uint64_t n) { REQUIRE_OK(gdn_buffer_upload(g_b, addr, src, n)); }
  template <class T>
  std::vector<T> download(uint64_t count) const {
    std::vector<T> v(count);
    if (count) REQUIRE_OK(gdn_buffer_download(g_b, v.data(), addr, count * sizeof(T)));
    return v;
  }
};

template <class T>
Buf make_buf(const std::vector<T>& v) {
  Buf b(v.empty() ? 4 : v.size() * sizeof(T));
  if (!v.empty()) b.upload(v.data(), v.size() * sizeof(T));
  return b;
}

// Values stored in a dtype, kept as raw bytes plus their exact f32 values.
struct Stored {
  std::vector<uint8_t> raw;
  std::vector<float> f;  // the value each element holds (bf16 values are exact in f32)
};

Stored make_values(int dtype, size_t n, Rng& rng, float lo, float hi) {
  Stored s;
  s.f.resize(n);
  s.raw.resize(n * (dtype == GDN_BF16 ? 2 : 4));
  for (size_t i = 0; i < n; ++i) {
    float v = rng.uniform(lo, hi);
    if (dtype == GDN_BF16) {
      const uint16_t h = gdn::f32_to_bf16(v);
      std::memcpy(&s.raw[i * 2], &h, 2);
      v = gdn::bf16_to_f32(h);
    } else {
      std::memcpy(&s.raw[i * 4], &v, 4);
    }
    s.f[i] = v;
  }
  return s;
}

// ----------------------------------------------------------------- one conv problem
struct ConvCase {
  int64_t C = 129, K = 4, stride = 0;  // stride 0 = C
  int x_dtype = GDN_F32, out_dtype = GDN_F32;
  int his_mode = 0;  // 0 none, 1 i8 mask, 2 i32 mask
  bool bias = true;
  std::vector<int32_t> lengths;
  uint64_t seed = 1;
  bool specials = false;  // sprinkle NaN, ±Inf, ±1e30, ±95 and -0 into x
};

struct ConvProblem {
  ConvCase cs;
  int64_t T = 0, N = 0, stride = 0;
  std::vector<int32_t> qsl;
  Stored x, w, bias;
  std::vector<float> state0;
  std::vector<uint8_t> his_raw;
  std::vector<int> his;  // 0/1 per sequence
  Buf bx, bw, bbias, bqsl, bhis, bstate, bout;

  explicit ConvProblem(const ConvCase& c) : cs(c) {
    N = (int64_t)c.lengths.size();
    qsl.push_back(0);
    for (int32_t l : c.lengths) qsl.push_back(qsl.back() + l);
    T = qsl.back();
    stride = c.stride ? c.stride : c.C;
    Rng rng(c.seed);
    x = make_values(c.x_dtype, (size_t)(T * stride), rng, -3.0f, 3.0f);
    if (c.specials) {
      const uint32_t bits[] = {0x7fc00001u, 0x7f800000u, 0xff800000u, 0x7149f2cau, 0xf149f2cau, 0x42be0000u, 0xc2be0000u,
                               0x80000000u, 0xffc12345u};
      for (size_t i = 5, k = 0; i < x.f.size(); i += 17, ++k) {
        float v;
        std::memcpy(&v, &bits[k % 9], 4);
        if (c.x_dtype == GDN_BF16) {
          const uint16_t h = (uint16_t)(bits[k % 9] >> 16);
          std::memcpy(&x.raw[i * 2], &h, 2);
          v = gdn::bf16_to_f32(h);
        } else {
          std::memcpy(&x.raw[i * 4], &v, 4);
        }
        x.f[i] = v;
      }
    }
    w = make_values(c.x_dtype, (size_t)(c.C * c.K), rng, -1.0f, 1.0f);
    bias = make_values(c.x_dtype, (size_t)c.C, rng, -0.5f, 0.5f);
    state0.resize((size_t)(N * c.C * (c.K - 1)));
    for (float& v : state0) v = rng.uniform(-3.0f, 3.0f);
    his.resize((size_t)N);
    for (int64_t s = 0; s < N; ++s) his[(size_t)s] = c.his_mode == 0 ? 0 : (int)((s * 7 + 3) % 4 != 0);
    if (c.his_mode == 1)
      for (int v : his) his_raw.push_back((uint8_t)(v ? 5 : 0));
    if (c.his_mode == 2)
      for (int v : his) {
        const int32_t i = v ? -2 : 0;
        const uint8_t* p = reinterpret_cast<const uint8_t*>(&i);
        his_raw.insert(his_raw.end(), p, p + 4);
      }
    bx = make_buf(x.raw);
    bw = make_buf(w.raw);
    bbias = make_buf(bias.raw);
    bqsl = make_buf(qsl);
    if (!his_raw.empty()) bhis = make_buf(his_raw);
    bstate = Buf(state0.size() * 4);
    bout = Buf((uint64_t)std::max<int64_t>(T * c.C * (c.out_dtype == GDN_BF16 ? 2 : 4), 4));
  }

  gdn_conv_args args(int arm, int mapping) const {
    gdn_conv_args a;
    std::memset(&a, 0, sizeof a);
    a.T = T;
    a.C = cs.C;
    a.K = cs.K;
    a.num_seqs = (int32_t)N;
    a.x_dtype = cs.x_dtype;
    a.out_dtype = cs.out_dtype;
    a.his_dtype = cs.his_mode == 2 ? GDN_I32 : GDN_I8;
    a.x_row_stride = stride;
    a.x = bx.addr;
    a.weight = bw.addr;
    a.bias = cs.bias ? bbias.addr : 0;
    a.query_start_loc = bqsl.addr;
    a.has_initial_state = cs.his_mode ? bhis.addr : 0;
    a.conv_state = bstate.addr;
    a.out = bout.addr;
    a.arm = arm;
    a.mapping = mapping;
    return a;
  }

  struct Result {
    gdn_status status;
    gdn_launch_contract ct;
    std::vector<uint32_t> out;  // raw bits (bf16 in the low 16)
    std::vector<uint32_t> state;
  };

  Result run(gdn_conv_args a) {
    Result r;
    state_reset();
    REQUIRE_OK(gdn_buffer_fill_u32(g_b, bout.addr, 0x7fc0dead, bout.bytes / 4 * 4));  // poison: a NaN pattern
    r.status = gdn_conv_forward(g_b, &a, &r.ct);
    if (r.status != GDN_OK) return r;
    const int64_t n = T * cs.C;
    if (cs.out_dtype == GDN_BF16) {
      auto v = bout.download<uint16_t>((uint64_t)n);
      r.out.assign(v.begin(), v.end());
    } else {
      r.out = bout.download<uint32_t>((uint64_t)n);
    }
    r.state = bstate.download<uint32_t>(state0.size());
    return r;
  }

  void state_reset() { bstate.upload(state0.data(), state0.size() * 4); }

  // Independent reference: docs/SPEC.md §3.2 written out as plain loops over (sequence, channel, token).
  void reference(std::vector<uint32_t>* out, std::vector<uint32_t>* state) const {
    const int64_t C = cs.C, K = cs.K;
    out->assign((size_t)(T * C), 0);
    state->resize(state0.size());
    for (size_t i = 0; i < state0.size(); ++i) std::memcpy(&(*state)[i], &state0[i], 4);
    for (int64_t s = 0; s < N; ++s) {
      const int64_t start = qsl[(size_t)s], Ts = qsl[(size_t)s + 1] - start;
      if (Ts == 0) continue;
      for (int64_t c = 0; c < C; ++c) {
        const float* old = &state0[(size_t)((s * C + c) * (K - 1))];
        auto at = [&](int64_t pos) -> float {  // position relative to the sequence start
          if (pos >= 0) return x.f[(size_t)((start + pos) * stride + c)];
          return his[(size_t)s] ? old[K - 1 + pos] : 0.0f;
        };
        for (int64_t t = 0; t < Ts; ++t) {
          float acc = cs.bias ? bias.f[(size_t)c] : 0.0f;
          for (int64_t j = 0; j < K; ++j) acc = std::fmaf(w.f[(size_t)(c * K + j)], at(t - (K - 1) + j), acc);
          const float y = gdn::gdn_silu(acc);  // acc / (1 + exp(-acc)), NaN made canonical
          uint32_t bits;
          if (cs.out_dtype == GDN_BF16) bits = gdn::f32_to_bf16(y);
          else std::memcpy(&bits, &y, 4);
          (*out)[(size_t)((start + t) * C + c)] = bits;
        }
        for (int64_t j = 0; j < K - 1; ++j) {
          const float v = at(Ts - (K - 1) + j);
          std::memcpy(&(*state)[(size_t)((s * C + c) * (K - 1) + j)], &v, 4);
        }
      }
    }
  }
};

int64_t count_diff(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a.size() != b.size()) return -1;
  int64_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

// The arms come from libgdn's registry (gdn_arm_count / gdn_arm_info_get), never from a list here: a
// new arm is tested as soon as it is registered.
gdn_arm_info arm_info(int32_t op, int32_t id) {
  gdn_arm_info info;
  std::memset(&info, 0, sizeof info);
  if (gdn_arm_info_get(op, id, &info) != GDN_OK) std::snprintf(info.name, sizeof info.name, "?%d", (int)id);
  return info;
}
int conv_arm_count() { return gdn_arm_count(GDN_OP_CONV); }
const char* arm_name(int32_t id) {
  static std::vector<std::string> names;
  while ((int32_t)names.size() < conv_arm_count()) names.push_back(arm_info(GDN_OP_CONV, (int32_t)names.size()).name);
  return id >= 0 && id < (int32_t)names.size() ? names[(size_t)id].c_str() : "?";
}
bool arm_has_exact(int32_t id) { return (arm_info(GDN_OP_CONV, id).mappings & (1 << GDN_MAP_EXACT)) != 0; }
bool arm_needs_vec8(int32_t id) { return (arm_info(GDN_OP_CONV, id).data_requires & GDN_ARM_REQ_VEC8) != 0; }
const char* map_names[] = {"exact", "exact-racy", "sequence"};

std::string describe(const ConvCase& c) {
  char buf[256];
  std::string lens;
  for (int32_t l : c.lengths) lens += std::to_string(l) + ",";
  std::snprintf(buf, sizeof buf, "C=%" PRId64 " stride=%" PRId64 " K=%" PRId64 " x=%s out=%s his=%d bias=%d T_s=[%s]", c.C,
                c.stride ? c.stride : c.C, c.K, c.x_dtype == GDN_BF16 ? "bf16" : "f32",
                c.out_dtype == GDN_BF16 ? "bf16" : "f32", c.his_mode, (int)c.bias, lens.c_str());
  return buf;
}

// ----------------------------------------------------------------- arm equivalence
void test_equivalence() {
  std::vector<ConvCase> cases;
  const std::vector<int32_t> mixed = {0, 1, 2, 8, 9, 33, 200, 0};
  auto add = [&](int64_t C, int64_t stride, int64_t K, int xd, int od, int his, bool bias, std::vector<int32_t> l) {
    ConvCase c;
    c.C = C;
    c.stride = stride;
    c.K = K;
    c.x_dtype = xd;
    c.out_dtype = od;
    c.his_mode = his;
    c.bias = bias;
    c.lengths = l;
    c.seed = 1000 + cases.size();
    cases.push_back(c);
  };
  add(129, 0, 4, GDN_F32, GDN_F32, 1, true, mixed);
  add(129, 0, 4, GDN_BF16, GDN_BF16, 2, true, mixed);
  add(385, 400, 3, GDN_BF16, GDN_F32, 1, false, mixed);
  add(385, 400, 5, GDN_F32, GDN_BF16, 2, true, {9, 1, 33, 2});
  add(129, 136, 2, GDN_BF16, GDN_BF16, 0, true, mixed);
  add(136, 0, 4, GDN_BF16, GDN_BF16, 1, true, {200, 65, 64, 1, 0, 3});
  add(136, 144, 3, GDN_F32, GDN_F32, 2, true, {129, 8, 9, 2});
  add(1032, 0, 4, GDN_BF16, GDN_F32, 1, true, {70, 1, 2});
  add(136, 0, 8, GDN_BF16, GDN_BF16, 1, true, {200, 7, 6, 0, 1});
  add(40, 0, 5, GDN_F32, GDN_F32, 1, false, {1, 2, 3, 4, 5});  // shorter than K-1: shifted old state
  add(136, 0, 4, GDN_F32, GDN_F32, 1, true, {70, 9, 33});
  cases.back().specials = true;
  add(136, 0, 3, GDN_BF16, GDN_BF16, 2, true, {70, 9, 33});
  cases.back().specials = true;

  const int scheds[] = {GDN_SCHED_FORWARD, GDN_SCHED_REVERSE, GDN_SCHED_SHUFFLE};
  for (const ConvCase& c : cases) {
    ConvProblem pb(c);
    std::vector<uint32_t> ref_out, ref_state;
    pb.reference(&ref_out, &ref_state);
    auto sc = pb.run(pb.args(GDN_CONV_SCALAR, GDN_MAP_EXACT));
    check(sc.status == GDN_OK, "scalar failed: %s", gdn_last_error());
    check(count_diff(sc.out, ref_out) == 0, "%s: scalar vs plain reference: %" PRId64 " out mismatches",
          describe(c).c_str(), count_diff(sc.out, ref_out));
    check(count_diff(sc.state, ref_state) == 0, "%s: scalar vs plain reference: %" PRId64 " state mismatches",
          describe(c).c_str(), count_diff(sc.state, ref_state));
    {  // the independent float64 reference: every finite output within its window, nearly all exact
      const std::vector<double> f64 = f64ref::conv_out(c.C, c.K, pb.stride, pb.qsl, pb.x.f, pb.w.f,
                                                       c.bias ? pb.bias.f.data() : nullptr, pb.state0, pb.his);
      const f64ref::StoreCheck fc = f64ref::check_store(sc.out, f64, c.out_dtype == GDN_BF16, 1e-5, 2e-5);
      check(fc.violations == 0, "%s: scalar vs float64 reference: %" PRId64 " of %" PRId64 " outputs outside the window (first at %" PRId64 ")",
            describe(c).c_str(), fc.violations, fc.checked, fc.first);
      check(fc.checked > 0 && fc.exact >= fc.checked * 97 / 100, "%s: float64 check too loose: %" PRId64 " exact of %" PRId64,
            describe(c).c_str(), fc.exact, fc.checked);
    }
    for (int arm = 0; arm < conv_arm_count(); ++arm)
      for (int map = 0; map < GDN_MAP_COUNT; ++map)
        for (int sched : scheds) {
          if (map == GDN_MAP_EXACT_RACY && sched != GDN_SCHED_FORWARD) continue;  // the race: below
          if (g_cuda && sched != GDN_SCHED_FORWARD) continue;
          if (g_cuda && map == GDN_MAP_EXACT_RACY) continue;  // racy on a GPU by design: see --cross
          gdn_conv_args a = pb.args(arm, map);
          a.schedule.kind = sched;
          a.schedule.seed = 77 + (uint64_t)arm;
          auto r = pb.run(a);
          if (r.status != GDN_OK) {
            check(false, "%s %s %s: %s", describe(c).c_str(), arm_name(arm), map_names[map], gdn_last_error());
            continue;
          }
          const int64_t dout = count_diff(r.out, sc.out), dst = count_diff(r.state, sc.state);
          check(dout == 0 && dst == 0, "%s arm=%s (ran %s) map=%s sched=%d: %" PRId64 " out, %" PRId64 " state mismatches vs scalar",
                describe(c).c_str(), arm_name(arm), arm_name(r.ct.arm_ran), map_names[map], sched, dout, dst);
        }
  }
  std::printf("equivalence: %zu shapes x %d arms x 3 mappings x schedules checked\n", cases.size(), conv_arm_count());
}

// ----------------------------------------------------------------- the #305 race
void test_race() {
  for (int arm = 0; arm < conv_arm_count(); ++arm) {
    if (!arm_has_exact(arm)) continue;  // whole-sequence arms have no chunk programs to race
    const int chunk = arm_info(GDN_OP_CONV, arm).tokens_per_program;
    ConvCase c;
    c.C = arm_needs_vec8(arm) ? 1032 : 385;
    c.K = 4;
    c.x_dtype = GDN_BF16;
    c.out_dtype = GDN_F32;
    c.his_mode = 1;
    c.lengths = chunk >= 64 ? std::vector<int32_t>{200, 64, 65, 9, 3} : std::vector<int32_t>{9, 8, 33, 200, 2, 17};
    c.seed = 5;
    ConvProblem pb(c);
    auto sc = pb.run(pb.args(GDN_CONV_SCALAR, GDN_MAP_EXACT));
    // exact and sequence mappings are right under every order
    for (int map : {GDN_MAP_EXACT, GDN_MAP_SEQUENCE})
      for (int sched : {GDN_SCHED_FORWARD, GDN_SCHED_REVERSE, GDN_SCHED_SHUFFLE}) {
        for (uint64_t seed = 1; seed <= (sched == GDN_SCHED_SHUFFLE ? 4u : 1u); ++seed) {
          gdn_conv_args a = pb.args(arm, map);
          a.schedule.kind = sched;
          a.schedule.seed = seed;
          auto r = pb.run(a);
          check(r.status == GDN_OK && count_diff(r.out, sc.out) == 0 && count_diff(r.state, sc.state) == 0,
                "race: %s %s sched=%d seed=%d must equal scalar", arm_name(arm), map_names[map], sched, (int)seed);
        }
      }
    // exact-racy forward is right
    {
      auto r = pb.run(pb.args(arm, GDN_MAP_EXACT_RACY));
      check(count_diff(r.out, sc.out) == 0 && count_diff(r.state, sc.state) == 0,
            "race: %s exact-racy FORWARD must equal scalar", arm_name(arm));
    }
    // exact-racy reverse: exactly rows 0..K-2 of long sequences with initial state, every channel tile
    gdn_conv_args a = pb.args(arm, GDN_MAP_EXACT_RACY);
    a.schedule.kind = GDN_SCHED_REVERSE;
    auto r = pb.run(a);
    check(r.status == GDN_OK, "race run failed: %s", gdn_last_error());
    const int tile = r.ct.channels_per_block;
    int64_t outside = 0, corrupted_tiles = 0, expected_tiles = 0;
    for (int64_t s = 0; s < pb.N; ++s) {
      const int64_t start = pb.qsl[(size_t)s], Ts = pb.qsl[(size_t)s + 1] - start;
      const bool victim = pb.his[(size_t)s] && Ts > chunk;
      for (int64_t t = 0; t < Ts; ++t)
        for (int64_t ch = 0; ch < c.C; ++ch) {
          const size_t i = (size_t)((start + t) * c.C + ch);
          if (r.out[i] != sc.out[i] && !(victim && t < c.K - 1)) ++outside;
        }
      if (!victim) continue;
      for (int64_t t0 = 0; t0 < (c.C + tile - 1) / tile; ++t0) {
        ++expected_tiles;
        int64_t bad = 0;
        for (int64_t t = 0; t < c.K - 1; ++t)
          for (int64_t ch = t0 * tile; ch < std::min<int64_t>(c.C, (t0 + 1) * tile); ++ch) {
            const size_t i = (size_t)((start + t) * c.C + ch);
            bad += r.out[i] != sc.out[i];
          }
        corrupted_tiles += bad > 0;
      }
    }
    check(outside == 0, "race: %s exact-racy REVERSE: %" PRId64 " mismatches outside rows 0..K-2 of victims", arm_name(arm),
          outside);
    check(expected_tiles > 0 && corrupted_tiles == expected_tiles,
          "race: %s exact-racy REVERSE: %" PRId64 " of %" PRId64 " victim channel tiles corrupted", arm_name(arm),
          corrupted_tiles, expected_tiles);
    check(count_diff(r.state, sc.state) == 0, "race: %s exact-racy REVERSE: the final state must still be right",
          arm_name(arm));

    // Explicit order: forward, except that the end program of the longest sequence with initial
    // state, in channel tile 1, runs first. Exactly rows 0..K-2 x tile 1 of that sequence go wrong.
    int victim_seq = -1;
    for (int64_t s = 0; s < pb.N; ++s)
      if (pb.his[(size_t)s] && (victim_seq < 0 || c.lengths[(size_t)s] > c.lengths[(size_t)victim_seq])) victim_seq = (int)s;
    const int victim_tile = 1;
    std::vector<int32_t> programs((size_t)r.ct.programs * 2);
    REQUIRE_OK(gdn_conv_launch_contract(arm, GDN_MAP_EXACT_RACY, c.C, c.K, pb.qsl.data(), (int32_t)pb.N, &r.ct,
                                        programs.data(), r.ct.programs));
    int32_t end_prog = -1;
    for (int32_t y = 0; y < r.ct.programs; ++y)
      if (programs[(size_t)(2 * y)] == victim_seq) end_prog = y;  // last program of the sequence
    const int32_t early = end_prog * r.ct.grid_x + victim_tile;
    std::vector<int32_t> order;
    order.push_back(early);
    for (int32_t i = 0; i < r.ct.grid_x * r.ct.grid_y; ++i)
      if (i != early) order.push_back(i);
    a.schedule.kind = GDN_SCHED_EXPLICIT;
    a.schedule.order = order.data();
    a.schedule.order_len = (int32_t)order.size();
    auto e = pb.run(a);
    check(e.status == GDN_OK, "explicit order failed: %s", gdn_last_error());
    int64_t in_tile = 0, elsewhere = 0;
    const int64_t vstart = pb.qsl[(size_t)victim_seq];
    for (int64_t t = 0; t < pb.T; ++t)
      for (int64_t ch = 0; ch < c.C; ++ch) {
        const size_t i = (size_t)(t * c.C + ch);
        if (e.out[i] == sc.out[i]) continue;
        const bool expected = t >= vstart && t < vstart + c.K - 1 && ch / tile == victim_tile;
        (expected ? in_tile : elsewhere)++;
      }
    check(elsewhere == 0 && in_tile > 0, "race: %s explicit order: %" PRId64 " wrong in the victim tile, %" PRId64 " elsewhere",
          arm_name(arm), in_tile, elsewhere);
    std::printf("race %-8s: reverse corrupts %" PRId64 "/%" PRId64 " victim tiles, 0 elsewhere; one early end block corrupts %" PRId64
                " values of its tile only\n",
                arm_name(arm), corrupted_tiles, expected_tiles, in_tile);
  }
}

// ----------------------------------------------------------------- mutants
void test_mutants() {
  for (int out_dtype : {GDN_F32, GDN_BF16}) {
    for (int arm = 0; arm < conv_arm_count(); ++arm) {
      ConvCase c;
      c.C = arm_needs_vec8(arm) ? 1032 : 129;
      c.K = 4;
      c.x_dtype = GDN_BF16;
      c.out_dtype = out_dtype;
      c.his_mode = 1;
      c.lengths = {9, 17, 33, 12, 24, 70};
      c.seed = 9;
      ConvProblem pb(c);
      auto sc = pb.run(pb.args(GDN_CONV_SCALAR, GDN_MAP_EXACT));
      for (int m = 1; m < GDN_CONV_MUTANT_COUNT; ++m) {
        gdn_conv_args a = pb.args(arm, GDN_MAP_EXACT);
        a.mutant = m;
        auto r = pb.run(a);
        const char* mname = gdn_conv_mutant_name(m);
        if (m == GDN_CONV_MUTANT_CHUNK_OFF_BY_ONE && !arm_has_exact(arm)) {
          check(r.status == GDN_ERR_UNSUPPORTED, "mutant %s on %s must be refused (whole-sequence arm)", mname,
                arm_name(arm));
          continue;
        }
        check(r.status == GDN_OK, "mutant %s on %s failed: %s", mname, arm_name(arm), gdn_last_error());
        const int64_t dout = count_diff(r.out, sc.out), dst = count_diff(r.state, sc.state);
        check(dout + dst > 0, "mutant %s on %s (out %s) NOT caught", mname, arm_name(arm),
              out_dtype == GDN_BF16 ? "bf16" : "f32");
        if (out_dtype == GDN_F32 || arm == GDN_CONV_REG)
          std::printf("mutant %-18s arm %-8s out %-4s: %6" PRId64 " out, %5" PRId64 " state mismatches\n", mname,
                      arm_name(arm), out_dtype == GDN_BF16 ? "bf16" : "f32", dout, dst);
      }
    }
  }
}

// ----------------------------------------------------------------- decode update
void test_update() {
  for (int64_t K : {2, 3, 4, 5, 8})
    for (int xd : {GDN_F32, GDN_BF16})
      for (int sd : {GDN_F32, GDN_BF16}) {
        const int64_t B = 6, C = 133, slots = 9;
        Rng rng(100 + K * 4 + xd * 2 + sd);
        Stored x = make_values(xd, (size_t)(B * C), rng, -3, 3), w = make_values(xd, (size_t)(C * K), rng, -1, 1),
               bias = make_values(xd, (size_t)C, rng, -0.5f, 0.5f);
        Stored st = make_values(sd, (size_t)(slots * C * (K - 1)), rng, -3, 3);
        std::vector<int32_t> idx = {4, -1, 0, 8, 2, -7};
        Buf bx = make_buf(x.raw), bw = make_buf(w.raw), bb = make_buf(bias.raw), bidx = make_buf(idx);
        Buf bst(st.raw.size()), bout((uint64_t)(B * C * 4));
        std::vector<std::vector<uint32_t>> outs, states;
        for (int arm = 0; arm < gdn_arm_count(GDN_OP_CONV_UPDATE); ++arm) {
          bst.upload(st.raw.data(), st.raw.size());
          REQUIRE_OK(gdn_buffer_fill_u32(g_b, bout.addr, 0x7fc0dead, bout.bytes));
          gdn_conv_update_args a;
          std::memset(&a, 0, sizeof a);
          a.B = B;
          a.C = C;
          a.K = K;
          a.x_dtype = xd;
          a.out_dtype = GDN_F32;
          a.state_dtype = sd;
          a.arm = arm;
          a.num_slots = slots;
          a.x = bx.addr;
          a.weight = bw.addr;
          a.bias = bb.addr;
          a.state = bst.addr;
          a.state_indices = bidx.addr;
          a.out = bout.addr;
          REQUIRE_OK(gdn_conv_update(g_b, &a));
          outs.push_back(bout.download<uint32_t>((uint64_t)(B * C)));
          states.push_back(bst.download<uint32_t>(st.raw.size() / 4));
        }
        check(count_diff(outs[0], outs[1]) == 0 && count_diff(states[0], states[1]) == 0,
              "update K=%d x=%d state=%d: reference and reg differ", (int)K, xd, sd);
        // skipped rows untouched (poison kept); untouched slots unchanged
        int64_t touched = 0;
        for (int64_t c = 0; c < C; ++c) touched += (outs[0][(size_t)(1 * C + c)] != 0x7fc0deadu) + (outs[0][(size_t)(5 * C + c)] != 0x7fc0deadu);
        check(touched == 0, "update: rows with negative slots were written");
        if (sd == GDN_F32) {
          // cross-check: the update equals a one-token prefill with initial state (same arithmetic)
          std::vector<float> sf(st.f.size());
          for (size_t i = 0; i < sf.size(); ++i) sf[i] = st.f[i];
          auto s1 = states[0];
          for (int64_t b = 0; b < B; ++b) {
            if (idx[(size_t)b] < 0) continue;
            for (int64_t c = 0; c < C; ++c) {
              const int64_t slot = idx[(size_t)b];
              float acc = bias.f[(size_t)c];
              for (int64_t j = 0; j < K - 1; ++j)
                acc = std::fmaf(w.f[(size_t)(c * K + j)], sf[(size_t)((slot * C + c) * (K - 1) + j)], acc);
              acc = std::fmaf(w.f[(size_t)(c * K + K - 1)], x.f[(size_t)(b * C + c)], acc);
              const float y = gdn::gdn_silu(acc);
              uint32_t bits;
              std::memcpy(&bits, &y, 4);
              if (outs[0][(size_t)(b * C + c)] != bits) touched++;
            }
          }
          check(touched == 0, "update K=%d: %" PRId64 " outputs differ from the plain formula", (int)K, touched);
        }
      }
  // errors: duplicate slot, slot out of range
  {
    const int64_t B = 2, C = 8, K = 4;
    std::vector<float> x((size_t)(B * C), 1.0f), w((size_t)(C * K), 0.5f), st((size_t)(4 * C * (K - 1)), 0.0f);
    std::vector<int32_t> dup = {1, 1}, far = {0, 4};
    Buf bx = make_buf(x), bw = make_buf(w), bst = make_buf(st), bdup = make_buf(dup), bfar = make_buf(far), bout((uint64_t)(B * C * 4));
    gdn_conv_update_args a;
    std::memset(&a, 0, sizeof a);
    a.B = B;
    a.C = C;
    a.K = K;
    a.num_slots = 4;
    a.x = bx.addr;
    a.weight = bw.addr;
    a.state = bst.addr;
    a.state_indices = bdup.addr;
    a.out = bout.addr;
    gdn_status s = gdn_conv_update(g_b, &a);
    check(s == GDN_ERR_INVALID_ARGUMENT && std::strstr(gdn_last_error(), "state_indices"), "update duplicate slots: %s",
          gdn_last_error());
    a.state_indices = bfar.addr;
    s = gdn_conv_update(g_b, &a);
    check(s == GDN_ERR_INVALID_ARGUMENT && std::strstr(gdn_last_error(), "num_slots"), "update slot out of range: %s",
          gdn_last_error());
  }
  std::printf("update: reference == reg for K in {2,3,4,5,8}, f32/bf16 x and state; skip rows untouched\n");
}

// ----------------------------------------------------------------- matmul
void test_matmul() {
  for (int dt : {GDN_F32, GDN_BF16}) {
    const int64_t M = 16, N = 6144, Kd = 1024;
    Rng rng(31);
    Stored a = make_values(dt, (size_t)(M * Kd), rng, -1, 1), b = make_values(dt, (size_t)(N * Kd), rng, -1, 1);
    Buf ba = make_buf(a.raw), bb = make_buf(b.raw), bo((uint64_t)(M * N * 4));
    gdn_matmul_args args;
    std::memset(&args, 0, sizeof args);
    args.M = M;
    args.N = N;
    args.Kd = Kd;
    args.in_dtype = dt;
    args.out_dtype = GDN_F32;
    args.a = ba.addr;
    args.b = bb.addr;
    args.out = bo.addr;
    const auto t0 = std::chrono::steady_clock::now();
    REQUIRE_OK(gdn_matmul_nt(g_b, &args));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    auto out = bo.download<float>((uint64_t)(M * N));
    int64_t bad = 0;
    double max_rel = 0;  // |got - exact| / sum |a_k b_k|: the scale a k-ascending f32 sum's error lives on
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; n += 37) {
        float s = 0.0f;
        double d = 0.0, mag = 0.0;
        for (int64_t k = 0; k < Kd; ++k) {
          s = std::fmaf(a.f[(size_t)(m * Kd + k)], b.f[(size_t)(n * Kd + k)], s);
          d += (double)a.f[(size_t)(m * Kd + k)] * b.f[(size_t)(n * Kd + k)];
          mag += std::fabs((double)a.f[(size_t)(m * Kd + k)] * b.f[(size_t)(n * Kd + k)]);
        }
        const float got = out[(size_t)(m * N + n)];
        bad += std::memcmp(&got, &s, 4) != 0;
        max_rel = std::max(max_rel, std::fabs(got - d) / mag);
      }
    check(bad == 0, "matmul %s: %" PRId64 " outputs differ from the k-ascending fmaf loop", dt == GDN_BF16 ? "bf16" : "f32", bad);
    check(max_rel < 1e-5, "matmul: error vs double %.3g of sum |a b|", max_rel);
    std::printf("matmul [16,1024]x[6144,1024]^T %s: %.1f ms, bit-exact vs plain loop, max rel err vs f64 %.2g\n",
                dt == GDN_BF16 ? "bf16" : "f32", ms, max_rel);
  }
}

// ----------------------------------------------------------------- the arm registry
// The built-in ids of gdn.h name the arms they always named; every arm's contract is what a launch
// of it reports; the tables refuse other ops and ids.
void test_registry() {
  struct Fixed {
    int32_t op, id;
    const char* name;
  };
  const Fixed fixed[] = {
      {GDN_OP_CONV, GDN_CONV_SCALAR, "scalar"},     {GDN_OP_CONV, GDN_CONV_TILED, "tiled"},
      {GDN_OP_CONV, GDN_CONV_REG, "reg"},           {GDN_OP_CONV, GDN_CONV_REG_K4, "reg-k4"},
      {GDN_OP_CONV, GDN_CONV_REG_K4X2, "reg-k4x2"}, {GDN_OP_CONV, GDN_CONV_VEC, "vec"},
      {GDN_OP_CONV_UPDATE, GDN_UPDATE_REFERENCE, "reference"}, {GDN_OP_CONV_UPDATE, GDN_UPDATE_REG, "reg"},
      {GDN_OP_POSTCONV, GDN_POSTCONV_TREE, "tree"}, {GDN_OP_POSTCONV, GDN_POSTCONV_TOKEN_TILE, "token-tile"},
      {GDN_OP_POSTCONV, GDN_POSTCONV_SEQ4, "seq4"},       {GDN_OP_POSTCONV, GDN_POSTCONV_VEC_TILE, "vec-tile"},
  };
  for (const Fixed& f : fixed) {
    const gdn_arm_info i = arm_info(f.op, f.id);
    check(std::strcmp(i.name, f.name) == 0 && i.id == f.id && i.op == f.op, "registry: op %d id %d is %s, expected %s",
          (int)f.op, (int)f.id, i.name, f.name);
  }
  int references = 0;
  for (int32_t op : {GDN_OP_CONV, GDN_OP_CONV_UPDATE, GDN_OP_POSTCONV}) {
    const int32_t n = gdn_arm_count(op);
    check(n >= 2, "registry: op %d has %d arms", (int)op, (int)n);
    for (int32_t id = 0; id < n; ++id) {
      const gdn_arm_info i = arm_info(op, id);
      references += (i.flags & GDN_ARM_REFERENCE) != 0;
      check(i.description[0] != '\0' && i.threads_per_block >= 32, "registry: %s has a description and threads", i.name);
      if (i.fallback >= 0) {
        check(i.fallback_rule[0] != '\0' && (arm_info(op, i.fallback).flags & GDN_ARM_FALLBACK_TARGET),
              "registry: %s falls back with a rule (\"%s\") to a flagged target", i.name, i.fallback_rule);
      }
    }
    gdn_arm_info out;
    check(gdn_arm_info_get(op, n, &out) == GDN_ERR_INVALID_ARGUMENT && std::strstr(gdn_last_error(), "id:"),
          "registry: id past the table refused: %s", gdn_last_error());
  }
  check(references == 3, "registry: one reference arm per family, found %d", references);
  check(gdn_arm_count(GDN_OP_COPY) == -1 && std::strstr(gdn_last_error(), "op:"), "registry: copy has no arms");
  // Every conv arm's declared contract is what its launch reports (C = 8192, K = 4: no fallback).
  const int32_t q1[] = {0, 4096};
  for (int32_t id = 0; id < conv_arm_count(); ++id) {
    const gdn_arm_info i = arm_info(GDN_OP_CONV, id);
    gdn_launch_contract ct;
    REQUIRE_OK(gdn_conv_launch_contract(id, GDN_MAP_EXACT, 8192, 4, q1, 1, &ct, nullptr, 0));
    const bool exact = (i.mappings & (1 << GDN_MAP_EXACT)) != 0;
    check(ct.arm_ran == id && ct.threads_per_block == i.threads_per_block && ct.channels_per_block == i.per_block &&
              ct.shared_bytes == i.shared_bytes_base + 4 * i.shared_bytes_per_k &&
              ct.tokens_per_program == (exact ? i.tokens_per_program : 0),
          "registry: %s's launch contract matches its registry entry", i.name);
  }
  check(std::strcmp(gdn_conv_mutant_name(GDN_CONV_MUTANT_TAPS_REVERSED), "taps-reversed") == 0 &&
            gdn_conv_mutant_name(GDN_CONV_MUTANT_COUNT) == nullptr,
        "mutant names");
  std::printf("registry: %d conv, %d update, %d post-conv arms; contracts match their entries\n", conv_arm_count(),
              gdn_arm_count(GDN_OP_CONV_UPDATE), gdn_arm_count(GDN_OP_POSTCONV));
}

// ----------------------------------------------------------------- contracts
void test_contracts() {
  gdn_launch_contract ct;
  const int32_t q1[] = {0, 4096};
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_REG, GDN_MAP_EXACT, 8192, 4, q1, 1, &ct, nullptr, 0));
  check(ct.threads_per_block == 128 && ct.channels_per_block == 128 && ct.channel_tiles == 64, "reg C=8192 contract");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_REG_K4, GDN_MAP_EXACT, 8192, 4, q1, 1, &ct, nullptr, 0));
  check(ct.channel_tiles == 64 && ct.arm_ran == GDN_CONV_REG_K4, "reg-k4 C=8192 contract");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_REG_K4X2, GDN_MAP_EXACT, 8192, 4, q1, 1, &ct, nullptr, 0));
  check(ct.threads_per_block == 128 && ct.channels_per_block == 256 && ct.channel_tiles == 32, "reg-k4x2 C=8192 contract");
  int tiles[3];
  for (int i = 0; i < 3; ++i) {
    REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_REG + i, GDN_MAP_EXACT, 129, 4, q1, 1, &ct, nullptr, 0));
    tiles[i] = ct.channel_tiles;
  }
  check(tiles[0] == 2 && tiles[1] == 2 && tiles[2] == 1, "C=129 tiles %d/%d/%d", tiles[0], tiles[1], tiles[2]);
  const int32_t q3[] = {0, 5, 6, 15};
  int32_t progs[16];
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_REG, GDN_MAP_EXACT, 129, 4, q3, 3, &ct, progs, 8));
  check(ct.programs == 4 && progs[0] == 0 && progs[1] == 0 && progs[2] == 1 && progs[3] == 0 && progs[4] == 2 &&
            progs[5] == 0 && progs[6] == 2 && progs[7] == 1,
        "lengths 5,1,9 -> (0,0),(1,0),(2,0),(2,1)");
  check(ct.grid_x == 2 && ct.grid_y == 4 && ct.tokens_per_program == 8, "exact grid (tiles, programs)");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_REG, GDN_MAP_SEQUENCE, 129, 4, q3, 3, &ct, nullptr, 0));
  check(ct.grid_x == 2 && ct.grid_y == 3 && ct.programs == 3 && ct.tokens_per_program == 0, "sequence grid");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_REG_K4, GDN_MAP_EXACT, 129, 3, q3, 3, &ct, nullptr, 0));
  check(ct.arm_ran == GDN_CONV_REG, "reg-k4 with K=3 falls back to reg");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_SCALAR, GDN_MAP_EXACT, 129, 4, q3, 3, &ct, nullptr, 0));
  check(ct.mapping_ran == GDN_MAP_SEQUENCE, "scalar reports sequence mapping");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_TILED, GDN_MAP_EXACT, 129, 4, q3, 3, &ct, nullptr, 0));
  check(ct.mapping_ran == GDN_MAP_SEQUENCE && ct.channels_per_block == 32 && ct.shared_bytes == 19 * 32 * 4,
        "tiled contract");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_VEC, GDN_MAP_EXACT, 8192, 4, q1, 1, &ct, nullptr, 0));
  check(ct.arm_ran == GDN_CONV_VEC && ct.tokens_per_program == 64 && ct.programs == 64 && ct.channel_tiles == 8,
        "vec contract");
  REQUIRE_OK(gdn_conv_launch_contract(GDN_CONV_VEC, GDN_MAP_EXACT, 129, 4, q1, 1, &ct, nullptr, 0));
  check(ct.arm_ran == GDN_CONV_REG, "vec with C=129 falls back to reg");
  const int32_t bad[] = {0, 5, 3};
  check(gdn_conv_launch_contract(GDN_CONV_REG, GDN_MAP_EXACT, 129, 4, bad, 2, &ct, nullptr, 0) == GDN_ERR_INVALID_ARGUMENT &&
            std::strstr(gdn_last_error(), "non-decreasing"),
        "contract with decreasing qsl: %s", gdn_last_error());
  std::printf("contracts: reg/reg-k4/reg-k4x2 tiles 64/64/32 at C=8192, 2/2/1 at C=129; programs of 5,1,9 ok\n");
}

// ----------------------------------------------------------------- errors
void expect_error(gdn_status got, gdn_status want, const char* needle, const char* what) {
  const std::string msg = gdn_last_error();
  check(got == want && msg.find(needle) != std::string::npos, "%s: got %s \"%s\", want %s containing \"%s\"", what,
        gdn_status_name(got), msg.c_str(), gdn_status_name(want), needle);
}

void test_errors() {
  ConvCase c;
  c.C = 40;
  c.K = 4;
  c.his_mode = 1;
  c.lengths = {10, 30};
  ConvProblem pb(c);
  gdn_launch_contract ct;
  {
    std::vector<int32_t> q = {0, 10, 39};
    pb.bqsl.upload(q.data(), 12);
    gdn_conv_args a = pb.args(GDN_CONV_REG, GDN_MAP_EXACT);
    expect_error(gdn_conv_forward(g_b, &a, &ct), GDN_ERR_INVALID_ARGUMENT, "args.query_start_loc: must end at T = 40, got 39",
                 "qsl end");
    q = {1, 10, 40};
    pb.bqsl.upload(q.data(), 12);
    expect_error(gdn_conv_forward(g_b, &a, &ct), GDN_ERR_INVALID_ARGUMENT, "must start at 0", "qsl start");
    q = {0, 30, 20};
    pb.bqsl.upload(q.data(), 12);
    expect_error(gdn_conv_forward(g_b, &a, &ct), GDN_ERR_INVALID_ARGUMENT, "non-decreasing", "qsl order");
    pb.bqsl.upload(pb.qsl.data(), 12);
  }
  gdn_conv_args a = pb.args(GDN_CONV_REG, GDN_MAP_EXACT);
  gdn_conv_args b = a;
  b.K = 9;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.K", "K=9");
  b = a;
  b.C = 0;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.C", "C=0");
  b = a;
  b.x_row_stride = 39;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.x_row_stride", "stride<C");
  b = a;
  b.x_dtype = GDN_F16;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.x_dtype", "f16 x");
  b = a;
  b.his_dtype = GDN_F32;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.his_dtype", "his dtype");
  b = a;
  b.arm = conv_arm_count();  // one past the last registered arm
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.arm", "arm=6");
  b = a;
  b.mapping = -1;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.mapping", "mapping=-1");
  b = a;
  b.mutant = 5;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.mutant", "mutant=5");
  b = a;
  b.num_seqs = 0;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.num_seqs", "num_seqs=0");
  b = a;
  b.x += 4;  // one element past: the last row runs off the buffer
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_BUFFER, "args.x", "x shifted");
  b = a;
  b.out = b.conv_state;
  expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_BUFFER, "args.out", "out too short");
  if (!g_cuda) {
    b = a;
    b.widen_cycles = 100;
    expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_UNSUPPORTED, "widen", "widen on host");
    b = a;
    b.schedule.kind = GDN_SCHED_EXPLICIT;
    int32_t order[3] = {0, 1, 1};
    b.schedule.order = order;
    b.schedule.order_len = 3;
    expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_ARGUMENT, "args.schedule.order_len", "explicit length");
  } else {
    b = a;
    b.schedule.kind = GDN_SCHED_REVERSE;
    expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_UNSUPPORTED, "FORWARD", "reverse on CUDA");
  }
  // freed buffer
  {
    gdn_addr tmp = 0;
    REQUIRE_OK(gdn_buffer_alloc(g_b, 40 * 40 * 4, &tmp));
    REQUIRE_OK(gdn_buffer_free(g_b, tmp));
    b = a;
    b.x = tmp;
    expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_BUFFER, "args.x: 0x", "freed x");
    expect_error(gdn_buffer_free(g_b, tmp), GDN_ERR_INVALID_BUFFER, "not the start of a live buffer", "double free");
    b = a;
    b.x = 0x1000;
    expect_error(gdn_conv_forward(g_b, &b, &ct), GDN_ERR_INVALID_BUFFER, "is not inside a live buffer", "foreign x");
  }
  // the backend's error channel saw the last failure too
  char buf[512];
  REQUIRE_OK(gdn_backend_last_error(g_b, buf, sizeof buf));
  check(std::strstr(buf, "args.x") != nullptr, "backend last error: %s", buf);
  // an empty sequence keeps its state; T = 0 works
  {
    ConvCase e;
    e.C = 20;
    e.K = 3;
    e.his_mode = 1;
    e.lengths = {0, 0};
    ConvProblem pe(e);
    auto r = pe.run(pe.args(GDN_CONV_REG, GDN_MAP_EXACT));
    check(r.status == GDN_OK, "T=0 run: %s", gdn_last_error());
    std::vector<uint32_t> s0(pe.state0.size());
    std::memcpy(s0.data(), pe.state0.data(), s0.size() * 4);
    check(count_diff(r.state, s0) == 0, "empty sequences must leave the state untouched");
  }
  // opening CUDA
  {
    gdn_backend* cb = nullptr;
    int32_t n = -1;
    REQUIRE_OK(gdn_cuda_device_count(&n));
    const gdn_status s = gdn_backend_open(GDN_BACKEND_CUDA, 0, &cb);
    if (n == 0) {
      check(s == GDN_ERR_NO_DEVICE || s == GDN_ERR_UNSUPPORTED, "CUDA open without a device: %s %s", gdn_status_name(s),
            gdn_last_error());
      std::printf("cuda: %d devices; open -> %s: %s\n", (int)n, gdn_status_name(s), gdn_last_error());
    } else if (s == GDN_OK) {
      gdn_backend_close(cb);
    }
  }
  std::printf("errors: qsl, sizes, dtypes, enums, ranges, freed/foreign buffers, schedules named correctly\n");
}

// ----------------------------------------------------------------- timing at C = 8192, T = 2048
void test_timing() {
  ConvCase c;
  c.C = 8192;
  c.K = 4;
  c.x_dtype = GDN_BF16;
  c.out_dtype = GDN_BF16;
  c.his_mode = 1;
  c.lengths = {2048};
  ConvProblem pb(c);
  const int n_arms = conv_arm_count();
  std::vector<gdn_op> ops((size_t)n_arms + 1);
  std::memset(ops.data(), 0, ops.size() * sizeof(gdn_op));
  for (int arm = 0; arm < n_arms; ++arm) {
    ops[(size_t)arm].kind = GDN_OP_CONV;
    ops[(size_t)arm].conv = pb.args(arm, GDN_MAP_EXACT);
  }
  ops[(size_t)n_arms].kind = GDN_OP_COPY;
  ops[(size_t)n_arms].copy.dst = pb.bout.addr;
  ops[(size_t)n_arms].copy.src = pb.bx.addr;
  ops[(size_t)n_arms].copy.bytes = pb.bout.bytes;
  gdn_timing_config cfg = {g_cuda ? 10 : 2, 1, 1, 0};
  std::vector<float> us((size_t)cfg.rounds * (n_arms + 1));
  REQUIRE_OK(gdn_time_ops(g_b, ops.data(), n_arms + 1, &cfg, us.data()));
  const double bytes = 2.0 * 2048 * 8192 * 2;  // read x, write out (bf16)
  std::printf("timing (%s) C=8192 T=2048 K=4 bf16, best of %d rounds:\n", g_cuda ? "cuda" : "host", cfg.rounds);
  for (int i = 0; i <= n_arms; ++i) {
    float best = 1e30f;
    for (int r = 0; r < cfg.rounds; ++r) best = std::min(best, us[(size_t)r * (n_arms + 1) + i]);
    std::printf("  %-9s %10.1f us  %7.1f GB/s\n", i < n_arms ? arm_name(i) : "copy", best, bytes / best * 1e-3);
  }
}

// ----------------------------------------------------------------- host vs CUDA (--cross)
// The same problems on both backends must give the same bits (docs/SPEC.md §9).
ConvProblem::Result run_on(gdn_backend* be, const ConvCase& c, int arm, int map, int widen = 0) {
  gdn_backend* saved = g_b;
  g_b = be;
  ConvProblem::Result r;
  {
    ConvProblem pb(c);
    gdn_conv_args a = pb.args(arm, map);
    a.widen_cycles = widen;
    r = pb.run(a);
  }
  g_b = saved;
  return r;
}

void test_cross(gdn_backend* host, gdn_backend* cuda) {
  std::vector<ConvCase> cases;
  auto add = [&](int64_t C, int64_t stride, int64_t K, int xd, int od, int his, std::vector<int32_t> l) {
    ConvCase c;
    c.C = C;
    c.stride = stride;
    c.K = K;
    c.x_dtype = xd;
    c.out_dtype = od;
    c.his_mode = his;
    c.lengths = l;
    c.seed = 500 + cases.size();
    cases.push_back(c);
  };
  add(129, 0, 4, GDN_F32, GDN_F32, 1, {0, 1, 2, 8, 9, 33, 200});
  add(385, 400, 3, GDN_BF16, GDN_F32, 2, {9, 1, 33, 2, 0, 70});
  add(1032, 0, 4, GDN_BF16, GDN_BF16, 1, {200, 65, 64, 1, 0, 3});
  add(2048, 0, 8, GDN_F32, GDN_BF16, 1, {130, 7, 1});
  add(6144, 0, 4, GDN_BF16, GDN_BF16, 1, {517, 64, 1, 300});
  add(136, 0, 4, GDN_F32, GDN_F32, 1, {70, 9, 33});
  cases.back().specials = true;
  add(1024, 0, 4, GDN_BF16, GDN_F32, 1, {300, 9, 1});
  cases.back().specials = true;
  int64_t cases_run = 0;
  for (const ConvCase& c : cases) {
    auto ref = run_on(host, c, GDN_CONV_SCALAR, GDN_MAP_EXACT);
    for (int arm = 0; arm < conv_arm_count(); ++arm)
      for (int map = 0; map < GDN_MAP_COUNT; ++map) {
        auto r = run_on(cuda, c, arm, map);
        check(r.status == GDN_OK, "cross %s %s: %s", arm_name(arm), map_names[map], gdn_last_error());
        const int64_t dout = count_diff(r.out, ref.out), dst = count_diff(r.state, ref.state);
        if (map == GDN_MAP_EXACT_RACY) {  // the #305 shape may lose its race on a GPU: report, don't require
          if (dout || dst)
            std::printf("cross: exact-racy %s lost the race on the GPU: %" PRId64 " outputs, %" PRId64 " state values (%s)\n",
                        arm_name(arm), dout, dst, describe(c).c_str());
          ++cases_run;
          continue;
        }
        check(dout == 0 && dst == 0, "cross %s arm=%s (ran %s) map=%s: cuda vs host scalar %" PRId64 " out, %" PRId64 " state mismatches",
              describe(c).c_str(), arm_name(arm), arm_name(r.ct.arm_ran), map_names[map], dout, dst);
        ++cases_run;
      }
    for (int m = 1; m < GDN_CONV_MUTANT_COUNT; ++m) {
      // mutants too: the same planted bug gives the same bits on both backends in forward order
      gdn_backend* saved = g_b;
      ConvProblem::Result rh, rc;
      for (int side = 0; side < 2; ++side) {
        g_b = side ? cuda : host;
        ConvProblem pb(c);
        gdn_conv_args a = pb.args(GDN_CONV_REG, GDN_MAP_SEQUENCE);
        a.mutant = m == GDN_CONV_MUTANT_CHUNK_OFF_BY_ONE ? GDN_CONV_MUTANT_TAPS_REVERSED : m;
        (side ? rc : rh) = pb.run(a);
      }
      g_b = saved;
      if (m != GDN_CONV_MUTANT_NO_TAIL_GUARD)  // spills race with the owners of the next row on a GPU
        check(count_diff(rc.out, rh.out) == 0 && count_diff(rc.state, rh.state) == 0, "cross mutant %d differs", m);
    }
  }
  // the race on the GPU: widen makes exact-racy lose; exact never does
  {
    ConvCase c;
    c.C = 1024;
    c.K = 4;
    c.x_dtype = GDN_BF16;
    c.out_dtype = GDN_F32;
    c.his_mode = 1;
    c.lengths = {4000, 4000, 4000, 4000};
    auto ref = run_on(host, c, GDN_CONV_SCALAR, GDN_MAP_EXACT);
    for (int arm = 0; arm < conv_arm_count(); ++arm)
      for (int widen : {0, 200000}) {
        if (!arm_has_exact(arm)) continue;
        auto racy = run_on(cuda, c, arm, GDN_MAP_EXACT_RACY, widen);
        auto exact = run_on(cuda, c, arm, GDN_MAP_EXACT, widen);
        check(count_diff(exact.out, ref.out) == 0 && count_diff(exact.state, ref.state) == 0,
              "cuda exact mapping with widen %d must be right (%s)", widen, arm_name(arm));
        std::printf("cuda race %-8s widen %6d: exact-racy %6" PRId64 " wrong outputs, exact %" PRId64 "\n", arm_name(arm), widen,
                    count_diff(racy.out, ref.out), count_diff(exact.out, ref.out));
      }
  }
  // decode update and matmul
  for (int64_t K : {3, 4}) {
    const int64_t B = 5, C = 1000, slots = 7;
    Rng rng(77 + K);
    Stored x = make_values(GDN_BF16, (size_t)(B * C), rng, -3, 3), w = make_values(GDN_BF16, (size_t)(C * K), rng, -1, 1);
    Stored st = make_values(GDN_F32, (size_t)(slots * C * (K - 1)), rng, -3, 3);
    std::vector<int32_t> idx = {6, 0, -1, 3, 2};
    std::vector<uint32_t> outs[2], states[2];
    for (int side = 0; side < 2; ++side) {
      gdn_backend* saved = g_b;
      g_b = side ? cuda : host;
      {
        Buf bx = make_buf(x.raw), bw = make_buf(w.raw), bst = make_buf(st.raw), bidx = make_buf(idx), bout((uint64_t)(B * C * 4));
        REQUIRE_OK(gdn_buffer_fill_u32(g_b, bout.addr, 0x7fc0dead, bout.bytes));
        gdn_conv_update_args a;
        std::memset(&a, 0, sizeof a);
        a.B = B;
        a.C = C;
        a.K = K;
        a.x_dtype = GDN_BF16;
        a.out_dtype = GDN_F32;
        a.state_dtype = GDN_F32;
        a.arm = side;  // reference on the host, reg on the GPU
        a.num_slots = slots;
        a.x = bx.addr;
        a.weight = bw.addr;
        a.state = bst.addr;
        a.state_indices = bidx.addr;
        a.out = bout.addr;
        REQUIRE_OK(gdn_conv_update(g_b, &a));
        outs[side] = bout.download<uint32_t>((uint64_t)(B * C));
        states[side] = bst.download<uint32_t>(st.raw.size() / 4);
      }
      g_b = saved;
    }
    check(count_diff(outs[0], outs[1]) == 0 && count_diff(states[0], states[1]) == 0, "cross update K=%d differs", (int)K);
  }
  {
    const int64_t M = 37, N = 300, Kd = 1030;
    Rng rng(3);
    Stored a = make_values(GDN_BF16, (size_t)(M * Kd), rng, -1, 1), b = make_values(GDN_BF16, (size_t)(N * Kd), rng, -1, 1);
    std::vector<uint32_t> outs[2];
    for (int side = 0; side < 2; ++side) {
      gdn_backend* saved = g_b;
      g_b = side ? cuda : host;
      {
        Buf ba = make_buf(a.raw), bb = make_buf(b.raw), bo((uint64_t)(M * N * 4));
        gdn_matmul_args args;
        std::memset(&args, 0, sizeof args);
        args.M = M;
        args.N = N;
        args.Kd = Kd;
        args.in_dtype = GDN_BF16;
        args.out_dtype = GDN_F32;
        args.a = ba.addr;
        args.b = bb.addr;
        args.out = bo.addr;
        REQUIRE_OK(gdn_matmul_nt(g_b, &args));
        outs[side] = bo.download<uint32_t>((uint64_t)(M * N));
      }
      g_b = saved;
    }
    check(count_diff(outs[0], outs[1]) == 0, "cross matmul differs: %" PRId64, count_diff(outs[0], outs[1]));
  }
  std::printf("cross: %" PRId64 " conv runs, update and matmul compared host vs cuda\n", cases_run);
}

}  // namespace

int main(int argc, char** argv) {
  bool want_cuda = false, skip_timing = false, cross = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--cuda") == 0) want_cuda = true;
    if (std::strcmp(argv[i], "--cross") == 0) cross = true;
    if (std::strcmp(argv[i], "--no-timing") == 0) skip_timing = true;
  }
  std::printf("libgdn abi %d, build: %s\n", gdn_abi_version(), gdn_build_info());
  if (cross) {
    gdn_backend *host = nullptr, *cuda = nullptr;
    REQUIRE_OK(gdn_backend_open(GDN_BACKEND_HOST, 0, &host));
    REQUIRE_OK(gdn_backend_open(GDN_BACKEND_CUDA, 0, &cuda));
    g_b = host;
    test_cross(host, cuda);
    REQUIRE_OK(gdn_backend_close(cuda));
    REQUIRE_OK(gdn_backend_close(host));
    std::printf("%d checks, %d failures\n", g_checks, g_failures);
    return g_failures == 0 ? 0 : 1;
  }
  REQUIRE_OK(gdn_backend_open(want_cuda ? GDN_BACKEND_CUDA : GDN_BACKEND_HOST, 0, &g_b));
  g_cuda = want_cuda;
  gdn_device_info info;
  REQUIRE_OK(gdn_device_info_get(g_b, &info));
  std::printf("device: %s, %d units, L2/LLC %d bytes, clocks source %d, driver %s\n", info.name, info.sm_count,
              info.l2_bytes, info.clocks_source, info.driver_string);

  test_registry();
  test_contracts();
  test_equivalence();
  if (!g_cuda) test_race();  // block orders are a host-backend feature; --cross shows the race on a GPU
  test_mutants();
  test_update();
  test_matmul();
  test_errors();
  if (!skip_timing) test_timing();

  int64_t live = 0;
  uint64_t live_bytes = 0;
  REQUIRE_OK(gdn_buffer_stats(g_b, &live, &live_bytes));
  check(live == 0, "leak: %" PRId64 " buffers (%" PRIu64 " bytes) still alive", live, live_bytes);
  REQUIRE_OK(gdn_backend_close(g_b));
  std::printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
