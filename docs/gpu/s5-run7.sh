#!/usr/bin/env bash
# Call 1 of session 5: tile_tune set 5 (the stream arm's shared-memory row ring), the conv check on CUDA with
# the ring in the library, and where a small op's time goes on CUDA (.gpu-run/ovh.js).
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/gl
xz -dc .gpu-lib/libgdn.so.xz > /tmp/gl/libgdn.so; chmod +x /tmp/gl/libgdn.so
cp .gpu-lib/gdn_user_worker .gpu-lib/gdn_user_build.json /tmp/gl/
xz -dc .gpu-lib/tile_tune.xz > /tmp/gl/tile_tune; chmod +x /tmp/gl/tile_tune
export GDN_LIBRARY=/tmp/gl/libgdn.so GDN_REVISION=$1
source .device/env.sh
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 200 /tmp/gl/tile_tune conv5 15 > "$OUT/tune-conv5.txt" 2>&1
echo "tune rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; sed -n '/== conv table/,$p' "$OUT/tune-conv5.txt"; grep -E 'DIFF|differ' "$OUT/tune-conv5.txt" | head
t0=$SECONDS; timeout 120 node bin/gdnlab.js check conv --backend cuda --quick --mutants > "$OUT/check-conv.log" 2>&1
echo "check-conv rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; tr '\r' '\n' < "$OUT/check-conv.log" | grep -vE '^\[|^ok' | tail -12
t0=$SECONDS; GDN_BACKEND=cuda timeout 120 node .gpu-run/ovh.js > "$OUT/ovh.txt" 2>&1
echo "ovh rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"; cat "$OUT/ovh.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
