// postconv_smoke.cpp — native checks of the post-conv op through the public API (gdn.h).
//
//   postconv_smoke            host backend; also the CUDA backend (host == CUDA, bit for bit) when a
//                             GPU is usable
//
// Checks, each counting failures (exit status 1 when any):
//   1. token-tile == tree, bit for bit, on all five outputs: qkv dtype x conv dtype x gate dtype,
//      T in {0, 1, 15, 16, 17, 128}, (Hk, Hv) in {(4, 8), (16, 32)}, a and b packed in one
//      [T, 2*Hv + 5] buffer (b first, then a); tree against a float64 reference; nothing written
//      outside the outputs.
//   2. the planted mutant seq4 differs from tree on f32 q/k rows and on (almost) no bf16 rows. On
//      normal data its f32 sum of squares differs on ~18% of rows; 1/sqrt absorbs about half of
//      those, so ~9% of stored f32 rows differ, and ~0.05% once rounded to bf16.
//   3. Dk or Dv != 128: token-tile and seq4 fall back to tree (Dk = 64, 300; Dv = 64).
//   4. every argument of gdn_postconv_args is validated, with a message naming it.
//   5. with a GPU: each case above on both backends, bit for bit.
#include "gdn.h"

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "splitmix.h"

namespace {

int g_failures = 0;

void check(bool ok, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void check(bool ok, const char* fmt, ...) {
  if (ok) return;
  ++g_failures;
  std::va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "FAIL: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
}

// ----------------------------------------------------------------- numbers
uint32_t f32_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
float f32_from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
float bf16_to_f32(uint16_t h) { return f32_from_bits((uint32_t)h << 16); }
uint16_t f32_to_bf16(float f) {  // nearest even (inputs here are finite)
  const uint32_t u = f32_bits(f);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}


// A tensor stored in dtype (F32 or BF16) with its exact values as doubles.
struct Tensor {
  int32_t dtype = GDN_F32;
  std::vector<uint8_t> bytes;
  std::vector<double> value;
  int es() const { return dtype == GDN_BF16 ? 2 : 4; }
  size_t size() const { return value.size(); }
  void init(int32_t dt, size_t n) {
    dtype = dt;
    bytes.assign(n * es(), 0);
    value.assign(n, 0.0);
  }
  void set(size_t i, double x) {
    if (dtype == GDN_BF16) {
      const uint16_t h = f32_to_bf16((float)x);
      std::memcpy(&bytes[2 * i], &h, 2);
      value[i] = bf16_to_f32(h);
    } else {
      const float f = (float)x;
      std::memcpy(&bytes[4 * i], &f, 4);
      value[i] = f;
    }
  }
};

double decode(const std::vector<uint8_t>& raw, int32_t dtype, size_t i) {
  if (dtype == GDN_BF16) {
    uint16_t h;
    std::memcpy(&h, &raw[2 * i], 2);
    return bf16_to_f32(h);
  }
  float f;
  std::memcpy(&f, &raw[4 * i], 4);
  return f;
}

const char* dn(int32_t dtype) { return dtype == GDN_BF16 ? "bf16" : "f32"; }
// The arms come from libgdn's registry: every arm that is neither the reference nor a planted mutant
// must equal the reference bit for bit; every planted mutant must be caught in f32.
gdn_arm_info arm_info(int32_t arm) {
  gdn_arm_info info;
  std::memset(&info, 0, sizeof info);
  if (gdn_arm_info_get(GDN_OP_POSTCONV, arm, &info) != GDN_OK) std::snprintf(info.name, sizeof info.name, "?%d", (int)arm);
  return info;
}
const char* arm_name(int32_t arm) {
  static std::vector<std::string> names;
  while ((int32_t)names.size() < gdn_arm_count(GDN_OP_POSTCONV)) names.push_back(arm_info((int32_t)names.size()).name);
  return arm >= 0 && arm < (int32_t)names.size() ? names[(size_t)arm].c_str() : "?";
}
std::vector<int32_t> arms_where(bool (*keep)(const gdn_arm_info&)) {
  std::vector<int32_t> out;
  for (int32_t id = 0; id < gdn_arm_count(GDN_OP_POSTCONV); ++id)
    if (keep(arm_info(id))) out.push_back(id);
  return out;
}
bool is_candidate(const gdn_arm_info& i) { return !(i.flags & (GDN_ARM_REFERENCE | GDN_ARM_MUTANT)); }
bool is_mutant(const gdn_arm_info& i) { return (i.flags & GDN_ARM_MUTANT) != 0; }
bool needs_d128(const gdn_arm_info& i) { return (i.data_requires & GDN_ARM_REQ_D128) != 0; }

// ----------------------------------------------------------------- a case and its inputs
struct Shape {
  int64_t T, Hk, Hv, Dk, Dv;
  int32_t conv_dtype, gate_dtype, qkv_dtype;
  int64_t offset = 0;  // elements by which conv_out, q, k and v start past their buffers' (aligned) bases
  int64_t C() const { return 2 * Hk * Dk + Hv * Dv; }
  int64_t ab_stride() const { return 2 * Hv + 5; }
};

std::string describe(const Shape& s) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "T=%" PRId64 " Hk=%" PRId64 " Hv=%" PRId64 " Dk=%" PRId64 " Dv=%" PRId64
                " conv=%s gate=%s qkv=%s offset=%" PRId64, s.T, s.Hk, s.Hv, s.Dk, s.Dv, dn(s.conv_dtype),
                dn(s.gate_dtype), dn(s.qkv_dtype), s.offset);
  return buf;
}

