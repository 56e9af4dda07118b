#!/usr/bin/env bash
# Session 16, call 4: the conv arm `stream`'s ring requested first and 4 groups deep for bf16 x (conv_stream.h,
# tile_tune set 10 in call 3). libgdn built on the development machine from this revision (sm_90, carried xz).
# The notebooks whose cells run `stream`/`stream-mufu` (00-04, 06) through the real kernel; 05 times none of
# them and keeps call 1's outputs (its user arms need the worker of a library built there). Then bench conv
# beside vLLM, check conv/fused with mutants, the sanitizers and the conv suites on host + CUDA, in the time left.
# Usage: s16-run4.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$SECONDS
xz -dc .gpu-run/libgdn-local.so.xz > /tmp/libgdn.so
export GDN_LIBRARY=/tmp/libgdn.so GDN_REVISION=$1 GDN_BACKEND=cuda
t0=$SECONDS
GDNLAB_NOTEBOOKS="notebooks/00-quickstart.ipynb notebooks/01-causal-conv-arms.ipynb notebooks/02-postconv-token-tile.ipynb notebooks/03-race-305.ipynb notebooks/04-qwen35-weights.ipynb notebooks/06-fused-conv-postconv.ipynb" \
  GDNLAB_CELL_TIMEOUT=200 timeout 300 bash bench/notebook-stage.sh "$OUT" > "$OUT/notebooks.log" 2>&1
echo "notebooks rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "^(ok|FAILED)|cell" "$OUT/notebooks.log" | head -20
rm -rf node_modules  # the stage's traced subset; what follows resolves through .device/node_modules (NODE_PATH)
mkdir -p /tmp/node-bin; [ -x /tmp/node-bin/node ] || { xz -dc .device/nbrun/node.xz > /tmp/node-bin/node && chmod +x /tmp/node-bin/node; }
source .device/env.sh
{ date -u; echo "revision: $1, library $GDN_LIBRARY"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 170 node bin/gdnlab.js bench conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,stream/exact,stream-mufu/exact --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" > "$OUT/bench-conv.log" 2>&1
echo "bench conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
for what in conv fused; do
  t0=$SECONDS; timeout 60 node bin/gdnlab.js check $what --backend cuda --mutants $([ $what = conv ] && echo --quick) > "$OUT/check-$what.log" 2>&1
  echo "check $what rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "^equivalence|^mutants|cuda==host" "$OUT/check-$what.log" | tee -a "$OUT/session.log"
done
for tool in memcheck racecheck synccheck; do
  left=$((440 - (SECONDS - T0))); [ $left -lt 20 ] && { echo "sanitize $tool: skipped, $left s left" | tee -a "$OUT/session.log"; continue; }
  t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
  echo "sanitize $tool rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log" | tee -a "$OUT/session.log"
done
left=$((440 - (SECONDS - T0)))
if [ $left -gt 40 ]; then
  t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout $left mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/golden.test.js dist/test/check/checks.test.js > "$OUT/tests-host-cuda.log" 2>&1
  echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" | tee -a "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
else echo "tests: skipped, $left s left" | tee -a "$OUT/session.log"; fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
awk '/^\*\*/{sh=$0} /^\| (stream-mufu|stream|vec|vLLM)/{split($0,a,"|"); printf "%-45s %-16s %8s %6s\n", substr(sh,1,45), a[2], a[4], a[9]}' "$OUT/bench-conv.md"
cd "$OUT" && tar czf raw.tgz bench-conv.json bench-conv.log check-fused.log sanitize-*.log && rm -f bench-conv.json bench-conv.log check-fused.log sanitize-*.log
