// backend_ops.h — what each backend implements for the API layer (common/api.cpp): memory, device
// facts, and running planned ops. host/ implements gdn::host, cuda/ implements gdn::cuda (only in
// builds with GDN_HAVE_CUDA). Plain C++: no CUDA types here.
#pragma once

#include "common/backend.h"
#include "common/conv_plan.h"
#include "common/fused_plan.h"
#include "common/internal.h"
#include "common/matmul_plan.h"
#include "common/postconv_plan.h"

#include <string>
#include <vector>

namespace gdn {

// One op of gdn_time_ops, validated and planned once before the timed rounds.
struct PlannedOp {
  int32_t kind = GDN_OP_NONE;
  ConvPlan conv;
  UpdatePlan update;
  PostconvPlan postconv;
  gdn_copy_args copy{};
  FusedPlan fused;
};

// One buffer of gdn_buffers_alloc_filled: words 32-bit words at addr, each set to pattern.
struct FillRange {
  uint64_t addr = 0;
  uint64_t words = 0;
  uint32_t pattern = 0;
};

namespace host {
// Segments of host memory for the backend's buffer cache (host/host_backend.cpp).
SegmentSource segment_source(gdn_backend* b);
// Maps / unmaps anonymous pages: the one place the host backend's memory comes from.
void* map_pages(uint64_t bytes);
void unmap_pages(uint64_t addr, uint64_t bytes);
gdn_status device_info(gdn_backend* b, gdn_device_info* info);
// The op families on the host backend (host/replay_host.cpp): every arm through the one replay loop.
gdn_status conv_run(gdn_backend* b, const ConvPlan& plan);
gdn_status update_run(gdn_backend* b, const UpdatePlan& plan);
gdn_status postconv_run(gdn_backend* b, const PostconvPlan& plan);
void matmul_run(const MatmulPlan& plan);
// The fused op's blocks in forward order, threads as fibers (its body shuffles); a fault names the op.
gdn_status fused_run(gdn_backend* b, const FusedPlan& plan);
// Runs one planned op (blocks in the plan's order); used by the API and the timing loop.
gdn_status run_op(gdn_backend* b, const PlannedOp& op);
gdn_status time_ops(gdn_backend* b, const std::vector<PlannedOp>& ops, const gdn_timing_config& cfg, float* samples_us);
}  // namespace host

#if GDN_HAVE_CUDA
namespace cuda {
// Usable devices; *why receives the runtime's reason when there are none.
int32_t device_count(std::string* why);
gdn_status open(gdn_backend* b, int32_t ordinal);
void close(gdn_backend* b);  // frees the stream, the flush buffer and (via the registry) every buffer
gdn_status device_info(gdn_backend* b, gdn_device_info* info);
// Segments of device memory (cudaMalloc / cudaFree) for the backend's buffer cache.
SegmentSource segment_source(gdn_backend* b);
gdn_status upload(gdn_backend* b, uint64_t dst, const void* src, uint64_t bytes);
gdn_status download(gdn_backend* b, void* dst, uint64_t src, uint64_t bytes);
// Fills n ranges, enqueued on the stream as one launch per kFillRangesPerLaunch ranges.
gdn_status fill_ranges_u32(gdn_backend* b, const FillRange* ranges, uint32_t n);
gdn_status copy(gdn_backend* b, uint64_t dst, uint64_t src, uint64_t bytes);  // enqueued on the stream
gdn_status synchronize(gdn_backend* b);
// Copies the plan's program list (and host offsets) to the device, unless one sequence needs none.
gdn_status conv_prepare(gdn_backend* b, ConvPlan* plan);
// Enqueue one planned op on the backend's stream (no synchronisation).
gdn_status conv_launch(gdn_backend* b, const ConvPlan& plan);
gdn_status update_prepare(gdn_backend* b, UpdatePlan* plan);  // uploads a long host copy of the slots
gdn_status update_launch(gdn_backend* b, const UpdatePlan& plan);
gdn_status postconv_launch(gdn_backend* b, const PostconvPlan& plan);
gdn_status matmul_launch(gdn_backend* b, const MatmulPlan& plan);
// Copies the fused plan's program list to the device (once per plan), then enqueues the op.
gdn_status fused_prepare(gdn_backend* b, FusedPlan* plan);
gdn_status fused_launch(gdn_backend* b, const FusedPlan& plan);
gdn_status launch_op(gdn_backend* b, const PlannedOp& op);
gdn_status time_ops(gdn_backend* b, const std::vector<PlannedOp>& ops, const gdn_timing_config& cfg, float* samples_us);
}  // namespace cuda
#endif

}  // namespace gdn
