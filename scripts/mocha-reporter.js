'use strict';
// Mocha reporter for scripts/test.sh: mocha's spec output on the console, and the run's counts
// written as JSON to the file named by GDNLAB_MOCHA_SUMMARY, from which test.sh prints its final
// "N passed, N failed" line. Failures include failed hooks, as mocha counts them.
const fs = require('fs');
const Mocha = require('mocha');

const { EVENT_RUN_END, EVENT_TEST_FAIL } = Mocha.Runner.constants;

class GdnlabReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const failedTitles = [];
    runner.on(EVENT_TEST_FAIL, (test) => failedTitles.push(test.fullTitle()));
    runner.once(EVENT_RUN_END, () => {
      const file = process.env.GDNLAB_MOCHA_SUMMARY;
      if (!file) return;
      const summary = {
        passed: this.stats.passes || 0,
        failed: this.stats.failures || 0,
        skipped: this.stats.pending || 0,
        durationMs: this.stats.duration || 0,
        failedTitles,
      };
      fs.writeFileSync(file, JSON.stringify(summary, null, 2) + '\n');
    });
  }
}

module.exports = GdnlabReporter;
