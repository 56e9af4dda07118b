// postconv.cu — the post-conv kernels (DOMAIN.md §4) on the CUDA backend.
//
// Arms (the per-thread arithmetic is in common/postconv_kernels.h, shared with the host replay):
//   tree        one block per (token, head slot); the sum of squares is a shared-memory tree over
//               the next power of two >= Dk lanes. The reference.
//   token-tile  one block of 4 warps per (head slot, 16 tokens), 4 tokens per warp. Lane l loads
//               features l, l+32, l+64, l+96, folds them as the tree's first two levels and
//               finishes with xor shuffles 16..1, the tree's remaining levels: the same bits as
//               tree. Value slots are a 16-byte-vector convert-copy; one more slot per token tile
//               computes the gates. Slots vary fastest in the grid (see postconv_kernels.h).
//   seq4        PLANTED MUTANT: the token tile with the sequential lane fold ((x0²+x1²)+x2²)+x3².
#include "common/internal.h"
#include "common/postconv_kernels.h"
#include "cuda/cuda_util.h"

#include <cuda_runtime.h>

namespace gdn {
namespace {

using namespace postconv;

// ----------------------------------------------------------------- tree
template <class TC, class TQ, class TG>
__global__ void postconv_tree_kernel(Params p) {
  __shared__ float nodes[kMaxD];
  const int64_t t = blockIdx.x;
  const Slot s = decode_slot(p, blockIdx.y);
  const int tid = threadIdx.x;
  if (s.kind == kSlotV) {
    tree_value_thread<TC, TQ, TG>(p, s, t, tid, blockDim.x);
    return;
  }
  const int width = tree_width(s.width);
  const float x = tid < s.width ? slot_x<TC>(p, s, t, tid) : 0.0f;
  if (tid < width) nodes[tid] = tree_leaf(x, tid, s.width);
  for (int stride = width / 2; stride >= 1; stride /= 2) {
    __syncthreads();
    if (tid < stride) tree_level(nodes, tid, stride);
  }
  __syncthreads();
  tree_store<TQ>(s, t, tid, x, nodes[0]);
}

// ----------------------------------------------------------------- token tile (and seq4)
// Read-only loads through the non-coherent cache; loads are exact, stores round once (from_f32).
__device__ inline float load_ro(const float* p) { return __ldg(p); }
__device__ inline float load_ro(const uint16_t* p) { return to_f32(__ldg(p)); }

// q/k slot, one warp, `tokens` (<= 4, warp-uniform) tokens from tw. Lane l loads features l, l+32,
// l+64, l+96 of every token first (16 independent loads in flight), then per token: the lane fold,
// five xor-shuffle levels 16..1, l2_inv, and the stores. Measured on an H200, these lane-strided
// loads beat staging the rows through shared memory with 16-byte vectors (by 2-5%).
template <class TC, class TQ, bool kSeq4>
__device__ inline void tile_qk_warp(const Params& p, const Slot& s, int64_t tw, int tokens, int lane) {
  const TC* src = static_cast<const TC*>(p.conv) + tw * p.C + s.src_col + lane;
  TQ* dst = static_cast<TQ*>(s.dst) + tw * s.dst_row + s.dst_col + lane;
  float x[kWarpTokens][4];
#pragma unroll
  for (int j = 0; j < kWarpTokens; ++j)
#pragma unroll
    for (int m = 0; m < 4; ++m) if (j < tokens) x[j][m] = load_ro(src + j * p.C + 32 * m);
#pragma unroll
  for (int j = 0; j < kWarpTokens; ++j) {
    if (j < tokens) {
      float sum = lane_fold<kSeq4>(x[j][0], x[j][1], x[j][2], x[j][3]);
#pragma unroll
      for (int offset = kFirstShuffle; offset >= 1; offset /= 2)
        sum = sum + __shfl_xor_sync(0xffffffffu, sum, offset);
      const float inv = l2_inv(sum);
#pragma unroll
      for (int m = 0; m < 4; ++m) dst[j * s.dst_row + 32 * m] = from_f32<TQ>(x[j][m] * inv);
    }
  }
}

// Value slot, one warp: a convert-copy of `tokens` rows of 128 features in chunks of 8 (16 per
// row, 2 per lane). With 16-byte-aligned conv_out and v (kVec, from p.vec16) a chunk is one 16-byte
// access for bf16 and two for f32; otherwise element by element. kVec is a template parameter: a
// run-time test cost 10% on an H200 (bf16, T = 8192..32768).
__device__ inline void load8(const float* src, float x[8], bool vec) {
  if (vec) {
    const float4 lo = __ldg(reinterpret_cast<const float4*>(src));
    const float4 hi = __ldg(reinterpret_cast<const float4*>(src) + 1);
    x[0] = lo.x; x[1] = lo.y; x[2] = lo.z; x[3] = lo.w;
    x[4] = hi.x; x[5] = hi.y; x[6] = hi.z; x[7] = hi.w;
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = load_ro(src + i);
  }
}
__device__ inline void load8(const uint16_t* src, float x[8], bool vec) {
  if (vec) {
    const uint4 w = __ldg(reinterpret_cast<const uint4*>(src));
    const uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      x[2 * i] = to_f32((uint16_t)(words[i] & 0xffffu));
      x[2 * i + 1] = to_f32((uint16_t)(words[i] >> 16));
    }
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) x[i] = load_ro(src + i);
  }
}
__device__ inline void store8(float* dst, const float y[8], bool vec) {
  if (vec) {
    reinterpret_cast<float4*>(dst)[0] = make_float4(y[0], y[1], y[2], y[3]);
    reinterpret_cast<float4*>(dst)[1] = make_float4(y[4], y[5], y[6], y[7]);
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[i] = y[i];
  }
}
__device__ inline void store8(uint16_t* dst, const float y[8], bool vec) {
  if (vec) {
    uint32_t words[4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      words[i] = (uint32_t)from_f32<uint16_t>(y[2 * i]) | ((uint32_t)from_f32<uint16_t>(y[2 * i + 1]) << 16);
    *reinterpret_cast<uint4*>(dst) = make_uint4(words[0], words[1], words[2], words[3]);
  } else {
#pragma unroll
    for (int i = 0; i < 8; ++i) dst[i] = from_f32<uint16_t>(y[i]);
  }
}

constexpr int kChunk = 8;
constexpr int kRowChunks = kTileD / kChunk;                  // 16
constexpr int kLaneChunks = kWarpTokens * kRowChunks / 32;  // 2

template <class TC, class TQ, bool kVec>
__device__ inline void tile_value_warp(const Params& p, const Slot& s, int64_t tw, int tokens, int lane) {
  constexpr bool vec = kVec;
  const TC* src = static_cast<const TC*>(p.conv) + tw * p.C + s.src_col;
  TQ* dst = static_cast<TQ*>(s.dst) + tw * s.dst_row + s.dst_col;
  float x[kLaneChunks][kChunk];
#pragma unroll
  for (int r = 0; r < kLaneChunks; ++r) {  // all loads first
    const int c = lane + 32 * r;
    if (c < tokens * kRowChunks) load8(src + (c / kRowChunks) * p.C + (c % kRowChunks) * kChunk, x[r], vec);
  }
#pragma unroll
  for (int r = 0; r < kLaneChunks; ++r) {
    const int c = lane + 32 * r;
    if (c < tokens * kRowChunks) store8(dst + (c / kRowChunks) * s.dst_row + (c % kRowChunks) * kChunk, x[r], vec);
  }
}

// Block (x, y): slot x % slots, token tile (x / slots) * gridDim.y + y (tile_block_coords). One tile
// per block and no loop: a grid-stride loop over tiles kept values live across iterations and took
// the kernel to 71 registers (7 blocks per SM, 25% slower on an H200). 32 registers give the full
// 16 blocks (64 warps) per SM without spills.
template <class TC, class TQ, class TG, bool kSeq4, bool kVec>
__global__ void __launch_bounds__(kTileThreads, 16) postconv_tile_kernel(Params p) {
  const TileBlock b = tile_block_coords(p, blockIdx.x, blockIdx.y, gridDim.y);
  const Slot s = decode_slot(p, b.slot);
  const int64_t t0 = b.tile * kTileTokens;
  if (s.kind == kSlotGates) {
    tile_gates_thread<TG>(p, t0, threadIdx.x);
    return;
  }
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int64_t tw = t0 + (int64_t)warp * kWarpTokens;
  const int tokens = tile_tokens(p, tw, kWarpTokens);  // warp-uniform: every lane takes part in the shuffles
  if (tokens == 0) return;
  if (s.kind == kSlotV) tile_value_warp<TC, TQ, kVec>(p, s, tw, tokens, lane);
  else tile_qk_warp<TC, TQ, kSeq4>(p, s, tw, tokens, lane);
}

}  // namespace

