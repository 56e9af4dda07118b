"""jupyter_kernel_test's protocol conformance checks, run against the gdnlab kernel.

Run by jupyter-kernel-test.test.ts, which installs the kernelspec into a temporary JUPYTER_PATH
(with GDNLAB_PACKAGE_ROOT pointing at the fixture package) and starts this file with the venv's
Python. Every check of KernelTests that applies to this kernel is configured; test_pager is
skipped because the kernel has no pager payloads (there is no `?` help syntax in TypeScript).
"""

import os
import unittest

import jupyter_kernel_test

KERNEL_CHANNEL = '(globalThis as any)[Symbol.for("gdnlab.kernel")]'


@unittest.skipUnless(
    os.environ.get("GDNLAB_KERNEL_TEST_SANDBOX"),
    "run by test/kernel/jupyter-kernel-test.test.ts, which installs the kernelspec into a temporary JUPYTER_PATH",
)
class GdnlabKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = "gdnlab"
    language_name = "typescript"
    file_extension = ".ts"

    code_hello_world = 'console.log("hello, world")'
    code_stderr = 'console.error("to stderr")'

    completion_samples = [
        {"text": "Math.ab", "matches": {"abs"}},
        {"text": "gdn.ad", "matches": {"add"}},
    ]

    complete_code_samples = ["1", "let x = 1;", "if (x) {\n  f();\n}", "function f(a: number) { return a; }"]
    incomplete_code_samples = ["function f() {", "const a = [1,", "x = 1 +", "`unterminated template"]
    invalid_code_samples = ["}", "let x = 1;\n}", "f())", "'broken\nstring'"]

    code_generate_error = 'throw new Error("boom")'

    code_execute_result = [
        {"code": "6 * 7", "result": "42"},
        {"code": '"text"', "result": "'text'"},
        {"code": "[1, 2]", "result": "[ 1, 2 ]"},
        {"code": "gdn.richValue('r')", "mime": "image/svg+xml"},
    ]

    code_display_data = [
        {"code": 'import * as tslab from "tslab"; tslab.display.html("<b>hi</b>")', "mime": "text/html"},
        {"code": KERNEL_CHANNEL + '.display({"image/svg+xml": "<svg/>", "text/plain": "svg"})', "mime": "image/svg+xml"},
    ]

    code_history_pattern = "6 * 7"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "Math.max"

    code_clear_output = KERNEL_CHANNEL + ".clearOutput()"

    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        # Completion samples use the library: import it once, as a notebook's first cell would.
        msg_id = cls.kc.execute("import * as gdn from 'gdnlab';")
        while True:
            reply = cls.kc.get_shell_msg(timeout=30)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        assert reply["content"]["status"] == "ok", reply["content"]


if __name__ == "__main__":
    unittest.main(verbosity=2)
