#!/usr/bin/env bash
# `npm start`: installs whatever is missing, then runs JupyterLab with the gdnlab kernel on notebooks/.
# Extra arguments go to JupyterLab: `npm start -- --no-browser --ip=0.0.0.0 --port=8888`.
#
#   GDNLAB_JUPYTER=venv (default)  the project venv's JupyterLab (.venv, installed by setup.sh)
#   GDNLAB_JUPYTER=system          the user's own `jupyter` on PATH; the gdnlab kernelspec is
#                                  installed for the current user (--user) next to it
set -euo pipefail
source "$(dirname "$0")/common.sh"

# The python that runs a `jupyter` launcher: the interpreter in its #! line, else python3.
jupyter_python() {
  local words=()
  read -r -a words < <(head -n 1 "$1" | sed -n 's/^#! *//p')
  local py="${words[0]:-}"
  if [ "$(basename "${py:-x}")" = env ]; then py="$(command -v "${words[1]:-python3}" || true)"; fi
  if [ -z "$py" ] || [ ! -x "$py" ]; then py="$(command -v python3)"; fi
  printf '%s\n' "$py"
}

mode="${GDNLAB_JUPYTER:-venv}"
# New notebooks default to the gdnlab kernel.
lab_args=(lab --notebook-dir="$GDNLAB_ROOT/notebooks" --MultiKernelManager.default_kernel_name=gdnlab)
if is_root; then lab_args+=(--allow-root); fi

case "$mode" in
  venv)
    bash scripts/setup.sh
    jupyter="$VENV_DIR/bin/jupyter"
    ;;
  system)
    jupyter="$(command -v jupyter || true)"
    [ -n "$jupyter" ] || die "GDNLAB_JUPYTER=system but no 'jupyter' on PATH. Install JupyterLab (pip install jupyterlab) or leave GDNLAB_JUPYTER unset to use the project venv."
    "$jupyter" lab --version >/dev/null 2>&1 || die "'$jupyter lab' does not run: install JupyterLab next to it (pip install jupyterlab)."
    bash scripts/setup.sh --no-venv
    python="$(jupyter_python "$jupyter")"
    say "installing the gdnlab kernelspec for the current user ($python)"
    node dist/kernel/install.js --python "$python" --user >/dev/null
    ;;
  *) die "GDNLAB_JUPYTER must be venv or system (got '$mode')" ;;
esac

say "starting JupyterLab on notebooks/ ($jupyter)"
exec "$jupyter" "${lab_args[@]}" "$@"
