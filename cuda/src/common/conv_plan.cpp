// conv_plan.cpp — validates the causal-conv ops and plans their launches. Every rejection names the
// field and what was expected; nothing reaches a kernel unchecked. What each arm's launch is made of
// comes from its registry entry (common/registry.h): threads, channel tile, chunk length, shared
// memory, mappings and the fallback rule.
#include "common/conv_plan.h"

#include "common/backend.h"

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <string>

namespace gdn {
namespace {

bool is_float_dtype(int32_t d) { return d == GDN_F32 || d == GDN_BF16; }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

std::string mutant_list() {
  std::string s;
  for (int32_t m = 0; m < GDN_CONV_MUTANT_COUNT; ++m) s += (m ? ", " : "") + std::to_string(m) + " " + gdn_conv_mutant_name(m);
  return s;
}

// Validates a host copy of query_start_loc: 0 = qsl[0] <= ... <= qsl[N] (= T when T >= 0 is given).
gdn_status check_qsl(gdn_backend* b, const int32_t* qsl, int32_t n, int64_t T, const char* what) {
  if (qsl[0] != 0) return fail(b, GDN_ERR_INVALID_ARGUMENT, "%s: must start at 0, got %d", what, (int)qsl[0]);
  for (int32_t s = 0; s < n; ++s)
    if (qsl[s + 1] < qsl[s])
      return fail(b, GDN_ERR_INVALID_ARGUMENT,
                  "%s: must be non-decreasing, but entry %d = %d is below entry %d = %d (sequence %d would have "
                  "negative length)",
                  what, (int)s + 1, (int)qsl[s + 1], (int)s, (int)qsl[s], (int)s);
  if (T >= 0 && qsl[n] != T)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "%s: must end at T = %" PRId64 ", got %d", what, T, (int)qsl[n]);
  return GDN_OK;
}

}  // namespace

// ----------------------------------------------------------------- launch contract
gdn_status load_query_start_loc(gdn_backend* b, const int32_t* host, gdn_addr device, int64_t N, int64_t T,
                                std::vector<int32_t>* qsl) {
  if (host != nullptr && device != 0)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.query_start_loc: must be 0 when args.query_start_loc_host is given (one source of the offsets), "
                "got 0x%" PRIx64,
                device);
  qsl->assign((size_t)N + 1, 0);
  if (host != nullptr) {
    std::memcpy(qsl->data(), host, ((size_t)N + 1) * sizeof(int32_t));
    return check_qsl(b, qsl->data(), (int32_t)N, T, "args.query_start_loc_host");
  }
  const gdn_status st = read_to_host(b, qsl->data(), device, ((uint64_t)N + 1) * 4, "args.query_start_loc");
  if (st != GDN_OK) return st;
  return check_qsl(b, qsl->data(), (int32_t)N, T, "args.query_start_loc");
}

