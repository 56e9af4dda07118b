// thread_pool.h — the host backend's worker threads for replaying independent blocks on all cores
// (docs/BENCHMARKS.md, "Host backend").
//
// One process-wide pool, started on first use, of (logical CPUs − 1) workers; the calling thread
// takes part, so a job on n threads uses n − 1 workers. Work items are handed out in chunks from an
// atomic counter (blocks of a launch differ in cost: sequence tails, partial channel tiles). One job
// runs at a time; a caller that finds the pool busy (another backend on another thread) runs its
// items itself, in order — slower, never wrong.
//
// Only callers whose items are independent (no item reads what another writes) may use it: then any
// interleaving gives the bits of the serial loop.
#pragma once

#include <cstdint>

namespace gdn {
namespace host {

// Logical CPUs of this process (sched_getaffinity, else sysconf), at least 1.
int32_t logical_cpus();

// Runs item(ctx, worker, i) for every i in [0, n) on up to `threads` threads (worker in
// [0, threads)); returns when all are done. threads <= 1 or n <= 1: a plain loop on the caller.
// The worker index lets an item use per-thread scratch (shared memory of a block, a fiber set).
using PoolItem = void (*)(void* ctx, int32_t worker, int64_t i);
void parallel_for(int32_t threads, int64_t n, PoolItem item, void* ctx);

// Threads a job would get for `requested` (0 = all logical CPUs), capped by the pool's size.
int32_t effective_threads(int32_t requested);

}  // namespace host
}  // namespace gdn
