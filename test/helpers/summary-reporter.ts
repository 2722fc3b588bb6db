// Prints one plain closing line, "N passed, N failed[, N skipped]", that any CI can read.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const n = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      let failedHere = 0;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') n.passed++;
        else if (state === 'failed') (n.failed++, failedHere++);
        else n.skipped++;
      }
      // A file that failed outside its tests (a set-up hook, an import) counts as a failure too:
      // its tests show as skipped, and "0 failed" would be a lie.
      if (m.state() === 'failed' && failedHere === 0) n.failed++;
    }
    process.stdout.write(`\n${n.passed} passed, ${n.failed} failed${n.skipped ? `, ${n.skipped} skipped` : ''}\n`);
  }
}