struct Inputs {
  Tensor conv;    // [T, C]
  Tensor ab;      // [T, 2*Hv + 5]: b at column 0, a at column Hv
  Tensor A_log;   // [Hv] f32
  Tensor dt_bias; // [Hv] f32
};

Inputs make_inputs(const Shape& s, uint64_t seed) {
  Rng rng(seed);
  Inputs in;
  const int64_t C = s.C();
  in.conv.init(s.conv_dtype, (size_t)(s.T * C));
  for (size_t i = 0; i < in.conv.size(); ++i) in.conv.set(i, rng.normal());
  in.ab.init(s.gate_dtype, (size_t)(s.T * s.ab_stride()));
  for (int64_t t = 0; t < s.T; ++t)
    for (int64_t c = 0; c < s.ab_stride(); ++c) {
      const bool is_a = c >= s.Hv && c < 2 * s.Hv;
      // a spreads wide enough to reach softplus's x > 20 branch and its deep negative tail
      in.ab.set((size_t)(t * s.ab_stride() + c), is_a ? 9.0 * rng.normal() : 3.0 * rng.normal());
    }
  in.A_log.init(GDN_F32, (size_t)s.Hv);
  in.dt_bias.init(GDN_F32, (size_t)s.Hv);
  for (int64_t h = 0; h < s.Hv; ++h) {
    in.A_log.set((size_t)h, std::log(1.0 + 15.0 * rng.uniform()));
    in.dt_bias.set((size_t)h, 2.0 * rng.normal());
  }
  return in;
}

// The five outputs, raw bytes as the backend wrote them.
struct Outputs {
  std::vector<uint8_t> q, k, v, g, beta;
  gdn_postconv_result result{};
};

// ----------------------------------------------------------------- a backend and its buffers
constexpr uint32_t kPoison = 0x7fbadbadu;  // a NaN: an element left unwritten cannot pass the reference check
constexpr uint64_t kGuard = 256;           // poisoned bytes after each output that must stay poisoned

struct Device {
  gdn_backend* b = nullptr;
  std::vector<gdn_addr> live;
  const char* name = "";

  bool open(int32_t kind) {
    name = kind == GDN_BACKEND_CUDA ? "cuda" : "host";
    const gdn_status st = gdn_backend_open(kind, 0, &b);
    if (st != GDN_OK) {
      std::fprintf(stderr, "gdn_backend_open(%s): %s: %s\n", name, gdn_status_name(st), gdn_last_error());
      return false;
    }
    return true;
  }
  void close() {
    release();
    gdn_backend_close(b);
    b = nullptr;
  }
  gdn_addr alloc(uint64_t bytes) {
    gdn_addr a = 0;
    const gdn_status st = gdn_buffer_alloc(b, bytes == 0 ? 4 : bytes, &a);
    check(st == GDN_OK, "%s: gdn_buffer_alloc(%" PRIu64 "): %s", name, bytes, gdn_last_error());
    live.push_back(a);
    return a;
  }
  // The bytes at base + skip of a new buffer; returns that address.
  gdn_addr upload(const std::vector<uint8_t>& bytes, uint64_t skip = 0) {
    const gdn_addr a = alloc(bytes.size() + skip) + skip;
    if (!bytes.empty())
      check(gdn_buffer_upload(b, a, bytes.data(), bytes.size()) == GDN_OK, "%s: upload: %s", name, gdn_last_error());
    return a;
  }
  gdn_addr poisoned(uint64_t bytes, uint64_t skip = 0) {
    std::vector<uint8_t> p(bytes + kGuard);
    for (size_t i = 0; i + 4 <= p.size(); i += 4) std::memcpy(&p[i], &kPoison, 4);
    return upload(p, skip);
  }
  std::vector<uint8_t> download(gdn_addr a, uint64_t bytes) {
    std::vector<uint8_t> out(bytes);
    if (bytes)
      check(gdn_buffer_download(b, out.data(), a, bytes) == GDN_OK, "%s: download: %s", name, gdn_last_error());
    return out;
  }
  void release() {
    for (gdn_addr a : live) gdn_buffer_free(b, a);
    live.clear();
  }
};

