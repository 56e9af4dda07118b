#!/usr/bin/env bash
# Session 15: an op's fresh outputs allocated and poisoned by one native call (gdn_buffers_alloc_filled: one
# fill launch on CUDA instead of one per output) and released by one (gdn_buffers_free), ABI 7. A/B in one call:
# A = libgdn 626ae04 with the TypeScript of 03c8210 (ABI 6, session 14's code), B = this revision; per-op
# overhead (bench overhead --backend cuda), processes alternating A B A B A B. Then with B: the buffer-cache,
# out-buffer, post-conv, fused, conv, memory-growth and ABI suites on host + CUDA, and the SASS opcode counts of
# the conv stream-mufu kernels (cuobjdump; for the next kernel step).  Usage: s15-run.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .device/env.sh
T0=$SECONDS
xz -dc .gpu-run/libgdn-626ae04.so.xz > /tmp/libgdn-A.so
xz -dc .gpu-run/libgdn-$1.so.xz > /tmp/libgdn-B.so
rm -rf /tmp/A && mkdir -p /tmp/A/dist /tmp/A/bin && cp -r .gpu-run/A/lib-dist /tmp/A/dist/lib && cp bin/gdnlab.js /tmp/A/bin/ && cp package.json /tmp/A/ && mkdir -p /tmp/A/cuda/include && cp cuda/include/gdn.h /tmp/A/cuda/include/
ROOT_A=/tmp/A; ROOT_B=$PWD; REV_A=03c8210; REV_B=$1
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; GDN_LIBRARY=/tmp/libgdn-B.so node bin/gdnlab.js info --backend cuda; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$OUT/env.log" 2>&1
for i in 1 2 3; do for v in A B; do
  R=ROOT_$v; RV=REV_$v
  t0=$SECONDS; GDN_REVISION=${!RV} GDN_LIBRARY=/tmp/libgdn-$v.so timeout 60 node ${!R}/bin/gdnlab.js bench overhead --backend cuda --json="$OUT/overhead-$v$i.json" > "$OUT/overhead-$v$i.md" 2>&1; echo "overhead $v$i rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"
done; done
node -e '
const fs=require("fs"),d=process.argv[1];const rows={};
for(const i of [1,2,3])for(const v of ["A","B"]){
 try{const j=JSON.parse(fs.readFileSync(d+"/overhead-"+v+i+".json"));for(const r of j.rows){const key=r.op+" | "+r.variant+" | "+v;(rows[key]??=[]).push(r.overheadUs==null?r.wallUs.toFixed(1)+" wall":r.overheadUs.toFixed(1)+" ("+r.kernelUs?.toFixed?.(1)+"/"+r.wallUs?.toFixed?.(1)+")");}
   (rows["validated | "+v]??=[]).push(j.validated.map(x=>x.mismatches).join("/"));}catch(e){(rows["error "+v]??=[]).push(String(e).slice(0,80));}}
console.log("overhead us beyond the kernel (kernel/wall), A = 03c8210 + libgdn 626ae04, B = "+process.argv[2]+", processes 1..3:");
for(const [k,v] of Object.entries(rows).sort())console.log("  "+k.slice(0,130).padEnd(130),v.join(", "));
' "$OUT" "$1" > "$OUT/ab-summary.txt" 2>&1
export GDN_LIBRARY=/tmp/libgdn-B.so GDN_REVISION=$1
t0=$SECONDS; GDN_TEST_BACKENDS=host,cuda timeout 300 mocha --timeout 150000 --reporter dot dist/test/native/buffer-cache.test.js dist/test/native/memory-growth.test.js dist/test/native/abi.test.js dist/test/ops/out-buffers.test.js dist/test/ops/postconv.test.js dist/test/ops/fused.test.js dist/test/ops/conv.test.js > "$OUT/tests-host-cuda.log" 2>&1
echo "tests rc=$? $((SECONDS-t0)) s" >> "$OUT/session.log"; grep -E 'passing|failing|pending' "$OUT/tests-host-cuda.log" >> "$OUT/session.log"; grep -A12 ' failing' "$OUT/tests-host-cuda.log" | head -30 >> "$OUT/session.log"
t0=$SECONDS
cuobjdump -sass /tmp/libgdn-B.so 2>/dev/null | awk '
  /Function :/ { name = $3; keep = (name ~ /StreamMufu/) }
  keep && /\/\*[0-9a-f]+\*\// { for (i = 1; i <= NF; i++) if ($i ~ /^[A-Z][A-Z0-9_.]+$/ && $i !~ /^R[0-9]/ && $i !~ /^P[0-9T]/ && $i !~ /^U?R/) { split($i, a, "."); n[name" "a[1]]++; tot[name]++; break } }
  END { for (k in n) { split(k, b, " "); print tot[b[1]], n[k], k } }' | sort -k1,1nr -k2,2nr > "$OUT/sass-stream-mufu.txt"
echo "sass rc=$? $((SECONDS-t0)) s, $(wc -l < "$OUT/sass-stream-mufu.txt") lines" >> "$OUT/session.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cat "$OUT/session.log" "$OUT/ab-summary.txt"
cd "$OUT" && tar czf raw.tgz overhead-*.json overhead-*.md tests-host-cuda.log && rm -f overhead-*.json overhead-*.md
