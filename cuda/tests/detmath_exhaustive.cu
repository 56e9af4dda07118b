// detmath_exhaustive.cu — common/detmath.h over all 2^32 float inputs: host vs GPU bits, and the
// accuracy of each function against float64.
//
// Bits: each function's results are folded into an order-independent checksum (sum over inputs of
// a mix of (input bits, result bits), mod 2^64); a second sum leaves out the inputs whose result is
// a NaN, so a difference can be placed in NaN handling or in the numbers. Run on the host to print
// the checksums, then on a GPU machine with those checksums to compare (the host pass takes about a
// minute per function on one core, so it is done once, off the GPU machine):
//   nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Xcompiler -ffp-contract=off,-mfma \
//        -Icuda/src/common cuda/tests/detmath_exhaustive.cu -o detmath_exhaustive
//   ./detmath_exhaustive host [THREADS]  -> prints 12 checksums (production arithmetic, kArithVersion)
//   ./detmath_exhaustive gpu SUM1 ...    -> exit 0 when the GPU's sums equal them
//
// Accuracy (host only; also builds with g++ -O2 -std=c++17 -ffp-contract=off -mfma -x c++):
//   ./detmath_exhaustive accuracy NAME   -> max error in f32 ulps of the float64 value, how many
//                                           inputs are off by more than 1 ulp and more than 2 ulps,
//                                           and special-value disagreements (NaN / Inf / sign of 0)
//   NAME: exp silu softplus sigmoid log1p (production, kArithVersion), silu-exp (the exp pieces
//   inside version 2's SiLU, as one exp) or v1-silu (version 1's SiLU). The requirement for a
//   function a new version changes (docs/SPEC.md §9.1): within 2 ulps on every input.
//
// The bf16 SiLU shortcut (GPU only; docs/SPEC.md §9.2):
//   ./detmath_exhaustive shortcut        -> every x with |x| <= 80: how many silu_bf16_shortcut accepts,
//                                           how many of those round to another bf16 than gdn_silu (exit 1
//                                           unless 0), and the largest f32 distance from gdn_silu for
//                                           |x| < 8 (exit 1 when above kSiluShortcutSlack)
#include "detmath.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>
#include <cstdlib>
#include <cstring>
#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#define __host__
#define __device__
#endif

using namespace gdn;

constexpr int kFuncs = 6;
constexpr int kSums = 2 * kFuncs;  // [f]: every input; [kFuncs + f]: inputs with a non-NaN result
const char* kNames[kFuncs] = {"gdn_expf", "gdn_silu", "gdn_log1pf", "gdn_softplus", "f32_to_bf16", "gdn_sigmoid"};

__host__ __device__ inline uint32_t eval(int f, float x) {
  switch (f) {
    case 0: return f32_bits(gdn_expf(x));
    case 1: return f32_bits(gdn_silu(x));
    case 2: return f32_bits(gdn_log1pf(x));
    case 3: return f32_bits(gdn_softplus(x));
    case 4: return f32_to_bf16(x);
    default: return f32_bits(gdn_sigmoid(x));
  }
}

__host__ __device__ inline uint64_t mix(uint32_t in, uint32_t out) {
  uint64_t z = ((uint64_t)in << 32 | out) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__host__ __device__ inline bool result_is_nan(int f, uint32_t r) {
  return f == 4 ? (r & 0x7fffu) > 0x7f80u : (r & 0x7fffffffu) > 0x7f800000u;
}

__host__ __device__ inline void accumulate(uint32_t i, unsigned long long* acc) {
  const float x = f32_from_bits(i);
  for (int f = 0; f < kFuncs; ++f) {
    const uint32_t r = eval(f, x);
    const uint64_t m = mix(i, r);
    acc[f] += m;
    if (!result_is_nan(f, r)) acc[kFuncs + f] += m;
  }
}

#if defined(__CUDACC__)
__global__ void sums_kernel(unsigned long long* sums) {
  unsigned long long acc[kSums] = {};
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += (uint64_t)gridDim.x * blockDim.x)
    accumulate((uint32_t)i, acc);
  for (int f = 0; f < kSums; ++f) atomicAdd(&sums[f], acc[f]);
}