gdn_status conv_contract(gdn_backend* b, int32_t arm, int32_t mapping, int64_t C, int64_t K, const int32_t* qsl,
                         int32_t num_seqs, bool vec_ok, gdn_launch_contract* ct, std::vector<int32_t>* programs,
                         registry::EntryRef* ran) {
  if (!registry::get(registry::kConv, arm))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "arm: must be a conv arm id (%s), got %d",
                registry::id_list(registry::kConv).c_str(), (int)arm);
  if (mapping < 0 || mapping >= GDN_MAP_COUNT)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "mapping: must be a gdn_conv_mapping (0 exact, 1 exact-racy, 2 sequence), got %d", (int)mapping);
  if (C < 1 || C > (int64_t(1) << 30))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "C: must be in 1..2^30, got %" PRId64, C);
  if (K < 2 || K > GDN_CONV_MAX_K)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "K: must be in 2..%d, got %" PRId64, GDN_CONV_MAX_K, K);
  if (num_seqs < 1) return fail(b, GDN_ERR_INVALID_ARGUMENT, "num_seqs: must be >= 1, got %d", (int)num_seqs);
  if (qsl == nullptr) return fail(b, GDN_ERR_INVALID_ARGUMENT, "query_start_loc: is null");
  gdn_status st = check_qsl(b, qsl, num_seqs, -1, "query_start_loc");
  if (st != GDN_OK) return st;

  // The fallback chain: an arm whose fixed K or data requirement fails runs its fallback arm.
  const registry::EntryRef e = registry::resolve(registry::kConv, arm, [&](const gdn_arm_info& i) {
    return (i.fixed_k == 0 || i.fixed_k == K) && (!(i.data_requires & GDN_ARM_REQ_VEC8) || vec_ok);
  });
  const gdn_arm_info& info = e->info;
  const bool whole_sequences = !(info.mappings & (1 << mapping)) || mapping == GDN_MAP_SEQUENCE;

  std::memset(ct, 0, sizeof *ct);
  ct->arm_ran = info.id;
  ct->mapping_ran = whole_sequences ? GDN_MAP_SEQUENCE : mapping;
  ct->threads_per_block = info.threads_per_block;
  ct->channels_per_block = info.per_block;
  ct->channel_tiles = (int32_t)ceil_div(C, ct->channels_per_block);
  ct->shared_bytes = (int32_t)e->shared_bytes(K);
  if (ran) *ran = e;

  int64_t n_programs = num_seqs;
  if (programs) programs->clear();
  if (whole_sequences) {
    ct->tokens_per_program = 0;
  } else {
    // Many short sequences (on average fewer than two programs' worth of tokens each) run in the
    // arm's shorter programs where it declares them: fewer ragged last programs. Measured for
    // `stream` on an H200 (tile_tune set 6, one run): 32-token programs took 10-11% less time than 64
    // on the 32-sequence varlen batches of 2048 tokens and 8% more on one 4B 2048-token sequence
    // (CHANGELOG 2026-12-01, 8ea8210). Only the exact mapping: the exact-racy mapping keeps
    // the declared length (the #305 lessons use it).
    int32_t chunk = info.tokens_per_program;
    const int64_t batch_tokens = qsl[num_seqs] - qsl[0];
    if (e->short_batch_tokens_per_program > 0 && mapping == GDN_MAP_EXACT &&
        batch_tokens < 2 * (int64_t)chunk * num_seqs)
      chunk = e->short_batch_tokens_per_program;
    ct->tokens_per_program = chunk;
    n_programs = 0;
    for (int32_t s = 0; s < num_seqs; ++s) n_programs += ceil_div(qsl[s + 1] - qsl[s], chunk);
    if (programs) {
      programs->reserve((size_t)n_programs * 2);
      for (int32_t s = 0; s < num_seqs; ++s) {
        const int64_t n = ceil_div(qsl[s + 1] - qsl[s], chunk);
        for (int64_t k = 0; k < n; ++k) {
          programs->push_back(s);
          programs->push_back((int32_t)k);
        }
      }
    }
  }
  if (n_programs * ct->channel_tiles > INT32_MAX)
    return fail(b, GDN_ERR_UNSUPPORTED,
                "launch: %" PRId64 " programs x %d channel tiles exceeds the 2^31-1 blocks of one launch", n_programs,
                (int)ct->channel_tiles);
  ct->programs = (int32_t)n_programs;
  ct->grid_x = ct->channel_tiles;
  ct->grid_y = (int32_t)n_programs;
  ct->grid_z = 1;
  return GDN_OK;
}

