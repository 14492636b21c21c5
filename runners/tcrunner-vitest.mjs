//! tcrunner's vitest reporter: streams every test event to tcrunner's side channel.
//!
//! Loaded by absolute path (`--reporter=/abs/tcrunner-vitest.mjs`), checked
//! against vitest 3.2, 4.1 and 5.1; it uses only the lifecycle API that vitest
//! 3 introduced (v4 removed the older hooks). It writes JSON lines
//! (docs/event-protocol.md, src/event.rs) to the fd in TCRUNNER_EVENT_FD, or
//! appends them to the file in TCRUNNER_EVENT_FILE; with neither set it does
//! nothing. It never prints.
//!
//! Vitest shapes read: `TestModule` (`moduleId`, `children`, `errors()`,
//! `project.name`), `TestSuite` (`name`, `location`, `errors()`), `TestCase`
//! (`name`, `location`, `options.mode`, `result()` with `state`, `errors`,
//! `note`, `diagnostic().duration`), `TestError` (`name`, `message`, `stack`,
//! `diff`, `expected`, `actual`, `cause`), console logs by `taskId`, and
//! `vitest.config.testNamePattern`.
//!
//! Lines come from vitest's `location` when the project turns on
//! `includeTaskLocation`, else from a scan of the file for titles that occur
//! once (`scanLines` in tcrunner-common.cjs).
//!
//! Node ids: a file is its absolute path (`[project, path]` in a named
//! project); a describe is the JSON array `[file, ...titles]`; a test is
//! `[file, ...titles, title, n]`, where n numbers tests with the same titles.
//! A module's whole tree is declared when it is collected, so console output
//! (buffered by taskId, sent before the test's `finished`) always has a node.
//! Tests that a failing beforeAll kept from running arrive as skipped; they
//! wait for their suite to report and become errors carrying the hook's
//! error. Pseudo-tests (`n` < 0): `afterAll hook` for a suite's or module's
//! errors that no test carries (`No test found` for vitest's error on a
//! block or file without tests), one named after the error (`Error`,
//! `SyntaxError`) per load error of a module, and a top-level
//! `Unhandled error` per error vitest reports outside any test.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { inspect } from 'node:util';
import common from './tcrunner-common.cjs';
import fileOrder from './tcrunner-file-order.cjs';

const { openSink, stripAnsi, escapePart, scanLines, tagsOf } = common;