// ----------------------------------------------------------------- the bf16 SiLU shortcut (GPU only)
// silu_bf16_shortcut over every x with |x| <= 80 (gdn_silu_fast_range: where the arms call it):
//   [0] accepted inputs, [1] accepted inputs whose bf16 rounding differs from gdn_silu's (must be 0),
//   [2] inputs in the range, [3] largest |bits(ya) - bits(gdn_silu)| over accepted-range inputs
//       (|x| < kSiluShortcutRange, both normal, same sign: the slack the rounding test relies on),
//   [4] the first accepted input that was wrong (0 if none).
__global__ void shortcut_kernel(unsigned long long* out) {
  unsigned long long acc = 0, wrong = 0, in_range = 0, maxd = 0, first_wrong = 0;
  for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (1ull << 32); i += (uint64_t)gridDim.x * blockDim.x) {
    const float x = f32_from_bits((uint32_t)i);
    if (!gdn_silu_fast_range(x)) continue;
    ++in_range;
    const float yd = gdn_silu_fast(x);
    float ya;
    const bool ok = silu_bf16_shortcut(x, &ya);
    const uint32_t ba = f32_bits(ya), bd = f32_bits(yd);
    if (fabsf(x) < kSiluShortcutRange && (ba >> 31) == (bd >> 31) && (ba & 0x7fffffffu) >= 0x00800000u &&
        (bd & 0x7fffffffu) >= 0x00800000u) {
      const unsigned long long d = ba > bd ? ba - bd : bd - ba;
      if (d > maxd) maxd = d;
    }
    if (ok) {
      ++acc;
      if (f32_to_bf16(ya) != f32_to_bf16(yd)) {
        ++wrong;
        first_wrong = i;
      }
    }
  }
  atomicAdd(&out[0], acc);
  atomicAdd(&out[1], wrong);
  atomicAdd(&out[2], in_range);
  atomicMax(&out[3], maxd);
  if (first_wrong) atomicMax(&out[4], first_wrong);
}
#endif

