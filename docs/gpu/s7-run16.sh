#!/usr/bin/env bash
# Call 1 of session 7: libgdn built here from these sources, the vec host traversal's own test (built with
# this machine's GCC), then the host + CUDA suites (core, ops, arms) and the host-parallel suite.
# Usage: run16.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
  cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn gdn_user_worker gdn_vec_host_test >> "$OUT/build.log" 2>&1
echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -3 "$OUT/build.log"
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; g++ --version | head -1; } > "$OUT/env.log" 2>&1
/tmp/gdn-build/gdn_vec_host_test > "$OUT/vec-host-test.log" 2>&1; echo "vec_host_test rc=$?" | tee -a "$OUT/session.log"; tail -1 "$OUT/vec-host-test.log"
t0=$SECONDS; GDN_BACKEND=cuda GDN_TEST_BACKENDS=host,cuda timeout ${TESTS_S:-300} mocha --timeout ${TESTS_S:-300}000 --reporter spec 'dist/test/core/*.test.js' 'dist/test/ops/*.test.js' dist/test/arms/arms.test.js dist/test/native/host-parallel.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log"; grep -A15 ' failing' "$OUT/tests-host-cuda.log" | head -40
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
