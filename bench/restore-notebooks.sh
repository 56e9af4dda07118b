#!/usr/bin/env bash
# Takes the executed notebooks of a `notebooks` stage (notebooks-executed.tar.gz, or the folder it
# unpacks to) back into notebooks/ as the committed outputs, after checking each one: it ran
# cleanly (report.json), has no error output, names its backend/device/revision in
# metadata.gdnlab.provenance, and stays under 1 MB.
#   bash bench/restore-notebooks.sh <folder>/notebooks-executed.tar.gz
set -euo pipefail
cd "$(dirname "$0")/.."
src=${1:?usage: restore-notebooks.sh notebooks-executed.tar.gz|DIR}
if [ -f "$src" ]; then dir=$(mktemp -d); tar -C "$dir" -xzf "$src"; else dir=$src; fi
python3 - "$dir" notebooks <<'PY'
import json, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
report = {os.path.basename(r["notebook"]): r for r in json.load(open(os.path.join(src, "report.json")))}
bad = []
for name in sorted(f for f in os.listdir(src) if f.endswith(".ipynb")):
    path = os.path.join(src, name)
    nb = json.load(open(path, encoding="utf-8"))
    r = report.get(name)
    prov = nb.get("metadata", {}).get("gdnlab", {}).get("provenance")
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    why = []
    if not r or not r["ok"]: why.append("did not run cleanly: " + "; ".join((r or {}).get("problems", ["not in report.json"])))
    if errors: why.append(f"{len(errors)} error outputs")
    if not prov: why.append("no metadata.gdnlab.provenance")
    if os.path.getsize(path) >= 1_000_000: why.append(f"{os.path.getsize(path)} bytes (limit 1 MB)")
    if why:
        bad.append(f"{name}: {', '.join(why)}")
        continue
    shutil.copyfile(path, os.path.join(dst, name))
    print(f"restored {name}: {prov['backend']} on {prov['device']}, revision {prov['revision']}, {prov.get('wallS')} s")
if bad:
    print("NOT restored:\n  " + "\n  ".join(bad), file=sys.stderr)
    sys.exit(1)
PY
