#!/usr/bin/env bash
# Runs gdnlab's GPU proofs on a machine with an NVIDIA GPU, in stages, logging everything to $OUT
# (default ./gpu-out). Used with the workplace's device tool; works on any CUDA machine with node.
#
#   bash bench/gpu-session.sh STAGE [STAGE ...]
#     env      GPU, driver, clocks (nvidia-smi), library and device facts
#     build    build libgdn with CUDA here if the carried build/cuda/libgdn.so does not load
#     tests    the mocha suites of the native ops on host AND cuda (GDN_TEST_BACKENDS=host,cuda)
#     checks   gdnlab check conv (full matrix) / postconv (quick) / fused, CUDA == host, with mutants; GDN_DEFINE=FILE[,FILE]
#              adds user arms (examples/arms), planted defects included
#     race     gdnlab check race: 1,000 trials (GDN_RACE_TRIALS) per mapping without and with widen
#     bench    gdnlab bench conv (vs copy, PyTorch eager, and vLLM's Triton kernel when .device/vllm exists:
#              bench/pack-vllm.sh)
#     bench2   gdnlab bench postconv (the same baselines), bench fused, bench overhead, the verdict self-check
#     sanitize compute-sanitizer memcheck, racecheck and synccheck over every arm
#     tune     cuda/tests/tile_tune.cu built here and run: GDN_TUNE="SET ROUNDS[;SET ROUNDS...]" (default "conv12 15",
#              session 18's program-order set; docs/BENCHMARKS.md "Session 18")
#     pack     every log and result of $OUT in one archive (the device tool returns at most eight files)
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
  # GDN_STEP_TIMEOUT=S stops any one step after S seconds (the device tool's call is 600 s in all).
  # (timeout runs programs, not shell functions: the gdnlab function is spelled out.)
  [ "$1" = gdnlab ] && set -- node bin/gdnlab.js "${@:2}"
  timeout "${GDN_STEP_TIMEOUT:-0}" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "=== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$OUT/session.log"
  tail -n 25 "$OUT/$name.log"
  [ $rc -eq 0 ] || status=1
  return $rc
}

