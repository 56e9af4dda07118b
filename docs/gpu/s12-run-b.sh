#!/usr/bin/env bash
# Session 12, call B: one bench run per op at one revision, beside vLLM's Triton kernels and PyTorch, for the
# state of issue 10's targets (docs/BENCHMARKS.md, "Where issue 10 stands"): bench conv (the exact arms), bench
# postconv, bench fused, bench overhead (two processes).  libgdn carried (built on the development machine from
# this revision's native sources, sm_90).  Usage: run-s12b.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
xz -dc .gpu-run/libgdn-f385411.so.xz > /tmp/libgdn.so
export GDN_LIBRARY=/tmp/libgdn.so GDN_BACKEND=cuda
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$OUT/env.log" 2>&1
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim node bin/gdnlab.js bench "$@" --json="$OUT/bench-$name.json" --markdown "$OUT/bench-$name.md" > "$OUT/bench-$name.log" 2>&1
  echo "bench $name rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\|' "$OUT/bench-$name.md" | cut -c1-200 | head -30; }
run conv 190 conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,stream/exact,stream-mufu/exact
run postconv 170 postconv --backend cuda --vllm .device/vllm
run fused 170 fused --backend cuda --vllm .device/vllm
for i in 1 2; do t0=$SECONDS; timeout 40 node bin/gdnlab.js bench overhead --backend cuda --json="$OUT/overhead-$i.json" > "$OUT/overhead-$i.md" 2>&1; echo "overhead $i rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; done
grep -E '^\|' "$OUT/overhead-2.md" | cut -c1-200 | head -40
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cd "$OUT" && tar czf raw.tgz *.json bench-*.log overhead-1.md && rm -f *.json bench-*.log overhead-1.md
