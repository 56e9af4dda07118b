#!/usr/bin/env bash
# Runs gdnlab's GPU proofs on a machine with an NVIDIA GPU, in stages, logging everything to $OUT
# (default ./gpu-out). Used with the workplace's device tool; works on any CUDA machine with node.
#
#   bash bench/gpu-session.sh STAGE [STAGE ...]
#     env      GPU, driver, clocks (nvidia-smi), library and device facts
#     build    build libgdn with CUDA here if the carried build/cuda/libgdn.so does not load
#     tests    the mocha suites of the native ops on host AND cuda (GDN_TEST_BACKENDS=host,cuda)
#     checks   gdnlab check conv / postconv (full matrices, CUDA == host) with mutants
#     race     gdnlab check race: 1,000 trials per mapping without and with widen
#     bench    gdnlab bench conv / postconv (vs copy and PyTorch eager) and the verdict self-check
#     sanitize compute-sanitizer memcheck, racecheck and synccheck over every arm
#     notebooks every notebooks/*.ipynb through the real gdnlab kernel (GDN_BACKEND=cuda) from the
#              bundle of bench/pack-notebook-run.sh (.device/nbrun: node, traced node_modules, Jupyter
#              wheels for python 3.12); $OUT/notebooks-executed.tar.gz holds the executed notebooks and
#              report.json (bench/restore-notebooks.sh takes them back into notebooks/)
#
# Prerequisites: dist/ (npm run build), build/cuda/libgdn.so or nvcc + cmake, and node with koffi
# and mocha (the device tool's prepare script packs them into .device/).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
[ -f .device/env.sh ] && source .device/env.sh
export GDN_LIBRARY=${GDN_LIBRARY:-$PWD/build/cuda/libgdn.so}
export GDN_BACKEND=cuda
gdnlab() { node bin/gdnlab.js "$@"; }
status=0
step() { # step NAME COMMAND...: runs, logs to $OUT/NAME.log, records the exit status
  local name=$1; shift
  echo "=== $name: $*" | tee -a "$OUT/session.log"
  local t0=$SECONDS
  "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$OUT/session.log"
  tail -n 25 "$OUT/$name.log"
  [ $rc -eq 0 ] || status=1
  return $rc
}

for stage in "$@"; do
  case $stage in
    env)
      { date -u; git rev-parse HEAD 2>/dev/null || echo "revision: ${GDN_REVISION:-unknown}"; nvidia-smi;
        nvidia-smi -q -d CLOCK,PERFORMANCE,POWER | head -80; nvcc --version | tail -2; node --version; } > "$OUT/env.log" 2>&1
      step info gdnlab info ;;
    build)
      if ! node -e "require('./dist/lib/backend').Backend.open('cuda')" 2>/dev/null; then
        echo "carried library does not open the CUDA backend; building here" | tee -a "$OUT/session.log"
        step build sh -c 'cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/gdn-build -j16'
        export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
      fi ;;
    tests)
      step tests env GDN_TEST_BACKENDS=host,cuda mocha --reporter spec 'dist/test/core/*.test.js' 'dist/test/ops/*.test.js' ;;
    checks)
      step check-conv gdnlab check conv --backend cuda --mutants
      step check-postconv gdnlab check postconv --backend cuda --mutants ;;
    race)
      step race sh -c "node bin/gdnlab.js check race --backend cuda --trials 1000 --widen 20000 --channels 1024 --json > '$OUT/race-trials.json'; rc=\$?; node -e \"const r=require('$OUT/race-trials.json'); for (const x of r.results) console.log(x.mapping.padEnd(10), 'widen', String(x.widenCycles).padStart(6), x.corruptedRuns + '/' + x.trials, 'corrupted')\"; exit \$rc" ;;
    bench)
      step bench-conv gdnlab bench conv --backend cuda --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md"
      step bench-postconv gdnlab bench postconv --backend cuda --json="$OUT/bench-postconv.json" --markdown "$OUT/bench-postconv.md"
      step verdict gdnlab bench verdict --backend cuda ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        step "sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda
      done ;;
    notebooks)
      # GDN_NOTEBOOK_BACKEND=host runs the same stage on the host backend (the local test of the bundle).
      step notebooks env GDN_BACKEND="${GDN_NOTEBOOK_BACKEND:-cuda}" bash bench/notebook-stage.sh "$OUT" ;;
    *) echo "unknown stage $stage" >&2; status=2 ;;
  esac
done
exit $status
