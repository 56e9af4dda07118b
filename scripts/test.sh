#!/usr/bin/env bash
# `npm test`: installs whatever is missing (scripts/setup.sh --tests, which also builds), then runs
# every mocha suite compiled to dist/test/**/*.test.js, inside the project venv. GDN_BACKEND is passed
# through (auto|cuda|host). Extra arguments go to mocha (e.g. `npm test -- --grep conv`).
# The last line printed is "N passed, N failed" (", N skipped" when tests were skipped); the exit
# status is non-zero when anything failed.
set -euo pipefail
source "$(dirname "$0")/common.sh"

setup_start=$(date +%s)
bash scripts/setup.sh --tests
say "setup took $(( $(date +%s) - setup_start )) s"

# Tests run inside the venv: its jupyter and python come first on PATH.
export VIRTUAL_ENV="$VENV_DIR"
export PATH="$VENV_DIR/bin:$PATH"
# The venv's packages are installed without bytecode (scripts/setup.sh, --no-compile). With PYTHONDONTWRITEBYTECODE
# set, as it is on this project's development machines, every Python process of the run (each notebook run and export, the Jupyter
# servers, the torch scripts) would compile what it imports afresh: importing nbclient took 1.3 s instead of 0.6 s
# here, torch and transformers 7.6 s instead of 4.5 s. The run lets Python cache it in the venv, once. The
# Python the tests start from the checkout runs as scripts, which are never cached.
unset PYTHONDONTWRITEBYTECODE

# test/cuda-archs and test/binder run last: their compiles (ptxas per architecture; Binder's postBuild) start with
# the run in the background and are awaited there (test/cuda-archs/ptxas.test.ts, test/binder/postbuild.test.ts;
# docs/MAINTAINING.md, "CI time"). The shipped notebooks run just before them: two kernels at a time keep both
# cores busy by themselves, while the suites that leave a core idle run earlier, beside those compiles.
mapfile -t test_files < <(find dist/test -name '*.test.js' 2>/dev/null | LC_ALL=C sort | awk '/\/notebooks\/execute\.test\.js$/{first=first $0 "\n"; next} /\/cuda-archs\//{mid=mid $0 "\n"; next} /\/binder\//{last=last $0 "\n"; next} {print} END {printf "%s%s%s", first, mid, last}')
[ "${#test_files[@]}" -gt 0 ] || die "no compiled tests found under dist/test"

mocha_args=(--reporter "$GDNLAB_ROOT/scripts/mocha-reporter.js" --exit)
# A project .mocharc sets its own defaults; without one, give slow suites room.
if ! ls .mocharc.* >/dev/null 2>&1; then mocha_args+=(--timeout 60000); fi

summary_file="$(mktemp)"
trap 'rm -f "$summary_file"' EXIT
say "running ${#test_files[@]} test files with GDN_BACKEND=${GDN_BACKEND:-auto}"

set +e
GDNLAB_MOCHA_SUMMARY="$summary_file" node_modules/.bin/mocha "${mocha_args[@]}" "$@" "${test_files[@]}"
mocha_status=$?
set -e

if [ -s "$summary_file" ]; then
  # The slowest test files first (CI's 15-minute budget), then the counts.
  node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const total = (s.durationMs / 1000).toFixed(0);
    console.log(`mocha took ${total} s; slowest files (seconds in tests):`);
    for (const f of s.slowestFiles || []) console.log(`  ${String(f.seconds).padStart(7)}  ${f.file}`);' "$summary_file"
  read -r passed failed skipped < <(node -e '
    const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(s.passed, s.failed, s.skipped);' "$summary_file")
else
  say "mocha exited with status $mocha_status before it reported any result"
  passed=0 failed=0 skipped=0
fi
if [ "$mocha_status" -ne 0 ] && [ "$failed" -eq 0 ]; then
  # mocha failed outside any test (a crash, a load error, an unhandled rejection): count it.
  say "mocha exited with status $mocha_status: counted as one failure"
  failed=1
fi

summary_line="$passed passed, $failed failed"
if [ "$skipped" -gt 0 ]; then summary_line="$summary_line, $skipped skipped"; fi
echo "$summary_line"
[ "$failed" -eq 0 ]
