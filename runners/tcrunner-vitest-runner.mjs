//! tcrunner's vitest test runner: vitest's own, sending each test's start
//! and result to the main process as soon as they are known.
//!
//! vitest's workers send test updates through a 100 ms throttle, so a result
//! reaches the reporters up to 100 ms after its test ended, and a test that
//! blocks the worker from its start is never known to have started. This
//! runner, set by tcrunner's reporter (tcrunner-vitest.mjs) as the `runner`
//! of each project that has none, sends updates itself, in the order the
//! worker reaches them, as updates that carry no events:
//! - a test's start, before its body runs;
//! - a test that ran, when it ends (after its retries and repeats);
//! - a test skipped or todo, when vitest reaches it;
//! - a test that skipped itself at run time (`ctx.skip()`), at the next test
//!   or at the end of its suite;
//! - at the end of a describe block, the tests under it that were not sent
//!   (kept from running by a failing `beforeAll`, or in a skipped block),
//!   then the block itself.
//! Updates within 5 ms of the last send go together when that has passed,
//! and all are sent when a file ends, as a block starts and as its last
//! test ends (before its hooks, whose console output leaves at once); under
//! tcrunner's `--timeout` a test's start and end are sent at once.
//!
//! The reporter takes such an update as the start or end of what it names.
//! vitest's own updates follow as before, and the reporter, having finished
//! those nodes, ignores them. Every other hook is vitest's. A file's end, and
//! a block's that never ran, still come through vitest's own updates.
//!
//! The runner it extends comes from the vitest that runs it, whose module
//! the reporter names in TCRUNNER_VITEST_RUNNER_BASE: `dist/runners.js`
//! (`VitestTestRunner`, vitest 3 and 4.0) or `dist/index.js` (`TestRunner`,
//! vitest 4.1 and 5).
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { pathToFileURL } from 'node:url';

const base = await import(pathToFileURL(process.env.TCRUNNER_VITEST_RUNNER_BASE).href);
const VitestRunner = base.VitestTestRunner || base.TestRunner;

// Taken before any test file runs, so a test's fake timers cannot stop a send.
const { setTimeout: realSetTimeout, clearTimeout: realClearTimeout } = globalThis;
const clock = performance.now.bind(performance);

/**
 * Updates sent less than this long after the last one wait for it to pass,
 * and go together: one message for many quick tests instead of one each.
 */
const GATHER_MS = 5;

/**
 * Under a per-test time limit (tcrunner's `--timeout`), a test's start
 * leaves before its body runs, and its end as it ends, not gathered: a test
 * that blocks its worker at once would keep its start, and the previous
 * test's end, from leaving, and the limit would be put on the test before
 * it; an `afterAll` that blocks would keep the end of the test before it
 * from leaving, and the limit would be put on that test.
 */
const AT_ONCE = Boolean(process.env.TCRUNNER_TEST_TIMEOUT);

/**
 * A result whose errors travel as `tcrunnerErrors`, which the reporter puts
 * back. vitest's main process parses the stack of every error an update
 * carries, reading the test file again for its source map each time; it
 * does so when its own update brings the same errors, and once is enough.
 */
function unparsed(result) {
  if (!result || !result.errors) return result;
  const { errors, ...rest } = result;
  return { ...rest, tcrunnerErrors: errors };
}

/**
 * The bytes `fs.writeSync(fd, data, ...rest)` writes: a string (`position`,
 * `encoding`), or a part of a buffer (`offset`, `length` or an options
 * object); null for anything else, which is written as it is.
 */
function bytesOf(data, rest) {
  if (typeof data === 'string') return Buffer.from(data, typeof rest[1] === 'string' ? rest[1] : 'utf8');
  if (!ArrayBuffer.isView(data)) return null;
  const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let [offset, length] = rest;
  if (offset && typeof offset === 'object') ({ offset, length } = offset);
  offset = offset ?? 0;
  return view.subarray(offset, offset + (length ?? view.length - offset));
}

