// plan_lists.h — the lists a planned launch reads by index, and when a launch needs none in device memory
// (docs/SPEC.md §3.1, "Plan lists in the launch"; §5, "The slots' two routes").
//
// Why: a list in device memory has to be uploaded before each launch. On CUDA that is a copy in the
// stream ahead of the kernel, which the kernel then waits for: a fixed cost of every small call (the
// program-list upload was the difference between a small conv call and a small post-conv call, which
// has no list: docs/BENCHMARKS.md, "Per-op overhead").
//
// Conv and fused: a launch over one sequence needs no list at all. Its programs are (0, 0), (0, 1), ...
// and its offsets [0, T], so program y is (0, y) and the offsets are 0 and T: the kernel computes them
// (the plan sets Params::programs and Params::qsl to null). Batches of several sequences keep their lists
// in memory. (A first form carried lists of up to 64 words inside the parameters; the indexed read
// of the parameter block made the compiler address every parameter through a register, and conv
// stream-mufu at 4B T = 8192 ran 2.2% slower on an H200: CHANGELOG 2026-12-03, 626ae04.)
//
// Conv update: up to kInlineSlots slots given as a host copy travel in its parameters (its kernel is a
// few µs long and measured no slower for it).
//
// Both backends run the same plan, so the host replays these routes too and CI checks them (the bits
// cannot depend on where a list lives: the same integers are used either way).
#pragma once

#include <stdint.h>

#include "common/exec.h"

namespace gdn {

// Word i of the program list / offset i of the sequences: from the device (or host) array when the plan
// kept one, else those of the single sequence. P is conv::Params or fused::Params (fields programs, qsl, T).
template <class P>
GDN_HDI int32_t program_word(const P& p, int64_t i) {
  return p.programs ? p.programs[i] : ((i & 1) ? (int32_t)(i >> 1) : 0);
}
template <class P>
GDN_HDI int64_t offset_word(const P& p, int64_t i) {
  return p.qsl ? (int64_t)p.qsl[i] : (i == 0 ? 0 : p.T);
}

#if !defined(__CUDA_ARCH__)
// True when a plan's lists are those of one sequence (N = 1: the offsets are [0, T], checked by the
// planner, and the programs, if any, are (0, 0), (0, 1), ... in order): the kernel needs neither.
// List is the planner's std::vector<int32_t> (a template, so that this header includes no library
// header that NVRTC lacks: user arms include it through conv_params.h).
template <class List>
inline bool lists_are_implicit(int64_t num_seqs, const List& programs) {
  if (num_seqs != 1) return false;
  for (size_t i = 0; i < programs.size(); ++i)
    if (programs[i] != ((i & 1) ? (int32_t)(i >> 1) : 0)) return false;
  return true;
}
#endif

// Up to 64 slots of a conv update given as a host copy (256 bytes of a kernel's 4 KiB of parameters).
constexpr int kInlineSlots = 64;

}  // namespace gdn