const STACK_FRAME = /^\s+at\s/;
// Frames of vitest's own machinery, which vitest's reporters hide as well.
const INTERNAL_FRAME = /[\\/]node_modules[\\/](?:vitest|@vitest|vite|vite-node|tinypool|tinyspy|chai)[\\/]|\(node:|^\s+at node:|^\s+at new Promise \(<anonymous>\)$/;

/** The first paragraph: what a one-line failure reason should show. */
const firstParagraph = (text) => stripAnsi(text).trim().split(/\n\s*\n/)[0].trim();

/** Floors a duration in ms to an integer, 0 when absent. */
const wholeMs = (ms) => (typeof ms === 'number' && ms > 0 ? Math.floor(ms) : 0);

// vitest's own checks of the assertion count, and of a `test.fails` test
// that passed, throw a plain Error.
const VITEST_CHECK = /^expected (number of assertions to be \d+|any number of assertion), but got |^Expect test to fail$/;

// A snapshot matcher's failure, a plain Error with `actual` and `expected`.
const SNAPSHOT_MISMATCH = /^Snapshot `[^]*` mismatched$/;

/** An assertion (`failed`) rather than some other error (`error`). A custom
 * matcher's failure (`expect.extend`, jest-dom's) is a plain-named Error;
 * vitest's copy keeps its class as `constructor: 'Function<JestExtendError>'`
 * (vitest 3 also gave it `expected`/`actual`, vitest 4 and 5 only when the
 * matcher returns them). */
const isAssertion = (err) =>
  !!err && (/AssertionError/.test(err.name || '')
    || err.constructor === 'Function<JestExtendError>'
    || (typeof err.expected === 'string' && typeof err.actual === 'string')
    || VITEST_CHECK.test(err.message || '')
    || SNAPSHOT_MISMATCH.test(err.message || ''));

/**
 * A snapshot that was never stored (`--ci`, or CI=true, writes no new ones):
 * there is nothing to compare against. vitest 4 and 5 leave `expected`
 * undefined; vitest 3 sends it as the text `undefined`, with no diff, where a
 * stored snapshot of `undefined` that differs has one.
 */
const isUnwrittenSnapshot = (err) =>
  SNAPSHOT_MISMATCH.test(err.message || '')
  && (err.expected === undefined || (err.expected === 'undefined' && !err.diff));

/**
 * What a thrown value that is not an error (`throw {code: 42}`) shows: vitest
 * keeps its fields (adding `stacks`, and `VITEST_TEST_NAME`/`_PATH` to an
 * unhandled one) but it has no name or message.
 */
function thrownValue(err) {
  if (!err || typeof err !== 'object' || err.name !== undefined || err.message !== undefined) return undefined;
  const { stacks, ...fields } = err;
  for (const key of Object.keys(fields)) if (key.startsWith('VITEST_')) delete fields[key];
  return inspect(fields, { depth: 5 });
}

/**
 * `TypeError: boom`; a value thrown that is no error (`throw 'text'`,
 * `throw null`), which vitest hands on with a message and no name, is its
 * message alone, as vitest's JSON report gives it.
 */
const headline = (name, message) => (name ? `${name}: ${message}` : message).trim();

/** A stack frame line for one of vitest's parsed `stacks` entries. */
const stackFrame = ({ file, line, column, method }) => {
  const place = `${file}:${line}:${column}`;
  return method ? `    at ${method} (${place})` : `    at ${place}`;
};

/** Full text of one error: headline, diff, user stack frames, causes. */
function errorText(err, depth = 0) {
  if (!err || typeof err !== 'object') return String(err);
  const value = thrownValue(err);
  if (value !== undefined) return value;
  const head = headline(err.name, stripAnsi(err.message || ''));
  let frames = stripAnsi(err.stack || '')
    .split('\n')
    .filter((l) => STACK_FRAME.test(l) && !INTERNAL_FRAME.test(l))
    .join('\n');
  // A type check error (`--typecheck`) has no stack, only vitest's parsed
  // `stacks`: its place in the source.
  if (!frames && Array.isArray(err.stacks)) frames = err.stacks.filter((f) => f && f.file).map(stackFrame).join('\n');
  const parts = [head];
  if (err.diff) parts.push(stripAnsi(err.diff));
  if (frames) parts.push(frames);
  let text = parts.join('\n\n');
  if (err.cause && depth < 5) text += `\n\nCaused by: ${errorText(err.cause, depth + 1)}`;
  return text;
}

/** What a list of errors says: outcome, message, details, expected/actual. */
function describeErrors(errors, retried = false) {
  // A test run again (`retry`) has its attempts' errors in order, and its
  // verdict is the last attempt's.
  const lead = (retried ? errors[errors.length - 1] : errors[0]) || {};
  const assertion = isAssertion(lead);
  const value = thrownValue(lead);
  const message = assertion
    ? firstParagraph(lead.message || '')
    : firstParagraph(value !== undefined ? value : headline(lead.name, lead.message || ''));
  const failure = {
    outcome: assertion ? 'failed' : 'error',
    message: message || 'Failure cause not provided',
    details: errors.map((e) => errorText(e)).join('\n\n'),
  };
  // The values the message's error compared: not another error's
  // (`expect.soft` gathers several), which would show a diff the message
  // does not speak of.
  const compared = typeof lead.expected === 'string' && typeof lead.actual === 'string' && !isUnwrittenSnapshot(lead) ? lead : null;
  if (compared && compared.expected !== compared.actual) {
    failure.expected = compared.expected;
    failure.actual = compared.actual;
  }
  return failure;
}

/**
 * vitest's own text (its errors on stderr, a failing globalSetup's code
 * frame) is printed plain: vitest 4 and 5 colour it even into a pipe. Done
 * here, in vitest's main process, to the copy of tinyrainbow vitest prints
 * with (vitest 5 bundles its own), rather than through colour variables
 * every test would see; tests run in workers with their own copies.
 */
async function plainVitest() {
  const script = process.argv[1] || '';
  if (path.basename(script) !== 'vitest.mjs') return;
  const files = [];
  try {
    const chunks = path.join(path.dirname(fs.realpathSync(script)), 'dist', 'chunks');
    for (const name of fs.readdirSync(chunks)) if (/^tinyrainbow\.[\w-]+\.js$/.test(name)) files.push(path.join(chunks, name));
  } catch {
    // No bundled copy.
  }
  try {
    files.push(createRequire(fs.realpathSync(script)).resolve('tinyrainbow'));
  } catch {
    // No copy of its own either.
  }
  const plain = (text) => String(text);
  for (const file of files) {
    try {
      const module = await import(pathToFileURL(file).href);
      for (const colours of Object.values(module)) {
        if (!colours || typeof colours !== 'object' || typeof colours.isColorSupported !== 'boolean') continue;
        for (const key of Object.keys(colours)) if (typeof colours[key] === 'function') colours[key] = plain;
        colours.isColorSupported = false;
      }
    } catch {
      // A copy that does not load stays as it is.
    }
  }
}

if (process.env.TCRUNNER_EVENT_FD || process.env.TCRUNNER_EVENT_FILE) await plainVitest();

export default class TcrunnerVitestReporter {
  constructor() {
    this.sink = openSink();
    this.nodes = new Map(); // vitest task id -> {id, kind, fileId, done, logs}
    this.victims = new Map(); // vitest test id -> TestCase whose verdict waits for its suites' errors
    this.blamed = new Set(); // keys of hook errors already reported on the tests they hit
    this.pendingLogs = new Map(); // vitest task id -> logs that came before the node
    this.counters = new Map(); // title-path key -> tests numbered so far
    this.scans = new Map(); // file -> scanLines(file), while its module runs
    this.root = process.cwd();
    this.nameFilter = null;
    this.separator = ' ';
    this.interrupted = false; // vitest cancelled the run (onTestRunEnd)
  }

  onInit(vitest) {
    if (!this.sink) return;
    this.vitest = vitest;
    const config = (vitest && vitest.config) || {};
    this.root = config.root || this.root;
    const version = (vitest && vitest.version) || vitestVersion(this.root);
    useOurRunner(vitest, version);
    keepExactPaths(vitest);
    orderFiles(vitest);
    // vitest 5 matches -t against names joined by ' > ', older ones by ' '.
    this.separator = Number.parseInt(version, 10) >= 5 ? ' > ' : ' ';
    // Tests a name pattern deselects come back skipped, like real skips:
    // they were not asked for, so they are left out, whoever set the pattern
    // (a target, `-t`, the config file).
    const pattern = config.testNamePattern;
    if (pattern) {
      try {
        this.nameFilter = pattern instanceof RegExp ? pattern : new RegExp(pattern);
      } catch {
        this.nameFilter = null;
      }
    }
    this.sink.send({ ev: 'hello', runner: 'vitest', version });
    this.sendHeldOutputOnStop();
  }

  /**
   * A test's console output waits for its result, which never comes when
   * the run is stopped: by tcrunner's time limits (SIGTERM), or by the
   * signal tcrunner passes on (the IDE's stop is SIGINT). What running
   * tests printed is sent first. Alone on its signal, the listener then
   * lets it end the process as it would have.
   */
  sendHeldOutputOnStop() {
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
      const onStop = () => {
        for (const node of this.nodes.values()) {
          if (node.kind === 'test' && !node.done && node.logs.length) this.sink.send(...this.takeOutput(node));
        }
        if (process.listenerCount(signal) === 1) {
          process.removeListener(signal, onStop);
          process.kill(process.pid, signal);
        }
      };
      process.on(signal, onStop);
    }
  }

  onTestModuleQueued(module) {
    if (this.sink) this.fileNode(module);
  }

  onTestModuleCollected(module) {
    if (!this.sink) return;
    const file = this.fileNode(module);
    file.collectFailed = module.state() === 'failed';
    const out = [];
    this.declareChildren(module, file, out);
    this.sink.send(...out);
    this.flushPendingLogs();
  }

  onTestCaseReady(test) {
    const node = this.sink && this.nodes.get(test.id);
    // vitest's own update can come after our runner's end of the test
    // (`--bail` skips the rest of a file that way): it starts nothing.
    if (!node || node.started || node.done || this.interrupted) return;
    node.started = true;
    this.sink.send({ ev: 'started', id: node.id });
  }

  /**
   * An update with no events is our runner's (tcrunner-vitest-runner.mjs):
   * tests that started, and tests and describe blocks that ended, sent by
   * the worker without vitest's 100 ms throttle. vitest's own updates always
   * carry events. A test that ran (or was reached and skipped) starts first;
   * one that a failing beforeAll kept from running does not, as in vitest's
   * own updates, so it waits for its suite's errors.
   */
  onTaskUpdate(packs, events) {
    if (!this.sink || (events && events.length) || !this.vitest) return;
    // The starts and ends of one update in one write: on the 5,000-test
    // suite, 10,201 writes became 251.
    this.sink.gather(() => this.applyUpdate(packs));
  }

  /** What an update of our runner's says, sent as events. */
  applyUpdate(packs) {
    const { state } = this.vitest;
    for (const [id] of packs) {
      const task = state.idMap.get(id);
      const carried = task && task.result && task.result.tcrunnerErrors;
      if (carried) {
        // Errors our runner sent aside, unparsed (runners/tcrunner-vitest-runner.mjs).
        task.result.errors = carried;
        delete task.result.tcrunnerErrors;
      }
      const node = this.nodes.get(id);
      if (!node || node.done || node.kind === 'file') continue;
      const entity = task && state.getReportedEntity(task);
      if (!entity) continue;
      if (node.kind === 'suite') {
        this.onTestSuiteResult(entity);
        continue;
      }
      // The mode it was collected with: vitest sets a task's mode to `skip`
      // when a skipped result comes, whatever skipped it.
      const mode = entity.options && entity.options.mode;
      const result = task.result;
      if (result && result.state === 'run') {
        this.onTestCaseReady(entity);
        continue;
      }
      const reached = mode === 'skip' || mode === 'todo'
        || (result && (result.pending || result.state === 'pass' || result.state === 'fail'));
      if (reached) this.onTestCaseReady(entity);
      this.onTestCaseResult(entity);
    }
  }

  onTestCaseResult(test) {
    const node = this.sink && this.nodes.get(test.id);
    if (!node || node.done) return;
    const result = test.result();
    const mode = test.options && test.options.mode;
    if (result.state === 'skipped' && mode !== 'skip' && mode !== 'todo' && !node.started && !result.note) {
      // Skipped without running: a failed beforeAll above it. Its error
      // reaches the suite's errors() by the time that suite reports.
      this.victims.set(test.id, test);
      return;
    }
    this.finishTest(test, node, result);
  }

  onTestSuiteResult(suite) {
    const node = this.sink && this.nodes.get(suite.id);
    if (!node || node.done) return;
    this.settleVictims(suite.id);
    this.hookFailures(suite, node);
    node.done = true;
    this.sink.send({ ev: 'suite_done', id: node.id });
  }

  onTestModuleEnd(module) {
    if (this.sink) this.endModule(module, true);
  }

  onUserConsoleLog(log) {
    if (!this.sink || !log) return;
    const stream = log.type === 'stderr' ? 'stderr' : 'stdout';
    // vitest colours what it formats (numbers, objects) when colour is on
    // for it (`CI`, `FORCE_COLOR`): the stream stays plain.
    const text = stripAnsi(log.content ?? '');
    const node = log.taskId ? this.nodes.get(log.taskId) : undefined;
    if (!node && !(log.taskId && this.vitest?.state?.idMap?.has(log.taskId))) {
      // No task's: output from outside any test file (a runner's or a
      // library's import), which vitest names by where it was written.
      this.sink.send({ ev: 'output', stream, text });
    } else if (!node) {
      if (!this.pendingLogs.has(log.taskId)) this.pendingLogs.set(log.taskId, []);
      this.pendingLogs.get(log.taskId).push({ stream, text });
    } else if (node.kind === 'test' && !node.done) {
      node.logs.push({ stream, text });
    } else {
      // A suite's or module's own output, or a late line from a finished test.
      this.sink.send({ ev: 'output', id: node.kind === 'test' ? node.parentId : node.id, stream, text });
    }
  }

  onTestRunEnd(modules, unhandledErrors, reason) {
    if (!this.sink) return;
    // A run vitest cancelled (`--bail`, a stop) leaves the tests it
    // interrupted without a result: they were stopped, not crashed. A
    // worker's update that comes later starts nothing.
    if (reason === 'interrupted') {
      this.interrupted = true;
      for (const module of modules || []) this.endInterrupted(module);
    }
    // vitest 3 never ends a module that failed to load.
    for (const module of modules || []) if (this.nodes.has(module.id)) this.fileNode(module);
    for (const node of this.nodes.values()) if (node.kind === 'file' && !node.done) this.endModule(node.module);
    // Output of tasks that never reported goes out on its own.
    for (const logs of this.pendingLogs.values()) for (const { stream, text } of logs) this.sink.send({ ev: 'output', stream, text });
    this.pendingLogs.clear();
    (unhandledErrors || []).forEach((err, i) => {
      const name = 'Unhandled error';
      const id = JSON.stringify(['', name, i]);
      const node = { ev: 'test', id, name, kind: 'test' };
      if (err && typeof err.VITEST_TEST_PATH === 'string' && path.isAbsolute(err.VITEST_TEST_PATH)) node.file = err.VITEST_TEST_PATH;
      const failure = describeErrors([err]);
      const origin = [];
      if (err && err.VITEST_TEST_PATH) origin.push(`This error originated in "${err.VITEST_TEST_PATH}".`);
      if (err && err.VITEST_TEST_NAME) origin.push(`The latest test that might have caused it is "${err.VITEST_TEST_NAME}".`);
      if (origin.length) failure.details += `\n\n${origin.join(' ')}`;
      this.sink.send(node, { ev: 'finished', id, duration_ms: 0, ...failure });
    });
    // Reporters after ours (`json`, `dot`) and coverage print after this.
    this.sink.sync();
  }

  /** Ends a module: `ended` when vitest said it ended, not at the run's end. */
  endModule(module, ended = false) {
    const file = this.fileNode(module);
    if (file.done) return;
    this.settleVictims(module.id);
    const tests = module.children && typeof module.children.allTests === 'function' ? module.children.allTests() : [];
    for (const test of tests) {
      const node = this.nodes.get(test.id);
      const result = node && !node.done && test.result();
      if (result && result.state === 'failed') {
        // Failed without running: vitest's `.only` check under CI fails it
        // as it is collected, and no update says so.
        this.finishTest(test, node, result);
      } else if (result && ended && node.started && result.state === 'pending') {
        // Still running when vitest ended its file, so it never gets a
        // result (vitest 3 and 4 leave a benchmark that throws that way):
        // it ends here, with what vitest said of the file.
        this.finishTest(test, node, result, undefined, this.unendedFailure(module));
      }
    }
    this.hookFailures(module, file);
    file.done = true;
    this.scans.delete(file.file);
    this.sink.send({ ev: 'suite_done', id: file.id });
  }

  /** Ends the tests of `module` still running when vitest cancelled the run. */
  endInterrupted(module) {
    const tests = module.children && typeof module.children.allTests === 'function' ? module.children.allTests() : [];
    const bail = this.vitest && this.vitest.config && this.vitest.config.bail;
    const stopped = { outcome: 'skipped', message: `vitest stopped the run${bail ? ' (--bail)' : ''} before this test finished` };
    for (const test of tests) {
      const node = this.nodes.get(test.id);
      const result = node && node.started && !node.done && test.result();
      if (result) this.finishTest(test, node, result, undefined, result.state === 'pending' ? stopped : undefined);
    }
  }

  /** Why a test of `module` that vitest left running ended with it. */
  unendedFailure(module) {
    const errors = typeof module.errors === 'function' ? module.errors() : [];
    if (errors.length) return describeErrors(errors);
    return { outcome: 'error', message: `vitest ended ${path.basename(module.moduleId)} without a result for this test`, details: '' };
  }

  /** Declares (once) and returns the file node of a module. */
  fileNode(module) {
    let node = this.nodes.get(module.id);
    if (node) {
      node.module = module; // vitest 3 queues a placeholder module object
      return node;
    }
    const file = module.moduleId;
    const project = module.project && module.project.name;
    let name = path.relative(this.root, file).split(path.sep).join('/') || file;
    let id = file;
    if (project) {
      // One file may run in several projects; keep their nodes apart.
      name = `[${project}] ${name}`;
      id = JSON.stringify([project, file]);
    }
    const head = JSON.stringify([id]).slice(0, -1);
    node = { id, kind: 'file', file, fileId: id, head, path: escapePart(file), titles: [], done: false, module };
    this.nodes.set(module.id, node);
    this.sink.send({ ev: 'suite', id, name, kind: 'file', file, hint: `file://${file}` });
    return node;
  }

  /**
   * A suite's or test's line: vitest's own when the project turns on
   * `includeTaskLocation` (tcrunner does not: it costs vitest about 14% CPU),
   * else the scan's, for a title that occurs once in the file.
   */
  lineOf(file, child) {
    if (child.location) return child.location.line;
    let scan = this.scans.get(file);
    if (!scan) this.scans.set(file, (scan = scanLines(file)));
    return (child.type === 'suite' ? scan.suites : scan.tests).get(child.name) || undefined;
  }

  /** Declares (into `out`) the suites and tests under a module or suite, depth first. */
  declareChildren(parent, parentNode, out) {
    const { file } = parentNode;
    for (const child of parent.children) {
      if (this.nodes.has(child.id)) continue;
      const { name } = child;
      const line = this.lineOf(file, child);
      const hintPath = `${parentNode.path}.${escapePart(name)}`;
      if (child.type === 'suite') {
        const head = `${parentNode.head},${JSON.stringify(name)}`;
        const id = `${head}]`;
        const titles = [...parentNode.titles, name];
        const node = { id, kind: 'suite', file, fileId: parentNode.fileId, head, path: hintPath, titles, done: false };
        this.nodes.set(child.id, node);
        const event = { ev: 'suite', id, parent: parentNode.id, name, kind: 'suite', file, hint: `suite://${hintPath}` };
        if (line) event.line = line;
        out.push(event);
        this.declareChildren(child, node, out);
      } else if (child.type === 'test') {
        if (this.isFilteredOut(child, parentNode.titles)) continue;
        const key = `${parentNode.id}\0${name}`;
        const n = this.counters.get(key) || 0;
        this.counters.set(key, n + 1);
        const id = `${parentNode.head},${JSON.stringify(name)},${n}]`;
        this.nodes.set(child.id, { id, kind: 'test', parentId: parentNode.id, started: false, done: false, logs: [] });
        const event = { ev: 'test', id, parent: parentNode.id, name, kind: 'test', file, hint: `test://${hintPath}` };
        if (line) event.line = line;
        // vitest 4.1's own tags, then `@tags` in the titles.
        const tags = tagsOf(child.tags, [...parentNode.titles, name]);
        if (tags.length) event.tags = tags;
        out.push(event);
      }
    }
  }

  /**
   * Whether a name pattern left the test out. vitest skips such a test, but
   * leaves the mode of one under a skipped block as it was declared
   * (`describe.skip` around a `test.only`, a `test.todo`): any test that
   * does not run and that the pattern does not match is left out.
   */
  isFilteredOut(test, ancestors) {
    if (!this.nameFilter || !test.options || test.options.mode === 'run') return false;
    this.nameFilter.lastIndex = 0;
    return !this.nameFilter.test([...ancestors, test.name].join(this.separator));
  }

  flushPendingLogs() {
    for (const [taskId, logs] of this.pendingLogs) {
      const node = this.nodes.get(taskId);
      if (!node) continue;
      this.pendingLogs.delete(taskId);
      if (node.kind === 'test' && !node.done) node.logs.push(...logs);
      else for (const { stream, text } of logs) this.sink.send({ ev: 'output', id: node.kind === 'test' ? node.parentId : node.id, stream, text });
    }
  }

  /** A test's held console output, as events, handed over once. */
  takeOutput(node) {
    const out = node.logs.map(({ stream, text }) => ({ ev: 'output', id: node.id, stream, text }));
    node.logs = [];
    return out;
  }

  finishTest(test, node, result, hookErrors, failure) {
    node.done = true;
    this.victims.delete(test.id);
    const out = this.takeOutput(node);
    const diagnostic = typeof test.diagnostic === 'function' ? test.diagnostic() : undefined;
    const event = { ev: 'finished', id: node.id, outcome: 'passed', duration_ms: wholeMs(diagnostic && diagnostic.duration) };
    const mode = test.options && test.options.mode;
    const retries = (diagnostic && diagnostic.retryCount) || 0;
    if (failure) {
      Object.assign(event, failure);
    } else if (hookErrors) {
      Object.assign(event, describeErrors(hookErrors));
    } else if (result.state === 'failed') {
      // One error an attempt: the earlier attempts' are told in the test's
      // stderr (below), and its failure is the last attempt's alone.
      const errors = result.errors || [];
      const last = retries > 0 && errors.length === retries + 1 ? errors.slice(-1) : errors;
      Object.assign(event, describeErrors(last, retries > 0));
    } else if (result.state === 'skipped' && mode === 'todo') {
      Object.assign(event, { outcome: 'todo', message: `Todo '${test.name}'` });
    } else if (result.state === 'skipped') {
      event.outcome = 'skipped';
      if (result.note) event.message = result.note;
    } else if (result.state !== 'passed') {
      event.outcome = 'skipped'; // still pending when its module ended: never ran
    }
    const retried = retries > 0 && result.errors && result.errors.length;
    if (retried && (result.state === 'passed' || result.state === 'failed')) {
      // Run again: the failed attempts before the last one are told in its
      // stderr, as the jest reporter tells them, so that a test that passed
      // on a retry shows as flaky and one that never did as retried. A
      // failed test's last attempt is its verdict.
      const attempts = result.state === 'passed' ? result.errors : result.errors.slice(0, -1);
      const numbered = attempts.length === retries;
      attempts.forEach((err, i) => {
        const { message, details } = describeErrors([err]);
        const attempt = numbered ? `Attempt ${i + 1}` : 'An attempt';
        out.push({ ev: 'output', id: node.id, stream: 'stderr', text: `${attempt} failed: ${message}\n${details}\n` });
      });
    }
    out.push(event);
    this.sink.send(...out);
  }

  /**
   * Finishes the tests waiting under `ownerId` (a suite or module that just
   * reported): with the first errors found on their ancestors, else skipped.
   */
  settleVictims(ownerId) {
    for (const test of [...this.victims.values()]) {
      let owned = false;
      let errors = null;
      for (let e = test.parent; e; e = e.type === 'module' ? undefined : e.parent) {
        if (e.id === ownerId) owned = true;
        const found = typeof e.errors === 'function' ? e.errors() : [];
        if (!errors && found && found.length) errors = found;
      }
      if (!owned) continue;
      this.finishTest(test, this.nodes.get(test.id), test.result(), errors || undefined);
      for (const err of errors || []) this.blamed.add(errorKey(err));
    }
  }

  /**
   * Errors of a suite or module that no test carries: an afterAll failure
   * (a test `afterAll hook`), or a module that failed to load (a test named
   * after the error).
   */
  hookFailures(entity, node) {
    const errors = (typeof entity.errors === 'function' ? entity.errors() : []).filter((e) => !this.blamed.has(errorKey(e)));
    if (!errors.length) return;
    const loadFailure = node.kind === 'file' && (node.collectFailed || entity.children.size === 0);
    // vitest fails a block or file with no tests in it, and says so: that is
    // no hook's error, nor a failure to load.
    const empty = errors.filter((e) => /^No test (suite )?found\b/.test(String(e && e.message)));
    const rest = errors.filter((e) => !empty.includes(e));
    const groups = loadFailure ? errors.map((e) => [e]) : [rest, empty].filter((g) => g.length);
    groups.forEach((group, i) => {
      let name = 'afterAll hook';
      if (empty.includes(group[0])) name = NO_TESTS;
      else if (loadFailure) name = (group[0] && group[0].name) || 'Error';
      const id = `${node.head},${JSON.stringify(name)},${-1 - i}]`;
      this.sink.send(
        { ev: 'test', id, parent: node.id, name, kind: 'test', file: node.file, hint: `test://${node.path}.${escapePart(name)}` },
        { ev: 'finished', id, duration_ms: 0, ...describeErrors(group) },
      );
    });
  }
}

