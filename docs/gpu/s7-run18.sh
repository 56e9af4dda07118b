#!/usr/bin/env bash
# Call 3 of session 7 (libgdn built here if the machine is fresh): bench overhead on CUDA, the TypeScript of 833f600 (A) and
# of this revision (B, offsets as numbers without a host Tensor) alternating, 3 processes each, the same library.
# Usage: run18.sh REVISION_B
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
source .device/env.sh
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
if [ ! -f "$GDN_LIBRARY" ]; then  # a fresh machine: build libgdn from these sources (its CUDA code is call 1's)
  t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn >> "$OUT/build.log" 2>&1
  echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
fi
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv; } > "$OUT/env.log" 2>&1
for r in 1 2 3; do
  GDN_REVISION=833f600 timeout 60 node .gpu-run/gdnlab-a.js bench overhead --backend cuda --json="$OUT/ab-r$r-A.json" > /dev/null 2>&1; echo "r$r A rc=$?" | tee -a "$OUT/session.log"
  GDN_REVISION=$1 timeout 60 node bin/gdnlab.js bench overhead --backend cuda --json="$OUT/ab-r$r-B.json" > /dev/null 2>&1; echo "r$r B rc=$?" | tee -a "$OUT/session.log"
done
node -e '
const fs = require("fs"), out = process.argv[1];
for (const r of [1, 2, 3]) for (const v of ["A", "B"]) {
  const j = JSON.parse(fs.readFileSync(`${out}/ab-r${r}-${v}.json`, "utf8"));
  for (const x of j.rows) if (/^conv.forward|^postconv/.test(x.op) && !/await|fresh/.test(x.variant))
    console.log(`r${r} ${v} ${x.op.padEnd(48)} ${x.variant.padEnd(58)} kernel ${x.kernelUs.toFixed(1).padStart(6)} wall ${x.wallUs.toFixed(1).padStart(6)} over ${x.overheadUs.toFixed(1).padStart(6)}`);
}' "$OUT" | tee "$OUT/ab-summary.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
