// timing.cu — running planned ops on the CUDA backend, and gdn_time_ops there: a CUDA event pair
// around each single launch; with flush_l2, a memset of 2 x L2 bytes before each launch, outside the
// events; with rotate_order, round r starts at op r mod n.
// graph_launches = G > 0: every op is captured once (before any timing) into a CUDA graph of G
// back-to-back launches; a sample is the event time of one replay of that graph divided by G. A
// short kernel's per-launch CPU/driver overhead then no longer sits between the events (only the
// one graph launch does, spread over G), and L2 is warm from the second launch on.
//
// The host runs ahead of the GPU in every sample (docs/BENCHMARKS.md, "Method"): after the flush, a
// hold kernel spins on the GPU's global timer while the host enqueues the start event, the launch and
// the stop event, so the GPU goes from start to launch to stop without waiting for the host. Whether
// that held is checked, not assumed: once the stop event is enqueued, the start event must not have
// been reached yet. A sample where it had is discarded and taken again with twice the hold. Without
// this, the events would count whatever the host spent between recording start and queuing the
// kernel — nothing much for a C launch, tens of µs for a Python one — and a baseline timed by another
// harness could not be compared with ours. bench/fair_timing.py applies the same rule to PyTorch and
// vLLM.
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
    case GDN_OP_FUSED: return fused_launch(b, op.fused);
    default: return fail(b, GDN_ERR_INTERNAL, "launch_op: op kind %d was not planned", (int)op.kind);
  }
}

namespace {

// Spins until `ns` nanoseconds of the GPU's global timer have passed. One thread: it occupies one SM
// slot and no memory bandwidth, and ends before the timed launch starts (stream order).
__global__ void hold_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(500);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

constexpr unsigned long long kMaxHoldNs = 20ull * 1000 * 1000;  // a host 20 ms late is an error, not a sample

// One timed sample on the backend's stream: [flush] → hold → start → launch(s) → stop, retaken with a
// longer hold until the host was ahead (the file's head). `launch` enqueues the timed work.
template <typename Launch>
gdn_status timed_sample(gdn_backend* b, bool flush, int fill, Launch launch, float* ms) {
  CudaState* cs = cuda_state(b);
  for (;;) {
    gdn_status st = GDN_OK;
    if (flush) st = cuda_check(b, cudaMemsetAsync(cs->flush, fill & 0xff, cs->flush_bytes, cs->stream), "time_ops: L2 flush");
    if (st != GDN_OK) return st;
    hold_kernel<<<1, 1, 0, cs->stream>>>(cs->hold_ns);
    st = cuda_check_launch(b, "time_ops: hold kernel");
    if (st == GDN_OK) st = cuda_check(b, cudaEventRecord(cs->ev_start, cs->stream), "time_ops: cudaEventRecord");
    if (st == GDN_OK) st = launch();
    if (st == GDN_OK) st = cuda_check(b, cudaEventRecord(cs->ev_stop, cs->stream), "time_ops: cudaEventRecord");
    if (st != GDN_OK) return st;
    // Reached already means the GPU may have waited for the host inside the timed region.
    const cudaError_t reached = cudaEventQuery(cs->ev_start);
    if (reached != cudaSuccess && reached != cudaErrorNotReady) return cuda_check(b, reached, "time_ops: cudaEventQuery");
    st = cuda_check(b, cudaEventSynchronize(cs->ev_stop), "time_ops: a timed launch failed");
    if (st == GDN_OK) st = cuda_check(b, cudaEventElapsedTime(ms, cs->ev_start, cs->ev_stop), "time_ops: cudaEventElapsedTime");
    if (st != GDN_OK) return st;
    if (reached == cudaErrorNotReady) return GDN_OK;
    ++cs->late_samples;
    if (cs->hold_ns >= kMaxHoldNs)
      return fail(b, GDN_ERR_DEVICE, "time_ops: the host fell behind the GPU even with a %llu us hold before the timed launch", cs->hold_ns / 1000);
    cs->hold_ns *= 2;
  }
}

// The graphs of one time_ops call; destroyed on every way out.
struct Graphs {
  std::vector<cudaGraphExec_t> execs;
  ~Graphs() {
    for (cudaGraphExec_t e : execs)
      if (e) cudaGraphExecDestroy(e);
  }
};

// Captures G launches of op into an executable graph. The op must only enqueue kernels and async
// copies on the backend's stream (launch_op does: planning and uploads happened before).
gdn_status capture(gdn_backend* b, const PlannedOp& op, int32_t G, cudaGraphExec_t* exec) {
  CudaState* cs = cuda_state(b);
  gdn_status st = cuda_check(b, cudaStreamBeginCapture(cs->stream, cudaStreamCaptureModeThreadLocal), "time_ops: cudaStreamBeginCapture");
  if (st != GDN_OK) return st;
  gdn_status launched = GDN_OK;
  for (int32_t g = 0; g < G && launched == GDN_OK; ++g) launched = launch_op(b, op);
  cudaGraph_t graph = nullptr;
  // End the capture even when a launch failed, so the stream leaves capture mode.
  st = cuda_check(b, cudaStreamEndCapture(cs->stream, &graph), "time_ops: cudaStreamEndCapture (a launch could not be captured)");
  if (launched != GDN_OK) {
    if (graph) cudaGraphDestroy(graph);
    return launched;
  }
  if (st != GDN_OK) return st;
  st = cuda_check(b, cudaGraphInstantiate(exec, graph, 0), "time_ops: cudaGraphInstantiate");
  cudaGraphDestroy(graph);
  return st;
}

}  // namespace

