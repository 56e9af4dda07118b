#!/usr/bin/env bash
# Call 4 of session 10: libgdn built here; the fused suites on host + CUDA (stream with the 4-row L2 reduction
# == the chain bit for bit, CUDA == host); check fused with mutants (full matrix); check conv --quick --mutants;
# bench fused beside the chain, the copy and vLLM; ncu of fused stream and head-tile; compute-sanitizer over
# every arm.  Usage: run24.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so GDN_BACKEND=cuda
T0=$SECONDS
t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn gdn_user_worker >> "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -2 "$OUT/build.log"
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 150 mocha --timeout 150000 --reporter dot dist/test/ops/fused.test.js dist/test/ops/out-buffers.test.js dist/test/arms/arms.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
t0=$SECONDS; timeout 60 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1; echo "check conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -4 "$OUT/check-conv.log"
t0=$SECONDS; timeout 90 node bin/gdnlab.js check fused --backend cuda --mutants > "$OUT/check-fused.log" 2>&1; echo "check fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -6 "$OUT/check-fused.log"
t0=$SECONDS; timeout 200 node bin/gdnlab.js bench fused --backend cuda --vllm .device/vllm --json="$OUT/bench-fused.json" --markdown "$OUT/bench-fused.md" > "$OUT/bench-fused.log" 2>&1
echo "bench fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\||^\*\*' "$OUT/bench-fused.md" | cut -c1-220 | head -40
t0=$SECONDS; timeout 60 ncu --clock-control none -k regex:"fused_kernel" \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats \
  --metrics smsp__inst_executed.sum,dram__bytes.sum,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
  node .gpu-run/prof11.js > "$OUT/ncu-11.txt" 2>&1
echo "ncu rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
grep -E '^\s+void|smsp__inst_executed.sum|dram__bytes|pipe_xu|pipe_fma|pipe_alu|issue_active|Duration|Issued Warp|Achieved Occ|DRAM Through|Registers Per' "$OUT/ncu-11.txt" > "$OUT/ncu-11-summary.txt"; cut -c1-160 "$OUT/ncu-11-summary.txt" | head -60
for tool in memcheck racecheck synccheck; do
  left=$((560 - (SECONDS - T0))); [ $left -lt 20 ] && { echo "sanitize $tool: skipped, $left s left" | tee -a "$OUT/session.log"; continue; }
  t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
  echo "sanitize $tool rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
