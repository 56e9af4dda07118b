// backend.h — what a gdn_backend is: its kind, its buffer registry, its last error, and (CUDA) an
// opaque pointer to the CUDA state owned by cuda/cuda_backend.cu. Not part of the ABI.
#pragma once

#include "gdn.h"
#include "common/buffer_cache.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

struct gdn_backend {
  int32_t kind = GDN_BACKEND_HOST;
  int32_t device_ordinal = 0;

  // Serialises work on the backend (ops, copies, timing). koffi's asynchronous calls run on worker
  // threads, so two calls may arrive at once; they run one after the other.
  std::mutex exec_mu;

  // Live buffers: base address -> size in bytes. Ordered, so the buffer holding an address is the
  // last one whose base is <= the address.
  std::mutex registry_mu;
  std::map<uint64_t, uint64_t> buffers;
  uint64_t live_bytes = 0;

  // Where buffers come from (common/buffer_cache.h): segments of the backend's memory, split and
  // reused. Created by gdn_backend_open once the kind is known.
  std::unique_ptr<gdn::BufferCache> cache;

  // Host backend: threads that replay the blocks of a launch whose order allows it (the forward
  // schedule of a correct arm; docs/BENCHMARKS.md, "Host backend"). 0 = every logical CPU.
  int32_t host_threads = 0;

  std::mutex error_mu;
  std::string last_error;

  void* cuda = nullptr;  // CUDA backend state (cuda/cuda_backend.cu), null on the host backend
  // The GPU may take silu_bf16_shortcut (common/detmath.h): set by the CUDA backend on compute
  // capability 9.0 only; false on the host.
  bool silu_shortcut = false;
  // Host backend: the wall time of the last kernel replay of the current or last op call (replay_host.cpp; reset
  // to 0 at each op call's entry, api.cpp op_call; read by gdn_last_kernel_ns without the lock).
  std::atomic<uint64_t> last_kernel_ns{0};
};

namespace gdn {

// Registry (common/buffers.cpp).
void registry_add(gdn_backend* b, uint64_t addr, uint64_t bytes);
// Removes the buffer that starts exactly at addr; false when there is none.
bool registry_remove(gdn_backend* b, uint64_t addr, uint64_t* bytes);
// Removes every buffer, handing each to release (used by backend_close).
template <class F>
void registry_drain(gdn_backend* b, F release) {
  std::map<uint64_t, uint64_t> all;
  {
    std::lock_guard<std::mutex> lock(b->registry_mu);
    all.swap(b->buffers);
    b->live_bytes = 0;
  }
  for (const auto& kv : all) release(kv.first, kv.second);
}

// Clears the calling thread's last error (start of every API call that can fail).
void clear_error();

}  // namespace gdn
