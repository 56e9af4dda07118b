#!/usr/bin/env bash
# Session 14: plan lists in the launch parameters (no upload for small lists) and the update's slots as a host
# copy (ABI 6). A/B in one call: A = libgdn 9255feb with the TypeScript of 0cc082a (ABI 5; session 13's library:
# lists uploaded, slots read back), B = this revision: kernel medians (docs/gpu/s14-kernel-ab.js) and per-op
# overhead (bench overhead), processes alternating A B A B A B; then with B: the conv, fused,
# out-buffer, post-conv, ABI and host-parallel suites on host + CUDA, check fused / conv with mutants, and
# compute-sanitizer memcheck, racecheck, synccheck of check sanitize.  Usage: run-s14.sh REVISION (AB_ONLY=1: the A/B alone, as the second call ran it)
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
T0=$SECONDS
xz -dc .gpu-run/libgdn-9255feb.so.xz > /tmp/libgdn-A.so
xz -dc .gpu-run/libgdn-$1.so.xz > /tmp/libgdn-B.so
# A's tree: its TypeScript (ABI 5), the same command and script paths.
rm -rf /tmp/A && mkdir -p /tmp/A/dist /tmp/A/bin /tmp/A/docs/gpu && cp -r .gpu-run/A/lib-dist /tmp/A/dist/lib && cp bin/gdnlab.js /tmp/A/bin/ && cp package.json /tmp/A/ && cp docs/gpu/s14-kernel-ab.js /tmp/A/docs/gpu/ && mkdir -p /tmp/A/cuda/include && cp cuda/include/gdn.h /tmp/A/cuda/include/  # the project-root marker
ROOT_A=/tmp/A; ROOT_B=$PWD; REV_A=9255feb; REV_B=$1
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; GDN_LIBRARY=/tmp/libgdn-B.so node bin/gdnlab.js info --backend cuda; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$OUT/env.log" 2>&1
for i in 1 2 3; do for v in A B; do
  R=ROOT_$v; RV=REV_$v
  t0=$SECONDS; GDN_REVISION=${!RV} GDN_LIBRARY=/tmp/libgdn-$v.so timeout 60 node ${!R}/docs/gpu/s14-kernel-ab.js > "$OUT/kernel-$v$i.json" 2>&1; echo "kernel $v$i rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
  t0=$SECONDS; GDN_REVISION=${!RV} GDN_LIBRARY=/tmp/libgdn-$v.so timeout 60 node ${!R}/bin/gdnlab.js bench overhead --backend cuda --json="$OUT/overhead-$v$i.json" > "$OUT/overhead-$v$i.md" 2>&1; echo "overhead $v$i rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
done; done
node -e '
const fs=require("fs"),d=process.argv[1];const rows={};const kern={};
for(const i of [1,2,3])for(const v of ["A","B"]){
 try{const k=JSON.parse(fs.readFileSync(d+"/kernel-"+v+i+".json","utf8").trim().split("\n").pop());for(const [l,m] of Object.entries(k.medianUs))(kern[l+" "+v]??=[]).push(m);(kern["mismatching "+v]??=[]).push(JSON.stringify(k.mismatching));}catch(e){(kern["error "+v]??=[]).push(String(e).slice(0,80));}
 try{const j=JSON.parse(fs.readFileSync(d+"/overhead-"+v+i+".json"));for(const r of j.rows){const key=r.op+" | "+r.variant+" | "+v;(rows[key]??=[]).push(r.overheadUs==null?"-":r.overheadUs.toFixed(1)+" ("+r.kernelUs?.toFixed?.(1)+"/"+r.wallUs?.toFixed?.(1)+")");}}catch(e){(rows["error "+v]??=[]).push(String(e).slice(0,80));}}
console.log("kernel medians, us (A = 9255feb, B = "+process.argv[2]+"), processes 1..3:");
for(const [k,v] of Object.entries(kern).sort())console.log("  "+k.padEnd(40),v.join(", "));
console.log("overhead us beyond the kernel (kernel/wall):");
for(const [k,v] of Object.entries(rows).sort())console.log("  "+k.slice(0,130).padEnd(130),v.join(", "));
' "$OUT" "$1" > "$OUT/ab-summary.txt" 2>&1
export GDN_LIBRARY=/tmp/libgdn-B.so
if [ "${AB_ONLY:-0}" = 1 ]; then cat "$OUT/session.log" "$OUT/ab-summary.txt"; cd "$OUT" && tar czf raw.tgz kernel-*.json overhead-*.json overhead-*.md && rm -f kernel-*.json overhead-*.json overhead-*.md; exit 0; fi
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 300 mocha --timeout 150000 --reporter dot dist/test/ops/conv.test.js dist/test/ops/out-buffers.test.js dist/test/ops/fused.test.js dist/test/ops/postconv.test.js dist/test/ops/golden.test.js dist/test/native/abi.test.js dist/test/native/host-parallel.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" >> "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30 >> "$OUT/session.log"
t0=$SECONDS; timeout 90 node bin/gdnlab.js check fused --backend cuda --quick --mutants > "$OUT/check-fused.log" 2>&1; echo "check fused rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; tail -5 "$OUT/check-fused.log" >> "$OUT/session.log"
t0=$SECONDS; timeout 60 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1; echo "check conv rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; tail -4 "$OUT/check-conv.log" >> "$OUT/session.log"
for tool in memcheck racecheck synccheck; do
  left=$((560 - (SECONDS - T0)))
  if [ $left -gt 30 ]; then
    t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
    echo "sanitize $tool rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log" >> "$OUT/session.log"
  else echo "$tool skipped: $left s left" >> "$OUT/session.log"; fi
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cat "$OUT/session.log" "$OUT/ab-summary.txt"
cd "$OUT" && tar czf raw.tgz kernel-*.json overhead-*.json overhead-*.md check-*.log sanitize-*.log && rm -f kernel-*.json overhead-*.json overhead-*.md check-*.log sanitize-*.log
