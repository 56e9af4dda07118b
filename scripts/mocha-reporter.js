'use strict';
// Mocha reporter for scripts/test.sh: mocha's spec output on the console, and the run's counts
// written as JSON to the file named by GDNLAB_MOCHA_SUMMARY, from which test.sh prints its final
// "N passed, N failed" line. Failures include failed hooks, as mocha counts them.
const fs = require('fs');
const path = require('path');
const Mocha = require('mocha');

const { EVENT_RUN_END, EVENT_TEST_FAIL, EVENT_TEST_END } = Mocha.Runner.constants;

class GdnlabReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failedTitles = [];
    runner.on(EVENT_TEST_FAIL, (test) => failedTitles.push(test.fullTitle()));
    // Seconds spent in each test file's tests (hooks excluded), so that test.sh can name the
    // slowest files: CI's budget is 15 minutes (docs/MAINTAINING.md, "CI time").
    const fileMs = new Map();
    runner.on(EVENT_TEST_END, (test) => {
      const file = test.file ? path.relative(process.cwd(), test.file) : '(unknown)';
      fileMs.set(file, (fileMs.get(file) || 0) + (test.duration || 0));
    });
    runner.once(EVENT_RUN_END, () => {
      const file = process.env.GDNLAB_MOCHA_SUMMARY;
      if (!file) return;
      const summary = {
        passed: this.stats.passes || 0,
        failed: this.stats.failures || 0,
        skipped: this.stats.pending || 0,
        durationMs: this.stats.duration || 0,
        failedTitles,
        slowestFiles: [...fileMs.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 12)
          .map(([file, ms]) => ({ file, seconds: Math.round(ms / 100) / 10 })),
      };
      fs.writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
    });
  }
}

module.exports = GdnlabReporter;
