// postconv_host.cpp — the host backend's replay of the post-conv kernels (cuda/postconv.cu).
//
// Not a second implementation: it walks the planned grid (blocks in forward order, linear index
// y * grid_x + x), and inside a block the same threads, warps and lanes as the GPU, calling the
// per-thread bodies of common/postconv_kernels.h. A block barrier becomes the end of a loop over
// threads; a warp shuffle becomes a read of the other lane's value from the previous level. Data
// movement is element by element (the GPU's 16-byte vector copies of value heads move bits, never
// change them).
#include "common/internal.h"
#include "common/postconv_kernels.h"

namespace gdn {
namespace {

using namespace postconv;

// ----------------------------------------------------------------- tree arm
template <class TC, class TQ, class TG>
void tree_block(const Params& p, int threads, int64_t t, int64_t slot_index) {
  const Slot s = decode_slot(p, slot_index);
  if (s.kind == kSlotV) {
    for (int tid = 0; tid < threads; ++tid) tree_value_thread<TC, TQ, TG>(p, s, t, tid, threads);
    return;
  }
  // q/k slot. Phase 1: thread tid loads feature tid and writes its leaf.
  const int width = tree_width(s.width);
  float x[kMaxD];
  float nodes[kMaxD];
  for (int tid = 0; tid < threads; ++tid) {
    x[tid] = tid < s.width ? slot_x<TC>(p, s, t, tid) : 0.0f;
    if (tid < width) nodes[tid] = tree_leaf(x[tid], tid, s.width);
  }
  // Phase 2: the levels, a barrier after each.
  for (int stride = width / 2; stride >= 1; stride /= 2)
    for (int tid = 0; tid < stride; ++tid) tree_level(nodes, tid, stride);
  // Phase 3: every thread reads node 0 and stores its normalised feature.
  for (int tid = 0; tid < threads; ++tid) tree_store<TQ>(s, t, tid, x[tid], nodes[0]);
}

template <class TC, class TQ, class TG>
void run_tree(const Params& p, const gdn_postconv_result& plan) {
  const int64_t gx = plan.grid_x, gy = plan.grid_y;
  for (int64_t block = 0; block < gx * gy; ++block)
    tree_block<TC, TQ, TG>(p, plan.threads_per_block, block % gx, block / gx);
}

// ----------------------------------------------------------------- token-tile arms
// q/k slot, one warp: lane l holds features l, l+32, l+64, l+96 of each of its tokens.
template <class TC, class TQ, bool kSeq4>
void tile_qk_warp(const Params& p, const Slot& s, int64_t tw, int tokens) {
  for (int j = 0; j < tokens; ++j) {
    const int64_t t = tw + j;
    float x[32][4];
    for (int lane = 0; lane < 32; ++lane)
      for (int m = 0; m < 4; ++m) x[lane][m] = slot_x<TC>(p, s, t, lane + 32 * m);
    float sum[32];
    for (int lane = 0; lane < 32; ++lane) sum[lane] = lane_fold<kSeq4>(x[lane][0], x[lane][1], x[lane][2], x[lane][3]);
    // __shfl_xor_sync levels: every lane adds the previous level's value of lane ^ offset
    for (int offset = kFirstShuffle; offset >= 1; offset /= 2) {
      float prev[32];
      for (int lane = 0; lane < 32; ++lane) prev[lane] = sum[lane];
      for (int lane = 0; lane < 32; ++lane) sum[lane] = prev[lane] + prev[lane ^ offset];
    }
    for (int lane = 0; lane < 32; ++lane) {
      const float inv = l2_inv(sum[lane]);
      for (int m = 0; m < 4; ++m) slot_store<TQ>(s, t, lane + 32 * m, x[lane][m] * inv);
    }
  }
}

// Value slot, one warp: the convert-copy (the GPU moves it in 16-byte chunks; the values are the same).
template <class TC, class TQ>
void tile_value_warp(const Params& p, const Slot& s, int64_t tw, int tokens) {
  for (int j = 0; j < tokens; ++j)
    for (int i = 0; i < kTileD; ++i) slot_store<TQ>(s, tw + j, i, slot_x<TC>(p, s, tw + j, i));
}

// Block (x, y) of the plan's grid: one (slot, 16-token tile), like the GPU's.
template <class TC, class TQ, class TG, bool kSeq4>
void tile_block(const Params& p, uint32_t x, uint32_t y, uint32_t rows) {
  const TileBlock b = tile_block_coords(p, x, y, rows);
  const Slot s = decode_slot(p, b.slot);
  const int64_t t0 = b.tile * kTileTokens;
  if (s.kind == kSlotGates) {
    for (int tid = 0; tid < kTileThreads; ++tid) tile_gates_thread<TG>(p, t0, tid);
    return;
  }
  for (int warp = 0; warp < kTileWarps; ++warp) {
    const int64_t tw = t0 + (int64_t)warp * kWarpTokens;
    const int tokens = tile_tokens(p, tw, kWarpTokens);
    if (tokens == 0) continue;
    if (s.kind == kSlotV) tile_value_warp<TC, TQ>(p, s, tw, tokens);
    else tile_qk_warp<TC, TQ, kSeq4>(p, s, tw, tokens);
  }
}

template <class TC, class TQ, class TG, bool kSeq4>
void run_tile(const Params& p, const gdn_postconv_result& plan) {
  const int64_t gx = plan.grid_x, gy = plan.grid_y;
  for (int64_t block = 0; block < gx * gy; ++block)
    tile_block<TC, TQ, TG, kSeq4>(p, (uint32_t)(block % gx), (uint32_t)(block / gx), (uint32_t)gy);
}

}  // namespace

gdn_status postconv_run_host(gdn_backend* backend, const gdn_postconv_args* args, const gdn_postconv_result* plan) {
  if (args == nullptr || plan == nullptr)
    return fail(backend, GDN_ERR_INTERNAL, "postconv_run_host: args and plan are required (from postconv_plan)");
  const Params p = make_params(*args);
  const gdn_postconv_result& pl = *plan;
  const int32_t arm = pl.arm_ran;
  if (arm != GDN_POSTCONV_TREE && arm != GDN_POSTCONV_TOKEN_TILE && arm != GDN_POSTCONV_SEQ4)
    return fail(backend, GDN_ERR_INTERNAL, "postconv_run_host: plan.arm_ran = %d is not a post-conv arm", (int)arm);
  dispatch_dtypes(args->conv_dtype, args->qkv_dtype, args->gate_dtype, [&](auto tc, auto tq, auto tg) {
    using TC = typename decltype(tc)::type;
    using TQ = typename decltype(tq)::type;
    using TG = typename decltype(tg)::type;
    if (arm == GDN_POSTCONV_TREE) run_tree<TC, TQ, TG>(p, pl);
    else if (arm == GDN_POSTCONV_TOKEN_TILE) run_tile<TC, TQ, TG, false>(p, pl);
    else run_tile<TC, TQ, TG, true>(p, pl);
  });
  return GDN_OK;
}

}  // namespace gdn