bool guard_intact(const std::vector<uint8_t>& guard) {
  for (size_t i = 0; i + 4 <= guard.size(); i += 4)
    if (std::memcmp(&guard[i], &kPoison, 4) != 0) return false;
  return true;
}

// Runs one arm; returns false when the call failed (already reported).
bool run_arm(Device& d, const Shape& s, const Inputs& in, int32_t arm, Outputs* out) {
  const int qes = s.qkv_dtype == GDN_BF16 ? 2 : 4;
  const uint64_t qk_bytes = (uint64_t)(s.T * s.Hk * s.Dk) * qes;
  const uint64_t v_bytes = (uint64_t)(s.T * s.Hv * s.Dv) * qes;
  const uint64_t gate_bytes = (uint64_t)(s.T * s.Hv) * 4;
  gdn_postconv_args a{};
  a.T = s.T; a.Hk = s.Hk; a.Hv = s.Hv; a.Dk = s.Dk; a.Dv = s.Dv;
  a.conv_dtype = s.conv_dtype; a.gate_dtype = s.gate_dtype; a.qkv_dtype = s.qkv_dtype;
  a.arm = arm;
  a.a_row_stride = s.ab_stride();
  a.b_row_stride = s.ab_stride();
  a.conv_out = d.upload(in.conv.bytes, (uint64_t)(s.offset * in.conv.es()));
  const gdn_addr ab = d.upload(in.ab.bytes);
  a.b = ab;
  a.a = ab + (uint64_t)s.Hv * in.ab.es();
  a.A_log = d.upload(in.A_log.bytes);
  a.dt_bias = d.upload(in.dt_bias.bytes);
  a.q = d.poisoned(qk_bytes, (uint64_t)(s.offset * qes));
  a.k = d.poisoned(qk_bytes, (uint64_t)(s.offset * qes));
  a.v = d.poisoned(v_bytes, (uint64_t)(s.offset * qes));
  a.g = d.poisoned(gate_bytes);
  a.beta = d.poisoned(gate_bytes);
  const gdn_status st = gdn_postconv_forward(d.b, &a, &out->result);
  bool ok = st == GDN_OK;
  check(ok, "%s %s %s: gdn_postconv_forward: %s: %s", d.name, arm_name(arm), describe(s).c_str(), gdn_status_name(st),
        gdn_last_error());
  if (ok) {
    out->q = d.download(a.q, qk_bytes);
    out->k = d.download(a.k, qk_bytes);
    out->v = d.download(a.v, v_bytes);
    out->g = d.download(a.g, gate_bytes);
    out->beta = d.download(a.beta, gate_bytes);
    const struct { const char* name; gdn_addr at; } guards[] = {
        {"q", a.q + qk_bytes}, {"k", a.k + qk_bytes}, {"v", a.v + v_bytes}, {"g", a.g + gate_bytes},
        {"beta", a.beta + gate_bytes}};
    for (const auto& gd : guards)
      check(guard_intact(d.download(gd.at, kGuard)), "%s %s %s: bytes past the end of %s were written", d.name,
            arm_name(arm), describe(s).c_str(), gd.name);
  }
  d.release();
  return ok;
}

// Elements whose bits differ.
int64_t differing(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y, int es) {
  if (x.size() != y.size()) return -1;
  int64_t n = 0;
  for (size_t i = 0; i < x.size(); i += es) n += std::memcmp(&x[i], &y[i], es) != 0;
  return n;
}

