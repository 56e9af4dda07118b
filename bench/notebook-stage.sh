#!/usr/bin/env bash
# Runs every notebook through the real gdnlab kernel from the bundle of bench/pack-notebook-run.sh,
# on a machine with python3 but no Node.js and no Jupyter (the `notebooks` stage of
# bench/gpu-session.sh; runnable anywhere for a local test):
#   bash bench/notebook-stage.sh OUTDIR        (GDN_BACKEND=cuda|host, default cuda)
# A notebook that compiles user arms (05-write-an-arm) needs the user-arm worker and compile recipe
# (gdn_user_worker, gdn_user_build.json) beside the library, made by that machine's CMake: build libgdn
# there (cmake -S cuda -B /tmp/gdn-build -DGDN_CUDA=ON ...; --target gdn gdn_user_worker) and set
# GDN_LIBRARY=/tmp/gdn-build/libgdn.so; the bundle's libgdn.so alone serves the other notebooks.
# Writes OUTDIR/notebooks-executed.tar.gz (the executed notebooks, report.json) and prints one line
# per notebook with its wall time. Each notebook's first output and metadata.gdnlab.provenance name
# the backend, device and revision (gdn.showRunInfo(), copied by `gdnlab notebooks run`).
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${1:?usage: notebook-stage.sh OUTDIR}
mkdir -p "$out"
B=${GDNLAB_NB_BUNDLE:-$root/.device/nbrun}
[ -f "$B/node.xz" ] || { echo "no bundle at $B: run bash bench/pack-notebook-run.sh first" >&2; exit 2; }
tmp=${GDNLAB_NB_TMP:-/tmp/gdnlab-nbstage}
mkdir -p "$tmp/bin"
[ -x "$tmp/bin/node" ] || { xz -dc "$B/node.xz" > "$tmp/bin/node" && chmod +x "$tmp/bin/node"; } || exit 2
export PATH="$tmp/bin:$PATH"
# node_modules: the traced files only (this tree travels without node_modules).
if [ ! -e node_modules ]; then
  mkdir node_modules && xz -dc "$B/node_modules.tar.xz" | tar -C node_modules -xf - || exit 2
fi
PY=${GDNLAB_STAGE_PYTHON:-python3}
if [ ! -d "$tmp/site/nbclient" ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$tmp/site" "$B"/wheels/*.whl || exit 2
fi
export PYTHONPATH="$tmp/site${PYTHONPATH:+:$PYTHONPATH}" GDNLAB_NOTEBOOK_PYTHON="$PY"
# The kernelspec, written directly (no `jupyter kernelspec install` needed): this node, this dist/.
export JUPYTER_PATH="$tmp/jupyter" JUPYTER_RUNTIME_DIR="$tmp/runtime" JUPYTER_CONFIG_DIR="$tmp/config"
node -e '
const fs = require("fs"), path = require("path");
const { kernelSpec } = require("./dist/kernel/kernelspec");
const { ensureNodePathLink, packageRoot } = require("./dist/kernel/package-resolution");
const dir = path.join(process.env.JUPYTER_PATH, "kernels", "gdnlab");
fs.mkdirSync(dir, { recursive: true });
const spec = kernelSpec({ node: process.execPath, mainJs: path.resolve("dist/kernel/main.js"), nodePathDir: ensureNodePathLink(packageRoot()) });
fs.writeFileSync(path.join(dir, "kernel.json"), JSON.stringify(spec, null, 2));
' || exit 2
export GDN_BACKEND=${GDN_BACKEND:-cuda}
if [ -z "${GDN_LIBRARY:-}" ] || [ ! -f "$GDN_LIBRARY" ]; then
  if [ -f "$B/libgdn.so" ]; then export GDN_LIBRARY="$B/libgdn.so"; elif [ -f build/cuda/libgdn.so ]; then export GDN_LIBRARY=$PWD/build/cuda/libgdn.so; fi
fi
export GDN_REVISION=${GDN_REVISION:-$(cat "$B/REVISION" 2>/dev/null || echo unknown)}
export GDNLAB_FONT_DIR="$B/fonts"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm --format=csv
echo "node $(node --version), python $("$PY" --version 2>&1), GDN_BACKEND=$GDN_BACKEND, GDN_LIBRARY=${GDN_LIBRARY:-default}, revision $GDN_REVISION"
exe="$tmp/executed"
rm -rf "$exe" && mkdir -p "$exe"
# GDNLAB_NOTEBOOKS="notebooks/05-write-an-arm.ipynb ...": only these (default: every notebooks/*.ipynb).
# shellcheck disable=SC2086
node bin/gdnlab.js notebooks run ${GDNLAB_NOTEBOOKS:-} --backend "$GDN_BACKEND" --timeout "${GDNLAB_CELL_TIMEOUT:-300}" --out "$exe" --json > "$exe/report.json"
rc=$?
node -e '
const r = require(process.argv[1]);
for (const x of r) console.log(`${x.ok ? "ok    " : "FAILED"} ${require("path").basename(x.notebook).padEnd(34)} ${x.durationS.toFixed(1).padStart(6)} s  ${String(x.sizeBytes).padStart(8)} bytes  ${x.provenance ? `${x.provenance.backend} on ${x.provenance.device}, revision ${x.provenance.revision}` : "NO PROVENANCE"}${x.ok ? "" : "\n         " + x.problems.join("\n         ")}`);
' "$exe/report.json" || rc=1
tar -C "$exe" -czf "$out/notebooks-executed.tar.gz" .
echo "executed notebooks: $out/notebooks-executed.tar.gz"
exit $rc
