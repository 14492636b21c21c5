//! tcrunner's vitest test runner: vitest's own, sending each result to the
//! main process the moment it is known.
//!
//! vitest's workers send test updates through a 100 ms throttle, so a result
//! reaches the reporters up to 100 ms after its test ended. This runner, set
//! by tcrunner's reporter (tcrunner-vitest.mjs) as the `runner` of each
//! project that has none, sends results itself as they come, in the order
//! the worker reaches them, as updates that carry no events:
//! - a test that ran, when it ends (after its retries and repeats);
//! - a test skipped or todo, when vitest reaches it;
//! - a test that skipped itself at run time (`ctx.skip()`), at the next test
//!   or at the end of its suite;
//! - at the end of a describe block, the tests under it that were not sent
//!   (kept from running by a failing `beforeAll`, or in a skipped block),
//!   then the block itself.
//!
//! The reporter takes such an update as the end of what it names. vitest's
//! own updates follow as before, and the reporter, having finished those
//! nodes, ignores them. Every other hook is vitest's. A file's end, and a
//! block's that never ran, still come through vitest's own updates.
//!
//! The runner it extends comes from the vitest that runs it, whose module
//! the reporter names in TCRUNNER_VITEST_RUNNER_BASE: `dist/runners.js`
//! (`VitestTestRunner`, vitest 3 and 4) or `dist/index.js` (`TestRunner`,
//! vitest 5).
import { pathToFileURL } from 'node:url';

const base = await import(pathToFileURL(process.env.TCRUNNER_VITEST_RUNNER_BASE).href);
const VitestRunner = base.VitestTestRunner || base.TestRunner;

export default class TcrunnerVitestRunner extends VitestRunner {
  /** Tests that started running and have not been sent. */
  tcrunnerRunning = new Set();

  /** Tasks already sent. */
  tcrunnerSent = new WeakSet();

  async onBeforeRunTask(test) {
    await super.onBeforeRunTask?.(test);
    this.tcrunnerSendSkipped();
    if (test.mode === 'run' || test.mode === 'queued') this.tcrunnerRunning.add(test);
    else this.tcrunnerSend([test]);
  }

  async onAfterRunTask(test) {
    await super.onAfterRunTask?.(test);
    this.tcrunnerRunning.delete(test);
    this.tcrunnerSend([test]);
  }

  async onAfterRunSuite(suite) {
    await super.onAfterRunSuite?.(suite);
    this.tcrunnerSendSkipped();
    // Tests in the order vitest marked them; the blocks that never ran
    // (skipped, or under a failing beforeAll) end through vitest's updates.
    const tasks = [];
    const unsent = (parent) => {
      for (const task of parent.tasks || []) {
        if (task.type === 'suite') unsent(task);
        else if (!this.tcrunnerSent.has(task) && !this.tcrunnerRunning.has(task)) tasks.push(task);
      }
    };
    unsent(suite);
    // A file ends through vitest's own update.
    if (typeof suite.filepath !== 'string') tasks.push(suite);
    this.tcrunnerSend(tasks);
  }

  /** Sends the tests that skipped themselves while running. */
  tcrunnerSendSkipped() {
    const skipped = [...this.tcrunnerRunning].filter((t) => t.result && t.result.pending);
    for (const test of skipped) this.tcrunnerRunning.delete(test);
    this.tcrunnerSend(skipped);
  }

  tcrunnerSend(tasks) {
    const packs = [];
    for (const task of tasks) {
      if (this.tcrunnerSent.has(task)) continue;
      this.tcrunnerSent.add(task);
      packs.push([task.id, task.result, task.meta]);
    }
    if (!packs.length) return;
    // Fire and forget: vitest's own updates, which it awaits, carry the same
    // results if this one is lost.
    const sent = this.onTaskUpdate?.(packs, []);
    if (sent && typeof sent.catch === 'function') sent.catch(() => {});
  }
}