for stage in "$@"; do
  case $stage in
    env)
      # GDN_REVISION first: the device tool's copy of the tree may carry a .git of another commit.
      { date -u; echo "revision: ${GDN_REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"; nvidia-smi;
        nvidia-smi -q -d CLOCK,PERFORMANCE,POWER | head -80; nvcc --version | tail -2; node --version; } > "$OUT/env.log" 2>&1
      step info gdnlab info ;;
    build)
      # GDN_BUILD_HERE=1: always build here (GDN_BUILD_TARGETS: only these CMake targets, e.g. "gdn gdn_user_worker") (the device tool's tree travels without build/); the library, its
      # user-arm worker and compile recipe are copied to $OUT/lib so a later call can carry them.
      if [ "${GDN_BUILD_HERE:-0}" = 1 ] || ! node -e "require('./dist/lib/backend').Backend.open('cuda')" 2>/dev/null; then
        echo "building libgdn here (sm_${GDN_CUDA_ARCH:-90})" | tee -a "$OUT/session.log"
        step build sh -c "cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=${GDN_CUDA_ARCH:-90} -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/gdn-build -j\$(nproc) ${GDN_BUILD_TARGETS:+--target $GDN_BUILD_TARGETS}"
        export GDN_LIBRARY=/tmp/gdn-build/libgdn.so
        mkdir -p "$OUT/lib" && cp /tmp/gdn-build/libgdn.so /tmp/gdn-build/gdn_user_worker /tmp/gdn-build/gdn_user_build.json "$OUT/lib/" 2>/dev/null
      fi ;;
    tests)
      # The native ops on host AND cuda (CUDA == host asserted case by case), the pinned reference bits, the
      # rounding stores, validation, and user arms compiled and run on both backends.
      step tests timeout "${GDN_TESTS_TIMEOUT:-900}" env GDN_TEST_BACKENDS=host,cuda mocha --timeout 300000 --reporter spec \
        'dist/test/core/*.test.js' 'dist/test/ops/*.test.js' dist/test/arms/arms.test.js ;;
    checks)
      # GDN_DEFINE=FILE[,FILE]: user arms (examples/arms) checked and mutant-run beside the built-ins.
      define=(); [ -n "${GDN_DEFINE:-}" ] && define=(--define "$GDN_DEFINE")
      step check-conv gdnlab check conv --backend cuda --mutants "${define[@]}"
      step check-postconv gdnlab check postconv --backend cuda --quick --mutants "${define[@]}"
      step check-fused gdnlab check fused --backend cuda --mutants ;;
    race)
      step race sh -c "node bin/gdnlab.js check race --backend cuda --trials ${GDN_RACE_TRIALS:-1000} --widen 20000 --channels 1024 --json > '$OUT/race-trials.json'; rc=\$?; node -e \"const r=require('$OUT/race-trials.json'); for (const x of r.results) console.log(x.mapping.padEnd(10), 'widen', String(x.widenCycles).padStart(6), x.corruptedRuns + '/' + x.trials, 'corrupted')\"; exit \$rc" ;;
    bench)
      vllm=(); [ -d .device/vllm/vllm ] && vllm=(--vllm .device/vllm)
      # GDN_BENCH_CONV_ARGS: e.g. --arms scalar,vec/exact,tile/exact --define examples/arms/reg16.json
      # shellcheck disable=SC2086
      step bench-conv gdnlab bench conv --backend cuda "${vllm[@]}" ${GDN_BENCH_CONV_ARGS:-} --json="$OUT/bench-conv.json" --markdown "$OUT/bench-conv.md" ;;
    bench2)
      vllm=(); [ -d .device/vllm/vllm ] && vllm=(--vllm .device/vllm)
      # shellcheck disable=SC2086
      step bench-postconv gdnlab bench postconv --backend cuda "${vllm[@]}" ${GDN_BENCH_POSTCONV_ARGS:-} --json="$OUT/bench-postconv.json" --markdown "$OUT/bench-postconv.md"
      step bench-fused gdnlab bench fused --backend cuda "${vllm[@]}" --json="$OUT/bench-fused.json" --markdown "$OUT/bench-fused.md"
      step bench-overhead gdnlab bench overhead --backend cuda --json="$OUT/bench-overhead.json"
      step verdict gdnlab bench verdict --backend cuda ;;
    sanitize)
      for tool in memcheck racecheck synccheck; do
        step "sanitize-$tool" compute-sanitizer --tool "$tool" --error-exitcode 9 node bin/gdnlab.js check sanitize --backend cuda
      done ;;
    tune)
      step tune-build nvcc -O3 -std=c++17 --fmad=false -arch="sm_${GDN_CUDA_ARCH:-90}" -Xptxas -v -Icuda/include -Icuda/src \
        -Icuda/src/common -Icuda/tests cuda/tests/tile_tune.cu -o /tmp/gdn-tile-tune
      IFS=';' read -ra tunes <<< "${GDN_TUNE:-conv12 15}"
      for tune in "${tunes[@]}"; do
        # shellcheck disable=SC2086
        step "tune-${tune%% *}" /tmp/gdn-tile-tune $tune
      done ;;
    notebooks)
      # GDN_NOTEBOOK_BACKEND=host runs the same stage on the host backend (the local test of the bundle).
      step notebooks env GDN_BACKEND="${GDN_NOTEBOOK_BACKEND:-cuda}" bash bench/notebook-stage.sh "$OUT" ;;
    pack)
      # At most eight files come back from the device tool: every log and result in one archive.
      tar -C "$OUT" -czf /tmp/gdn-session-logs.tar.gz --exclude=lib --exclude='*.tar.gz' . && \
        find "$OUT" -maxdepth 1 -type f ! -name '*.tar.gz' ! -name session.log -delete && mv /tmp/gdn-session-logs.tar.gz "$OUT/" ;;
    *) echo "unknown stage $stage" >&2; status=2 ;;
  esac
done
exit $status
