#!/usr/bin/env bash
# Session 13: fused offsets as a host copy (ABI 5, 9255feb). Per-op overhead, 3 processes (the fused op's
# device-offsets and host-offsets rows side by side in each); the conv, out-buffer, fused and ABI suites on
# host + CUDA; check fused and check conv with mutants; compute-sanitizer memcheck, racecheck, synccheck of
# check sanitize.  libgdn carried (built on the development machine from this revision, sm_90).
# Usage: run-s13.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
T0=$SECONDS
xz -dc .gpu-run/libgdn-$1.so.xz > /tmp/libgdn.so
export GDN_LIBRARY=/tmp/libgdn.so
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$OUT/env.log" 2>&1
for i in 1 2 3; do t0=$SECONDS; timeout 60 node bin/gdnlab.js bench overhead --backend cuda --json="$OUT/overhead-$i.json" > "$OUT/overhead-$i.md" 2>&1
  echo "overhead $i rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; done
node -e '
const fs=require("fs"),d=process.argv[1];const rows={};
for(const i of [1,2,3]){const j=JSON.parse(fs.readFileSync(d+"/overhead-"+i+".json"));
for(const r of j.rows){const k=r.op+" | "+r.variant;(rows[k]??=[]).push(r.overheadUs==null?"-":r.overheadUs.toFixed(1)+" ("+r.kernelUs?.toFixed?.(1)+"/"+r.wallUs?.toFixed?.(1)+")");}}
for(const [k,v] of Object.entries(rows))console.log(k.slice(0,120).padEnd(120),v.join(", "));
' "$OUT" | tee "$OUT/overhead-summary.txt"
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 240 mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/out-buffers.test.js dist/test/ops/fused.test.js dist/test/native/abi.test.js dist/test/native/host-parallel.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
t0=$SECONDS; timeout 90 node bin/gdnlab.js check fused --backend cuda --quick --mutants > "$OUT/check-fused.log" 2>&1; echo "check fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -5 "$OUT/check-fused.log"
t0=$SECONDS; timeout 60 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1; echo "check conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -4 "$OUT/check-conv.log"
for tool in memcheck racecheck synccheck; do
  left=$((560 - (SECONDS - T0)))
  if [ $left -gt 30 ]; then
    t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
    echo "sanitize $tool rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log"
  else echo "$tool skipped: $left s left" | tee -a "$OUT/session.log"; fi
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cd "$OUT" && tar czf raw.tgz *.json overhead-2.md overhead-3.md check-*.log sanitize-*.log && rm -f *.json overhead-2.md overhead-3.md check-*.log sanitize-*.log
