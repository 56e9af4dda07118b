#!/usr/bin/env bash
# Session 17, call 3: the final library of the session (the fused ring reverted; conv and fused kernels as at
# a5cc6a3 / 82a3f65), bench conv and bench fused beside vLLM 0.33.0, with the copy now counting the state traffic
# too (lib/ops/conv.ts convBytes, fusedBytes; bench/vllm_reference.py). libgdn built on the development machine
# (sm_90, carried xz). Usage: s17-run3.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
xz -dc .gpu-run/libgdn-local.so.xz > /tmp/libgdn.so
export GDN_LIBRARY=/tmp/libgdn.so GDN_REVISION=$1 GDN_BACKEND=cuda
source .device/env.sh
{ date -u; echo "revision: $1, library $GDN_LIBRARY"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 240 node bin/gdnlab.js bench conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,stream/exact,stream-mufu/exact --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" > "$OUT/bench-conv.log" 2>&1
echo "bench conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
t0=$SECONDS; timeout 250 node bin/gdnlab.js bench fused --backend cuda --vllm .device/vllm --json="$OUT/bench-fused.json" --markdown "$OUT/bench-fused.md" > "$OUT/bench-fused.log" 2>&1
echo "bench fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
awk '/^\*\*/{sh=$0} /^\| (stream-mufu|stream|vLLM)/{split($0,a,"|"); printf "%-45s %-16s %8s %6s\n", substr(sh,1,45), a[2], a[4], a[9]}' "$OUT/bench-conv.md"
grep -E "^\*\*|^\| (fused stream|chain|vLLM)" "$OUT/bench-fused.md" | cut -c1-160
cd "$OUT" && tar czf raw.tgz bench-conv.json bench-conv.log bench-fused.json bench-fused.log && rm -f bench-conv.json bench-conv.log bench-fused.json bench-fused.log
