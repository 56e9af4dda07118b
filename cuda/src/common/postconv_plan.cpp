// postconv_plan.cpp — validation and launch planning of the post-conv op (DOMAIN.md §4).
//
// gdn::postconv_plan checks every field of gdn_postconv_args and says what will run: the arm after
// fallback (token-tile and seq4 need Dk = Dv = 128, else the tree runs), threads per block and the
// grid. Both backends launch exactly this plan, so the host replays the GPU's index space.
#include "common/internal.h"
#include "common/postconv_kernels.h"
#include "user/user_arms.h"

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

struct Range {
  const char* name;
  gdn_addr addr;
  uint64_t bytes;
  int elem_bytes;
  const char* dtype;
};

bool overlaps(const Range& x, const Range& y) {
  if (x.bytes == 0 || y.bytes == 0) return false;
  return x.addr < y.addr + y.bytes && y.addr < x.addr + x.bytes;
}

}  // namespace

gdn_status postconv_plan(gdn_backend* backend, const gdn_postconv_args* args, gdn_postconv_result* result) {
  if (args == nullptr) return fail(backend, GDN_ERR_INVALID_ARGUMENT, "args: expected a gdn_postconv_args, got NULL");
  if (result == nullptr)
    return fail(backend, GDN_ERR_INVALID_ARGUMENT, "result: expected a gdn_postconv_result to fill, got NULL");
  const gdn_postconv_args& a = *args;

  // ---- arm, sizes
  const bool user_arm = user::is_user(GDN_OP_POSTCONV, a.arm);
  if (!user_arm && (a.arm < 0 || a.arm >= GDN_POSTCONV_ARM_COUNT))
    return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                "args.arm: expected a gdn_postconv_arm (0 tree, 1 token-tile, 2 seq4), got %" PRId32, a.arm);
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
  const Range inputs[] = {
      {"args.conv_out", a.conv_out, T * (uint64_t)C * conv_es, conv_es, conv_dn},
      {"args.a", a.a, a_bytes, gate_es, gate_dn},
      {"args.b", a.b, b_bytes, gate_es, gate_dn},
      {"args.A_log", a.A_log, (uint64_t)a.Hv * 4, 4, "f32"},
      {"args.dt_bias", a.dt_bias, (uint64_t)a.Hv * 4, 4, "f32"},
  };
  const Range outputs[] = {
      {"args.q", a.q, T * (uint64_t)(a.Hk * a.Dk) * qkv_es, qkv_es, qkv_dn},
      {"args.k", a.k, T * (uint64_t)(a.Hk * a.Dk) * qkv_es, qkv_es, qkv_dn},
      {"args.v", a.v, T * (uint64_t)(a.Hv * a.Dv) * qkv_es, qkv_es, qkv_dn},
      {"args.g", a.g, T * (uint64_t)a.Hv * 4, 4, "f32"},
      {"args.beta", a.beta, T * (uint64_t)a.Hv * 4, 4, "f32"},
  };
  for (const Range& r : inputs) {
    const gdn_status st = check_range(backend, r.addr, r.bytes, r.name);
    if (st != GDN_OK) return st;
  }
  for (const Range& r : outputs) {
    const gdn_status st = check_range(backend, r.addr, r.bytes, r.name);
    if (st != GDN_OK) return st;
  }
  // Element alignment: a misaligned load is a fault on the GPU, so both backends refuse it.
  for (const Range& r : inputs)
    if (r.bytes != 0 && r.addr % (uint64_t)r.elem_bytes != 0)
      return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                  "%s: expected an address aligned to its %d-byte %s elements, got 0x%" PRIx64, r.name, r.elem_bytes,
                  r.dtype, r.addr);
  for (const Range& r : outputs)
    if (r.bytes != 0 && r.addr % (uint64_t)r.elem_bytes != 0)
      return fail(backend, GDN_ERR_INVALID_ARGUMENT,
                  "%s: expected an address aligned to its %d-byte %s elements, got 0x%" PRIx64, r.name, r.elem_bytes,
                  r.dtype, r.addr);
  // Outputs are written while inputs are read, by other blocks: no output may share a byte with an
  // input or another output (inputs may share bytes: a and b interleave in one packed buffer).
  for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); ++i) {
    for (const Range& in : inputs)
      if (overlaps(outputs[i], in))
        return fail(backend, GDN_ERR_INVALID_ARGUMENT, "%s: expected memory apart from %s, but the two overlap",
                    outputs[i].name, in.name);
    for (size_t j = 0; j < i; ++j)
      if (overlaps(outputs[i], outputs[j]))
        return fail(backend, GDN_ERR_INVALID_ARGUMENT, "%s: expected memory apart from %s, but the two overlap",
                    outputs[i].name, outputs[j].name);
  }

  // ---- the plan
  if (user_arm) return user::postconv_result(backend, a, result);
  const bool tile_fits = a.Dk == postconv::kTileD && a.Dv == postconv::kTileD;
  int32_t arm_ran = a.arm;
  if ((a.arm == GDN_POSTCONV_TOKEN_TILE || a.arm == GDN_POSTCONV_SEQ4) && !tile_fits) arm_ran = GDN_POSTCONV_TREE;
  *result = gdn_postconv_result{};
  result->arm_ran = arm_ran;
  if (arm_ran == GDN_POSTCONV_TREE) {
    // one block per (token, head slot); slots: Hk q heads, Hk k heads, Hv value heads (with gates)
    result->threads_per_block = postconv::tree_threads(a.Dk);
    result->grid_x = (int32_t)a.T;
    result->grid_y = (int32_t)(2 * a.Hk + a.Hv);
  } else {
    // one block of 4 warps per (head slot, 16 tokens); the last slot computes the gates
    result->threads_per_block = postconv::kTileThreads;
    result->grid_x = (int32_t)((2 * a.Hk + a.Hv + 1) * postconv::tile_grid_folds(a.T));
    result->grid_y = (int32_t)postconv::tile_grid_rows(a.T);
  }
  return GDN_OK;
}

}  // namespace gdn
