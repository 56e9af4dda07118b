#!/usr/bin/env bash
# Call 2 of session 8: libgdn built here; the bf16 SiLU shortcut proven over every input of its range on this
# GPU (detmath_exhaustive shortcut), and shown to fail when its slack or range is planted wrong; the conv
# suites on host + CUDA (stream-mufu == scalar bit for bit); check conv with mutants; bench conv beside vLLM;
# compute-sanitizer over every arm (vec-tile and stream-mufu included).
# Usage: run21.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so GDN_BACKEND=cuda
T0=$SECONDS
( for v in ok:32:8.0f slack0:0:8.0f range80:32:80.0f; do n=${v%%:*}; r=${v#*:}; s=${r%%:*}; g=${r#*:}
    nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Xcompiler -ffp-contract=off,-mfma -Icuda/src/common \
      -DGDN_SILU_SHORTCUT_SLACK=$s -DGDN_SILU_SHORTCUT_RANGE=$g cuda/tests/detmath_exhaustive.cu -o /tmp/dme-$n & done; wait ) > "$OUT/dme-build.log" 2>&1 &
t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn gdn_user_worker >> "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -2 "$OUT/build.log"
wait
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
for n in ok slack0 range80; do t0=$SECONDS; timeout 60 /tmp/dme-$n shortcut > "$OUT/shortcut-$n.log" 2>&1; echo "shortcut $n rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; cat "$OUT/shortcut-$n.log"; done
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 200 mocha --timeout 200000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/golden.test.js dist/test/arms/arms.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
t0=$SECONDS; timeout 120 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1; echo "check conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -6 "$OUT/check-conv.log"
t0=$SECONDS; timeout 220 node bin/gdnlab.js bench conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,stream/exact,stream-mufu/exact --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" > "$OUT/bench-conv.log" 2>&1
echo "bench conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\*\*|stream|vLLM' "$OUT/bench-conv.md" | cut -c1-200 | head -40
for tool in memcheck racecheck synccheck; do
  left=$((560 - (SECONDS - T0))); [ $left -lt 30 ] && { echo "sanitize $tool: skipped, $left s left" | tee -a "$OUT/session.log"; continue; }
  t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
  echo "sanitize $tool rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
