// fused_tune.cu — tuning bench of the fused arms' shared body (fused_stream.h, stream_body) on a GPU: not part
// of libgdn, not run in CI.
//
// The knobs of stream_body that decide speed and not bits: how q/k rows get their L2 scale (one row at a time,
// or 4 rows at once: head_l2_inv_rows4), the conv's SiLU policy (exact, or the bf16 shortcut of the conv arm
// stream-mufu), and the register cap (__launch_bounds__ minimum resident blocks). Each configuration runs the
// production body (bf16 x, conv_dtype, q/k/v and gates; K = 4, Qwen3.5's width) on the Qwen3.5-4B (Hk = 16,
// Hv = 32) and 27B (Hk = 16, Hv = 48) layouts at T = 2048, 8192, 32768 and on a varlen batch of 32 sequences;
// its q, k, v, g, beta and final conv state are compared bit for bit with configuration 0 (the per-row
// reduction at 6 blocks: the algorithm and launch shape of `stream` as of b565c08, proven equal to
// conv(scalar) -> post-conv(tree) by gdnlab check fused) BEFORE it is timed.
// Timing: CUDA events around one launch, L2 flushed before each, configurations interleaved round by round,
// median of the rounds, beside a device-to-device copy moving the same bytes (x, a, b read; q, k, v, g, beta
// written).
//
//   nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Icuda/include -Icuda/src -Icuda/tests \
//        cuda/tests/fused_tune.cu -o fused_tune && ./fused_tune [rounds]
#include "common/arms/fused_stream.h"
#include "cuda_check.h"
#include "splitmix.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gdn;
using conv::bf16_bits;

template <int MINB, bool ROWS4, class S>
__global__ void __launch_bounds__(fused::kThreads, MINB) tune_kernel(const fused::Params p, int64_t gx, int64_t gy) {
  exec::CudaThread<false> t{gx, gy, nullptr};
  fused::stream_body<bf16_bits, bf16_bits, bf16_bits, NoMutant, 0, ROWS4, S>(p, t);
}

struct Config {
  const char* name;
  void (*kernel)(const fused::Params, int64_t, int64_t);
};
#define CFG(NAME, MINB, ROWS4, S) {NAME, &tune_kernel<MINB, ROWS4, S>}
// ROWS4: q/k rows take their L2 scales 4 rows at a time (head_l2_inv_rows4) instead of one row at a time.
// mufu: the conv arm stream-mufu's SiLU policy (Bf16ShortcutSilu: valid here, conv_dtype is bf16).
// Measured before with this file's earlier versions (CHANGELOG 2026-12-02, 7e5d158 and 3011402):
// a warp per head slot for the whole program (4 slots per block), and rows through a
// per-thread ring of asynchronous copies; both lost.
using conv::Bf16ShortcutSilu;
using conv::TileSilu;
const Config kConfigs[] = {
    CFG("per-row norm, 6 blk (stream @b565c08)", 6, false, TileSilu),
    CFG("stream (library): 7 blk, rows4 norm", 7, true, TileSilu),
    CFG("7 blk, rows4, mufu", 7, true, Bf16ShortcutSilu),
    CFG("8 blk, rows4, mufu", 8, true, Bf16ShortcutSilu),
    CFG("6 blk, rows4, mufu", 6, true, Bf16ShortcutSilu),
};
constexpr int kNumConfigs = sizeof kConfigs / sizeof kConfigs[0];

