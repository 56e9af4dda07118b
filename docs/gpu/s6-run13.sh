#!/usr/bin/env bash
# Call 1 of session 6: the library of this revision on CUDA — host + CUDA suites (the host-only vec change must leave
# CUDA == host), then ncu of the conv arms stream / tile / vec (4B T = 8192 and 2048) and stream on the varlen batch.
# Usage: run13.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
# libgdn from these sources, built here (sm_90; the library and its user-arm worker).
t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn gdn_user_worker >> "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -3 "$OUT/build.log"
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 150 ncu --clock-control none -k regex:"conv_kernel" \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --metrics smsp__inst_executed.sum,dram__bytes.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_math_pipe_throttle.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_selected.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_tex_throttle.ratio,smsp__average_warp_latency_issue_stalled_no_instruction.ratio,smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active \
  node .gpu-run/prof6.js > "$OUT/ncu-6.txt" 2>&1
echo "ncu rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
grep -E '^\s+void|smsp__inst_executed.sum|dram__bytes|Duration|Issued Warp|Achieved Occ|Theoretical Occ|DRAM Through|Registers Per|stalled|Eligible Warps|No Eligible|Compute \(SM\) Th|pipe_' "$OUT/ncu-6.txt" > "$OUT/ncu-6-summary.txt"; head -150 "$OUT/ncu-6-summary.txt"
t0=$SECONDS; GDN_BACKEND=cuda GDN_TEST_BACKENDS=host,cuda timeout ${TESTS_S:-280} mocha --timeout ${TESTS_S:-280}000 --reporter spec 'dist/test/core/*.test.js' 'dist/test/ops/*.test.js' dist/test/arms/arms.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log"; grep -A15 ' failing' "$OUT/tests-host-cuda.log" | head -40
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