// (token, head) rows of [T, H, D] whose bits differ anywhere.
int64_t differing_rows(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y, int64_t D, int es) {
  int64_t n = 0;
  const size_t row = (size_t)D * es;
  for (size_t i = 0; i + row <= x.size(); i += row) n += std::memcmp(&x[i], &y[i], row) != 0;
  return n;
}

// All five outputs bit for bit; returns the number of differing elements.
int64_t compare_bits(const Outputs& x, const Outputs& y, const Shape& s, const char* what) {
  const int qes = s.qkv_dtype == GDN_BF16 ? 2 : 4;
  const struct { const char* name; const std::vector<uint8_t>& a; const std::vector<uint8_t>& b; int es; } outs[] = {
      {"q", x.q, y.q, qes}, {"k", x.k, y.k, qes}, {"v", x.v, y.v, qes}, {"g", x.g, y.g, 4}, {"beta", x.beta, y.beta, 4}};
  int64_t total = 0;
  for (const auto& o : outs) {
    const int64_t n = differing(o.a, o.b, o.es);
    check(n == 0, "%s, %s: %" PRId64 " elements of %s differ", what, describe(s).c_str(), n, o.name);
    total += n < 0 ? 1 : n;
  }
  return total;
}

// ----------------------------------------------------------------- float64 reference
struct Errors {  // max |out - ref| / max(1, |ref|) per output
  double q = 0, k = 0, v = 0, g = 0, beta = 0;
  void merge(const Errors& o) {
    q = std::fmax(q, o.q); k = std::fmax(k, o.k); v = std::fmax(v, o.v); g = std::fmax(g, o.g);
    beta = std::fmax(beta, o.beta);
  }
};

double rel_err(double out, double ref) {
  if (!std::isfinite(out)) return INFINITY;  // poison (unwritten) or a broken value
  return std::fabs(out - ref) / std::fmax(1.0, std::fabs(ref));
}

Errors reference_errors(const Shape& s, const Inputs& in, const Outputs& out) {
  Errors e;
  const int64_t C = s.C();
  for (int64_t t = 0; t < s.T; ++t) {
    const double* row = &in.conv.value[(size_t)(t * C)];
    for (int which = 0; which < 2; ++which)
      for (int64_t h = 0; h < s.Hk; ++h) {
        const double* x = row + which * s.Hk * s.Dk + h * s.Dk;
        double ss = 0;
        for (int64_t i = 0; i < s.Dk; ++i) ss += x[i] * x[i];
        const double inv = 1.0 / std::sqrt(ss + 1e-6);
        const std::vector<uint8_t>& o = which == 0 ? out.q : out.k;
        double& err = which == 0 ? e.q : e.k;
        for (int64_t i = 0; i < s.Dk; ++i)
          err = std::fmax(err, rel_err(decode(o, s.qkv_dtype, (size_t)((t * s.Hk + h) * s.Dk + i)), x[i] * inv));
      }
    for (int64_t h = 0; h < s.Hv; ++h) {
      const double* x = row + 2 * s.Hk * s.Dk + h * s.Dv;
      for (int64_t i = 0; i < s.Dv; ++i)
        e.v = std::fmax(e.v, rel_err(decode(out.v, s.qkv_dtype, (size_t)((t * s.Hv + h) * s.Dv + i)), x[i]));
      const double b = in.ab.value[(size_t)(t * s.ab_stride() + h)];
      const double a = in.ab.value[(size_t)(t * s.ab_stride() + s.Hv + h)];
      const double sp_in = a + in.dt_bias.value[(size_t)h];
      const double sp = sp_in > 20 ? sp_in : std::log1p(std::exp(sp_in));
      const double g = -std::exp(in.A_log.value[(size_t)h]) * sp;
      const double beta = 1.0 / (1.0 + std::exp(-b));
      e.g = std::fmax(e.g, rel_err(decode(out.g, GDN_F32, (size_t)(t * s.Hv + h)), g));
      e.beta = std::fmax(e.beta, rel_err(decode(out.beta, GDN_F32, (size_t)(t * s.Hv + h)), beta));
    }
  }
  return e;
}

