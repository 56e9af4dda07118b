#!/usr/bin/env bash
# `npm run mutate`: mutation testing, on demand (not in CI; docs/TESTING.md records the score).
#   1. StrykerJS (mocha runner) over the files of lib/ and kernel/ that hold the exactness,
#      validation and statistics claims (stryker.config.json): report in build/mutation/.
#   2. scripts/planted.js: the planted defects of scripts/planted-edits.json (cuda/ and lib/), one
#      at a time in a scratch copy, rebuilt, each against the suites that must catch it.
#
#   bash scripts/mutate.sh [--stryker-only | --planted-only] [extra arguments for the chosen step]
# Exit status non-zero when a planted defect survives or Stryker fails to run.
set -euo pipefail
source "$(dirname "$0")/common.sh"

step=all
case "${1:-}" in
  --stryker-only) step=stryker; shift ;;
  --planted-only) step=planted; shift ;;
esac

# The host libgdn and dist/: the tests load the library by absolute path (the Stryker sandbox
# does not copy build/), so GDN_LIBRARY pins the host build even where build/cuda exists.
GDNLAB_CUDA=off bash scripts/build.sh
export GDN_LIBRARY="$GDNLAB_ROOT/build/host/libgdn.so"
export GDN_BACKEND=host GDN_TEST_BACKENDS=host
# Tests whose loops run far slower under instrumentation read it to lift their own mocha timeout.
export GDNLAB_MUTATION=1
mkdir -p build/mutation

status=0
if [ "$step" != planted ]; then
  say "StrykerJS: $(node -e 'console.log(require("./stryker.config.json").mutate.length)') files (stryker.config.json); report: build/mutation/stryker.html"
  start=$(date +%s)
  nice node_modules/.bin/stryker run stryker.config.json "$@" || status=$?
  say "StrykerJS took $(( $(date +%s) - start )) s"
fi
if [ "$step" != stryker ]; then
  say "planted defects (scripts/planted-edits.json)"
  start=$(date +%s)
  nice node scripts/planted.js "$@" || status=$?
  say "planted defects took $(( $(date +%s) - start )) s"
fi
exit "$status"
