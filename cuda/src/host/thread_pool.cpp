// thread_pool.cpp — see thread_pool.h.
#include "host/thread_pool.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace gdn {
namespace host {

int32_t logical_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int32_t)n : 1;
}

namespace {

class Pool {
 public:
  explicit Pool(int32_t workers) {
    for (int32_t w = 0; w < workers; ++w) threads_.emplace_back([this, w] { loop(w + 1); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }
  int32_t size() const { return (int32_t)threads_.size() + 1; }

  // Runs the job with the caller as worker 0; false when another job holds the pool.
  bool run(int32_t threads, int64_t n, PoolItem item, void* ctx) {
    std::unique_lock<std::mutex> job_lock(job_mu_, std::try_to_lock);
    if (!job_lock.owns_lock()) return false;
    threads = std::min(threads, size());
    {
      std::lock_guard<std::mutex> lock(mu_);
      item_ = item;
      ctx_ = ctx;
      n_ = n;
      chunk_ = std::max<int64_t>(1, n / ((int64_t)threads * 8));
      next_.store(0, std::memory_order_relaxed);
      helpers_ = threads - 1;
      open_ = true;
      busy_ = 0;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    work(0);
    // Close the job, then wait only for helpers that joined it: on a loaded machine a helper may not
    // be scheduled for a whole time slice, and waiting for one that never took an item would cost
    // that slice on every launch.
    std::unique_lock<std::mutex> lock(mu_);
    open_ = false;
    done_.wait(lock, [this] { return busy_ == 0; });
    item_ = nullptr;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  void work(int32_t worker) {
    try {
      for (;;) {
        const int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
        if (begin >= n_) break;
        const int64_t end = std::min(n_, begin + chunk_);
        for (int64_t i = begin; i < end; ++i) item_(ctx_, worker, i);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      next_.store(n_, std::memory_order_relaxed);  // the others stop taking items
    }
  }

  void loop(int32_t worker) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && worker <= helpers_); });
        if (stop_) return;
        seen = generation_;
        if (!open_) continue;  // woke after the caller finished the job alone
        ++busy_;
      }
      work(worker);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (--busy_ == 0) done_.notify_one();
      }
    }
  }

  std::vector<std::thread> threads_;
  std::mutex job_mu_;  // one job at a time
  std::mutex mu_;
  std::condition_variable wake_, done_;
  bool stop_ = false;
  bool open_ = false;  // helpers may still join the current job
  uint64_t generation_ = 0;
  int32_t helpers_ = 0, busy_ = 0;
  PoolItem item_ = nullptr;
  void* ctx_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  std::atomic<int64_t> next_{0};
  std::exception_ptr error_;
};

// The pool and the process that started it: a forked child (fault containment of user arms) has
// none of the parent's worker threads, so it replays serially instead of waiting for them.
struct PoolHandle {
  Pool* pool;
  pid_t owner;
};

PoolHandle& pool() {
  // Never destroyed: worker threads must not be joined from a static destructor that may run after
  // the library's other statics are gone.
  static PoolHandle h{new Pool(std::max(0, logical_cpus() - 1)), getpid()};
  return h;
}

}  // namespace

int32_t effective_threads(int32_t requested) {
  const int32_t cpus = logical_cpus();
  const int32_t want = requested <= 0 ? cpus : requested;
  return std::max(1, std::min(want, cpus));
}

void parallel_for(int32_t threads, int64_t n, PoolItem item, void* ctx) {
  if (threads > 1 && n > 1) {
    PoolHandle& h = pool();
    if (h.owner == getpid() && h.pool->run((int32_t)std::min<int64_t>(threads, n), n, item, ctx)) return;
  }
  for (int64_t i = 0; i < n; ++i) item(ctx, 0, i);
}

}  // namespace host
}  // namespace gdn
