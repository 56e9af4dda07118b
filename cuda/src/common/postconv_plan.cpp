// postconv_plan.cpp — validation and launch planning of the post-conv op (docs/SPEC.md §6).
//
// gdn::postconv_plan checks every field of gdn_postconv_args and says what will run: the arm after
// its registry entry's fallback rule (token-tile, seq4 and vec-tile need Dk = Dv = 128, else the tree runs),
// threads per block, shared memory and the grid of the arm's layout. Both backends launch exactly
// this plan, so the host replays the GPU's index space.
#include "common/postconv_plan.h"

#include <cinttypes>
#include <cstdint>

namespace gdn {
namespace {

constexpr int64_t kMaxGridX = 2147483647;  // CUDA gridDim.x limit (the tree's tokens)
constexpr int64_t kMaxGridY = postconv::kMaxGridY;  // CUDA gridDim.y limit (the tree's head slots)

bool is_storage_dtype(int32_t dtype) { return dtype == GDN_F32 || dtype == GDN_BF16; }

// Bytes spanned by `rows` rows of `row_len` elements, `stride` elements apart: the extent
// [first element of row 0, last element of row rows-1]. False on overflow.
bool span_bytes(int64_t rows, int64_t stride, int64_t row_len, int elem_bytes, uint64_t* out) {
  if (rows <= 0 || row_len <= 0) {
    *out = 0;
    return true;
  }
  int64_t last_row = 0, elems = 0, bytes = 0;
  if (__builtin_mul_overflow(rows - 1, stride, &last_row)) return false;
  if (__builtin_add_overflow(last_row, row_len, &elems)) return false;
  if (__builtin_mul_overflow(elems, (int64_t)elem_bytes, &bytes)) return false;
  *out = (uint64_t)bytes;
  return true;
}


postconv::Params make_params(const gdn_postconv_args& a) {
  postconv::Params p;
  p.T = a.T; p.Hk = a.Hk; p.Hv = a.Hv; p.Dk = a.Dk; p.Dv = a.Dv;
  p.C = 2 * a.Hk * a.Dk + a.Hv * a.Dv;
  p.a_stride = a.a_row_stride; p.b_stride = a.b_row_stride;
  p.conv = addr_ptr<const void>(a.conv_out);
  p.a = addr_ptr<const void>(a.a);
  p.b = addr_ptr<const void>(a.b);
  p.A_log = addr_ptr<const float>(a.A_log);
  p.dt_bias = addr_ptr<const float>(a.dt_bias);
  p.q = addr_ptr<void>(a.q);
  p.k = addr_ptr<void>(a.k);
  p.v = addr_ptr<void>(a.v);
  p.g = addr_ptr<float>(a.g);
  p.beta = addr_ptr<float>(a.beta);
  p.vec16 = ((a.conv_out | a.v) % 16 == 0) ? 1 : 0;
  p.qkv_vec16 = ((a.conv_out | a.q | a.k | a.v) % 16 == 0) ? 1 : 0;
  return p;
}

}  // namespace

gdn_status postconv_plan(gdn_backend* backend, const gdn_postconv_args* args, PostconvPlan* plan) {
  if (args == nullptr) return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args: expected a gdn_postconv_args, got NULL");
  if (plan == nullptr) return fail(backend, GDN_ERR_INTERNAL, "postconv_plan: no plan to fill");
  const gdn_postconv_args& a = *args;

  // ---- arm, sizes
  if (!registry::get(registry::kPostconv, a.arm))
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.arm: expected a post-conv arm id (%s), got %" PRId32,
                registry::id_list(registry::kPostconv).c_str(), a.arm);
  if (a.T < 0) return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.T: expected >= 0 tokens, got %" PRId64, a.T);
  if (a.T > kMaxGridX)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.T: expected at most %" PRId64 " tokens, got %" PRId64,
                kMaxGridX, a.T);
  if (a.Hk < 1) return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.Hk: expected >= 1 key heads, got %" PRId64, a.Hk);
  if (a.Hv < 1)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.Hv: expected >= 1 value heads, got %" PRId64, a.Hv);
  if (a.Hk >= kMaxGridY || a.Hv >= kMaxGridY || 2 * a.Hk + a.Hv + 1 > kMaxGridY)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                "args.Hk, args.Hv: expected 2*Hk + Hv + 1 <= %" PRId64
                " head slots (one grid dimension holds at most that many blocks), got Hk = %" PRId64 ", Hv = %" PRId64,
                kMaxGridY, a.Hk, a.Hv);
  if (a.Hv % a.Hk != 0)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                "args.Hv: expected a multiple of args.Hk = %" PRId64 " (grouped heads), got %" PRId64, a.Hk, a.Hv);
  if (a.Dk < 1 || a.Dk > postconv::kMaxD)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.Dk: expected 1..%d features per key head, got %" PRId64,
                postconv::kMaxD, a.Dk);
  if (a.Dv < 1 || a.Dv > postconv::kMaxD)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.Dv: expected 1..%d features per value head, got %" PRId64,
                postconv::kMaxD, a.Dv);

  // ---- dtypes, strides
  if (!is_storage_dtype(a.conv_dtype))
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.conv_dtype: expected GDN_F32 or GDN_BF16, got %" PRId32 " (%s)",
                a.conv_dtype, dtype_name(a.conv_dtype));
  if (!is_storage_dtype(a.gate_dtype))
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.gate_dtype: expected GDN_F32 or GDN_BF16, got %" PRId32 " (%s)",
                a.gate_dtype, dtype_name(a.gate_dtype));
  if (!is_storage_dtype(a.qkv_dtype))
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args.qkv_dtype: expected GDN_F32 or GDN_BF16, got %" PRId32 " (%s)",
                a.qkv_dtype, dtype_name(a.qkv_dtype));
  if (a.a_row_stride < a.Hv)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                "args.a_row_stride: expected >= Hv = %" PRId64 " elements, got %" PRId64, a.Hv, a.a_row_stride);
  if (a.b_row_stride < a.Hv)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                "args.b_row_stride: expected >= Hv = %" PRId64 " elements, got %" PRId64, a.Hv, a.b_row_stride);

  // ---- address ranges. Sizes are bounded above (T < 2^31, C < 2^28, 4-byte elements), so only the
  // strided a/b extents can overflow.
  const int conv_es = dtype_size(a.conv_dtype);
  const int gate_es = dtype_size(a.gate_dtype);
  const int qkv_es = dtype_size(a.qkv_dtype);
  const int64_t C = 2 * a.Hk * a.Dk + a.Hv * a.Dv;
  const uint64_t T = (uint64_t)a.T;
  uint64_t a_bytes = 0, b_bytes = 0;
  if (!span_bytes(a.T, a.a_row_stride, a.Hv, gate_es, &a_bytes))
    return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                "args.a_row_stride: %" PRId64 " elements over %" PRId64 " rows overflows the address space",
                a.a_row_stride, a.T);
  if (!span_bytes(a.T, a.b_row_stride, a.Hv, gate_es, &b_bytes))
    return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                "args.b_row_stride: %" PRId64 " elements over %" PRId64 " rows overflows the address space",
                a.b_row_stride, a.T);
  const char* conv_dn = dtype_name(a.conv_dtype);
  const char* gate_dn = dtype_name(a.gate_dtype);
  const char* qkv_dn = dtype_name(a.qkv_dtype);
  const ArgRange ranges[] = {
      {"args.conv_out", a.conv_out, T * (uint64_t)C * conv_es, conv_es, conv_dn, false},
      {"args.a", a.a, a_bytes, gate_es, gate_dn, false},
      {"args.b", a.b, b_bytes, gate_es, gate_dn, false},
      {"args.A_log", a.A_log, (uint64_t)a.Hv * 4, 4, "f32", false},
      {"args.dt_bias", a.dt_bias, (uint64_t)a.Hv * 4, 4, "f32", false},
      {"args.q", a.q, T * (uint64_t)(a.Hk * a.Dk) * qkv_es, qkv_es, qkv_dn, true},
      {"args.k", a.k, T * (uint64_t)(a.Hk * a.Dk) * qkv_es, qkv_es, qkv_dn, true},
      {"args.v", a.v, T * (uint64_t)(a.Hv * a.Dv) * qkv_es, qkv_es, qkv_dn, true},
      {"args.g", a.g, T * (uint64_t)a.Hv * 4, 4, "f32", true},
      {"args.beta", a.beta, T * (uint64_t)a.Hv * 4, 4, "f32", true},
  };
  const gdn_status st = check_arg_ranges(backend, ranges, sizeof ranges / sizeof ranges[0]);
  if (st != GDN_OK) return st;

  // ---- the plan
  const bool tile_fits = a.Dk == postconv::kTileD && a.Dv == postconv::kTileD;
  plan->arm = registry::resolve(registry::kPostconv, a.arm,
                                [&](const gdn_arm_info& i) { return !(i.data_requires & GDN_ARM_REQ_D128) || tile_fits; });
  const gdn_arm_info& info = plan->arm->info;
  plan->params = make_params(a);
  plan->combo = 4 * (a.conv_dtype == GDN_BF16) + 2 * (a.qkv_dtype == GDN_BF16) + (a.gate_dtype == GDN_BF16);
  plan->variant = plan->arm->variant_for(&plan->params);
  plan->shared_bytes = (int32_t)plan->arm->shared_bytes(0);
  gdn_postconv_result& r = plan->result;
  r = gdn_postconv_result{};
  r.arm_ran = info.id;
  r.threads_per_block = plan->arm->threads_rule == kThreadsTreeOfD ? postconv::tree_threads(a.Dk) : info.threads_per_block;
  if (r.threads_per_block > info.threads_per_block)
    return fail(backend, GDN_ERR_INTERNAL, "postconv_plan: arm %s needs %d threads, declares at most %d", info.name,
                (int)r.threads_per_block, (int)info.threads_per_block);
  const int64_t slots = 2 * a.Hk + a.Hv;
  switch (info.layout) {
    case kLayoutTokenSlot:  // one block per (token, head slot); value slots compute the gates
      r.grid_x = (int32_t)a.T;
      r.grid_y = (int32_t)slots;
      break;
    case kLayoutTileSlots:  // one block per (head slot, 16 tokens); the last slot computes the gates
      r.grid_x = (int32_t)((slots + 1) * postconv::tile_grid_folds(a.T));
      r.grid_y = (int32_t)postconv::tile_grid_rows(a.T);
      break;
    default:
      return fail(backend, GDN_ERR_INTERNAL, "postconv_plan: arm %s has no post-conv layout (%d)", info.name,
                  (int)info.layout);
  }
  return GDN_OK;
}

}  // namespace gdn
