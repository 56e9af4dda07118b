// timing.cu — running planned ops on the CUDA backend, and gdn_time_ops there: a CUDA event pair
// around each single launch; with flush_l2, a memset of 2 x L2 bytes before each launch, outside the
// events; with rotate_order, round r starts at op r mod n.
#include "common/backend_ops.h"
#include "cuda/cuda_util.h"

namespace gdn {
namespace cuda {

gdn_status launch_op(gdn_backend* b, const PlannedOp& op) {
  switch (op.kind) {
    case GDN_OP_CONV: return conv_launch(b, op.conv);
    case GDN_OP_CONV_UPDATE: return update_launch(b, op.update);
    case GDN_OP_POSTCONV: return postconv_launch(b, op.postconv);
    case GDN_OP_COPY: return copy(b, op.copy.dst, op.copy.src, op.copy.bytes);
    default: return fail(b, GDN_ERR_INTERNAL, "launch_op: op kind %d was not planned", (int)op.kind);
  }
}

gdn_status time_ops(gdn_backend* b, const std::vector<PlannedOp>& ops, const gdn_timing_config& cfg, float* samples_us) {
  gdn_status st = cuda_bind(b);
  if (st != GDN_OK) return st;
  CudaState* cs = cuda_state(b);
  if (cfg.flush_l2 && cs->flush == nullptr) {
    const size_t bytes = (size_t)(cs->l2_bytes > 0 ? cs->l2_bytes : (64 << 20)) * 2;
    st = cuda_check(b, cudaMalloc(&cs->flush, bytes), "time_ops: cudaMalloc of the L2 flush buffer");
    if (st != GDN_OK) {
      cs->flush = nullptr;
      return st;
    }
    cs->flush_bytes = bytes;
  }
  const int32_t n = (int32_t)ops.size();
  for (int32_t r = 0; r < cfg.rounds; ++r) {
    for (int32_t k = 0; k < n; ++k) {
      const int32_t i = cfg.rotate_order ? (r + k) % n : k;
      if (cfg.flush_l2) {
        st = cuda_check(b, cudaMemsetAsync(cs->flush, (r + k) & 0xff, cs->flush_bytes, cs->stream), "time_ops: L2 flush");
        if (st != GDN_OK) return st;
      }
      st = cuda_check(b, cudaEventRecord(cs->ev_start, cs->stream), "time_ops: cudaEventRecord");
      if (st == GDN_OK) st = launch_op(b, ops[(size_t)i]);
      if (st == GDN_OK) st = cuda_check(b, cudaEventRecord(cs->ev_stop, cs->stream), "time_ops: cudaEventRecord");
      if (st == GDN_OK) st = cuda_check(b, cudaEventSynchronize(cs->ev_stop), "time_ops: a timed launch failed");
      float ms = 0.0f;
      if (st == GDN_OK) st = cuda_check(b, cudaEventElapsedTime(&ms, cs->ev_start, cs->ev_stop), "time_ops: cudaEventElapsedTime");
      if (st != GDN_OK) return st;
      samples_us[(size_t)r * n + i] = ms * 1000.0f;
    }
  }
  return cuda_check(b, cudaStreamSynchronize(cs->stream), "time_ops: synchronize");
}

}  // namespace cuda
}  // namespace gdn
