#!/usr/bin/env bash
# Call 5 of session 5: the pinned program-list upload against the pageable one, same machine, alternating
# processes (GDN_CUDA_PINNED_UPLOADS=0 keeps the pageable path): bench overhead --quick and ovh.js, 3 rounds each.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT" /tmp/gl /tmp/benchnm
xz -dc .gpu-lib/libgdn.so.xz > /tmp/gl/libgdn.so; chmod +x /tmp/gl/libgdn.so
cp .gpu-lib/gdn_user_worker .gpu-lib/gdn_user_build.json /tmp/gl/
export GDN_LIBRARY=/tmp/gl/libgdn.so GDN_REVISION=$1
mkdir -p /tmp/node-bin; [ -x /tmp/node-bin/node ] || { xz -dc .device/nbrun/node.xz > /tmp/node-bin/node; chmod +x /tmp/node-bin/node; }
[ -d /tmp/benchnm/node_modules ] || xz -dc .gpu-lib/bench-node_modules.tar.xz | tar -C /tmp/benchnm -xf -
export PATH=/tmp/node-bin:/tmp/benchnm/node_modules/.bin:$PATH NODE_PATH=/tmp/benchnm/node_modules
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; lscpu | grep -E 'Model name|^CPU\(s\)'; uptime; } > "$OUT/env.log" 2>&1
for r in 1 2 3; do
  for p in 1 0; do
    GDN_CUDA_PINNED_UPLOADS=$p timeout 60 node bin/gdnlab.js bench overhead --backend cuda --quick --json="$OUT/ovh-bench-r$r-p$p.json" > /dev/null 2>&1
    echo "round $r pinned=$p rc=$?" | tee -a "$OUT/session.log"
    GDN_CUDA_PINNED_UPLOADS=$p GDN_BACKEND=cuda timeout 30 node .gpu-run/ovh.js > "$OUT/ovh-r$r-p$p.txt" 2>&1
  done
done
grep -h "conv vec" "$OUT"/ovh-r*-p1.txt | head -12; echo ---; grep -h "conv vec" "$OUT"/ovh-r*-p0.txt | head -12
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
