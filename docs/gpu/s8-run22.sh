#!/usr/bin/env bash
# Call 3 of session 8: ncu of conv stream and stream-mufu (4B, T = 8192 and 2048; stream-mufu on the varlen batch),
# libgdn built here if the machine is fresh.
# Usage: run22.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so GDN_BACKEND=cuda
if [ ! -f "$GDN_LIBRARY" ]; then
  t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn >> "$OUT/build.log" 2>&1
  echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
fi
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 200 ncu --clock-control none -k regex:"conv_kernel" \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats \
  --metrics smsp__inst_executed.sum,dram__bytes.sum,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active \
  node .gpu-run/prof9.js > "$OUT/ncu-9.txt" 2>&1
echo "ncu rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
grep -E '^\s+void|smsp__inst_executed.sum|dram__bytes|pipe_xu|pipe_fma|pipe_alu|issue_active|Duration|Issued Warp|Achieved Occ|DRAM Through|Registers Per' "$OUT/ncu-9.txt" > "$OUT/ncu-9-summary.txt"; cat "$OUT/ncu-9-summary.txt" | cut -c1-160
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
