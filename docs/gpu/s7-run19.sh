#!/usr/bin/env bash
# Call 4 of session 7: ncu of post-conv token-tile (4B and 27B head layouts, T = 2048 and 8192), libgdn built here;
# then bench overhead on CUDA with the TypeScript of 9268ddc (A, dist-a/) and of this revision (B) alternating, 3 each.
# Usage: run19.sh REVISION
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export GDN_REVISION=$1
source .device/env.sh
export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
if [ ! -f "$GDN_LIBRARY" ]; then
  t0=$SECONDS; cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1 &&
    cmake --build /tmp/gdn-build -j"$(nproc)" --target gdn >> "$OUT/build.log" 2>&1
  echo "build rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
fi
{ date -u; echo "revision: $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv; } > "$OUT/env.log" 2>&1
t0=$SECONDS; timeout 200 ncu --clock-control none -k regex:"postconv_kernel" \
  --section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
  --metrics smsp__inst_executed.sum,dram__bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_wait.ratio,smsp__average_warp_latency_issue_stalled_short_scoreboard.ratio,smsp__average_warp_latency_issue_stalled_lg_throttle.ratio,smsp__average_warp_latency_issue_stalled_not_selected.ratio,smsp__average_warp_latency_issue_stalled_selected.ratio,smsp__average_warp_latency_issue_stalled_barrier.ratio,smsp__average_warp_latency_issue_stalled_no_instruction.ratio,smsp__average_warp_latency_issue_stalled_dispatch_stall.ratio,smsp__average_warp_latency_issue_stalled_mio_throttle.ratio,smsp__average_warp_latency_issue_stalled_drain.ratio,smsp__average_warp_latency_issue_stalled_membar.ratio,smsp__cycles_active.avg,sm__cycles_elapsed.avg \
  node .gpu-run/prof7.js > "$OUT/ncu-7.txt" 2>&1
echo "ncu rc=$? $((SECONDS-t0)) s" | tee -a "$OUT/session.log"
grep -E '^\s+void|^  postconv|smsp__inst_executed.sum|dram__bytes|Duration|Issued Warp|Achieved Occ|Theoretical Occ|DRAM Through|Memory Through|Registers Per|Block Limit|stalled|Eligible Warps|No Eligible|Compute \(SM\) Th|Grid Size|Waves Per SM|L2 Hit|cycles' "$OUT/ncu-7.txt" > "$OUT/ncu-7-summary.txt"; head -160 "$OUT/ncu-7-summary.txt"
for r in 1 2 3; do
  GDN_REVISION=9268ddc timeout 60 node .gpu-run/gdnlab-a.js bench overhead --backend cuda --json="$OUT/ab-r$r-A.json" > /dev/null 2>&1; echo "r$r A rc=$?" | tee -a "$OUT/session.log"
  GDN_REVISION=$1 timeout 60 node bin/gdnlab.js bench overhead --backend cuda --json="$OUT/ab-r$r-B.json" > /dev/null 2>&1; echo "r$r B rc=$?" | tee -a "$OUT/session.log"
done
node -e '
const fs = require("fs"), out = process.argv[1];
for (const r of [1, 2, 3]) for (const v of ["A", "B"]) {
  const j = JSON.parse(fs.readFileSync(`${out}/ab-r${r}-${v}.json`, "utf8"));
  for (const x of j.rows) if (/^conv.forward|^postconv|^fused/.test(x.op) && !/await|fresh/.test(x.variant))
    console.log(`r${r} ${v} ${x.op.padEnd(48)} ${x.variant.padEnd(58)} kernel ${x.kernelUs.toFixed(1).padStart(6)} wall ${x.wallUs.toFixed(1).padStart(6)} over ${x.overheadUs.toFixed(1).padStart(6)}`);
}' "$OUT" > "$OUT/ab-summary.txt"; grep -c "" "$OUT/ab-summary.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.mem --format=csv >> "$OUT/env.log"
bash bench/gpu-session.sh pack
