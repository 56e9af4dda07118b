#!/usr/bin/env bash
# Installs whatever gdnlab is missing, and nothing that is already there:
#   npm packages (npm ci), the project venv .venv with Jupyter (requirements.txt), libgdn and the
#   TypeScript build (scripts/build.sh), and the gdnlab kernelspec inside .venv.
# With --tests also: test/fixtures/requirements.txt into .venv, and Debian's chromium for the browser test.
# With --no-venv: leaves Python alone (GDNLAB_JUPYTER=system, where the user's own Jupyter is used).
# Downloads come only from npm, PyPI and Debian.
set -euo pipefail
source "$(dirname "$0")/common.sh"

WITH_TESTS=0
WITH_VENV=1
for arg in "$@"; do
  case "$arg" in
    --tests) WITH_TESTS=1 ;;
    --no-venv) WITH_VENV=0 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) die "unknown option '$arg' (expected --tests or --no-venv)" ;;
  esac
done

check_node() {
  command -v node >/dev/null 2>&1 \
    || die "Node.js not found. gdnlab needs Node.js >= 18 with npm (Debian: apt-get install nodejs npm; or https://nodejs.org)."
  command -v npm >/dev/null 2>&1 || die "npm not found. Install npm alongside Node.js (Debian: apt-get install npm)."
  local major
  major="$(node -p 'process.versions.node.split(".")[0]')"
  [ "$major" -ge 18 ] || die "Node.js $(node --version) is too old: gdnlab needs Node.js >= 18."
}

# npm ci when node_modules is missing or older than package-lock.json. Optional dependencies stay
# in: koffi's native code is the optional package @koromix/koffi-linux-x64.
install_npm_packages() {
  if [ -f node_modules/.package-lock.json ] && ! [ package-lock.json -nt node_modules/.package-lock.json ]; then
    return 0
  fi
  say "installing npm packages (npm ci)"
  # --loglevel: `npm --silent test` exports a silent log level to scripts; npm ci errors must still show.
  npm ci --no-audit --no-fund --loglevel=notice
}

# pip_install_file FILE : installs a requirements file into .venv unless its stamp says it already is.
pip_install_file() {
  local file=$1 stamp
  stamp="$VENV_DIR/.gdnlab-$(printf '%s' "$file" | tr '/' '_').sha256"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(file_hash "$file")" ]; then
    return 0
  fi
  say "installing Python packages from $file into .venv"
  # --no-compile: no .pyc for the ~13,000 modules installed (torch, transformers, Jupyter), which took minutes of CPU
  # beside the libgdn build; Python compiles and caches the ones a run imports, once (`npm test` lets it even
  # where PYTHONDONTWRITEBYTECODE is set: scripts/test.sh).
  "$VENV_PYTHON" -m pip install --disable-pip-version-check --no-input --no-compile -r "$file"
  file_hash "$file" >"$stamp"
}

setup_venv() {
  if [ ! -x "$VENV_PYTHON" ]; then
    local py
    py="$(base_python)"
    "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 9) else 1)' \
      || die "$("$py" --version 2>&1) is too old: gdnlab's Jupyter needs Python >= 3.9 (set GDNLAB_PYTHON)."
    say "creating the project venv .venv with $("$py" --version 2>&1)"
    "$py" -m venv "$VENV_DIR" \
      || die "'$py -m venv' failed. On Debian install the venv module: apt-get install python3-venv"
  fi
  pip_install_file requirements.txt
  if [ "$WITH_TESTS" = 1 ] && [ -f test/fixtures/requirements.txt ]; then
    pip_install_file test/fixtures/requirements.txt
  fi
}

# Debian's packages the tests use, installed only when missing, and only where we may (root):
# - ccache, through which scripts/build.sh compiles, so that the second host build of the same sources (Binder's
#   postBuild in a copy of the tree, test/binder) is read from the cache instead of taking minutes of CPU beside the
#   other suites (docs/MAINTAINING.md, "CI time"). Installed before the build, which must go through it to fill it.
# - chromium for test/browser: installed while libgdn compiles (apt mostly waits on the network and the disk).
apt_updated=0
can_apt() { is_root && command -v apt-get >/dev/null 2>&1; }
apt_install() {
  if [ "$apt_updated" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}
missing_hint() {
  say "$1 is missing: $2. Install it with:"
  say "    sudo apt-get update && sudo apt-get install -y $1"
}

setup_ccache() {
  command -v ccache >/dev/null 2>&1 && return 0
  if can_apt; then
    say "installing Debian's ccache for the tests (apt-get install ccache)"
    apt_install ccache
  else
    missing_hint ccache "the Binder test compiles libgdn a second time"
  fi
}

setup_chromium() {
  [ -x "${GDNLAB_CHROMIUM:-/usr/bin/chromium}" ] && return 0
  if can_apt; then
    say "installing Debian's chromium for the browser test (apt-get install chromium)"
    apt_install chromium
  else
    missing_hint chromium "the browser test will fail (or point GDNLAB_CHROMIUM at a Chromium binary)"
  fi
}

# The gdnlab kernelspec, written into .venv so that `.venv/bin/jupyter kernelspec list` shows it.
install_kernelspec() {
  [ -f dist/kernel/install.js ] || die "dist/kernel/install.js is missing after the build: the kernel installer was not compiled."
  node dist/kernel/install.js --python "$VENV_PYTHON" --sys-prefix >/dev/null
}

# pip and apt run while libgdn compiles (they mostly wait on the network and the disk): beside_build, common.sh.
trap 'rm -f "${beside_logs[@]}"' EXIT

check_node
timed "npm packages" install_npm_packages
if [ "$WITH_VENV" = 1 ]; then beside_build "Python venv" setup_venv "setting up the Python venv failed"; fi
if [ "$WITH_TESTS" = 1 ]; then
  timed "ccache" setup_ccache
  beside_build "chromium" setup_chromium "installing chromium failed"
fi
build_status=0
timed "build" bash scripts/build.sh || build_status=$?
finish_beside_build
[ "$build_status" = 0 ] || die "the build failed (see its output above)"
if [ "$WITH_VENV" = 1 ]; then install_kernelspec; fi
say "setup done"