// f32 outputs: a few ulps (exp/log1p ~1-2 ulp, the f32 sum of squares, one rounding of a + dt_bias
// amplified by softplus); bf16 outputs: bf16's unit roundoff 2^-8 plus that.
void check_errors(const Errors& e, const Shape& s) {
  const double qkv_tol = s.qkv_dtype == GDN_BF16 ? 4.0e-3 : 4.0e-6;
  const double gate_tol = 4.0e-6;
  check(e.q <= qkv_tol && e.k <= qkv_tol && e.v <= qkv_tol && e.g <= gate_tol && e.beta <= gate_tol,
        "%s: error against float64 over tolerance: q %.3g k %.3g v %.3g (tol %.1g) g %.3g beta %.3g (tol %.1g)",
        describe(s).c_str(), e.q, e.k, e.v, qkv_tol, e.g, e.beta, gate_tol);
}

// ----------------------------------------------------------------- the checks
struct Backends {
  Device host, cuda;
  bool have_cuda = false;
};

// Runs arm on the host (and CUDA: must match the host bit for bit).
bool run_everywhere(Backends& be, const Shape& s, const Inputs& in, int32_t arm, Outputs* out, int64_t* cross_diffs) {
  if (!run_arm(be.host, s, in, arm, out)) return false;
  if (be.have_cuda) {
    Outputs gpu;
    if (!run_arm(be.cuda, s, in, arm, &gpu)) return false;
    char what[64];
    std::snprintf(what, sizeof what, "host vs cuda, %s", arm_name(arm));
    *cross_diffs += compare_bits(*out, gpu, s, what);
    check(gpu.result.arm_ran == out->result.arm_ran, "%s: arm_ran host %d, cuda %d", describe(s).c_str(),
          out->result.arm_ran, gpu.result.arm_ran);
  }
  return true;
}

void check_token_tile_equals_tree(Backends& be) {
  const int64_t Ts[] = {0, 1, 15, 16, 17, 128};
  const int64_t heads[][2] = {{4, 8}, {16, 32}};
  const int32_t dts[] = {GDN_F32, GDN_BF16};
  int cases = 0;
  int64_t tile_diffs = 0, cross_diffs = 0, elements = 0;
  Errors worst_f32, worst_bf16;
  uint64_t seed = 1;
  for (int32_t qkv : dts)
    for (int32_t conv : dts)
      for (int32_t gate : dts)
        for (const auto& hh : heads)
          for (int64_t T : Ts) {
            const Shape s{T, hh[0], hh[1], 128, 128, conv, gate, qkv};
            const Inputs in = make_inputs(s, seed++);
            Outputs tree;
            if (!run_everywhere(be, s, in, GDN_POSTCONV_TREE, &tree, &cross_diffs)) continue;
            for (int32_t arm : arms_where(is_candidate)) {
              Outputs tile;
              if (!run_everywhere(be, s, in, arm, &tile, &cross_diffs)) continue;
              const gdn_arm_info info = arm_info(arm);
              check(tree.result.arm_ran == GDN_POSTCONV_TREE && tile.result.arm_ran == arm,
                    "%s: arm_ran tree %d, %s %d", describe(s).c_str(), tree.result.arm_ran, info.name, tile.result.arm_ran);
              if (info.layout == GDN_LAYOUT_TILE_SLOTS)
                check(tile.result.threads_per_block == info.threads_per_block &&
                          tile.result.grid_x == (T > 0 ? 2 * s.Hk + s.Hv + 1 : 0) && tile.result.grid_y == (T + 15) / 16,
                      "%s: %s plan %d threads, grid %d x %d", describe(s).c_str(), info.name,
                      tile.result.threads_per_block, tile.result.grid_x, tile.result.grid_y);
              char what[96];
              std::snprintf(what, sizeof what, "%s vs tree", info.name);
              tile_diffs += compare_bits(tree, tile, s, what);
            }
            ++cases;
            elements += (int64_t)(tree.q.size() + tree.k.size() + tree.v.size()) / (qkv == GDN_BF16 ? 2 : 4) +
                        (int64_t)(tree.g.size() + tree.beta.size()) / 4;
            const Errors e = reference_errors(s, in, tree);
            check_errors(e, s);
            (qkv == GDN_BF16 ? worst_bf16 : worst_f32).merge(e);
          }
  // Bases off the 16-byte grid (one element past it): the GPU's value copy runs element by element.
  for (int32_t qkv : dts)
    for (int32_t conv : dts) {
      Shape s{37, 4, 8, 128, 128, conv, GDN_BF16, qkv};
      s.offset = 1;
      const Inputs in = make_inputs(s, seed++);
      Outputs tree;
      if (!run_everywhere(be, s, in, GDN_POSTCONV_TREE, &tree, &cross_diffs)) continue;
      for (int32_t arm : arms_where(is_candidate)) {
        Outputs tile;
        if (!run_everywhere(be, s, in, arm, &tile, &cross_diffs)) continue;
        char what[96];
        std::snprintf(what, sizeof what, "%s vs tree (unaligned bases)", arm_name(arm));
        tile_diffs += compare_bits(tree, tile, s, what);
      }
      ++cases;
      elements += (int64_t)(tree.q.size() + tree.k.size() + tree.v.size()) / (qkv == GDN_BF16 ? 2 : 4) +
                  (int64_t)(tree.g.size() + tree.beta.size()) / 4;
      check_errors(reference_errors(s, in, tree), s);
    }
  std::printf("%zu arm(s) vs tree: %d cases (8 dtype combos x 6 T x 2 head shapes, 4 with unaligned bases), %" PRId64
              " output elements per arm compared, %" PRId64 " differing bits-wise\n",
              arms_where(is_candidate).size(), cases, elements, tile_diffs);
  if (be.have_cuda) std::printf("host vs cuda (tree and token-tile): %" PRId64 " differing elements\n", cross_diffs);
  std::printf("float64 reference, max |out - ref| / max(1, |ref|):\n");
  std::printf("  qkv f32 : q %.3g  k %.3g  v %.3g  g %.3g  beta %.3g\n", worst_f32.q, worst_f32.k, worst_f32.v,
              worst_f32.g, worst_f32.beta);
  std::printf("  qkv bf16: q %.3g  k %.3g  v %.3g  g %.3g  beta %.3g\n", worst_bf16.q, worst_bf16.k, worst_bf16.v,
              worst_bf16.g, worst_bf16.beta);
}

