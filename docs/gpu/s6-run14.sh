#!/usr/bin/env bash
# Call 2 of session 6: stream's 32-token programs on batches of short sequences. libgdn built here from these
# sources; tile_tune set 6 (the library's stream body with 64-, 32- and 16-token programs side by side, bits checked first);
# the conv suites on host + CUDA; bench conv with vLLM (stream, tile, vec; every shape). Usage: run14.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/gl
export GDN_REVISION=$1
source .device/env.sh
# tile_tune (not a CMake target) compiles beside the library build.
(nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 -Icuda/include -Icuda/src -Icuda/src/common -Icuda/tests cuda/tests/tile_tune.cu -o /tmp/gl/tile_tune > "$OUT/build-tune.log" 2>&1; echo "tile_tune build rc=$?" >> "$OUT/build-tune.log") &
t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn gdn_user_worker >> "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -3 "$OUT/build.log"
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
wait; tail -2 "$OUT/build-tune.log"
t0=$SECONDS; timeout 120 /tmp/gl/tile_tune conv6 15 > "$OUT/tune-conv6.txt" 2>&1
echo "tune rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "^variant|^vec|^tile|^stream" "$OUT/tune-conv6.txt" | head -12
t0=$SECONDS; GDN_BACKEND=cuda GDN_TEST_BACKENDS=host,cuda timeout 150 mocha --timeout 150000 --reporter spec dist/test/ops/conv.test.js dist/test/ops/golden.test.js dist/test/ops/arms.test.js > "$OUT/tests-conv.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-conv.log"; grep -A15 ' failing' "$OUT/tests-conv.log" | head -30
t0=$SECONDS; timeout 200 node bin/gdnlab.js bench conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,tile/exact,stream/exact,stream/sequence --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" > "$OUT/bench-conv.log" 2>&1
echo "bench rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\*\*|^\| (vec|tile|stream|vLLM|vllm)' "$OUT/bench-conv.md" | head -60
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
