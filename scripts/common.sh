# Shared helpers for the gdnlab set-up scripts. Sourced, never run on its own.
# Every script works from the repository root, whatever directory it was called from.

GDNLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$GDNLAB_ROOT"

VENV_DIR="$GDNLAB_ROOT/.venv"
VENV_PYTHON="$VENV_DIR/bin/python"

# Progress goes to stderr so that a script's stdout carries only what it is asked for.
say() { printf '[gdnlab] %s\n' "$*" >&2; }
die() { printf '[gdnlab] error: %s\n' "$*" >&2; exit 1; }

# timed LABEL COMMAND...: runs COMMAND and says how long it took (CI's budget: docs/MAINTAINING.md, "CI time").
timed() {
  local label=$1 t0=$SECONDS; shift
  "$@"
  say "$label: $((SECONDS - t0)) s"
}

is_root() { [ "$(id -u)" = 0 ]; }

# sha256 of a file, used as the stamp that says "this requirements file is installed".
file_hash() { sha256sum "$1" | cut -d' ' -f1; }

# The python that creates the venv: $GDNLAB_PYTHON, else python3.
base_python() {
  local py="${GDNLAB_PYTHON:-python3}"
  command -v "$py" >/dev/null 2>&1 || die "python3 not found. Install Python >= 3.9 (Debian: apt-get install python3 python3-venv) or point GDNLAB_PYTHON at one."
  printf '%s\n' "$py"
}

# nvcc on PATH or in the usual CUDA location; empty when there is none.
find_nvcc() {
  if command -v nvcc >/dev/null 2>&1; then command -v nvcc
  elif [ -x /usr/local/cuda/bin/nvcc ]; then printf '%s\n' /usr/local/cuda/bin/nvcc
  fi
}

# Number of parallel build jobs: $GDNLAB_JOBS, else the core count.
build_jobs() { printf '%s\n' "${GDNLAB_JOBS:-$(nproc 2>/dev/null || echo 2)}"; }

# Steps that run in the background while something else compiles (docs/MAINTAINING.md, "CI time"). Each one's
# output is held in a file and shown once it is done, so the logs do not interleave. The caller removes the held
# logs at exit: trap 'rm -f "${beside_logs[@]}"' EXIT.
beside_pids=() beside_logs=() beside_failures=()
# beside_build NAME FUNCTION "MESSAGE IF IT FAILS"
beside_build() {
  local log
  log="$(mktemp)"
  ( timed "$1" "$2" ) >"$log" 2>&1 &
  beside_pids+=($!) beside_logs+=("$log") beside_failures+=("$3")
}
# Waits for each, in the order started, shows its output and stops at the first that failed.
finish_beside_build() {
  local i status
  for i in "${!beside_pids[@]}"; do
    status=0
    wait "${beside_pids[$i]}" || status=$?
    cat "${beside_logs[$i]}" >&2
    [ "$status" = 0 ] || die "${beside_failures[$i]} (its output is above)"
  done
}
