#!/usr/bin/env bash
# Call 6 of session 5: the final library (native code of e8d0c11 after the revert) — bench overhead (full) and ovh.js.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/gl /tmp/benchnm
xz -dc .gpu-lib/libgdn.so.xz > /tmp/gl/libgdn.so; chmod +x /tmp/gl/libgdn.so
cp .gpu-lib/gdn_user_worker .gpu-lib/gdn_user_build.json /tmp/gl/
export GDN_LIBRARY=/tmp/gl/libgdn.so GDN_REVISION=$1
mkdir -p /tmp/node-bin; xz -dc .device/nbrun/node.xz > /tmp/node-bin/node; chmod +x /tmp/node-bin/node
xz -dc .gpu-lib/bench-node_modules.tar.xz | tar -C /tmp/benchnm -xf -
export PATH=/tmp/node-bin:/tmp/benchnm/node_modules/.bin:$PATH NODE_PATH=/tmp/benchnm/node_modules
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 100 node bin/gdnlab.js bench overhead --backend cuda --json="$OUT/bench-overhead.json" --markdown "$OUT/bench-overhead.md" > "$OUT/bench-overhead.log" 2>&1
echo "overhead rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; grep -E '^\| ' "$OUT/bench-overhead.log" | head -30
t0=$SECONDS; GDN_BACKEND=cuda timeout 60 node .gpu-run/ovh.js > "$OUT/ovh.txt" 2>&1; echo "ovh rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; cat "$OUT/ovh.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
