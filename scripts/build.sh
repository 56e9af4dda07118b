#!/usr/bin/env bash
# Builds what gdnlab runs: libgdn's host backend (always), its CUDA backend (when nvcc is found;
# compile-only on a machine without a GPU), and the TypeScript in lib/, kernel/, test/, bench/ to dist/.
# Incremental: CMake is configured once per build folder, then only rebuilt; tsc keeps a build-info file.
#
#   GDNLAB_CUDA=auto (default) | on (fail without nvcc) | off (skip the CUDA build)
#   GDNLAB_CUDA_ARCHS=LIST  CMake CUDA architectures for a new build/cuda (default where a GPU is present:
#                    cuda/CMakeLists.txt's choice, that machine's GPUs; 80-virtual (PTX) on a machine without one,
#                    where the build only proves that the CUDA code compiles and the other architectures are
#                    proven by ptxas in the tests — docs/MAINTAINING.md, "CI time" and "GPU architectures")
#   GDNLAB_JOBS=N    parallel compile jobs (default: the core count)
#   GDNLAB_CCACHE=auto (default: through ccache when it is installed) | off
set -euo pipefail
source "$(dirname "$0")/common.sh"

require_tools() {
  command -v cmake >/dev/null 2>&1 || die "cmake not found. Install CMake >= 3.24 and a C++17 compiler (Debian: apt-get install cmake g++ make)."
  command -v c++ >/dev/null 2>&1 || command -v g++ >/dev/null 2>&1 \
    || die "no C++ compiler found. Install one (Debian: apt-get install g++ make)."
  [ -x node_modules/.bin/tsc ] || die "node_modules/.bin/tsc missing: run 'bash scripts/setup.sh' (or 'npm ci') first."
}

# build_native DIR CMAKE_ARGS... : configure DIR (first time, or when this script's arguments for it
# changed), then build it.
build_native() {
  local dir=$1; shift
  local args_file="$dir/gdnlab-cmake-args" args
  args="$(printf '%s\n' "$@")"
  if [ ! -f "$dir/CMakeCache.txt" ] || [ "$(cat "$args_file" 2>/dev/null)" != "$args" ]; then
    say "configuring $dir"
    cmake -S cuda -B "$dir" "$@"
    printf '%s' "$args" > "$args_file"
  fi
  say "building $dir"
  cmake --build "$dir" --parallel "$(build_jobs)"
}

build_cuda() {
  local mode="${GDNLAB_CUDA:-auto}" nvcc
  nvcc="$(find_nvcc)"
  case "$mode" in
    off) say "GDNLAB_CUDA=off: skipping the CUDA build"; return 0 ;;
    on|auto) ;;
    *) die "GDNLAB_CUDA must be auto, on or off (got '$mode')" ;;
  esac
  if [ -z "$nvcc" ]; then
    [ "$mode" = on ] && die "GDNLAB_CUDA=on but nvcc was not found (PATH or /usr/local/cuda/bin)."
    say "nvcc not found: skipping the CUDA build (the host backend gives the same bits; set GDNLAB_CUDA=on to require it)"
    return 0
  fi
  local archs=() keep=(-DGDN_KEEP_CUDA_INTERMEDIATES=)
  if [ -n "${GDNLAB_CUDA_ARCHS:-}" ]; then
    archs=(-DCMAKE_CUDA_ARCHITECTURES="$GDNLAB_CUDA_ARCHS")
  elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    # Nothing here can run the CUDA backend: its device code is compiled to compute_80 PTX alone (the sources
    # branch on the architecture at 800 only), which proves it compiles, and nvcc keeps that PTX in
    # build/cuda/nvcc-keep for test/cuda-archs, which puts it through ptxas for every architecture of the
    # fallback list, sm_90 included. A machine with a GPU gets its own GPUs' machine code (cuda/CMakeLists.txt).
    archs=(-DCMAKE_CUDA_ARCHITECTURES=80-virtual)
    keep=(-DGDN_KEEP_CUDA_INTERMEDIATES="$PWD/build/cuda/nvcc-keep")
    [ -f build/cuda/CMakeCache.txt ] || say "no GPU here: compiling the CUDA backend to compute_80 PTX only (compile-only; test/cuda-archs runs ptxas per architecture; GDNLAB_CUDA_ARCHS overrides)"
  fi
  # The host replay is linked from build/host's archive, compiled once (cuda/CMakeLists.txt,
  # GDN_HOST_REPLAY_FROM; docs/MAINTAINING.md, "CI time").
  build_native build/cuda -DGDN_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc" "${archs[@]}" "${keep[@]}" \
    -DGDN_HOST_REPLAY_FROM="$PWD/build/host"
  # Only the PTX is read again (test/cuda-archs); the preprocessed sources nvcc also kept are large.
  if [ -d build/cuda/nvcc-keep ]; then find build/cuda/nvcc-keep -type f ! -name '*.ptx' -delete; fi
}

# Removes compiled files whose TypeScript source is gone, so mocha never runs a deleted test.
remove_orphaned_outputs() {
  local out src
  [ -d dist ] || return 0
  while IFS= read -r -d '' out; do
    src="${out#dist/}"
    src="${src%.js}.ts"
    if [ ! -f "$src" ]; then
      rm -f "$out" "$out.map" "${out%.js}.d.ts" "${out%.js}.d.ts.map"
    fi
  done < <(find dist/lib dist/kernel dist/test dist/bench -name '*.js' -print0 2>/dev/null)
}

# True when no TypeScript source or compiler setting changed since the last successful compile.
typescript_up_to_date() {
  local stamp=dist/.tsbuildinfo
  [ -f "$stamp" ] || return 1
  [ -z "$(find lib kernel test bench tsconfig.json package-lock.json -newer "$stamp" \( -name '*.ts' -o -name '*.json' \) -print -quit 2>/dev/null)" ]
}

build_typescript() {
  remove_orphaned_outputs
  if typescript_up_to_date; then
    say "TypeScript is up to date (dist/)"
    return 0
  fi
  say "compiling TypeScript (tsc -p tsconfig.json)"
  # The build-info file lives inside dist/ so that deleting dist/ forces a full rebuild; it is
  # removed when tsc fails, so that the next build compiles (and reports the errors) again.
  if ! node_modules/.bin/tsc -p tsconfig.json --incremental --tsBuildInfoFile dist/.tsbuildinfo; then
    rm -f dist/.tsbuildinfo
    die "TypeScript compile failed (see the errors above)"
  fi
  touch dist/.tsbuildinfo
}

# Through ccache where it is installed (scripts/setup.sh installs it for the tests): a second tree of the same
# sources (Binder's postBuild in a copy, planted defects' scratch copies) gets the objects from the cache. Paths under
# the tree are hashed relative to it (CCACHE_BASEDIR), so copies elsewhere match; a hit gives the same object file.
host_launcher=()
if [ "${GDNLAB_CCACHE:-auto}" != off ] && command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$PWD"
  host_launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

require_tools
timed "libgdn host build" build_native build/host -DGDN_CUDA=OFF "${host_launcher[@]}"
# TypeScript compiles while the CUDA backend does: tsc is one process, and the CUDA tree's configure step and its
# last source leave a core idle (docs/MAINTAINING.md, "CI time"). tsc's output is held and shown after the CUDA
# build's (beside_build, common.sh).
trap 'rm -f "${beside_logs[@]}"' EXIT
beside_build "TypeScript" build_typescript "compiling TypeScript failed"
timed "libgdn CUDA build" build_cuda
finish_beside_build
say "build done"
