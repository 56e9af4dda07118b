// plan_lists.h — the lists a planned launch reads by index (the (sequence, chunk) program list and the
// sequence offsets), carried inside the kernel's parameters when they are small (docs/SPEC.md §3.1,
// "Plan lists in the launch").
//
// Why: a list in device memory has to be uploaded before each launch. On CUDA that is a copy in the
// stream ahead of the kernel, which the kernel then waits for: a fixed cost of every small call (the
// program-list upload was the difference between a small conv call and a small post-conv call, which
// has no list: docs/BENCHMARKS.md, "Per-op overhead"). A list of up to kInlineListWords words travels in
// the launch's parameter block instead, which the launch sends anyway. Bigger lists keep the upload.
//
// Both backends run the same plan, so the host replays the inline route too and CI checks it (the
// bits cannot depend on where a list lives: the same integers are read either way).
#pragma once

#include <stdint.h>

#include "common/exec.h"

namespace gdn {

// 64 words: one sequence of up to 31 programs, or up to 21 sequences of at most one program each with
// their 22 offsets; 260 bytes of a kernel's 4 KiB of parameters.
constexpr int kInlineListWords = 64;

struct InlineLists {
  int32_t qsl_at;  // words[qsl_at ..] hold the offsets when Params::qsl is null
  int32_t words[kInlineListWords];
};

// Word i of the program list / offset i of the sequences: from the device (or host) array when the
// plan kept one, else from the parameters. P is conv::Params or fused::Params (fields programs, qsl,
// lists). On the GPU the kernels take their parameters as __grid_constant__, so an indexed read of
// `lists` is a load from the parameter space, not a per-thread copy of the struct.
template <class P>
GDN_HDI int32_t program_word(const P& p, int64_t i) {
  return p.programs ? p.programs[i] : p.lists.words[i];
}
template <class P>
GDN_HDI int32_t offset_word(const P& p, int64_t i) {
  return p.qsl ? p.qsl[i] : p.lists.words[p.lists.qsl_at + i];
}

#if !defined(__CUDA_ARCH__)
// Moves a plan's lists into p.lists when they fit: the programs, and the offsets when the plan has
// them on the host (host_qsl non-null; offsets given as a device array stay there). Sets p.programs
// and (for host offsets) p.qsl to null, which the reads above take as "inline". Returns whether it did.
// List is the planner's std::vector<int32_t> (a template, so that this header includes no library
// header that NVRTC lacks: user arms include it through conv_params.h).
template <class P, class List>
inline bool inline_plan_lists(P& p, const List& programs, const List* host_qsl) {
  const size_t q = host_qsl ? host_qsl->size() : 0;
  if (programs.size() + q > (size_t)kInlineListWords) return false;
  for (size_t i = 0; i < programs.size(); ++i) p.lists.words[i] = programs[i];
  p.lists.qsl_at = (int32_t)programs.size();
  for (size_t i = 0; i < q; ++i) p.lists.words[programs.size() + i] = (*host_qsl)[i];
  p.programs = nullptr;
  if (host_qsl) p.qsl = nullptr;
  return true;
}
#endif

}  // namespace gdn
