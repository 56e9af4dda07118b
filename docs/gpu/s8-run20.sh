#!/usr/bin/env bash
# Call 1 of session 8: libgdn built here from these sources; the new post-conv arm vec-tile proven on CUDA
# (postconv_smoke: CUDA == host == definition; the host + CUDA mocha suites of post-conv, arms and the pinned
# reference bits; check postconv with mutants), then bench postconv beside vLLM's Triton kernel, and ncu of
# token-tile and vec-tile at the 4B and 27B head layouts.
# Usage: run20.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so GDN_BACKEND=cuda
t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn gdn_user_worker gdn_postconv_smoke >> "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -2 "$OUT/build.log"
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 120 /tmp/gdn-build/gdn_postconv_smoke > "$OUT/postconv-smoke.log" 2>&1; echo "postconv_smoke rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -2 "$OUT/postconv-smoke.log"
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 200 mocha --timeout 200000 --reporter dot dist/test/ops/postconv.test.js dist/test/ops/golden.test.js dist/test/arms/arms.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
t0=$SECONDS; timeout 90 node bin/gdnlab.js check postconv --backend cuda --quick --mutants > "$OUT/check-postconv.log" 2>&1; echo "check postconv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -4 "$OUT/check-postconv.log"
t0=$SECONDS; timeout 200 node bin/gdnlab.js bench postconv --backend cuda --vllm .device/vllm --json="$OUT/bench-postconv.json" --markdown "$OUT/bench-postconv.md" > "$OUT/bench-postconv.log" 2>&1
echo "bench postconv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; cat "$OUT/bench-postconv.md" | head -60
t0=$SECONDS; timeout 120 ncu --clock-control none -k regex:"postconv_kernel" \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
  --metrics smsp__inst_executed.sum,dram__bytes.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__cycles_active.avg \
  node .gpu-run/prof8.js token-tile vec-tile > "$OUT/ncu-8.txt" 2>&1
echo "ncu rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
grep -E '^\s+void|^  postconv|ran |smsp__inst_executed.sum|dram__bytes|Duration|Issued Warp|Achieved Occ|Theoretical Occ|DRAM Through|Memory Through|Registers Per|long_scoreboard' "$OUT/ncu-8.txt" > "$OUT/ncu-8-summary.txt"; head -80 "$OUT/ncu-8-summary.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
