#!/usr/bin/env bash
# Call 2 of session 7 (same machine, libgdn of call 1 in /tmp/gdn-build): gdnlab bench overhead on CUDA, full.
# Usage: run17.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
[ -f "$GDN_LIBRARY" ] || { echo "no $GDN_LIBRARY: call 1 did not run on this machine" | tee -a "$OUT/session.log"; exit 3; }
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 500 node bin/gdnlab.js bench overhead --backend cuda --json="$OUT/bench-overhead.json" --markdown "$OUT/bench-overhead.md" > "$OUT/bench-overhead.log" 2>&1
echo "bench overhead rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\| conv|^\| postconv' "$OUT/bench-overhead.md" | head -20
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