// The planted mutants: 20,000 q+k rows (T = 1250, Hk = 8).
void check_mutant_is_caught(Backends& be, int32_t mutant) {
  const char* name = arm_name(mutant);
  int64_t rows_f32 = 0, rows_bf16 = 0, total_rows = 0;
  for (int32_t qkv : {GDN_F32, GDN_BF16}) {
    const Shape s{1250, 8, 16, 128, 128, GDN_F32, GDN_F32, qkv};
    const Inputs in = make_inputs(s, 4242);  // the same data for both storage dtypes
    Outputs tree, seq4;
    int64_t cross = 0;
    if (!run_everywhere(be, s, in, GDN_POSTCONV_TREE, &tree, &cross)) return;
    if (!run_everywhere(be, s, in, mutant, &seq4, &cross)) return;
    check(seq4.result.arm_ran == mutant, "%s: arm_ran %d", name, seq4.result.arm_ran);
    const int es = qkv == GDN_BF16 ? 2 : 4;
    const int64_t rows = differing_rows(tree.q, seq4.q, s.Dk, es) + differing_rows(tree.k, seq4.k, s.Dk, es);
    total_rows = s.T * s.Hk * 2;
    (qkv == GDN_BF16 ? rows_bf16 : rows_f32) = rows;
    // v, g, beta do not depend on the fold
    check(differing(tree.v, seq4.v, es) == 0 && differing(tree.g, seq4.g, 4) == 0 &&
              differing(tree.beta, seq4.beta, 4) == 0,
          "%s: v, g or beta differ from tree", name);
  }
  std::printf("%s (planted mutant) vs tree, %" PRId64 " q+k rows: %" PRId64 " differ in f32 (%.1f%%), %" PRId64
              " in bf16 (%.2f%%)\n",
              name, total_rows, rows_f32, 100.0 * rows_f32 / total_rows, rows_bf16, 100.0 * rows_bf16 / total_rows);
  check(rows_f32 > 0, "%s: the planted mutant is not caught in f32", name);
  if (mutant == GDN_POSTCONV_SEQ4) {  // the fold the exactness audit describes
    check(rows_f32 > total_rows / 20 && rows_f32 < total_rows * 3 / 10,
          "seq4: expected 5..30%% (about 9%%) of f32 rows to differ from tree, got %" PRId64 " of %" PRId64, rows_f32,
          total_rows);
    check(rows_bf16 * 20 < rows_f32, "seq4: expected (almost) no bf16 row to differ, got %" PRId64 " of %" PRId64,
          rows_bf16, total_rows);
  }
}

