#!/usr/bin/env bash
# Session 15, call 4: the fused arm stream-mufu (fused stream with the per-row SiLU shortcut for a bf16 conv_dtype).
# gdnlab bench fused (every fused arm and the fastest two-op chain, bits compared with conv(scalar) -> post-conv(tree)
# before timing), check fused --mutants, the fused, out-buffer, arms and golden suites on host + CUDA, then
# compute-sanitizer memcheck / racecheck of check sanitize while time remains.  Usage: s15-run4.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .device/env.sh
T0=$SECONDS
xz -dc .gpu-run/libgdn-$1.so.xz > /tmp/libgdn-B.so
export GDN_LIBRARY=/tmp/libgdn-B.so GDN_REVISION=$1
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 200 node bin/gdnlab.js bench fused --backend cuda --no-torch --json="$OUT/bench-fused.json" --markdown "$OUT/bench-fused.md" > "$OUT/bench-fused.log" 2>&1
echo "bench fused rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
t0=$SECONDS; timeout 90 node bin/gdnlab.js check fused --backend cuda --quick --mutants > "$OUT/check-fused.log" 2>&1; echo "check fused rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E "^equivalence|cuda==host|caught|MISSED" "$OUT/check-fused.log" | head -10 >> "$OUT/session.log"
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 150 mocha --timeout 150000 --reporter dot dist/test/ops/fused.test.js dist/test/ops/out-buffers.test.js dist/test/ops/arms.test.js dist/test/ops/golden.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" >> "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30 >> "$OUT/session.log"
for tool in memcheck racecheck synccheck; do
  left=$((240 - (SECONDS - T0)))
  if [ $left -gt 40 ]; then
    t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
    echo "sanitize $tool rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log" >> "$OUT/session.log"
  else echo "$tool skipped: $left s left" >> "$OUT/session.log"; fi
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cat "$OUT/session.log"; grep -E "^\*\*|stream|chain" "$OUT/bench-fused.md" | cut -c1-160 | head -60
cd "$OUT" && tar czf raw.tgz bench-fused.log tests-host-cuda.log check-fused.log sanitize-*.log && rm -f bench-fused.log tests-host-cuda.log check-fused.log sanitize-*.log