// ----------------------------------------------------------------- schedule
namespace {
// splitmix64 (Steele, Lea, Flood 2014): the published constants; a seed gives one permutation on
// every machine.
uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

gdn_status build_schedule(gdn_backend* b, const gdn_schedule& sc, int64_t blocks, std::vector<int64_t>* order) {
  order->resize((size_t)blocks);
  for (int64_t i = 0; i < blocks; ++i) (*order)[(size_t)i] = i;
  switch (sc.kind) {
    case GDN_SCHED_FORWARD: return GDN_OK;
    case GDN_SCHED_REVERSE: std::reverse(order->begin(), order->end()); return GDN_OK;
    case GDN_SCHED_SHUFFLE: {
      // Fisher-Yates from the back: swap entry i with a uniformly drawn j in [0, i] (modulo draw).
      uint64_t state = sc.seed;
      for (int64_t i = blocks - 1; i > 0; --i) {
        const int64_t j = (int64_t)(splitmix64(&state) % (uint64_t)(i + 1));
        std::swap((*order)[(size_t)i], (*order)[(size_t)j]);
      }
      return GDN_OK;
    }
    case GDN_SCHED_EXPLICIT: {
      if (sc.order_len != blocks)
        return fail(b, GDN_ERR_INVALID_ARGUMENT,
                    "args.schedule.order_len: must equal the launch's block count %" PRId64 ", got %d", blocks,
                    (int)sc.order_len);
      if (blocks > 0 && sc.order == nullptr)
        return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.schedule.order: is null but %" PRId64 " entries are needed", blocks);
      std::vector<char> seen((size_t)blocks, 0);
      for (int64_t i = 0; i < blocks; ++i) {
        const int32_t v = sc.order[i];
        if (v < 0 || v >= blocks)
          return fail(b, GDN_ERR_INVALID_ARGUMENT,
                      "args.schedule.order: entry %" PRId64 " = %d is not a block index in 0..%" PRId64, i, (int)v,
                      blocks - 1);
        if (seen[(size_t)v])
          return fail(b, GDN_ERR_INVALID_ARGUMENT,
                      "args.schedule.order: block %d appears twice (entry %" PRId64 "); it must be a permutation", (int)v, i);
        seen[(size_t)v] = 1;
        (*order)[(size_t)i] = v;
      }
      return GDN_OK;
    }
    default:
      return fail(b, GDN_ERR_INVALID_ARGUMENT,
                  "args.schedule.kind: must be 0 forward, 1 reverse, 2 shuffle or 3 explicit, got %d", (int)sc.kind);
  }
}

// ----------------------------------------------------------------- prefill plan
gdn_status conv_plan(gdn_backend* b, const gdn_conv_args* a, ConvPlan* plan) {
  if (a == nullptr) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args: is null");
  const bool cuda = backend_is_cuda(b);
  if (!registry::get(registry::kConv, a->arm))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.arm: must be a conv arm id (%s), got %d",
                registry::id_list(registry::kConv).c_str(), (int)a->arm);
  if (a->mapping < 0 || a->mapping >= GDN_MAP_COUNT)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.mapping: must be a gdn_conv_mapping (0 exact, 1 exact-racy, 2 sequence), got %d", (int)a->mapping);
  if (a->mutant < 0 || a->mutant >= GDN_CONV_MUTANT_COUNT)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.mutant: must be a gdn_conv_mutant (%s), got %d",
                mutant_list().c_str(), (int)a->mutant);
  if (!is_float_dtype(a->x_dtype))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.x_dtype: must be F32 (0) or BF16 (1), got %d (%s)", (int)a->x_dtype,
                dtype_name(a->x_dtype));
  if (!is_float_dtype(a->out_dtype))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.out_dtype: must be F32 (0) or BF16 (1), got %d (%s)",
                (int)a->out_dtype, dtype_name(a->out_dtype));
  if (a->has_initial_state != 0 && a->his_dtype != GDN_I8 && a->his_dtype != GDN_I32)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.his_dtype: must be I8 (4) or I32 (3), got %d (%s)",
                (int)a->his_dtype, dtype_name(a->his_dtype));
  if (a->K < 2 || a->K > GDN_CONV_MAX_K)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.K: must be in 2..%d, got %" PRId64, GDN_CONV_MAX_K, a->K);
  if (a->C < 1 || a->C > (int64_t(1) << 30))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.C: must be in 1..2^30, got %" PRId64, a->C);
  if (a->T < 0 || a->T > (int64_t)INT32_MAX)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.T: must be in 0..2^31-1 (query_start_loc is int32), got %" PRId64,
                a->T);
  if (a->num_seqs < 1) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.num_seqs: must be >= 1, got %d", (int)a->num_seqs);
  if (a->x_row_stride < a->C || a->x_row_stride > (int64_t(1) << 31))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.x_row_stride: must be in C = %" PRId64 "..2^31, got %" PRId64, a->C,
                a->x_row_stride);
  if (a->widen_cycles < 0)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.widen_cycles: must be >= 0, got %d", (int)a->widen_cycles);
  if (a->widen_cycles > 0 && !cuda)
    return fail(b, GDN_ERR_UNSUPPORTED,
                "args.widen_cycles: the spin before chunk 0's state read exists on the CUDA backend only; the host "
                "backend exposes the race through args.schedule instead (got %d cycles)",
                (int)a->widen_cycles);
  if (cuda && a->schedule.kind != GDN_SCHED_FORWARD)
    return fail(b, GDN_ERR_UNSUPPORTED,
                "args.schedule.kind: the CUDA backend runs blocks in the hardware's order and accepts FORWARD (0) only, "
                "got %d",
                (int)a->schedule.kind);
  if (a->schedule.kind < GDN_SCHED_FORWARD || a->schedule.kind > GDN_SCHED_EXPLICIT)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.schedule.kind: must be 0 forward, 1 reverse, 2 shuffle or 3 explicit, got %d", (int)a->schedule.kind);

  // ---- address ranges
  const int64_t T = a->T, C = a->C, K = a->K, N = a->num_seqs;
  const uint64_t xs = (uint64_t)dtype_size(a->x_dtype), os = (uint64_t)dtype_size(a->out_dtype);
  const uint64_t hs = a->his_dtype == GDN_I32 ? 4 : 1;
  const uint64_t x_bytes = T > 0 ? ((uint64_t)(T - 1) * (uint64_t)a->x_row_stride + (uint64_t)C) * xs : 0;
  const uint64_t w_bytes = (uint64_t)C * (uint64_t)K * xs;
  const uint64_t bias_bytes = a->bias ? (uint64_t)C * xs : 0;
  const uint64_t qsl_bytes = a->query_start_loc_host ? 0 : (uint64_t)(N + 1) * 4;  // a host copy has no range
  const uint64_t his_bytes = a->has_initial_state ? (uint64_t)N * hs : 0;
  const uint64_t state_bytes = (uint64_t)N * (uint64_t)C * (uint64_t)(K - 1) * 4;
  const uint64_t out_bytes = (uint64_t)T * (uint64_t)C * os;
  const char* xn = dtype_name(a->x_dtype);
  const char* hn = dtype_name(a->his_dtype == GDN_I32 ? GDN_I32 : GDN_I8);
  const ArgRange ranges[] = {
      {"args.x", a->x, x_bytes, (int)xs, xn, false},
      {"args.weight", a->weight, w_bytes, (int)xs, xn, false},
      {"args.bias", a->bias, bias_bytes, (int)xs, xn, false},
      {"args.query_start_loc", a->query_start_loc, qsl_bytes, 4, "i32", false},
      {"args.has_initial_state", a->has_initial_state, his_bytes, (int)hs, hn, false},
      {"args.conv_state", a->conv_state, state_bytes, 4, "f32", true},
      {"args.out", a->out, out_bytes, (int)os, dtype_name(a->out_dtype), true},
  };
  gdn_status st = check_arg_ranges(b, ranges, sizeof ranges / sizeof ranges[0]);
  if (st != GDN_OK) return st;
  const uint64_t align_x = a->x % 16, align_out = a->out % 16;

  // ---- query_start_loc: the caller's host copy, or read back
  st = load_query_start_loc(b, a->query_start_loc_host, a->query_start_loc, N, T, &plan->qsl);
  if (st != GDN_OK) return st;
  plan->qsl_from_host = a->query_start_loc_host != nullptr;
  const std::vector<int32_t>& qsl = plan->qsl;

  // ---- contract
  const bool vec_ok = C % conv::kVecLanes == 0 && a->x_row_stride % conv::kVecLanes == 0 && align_x == 0 && align_out == 0;
  st = conv_contract(b, a->arm, a->mapping, C, K, qsl.data(), (int32_t)N, vec_ok, &plan->contract, &plan->programs,
                     &plan->arm);
  if (st != GDN_OK) return st;
  const gdn_launch_contract& ct = plan->contract;
  const char* arm_name = plan->arm->info.name;
  if (a->mutant == GDN_CONV_MUTANT_CHUNK_OFF_BY_ONE && ct.mapping_ran == GDN_MAP_SEQUENCE)
    return fail(b, GDN_ERR_UNSUPPORTED,
                "args.mutant: chunk-off-by-one plants a bug in exact-chunk programs, but arm %s with this mapping runs "
                "whole sequences",
                arm_name);
  if (a->mutant != GDN_CONV_MUTANT_NONE && !plan->arm->has_planted())
    return fail(b, GDN_ERR_UNSUPPORTED,
                "args.mutant: mutants are planted in the built-in arms' own builds; arm %s has none", arm_name);

  // ---- schedule (host)
  const int64_t blocks = (int64_t)ct.grid_x * ct.grid_y;
  st = build_schedule(b, a->schedule, blocks, &plan->order);
  if (st != GDN_OK) return st;
  plan->schedule_kind = a->schedule.kind;

  conv::Params& p = plan->params;
  p.T = T;
  p.C = C;
  p.x_stride = a->x_row_stride;
  p.K = (int32_t)K;
  p.N = (int32_t)N;
  p.x = addr_ptr<const void>(a->x);
  p.w = addr_ptr<const void>(a->weight);
  p.bias = a->bias ? addr_ptr<const void>(a->bias) : nullptr;
  // A host copy serves the host backend as it is; the CUDA backend uploads it (conv_prepare) unless
  // the launch needs no list (below).
  p.qsl = plan->qsl_from_host ? plan->qsl.data() : addr_ptr<const int32_t>(a->query_start_loc);
  p.his = a->has_initial_state ? addr_ptr<const void>(a->has_initial_state) : nullptr;
  p.his_i32 = a->his_dtype == GDN_I32;
  p.mapping = ct.mapping_ran;
  p.mutant = a->mutant;
  p.chunk = ct.tokens_per_program;
  p.grid_x = ct.grid_x;
  p.widen_cycles = a->widen_cycles;
  p.state = addr_ptr<float>(a->conv_state);
  p.out = addr_ptr<void>(a->out);
  p.programs = plan->programs.empty() ? nullptr : plan->programs.data();
  // One sequence: the kernel computes its programs and offsets (both backends); the CUDA backend uploads
  // the lists of a batch given as a host copy (plan_lists.h).
  plan->lists_implicit = lists_are_implicit((int64_t)N, plan->programs);
  if (plan->lists_implicit) {
    p.programs = nullptr;
    p.qsl = nullptr;
  }
  p.silu_shortcut = b->silu_shortcut && a->out_dtype == GDN_BF16 ? 1 : 0;  // arms that offer it: stream-mufu
  plan->combo = 2 * (a->x_dtype == GDN_BF16) + (a->out_dtype == GDN_BF16);
  plan->build = a->mutant != GDN_CONV_MUTANT_NONE ? 1 : 0;
  plan->variant = plan->arm->variant_for(&p);
  return GDN_OK;
}

