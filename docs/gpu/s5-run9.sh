#!/usr/bin/env bash
# Call 3 of session 5: same-run timing of the final arms — bench conv (every fast exact arm beside vLLM's
# Triton conv), bench fused (beside the chain and vLLM), bench overhead on CUDA, and ovh.js. Usage: run9.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/gl
xz -dc .gpu-lib/libgdn.so.xz > /tmp/gl/libgdn.so; chmod +x /tmp/gl/libgdn.so
cp .gpu-lib/gdn_user_worker .gpu-lib/gdn_user_build.json /tmp/gl/
export GDN_LIBRARY=/tmp/gl/libgdn.so GDN_REVISION=$1 GDN_STEP_TIMEOUT=${GDN_STEP_TIMEOUT:-230}
bash bench/gpu-session.sh env
source .device/env.sh
export GDN_BENCH_CONV_ARGS="--arms scalar/sequence,reg/exact,vec/exact,tile/exact,stream/exact,stream/sequence"
bash bench/gpu-session.sh bench
grep -E '^\*\*|^\| (vec|tile|stream|vLLM|vllm)' "$OUT/bench-conv.md" | head -60
V=(--vllm .device/vllm)
t0=$SECONDS; timeout 170 node bin/gdnlab.js bench fused --backend cuda "${V[@]}" --json="$OUT/bench-fused.json" --markdown "$OUT/bench-fused.md" > "$OUT/bench-fused.log" 2>&1
echo "bench-fused rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\*\*|^\| ' "$OUT/bench-fused.md" | head -40
t0=$SECONDS; timeout 100 node bin/gdnlab.js bench overhead --backend cuda --quick --json="$OUT/bench-overhead.json" --markdown "$OUT/bench-overhead.md" > "$OUT/bench-overhead.log" 2>&1
echo "overhead rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\| ' "$OUT/bench-overhead.log" | head -30
t0=$SECONDS; GDN_BACKEND=cuda timeout 60 node .gpu-run/ovh.js > "$OUT/ovh.txt" 2>&1; echo "ovh rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; cat "$OUT/ovh.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
