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

# Two mocha processes ("lanes") share the machine (docs/MAINTAINING.md, "CI time"). Most suites spend much of their
# time in one process or waiting on a child (a kernel, a server, a compiler), which leaves a core idle. The library's
# compute suites (ops, native, model, reference) start their own lane with the run, niced: they start no kernel or
# server, compile no user module and make no timing claim, so they can run beside everything else.
beside_dirs=(ops native model reference)
beside_pattern="^dist/test/($(IFS='|'; echo "${beside_dirs[*]}"))/"
beside_names="$(printf '%s, ' "${beside_dirs[@]}")" beside_names="${beside_names%, }"
# In the main lane, test/cuda-archs and test/binder run last: their compiles (ptxas per architecture; Binder's
# postBuild) start with the run in the background and are awaited there (test/cuda-archs/ptxas.test.ts,
# test/binder/postbuild.test.ts). The shipped notebooks run just before them: two kernels at a time keep both cores
# busy by themselves, while the suites that leave a core idle run earlier, beside those compiles.
mapfile -t all_files < <(find dist/test -name '*.test.js' 2>/dev/null | LC_ALL=C sort)
[ "${#all_files[@]}" -gt 0 ] || die "no compiled tests found under dist/test"
mapfile -t beside_files < <(printf '%s\n' "${all_files[@]}" | grep -E "$beside_pattern" || true)
mapfile -t main_files < <(printf '%s\n' "${all_files[@]}" | grep -Ev "$beside_pattern" | awk '/\/notebooks\/execute\.test\.js$/{first=first $0 "\n"; next} /\/cuda-archs\//{mid=mid $0 "\n"; next} /\/binder\//{last=last $0 "\n"; next} {print} END {printf "%s%s%s", first, mid, last}')

mocha_args=(--reporter "$GDNLAB_ROOT/scripts/mocha-reporter.js" --exit)
# A project .mocharc sets its own defaults; without one, give slow suites room.
if ! ls .mocharc.* >/dev/null 2>&1; then mocha_args+=(--timeout 60000); fi

main_summary="$(mktemp)" beside_summary="$(mktemp)" beside_log="$(mktemp)"
beside_pid=""
trap 'rm -f "$main_summary" "$beside_summary" "$beside_log"; [ -z "$beside_pid" ] || kill "$beside_pid" 2>/dev/null || true' EXIT
say "running ${#all_files[@]} test files with GDN_BACKEND=${GDN_BACKEND:-auto}: ${#main_files[@]} in the main lane, ${#beside_files[@]} beside it ($beside_names; output shown after the main lane's)"

mocha_start=$(date +%s)
set +e
if [ "${#beside_files[@]}" -gt 0 ]; then
  GDNLAB_MOCHA_SUMMARY="$beside_summary" nice -n 5 node_modules/.bin/mocha "${mocha_args[@]}" "$@" "${beside_files[@]}" >"$beside_log" 2>&1 &
  beside_pid=$!
fi
GDNLAB_MOCHA_SUMMARY="$main_summary" node_modules/.bin/mocha "${mocha_args[@]}" "$@" "${main_files[@]}"
main_status=$?
beside_status=0
if [ -n "$beside_pid" ]; then
  wait "$beside_pid"
  beside_status=$?
  beside_pid=""
  printf '\n── the suites run beside the main lane (%s) ──\n' "$beside_names"
  cat "$beside_log"
fi
set -e
mocha_seconds=$(( $(date +%s) - mocha_start ))

# Counts from each lane's summary (scripts/mocha-reporter.js); a lane that exited non-zero without reporting a
# failure (a crash, a load error, an unhandled rejection) counts as one failure.
passed=0 failed=0 skipped=0
# add_lane_counts NAME SUMMARY_FILE EXIT_STATUS
add_lane_counts() {
  local name=$1 file=$2 status=$3 p=0 f=0 s=0
  if [ -s "$file" ]; then
    read -r p f s < <(node -e '
      const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(s.passed, s.failed, s.skipped);' "$file")
  else
    say "the $name lane's mocha exited with status $status before it reported any result"
  fi
  if [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    say "the $name lane's mocha exited with status $status: counted as one failure"
    f=1
  fi
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}
add_lane_counts main "$main_summary" "$main_status"
if [ "${#beside_files[@]}" -gt 0 ]; then add_lane_counts beside "$beside_summary" "$beside_status"; fi

# The slowest test files of both lanes (CI's 15-minute budget), then the counts.
MOCHA_SECONDS="$mocha_seconds" node -e '
  const fs = require("fs");
  const files = process.argv.slice(1).filter((f) => fs.statSync(f).size > 0).flatMap((f) => JSON.parse(fs.readFileSync(f, "utf8")).slowestFiles || []);
  console.log(`mocha took ${process.env.MOCHA_SECONDS} s (both lanes); slowest files (seconds in tests):`);
  for (const f of files.sort((a, b) => b.seconds - a.seconds).slice(0, 12)) console.log(`  ${String(f.seconds).padStart(7)}  ${f.file}`);' \
  "$main_summary" "$beside_summary"

summary_line="$passed passed, $failed failed"
if [ "$skipped" -gt 0 ]; then summary_line="$summary_line, $skipped skipped"; fi
echo "$summary_line"
[ "$failed" -eq 0 ]
