#!/usr/bin/env bash
# Session 16, call 2 (same machine, after call 1): one bench run per op at the final revision beside vLLM's
# Triton kernels in their own process (bench conv with the exact arms, bench postconv, bench fused: each
# validates every arm's bits at each shape before timing it), then check conv/fused with their planted
# mutants, then compute-sanitizer memcheck, racecheck and synccheck over every arm, in the time left.
# libgdn: build/gpu from call 1 (else the carried one).  Usage: s16-run2.sh REVISION
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$SECONDS
mkdir -p /tmp/node-bin; [ -x /tmp/node-bin/node ] || { xz -dc .device/nbrun/node.xz > /tmp/node-bin/node && chmod +x /tmp/node-bin/node; }
source .device/env.sh
export GDN_REVISION=$1 GDN_BACKEND=cuda
rm -rf node_modules  # resolve through .device/node_modules (NODE_PATH), not a notebook stage's traced subset
if [ -f build/gpu/libgdn.so ]; then export GDN_LIBRARY=$PWD/build/gpu/libgdn.so; else xz -dc .gpu-run/libgdn-local.so.xz > /tmp/libgdn.so; export GDN_LIBRARY=/tmp/libgdn.so; fi
{ date -u; echo "revision: $1, library $GDN_LIBRARY"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; node bin/gdnlab.js info --backend cuda; } > "$OUT/env.log" 2>&1
run() { local name=$1 lim=$2; shift 2; local t0=$SECONDS; timeout $lim node bin/gdnlab.js bench "$@" --json="$OUT/bench-$name.json" --markdown "$OUT/bench-$name.md" > "$OUT/bench-$name.log" 2>&1
  echo "bench $name rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\|' "$OUT/bench-$name.md" | cut -c1-220 | head -40; }
run conv 180 conv --backend cuda --vllm .device/vllm --arms scalar,vec/exact,stream/exact,stream-mufu/exact
run postconv 150 postconv --backend cuda --vllm .device/vllm
run fused 150 fused --backend cuda --vllm .device/vllm
for what in conv fused; do
  left=$((585 - (SECONDS - T0))); [ $left -lt 20 ] && { echo "check $what: skipped" | tee -a "$OUT/session.log"; continue; }
  t0=$SECONDS; timeout $left node bin/gdnlab.js check $what --backend cuda --mutants $([ $what = conv ] && echo --quick) > "$OUT/check-$what.log" 2>&1
  echo "check $what rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "equivalence|mutants|cuda==host|caught" "$OUT/check-$what.log" | head -12
done
for tool in memcheck racecheck synccheck; do
  left=$((585 - (SECONDS - T0))); [ $left -lt 20 ] && { echo "sanitize $tool: skipped, $left s left" | tee -a "$OUT/session.log"; continue; }
  t0=$SECONDS; timeout $left compute-sanitizer --tool $tool --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda > "$OUT/sanitize-$tool.log" 2>&1
  echo "sanitize $tool rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E "SUMMARY|launches completed" "$OUT/sanitize-$tool.log"
done
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
cd "$OUT" && tar czf raw.tgz *.json bench-*.log && rm -f *.json bench-*.log