void check_fallbacks(Backends& be) {
  const int64_t shapes[][2] = {{64, 64}, {300, 300}, {128, 64}, {64, 128}, {300, 128}};
  int64_t cross = 0;
  for (const auto& dd : shapes)
    for (int32_t arm : arms_where(needs_d128)) {
      const Shape s{37, 2, 6, dd[0], dd[1], GDN_BF16, GDN_F32, GDN_F32};
      const Inputs in = make_inputs(s, 99);
      Outputs tree, fell;
      if (!run_everywhere(be, s, in, GDN_POSTCONV_TREE, &tree, &cross)) continue;
      if (!run_everywhere(be, s, in, arm, &fell, &cross)) continue;
      check(fell.result.arm_ran == GDN_POSTCONV_TREE, "%s: %s should fall back to tree, ran %d", describe(s).c_str(),
            arm_name(arm), fell.result.arm_ran);
      const int width = dd[0] <= 64 ? 64 : dd[0] <= 128 ? 128 : 512;
      check(fell.result.threads_per_block == width && fell.result.grid_x == 37 && fell.result.grid_y == 2 * 2 + 6,
            "%s: tree plan %d threads, grid %d x %d", describe(s).c_str(), fell.result.threads_per_block,
            fell.result.grid_x, fell.result.grid_y);
      compare_bits(tree, fell, s, "fallback vs tree");
      const Errors e = reference_errors(s, in, tree);
      check_errors(e, s);
      if (arm == GDN_POSTCONV_TOKEN_TILE)
        std::printf("Dk=%-3" PRId64 " Dv=%-3" PRId64 ": token-tile and seq4 run tree; float64 error q %.3g k %.3g v %.3g\n",
                    dd[0], dd[1], e.q, e.k, e.v);
    }
}

