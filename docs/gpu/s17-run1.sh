#!/usr/bin/env bash
# Session 17, call 1: the bench of the conv kernel as a5cc6a3 built it (ring first, 4 bf16 groups; session 16's
# call 5 was cut off inside vLLM), beside vLLM 0.33.0 in the same invocation; then ncu of the kernels whose targets
# are missed (docs/gpu/s17-prof.js): summaries of speed of light, occupancy, scheduler and warp states, instruction
# mix, and the fused stream-mufu kernel's SASS with executed instruction counts (source page).
# libgdn built on the development machine from this revision (sm_90, carried xz). Usage: s17-run1.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
xz -dc .gpu-run/libgdn-local.so.xz > /tmp/libgdn.so
export GDN_LIBRARY=/tmp/libgdn.so GDN_REVISION=$1 GDN_BACKEND=cuda
source .device/env.sh
{ date -u; echo "revision: $1, library $GDN_LIBRARY"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 240 node bin/gdnlab.js bench conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,stream/exact,stream-mufu/exact --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" > "$OUT/bench-conv.log" 2>&1
echo "bench conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
t0=$SECONDS
timeout 150 ncu --clock-control none -k regex:"fused_kernel|conv_kernel" \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
  --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters \
  --import-source no -o /tmp/prof17 node docs/gpu/s17-prof.js > "$OUT/ncu.log" 2>&1
echo "ncu rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
ncu --import /tmp/prof17.ncu-rep --print-details all > /tmp/ncu-details.txt 2>&1
ncu --import /tmp/prof17.ncu-rep --page raw --csv --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,dram__bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__inst_executed_op_shfl.sum > "$OUT/ncu-raw.csv" 2>&1
# SASS with executed counts of the first fused stream-mufu launch (4B T = 8192)
ncu --import /tmp/prof17.ncu-rep --page source --csv --print-source sass --launch-skip 0 --launch-count 1 > /tmp/sass-fused.csv 2>&1
ncu --import /tmp/prof17.ncu-rep --page source --csv --print-source sass --launch-skip 4 --launch-count 1 > /tmp/sass-conv.csv 2>&1
head -c 300 /tmp/sass-fused.csv | tee -a "$OUT/session.log"; echo
[ -s /tmp/sass-fused.csv ] && [ $(wc -l < /tmp/sass-fused.csv) -gt 50 ] || cuobjdump -sass -fun fused_kernel /tmp/libgdn.so > /tmp/sass-fused.txt 2>&1
cd /tmp && tar cJf "$OUT/ncu.txz" ncu-details.txt sass-*.csv sass-fused.txt prof17.ncu-rep 2>/dev/null; cd - >/dev/null
awk '/^\*\*/{sh=$0} /^\| (stream-mufu|stream|vec|vLLM)/{split($0,a,"|"); printf "%-45s %-16s %8s %6s\n", substr(sh,1,45), a[2], a[4], a[9]}' "$OUT/bench-conv.md"
ls -la "$OUT"
