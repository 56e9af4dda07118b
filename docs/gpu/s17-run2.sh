#!/usr/bin/env bash
# Session 17, call 2: the fused arms' rows through a per-thread ring of asynchronous copies requested before
# the taps and history (fused_stream.h RING, after call 1's ncu put 37% of the fused stream-mufu kernel's stall
# samples on loads: docs/BENCHMARKS.md "Session 17"). fused_tune (built on the development machine) times the
# ring against the arms as they were, same run, bits compared first; then, with libgdn of this revision
# (ring on), bench fused beside vLLM, check fused with mutants (CUDA == host), the sanitizers, ncu of the
# fused kernels. Usage: s17-run2.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$SECONDS
xz -dc .gpu-run/libgdn-local.so.xz > /tmp/libgdn.so
xz -dc .gpu-run/s17/fused_tune.xz > /tmp/fused_tune && chmod +x /tmp/fused_tune
export GDN_LIBRARY=/tmp/libgdn.so GDN_REVISION=$1 GDN_BACKEND=cuda
source .device/env.sh
{ date -u; echo "revision: $1, library $GDN_LIBRARY"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 150 /tmp/fused_tune 15 > "$OUT/fused-tune.txt" 2>&1
echo "fused_tune rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "^==|ring|until s16|MISMATCH|all config" "$OUT/fused-tune.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
t0=$SECONDS; timeout 170 node bin/gdnlab.js bench fused --backend cuda --vllm .device/vllm --json="$OUT/bench-fused.json" --markdown "$OUT/bench-fused.md" > "$OUT/bench-fused.log" 2>&1
echo "bench fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
t0=$SECONDS; timeout 60 node bin/gdnlab.js check fused --backend cuda --mutants > "$OUT/check-fused.log" 2>&1
echo "check fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "^equivalence|^mutants|cuda==host|caught" "$OUT/check-fused.log" | tee -a "$OUT/session.log"
t0=$SECONDS
timeout 60 ncu --clock-control none -k regex:"fused_kernel" --launch-count 4 --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section InstructionStats \
  node docs/gpu/s17-prof.js > "$OUT/ncu-fused.txt" 2>&1
echo "ncu rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
for tool in memcheck racecheck synccheck; do
  left=$((520 - (SECONDS - T0))); [ $left -lt 20 ] && { echo "sanitize $tool: skipped, $left s left" | tee -a "$OUT/session.log"; continue; }
  t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
  echo "sanitize $tool rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log" | tee -a "$OUT/session.log"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
grep -E "^\*\*|^\| (fused|chain|vLLM)" "$OUT/bench-fused.md" | cut -c1-150 | head -60
cd "$OUT" && tar czf raw.tgz bench-fused.json bench-fused.log check-fused.log sanitize-*.log ncu-fused.txt 2>/dev/null && rm -f bench-fused.json bench-fused.log sanitize-*.log ncu-fused.txt
ls -la