static gdn_status time_graphs(gdn_backend* b, const std::vector<PlannedOp>& ops, const gdn_timing_config& cfg, float* samples_us) {
  CudaState* cs = cuda_state(b);
  const int32_t n = (int32_t)ops.size();
  const int32_t G = cfg.graph_launches;
  Graphs graphs;
  graphs.execs.assign((size_t)n, nullptr);
  for (int32_t i = 0; i < n; ++i) {
    gdn_status st = capture(b, ops[(size_t)i], G, &graphs.execs[(size_t)i]);
    if (st != GDN_OK) return st;
    // One untimed replay: the first launch of an instantiated graph uploads it to the device.
    st = cuda_check(b, cudaGraphLaunch(graphs.execs[(size_t)i], cs->stream), "time_ops: cudaGraphLaunch (upload)");
    if (st != GDN_OK) return st;
  }
  gdn_status st = cuda_check(b, cudaStreamSynchronize(cs->stream), "time_ops: a graph replay failed");
  if (st != GDN_OK) return st;
  for (int32_t r = 0; r < cfg.rounds; ++r) {
    for (int32_t k = 0; k < n; ++k) {
      const int32_t i = cfg.rotate_order ? (r + k) % n : k;
      float ms = 0.0f;
      cudaGraphExec_t exec = graphs.execs[(size_t)i];
      st = timed_sample(b, cfg.flush_l2 != 0, r + k,
                        [&] { return cuda_check(b, cudaGraphLaunch(exec, cs->stream), "time_ops: cudaGraphLaunch"); }, &ms);
      if (st != GDN_OK) return st;
      samples_us[(size_t)r * n + i] = ms * 1000.0f / (float)G;
    }
  }
  return cuda_check(b, cudaStreamSynchronize(cs->stream), "time_ops: synchronize");
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
  if (cfg.graph_launches < 0 || cfg.graph_launches > 1000)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "cfg.graph_launches: must be in 0..1000, got %d", (int)cfg.graph_launches);
  if (cfg.graph_launches > 0) return time_graphs(b, ops, cfg, samples_us);
  for (int32_t r = 0; r < cfg.rounds; ++r) {
    for (int32_t k = 0; k < n; ++k) {
      const int32_t i = cfg.rotate_order ? (r + k) % n : k;
      float ms = 0.0f;
      const PlannedOp& op = ops[(size_t)i];
      st = timed_sample(b, cfg.flush_l2 != 0, r + k, [&] { return launch_op(b, op); }, &ms);
      if (st != GDN_OK) return st;
      samples_us[(size_t)r * n + i] = ms * 1000.0f;
    }
  }
  return cuda_check(b, cudaStreamSynchronize(cs->stream), "time_ops: synchronize");
}

}  // namespace cuda
}  // namespace gdn