/** How vitest's error for a block or file without tests begins. */
const NO_TESTS = 'No test found';

/** Identifies an error across the copies vitest may hand out. */
const errorKey = (err) => (err && typeof err === 'object' ? `${err.name}\0${err.message}\0${err.stack}` : String(err));

/**
 * Makes each project without a runner of its own run tests with ours,
 * extending the vitest that runs (the one whose `vitest.mjs` the process
 * started), so results leave the workers without vitest's throttle. Browser
 * projects and benchmarks keep theirs. Other vitest versions than 3, 4 and
 * 5, whose runners it was checked against, keep vitest's own, as does a
 * vitest whose runner module is not where those versions keep it.
 */
function useOurRunner(vitest, version) {
  const script = process.argv[1] || '';
  const [major, minor] = String(version).split('.').map((n) => Number.parseInt(n, 10));
  if (!(major >= 3 && major <= 5) || path.basename(script) !== 'vitest.mjs' || !Array.isArray(vitest.projects)) return;
  // vitest 4.1 exports its runner from `vitest` itself, which the test files
  // load anyway, and warns in every worker that imports `vitest/runners`.
  const module = major >= 5 || (major === 4 && minor >= 1) ? 'index.js' : 'runners.js';
  let base;
  try {
    base = path.join(path.dirname(fs.realpathSync(script)), 'dist', module);
  } catch {
    return;
  }
  if (!fs.existsSync(base)) return;
  process.env.TCRUNNER_VITEST_RUNNER_BASE = base;
  const runner = fileURLToPath(new URL('./tcrunner-vitest-runner.mjs', import.meta.url));
  for (const project of vitest.projects) {
    const config = project && project.config;
    if (!config || config.runner || config.mode === 'benchmark' || (config.browser && config.browser.enabled)) continue;
    config.runner = runner;
  }
}

