#!/usr/bin/env bash
# Call 2 of session 5: the library of the final sources on CUDA — suites (host and CUDA), checks with planted
# mutants and user arms, fused check, compute-sanitizer. Usage: run8.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/gl
xz -dc .gpu-lib/libgdn.so.xz > /tmp/gl/libgdn.so; chmod +x /tmp/gl/libgdn.so
cp .gpu-lib/gdn_user_worker .gpu-lib/gdn_user_build.json /tmp/gl/
export GDN_LIBRARY=/tmp/gl/libgdn.so GDN_REVISION=$1 GDN_STEP_TIMEOUT=${GDN_STEP_TIMEOUT:-200}
bash bench/gpu-session.sh env
source .device/env.sh
t0=$SECONDS; GDN_BACKEND=cuda GDN_TEST_BACKENDS=host,cuda timeout 230 mocha --timeout 300000 --reporter spec 'dist/test/core/*.test.js' 'dist/test/ops/*.test.js' dist/test/arms/arms.test.js > "$OUT/tests-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-cuda.log"; grep -B2 -A14 ' failing' "$OUT/tests-cuda.log" | head -50
export GDN_DEFINE=examples/arms/reg16.json,examples/arms/tile16.json,examples/arms/planted-defects.js
bash bench/gpu-session.sh checks
for f in check-conv check-postconv; do tr '\r' '\n' < "$OUT/$f.log" | grep -vE '^\[|^ok' | tail -10; done
t0=$SECONDS; timeout 100 node bin/gdnlab.js check fused --backend cuda --quick --mutants > "$OUT/check-fused.log" 2>&1; echo "check-fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -8 "$OUT/check-fused.log"
bash bench/gpu-session.sh sanitize
grep -hE "ERROR SUMMARY|hazards" "$OUT"/sanitize-*.log
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
