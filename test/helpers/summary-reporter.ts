// Prints one plain closing line, "N passed, N failed[, N skipped]", that any CI can read.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const n = { passed: 0, failed: 0, skipped: 0 };
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') n.passed++;
        else if (state === 'failed') n.failed++;
        else n.skipped++;
      }
      if (m.state() === 'failed' && [...m.children.allTests()].length === 0) n.failed++;
    }
    process.stdout.write(`\n${n.passed} passed, ${n.failed} failed${n.skipped ? `, ${n.skipped} skipped` : ''}\n`);
  }
}
