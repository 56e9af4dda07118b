// exec_test.cpp — unit test of the host side of the execution interface (common/exec.h,
// host/exec_host.cpp): block order and coordinates of the plain loop, CUDA semantics of sync() and
// shfl_xor() on cooperative fibers (a barrier really waits for every thread; a shuffle reads the other
// lane's value of the same step; shfl_xor_n and shfl_xor_each, N of them at one wait), mixing warps at
// shuffles with warps at a barrier, the faults (undeclared barrier, divergent barrier), fiber stacks reused
// over many 1024-thread blocks, and the cost of a switch. Built twice: with the x86-64 switch and with the ucontext fallback.
#include "common/exec.h"

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "check_count.h"

using gdn::exec::HostGrid;
using gdn::exec::HostThread;
using gdn::exec::run_host;

namespace {

// Plain loop: every (block, thread) once, blocks in the given order, threads in order, coordinates
// from grid_x.
void test_plain_order() {
  HostGrid g;
  g.grid_x = 3;
  g.grid_y = 2;
  g.threads = 4;
  const int64_t order[] = {5, 0, 3, 1, 4, 2};
  g.order = order;
  std::vector<int64_t> seen;
  bool coords = true;
  auto body = [&](HostThread& t) {
    seen.push_back(t.block() * 10 + t.tid());
    coords = coords && t.bx() == t.block() % 3 && t.by() == t.block() / 3 && t.threads() == 4 && t.grid_y() == 2;
  };
  int64_t fb = 0;
  check(run_host(g, body, &fb) == gdn::exec::kFaultNone, "plain launch runs");
  std::vector<int64_t> want;
  for (int64_t b : order)
    for (int t = 0; t < 4; ++t) want.push_back(b * 10 + t);
  check(seen == want, "plain launch: blocks in the schedule's order, threads in order");
  check(coords, "plain launch: bx = block % grid_x, by = block / grid_x");
}

// A barrier waits for every thread: each thread writes its slot, syncs, then reads its right
// neighbour's slot (a sequential loop would read the neighbour's old value), three times over.
void test_barrier(bool expect_ok_values) {
  HostGrid g;
  g.grid_x = 2;
  g.grid_y = 3;
  g.threads = 128;
  g.shared_bytes = 128 * 4;
  g.cooperative = true;
  std::vector<int32_t> out(6 * 128, -1);
  auto body = [&](HostThread& t) {
    int32_t* sm = gdn::exec::smem_as<int32_t>(t);
    const int n = t.threads();
    int32_t v = (int32_t)(t.block() * 1000 + t.tid());
    for (int round = 0; round < 3; ++round) {
      sm[t.tid()] = v;
      t.sync();
      v = sm[(t.tid() + 1) % n] + 1;
      t.sync();
    }
    out[(size_t)(t.block() * n + t.tid())] = v;
  };
  int64_t fb = 0;
  check(run_host(g, body, &fb) == gdn::exec::kFaultNone, "cooperative launch with barriers runs");
  bool ok = true;
  for (int b = 0; b < 6; ++b)
    for (int tid = 0; tid < 128; ++tid) ok = ok && out[(size_t)(b * 128 + tid)] == b * 1000 + (tid + 3) % 128 + 3;
  check(ok == expect_ok_values, "barrier: every thread reads its neighbour's value of the same round");
}

// The butterfly reduction of a warp: every lane ends with the sum of all 32 values in the tree order
// of xor levels 16, 8, 4, 2, 1 (checked bit for bit against the same levels computed on arrays).
void test_shuffle() {
  HostGrid g;
  g.grid_x = 1;
  g.grid_y = 2;
  g.threads = 96;
  g.cooperative = true;
  std::vector<float> in(2 * 96), out(2 * 96), want(2 * 96);
  uint32_t s = 12345;
  for (float& x : in) {
    s = s * 1664525u + 1013904223u;
    x = (float)(s >> 8) / 16777216.0f * 3.0f - 1.0f;
  }
  for (int w = 0; w < 6; ++w) {
    float cur[32], prev[32];
    for (int l = 0; l < 32; ++l) cur[l] = in[(size_t)(w * 32 + l)];
    for (int off = 16; off >= 1; off /= 2) {
      std::memcpy(prev, cur, sizeof cur);
      for (int l = 0; l < 32; ++l) cur[l] = prev[l] + prev[l ^ off];
    }
    for (int l = 0; l < 32; ++l) want[(size_t)(w * 32 + l)] = cur[l];
  }
  std::vector<int32_t> isum(2 * 96);
  auto body = [&](HostThread& t) {
    const size_t i = (size_t)(t.block() * t.threads() + t.tid());
    float v = in[i];
    for (int off = 16; off >= 1; off /= 2) v = v + t.shfl_xor(v, off);
    out[i] = v;
    int32_t k = t.lane();
    for (int off = 1; off < 32; off *= 2) k += t.shfl_xor(k, off);
    isum[i] = k;
  };
  int64_t fb = 0;
  check(run_host(g, body, &fb) == gdn::exec::kFaultNone, "cooperative launch with shuffles runs");
  check(std::memcmp(out.data(), want.data(), out.size() * 4) == 0, "shfl_xor: butterfly sums bit-identical to the level-by-level arrays");
  bool ok = true;
  for (int32_t v : isum) ok = ok && v == 496;
  check(ok, "shfl_xor(int32): every lane sums 0..31");
}

// Warp 0 shuffles while the other warps already wait at a block barrier; then everyone reads warp
// 0's result from shared memory.
void test_mixed() {
  HostGrid g;
  g.threads = 128;
  g.shared_bytes = 4;
  g.cooperative = true;
  std::vector<float> out(128);
  auto body = [&](HostThread& t) {
    float* sm = t.smem();
    if (t.warp() == 0) {
      float v = (float)t.lane();
      for (int off = 16; off >= 1; off /= 2) v += t.shfl_xor(v, off);
      if (t.lane() == 0) sm[0] = v;
    }
    t.sync();
    out[(size_t)t.tid()] = sm[0];
  };
  int64_t fb = 0;
  check(run_host(g, body, &fb) == gdn::exec::kFaultNone, "warps at shuffles beside warps at a barrier");
  bool ok = true;
  for (float v : out) ok = ok && v == 496.0f;
  check(ok, "mixed: all threads read warp 0's sum after the barrier");
}

// Shuffle-only arms (barriers = false) run warp by warp: the same sums, sync() reported as undeclared,
// lanes that leave early release the others' shuffles, and warps really one after the other (warp 1
// starts after warp 0 ended, which the whole-block rounds never do).
void test_warp_mode() {
  HostGrid g;
  g.grid_x = 3;
  g.threads = 96;
  g.cooperative = true;
  g.barriers = false;
  std::vector<float> out(3 * 96), want(3 * 96);
  std::vector<int> order;
  auto body = [&](HostThread& t) {
    float v = (float)(t.tid() * 3 + (int)t.block());
    for (int off = 16; off >= 1; off /= 2) v = v + t.shfl_xor(v, off);
    out[(size_t)(t.block() * 96 + t.tid())] = v;
    if (t.block() == 0 && t.lane() == 0) order.push_back(t.warp());
    (void)t.shfl_xor(0.0f, 1);  // a second wait: in block rounds every warp's lane 0 would arrive before any finished
    if (t.block() == 0 && t.lane() == 0) order.push_back(10 + t.warp());
  };
  for (int b = 0; b < 3; ++b)
    for (int w = 0; w < 3; ++w) {
      float cur[32], prev[32];
      for (int l = 0; l < 32; ++l) cur[l] = (float)((w * 32 + l) * 3 + b);
      for (int off = 16; off >= 1; off /= 2) {
        std::memcpy(prev, cur, sizeof cur);
        for (int l = 0; l < 32; ++l) cur[l] = prev[l] + prev[l ^ off];
      }
      for (int l = 0; l < 32; ++l) want[(size_t)(b * 96 + w * 32 + l)] = cur[l];
    }
  int64_t fb = 0;
  check(run_host(g, body, &fb) == gdn::exec::kFaultNone, "warp mode: a shuffle-only launch runs");
  check(std::memcmp(out.data(), want.data(), out.size() * 4) == 0, "warp mode: butterfly sums bit-identical to the level-by-level arrays");
  check(order == std::vector<int>({0, 10, 1, 11, 2, 12}), "warp mode: each warp runs to its end before the next starts");
  auto syncs = [](HostThread& t) {
    if (t.block() == 1 && t.warp() == 2) t.sync();
  };
  check(run_host(g, syncs, &fb) == gdn::exec::kFaultUndeclaredSync && fb == 1, "warp mode: sync() is reported as undeclared, with its block");
  auto divergent = [](HostThread& t) {
    if (t.block() == 2 && t.lane() == 5) return;  // one lane leaves; the others wait at a second shuffle
    (void)t.shfl_xor(1.0f, 1);
    if (t.block() == 2 && t.lane() < 5) (void)t.shfl_xor(1.0f, 2);
  };
  check(run_host(g, divergent, &fb) == gdn::exec::kFaultNone, "warp mode: lanes that leave early release the rest");
  g.barriers = true;
  order.clear();
  check(run_host(g, body, &fb) == gdn::exec::kFaultNone && order == std::vector<int>({0, 1, 2, 10, 11, 12}),
        "control: block rounds interleave the warps (so the order check above can fail)");
}

// shfl_xor_n / shfl_xor_each: N exchanges at one wait give what N single shuffles give — per value its own
// mask, masks of 32 and -1 taken by their low 5 bits as shfl.bfly takes them (own lane, lane ^ 31), a partial
// last warp (40 threads: a source past the block's end gives the caller's value), int32 values as raw bits,
// in warp mode and in block rounds; a lane that leaves early still lets the others' batch through; and
// shfl_xor_each makes every use after every send on the host. In a plain launch it is reported as undeclared.
void test_exchange_n() {
  for (bool barriers : {false, true}) {
    HostGrid g;
    g.grid_x = 2;
    g.threads = 40;
    g.cooperative = true;
    g.barriers = barriers;
    const int n = 2 * 40;
    std::vector<float> single((size_t)n * 6), batched((size_t)n * 6), each((size_t)n * 6);
    std::vector<int32_t> ints_single((size_t)n * 2), ints_batched((size_t)n * 2);
    auto value = [](int64_t b, int tid, int i) { return (float)(b * 1000 + tid) + 0.125f * (float)i; };
    auto body = [&](HostThread& t) {
      const size_t at = (size_t)(t.block() * 40 + t.tid());
      const int masks[6] = {1, 16, 7, 31, 32, -1};
      float v[6], got[6];
      for (int i = 0; i < 6; ++i) v[i] = value(t.block(), t.tid(), i);
      for (int i = 0; i < 6; ++i) single[at * 6 + (size_t)i] = t.shfl_xor(v[i], masks[i]);
      t.shfl_xor_n(v, masks, got);
      for (int i = 0; i < 6; ++i) batched[at * 6 + (size_t)i] = got[i];
      t.shfl_xor_each(masks, [&](int i) { return v[i]; }, [&](int i, float g2) { each[at * 6 + (size_t)i] = g2; });
      const int32_t iv[2] = {(int32_t)0x80000001u + t.tid(), -t.tid()};
      const int imasks[2] = {2, 5};
      int32_t igot[2];
      for (int i = 0; i < 2; ++i) ints_single[at * 2 + (size_t)i] = t.shfl_xor(iv[i], imasks[i]);
      t.shfl_xor_n(iv, imasks, igot);
      for (int i = 0; i < 2; ++i) ints_batched[at * 2 + (size_t)i] = igot[i];
    };
    int64_t fb = 0;
    const char* mode = barriers ? "block rounds" : "warp mode";
    check(run_host(g, body, &fb) == gdn::exec::kFaultNone, "shfl_xor_n: launch runs");
    bool ok = true;
    for (int64_t b = 0; b < 2; ++b)
      for (int tid = 0; tid < 40; ++tid) {
        const int masks[6] = {1, 16, 7, 31, 32, -1};
        for (int i = 0; i < 6; ++i) {
          const int lane = tid % 32, src_lane = lane ^ (masks[i] & 31);  // shfl.bfly takes the mask's low 5 bits
          int src = tid - lane + src_lane;
          if (src >= 40) src = tid;  // past the block's end: the caller's own value on the host
          ok = ok && single[(size_t)(b * 40 + tid) * 6 + (size_t)i] == value(b, src, i);
        }
      }
    std::printf("  (%s)\n", mode);
    check(ok, "shfl_xor: the single shuffles read lane ^ (mask & 31) (32: own lane, -1: lane ^ 31; own value past the block)");
    check(single == batched, "shfl_xor_n: the same values as one shfl_xor per value");
    check(single == each, "shfl_xor_each: the same values as one shfl_xor per value");
    check(ints_single == ints_batched, "shfl_xor_n(int32): the same bits as one shfl_xor per value");
  }
  // Host order of shfl_xor_each: every send before any use (the GPU's loop interleaves them; a body may
  // rely on neither, docs/SPEC.md §13): a use that changes what a later send reads shows it.
  HostGrid g;
  g.threads = 32;
  g.cooperative = true;
  g.barriers = false;
  std::vector<float> seen(32);
  auto order = [&](HostThread& t) {
    float x[2] = {1.0f, 2.0f};
    const int masks[2] = {1, 1};
    t.shfl_xor_each(masks, [&](int i) { return x[i]; }, [&](int i, float got) { x[1 - i] = got + 10.0f; });
    seen[(size_t)t.lane()] = x[0];
  };
  int64_t fb = 0;
  bool ok = run_host(g, order, &fb) == gdn::exec::kFaultNone;
  for (float v : seen) ok = ok && v == 12.0f;  // x[0] = partner's x[1] (2, sent before the use of i = 0) + 10
  check(ok, "shfl_xor_each on the host: every send before any use");
  auto leaves = [&](HostThread& t) {
    if (t.lane() == 3) return;
    const float v[3] = {1.0f, 2.0f, 3.0f};
    const int masks[3] = {1, 2, 4};
    float got[3];
    t.shfl_xor_n(v, masks, got);
    seen[(size_t)t.lane()] = got[0] + got[1] + got[2];
  };
  check(run_host(g, leaves, &fb) == gdn::exec::kFaultNone, "shfl_xor_n: a lane that leaves early releases the batch");
  // The lane that ends every round (31) leaves before the second step: the others' second step is released
  // by its leaving, and their first step's values are lane ^ 1's.
  std::vector<float> first(32), second(32);
  auto last_leaves = [&](HostThread& t) {
    const float v[2] = {(float)t.lane(), 100.0f + (float)t.lane()};
    const int m1[2] = {1, 2};
    float got[2];
    t.shfl_xor_n(v, m1, got);
    first[(size_t)t.lane()] = got[0] + 1000.0f * got[1];
    if (t.lane() == 31) return;
    second[(size_t)t.lane()] = t.shfl_xor(v[0], 4);
  };
  ok = run_host(g, last_leaves, &fb) == gdn::exec::kFaultNone;
  for (int l = 0; l < 32; ++l) ok = ok && first[(size_t)l] == (float)(l ^ 1) + 1000.0f * (100.0f + (float)(l ^ 2));
  for (int l = 0; l < 31; ++l) ok = ok && ((l ^ 4) == 31 || second[(size_t)l] == (float)(l ^ 4));
  check(ok, "warp mode: the round-ending lane leaving early releases the others, whose values stay right");
  HostGrid plain;
  plain.threads = 32;
  auto undeclared = [](HostThread& t) {
    const float v[2] = {1.0f, 2.0f};
    const int masks[2] = {1, 2};
    float got[2];
    t.shfl_xor_n(v, masks, got);
  };
  check(run_host(plain, undeclared, &fb) == gdn::exec::kFaultUndeclaredShuffle && fb == 0,
        "shfl_xor_n in a plain launch is reported as undeclared");
}

void test_faults() {
  HostGrid g;
  g.grid_x = 4;
  g.threads = 64;
  int64_t fb = 0;
  auto syncs = [](HostThread& t) {
    if (t.block() == 2) t.sync();
  };
  check(run_host(g, syncs, &fb) == gdn::exec::kFaultUndeclaredSync && fb == 2,
        "sync() in a plain (undeclared) launch is reported, with its block");
  auto shuffles = [](HostThread& t) { (void)t.shfl_xor(1.0f, 1); };
  check(run_host(g, shuffles, &fb) == gdn::exec::kFaultUndeclaredShuffle && fb == 0, "shfl_xor() in a plain launch is reported");
  g.cooperative = true;
  auto divergent = [](HostThread& t) {
    if (t.block() != 1) return;
    if (t.lane() == 0) t.sync();
    else (void)t.shfl_xor(1.0f, 1);
  };
  check(run_host(g, divergent, &fb) == gdn::exec::kFaultDeadlock && fb == 1, "a divergent barrier is a fault, not a hang");
  // After a fault the next launch on the same thread (same fiber pool) works.
  std::vector<int> hit(64, 0);
  auto fine = [&](HostThread& t) {
    t.sync();
    hit[(size_t)t.tid()]++;
  };
  g.grid_x = 1;
  check(run_host(g, fine, &fb) == gdn::exec::kFaultNone, "a launch after a faulting one runs");
  bool ok = true;
  for (int h : hit) ok = ok && h == 1;
  check(ok, "after a fault: every thread ran once");
  g.threads = 2048;
  check(run_host(g, fine, &fb) == gdn::exec::kFaultTooManyThreads, "more than 1024 threads is refused");
}

// A shared-memory tree over 1024 threads (the post-conv tree's shape), 200 blocks: stacks reused.
void test_tree_many_blocks() {
  HostGrid g;
  g.grid_x = 200;
  g.threads = 1024;
  g.shared_bytes = 1024 * 4;
  g.cooperative = true;
  std::vector<float> sums(200);
  auto body = [&](HostThread& t) {
    float* nodes = t.smem();
    nodes[t.tid()] = (float)((t.tid() * 7 + t.block()) % 13) * 0.25f;
    for (int stride = 512; stride >= 1; stride /= 2) {
      t.sync();
      if (t.tid() < stride) nodes[t.tid()] = nodes[t.tid()] + nodes[t.tid() + stride];
    }
    t.sync();
    if (t.tid() == 0) sums[(size_t)t.block()] = nodes[0];
  };
  int64_t fb = 0;
  const auto t0 = std::chrono::steady_clock::now();
  check(run_host(g, body, &fb) == gdn::exec::kFaultNone, "tree over 1024 threads x 200 blocks runs");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  bool ok = true;
  for (int b = 0; b < 200; ++b) {
    float nodes[1024];
    for (int i = 0; i < 1024; ++i) nodes[i] = (float)((i * 7 + b) % 13) * 0.25f;
    for (int stride = 512; stride >= 1; stride /= 2)
      for (int i = 0; i < stride; ++i) nodes[i] = nodes[i] + nodes[i + stride];
    ok = ok && std::memcmp(&nodes[0], &sums[(size_t)b], 4) == 0;
  }
  check(ok, "tree: every block's sum equals the level-by-level tree");
  // 11 waits per thread: 2 switches each, plus start and end
  const double switches = 200.0 * 1024 * (11 * 2 + 2);
  std::printf("exec (%s fibers): 200 blocks x 1024 threads x 11 barriers in %.1f ms, %.1f ns per switch\n",
              gdn::exec::host_fiber_kind(), ms, ms * 1e6 / switches);
}

}  // namespace

int main() {
  test_plain_order();
  test_barrier(true);
  test_shuffle();
  test_mixed();
  test_warp_mode();
  test_exchange_n();
  test_faults();
  test_tree_many_blocks();
  // The same barrier body without fibers must NOT give barrier semantics: the test can fail.
  {
    HostGrid g;
    g.threads = 8;
    g.shared_bytes = 32;
    std::vector<int32_t> out(8);
    auto body = [&](HostThread& t) {
      int32_t* sm = gdn::exec::smem_as<int32_t>(t);
      sm[t.tid()] = 100 + t.tid();
      // no t.sync(): in a plain loop thread 0 reads slot 1 before thread 1 wrote it
      out[(size_t)t.tid()] = sm[(t.tid() + 1) % 8];
    };
    int64_t fb = 0;
    run_host(g, body, &fb);
    check(out[0] != 101, "control: a plain loop without barriers reads a neighbour's stale slot (the barrier test can fail)");
  }
  std::printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures == 0 ? 0 : 1;
}