// ----------------------------------------------------------------- decode update plan
gdn_status update_plan(gdn_backend* b, const gdn_conv_update_args* a, UpdatePlan* plan) {
  if (a == nullptr) return fail(b, GDN_ERR_INVALID_ARGUMENT, "args: is null");
  plan->arm = registry::get(registry::kUpdate, a->arm);
  if (!plan->arm)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.arm: must be a conv update arm id (%s), got %d",
                registry::id_list(registry::kUpdate).c_str(), (int)a->arm);
  if (!is_float_dtype(a->x_dtype))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.x_dtype: must be F32 (0) or BF16 (1), got %d", (int)a->x_dtype);
  if (!is_float_dtype(a->out_dtype))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.out_dtype: must be F32 (0) or BF16 (1), got %d", (int)a->out_dtype);
  if (!is_float_dtype(a->state_dtype))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.state_dtype: must be F32 (0) or BF16 (1), got %d",
                (int)a->state_dtype);
  if (a->B < 1 || a->B > 65535)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.B: must be in 1..65535, got %" PRId64, a->B);
  if (a->C < 1 || a->C > (int64_t(1) << 30))
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.C: must be in 1..2^30, got %" PRId64, a->C);
  if (a->K < 2 || a->K > GDN_CONV_MAX_K)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.K: must be in 2..%d, got %" PRId64, GDN_CONV_MAX_K, a->K);
  if (a->num_slots < 1 || a->num_slots > INT32_MAX)
    return fail(b, GDN_ERR_INVALID_ARGUMENT, "args.num_slots: must be in 1..2^31-1, got %" PRId64, a->num_slots);
  const uint64_t xs = (uint64_t)dtype_size(a->x_dtype), os = (uint64_t)dtype_size(a->out_dtype),
                 ss = (uint64_t)dtype_size(a->state_dtype);
  const uint64_t B = (uint64_t)a->B, C = (uint64_t)a->C, K = (uint64_t)a->K;
  const char* xn = dtype_name(a->x_dtype);
  const ArgRange ranges[] = {
      {"args.x", a->x, B * C * xs, (int)xs, xn, false},
      {"args.weight", a->weight, C * K * xs, (int)xs, xn, false},
      {"args.bias", a->bias, a->bias ? C * xs : 0, (int)xs, xn, false},
      {"args.state", a->state, (uint64_t)a->num_slots * C * (K - 1) * ss, (int)ss, dtype_name(a->state_dtype), true},
      {"args.state_indices", a->state_indices, a->state_indices_host ? 0 : B * 4, 4, "i32", false},
      {"args.out", a->out, B * C * os, (int)os, dtype_name(a->out_dtype), true},
  };
  if (a->state_indices_host != nullptr && a->state_indices != 0)
    return fail(b, GDN_ERR_INVALID_ARGUMENT,
                "args.state_indices: must be 0 when args.state_indices_host (a host copy of the slots) is given; pass "
                "one of the two");
  gdn_status st = check_arg_ranges(b, ranges, sizeof ranges / sizeof ranges[0]);
  if (st != GDN_OK) return st;

  // ---- the slots: the caller's host copy, or read back from the device array (to check them)
  std::vector<int32_t>& slots = plan->slots;
  slots.assign((size_t)B, 0);
  plan->slots_from_host = a->state_indices_host != nullptr;
  if (plan->slots_from_host) std::memcpy(slots.data(), a->state_indices_host, (size_t)B * 4);
  else st = read_to_host(b, slots.data(), a->state_indices, B * 4, "args.state_indices");
  if (st != GDN_OK) return st;
  const char* src = plan->slots_from_host ? "args.state_indices_host" : "args.state_indices";
  std::vector<int64_t> owner((size_t)a->num_slots, -1);
  for (uint64_t i = 0; i < B; ++i) {
    const int32_t s = slots[i];
    if (s < 0) continue;
    if (s >= a->num_slots)
      return fail(b, GDN_ERR_INVALID_ARGUMENT,
                  "%s: entry %" PRIu64 " = %d is not a slot of the pool (num_slots = %" PRId64 ")", src, i,
                  (int)s, a->num_slots);
    if (owner[(size_t)s] >= 0)
      return fail(b, GDN_ERR_INVALID_ARGUMENT,
                  "%s: entries %" PRId64 " and %" PRIu64
                  " both name slot %d (two sequences updating one state slot is a race)",
                  src, owner[(size_t)s], i, (int)s);
    owner[(size_t)s] = (int64_t)i;
  }

  update::Params& p = plan->params;
  p.B = a->B;
  p.C = a->C;
  p.K = (int32_t)a->K;
  p.out_bf16 = a->out_dtype == GDN_BF16;
  p.state_bf16 = a->state_dtype == GDN_BF16;
  p.x = addr_ptr<const void>(a->x);
  p.w = addr_ptr<const void>(a->weight);
  p.bias = a->bias ? addr_ptr<const void>(a->bias) : nullptr;
  p.state = addr_ptr<void>(a->state);
  // A device array stays where it is; a host copy serves the host backend as it is and travels in the
  // parameters when short (common/plan_lists.h), else the CUDA backend uploads it (update_prepare).
  p.slots = plan->slots_from_host ? plan->slots.data() : addr_ptr<const int32_t>(a->state_indices);
  plan->slots_inline = false;
  if (plan->slots_from_host && B <= (uint64_t)kInlineSlots) {
    for (uint64_t i = 0; i < B; ++i) p.slot_words[i] = slots[i];
    p.slots = nullptr;
    plan->slots_inline = true;
  }
  p.out = addr_ptr<void>(a->out);
  plan->combo = a->x_dtype == GDN_BF16 ? 1 : 0;
  plan->variant = plan->arm->variant_for(&p);
  plan->threads = plan->arm->info.threads_per_block;
  plan->grid_x = (int32_t)ceil_div(a->C, plan->arm->info.per_block);
  plan->grid_y = (int32_t)a->B;
  return GDN_OK;
}

}  // namespace gdn
