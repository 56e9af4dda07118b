#!/usr/bin/env bash
# Session 15, call 3: the shortcut with ya = fma(x, r, +0) (call 2's exhaustive test found x = −0 accepted with
# the wrong sign). detmath_exhaustive shortcut (production, planted slack 0, planted range 80), one gdnlab bench
# conv run of scalar, stream/exact and stream-mufu/exact (bits compared with scalar's before timing), fused_tune 15
# (the fused body with the new shortcut policy beside stream's exact SiLU), the conv and golden suites on host +
# CUDA, check conv --mutants.  Usage: s15-run3.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .device/env.sh
for f in dx_prod dx_slack0 dx_range80 fused_tune; do xz -dc .gpu-run/s15/$f.xz > /tmp/$f && chmod +x /tmp/$f; done
xz -dc .gpu-run/libgdn-$1.so.xz > /tmp/libgdn-B.so
export GDN_LIBRARY=/tmp/libgdn-B.so GDN_REVISION=$1
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
for v in prod slack0 range80; do t0=$SECONDS; timeout 60 /tmp/dx_$v shortcut > "$OUT/dx-$v.log" 2>&1; echo "detmath_exhaustive shortcut ($v) rc=$? $((SECONDS-t0)) s: $(cat "$OUT/dx-$v.log" | tr '\n' ' ')" >> "$OUT/session.log"; done
t0=$SECONDS; timeout 150 node bin/gdnlab.js bench conv --backend cuda --no-torch --arms scalar,stream/exact,stream-mufu/exact --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" > "$OUT/bench-conv.log" 2>&1
echo "bench conv rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
t0=$SECONDS; timeout 150 /tmp/fused_tune 15 > "$OUT/fused-tune.txt" 2>&1; echo "fused_tune rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 200 mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/golden.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" >> "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30 >> "$OUT/session.log"
t0=$SECONDS; timeout 60 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1; echo "check conv rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; tail -2 "$OUT/check-conv.log" >> "$OUT/session.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cat "$OUT/session.log"; grep -E "stream-mufu" "$OUT/bench-conv.md" | head -12; tail -25 "$OUT/fused-tune.txt"
cd "$OUT" && tar czf raw.tgz bench-conv.log tests-host-cuda.log check-conv.log dx-*.log && rm -f bench-conv.log tests-host-cuda.log check-conv.log dx-*.log