/**
 * vitest keeps every test file whose path contains one of its filters, so
 * `src/a/` also takes `lib/src/a/` and `in.test.ts` also `bin.test.ts`.
 * tcrunner names the filters it passed and the files and folders they stand
 * for (TCRUNNER_VITEST_PATHS: absolute, a folder's ending in `/`), and
 * vitest's choice, made after `onInit`, is narrowed to those. It stands as
 * vitest made it when a filter is the user's own, or when it holds none of
 * them (a path vitest spells otherwise).
 */
function keepExactPaths(vitest) {
  let asked;
  try {
    asked = JSON.parse(process.env.TCRUNNER_VITEST_PATHS || '{}');
  } catch {
    return;
  }
  const specifications = vitest && vitest.specifications;
  const relevant = specifications && specifications.getRelevantTestSpecifications;
  const { filters, paths } = asked || {};
  if (!Array.isArray(filters) || !Array.isArray(paths) || !paths.length || typeof relevant !== 'function') return;
  const slashed = (p) => String(p).replace(/\\/g, '/');
  // vitest's command line normalises its filters (`src/../a` is `a`).
  const normal = (p) => path.posix.normalize(slashed(p));
  const ours = new Set(filters.map(normal));
  const exact = paths.map(slashed);
  const isAsked = (file) =>
    typeof file === 'string' && exact.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p));
  specifications.getRelevantTestSpecifications = async function (given, ...rest) {
    const found = await relevant.call(this, given, ...rest);
    const theirs = Array.isArray(given) && given.some((f) => !ours.has(normal(f)));
    if (theirs || !Array.isArray(found)) return found;
    const kept = found.filter((spec) => isAsked(spec && spec.moduleId));
    return kept.length ? kept : found;
  };
}