gdn_status postconv_launch_cuda(gdn_backend* backend, const gdn_postconv_args* args, const gdn_postconv_result* plan) {
  if (args == nullptr || plan == nullptr)
    return fail(backend, GDN_ERR_INTERNAL, "postconv_launch_cuda: args and plan are required (from postconv_plan)");
  const int32_t arm = plan->arm_ran;
  if (arm != GDN_POSTCONV_TREE && arm != GDN_POSTCONV_TOKEN_TILE && arm != GDN_POSTCONV_SEQ4)
    return fail(backend, GDN_ERR_INTERNAL, "postconv_launch_cuda: plan.arm_ran = %d is not a post-conv arm", (int)arm);
  if (plan->grid_x == 0 || plan->grid_y == 0) return GDN_OK;  // T = 0: nothing to launch
  const gdn_status bound = cuda_bind(backend);  // koffi may call from a worker thread
  if (bound != GDN_OK) return bound;
  const Params p = make_params(*args);
  const dim3 grid((unsigned)plan->grid_x, (unsigned)plan->grid_y);
  const dim3 block((unsigned)plan->threads_per_block);
  cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream(backend));
  const char* kernel = arm == GDN_POSTCONV_TREE         ? "postconv tree kernel"
                       : arm == GDN_POSTCONV_TOKEN_TILE ? "postconv token-tile kernel"
                                                        : "postconv seq4 kernel";
  dispatch_dtypes(args->conv_dtype, args->qkv_dtype, args->gate_dtype, [&](auto tc, auto tq, auto tg) {
    using TC = typename decltype(tc)::type;
    using TQ = typename decltype(tq)::type;
    using TG = typename decltype(tg)::type;
    const bool seq4 = arm == GDN_POSTCONV_SEQ4;
    const bool vec = p.vec16 != 0;
    if (arm == GDN_POSTCONV_TREE) postconv_tree_kernel<TC, TQ, TG><<<grid, block, 0, stream>>>(p);
    else if (!seq4 && vec) postconv_tile_kernel<TC, TQ, TG, false, true><<<grid, block, 0, stream>>>(p);
    else if (!seq4) postconv_tile_kernel<TC, TQ, TG, false, false><<<grid, block, 0, stream>>>(p);
    else if (vec) postconv_tile_kernel<TC, TQ, TG, true, true><<<grid, block, 0, stream>>>(p);
    else postconv_tile_kernel<TC, TQ, TG, true, false><<<grid, block, 0, stream>>>(p);
  });
  return cuda_check_launch(backend, kernel);
}

}  // namespace gdn
