// fused_plan.cpp — validates the fused conv -> post-conv op and plans its launch (fused_plan.h).
#include "common/fused_plan.h"
#include "common/backend.h"
#include "common/conv_plan.h"

#include <cinttypes>
#include <cstring>

namespace gdn {
namespace {

bool is_float_dtype(int32_t d) { return d == GDN_F32 || d == GDN_BF16; }

struct Range {
  const char* name;
  gdn_addr addr;
  uint64_t bytes;
  uint64_t align;  // required address alignment in bytes
};

bool overlaps(const Range& x, const Range& y) {
  return x.bytes > 0 && y.bytes > 0 && x.addr < y.addr + y.bytes && y.addr < x.addr + x.bytes;
}

// Bytes spanned by `rows` rows of `row_len` elements `stride` elements apart (first to last element).
bool span_bytes(int64_t rows, int64_t stride, int64_t row_len, int64_t elem_bytes, uint64_t* out) {
  if (rows <= 0 || row_len <= 0) {
    *out = 0;
    return true;
  }
  int64_t last = 0, elems = 0, bytes = 0;
  if (__builtin_mul_overflow(rows - 1, stride, &last) || __builtin_add_overflow(last, row_len, &elems) ||
      __builtin_mul_overflow(elems, elem_bytes, &bytes))
    return false;
  *out = (uint64_t)bytes;
  return true;
}

}  // namespace

gdn_status fused_plan(gdn_backend* b, const gdn_fused_args* a, FusedPlan* plan) {
  if (a == nullptr) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args: expected a gdn_fused_args, got NULL");
  plan->arm = registry::get(registry::kFused, a->arm);
  if (!plan->arm)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.arm: expected a fused arm (%s), got %d",
                registry::id_list(registry::kFused).c_str(), (int)a->arm);
  if (a->mutant < 0 || a->mutant >= GDN_FUSED_MUTANT_COUNT)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.mutant: expected a gdn_fused_mutant (0 none, 1 seq-fold, 2 no-round), got %d", (int)a->mutant);
  if (a->T < 0 || a->T > (int64_t)INT32_MAX)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.T: expected 0..2^31-1 tokens (query_start_loc is int32), got %" PRId64,
                a->T);
  if (a->Hk < 1) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.Hk: expected >= 1 key heads, got %" PRId64, a->Hk);
  if (a->Hv < 1) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.Hv: expected >= 1 value heads, got %" PRId64, a->Hv);
  if (2 * a->Hk + a->Hv + 1 > 65535)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.Hk, args.Hv: expected 2*Hk + Hv + 1 <= 65535 head slots, got Hk = %" PRId64 ", Hv = %" PRId64, a->Hk,
                a->Hv);
  if (a->Hv % a->Hk != 0)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.Hv: expected a multiple of args.Hk = %" PRId64 " (grouped heads), got %" PRId64, a->Hk, a->Hv);
  if (a->Dk != fused::kD)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.Dk: the fused op needs Dk = %d (every Qwen3.5 model's head size), got %" PRId64
                "; run gdn_conv_forward then gdn_postconv_forward for other sizes",
                fused::kD, a->Dk);
  if (a->Dv != fused::kD)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.Dv: the fused op needs Dv = %d (every Qwen3.5 model's head size), got %" PRId64
                "; run gdn_conv_forward then gdn_postconv_forward for other sizes",
                fused::kD, a->Dv);
  if (a->K < 2 || a->K > GDN_CONV_MAX_K)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.K: expected 2..%d taps, got %" PRId64, GDN_CONV_MAX_K, a->K);
  if (a->num_seqs < 1) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.num_seqs: expected >= 1, got %d", (int)a->num_seqs);
  const struct {
    const char* name;
    int32_t dtype;
  } dtypes[] = {{"args.x_dtype", a->x_dtype}, {"args.conv_dtype", a->conv_dtype}, {"args.qkv_dtype", a->qkv_dtype},
                {"args.gate_dtype", a->gate_dtype}};
  for (const auto& d : dtypes)
    if (!is_float_dtype(d.dtype))
      return fail(b, GDN_ERR_INVALID_ARGUMENT, "%s: expected GDN_F32 (0) or GDN_BF16 (1), got %d (%s)", d.name,
                  (int)d.dtype, dtype_name(d.dtype));
  if (a->has_initial_state != 0 && a->his_dtype != GDN_I8 && a->his_dtype != GDN_I32)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.his_dtype: expected GDN_I8 (4) or GDN_I32 (3), got %d (%s)",
                (int)a->his_dtype, dtype_name(a->his_dtype));
  const int64_t C = 2 * a->Hk * fused::kD + a->Hv * fused::kD;
  if (a->x_row_stride < C || a->x_row_stride > (int64_t(1) << 31) || a->x_row_stride % fused::kVec != 0)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.x_row_stride: expected a multiple of %d in C = %" PRId64 "..2^31 (rows are read in %d-element "
                "vectors), got %" PRId64,
                fused::kVec, C, fused::kVec, a->x_row_stride);
  if (a->a_row_stride < a->Hv)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.a_row_stride: expected >= Hv = %" PRId64 " elements, got %" PRId64,
                a->Hv, a->a_row_stride);
  if (a->b_row_stride < a->Hv)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.b_row_stride: expected >= Hv = %" PRId64 " elements, got %" PRId64,
                a->Hv, a->b_row_stride);

  // ---- address ranges (sizes are bounded: T < 2^31, C < 2^24, so only the strided extents can overflow)
  const uint64_t T = (uint64_t)a->T, K = (uint64_t)a->K, N = (uint64_t)a->num_seqs;
  const uint64_t xs = (uint64_t)dtype_size(a->x_dtype), qs = (uint64_t)dtype_size(a->qkv_dtype),
                 gs = (uint64_t)dtype_size(a->gate_dtype);
  uint64_t x_bytes = 0, a_bytes = 0, b_bytes = 0;
  if (!span_bytes(a->T, a->x_row_stride, C, (int64_t)xs, &x_bytes))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.x_row_stride: %" PRId64 " elements over %" PRId64 " rows overflows",
                a->x_row_stride, a->T);
  if (!span_bytes(a->T, a->a_row_stride, a->Hv, (int64_t)gs, &a_bytes))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.a_row_stride: %" PRId64 " elements over %" PRId64 " rows overflows",
                a->a_row_stride, a->T);
  if (!span_bytes(a->T, a->b_row_stride, a->Hv, (int64_t)gs, &b_bytes))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.b_row_stride: %" PRId64 " elements over %" PRId64 " rows overflows",
                a->b_row_stride, a->T);
  const uint64_t his_es = a->his_dtype == GDN_I32 ? 4 : 1;
  const uint64_t qk_bytes = T * (uint64_t)(a->Hk * fused::kD) * qs;
  const Range inputs[] = {
      {"args.x", a->x, x_bytes, xs * fused::kVec},
      {"args.weight", a->weight, (uint64_t)C * K * xs, xs},
      {"args.bias", a->bias, a->bias ? (uint64_t)C * xs : 0, xs},
      {"args.query_start_loc", a->query_start_loc, a->query_start_loc_host ? 0 : (N + 1) * 4, 4},  // a host copy has no range
      {"args.has_initial_state", a->has_initial_state, a->has_initial_state ? N * his_es : 0, his_es},
      {"args.a", a->a, a_bytes, gs},
      {"args.b", a->b, b_bytes, gs},
      {"args.A_log", a->A_log, (uint64_t)a->Hv * 4, 4},
      {"args.dt_bias", a->dt_bias, (uint64_t)a->Hv * 4, 4},
  };
  // Written ranges: conv_state is read and written in place (by the one thread that owns it).
  const Range outputs[] = {
      {"args.conv_state", a->conv_state, N * (uint64_t)C * (K - 1) * 4, 4},
      {"args.q", a->q, qk_bytes, qs * fused::kVec},
      {"args.k", a->k, qk_bytes, qs * fused::kVec},
      {"args.v", a->v, T * (uint64_t)(a->Hv * fused::kD) * qs, qs * fused::kVec},
      {"args.g", a->g, T * (uint64_t)a->Hv * 4, 4},
      {"args.beta", a->beta, T * (uint64_t)a->Hv * 4, 4},
  };
  for (const Range& r : inputs) {
    const gdn_status st = check_range(b, r.addr, r.bytes, r.name);
    if (st != GDN_OK) return st;
  }
  for (const Range& r : outputs) {
    const gdn_status st = check_range(b, r.addr, r.bytes, r.name);
    if (st != GDN_OK) return st;
  }
  // A misaligned vector access is a fault on the GPU, so both backends refuse it.
  auto misaligned = [&](const Range& r) -> gdn_status {
    if (r.bytes == 0 || r.addr % r.align == 0) return GDN_OK;
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "%s: expected an address aligned to %" PRIu64 " bytes, got 0x%" PRIx64,
                r.name, r.align, r.addr);
  };
  for (const Range& r : inputs)
    if (misaligned(r) != GDN_OK) return GDN_ERR_INVALID_ARGUMENT;
  for (const Range& r : outputs)
    if (misaligned(r) != GDN_OK) return GDN_ERR_INVALID_ARGUMENT;
  for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; ++i) {
    for (const Range& in : inputs)
      if (overlaps(outputs[i], in))
        return fail(b, GDN_ERR_INVALID_ARGUMENT, "%s: expected memory apart from %s, but the two overlap",
                    outputs[i].name, in.name);
    for (size_t j = 0; j < i; ++j)
      if (overlaps(outputs[i], outputs[j]))
        return fail(b, GDN_ERR_INVALID_ARGUMENT, "%s: expected memory apart from %s, but the two overlap",
                    outputs[i].name, outputs[j].name);
  }

  // ---- query_start_loc: the caller's host copy, or read back; checked (conv_plan.h)
  gdn_status st = load_query_start_loc(b, a->query_start_loc_host, a->query_start_loc, (int64_t)N, a->T, &plan->qsl);
  if (st != GDN_OK) return st;
  plan->qsl_from_host = a->query_start_loc_host != nullptr;
  const std::vector<int32_t>& qsl = plan->qsl;

  // ---- programs: (sequence, 64-token chunk), in order, none for empty sequences
  plan->programs.clear();
  for (uint64_t s = 0; s < N; ++s) {
    const int64_t chunks = ((int64_t)qsl[s + 1] - qsl[s] + fused::kChunk - 1) / fused::kChunk;
    for (int64_t k = 0; k < chunks; ++k) {
      plan->programs.push_back((int32_t)s);
      plan->programs.push_back((int32_t)k);
    }
  }
  const int64_t slots = 2 * a->Hk + a->Hv + 1;
  const int64_t programs = (int64_t)plan->programs.size() / 2;
  if (programs * slots > INT32_MAX)
    return fail(b, GDN_ERR_UNSUPPORTED,
                "launch: %" PRId64 " programs x %" PRId64 " head slots exceeds the 2^31-1 blocks of one launch", programs,
                slots);

  std::memset(&plan->result, 0, sizeof plan->result);
  plan->result.arm_ran = a->arm;
  plan->result.threads_per_block = plan->arm->info.threads_per_block;
  plan->result.grid_x = (int32_t)slots;
  plan->result.grid_y = (int32_t)programs;
  plan->result.tokens_per_program = plan->arm->info.tokens_per_program;

  fused::Params& p = plan->params;
  p = fused::Params{};
  p.T = a->T; p.Hk = a->Hk; p.Hv = a->Hv; p.C = C; p.x_stride = a->x_row_stride;
  p.K = (int32_t)a->K; p.N = a->num_seqs; p.slots = (int32_t)slots; p.mutant = a->mutant;
  p.gate_bf16 = a->gate_dtype == GDN_BF16;
  p.his_i32 = a->his_dtype == GDN_I32;
  p.silu_shortcut = b->silu_shortcut && a->conv_dtype == GDN_BF16 ? 1 : 0;  // arms that offer it: stream-mufu
  p.x = addr_ptr<const void>(a->x);
  p.w = addr_ptr<const void>(a->weight);
  p.bias = a->bias ? addr_ptr<const void>(a->bias) : nullptr;
  // A host copy serves the host backend as it is; the CUDA backend uploads it (fused_prepare) unless
  // the launch needs no list (below).
  p.qsl = plan->qsl_from_host ? plan->qsl.data() : addr_ptr<const int32_t>(a->query_start_loc);
  p.his = a->has_initial_state ? addr_ptr<const void>(a->has_initial_state) : nullptr;
  p.state = addr_ptr<float>(a->conv_state);
  p.q = addr_ptr<void>(a->q);
  p.k = addr_ptr<void>(a->k);
  p.v = addr_ptr<void>(a->v);
  p.programs = plan->programs.empty() ? nullptr : plan->programs.data();
  // One sequence: the kernel computes its programs and offsets (both backends); the CUDA backend uploads
  // the lists of a batch given as a host copy (plan_lists.h).
  plan->lists_implicit = lists_are_implicit((int64_t)N, plan->programs);
  if (plan->lists_implicit) {
    p.programs = nullptr;
    p.qsl = nullptr;
  }
  postconv::Params& gp = p.gates;
  gp = postconv::Params{};
  gp.T = a->T; gp.Hk = a->Hk; gp.Hv = a->Hv; gp.Dk = fused::kD; gp.Dv = fused::kD; gp.C = C;
  gp.a_stride = a->a_row_stride; gp.b_stride = a->b_row_stride;
  gp.a = addr_ptr<const void>(a->a);
  gp.b = addr_ptr<const void>(a->b);
  gp.A_log = addr_ptr<const float>(a->A_log);
  gp.dt_bias = addr_ptr<const float>(a->dt_bias);
  gp.g = addr_ptr<float>(a->g);
  gp.beta = addr_ptr<float>(a->beta);
  plan->combo = 4 * (a->x_dtype == GDN_BF16) + 2 * (a->conv_dtype == GDN_BF16) + (a->qkv_dtype == GDN_BF16);
  plan->build = a->mutant != GDN_FUSED_MUTANT_NONE ? 1 : 0;
  if (plan->build && !plan->arm->has_planted())
    return fail(b, GDN_ERR_UNSUPPORTED, "args.mutant: fused arm %s has no planted-mutant build", plan->arm->info.name);
  // The planted build is compiled for the widest window only, which serves every K.
  plan->variant = plan->build ? plan->arm->variants - 1 : plan->arm->variant_for(&plan->params);
  return GDN_OK;
}

}  // namespace gdn
