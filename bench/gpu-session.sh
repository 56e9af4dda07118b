#!/usr/bin/env bash
# Runs gdnlab's GPU proofs on a machine with an NVIDIA GPU, in stages, logging everything to $OUT
# (default ./gpu-out). Works on any CUDA machine with node (docs/gpu-test-log.md says how the proofs are run).
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
#     profile  gdnlab profile conv|postconv|fused under ncu: $OUT/profile-OP.json, and the raw CSV with the launch
#              manifest in $OUT/profile-OP/ (a recorded fixture for test/fixtures/ncu)
#     crosscheck  one shape per op (Qwen3.5-4B T=8192): the bench's fair event medians of our fastest arms and
#              vLLM's kernels beside Nsight Compute's kernel durations of the same launches ($OUT/crosscheck.md)
#     tune     cuda/tests/tile_tune.cu built here and run: GDN_TUNE="SET ROUNDS[;SET ROUNDS...]" (default "conv12 15",
#              the program-order set of e366a67)
#     pack     every log and result of $OUT in one archive (for a remote runner that returns few files)
#     notebooks every notebooks/*.ipynb through the real gdnlab kernel (GDN_BACKEND=cuda) from the
#              bundle of bench/pack-notebook-run.sh (.device/nbrun: node, traced node_modules, Jupyter
#              wheels for python 3.12); $OUT/notebooks-executed.tar.gz holds the executed notebooks and
#              report.json (bench/restore-notebooks.sh takes them back into notebooks/)
#
# Prerequisites: dist/ (npm run build), build/cuda/libgdn.so or nvcc + cmake, and node with koffi
# and mocha (on a machine without Node.js, a packed node and node_modules in .device/, sourced from
# .device/env.sh).
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
  # GDN_STEP_TIMEOUT=S stops any one step after S seconds (a remote runner may give a call little time).
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
      # GDN_REVISION first: a copy of the tree may travel without its .git, or with one of another commit.
      { date -u; echo "revision: ${GDN_REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}"; nvidia-smi;
        nvidia-smi -q -d CLOCK,PERFORMANCE,POWER | head -80; nvcc --version | tail -2; node --version; } > "$OUT/env.log" 2>&1
      step info gdnlab info ;;
    build)
      # GDN_BUILD_HERE=1: always build here (GDN_BUILD_TARGETS: only these CMake targets, e.g. "gdn gdn_user_worker"); the library, its
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
    crosscheck)
      vllm=(); [ -d .device/vllm/vllm ] && vllm=(--vllm .device/vllm)
      step xc-bench-conv gdnlab bench conv --backend cuda "${vllm[@]}" --arms stream-mufu/exact --shapes "Qwen3.5-4B T=8192" --json="$OUT/xc-bench-conv.json"
      step xc-bench-postconv gdnlab bench postconv --backend cuda "${vllm[@]}" --arms vec-tile --shapes "Hv=32) T=8192" --json="$OUT/xc-bench-postconv.json"
      step xc-bench-fused gdnlab bench fused --backend cuda --shapes "Qwen3.5-4B T=8192" --json="$OUT/xc-bench-fused.json"
      # Clocks left as they are (the bench runs at the card's own clocks); caches flushed before each kernel, as the
      # bench flushes L2 before each sample.
      ncu_flags=(--clock-control none --cache-control all --metrics gpu__time_duration.sum)
      step xc-ncu-ours ncu "${ncu_flags[@]}" -k 'regex:(conv|postconv|fused)_kernel' -f -o "$OUT/xc-ours" node dist/bench/launch-arms.js 20
      ncu -i "$OUT/xc-ours.ncu-rep" --csv --page raw --print-units base > "$OUT/xc-ours.csv" 2>> "$OUT/session.log"
      if [ ${#vllm[@]} -gt 0 ]; then
        echo '[{"op":"conv","id":"conv","C":8192,"K":4,"lengths":[8192],"initial_state":[false]},{"op":"postconv","id":"postconv","T":8192,"Hk":16,"Hv":32,"Dk":128,"Dv":128}]' > "$OUT/xc-cases.json"
        step xc-ncu-vllm sh -c "ncu ${ncu_flags[*]} -k 'regex:causal_conv1d|post_conv' -f -o '$OUT/xc-vllm' python3 bench/vllm_reference.py --vllm-path .device/vllm --launch-only 20 < '$OUT/xc-cases.json'"
        ncu -i "$OUT/xc-vllm.ncu-rep" --csv --page raw --print-units base > "$OUT/xc-vllm.csv" 2>> "$OUT/session.log"
      fi
      rm -f "$OUT"/xc-*.ncu-rep
      node dist/bench/crosscheck.js "$OUT" | tee "$OUT/crosscheck.md" ;;
    profile)
      # gdn.profile of each op's arms under ncu (the profile child launches from its calling thread: ncu 2025.3.1 could
      # not profile a launch from koffi's worker thread, 4be25c1). The parsed table as JSON, and the raw CSV with the
      # child's launch manifest, which test/fixtures/ncu/README.md turns into a recorded fixture.
      for spec in "conv scalar,vec,stream-mufu,reg16 --define examples/arms/reg16.json" "postconv tree,token-tile,vec-tile" "fused stream,stream-mufu"; do
        read -r op arms extra <<< "$spec"
        # shellcheck disable=SC2086
        step "profile-$op" sh -c "node bin/gdnlab.js profile $op --backend cuda --arms $arms $extra --json > '$OUT/profile-$op.json'"
        csv=$(node -e 'try { console.log(require(process.argv[1]).csv || "") } catch (e) {}' "$OUT/profile-$op.json")
        if [ -n "$csv" ] && [ -f "$csv" ]; then
          mkdir -p "$OUT/profile-$op" && cp "$csv" "$(dirname "$csv")/launches.json" "$OUT/profile-$op/"
        fi
      done ;;
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
      # A remote runner may return only a few files: every log and result in one archive.
      tar -C "$OUT" -czf /tmp/gdn-session-logs.tar.gz --exclude=lib --exclude='*.tar.gz' . && \
        find "$OUT" -maxdepth 1 -type f ! -name '*.tar.gz' ! -name session.log -delete && mv /tmp/gdn-session-logs.tar.gz "$OUT/" ;;
    *) echo "unknown stage $stage" >&2; status=2 ;;
  esac
done
exit $status