static uint16_t bf16_of(float f) {  // round to nearest even (finite inputs)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

struct Shape {
  std::string name;
  int64_t Hk, Hv;
  std::vector<int32_t> lengths;
};

struct Outputs {
  std::vector<uint16_t> q, k, v;
  std::vector<float> g, beta, state;
};

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 15;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  int drv = 0, rt = 0, sm_clock = 0, mem_clock = 0;
  CK(cudaDriverGetVersion(&drv));
  CK(cudaRuntimeGetVersion(&rt));
  CK(cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, 0));
  CK(cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, 0));
  std::printf("fused_tune: %s (sm_%d%d, %d SMs, L2 %d MiB), driver API %d, runtime %d, max clocks SM %d / mem %d MHz, "
              "%d rounds\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20, drv, rt, sm_clock / 1000,
              mem_clock / 1000, rounds);
  for (const Config& c : kConfigs) {
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, c.kernel));
    std::printf("  config %-52s %3d registers, %4zu B local (spills)\n", c.name, fa.numRegs, fa.localSizeBytes);
  }
  void* flush;
  const size_t flush_bytes = (size_t)prop.l2CacheSize * 2;
  CK(cudaMalloc(&flush, flush_bytes));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));

  std::vector<Shape> shapes;
  for (int model = 0; model < 2; ++model) {
    const int64_t Hv = model == 0 ? 32 : 48;
    const std::string m = model == 0 ? "4B" : "27B";
    for (int32_t T : {2048, 8192, 32768}) shapes.push_back({m + " T=" + std::to_string(T), 16, Hv, {T}});
    std::vector<int32_t> lens;
    Rng r(7 + model);
    for (int i = 0; i < 32; ++i) lens.push_back(16 + (int32_t)(r.next() % 113));  // 16 .. 128 tokens
    shapes.push_back({m + " varlen 32 seqs", 16, Hv, lens});
  }

  bool all_equal = true;
  for (const Shape& sh : shapes) {
    const int64_t Hk = sh.Hk, Hv = sh.Hv, K = 4, D = fused::kD;
    const int64_t C = 2 * Hk * D + Hv * D;
    const int32_t N = (int32_t)sh.lengths.size();
    std::vector<int32_t> qsl(N + 1, 0), programs;
    for (int32_t s = 0; s < N; ++s) qsl[s + 1] = qsl[s] + sh.lengths[s];
    const int64_t T = qsl[N];
    for (int32_t s = 0; s < N; ++s)
      for (int32_t c = 0; c * fused::kChunk < sh.lengths[s]; ++c) {
        programs.push_back(s);
        programs.push_back(c);
      }
    const int64_t nprog = (int64_t)programs.size() / 2;
    Rng rng(42);
    std::vector<uint16_t> x(T * C), w(C * K), bias(C), a(T * Hv), b(T * Hv);
    for (auto& e : x) e = bf16_of((float)rng.normal());
    for (auto& e : w) e = bf16_of(rng.uniform(-0.5f, 0.5f));
    for (auto& e : bias) e = bf16_of(rng.uniform(-0.1f, 0.1f));
    for (auto& e : a) e = bf16_of((float)rng.normal());
    for (auto& e : b) e = bf16_of((float)rng.normal());
    std::vector<float> A_log(Hv), dt_bias(Hv), state0((size_t)N * C * (K - 1));
    for (auto& e : A_log) e = rng.uniform(-1.0f, 1.0f);
    for (auto& e : dt_bias) e = rng.uniform(-1.0f, 1.0f);
    for (auto& e : state0) e = (float)rng.normal();
    std::vector<int8_t> his(N);
    for (int32_t s = 0; s < N; ++s) his[s] = (int8_t)(s % 2 == 0);

    auto up = [](const void* src, size_t bytes) {
      void* d;
      CK(cudaMalloc(&d, bytes ? bytes : 1));
      if (bytes) CK(cudaMemcpy(d, src, bytes, cudaMemcpyHostToDevice));
      return d;
    };
    void* dx = up(x.data(), x.size() * 2);
    void* dw = up(w.data(), w.size() * 2);
    void* dbias = up(bias.data(), bias.size() * 2);
    void* da = up(a.data(), a.size() * 2);
    void* db = up(b.data(), b.size() * 2);
    void* dA = up(A_log.data(), Hv * 4);
    void* ddt = up(dt_bias.data(), Hv * 4);
    void* dqsl = up(qsl.data(), qsl.size() * 4);
    void* dhis = up(his.data(), his.size());
    void* dprog = up(programs.data(), programs.size() * 4);
    void* dstate0 = up(state0.data(), state0.size() * 4);
    void* dstate = up(state0.data(), state0.size() * 4);
    void *dq, *dk, *dv, *dg, *dbeta;
    CK(cudaMalloc(&dq, T * Hk * D * 2));
    CK(cudaMalloc(&dk, T * Hk * D * 2));
    CK(cudaMalloc(&dv, T * Hv * D * 2));
    CK(cudaMalloc(&dg, T * Hv * 4));
    CK(cudaMalloc(&dbeta, T * Hv * 4));
    // The copy moves the op's traffic: x, a, b read; q, k, v, g, beta written (a copy of N bytes moves 2N).
    const size_t traffic = (size_t)(T * C * 2 + 2 * T * Hv * 2 + T * C * 2 + 2 * T * Hv * 4);
    void *csrc, *cdst;
    CK(cudaMalloc(&csrc, traffic / 2));
    CK(cudaMalloc(&cdst, traffic / 2));
    CK(cudaMemset(csrc, 1, traffic / 2));

    fused::Params p{};
    p.T = T; p.Hk = Hk; p.Hv = Hv; p.C = C; p.x_stride = C; p.K = (int32_t)K; p.N = N;
    p.slots = (int32_t)(2 * Hk + Hv + 1); p.mutant = 0; p.gate_bf16 = 1; p.his_i32 = 0;
    p.x = dx; p.w = dw; p.bias = dbias; p.qsl = static_cast<const int32_t*>(dqsl); p.his = dhis;
    p.state = static_cast<float*>(dstate); p.q = dq; p.k = dk; p.v = dv;
    p.programs = static_cast<const int32_t*>(dprog);
    p.gates.T = T; p.gates.Hk = Hk; p.gates.Hv = Hv; p.gates.Dk = D; p.gates.Dv = D; p.gates.C = C;
    p.gates.a_stride = Hv; p.gates.b_stride = Hv; p.gates.a = da; p.gates.b = db;
    p.gates.A_log = static_cast<const float*>(dA); p.gates.dt_bias = static_cast<const float*>(ddt);
    p.gates.g = static_cast<float*>(dg); p.gates.beta = static_cast<float*>(dbeta);

    auto launch = [&](const Config& c) {
      const int64_t gx = p.slots;  // one block per (head slot, program), slots fastest, as fused.cu launches
      c.kernel<<<(unsigned)(gx * nprog), fused::kThreads>>>(p, gx, nprog);
    };
    auto read = [&]() {
      Outputs o;
      o.q.resize(T * Hk * D); o.k.resize(T * Hk * D); o.v.resize(T * Hv * D);
      o.g.resize(T * Hv); o.beta.resize(T * Hv); o.state.resize(state0.size());
      CK(cudaMemcpy(o.q.data(), dq, o.q.size() * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(o.k.data(), dk, o.k.size() * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(o.v.data(), dv, o.v.size() * 2, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(o.g.data(), dg, o.g.size() * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(o.beta.data(), dbeta, o.beta.size() * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(o.state.data(), dstate, o.state.size() * 4, cudaMemcpyDeviceToHost));
      return o;
    };
    auto poison = [&]() {
      CK(cudaMemset(dq, 0xff, T * Hk * D * 2)); CK(cudaMemset(dk, 0xff, T * Hk * D * 2)); CK(cudaMemset(dv, 0xff, T * Hv * D * 2));
      CK(cudaMemset(dg, 0xff, T * Hv * 4)); CK(cudaMemset(dbeta, 0xff, T * Hv * 4));
      CK(cudaMemcpy(dstate, dstate0, state0.size() * 4, cudaMemcpyDeviceToDevice));
    };
    // Bits first: every configuration against configuration 0, element counts of mismatching bit patterns.
    std::vector<std::string> verdict(kNumConfigs);
    Outputs ref;
    for (int ci = 0; ci < kNumConfigs; ++ci) {
      poison();
      launch(kConfigs[ci]);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      Outputs o = read();
      if (ci == 0) {
        ref = std::move(o);
        verdict[ci] = "reference";
        continue;
      }
      auto count = [](const auto& u, const auto& r) {
        size_t n = 0;
        for (size_t i = 0; i < u.size(); ++i) n += std::memcmp(&u[i], &r[i], sizeof u[i]) != 0;
        return n;
      };
      const size_t mq = count(o.q, ref.q), mk = count(o.k, ref.k), mv = count(o.v, ref.v), mg = count(o.g, ref.g),
                   mb = count(o.beta, ref.beta), ms = count(o.state, ref.state);
      const size_t total = mq + mk + mv + mg + mb + ms;
      char buf[160];
      std::snprintf(buf, sizeof buf, total == 0 ? "bits == config 0" : "MISMATCH q %zu k %zu v %zu g %zu beta %zu state %zu",
                    mq, mk, mv, mg, mb, ms);
      verdict[ci] = buf;
      if (total) all_equal = false;
    }
    // Timing, interleaved.
    std::vector<std::vector<float>> ts(kNumConfigs + 1);
    for (int r = 0; r < rounds; ++r) {
      for (int ci = 0; ci <= kNumConfigs; ++ci) {
        if (ci < kNumConfigs) CK(cudaMemcpy(dstate, dstate0, state0.size() * 4, cudaMemcpyDeviceToDevice));
        CK(cudaMemsetAsync(flush, r, flush_bytes));
        CK(cudaEventRecord(e0));
        if (ci < kNumConfigs) launch(kConfigs[ci]);
        else CK(cudaMemcpyAsync(cdst, csrc, traffic / 2, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float ms;
        CK(cudaEventElapsedTime(&ms, e0, e1));
        ts[ci].push_back(ms * 1000.0f);
      }
    }
    auto median = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const float copy_us = median(ts[kNumConfigs]);
    const float base_us = median(ts[0]);
    std::printf("\n== %s: T = %lld, C = %lld, %lld programs, traffic %.1f MB, copy %.1f us\n", sh.name.c_str(), (long long)T,
                (long long)C, (long long)nprog, traffic / 1e6, copy_us);
    for (int ci = 0; ci < kNumConfigs; ++ci) {
      const float us = median(ts[ci]);
      std::printf("  %-52s %8.1f us  x copy %5.2f  / config 0 %5.3f  %s\n", kConfigs[ci].name, us, us / copy_us, us / base_us,
                  verdict[ci].c_str());
    }
    for (void* d : {dx, dw, dbias, da, db, dA, ddt, dqsl, dhis, dprog, dstate0, dstate, dq, dk, dv, dg, dbeta, csrc, cdst})
      CK(cudaFree(d));
  }
  CK(cudaFree(flush));
  std::printf("\n%s\n", all_equal ? "all configurations: bits == config 0 on every shape" : "SOME CONFIGURATION MISMATCHED");
  return all_equal ? 0 : 1;
}