// ----------------------------------------------------------------- validation
void check_validation(Device& d) {
  const Shape s{20, 2, 4, 128, 128, GDN_BF16, GDN_BF16, GDN_BF16};
  const int64_t C = s.C();
  gdn_postconv_args base{};
  base.T = s.T; base.Hk = s.Hk; base.Hv = s.Hv; base.Dk = s.Dk; base.Dv = s.Dv;
  base.conv_dtype = GDN_BF16; base.gate_dtype = GDN_BF16; base.qkv_dtype = GDN_BF16;
  base.arm = GDN_POSTCONV_TOKEN_TILE;
  base.a_row_stride = base.b_row_stride = s.ab_stride();
  base.conv_out = d.alloc((uint64_t)(s.T * C * 2));
  const gdn_addr ab = d.alloc((uint64_t)(s.T * s.ab_stride() * 2));
  base.b = ab;
  base.a = ab + (uint64_t)s.Hv * 2;
  base.A_log = d.alloc(s.Hv * 4);
  base.dt_bias = d.alloc(s.Hv * 4);
  base.q = d.alloc((uint64_t)(s.T * s.Hk * s.Dk * 2));
  base.k = d.alloc((uint64_t)(s.T * s.Hk * s.Dk * 2));
  base.v = d.alloc((uint64_t)(s.T * s.Hv * s.Dv * 2));
  base.g = d.alloc((uint64_t)(s.T * s.Hv * 4));
  base.beta = d.alloc((uint64_t)(s.T * s.Hv * 4));
  std::vector<uint8_t> zeros((size_t)(s.T * C * 2), 0);
  gdn_buffer_upload(d.b, base.conv_out, zeros.data(), zeros.size());
  gdn_buffer_upload(d.b, ab, zeros.data(), (uint64_t)(s.T * s.ab_stride() * 2));
  gdn_buffer_upload(d.b, base.A_log, zeros.data(), s.Hv * 4);
  gdn_buffer_upload(d.b, base.dt_bias, zeros.data(), s.Hv * 4);
  gdn_postconv_result r{};
  check(gdn_postconv_forward(d.b, &base, &r) == GDN_OK, "validation: the valid base case failed: %s", gdn_last_error());

  struct Bad {
    const char* name;  // must appear in the message
    int32_t status;
    void (*edit)(gdn_postconv_args&);
  };
  const Bad bad[] = {
      {"args.arm", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.arm = gdn_arm_count(GDN_OP_POSTCONV); }},
      {"args.arm", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.arm = -1; }},
      {"args.T", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.T = -1; }},
      {"args.Hk", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Hk = 0; }},
      {"args.Hv", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Hv = 0; }},
      {"args.Hv", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Hv = 3; }},  // not a multiple of Hk = 2
      {"args.Hk", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Hk = 40000; a.Hv = 40000; }},
      {"args.Dk", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Dk = 0; }},
      {"args.Dk", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Dk = 1025; }},
      {"args.Dv", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Dv = 0; }},
      {"args.Dv", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.Dv = 2048; }},
      {"args.conv_dtype", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.conv_dtype = GDN_F16; }},
      {"args.gate_dtype", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.gate_dtype = GDN_I32; }},
      {"args.qkv_dtype", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.qkv_dtype = 99; }},
      {"args.a_row_stride", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.a_row_stride = 3; }},
      {"args.b_row_stride", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.b_row_stride = -5; }},
      {"args.a_row_stride", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.a_row_stride = INT64_MAX / 2; }},
      {"args.conv_out", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.T = 21; }},  // one row too many
      {"args.conv_out", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.conv_out = 0; }},
      {"args.a", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.a += 12; }},  // last row runs past the buffer
      {"args.b", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.b = 8; }},
      {"args.A_log", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.A_log += 4; }},
      {"args.dt_bias", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.dt_bias = 0; }},
      {"args.q", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.q += 2; }},
      {"args.k", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.k = 0; }},
      {"args.v", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.v += 64; }},
      {"args.g", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.g += 4; }},
      {"args.beta", GDN_ERR_INVALID_BUFFER, [](gdn_postconv_args& a) { a.beta = 0; }},
      {"args.conv_out", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.conv_out += 1; a.T = 19; }},  // misaligned
      {"args.g", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.g += 2; a.T = 19; }},  // misaligned f32
      {"args.k", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.k = a.q; }},           // outputs overlap
      {"args.q", GDN_ERR_INVALID_ARGUMENT, [](gdn_postconv_args& a) { a.q = a.conv_out; }},    // output over input
  };
  for (const Bad& b : bad) {
    gdn_postconv_args a = base;
    b.edit(a);
    const gdn_status st = gdn_postconv_forward(d.b, &a, &r);
    const std::string msg = gdn_last_error();
    check(st == b.status && msg.find(b.name) != std::string::npos,
          "validation (%s): expected %s naming %s, got %s: \"%s\"", d.name, gdn_status_name(b.status), b.name,
          gdn_status_name(st), msg.c_str());
  }
  const gdn_status st = gdn_postconv_forward(d.b, nullptr, &r);
  check(st == GDN_ERR_INVALID_ARGUMENT && std::string(gdn_last_error()).find("args") != std::string::npos,
        "validation: NULL args: %s \"%s\"", gdn_status_name(st), gdn_last_error());
  // T = 0 with every T-sized buffer null is valid: there is nothing to read or write.
  gdn_postconv_args empty = base;
  empty.T = 0;
  empty.conv_out = empty.a = empty.b = empty.q = empty.k = empty.v = empty.g = empty.beta = 0;
  check(gdn_postconv_forward(d.b, &empty, &r) == GDN_OK && r.grid_y == 0, "validation: T = 0: %s", gdn_last_error());
  d.release();
  std::printf("validation (%s): %zu bad argument sets rejected with a message naming the argument\n", d.name,
              sizeof(bad) / sizeof(bad[0]) + 1);
}

}  // namespace

int main() {
  Backends be;
  if (!be.host.open(GDN_BACKEND_HOST)) return 1;
  int32_t gpus = 0;
  if (gdn_cuda_device_count(&gpus) == GDN_OK && gpus > 0) be.have_cuda = be.cuda.open(GDN_BACKEND_CUDA);
  std::printf("postconv_smoke: %s; backends: host%s\n", gdn_build_info(), be.have_cuda ? " + cuda" : " (no GPU)");

  check_token_tile_equals_tree(be);
  for (int32_t mutant : arms_where(is_mutant)) check_mutant_is_caught(be, mutant);
  check_fallbacks(be);
  check_validation(be.host);
  if (be.have_cuda) check_validation(be.cuda);

  be.host.close();
  if (be.have_cuda) be.cuda.close();
  if (g_failures) {
    std::printf("postconv_smoke: %d FAILED checks\n", g_failures);
    return 1;
  }
  std::printf("postconv_smoke: all checks passed\n");
  return 0;
}
