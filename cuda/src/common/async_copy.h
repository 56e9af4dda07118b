// async_copy.h — a thread's own asynchronous copies from global into shared memory, one interface for
// both backends (docs/SPEC.md §3.5; used by the conv arm `stream`'s row ring, CHANGELOG 2026-12-01,
// 3bc32cb).
//
// Why: a load into registers holds its registers until the data arrives, so the rows a thread can keep
// in flight are bounded by its register budget (and more registers cost resident blocks). An
// asynchronous copy (sm_80's cp.async) lands in shared memory instead and costs no register while in
// flight, so a thread can keep several groups of rows outstanding at the register count of one.
//
// Contract (both backends): a thread copies into shared memory only it reads afterwards, so no block
// barrier is involved. async_commit() closes the copies issued since the last commit into one group;
// async_wait<N>() returns when at most N of the thread's committed groups are still pending, and the
// completed groups' bytes are then visible to the thread (PTX ISA, cp.async.wait_group).
//
// CUDA on sm_80 and later: cp.async.ca (8 bytes) / cp.async.cg (16 bytes) and the group instructions.
// Older devices and the host backend: the copy happens at once, commit and wait do nothing, so the
// bytes a thread reads are the same bytes on every path.
#pragma once

#include <cstring>

#include "common/exec.h"

namespace gdn {
namespace exec {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define GDN_HAS_CP_ASYNC 1
#else
#define GDN_HAS_CP_ASYNC 0
#endif

// Copies BYTES (8 or a multiple of 16) from global src to shared dst, both aligned to min(BYTES, 16).
template <int BYTES>
GDN_HDI void async_copy(void* dst, const void* src) {
  static_assert(BYTES == 8 || BYTES % 16 == 0, "async copies move 8 bytes or whole 16-byte vectors");
#if GDN_HAS_CP_ASYNC
  const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
  if constexpr (BYTES == 8) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(src) : "memory");
  } else {
    GDN_UNROLL
    for (int k = 0; k < BYTES / 16; ++k)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s + 16 * k),
                   "l"(static_cast<const char*>(src) + 16 * k)
                   : "memory");
  }
#else
  std::memcpy(dst, src, BYTES);
#endif
}

GDN_HDI void async_commit() {
#if GDN_HAS_CP_ASYNC
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
GDN_HDI void async_wait() {
#if GDN_HAS_CP_ASYNC
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace exec
}  // namespace gdn
