#!/usr/bin/env bash
# Session 15, call 2: the SiLU shortcut's rounding test rewritten (one multiply-add and one compare, no normal-number
# test) and decided once per row of 4 values instead of per value (docs/SPEC.md §9.2). Binaries built on the
# development machine (nvcc -O3 -std=c++17 --fmad=false -arch=sm_90 ...; docs/gpu-test-log.md, "Session 15"):
#   1. detmath_exhaustive shortcut, production and with the planted slack 0 and range 80 (both must fail);
#   2. tile_tune conv9 15: the session-14 test per value vs the new test per value / per row / per 2 rows / per group,
#      beside stream's exact SiLU, every variant's bits compared with scalar's first;
#   3. gdnlab bench conv (scalar, stream/exact, stream-mufu/exact) with libgdn 3a8e789 (A: session 14's shortcut)
#      and with this revision's (B), alternating A B A B; then with B the conv suite on host + CUDA and
#      check conv --mutants.  Usage: s15-run2.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .device/env.sh
for f in tile_tune dx_prod dx_slack0 dx_range80; do xz -dc .gpu-run/s15/$f.xz > /tmp/$f && chmod +x /tmp/$f; done
xz -dc .gpu-run/libgdn-3a8e789.so.xz > /tmp/libgdn-A.so
xz -dc .gpu-run/libgdn-$1.so.xz > /tmp/libgdn-B.so
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; GDN_REVISION=$1 GDN_LIBRARY=/tmp/libgdn-B.so node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
for v in prod slack0 range80; do t0=$SECONDS; timeout 60 /tmp/dx_$v shortcut > "$OUT/dx-$v.log" 2>&1; echo "detmath_exhaustive shortcut ($v) rc=$? $((SECONDS-t0)) s: $(tail -1 "$OUT/dx-$v.log")" >> "$OUT/session.log"; done
t0=$SECONDS; timeout 240 /tmp/tile_tune conv9 15 > "$OUT/tile-tune-conv9.txt" 2>&1; echo "tile_tune conv9 rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
for i in 1 2; do for v in A B; do
  RV=3a8e789; [ $v = B ] && RV=$1
  t0=$SECONDS; GDN_REVISION=$RV GDN_LIBRARY=/tmp/libgdn-$v.so timeout 150 node bin/gdnlab.js bench conv --backend cuda --no-torch --arms scalar,stream/exact,stream-mufu/exact --json="$OUT/bench-conv-$v$i.json" --markdown "$OUT/bench-conv-$v$i.md" > "$OUT/bench-conv-$v$i.log" 2>&1
  echo "bench conv $v$i rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
done; done
export GDN_LIBRARY=/tmp/libgdn-B.so GDN_REVISION=$1
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 200 mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/golden.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" >> "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30 >> "$OUT/session.log"
t0=$SECONDS; timeout 60 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1; echo "check conv rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; tail -4 "$OUT/check-conv.log" >> "$OUT/session.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cat "$OUT/session.log"; sed -n "/conv table/,\$p" "$OUT/tile-tune-conv9.txt"
cd "$OUT" && tar czf raw.tgz bench-conv-* tests-host-cuda.log check-conv.log dx-*.log && rm -f bench-conv-* tests-host-cuda.log check-conv.log dx-*.log
