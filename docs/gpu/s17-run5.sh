#!/usr/bin/env bash
# Session 17, call 5: packed conv programs (conv_stream.h stream_thread_packed, conv_plan.cpp packed_programs):
# check conv with mutants (CUDA == host), bench conv beside vLLM, the conv / golden / checks suites on host + CUDA
# (the packed tests among them), and compute-sanitizer over the packed tests. libgdn built on the development
# machine from this revision (sm_90, carried xz). Usage: s17-run5.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$SECONDS
xz -dc .gpu-run/libgdn-local.so.xz > /tmp/libgdn.so
export GDN_LIBRARY=/tmp/libgdn.so GDN_REVISION=$1 GDN_BACKEND=cuda
source .device/env.sh
{ date -u; echo "revision: $1, library $GDN_LIBRARY"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 60 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1
echo "check conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "^equivalence|^mutants|cuda==host" "$OUT/check-conv.log" | tee -a "$OUT/session.log"
t0=$SECONDS; timeout 230 node bin/gdnlab.js bench conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,stream/exact,stream-mufu/exact --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" > "$OUT/bench-conv.log" 2>&1
echo "bench conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
left=$((390 - (SECONDS - T0)))
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout $left mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/golden.test.js dist/test/check/checks.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" | tee -a "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
for tool in memcheck racecheck synccheck; do
  left=$((455 - (SECONDS - T0))); [ $left -lt 15 ] && { echo "sanitize $tool: skipped, $left s left" | tee -a "$OUT/session.log"; continue; }
  t0=$SECONDS; GDN_TEST_BACKENDS=cuda timeout $left compute-sanitizer --tool $tool --error-exitcode 9 mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js -g "packed programs across" > "$OUT/sanitize-packed-$tool.log" 2>&1
  echo "sanitize $tool (packed tests) rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|passing|failing" "$OUT/sanitize-packed-$tool.log" | tee -a "$OUT/session.log"
done
awk '/^\*\*/{sh=$0} /^\| (stream-mufu|stream|vLLM)/{split($0,a,"|"); printf "%-45s %-16s %8s %6s\n", substr(sh,1,45), a[2], a[4], a[9]}' "$OUT/bench-conv.md"
cd "$OUT" && tar czf raw.tgz bench-conv.json bench-conv.log check-conv.log tests-host-cuda.log sanitize-*.log 2>/dev/null && rm -f bench-conv.json bench-conv.log tests-host-cuda.log sanitize-*.log
