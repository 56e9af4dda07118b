#!/usr/bin/env bash
# Session 12, call A: post-conv tile sizes (tile_tune postconv2); per-op overhead A/B of libgdn f385411 (pageable
# program-list uploads) against the working tree (pinned staging ring), 3 alternating processes each; the conv,
# out-buffer and fused suites on host + CUDA with the new library; check conv; memcheck.  Usage: run-s12a.sh REV
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
T0=$SECONDS
for l in f385411 new; do xz -dc .gpu-run/libgdn-$l.so.xz > /tmp/libgdn-$l.so; done
export GDN_LIBRARY=/tmp/libgdn-new.so
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 120 .gpu-run/tile_tune postconv2 15 > "$OUT/tile-tune-postconv2.txt" 2>&1; echo "tile_tune postconv2 rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
grep -A12 "postconv table" "$OUT/tile-tune-postconv2.txt" | cut -c1-200
mkdir -p "$OUT/ab"
for i in 1 2 3; do for l in f385411 new; do
  t0=$SECONDS; GDN_LIBRARY=/tmp/libgdn-$l.so timeout 90 node bin/gdnlab.js bench overhead --backend cuda --json="$OUT/ab/overhead-$l-$i.json" > "$OUT/ab/overhead-$l-$i.md" 2>&1
  echo "overhead $l $i rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
done; done
node -e '
const fs=require("fs"),d=process.argv[1];const rows={};
for(const f of fs.readdirSync(d).filter(f=>f.endsWith(".json")).sort()){const [_,l,i]=f.match(/overhead-(\w+)-(\d)/);const j=JSON.parse(fs.readFileSync(d+"/"+f));
for(const r of j.rows){const k=r.op+" | "+r.variant;(rows[k]??={})[l]??=[];rows[k][l].push(r.overheadUs==null?"-":r.overheadUs.toFixed(1));}}
for(const [k,v] of Object.entries(rows))console.log(k.slice(0,110).padEnd(110)," old:",(v.f385411||[]).join(", ").padEnd(20)," new:",(v.new||[]).join(", "));
' "$OUT/ab" | tee "$OUT/ab-summary.txt"
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 200 mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/out-buffers.test.js dist/test/ops/fused.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30
t0=$SECONDS; timeout 60 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1; echo "check conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tail -4 "$OUT/check-conv.log"
left=$((540 - (SECONDS - T0)))
if [ $left -gt 30 ]; then
  t0=$SECONDS; timeout $left compute-sanitizer --tool memcheck --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-memcheck.log" 2>&1
  echo "sanitize memcheck rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-memcheck.log"
else echo "memcheck skipped: $left s left" | tee -a "$OUT/session.log"; fi
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cd "$OUT" && tar czf ab.tgz ab && rm -rf ab
