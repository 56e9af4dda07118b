// matmul_plan.cpp — validation of gdn_matmul_nt.
#include "common/matmul_plan.h"

#include <cinttypes>

namespace gdn {

gdn_status matmul_plan(gdn_backend* b, const gdn_matmul_args* a, MatmulPlan* plan) {
  if (a == nullptr) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args: is null");
  if (a->in_dtype != GDN_F32 && a->in_dtype != GDN_BF16)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.in_dtype: must be F32 (0) or BF16 (1), got %d", (int)a->in_dtype);
  if (a->out_dtype != GDN_F32 && a->out_dtype != GDN_BF16)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.out_dtype: must be F32 (0) or BF16 (1), got %d", (int)a->out_dtype);
  const int64_t lim = int64_t(1) << 24;
  if (a->M < 1 || a->M > lim) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.M: must be in 1..2^24, got %" PRId64, a->M);
  if (a->N < 1 || a->N > lim) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.N: must be in 1..2^24, got %" PRId64, a->N);
  if (a->Kd < 1 || a->Kd > lim)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.Kd: must be in 1..2^24, got %" PRId64, a->Kd);
  if ((a->M + matmul::kTile - 1) / matmul::kTile > 65535)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.M: at most %d rows per call, got %" PRId64, 65535 * matmul::kTile, a->M);
  const uint64_t is = (uint64_t)dtype_size(a->in_dtype), os = (uint64_t)dtype_size(a->out_dtype);
  const uint64_t M = (uint64_t)a->M, N = (uint64_t)a->N, Kd = (uint64_t)a->Kd;
  gdn_status st = check_range(b, a->a, M * Kd * is, "args.a");
  if (st == GDN_OK) st = check_range(b, a->b, N * Kd * is, "args.b");
  if (st == GDN_OK) st = check_range(b, a->out, M * N * os, "args.out");
  if (st != GDN_OK) return st;
  const uint64_t out_end = a->out + M * N * os;
  if ((a->out < a->a + M * Kd * is && a->a < out_end) || (a->out < a->b + N * Kd * is && a->b < out_end))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.out: overlaps args.a or args.b");
  if (a->a % is || a->b % is || a->out % os)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args: a, b and out must be aligned to their element size");
  matmul::Params& p = plan->params;
  p.M = a->M;
  p.N = a->N;
  p.Kd = a->Kd;
  p.in_bf16 = a->in_dtype == GDN_BF16;
  p.out_bf16 = a->out_dtype == GDN_BF16;
  p.a = addr_ptr<const void>(a->a);
  p.b = addr_ptr<const void>(a->b);
  p.out = addr_ptr<void>(a->out);
  return GDN_OK;
}

}  // namespace gdn