export default class TcrunnerVitestRunner extends VitestRunner {
  /** Tests that started running and have not ended. */
  tcrunnerRunning = new Set();

  /** Tasks whose end is sent or waiting to be. */
  tcrunnerEnded = new WeakSet();

  /** Tasks waiting to be sent, by id, in the order they came. */
  tcrunnerQueue = new Map();

  tcrunnerLastSend = -Infinity;

  tcrunnerTimer = null;

  async onBeforeRunFiles(files) {
    await super.onBeforeRunFiles?.(files);
    this.tcrunnerRouteRawWrites();
  }

  /**
   * What a test writes straight to `process.stdout` or `process.stderr`
   * (not through `console`) goes through vitest's console capture while
   * that one test runs alone in this worker, so that it reaches the
   * reporter named by its test, as `console.log` does. Written to the pipe
   * as it is, it would overtake the test's start, which waits up to
   * GATHER_MS to leave, and land in the test before. Not under
   * `--disableConsoleIntercept` (vitest's console is then the real one),
   * nor while several tests run at once (`concurrent`). An empty write
   * (node's `execSync` writes its child's empty stderr) stays raw, where
   * it writes nothing: vitest's capture would show it as `<empty line>`.
   */
  tcrunnerRouteRawWrites() {
    const runner = this;
    for (const name of ['stdout', 'stderr']) {
      const stream = process[name];
      if (!stream || typeof stream.write !== 'function' || stream.tcrunnerRaw) continue;
      const raw = stream.write;
      let inside = false; // the capture writing to the stream itself
      const routed = function write(...args) {
        const empty = args[0] != null && args[0].length === 0;
        const capture = !empty && !inside && runner.tcrunnerCapture(name);
        if (!capture) return raw.apply(this, args);
        inside = true;
        try {
          return capture.write(...args);
        } finally {
          inside = false;
        }
      };
      stream.write = routed;
      stream.tcrunnerRaw = raw;
    }
    // Below `process.stdout` (`fs.writeSync` to 1 or 2, as pino writes), the
    // same: the worker's pipe reaches tcrunner through vitest's main process
    // before the test's start does.
    const writeSync = fs.writeSync;
    if (writeSync.tcrunnerRouted) return;
    fs.writeSync = function writeSyncRouted(fd, data, ...rest) {
      const capture = (fd === 1 || fd === 2) && runner.tcrunnerCapture(fd === 1 ? 'stdout' : 'stderr');
      const bytes = capture && bytesOf(data, rest);
      if (!bytes || !bytes.length) return writeSync.call(this, fd, data, ...rest);
      capture.write(bytes);
      return bytes.length;
    };
    fs.writeSync.tcrunnerRouted = true;
    syncBuiltinESMExports(); // `import { writeSync } from 'node:fs'` too
  }

  /**
   * vitest's console capture of `name` (`stdout` or `stderr`) while one
   * test runs alone in this worker and vitest intercepts the console;
   * null otherwise.
   */
  tcrunnerCapture(name) {
    const capture = this.tcrunnerRunning.size === 1 && globalThis.console && globalThis.console[`_${name}`];
    return capture && capture !== process[name] && typeof capture.write === 'function' ? capture : null;
  }

  async onBeforeRunTask(test) {
    await super.onBeforeRunTask?.(test);
    this.tcrunnerEndSkipped();
    if (test.mode === 'run' || test.mode === 'queued') this.tcrunnerRunning.add(test);
    else this.tcrunnerEnd([test]);
  }

  async onBeforeTryTask(test, options) {
    await super.onBeforeTryTask?.(test, options);
    // The first try's start: from here on the test is running.
    if (options && (options.retry || options.repeats)) return;
    this.tcrunnerSend([test]);
    if (AT_ONCE) this.tcrunnerFlush();
  }

