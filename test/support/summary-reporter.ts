import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends the run with one plain `Tests: N passed, N failed, N skipped` line that any CI can read, and before
 * it names every test file that did not finish (its worker died, or it never started) with the tests it left
 * unrun: those are not skipped, and a crashed worker otherwise shows only as an unhandled error.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    let unrun = 0;
    const unfinished: string[] = [];
    for (const module of testModules) {
      let moduleUnrun = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else if (state === 'skipped') skipped++;
        else moduleUnrun++;
      }
      unrun += moduleUnrun;
      const state = module.state();
      if (moduleUnrun > 0 || state === 'pending' || state === 'queued') {
        const project = module.project.name ? `[${module.project.name}] ` : '';
        unfinished.push(`  ${project}${module.relativeModuleId}: ${state}, ${moduleUnrun} test(s) not run`);
      }
    }
    if (unfinished.length > 0) {
      process.stdout.write(`\nTest files that did not finish:\n${unfinished.join('\n')}\n`);
    }
    const notRun = unrun > 0 ? `, ${unrun} not run` : '';
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed, ${skipped} skipped${notRun}\n`);
  }
}
