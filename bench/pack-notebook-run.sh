#!/usr/bin/env bash
# Builds the bundle that lets `bash bench/gpu-session.sh notebooks` run every notebook through the
# real gdnlab kernel on a GPU machine that has Python (3.12, with torch) but no Node.js and no
# Jupyter. Output: .device/nbrun/ (ignored through .git/info/exclude):
#   node.xz                 this machine's node binary, xz-compressed
#   node_modules.tar.xz     only the node_modules files a traced local run of every notebook
#                           (kernel included) loaded or looked at (bench/trace-loads.js)
#   wheels/*.whl            nbclient, nbformat, jupyter_client and their dependencies for CPython
#                           $PYVER on manylinux x86_64 (installed there with pip --no-index --target)
#   fonts/                  Liberation Sans (the PNG figures' text; a bare machine may have no fonts)
#   libgdn.so               build/cuda/libgdn.so when it exists (the CUDA build; it has the host backend too)
#   REVISION                git revision of this checkout (GDN_REVISION there: the tree travels without .git)
#   trace.txt               the traced file list, for the record
# Then it prints the sizes; what travels (.device/nbrun + dist) should stay small: a remote runner may cap it
# (64 MiB, say). Usage (project root, after `bash scripts/build.sh`):
#   bash bench/pack-notebook-run.sh            # traces by running every notebook on the host backend
#   PYVER=3.11 DEST=/tmp/x bash bench/pack-notebook-run.sh   # a bundle for this machine's python (local test)
#   TRACE=existing-trace.txt bash bench/pack-notebook-run.sh  # reuse a trace
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
DEST=${DEST:-$root/.device/nbrun}
PYVER=${PYVER:-3.12}
say() { echo "[pack-notebook-run] $*" >&2; }
[ -f dist/kernel/main.js ] || { echo "dist/ is missing: run bash scripts/build.sh first" >&2; exit 2; }
nm=$(readlink -f node_modules)
[ -d "$nm" ] || { echo "node_modules is missing" >&2; exit 2; }
if [ "$DEST" = "$root/.device/nbrun" ]; then
  grep -qx '/.device/' "$(git rev-parse --git-common-dir)/info/exclude" 2>/dev/null || echo '/.device/' >> "$(git rev-parse --git-common-dir)/info/exclude"
fi
mkdir -p "$DEST"

# 1. node
if [ ! -s "$DEST/node.xz" ] || [ "$(readlink -f "$(command -v node)")" -nt "$DEST/node.xz" ]; then
  say "compressing node $(node --version)"
  xz -T0 -6 -c "$(readlink -f "$(command -v node)")" > "$DEST/node.xz"
fi

# 2. the trace: every notebook through the kernel (copies, never in place), plus the CLI itself
trace=${TRACE:-}
if [ -z "$trace" ]; then
  work=$(mktemp -d /tmp/gdnlab-pack-XXXXXX)
  trace=$work/trace.txt
  say "tracing a host-backend run of every notebook (a few minutes)"
  GDNLAB_TRACE_FILE=$trace NODE_OPTIONS="--require $root/bench/trace-loads.js" GDN_BACKEND=host \
    node bin/gdnlab.js notebooks run --backend host --out "$work/executed" >&2 \
    || { echo "the traced notebook run failed (see above); the bundle was not made" >&2; exit 1; }
fi
# Files only (a traced folder is a listing, not a need), relative to node_modules, each package's
# package.json added (Node's resolver reads those through internal calls no fs hook sees).
python3 - "$trace" "$nm" > "$DEST/trace.txt" <<'PY'
import os, sys
trace, nm = sys.argv[1], os.path.realpath(sys.argv[2])
keep = set()
for line in open(trace, encoding="utf-8"):
    p = os.path.realpath(line.strip())
    if not p.startswith(nm + os.sep) or not os.path.isfile(p):
        continue
    rel = os.path.relpath(p, nm)
    keep.add(rel)
    parts = rel.split(os.sep)
    # every package.json between node_modules and the file (scoped and nested packages too)
    for i in range(1, len(parts)):
        pj = os.path.join(*parts[:i], "package.json")
        if os.path.isfile(os.path.join(nm, pj)):
            keep.add(pj)
for rel in sorted(keep):
    print(rel)
PY
say "$(wc -l < "$DEST/trace.txt") node_modules files in the trace"
tar -C "$nm" --no-recursion -cf - -T "$DEST/trace.txt" | xz -T0 -9 > "$DEST/node_modules.tar.xz"

# 3. wheels
rm -rf "$DEST/wheels"
python3 -m pip download -q --only-binary=:all: --python-version "$PYVER" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$DEST/wheels" nbclient nbformat jupyter_client
echo "$PYVER" > "$DEST/PYTHON_VERSION"

# 4. fonts, library, revision
mkdir -p "$DEST/fonts"
for f in LiberationSans-Regular.ttf LiberationSans-Bold.ttf; do
  src=$(find /usr/share/fonts -name "$f" 2>/dev/null | head -1)
  [ -n "$src" ] && cp "$src" "$DEST/fonts/" || say "warning: $f not found; PNG text falls back to the GPU machine's fonts"
done
if [ -f build/cuda/libgdn.so ]; then cp build/cuda/libgdn.so "$DEST/libgdn.so"; else rm -f "$DEST/libgdn.so"; say "no build/cuda/libgdn.so here: the stage will need build/ (or nvcc there)"; fi
rev=$(git rev-parse --short=12 HEAD)
[ -z "$(git status --porcelain --untracked-files=no)" ] || rev="$rev-dirty"
echo "$rev" > "$DEST/REVISION"
[ -n "${work:-}" ] && rm -rf "$work"

du -sh "$DEST"/* | sed 's/^/  /' >&2
total=$(du -cb "$DEST" dist | tail -1 | cut -f1)
say "bundle + dist: $((total / 1024 / 1024)) MiB (limit 64 MiB for everything that travels)"
[ "$total" -lt $((60 * 1024 * 1024)) ] || { echo "too big to travel" >&2; exit 1; }