  async onAfterRunTask(test) {
    await super.onAfterRunTask?.(test);
    this.tcrunnerRunning.delete(test);
    this.tcrunnerEnd([test]);
    // The last test of a block goes before its `afterAll` hooks, whose
    // console output leaves the worker at once.
    const siblings = (test.suite && test.suite.tasks) || [];
    if (AT_ONCE || siblings[siblings.length - 1] === test) this.tcrunnerFlush();
  }

  async onBeforeRunSuite(suite) {
    // What came before goes before the block's start and its `beforeAll`
    // hooks' output.
    this.tcrunnerFlush();
    await super.onBeforeRunSuite?.(suite);
  }

  async onAfterRunSuite(suite) {
    await super.onAfterRunSuite?.(suite);
    this.tcrunnerEndSkipped();
    // Tests in the order vitest marked them; the blocks that never ran
    // (skipped, or under a failing beforeAll) end through vitest's updates.
    // A block that ended here ended every test under it.
    const tasks = [];
    const unended = (parent) => {
      for (const task of parent.tasks || []) {
        if (this.tcrunnerEnded.has(task) || this.tcrunnerRunning.has(task)) continue;
        if (task.type === 'suite') unended(task);
        else tasks.push(task);
      }
    };
    unended(suite);
    if (typeof suite.filepath === 'string') {
      // A file ends through vitest's own update; all before it goes now.
      this.tcrunnerEnd(tasks);
      this.tcrunnerFlush();
    } else {
      tasks.push(suite);
      this.tcrunnerEnd(tasks);
    }
  }

  /** Ends the tests that skipped themselves while running. */
  tcrunnerEndSkipped() {
    const skipped = [...this.tcrunnerRunning].filter((t) => t.result && t.result.pending);
    for (const test of skipped) this.tcrunnerRunning.delete(test);
    this.tcrunnerEnd(skipped);
  }

  tcrunnerEnd(tasks) {
    const ended = tasks.filter((task) => !this.tcrunnerEnded.has(task));
    for (const task of ended) this.tcrunnerEnded.add(task);
    this.tcrunnerSend(ended);
  }

  /**
   * Queues tasks, and sends the queue now or, within GATHER_MS of the last
   * send, when that has passed. A task goes with its result as it is then,
   * a test that has not ended as running.
   */
  tcrunnerSend(tasks) {
    for (const task of tasks) if (!this.tcrunnerQueue.has(task.id)) this.tcrunnerQueue.set(task.id, task);
    if (!this.tcrunnerQueue.size || this.tcrunnerTimer) return;
    const wait = this.tcrunnerLastSend + GATHER_MS - clock();
    if (wait <= 0) {
      this.tcrunnerFlush();
      return;
    }
    this.tcrunnerTimer = realSetTimeout(() => this.tcrunnerFlush(), wait);
    if (typeof this.tcrunnerTimer.unref === 'function') this.tcrunnerTimer.unref();
  }

  tcrunnerFlush() {
    if (this.tcrunnerTimer) realClearTimeout(this.tcrunnerTimer);
    this.tcrunnerTimer = null;
    if (!this.tcrunnerQueue.size) return;
    // A test still running goes as running: vitest marks it passed when its
    // body returns, before its `afterEach` hooks run, which may still fail it.
    const packs = [...this.tcrunnerQueue.values()].map((task) => {
      const running = this.tcrunnerRunning.has(task) && !this.tcrunnerEnded.has(task);
      const result = running && task.result ? { ...task.result, state: 'run' } : task.result;
      return [task.id, unparsed(result), task.meta];
    });
    this.tcrunnerQueue.clear();
    this.tcrunnerLastSend = clock();
    // Fire and forget: vitest's own updates, which it awaits, carry the same
    // results if this one is lost.
    const sent = this.onTaskUpdate?.(packs, []);
    if (sent && typeof sent.catch === 'function') sent.catch(() => {});
  }
}
