"""Notebook execution and HTML export for gdnlab (driven by lib/notebooks/run.ts and export.ts).

    python nbtool.py execute --input IN --output OUT --cwd DIR --kernel NAME --timeout S --report FILE
    python nbtool.py html IN OUT [IN OUT ...]

`execute` clears every output, runs the cells in order through the named kernel with DIR as the
kernel's working directory, stops at the first cell that raises, saves the notebook (outputs so
far) to OUT, and writes a JSON report to FILE. Exit status: 0 when it ran to the end, 1 otherwise.
`html` converts notebooks with nbconvert's `lab` template.
"""

import argparse
import json
import sys
import time
import traceback


def _load_nbformat():
    try:
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, DeadKernelError
    except ImportError as exc:
        sys.stderr.write(
            f"nbtool: {exc}. This python ({sys.executable}) lacks nbclient/nbformat: "
            "run `bash scripts/setup.sh`, which installs them into .venv.\n"
        )
        sys.exit(2)
    return nbformat, NotebookClient, CellExecutionError, DeadKernelError


def clear_outputs(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None


def execute(args):
    nbformat, NotebookClient, CellExecutionError, DeadKernelError = _load_nbformat()
    nb = nbformat.read(args.input, as_version=4)
    clear_outputs(nb)
    failed_cells = []

    def on_cell_error(cell, cell_index, execute_reply):
        content = execute_reply.get("content", {})
        failed_cells.append(
            {"cell": cell_index, "ename": content.get("ename", ""), "evalue": content.get("evalue", "")}
        )

    client = NotebookClient(
        nb,
        timeout=args.timeout,
        startup_timeout=args.startup_timeout,
        kernel_name=args.kernel,
        allow_errors=False,
        record_timing=False,
        resources={"metadata": {"path": args.cwd}},
        on_cell_error=on_cell_error,
    )
    report = {"completed": False, "failure": None, "kernel": args.kernel}
    started = time.monotonic()
    try:
        client.execute()
        report["completed"] = True
    except CellExecutionError as exc:
        # The error output, where the kernel sent one, is in the notebook; the reply names the cell.
        if failed_cells:
            f = failed_cells[0]
            what = f"{f['ename']}: {f['evalue']}" if f["ename"] else "the kernel replied with status error"
            report["failure"] = f"cell {f['cell']} failed: {what}"
        else:
            report["failure"] = f"a cell failed: {exc}"
    except DeadKernelError as exc:
        report["failure"] = f"the kernel died: {exc}"
    except TimeoutError as exc:
        report["failure"] = f"timed out after {args.timeout} s per cell: {exc}"
    except Exception as exc:  # kernel not found, failed start, protocol errors: all reported, none hidden
        report["failure"] = f"{type(exc).__name__}: {exc}"
        report["traceback"] = traceback.format_exc()
    report["durationS"] = time.monotonic() - started
    nbformat.write(nb, args.output)
    with open(args.report, "w", encoding="utf-8") as f:
        json.dump(report, f)
    return 0 if report["completed"] else 1


def html(args):
    nbformat = _load_nbformat()[0]
    try:
        from nbconvert import HTMLExporter
    except ImportError as exc:
        sys.stderr.write(f"nbtool: {exc}. This python ({sys.executable}) lacks nbconvert: run `bash scripts/setup.sh`.\n")
        return 2

    if len(args.paths) % 2 != 0:
        sys.stderr.write("nbtool html: expected pairs of IN OUT paths\n")
        return 2
    exporter = HTMLExporter(template_name="lab")
    for src, dst in zip(args.paths[0::2], args.paths[1::2]):
        nb = nbformat.read(src, as_version=4)
        body, _ = exporter.from_notebook_node(nb)
        with open(dst, "w", encoding="utf-8") as f:
            f.write(body)
    return 0


def main():
    parser = argparse.ArgumentParser(prog="nbtool")
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("execute")
    ex.add_argument("--input", required=True)
    ex.add_argument("--output", required=True)
    ex.add_argument("--cwd", required=True)
    ex.add_argument("--kernel", required=True)
    ex.add_argument("--timeout", type=int, required=True)
    ex.add_argument("--startup-timeout", type=int, default=120)
    ex.add_argument("--report", required=True)
    ht = sub.add_parser("html")
    ht.add_argument("paths", nargs="+")
    args = parser.parse_args()
    return execute(args) if args.command == "execute" else html(args)


if __name__ == "__main__":
    sys.exit(main())
