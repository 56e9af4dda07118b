#!/usr/bin/env bash
# Session 16, call 1: libgdn built on the H200 by its own CMake (the library, the user-arm worker and the compile
# recipe that notebook 05 needs), then every notebook through the real gdnlab kernel with GDN_BACKEND=cuda
# (bench/notebook-stage.sh with the bundle of bench/pack-notebook-run.sh), then, in the time left, the suites
# that cover session 15's fill and roll-back code (gdn_buffers_alloc_filled, fill_ranges) on host + CUDA.
# Usage: s16-run1.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$SECONDS
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; nvcc --version | tail -2; cmake --version | head -1; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$OUT/env.log" 2>&1
t0=$SECONDS
{ cmake -S cuda -B build/gpu -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90-real -DCMAKE_BUILD_TYPE=Release && cmake --build build/gpu -j16 --target gdn gdn_user_worker; } > "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -3 "$OUT/build.log"
export GDN_LIBRARY=$PWD/build/gpu/libgdn.so GDN_REVISION=$1 GDN_BACKEND=cuda
# A failed build leaves notebook 05 without its user-arm worker; the others run on the carried library.
[ -f "$GDN_LIBRARY" ] || { xz -dc .gpu-run/libgdn-local.so.xz > /tmp/libgdn.so; export GDN_LIBRARY=/tmp/libgdn.so; echo "build failed: carried library" | tee -a "$OUT/session.log"; }
t0=$SECONDS; left=$((585 - (SECONDS - T0)))
GDNLAB_CELL_TIMEOUT=200 timeout $left bash bench/notebook-stage.sh "$OUT" > "$OUT/notebooks.log" 2>&1
echo "notebooks rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "^(ok|FAILED)|cell" "$OUT/notebooks.log" | head -20
# The stage unpacked the traced node_modules here; the suites resolve through .device/node_modules (NODE_PATH) instead.
rm -rf node_modules
left=$((585 - (SECONDS - T0)))
if [ $left -gt 60 ]; then
  mkdir -p /tmp/node-bin; [ -x /tmp/node-bin/node ] || { xz -dc .device/nbrun/node.xz > /tmp/node-bin/node && chmod +x /tmp/node-bin/node; }
  source .device/env.sh
  t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout $left mocha --timeout 150000 --reporter dot dist/test/native/buffer-cache.test.js dist/test/native/memory-growth.test.js dist/test/native/abi.test.js dist/test/ops/out-buffers.test.js dist/test/ops/postconv.test.js dist/test/ops/fused.test.js dist/test/ops/conv.test.js > "$OUT/tests-host-cuda.log" 2>&1
  echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" | tee -a "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
else echo "tests: skipped, $left s left" | tee -a "$OUT/session.log"; fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