/**
 * The test history's order of files (`--ff`, `--nf`; tcrunner-file-order.cjs)
 * on top of the sequencer vitest would use (its `BaseSequencer`, or the
 * config's `sequence.sequencer`): vitest makes the sequencer from
 * `config.sequence.sequencer` when it first runs files, after `onInit`, so
 * a class extending that one takes its place there. Its `shard` and the
 * rest are the original's; vitest then runs the files in that order within
 * each group it runs apart (`sequence.groupOrder`, pool).
 */
function orderFiles(vitest) {
  const order = fileOrder.readFileOrder();
  const sequence = order && vitest && vitest.config && vitest.config.sequence;
  const Inner = sequence && sequence.sequencer;
  if (typeof Inner !== 'function' || Inner.tcrunnerOrder) return;
  class TcrunnerSequencer extends Inner {
    async sort(files, ...rest) {
      const sorted = await super.sort(files, ...rest);
      return fileOrder.orderItems(sorted, (spec) => spec.moduleId ?? spec[1], order);
    }
  }
  TcrunnerSequencer.tcrunnerOrder = true;
  sequence.sequencer = TcrunnerSequencer;
}

/** The project's vitest version, when the API does not say. */
function vitestVersion(root) {
  try {
    const require = createRequire(path.join(root, 'package.json'));
    return require('vitest/package.json').version;
  } catch {
    return undefined;
  }
}