// ----------------------------------------------------------------- accuracy against float64
// ulp of a float64 value v in f32: 2^(e - 24) for |v| in [2^(e-1), 2^e) normal, 2^-149 below 2^-126.
static double ulp_f32(double v) {
  const double a = std::fabs(v);
  if (a < 0x1p-126) return 0x1p-149;
  int e;
  std::frexp(a, &e);  // a = m · 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

struct Accuracy {
  double max_ulp = 0;
  uint32_t worst = 0;
  uint64_t over1 = 0, over2 = 0, special = 0, finite = 0;
  double sum_ulp = 0;
};

template <class F, class R>
static Accuracy measure(F f, R ref) {
  Accuracy a;
  for (uint64_t i = 0; i < (1ull << 32); ++i) {
    const float x = f32_from_bits((uint32_t)i);
    const float y = f(x);
    const double r = ref((double)x);
    if (std::isnan(r) || std::isnan(y)) {
      if (std::isnan(r) != std::isnan(y)) a.special++;
      continue;
    }
    // A float64 value beyond the f32 range is +-Inf once rounded to f32.
    const double rf = std::fabs(r) >= 0x1.ffffffp127 ? std::copysign(INFINITY, r) : r;
    if (std::isinf(rf) || std::isinf(y)) {
      if (!(std::isinf(rf) && std::isinf(y) && (rf > 0) == (y > 0))) a.special++;
      continue;
    }
    a.finite++;
    const double e = std::fabs((double)y - rf) / ulp_f32(rf);
    a.sum_ulp += e;
    if (e > 1.0) a.over1++;
    if (e > 2.0) a.over2++;
    if (e > a.max_ulp) {
      a.max_ulp = e;
      a.worst = (uint32_t)i;
    }
  }
  return a;
}

static double silu64(double x) { return x / (1.0 + std::exp(-x)); }
static double softplus64(double x) { return x > 20.0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
static double sigmoid64(double x) { return 1.0 / (1.0 + std::exp(-x)); }

static int accuracy(const char* name) {
  Accuracy a;
  double (*ref)(double) = nullptr;
  if (!std::strcmp(name, "exp")) a = measure(gdn_expf, ref = [](double x) { return std::exp(x); });
  else if (!std::strcmp(name, "silu")) a = measure(gdn_silu, ref = silu64);
  else if (!std::strcmp(name, "softplus")) a = measure(gdn_softplus, ref = softplus64);
  else if (!std::strcmp(name, "sigmoid")) a = measure(gdn_sigmoid, ref = sigmoid64);
  else if (!std::strcmp(name, "log1p")) a = measure(gdn_log1pf, ref = [](double x) { return std::log1p(x); });
  else if (!std::strcmp(name, "silu-exp"))
    a = measure([](float x) { return gdn_expf_fast_range(x) ? gdn_silu_expf(x) : gdn_expf_wide(x); },
                ref = [](double x) { return std::exp(x); });
  else if (!std::strcmp(name, "v1-silu")) a = measure(v1::silu, ref = silu64);
  else {
    std::fprintf(stderr, "accuracy: unknown function '%s'\n", name);
    return 2;
  }
  const float xw = f32_from_bits(a.worst);
  std::printf("%-12s max %.3f ulp (x = %a, %08x, ref %.9g) mean %.4f ulp; %llu finite; > 1 ulp: %llu; > 2 ulp: %llu;"
              " special-value disagreements: %llu\n",
              name, a.max_ulp, (double)xw, a.worst, ref((double)xw), a.finite ? a.sum_ulp / (double)a.finite : 0.0,
              (unsigned long long)a.finite, (unsigned long long)a.over1, (unsigned long long)a.over2,
              (unsigned long long)a.special);
  return a.over2 == 0 && a.special == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "accuracy") == 0) return accuracy(argv[2]);
  if (argc >= 2 && std::strcmp(argv[1], "host") == 0) {
    // host [THREADS]: the sums are order-independent (mod 2^64), so the range may be split.
    const int nt = argc > 2 ? std::atoi(argv[2]) : 1;
    unsigned long long sums[kSums] = {};
    std::vector<std::array<unsigned long long, kSums>> part((size_t)(nt > 0 ? nt : 1));
    std::vector<std::thread> th;
    for (int k = 0; k < (int)part.size(); ++k)
      th.emplace_back([&, k] {
        part[k].fill(0);
        const uint64_t lo = (1ull << 32) / part.size() * k, hi = k + 1 == (int)part.size() ? (1ull << 32) : (1ull << 32) / part.size() * (k + 1);
        for (uint64_t i = lo; i < hi; ++i) accumulate((uint32_t)i, part[k].data());
      });
    for (auto& t : th) t.join();
    for (auto& q : part)
      for (int f = 0; f < kSums; ++f) sums[f] += q[f];
    std::fprintf(stderr, "arith-v%d checksums:\n", kArithVersion);
    for (int f = 0; f < kSums; ++f) std::printf("%016llx ", sums[f]);
    std::printf("\n");
    return 0;
  }
#if defined(__CUDACC__)
  if (argc == 2 + kSums && std::strcmp(argv[1], "gpu") == 0) {
    unsigned long long* d;
    unsigned long long h[kSums];
    if (cudaMalloc(&d, sizeof h) != cudaSuccess) return 2;
    cudaMemset(d, 0, sizeof h);
    sums_kernel<<<8192, 256>>>(d);
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) return 2;
    int bad = 0;
    for (int f = 0; f < kSums; ++f) {
      const unsigned long long want = std::strtoull(argv[2 + f], nullptr, 16);
      std::printf("%-13s %-13s host %016llx gpu %016llx %s\n", kNames[f % kFuncs], f < kFuncs ? "all inputs" : "non-NaN out",
                  want, h[f], want == h[f] ? "identical" : "DIFFERENT");
      bad += want != h[f];
    }
    std::printf("arith-v%d: %d of %d checksums differ\n", kArithVersion, bad, kSums);
    return bad == 0 ? 0 : 1;
  }
  if (argc == 2 && std::strcmp(argv[1], "shortcut") == 0) {
    unsigned long long* d;
    unsigned long long h[5];
    if (cudaMalloc(&d, sizeof h) != cudaSuccess) return 2;
    cudaMemset(d, 0, sizeof h);
    shortcut_kernel<<<8192, 256>>>(d);
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) return 2;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    std::printf("silu_bf16_shortcut on %s (sm_%d%d), every x with |x| <= 80: %llu inputs, %llu accepted (%.4f%%), "
                "%llu accepted with a bf16 other than gdn_silu's%s; largest distance to gdn_silu for |x| < %g: %llu "
                "f32 ulps (slack %u)\n",
                prop.name, prop.major, prop.minor, h[2], h[0], 100.0 * (double)h[0] / (double)h[2], h[1],
                h[1] ? " (FAIL)" : "", (double)kSiluShortcutRange, h[3], kSiluShortcutSlack);
    if (h[1]) std::printf("an accepted input that was wrong: %08llx\n", h[4]);
    return h[1] == 0 && h[3] <= kSiluShortcutSlack ? 0 : 1;
  }
#endif
  std::fprintf(stderr, "usage: %s host | gpu SUM1 .. SUM%d | accuracy NAME\n", argv[0], kSums);
  return 2;
}
