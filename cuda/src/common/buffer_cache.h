// buffer_cache.h — the caching allocator behind gdn_buffer_alloc/free on both backends.
//
// Why: cudaMalloc costs tens of µs and cudaFree synchronises the whole device; on the host, large
// aligned_alloc/free pairs are mmap/munmap plus page faults on first touch. A loop of small ops that
// allocates its staging and outputs would pay that on every call (docs/BENCHMARKS.md, "Per-op
// overhead"). The cache keeps freed blocks and hands them out again.
//
// Layout: memory comes from the backend in segments (cudaMalloc / an anonymous mapping). A segment
// is split into blocks; a freed block is merged with free neighbours of its segment and kept in a
// best-fit free set. Two pools, so that small buffers do not fragment the segments of large ones:
//   small: requests <= 1 MiB, served from 2 MiB segments, split at 512-byte granularity;
//   large: requests > 1 MiB, served from 20 MiB segments up to 10 MiB, above that from a segment
//          of the request rounded to 2 MiB; a block is split only when more than 1 MiB is left.
// Every block is a multiple of 512 bytes from a 512-aligned segment base, so the 256-byte alignment
// of gdn.h holds.
//
// Stream order (CUDA): every op, copy, upload and download of a backend runs on its one stream, so
// a block freed after work was enqueued on it can be handed out at once: whatever the next owner
// enqueues runs after that work. Memory goes back to the driver only in trim() (and at close), after
// synchronising the stream.
//
// The cache knows nothing of the registry of live buffers (buffers.cpp): a freed buffer leaves the
// registry at once, so its addresses fail check_range until a new allocation owns them. A reused
// address then belongs to the new buffer only; a tensor of the old buffer is refused in TypeScript
// by its storage's released flag before its address is ever sent (lib/tensor.ts).
#pragma once

#include "gdn.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <utility>

namespace gdn {

// What a backend provides to the cache: whole segments of memory.
struct SegmentSource {
  void* ctx = nullptr;
  // Maps `bytes` of backend memory at *addr. GDN_ERR_OUT_OF_MEMORY when there is none, with no
  // message recorded (the cache retries; its caller words the error); any other failure records
  // its message. Called with the cache's lock held.
  gdn_status (*map)(void* ctx, uint64_t bytes, uint64_t* addr) = nullptr;
  // Returns a segment. Called with the cache's lock held, after sync().
  void (*unmap)(void* ctx, uint64_t addr, uint64_t bytes) = nullptr;
  // Waits until no enqueued work can touch cached memory (CUDA: the stream); may be null.
  void (*sync)(void* ctx) = nullptr;
};

struct BufferCacheStats {
  uint64_t reserved_bytes = 0;   // held from the backend, in segments
  uint64_t allocated_bytes = 0;  // in blocks handed out (rounded sizes)
  uint64_t cached_bytes = 0;     // in free blocks (reserved - allocated)
  int64_t segments = 0;
  int64_t allocated_blocks = 0;
  int64_t free_blocks = 0;
  uint64_t alloc_calls = 0;      // allocate() calls that succeeded
  uint64_t segment_maps = 0;     // segments obtained from the backend (cache misses)
  uint64_t segment_unmaps = 0;   // segments returned (trim, out-of-memory retries, close)
  uint64_t peak_reserved_bytes = 0;
};

class BufferCache {
 public:
  static constexpr uint64_t kGranule = 512;
  static constexpr uint64_t kSmallLimit = uint64_t(1) << 20;  // requests up to this go to the small pool
  static constexpr uint64_t kSmallSegment = uint64_t(2) << 20;
  static constexpr uint64_t kMidLimit = uint64_t(10) << 20;   // large requests up to this share 20 MiB segments
  static constexpr uint64_t kMidSegment = uint64_t(20) << 20;
  static constexpr uint64_t kLargeRound = uint64_t(2) << 20;

  explicit BufferCache(SegmentSource source) : src_(source) {}
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // A block of at least `bytes` (> 0). When the backend is out of memory, every wholly free segment
  // is returned and the mapping retried (then with the smallest segment that fits) before
  // GDN_ERR_OUT_OF_MEMORY, which the caller reports.
  gdn_status allocate(uint64_t bytes, uint64_t* addr);
  // Returns a block obtained from allocate(); false when addr is not the start of an allocated block.
  bool release(uint64_t addr);
  // Returns every wholly free segment to the backend (after sync); the bytes returned.
  uint64_t trim();
  // Returns every segment, allocated or not (backend close).
  void release_all();
  BufferCacheStats stats() const;

 private:
  struct Block {
    uint64_t size = 0;
    uint64_t segment = 0;  // base address of the segment holding the block
    bool free = false;
    bool small = false;
  };
  using FreeSet = std::set<std::pair<uint64_t, uint64_t>>;  // (size, addr): best fit = lower_bound

  FreeSet& pool(bool small) { return small ? free_small_ : free_large_; }
  uint64_t trim_locked();
  gdn_status map_segment(uint64_t bytes, uint64_t* addr);

  SegmentSource src_;
  mutable std::mutex mu_;
  std::map<uint64_t, Block> blocks_;       // every block of every segment, by address
  std::map<uint64_t, uint64_t> segments_;  // segment base -> size
  FreeSet free_small_, free_large_;
  BufferCacheStats st_;
};

}  // namespace gdn
