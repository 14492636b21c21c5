'use strict';
//! tcrunner's jest reporter: streams every test event to tcrunner's side channel.
//!
//! Loaded by absolute path (`--reporters=/abs/tcrunner-jest.cjs`), checked
//! against jest 29.7 and 30.5. It writes JSON lines (docs/event-protocol.md,
//! src/event.rs) to the fd in TCRUNNER_EVENT_FD, or appends them to the file
//! in TCRUNNER_EVENT_FILE; with neither set it does nothing. It never prints.
//!
//! Jest shapes read: `onTestCaseStart(test, {ancestorTitles, title})`,
//! `onTestCaseResult(test, AssertionResult)` (live, also from workers),
//! `onTestFileResult(test, TestResult)` with `testResults` (skipped tests only
//! show up here), `console`, `testExecError`; `globalConfig.testNamePattern`.
//! No dependencies: `pretty-format` is borrowed from the project when present.
//!
//! Node ids: a file is its absolute path (`[project, path]` in a project with
//! a `displayName`); a describe is the JSON array `[file, ...titles]` (led by
//! the project there too); a test is `[file, ...titles, title, n]`, where n
//! numbers tests with the same titles. Pseudo-tests (`n` = -1) carry what no
//! test carries: `Test suite failed to run` (the file did not load) and
//! `afterAll hook` (testExecError after the tests ran); tests still running
//! when their file's result comes (a worker died under them) carry the file's
//! error instead. A failure jest 30
//! adds to a test after reporting it passed (an error from a timer the test
//! left running) becomes a second node with the test's name. Tests are declared
//! when they start, before jest knows their location, so a started test's
//! `line` comes from a scan of the file for a unique literal title (none for
//! `test.each` rows or repeated titles); skipped and todo tests get jest's
//! location when the project turns `testLocationInResults` on, else the scan's.
//! Console output reaches the reporter only per file, and is sent to the
//! file's node; with a verbose console (`--verbose`, or jest's run of a single
//! file) in band, jest prints it live, inside the running test, so it is left
//! to that text (jest 30 returns it per file as well).
//! Obsolete snapshots, which fail jest's run with every test passed, are an
//! error `log` naming them. `jest.retryTimes` runs a failed test again after
//! the rest of its block: in a file that (or whose setup files) call it, a
//! failure is held until the test's next result (a retry's, by jest's count
//! of its runs; the attempt's failure then goes to its stderr) or the file
//! ends, so a test is one node with its last attempt's verdict. Tests of one
//! name are told apart at the file's end by verdict and duration.

const fs = require('fs');
const path = require('path');
const { openSink, stripAnsi, escapePart, scanLines, tagsOf, stringify: toJson } = require('./tcrunner-common.cjs');

// A stack frame line; JetBrains splits message and stack at the first one.
const STACK_FRAME = /^\s+at\s.*\)$|^\s+at\s\S+$/;

// Console methods that write to stderr, in node and in jest's verbose console.
const ERROR_CONSOLE = new Set(['error', 'warn', 'assert', 'trace']);

/** JetBrains JS locationHint path: parts joined by `.`. */
const locationPath = (parts) => parts.map((p) => escapePart(String(p))).join('.');

/**
 * Which of the finished tests `entries` (of one name) is the one `result`
 * of the file's report tells of: the same verdict, and the same duration
 * where several have it (tests of one name run concurrently end out of
 * order). A failure the live stream did not have is jest 30's late error
 * of a test it reported passed. A test that never ran is none of them.
 */
function sameRun(entries, result) {
  const same = entries.filter((e) => e.status === result.status);
  return same.find((e) => e.duration === result.duration) || same[0]
    || (result.status === 'failed' ? entries.find((e) => e.status === 'passed') : undefined);
}

/** The text before the first stack frame, without trailing blank lines. */
function messageOf(text) {
  const lines = stripAnsi(text).split('\n');
  const end = lines.findIndex((l) => STACK_FRAME.test(l));
  return (end < 0 ? lines : lines.slice(0, end)).join('\n').trim();
}

// Stack frames of jest's own machinery, which jest's reporters hide as well.
const INTERNAL_FRAME = /[\\/]node_modules[\\/](?:jest-[\w-]+|@jest[\\/][\w-]+|expect|pretty-format|emittery)[\\/]|\(node:|^\s+at new Promise \(<anonymous>\)$/;

/** The failure text without ANSI codes and without jest-internal frames. */
const cleanDetails = (text) =>
  stripAnsi(text)
    .split('\n')
    .filter((l) => !(STACK_FRAME.test(l) && INTERNAL_FRAME.test(l)))
    .join('\n')
    .trim();

/** The first paragraph: what a one-line failure reason should show. */
const firstParagraph = (text) => text.split(/\n\s*\n/)[0].trim();

/** Floors a duration in ms to an integer, 0 when absent. */
const wholeMs = (ms) => (typeof ms === 'number' && ms > 0 ? Math.floor(ms) : 0);

let prettyFormat; // undefined: not tried; null: not available.
/** Formats a matcher value the way jest shows it: strings raw, others pretty. */
function stringify(value, rootDir) {
  if (typeof value === 'string') return value;
  if (prettyFormat === undefined) {
    prettyFormat = null;
    try {
      const found = require.resolve('pretty-format', { paths: [rootDir, process.cwd()] });
      const mod = require(found);
      prettyFormat = mod.format || mod.default || (typeof mod === 'function' ? mod : null);
    } catch {
      prettyFormat = null;
    }
  }
  if (prettyFormat) {
    try {
      return prettyFormat(value, { indent: 2, maxDepth: 20 });
    } catch {
      // fall through
    }
  }
  return plainFormat(value, '');
}

/** A small pretty-format look-alike for when jest's copy cannot be loaded. */
function plainFormat(value, indent) {
  if (value === undefined) return 'undefined';
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return toJson(value);
  if (typeof value !== 'object') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return 'Array []';
    return `Array [\n${value.map((v) => `${inner}${plainFormat(v, inner)},\n`).join('')}${indent}]`;
  }
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return 'Object {}';
  const body = keys.map((k) => `${inner}${toJson(k)}: ${plainFormat(value[k], inner)},\n`);
  return `Object {\n${body.join('')}${indent}}`;
}

/** Reads the running jest's version. */
function jestVersion(rootDir) {
  const from = [rootDir, process.cwd()];
  if (require.main && require.main.filename) from.push(path.dirname(require.main.filename));
  for (const pkg of ['jest/package.json', '@jest/core/package.json', 'jest-cli/package.json']) {
    try {
      return require(require.resolve(pkg, { paths: from })).version;
    } catch {
      // try the next
    }
  }
  return undefined;
}

// jest's own assertion errors: its matcher hint (`expect.assertions(2)`,
// `expect(received).rejects.toThrow()`), the hint jest-circus puts in place
// of a node `assert` error (`assert(received)`, `assert.strictEqual(received,
// expected)`), or a `test.failing` test that passed.
const JEST_CHECK = /^expect[.(]|^assert[.(]|^Failing test passed even though it was supposed to fail\./;

/**
 * The matcher result of one of a test's failures: jest-circus's
 * `matcherResult`, or under jest-jasmine2 (jest 26's default runner,
 * `testRunner: 'jest-jasmine2'` later) that of the error it caught.
 */
function matcherOf(detail) {
  if (!detail || typeof detail !== 'object') return undefined;
  const result = detail.matcherResult || (detail.error && detail.error.matcherResult);
  return result && typeof result === 'object' ? result : undefined;
}

/**
 * What a test's failures say: outcome, message, details, expected/actual.
 * An assertion (a `matcherResult` in `failureDetails`, or one of jest's own
 * checks, JEST_CHECK) is `failed`; any other thrown error is `error`.
 */
function describeFailure(result, rootDir) {
  const messages = result.failureMessages || [];
  const detailsList = result.failureDetails || [];
  const matcher = detailsList.map(matcherOf).find(Boolean);
  const assertion = matcher || detailsList.some((d) => d && typeof d.message === 'string' && JEST_CHECK.test(d.message));
  const text = messages.length ? messages.join('\n\n') : '';
  let said = matcher && matcher.message;
  if (typeof said === 'function') {
    // jest-circus 26 keeps a matcher's message as the function that makes it.
    try {
      said = said();
    } catch {
      said = undefined;
    }
  }
  const failure = {
    outcome: assertion ? 'failed' : 'error',
    message: firstParagraph(typeof said === 'string' && said ? stripAnsi(said) : messageOf(text)),
    details: cleanDetails(text),
  };
  if (!failure.message) failure.message = 'Failure cause not provided';
  // A snapshot matcher without a stored snapshot (`--ci` does not write new
  // ones) has no expected value: there is nothing to compare against.
  const noSnapshot = matcher && /Snapshot$/.test(matcher.name || '') && matcher.expected === undefined;
  if (matcher && !noSnapshot && (matcher.expected !== undefined || matcher.actual !== undefined)) {
    const expected = stringify(matcher.expected, rootDir);
    const actual = stringify(matcher.actual, rootDir);
    if (expected !== actual) Object.assign(failure, { expected, actual });
  }
  return failure;
}

/** Whether a test of `file` has started and not ended (nor is held for a retry). */
function hasRunning(file) {
  for (const entries of file.live.values()) {
    if (entries.some((e) => e.started && !e.finished && !e.held)) return true;
  }
  return false;
}

/** One test file's part of the tree in one jest project. */
class FileState {
  constructor(file, project, key) {
    this.file = file;
    this.key = key; // its key in the reporter's map of running files
    // A file that several named projects run gets one node per project.
    this.id = project ? toJson([project, file]) : file;
    this.head = toJson(project ? [project, file] : [file]).slice(0, -1); // prefix of the JSON ids under it
    this.suites = new Map(); // ancestor titles as JSON -> {id, path} of a declared describe
    this.counters = new Map(); // title-path key -> tests numbered so far
    this.live = new Map(); // title-path key -> [{id, started, finished, reconciled, status, line}]
    this.titleLines = null; // test lines from scanLines, read on first use
    this.retries = undefined; // whether a failed test may be run again, found on first failure
  }

  /** The line of a live-started test, when its title is unambiguous. */
  lineOf(title) {
    if (!this.titleLines) this.titleLines = scanLines(this.file).tests;
    return this.titleLines.get(title) || undefined;
  }

  /** `{line}` from the same scan, for a test that never started (tcrunner
   * does not pass --testLocationInResults: it costs jest about 12% CPU). */
  locationOf(title) {
    const line = this.lineOf(title);
    return line ? { line } : undefined;
  }
}

class TcrunnerJestReporter {
  constructor(globalConfig) {
    // jest prints a one-file run's console live, between the events.
    this._sink = openSink({ blockingText: true });
    if (!this._sink) return;
    this._rootDir = (globalConfig && globalConfig.rootDir) || process.cwd();
    // File suites are named below the folder jest runs in, as jest prints
    // them (its `relativePath` takes a project's `cwd`), not below its
    // `rootDir`: that is the config file's folder, which a config kept in a
    // subfolder (`config/jest.config.js`) puts above none of the tests.
    this._cwd = process.cwd();
    this._bail = !!(globalConfig && globalConfig.bail);
    // jest runs a single test file verbose (this config is the one after
    // that decision): its console then prints live, between the test events.
    this._verbose = !!(globalConfig && globalConfig.verbose);
    this._silent = !!(globalConfig && globalConfig.silent);
    const pattern = globalConfig && globalConfig.testNamePattern;
    // Tests a name pattern deselects come back `pending`, like real skips:
    // they were not asked for, so they are left out, whoever set the pattern
    // (a target, `-t`, the config file). jest matches its case-insensitive
    // regex against the space-joined full name.
    this._nameFilter = null;
    if (pattern) {
      try {
        this._nameFilter = new RegExp(pattern, 'i');
      } catch {
        this._nameFilter = null;
      }
    }
    this._files = new Map(); // project id and path -> FileState
    this._emptySnapshots = []; // test files whose snapshot file holds no snapshot
    this._retrySources = new Map(); // path -> whether it calls retryTimes
    // Path -> its FileStates now running. Jest's test-case events carry the
    // path but not the project (it fills in the context of an arbitrary one).
    this._running = new Map();
    this._sink.send({ ev: 'hello', runner: 'jest', version: jestVersion(this._rootDir) });
    // A verbose run's console is written as tests run, not handed to us:
    // the stream then tells TeamCity that a test's text is its output.
    if (this._verbose && !this._silent) this._sink.send({ ev: 'live_output' });
  }

  getLastError() {
    return undefined;
  }

  onTestFileStart(test) {
    if (this._sink) this._fileOf(test);
  }

  onTestCaseStart(test, info) {
    if (!this._sink) return;
    const running = this._runningFiles(test);
    if (running.length !== 1) return; // a file several projects run at once: reported at its end
    const file = running[0];
    // jest runs a held test again (`jest.retryTimes`): it is still running.
    // Only its result tells that apart from another test of the same name.
    const key = toJson([...(info.ancestorTitles || []), info.title]);
    const entries = file.live.get(key) || [];
    if (entries.some((e) => e.held && !e.finished)) return;
    if (this._replays(file, key, entries)) return;
    const line = file.lineOf(info.title);
    const out = [];
    const entry = this._newTest(file, info.ancestorTitles || [], info.title, line && { line }, out);
    entry.started = true;
    out.push({ ev: 'started', id: entry.id });
    this._sink.send(...out);
  }

  /**
   * Whether the test `key` now starting is one jest already ran in `file`,
   * run again because the worker running the file died (`process.exit` in a
   * test): jest then runs the whole file again in a new worker, up to three
   * times, and reports the file failed with no tests. Each test is shown
   * once: a replayed test that ran before is not shown again unless it ends
   * otherwise, and the test the worker died in stays running until it ends
   * or the file does. Tests of one file run one at a time, so a start while
   * another test of the file is still running, of a test that already ran,
   * begins a replay.
   */
  _replays(file, key, entries) {
    const earlier = entries.filter((e) => e.started && !e.held);
    if (!file.replay) {
      if (!earlier.some((e) => e.finished) || !hasRunning(file)) return false;
      file.replay = new Map(); // key -> its starts in this attempt
    }
    const n = file.replay.get(key) || 0;
    if (n >= earlier.length) {
      // It ran fewer times before than now: either the file started over
      // once more, or this attempt got further than the last one.
      if (n === 0 || !hasRunning(file)) return false;
      file.replay = new Map();
      return this._replays(file, key, entries);
    }
    file.replay.set(key, n + 1);
    if (earlier[n].finished) earlier[n].replayed = true;
    return true;
  }

  onTestCaseResult(test, result) {
    if (!this._sink) return;
    const key = toJson([...result.ancestorTitles, result.title]);
    // A retry's result (jest counts the runs) is its held test's: the first
    // one of the name not yet told of this run, as jest retries one test
    // after another, each as often as it needs. Any other result is the
    // first started-unfinished test's, as results come in start order.
    const retry = result.invocations > 1;
    const open = (file) => (file.live.get(key) || []).find((e) => e.started && !e.finished
      && (retry ? e.held && (e.invocations || 1) < result.invocations : !e.held));
    let running = this._runningFiles(test);
    if (running.length > 1) running = running.filter(open);
    if (running.length !== 1) return; // a file several projects run at once: reported at its end
    const file = running[0];
    const out = [];
    let entry = open(file);
    if (entry && entry.held) {
      entry.invocations = result.invocations;
      // The held failure was an attempt.
      const failure = describeFailure(entry.held, this._rootDir);
      entry.attempts = (entry.attempts || 1) + 1;
      const text = `Attempt ${entry.attempts - 1} failed: ${failure.message}\n${failure.details || ''}\n`;
      entry.held = null;
      out.push({ ev: 'output', id: entry.id, stream: 'stderr', text });
    }
    if (!entry) {
      // A replayed test that ends as it did before was shown already.
      const replayed = (file.live.get(key) || []).find((e) => e.replayed);
      if (replayed) {
        replayed.replayed = false;
        if (replayed.status === result.status) return;
      }
      entry = this._newTest(file, result.ancestorTitles, result.title, result.location || file.locationOf(result.title), out);
      entry.started = true;
      out.push({ ev: 'started', id: entry.id });
    }
    if (result.status === 'failed' && this._mayRetry(test, file)) {
      // Held until jest runs the test again or the file ends: a test that
      // passes on a retry is one passed test, as jest counts it.
      entry.held = result;
    } else {
      this._finish(entry, result, out);
    }
    this._sink.send(...out);
  }

  /**
   * Whether jest may run a failed test of `file` again: its text or that of
   * a setup file of its project calls `retryTimes` (set at run time in the
   * worker, so not in any config the reporter sees).
   */
  _mayRetry(test, file) {
    if (file.retries === undefined) {
      const config = (test.context && test.context.config) || {};
      const sources = [file.file, ...(config.setupFiles || []), ...(config.setupFilesAfterEnv || [])];
      file.retries = sources.some((source) => {
        if (!this._retrySources.has(source)) {
          let text = '';
          try {
            text = fs.readFileSync(source, 'utf8');
          } catch {
            // An unreadable file calls nothing.
          }
          this._retrySources.set(source, text.includes('retryTimes'));
        }
        return this._retrySources.get(source);
      });
    }
    return file.retries;
  }

  onTestFileResult(test, testResult) {
    if (!this._sink) return;
    // jest counts a test file's own snapshot file that holds no snapshot as
    // obsolete, and fails the run, but names it in no list of the run's.
    if (testResult.snapshot && testResult.snapshot.fileDeleted) this._emptySnapshots.push(test.path);
    const file = this._fileOf(test);
    const out = [];
    const send = (e) => out.push(e);
    // Failures held for a retry that never came: the last attempt's verdict.
    for (const entries of file.live.values()) {
      for (const entry of entries) {
        if (entry.held && !entry.finished) this._finish(entry, entry.held, out);
      }
    }
    // A verbose console (`--verbose`, or a run of one file) printed every
    // entry live; jest 30 also returns them here. In band (jest marks this
    // process as worker 1) that text came between the test events, in the
    // test that made it; from a worker it lands anywhere, so the file keeps
    // its copy.
    const config = (test.context && test.context.config) || {};
    const inBand = process.env.JEST_WORKER_ID !== undefined;
    const printed = inBand && (config.verbose ?? this._verbose) && !(config.silent ?? this._silent);
    for (const entry of printed ? [] : testResult.console || []) {
      const stream = ERROR_CONSOLE.has(entry.type) ? 'stderr' : 'stdout';
      send({ ev: 'output', id: file.id, stream, text: `${stripAnsi(entry.message)}\n` });
    }
    // Reconcile: tests the live stream never finished (skips, filtered
    // tests). An entry matched to a result is `reconciled`.
    for (const result of testResult.testResults || []) {
      const key = toJson([...result.ancestorTitles, result.title]);
      const entries = file.live.get(key) || [];
      const line = result.location ? result.location.line : undefined;
      const done = entries.filter((e) => e.finished && !e.reconciled);
      const match = sameRun(done.filter((e) => e.line === undefined || line === undefined || e.line === line), result)
        || sameRun(done, result);
      const unfinished = !match && entries.find((e) => e.started && !e.finished && !e.reconciled);
      if (unfinished) {
        unfinished.reconciled = true;
        this._finish(unfinished, result, out);
        continue;
      }
      if (match) {
        match.reconciled = true;
        // jest 30 charges an error thrown after a test ended (by a timer or
        // promise it left running) to that test, after reporting it passed:
        // the failure becomes a second node with the test's name, which the
        // result files fold into the first (`late`, docs/event-protocol.md).
        if (result.status === 'failed' && match.status !== 'failed') {
          const late = this._newTest(file, result.ancestorTitles, result.title, match.line && { line: match.line }, out);
          out[out.length - 1].late = match.id;
          late.reconciled = true;
          this._finish(late, result, out);
          const event = out[out.length - 1];
          event.details = `Reported after the test had finished.\n\n${event.details}`;
        }
        continue;
      }
      if (this._isFilteredOut(result)) continue;
      const entry = this._newTest(file, result.ancestorTitles, result.title, result.location || file.locationOf(result.title), out);
      entry.reconciled = true;
      this._finish(entry, result, out);
    }
    // Files that crashed: nothing ran, or something failed after the tests.
    const execError = testResult.testExecError;
    const hasTests = (testResult.testResults || []).length > 0;
    const crashed = execError || (!hasTests && testResult.failureMessage);
    // Tests still running when their file ends died with it (a worker that
    // exited under them, retried by jest until it gave up): they carry the
    // file's error rather than a pseudo-test.
    const stopped = this._finishUnfinished(file, out, crashed
      ? this._execFailure(execError, testResult.failureMessage)
      : { outcome: 'error', message: 'jest ended this test file while the test was running' });
    if (crashed && !stopped) {
      const name = hasTests ? 'afterAll hook' : 'Test suite failed to run';
      const id = `${file.head},${toJson(name)},-1]`;
      send({ ev: 'test', id, parent: file.id, name, kind: 'test', file: file.file, hint: `test://${locationPath([file.file, name])}` });
      send({ ev: 'finished', id, duration_ms: 0, ...this._execFailure(execError, testResult.failureMessage) });
    }
    send({ ev: 'suite_done', id: file.id });
    this._sink.send(...out);
    this._files.delete(file.key);
    const running = this._running.get(file.file) || [];
    running.splice(running.indexOf(file), 1);
    if (!running.length) this._running.delete(file.file);
  }

  onRunComplete(_contexts, results) {
    if (!this._sink) return;
    // Files still running: --bail stopped the run after another file failed
    // (jest exits right after this call). Their running tests never ended.
    const out = [];
    for (const file of this._files.values()) {
      this._finishUnfinished(file, out, { outcome: 'skipped', message: `jest stopped the run${this._bail ? ' (--bail)' : ''} before this test finished` });
      out.push({ ev: 'suite_done', id: file.id });
    }
    this._files.clear();
    this._running.clear();
    if (out.length) this._sink.send(...out);
    // Obsolete snapshots fail jest's run although every test passed: say so,
    // or the run fails with nothing in the tree to show why.
    const snapshot = results && results.snapshot;
    if (snapshot && snapshot.failure && !snapshot.didUpdate) {
      const where = [];
      for (const { filePath, keys } of snapshot.uncheckedKeysByFile || []) {
        where.push(`${this._relative(filePath)}: ${keys.map((k) => `\`${k}\``).join(', ')}`);
      }
      for (const file of snapshot.filesRemovedList || []) where.push(`${this._relative(file)} (the whole file)`);
      for (const file of this._emptySnapshots) where.push(`the snapshot file of ${this._relative(file)} (it holds none)`);
      if (where.length) {
        const text = `jest fails the run for obsolete snapshots (remove them with \`jest -u\`): ${where.join('; ')}`;
        this._sink.send({ ev: 'log', level: 'error', text });
      }
    }
    const err = results && results.runExecError;
    if (err) this._sink.send({ ev: 'log', level: 'error', text: stripAnsi(err.message || err.stack || String(err)) });
    // Reporters after ours (coverage) and jest itself (--json) print after this.
    this._sink.sync();
  }

  /** A path relative to the folder jest runs in, with `/`. */
  _relative(file) {
    return path.relative(this._cwd, file).split(path.sep).join('/') || path.basename(file);
  }

  /** The FileStates a test-case event may belong to: those running its path. */
  _runningFiles(test) {
    const running = this._running.get(test.path);
    return running && running.length ? running : [this._fileOf(test)];
  }

  /** The state of a test's file in its project, declaring the file node on first use. */
  _fileOf(test) {
    const file = test.path;
    const config = (test.context && test.context.config) || {};
    const key = `${config.id || ''}\0${file}`; // jest workers run one file in several projects at once
    let state = this._files.get(key);
    if (!state) {
      const project = config.displayName && config.displayName.name;
      let name = this._relative(file);
      if (project) name = `[${project}] ${name}`;
      state = new FileState(file, project, key);
      this._files.set(key, state);
      if (!this._running.has(file)) this._running.set(file, []);
      this._running.get(file).push(state);
      this._sink.send({ ev: 'suite', id: state.id, name, kind: 'file', file, hint: `file://${file}` });
    }
    return state;
  }

  /** Declares (into `out`) the describe chain and a new test; returns its live entry. */
  _newTest(file, ancestors, title, location, out) {
    const suite = this._suiteOf(file, ancestors, out);
    const key = toJson([...ancestors, title]);
    const n = file.counters.get(key) || 0;
    file.counters.set(key, n + 1);
    const id = `${suite.id.slice(0, -1)},${toJson(title)},${n}]`;
    const node = {
      ev: 'test', id, parent: suite.parent, name: title, kind: 'test', file: file.file,
      hint: `test://${suite.path}.${escapePart(title)}`,
    };
    if (location && location.line) node.line = location.line;
    const tags = tagsOf(undefined, [...ancestors, title]);
    if (tags.length) node.tags = tags;
    out.push(node);
    const entry = { id, started: false, finished: false, reconciled: false, line: location ? location.line : undefined };
    if (!file.live.has(key)) file.live.set(key, []);
    file.live.get(key).push(entry);
    return entry;
  }

  /**
   * The innermost describe of a test (declaring the chain into `out` as it
   * first appears): its id as a JSON array, the parent id for its tests and
   * its escaped location path. The file itself when there are no ancestors.
   */
  _suiteOf(file, ancestors, out) {
    // As JSON: joined titles would give `describe('')` the file's own key.
    const key = toJson(ancestors);
    let suite = file.suites.get(key);
    if (suite) return suite;
    if (ancestors.length === 0) {
      suite = { id: `${file.head}]`, parent: file.id, path: escapePart(file.file) };
    } else {
      const outer = this._suiteOf(file, ancestors.slice(0, -1), out);
      const name = ancestors[ancestors.length - 1];
      const id = `${outer.id.slice(0, -1)},${toJson(name)}]`;
      suite = { id, parent: id, path: `${outer.path}.${escapePart(name)}` };
      out.push({ ev: 'suite', id, parent: outer.parent, name, kind: 'suite', file: file.file, hint: `suite://${suite.path}` });
    }
    file.suites.set(key, suite);
    return suite;
  }

  /** Puts a test's `finished` event into `out`. */
  _finish(entry, result, out) {
    entry.finished = true;
    entry.status = result.status;
    entry.duration = result.duration;
    if (entry.line === undefined && result.location) entry.line = result.location.line;
    const event = { ev: 'finished', id: entry.id, outcome: 'passed', duration_ms: wholeMs(result.duration) };
    switch (result.status) {
      case 'passed':
        break;
      case 'todo':
        Object.assign(event, { outcome: 'todo', message: `Todo '${result.title}'` });
        break;
      case 'pending':
      case 'skipped':
      case 'disabled':
        event.outcome = 'skipped';
        break;
      default:
        Object.assign(event, describeFailure(result, this._rootDir));
    }
    out.push(event);
  }

  /** Finishes (into `out`) a file's started, unfinished tests with `verdict`; returns how many. */
  _finishUnfinished(file, out, verdict) {
    let n = 0;
    for (const entries of file.live.values()) {
      for (const entry of entries) {
        if (!entry.started || entry.finished) continue;
        entry.finished = true;
        entry.status = verdict.outcome === 'skipped' ? 'skipped' : 'failed';
        out.push({ ev: 'finished', id: entry.id, duration_ms: 0, ...verdict });
        n++;
      }
    }
    return n;
  }

  _isFilteredOut(result) {
    if (!this._nameFilter || result.status !== 'pending') return false;
    return !this._nameFilter.test([...result.ancestorTitles, result.title].join(' '));
  }

  _execFailure(execError, failureMessage) {
    const text = execError ? execError.stack || execError.message || '' : '';
    const raw = stripAnsi(execError && execError.message ? execError.message : text || failureMessage || '');
    const message = firstParagraph(messageOf(raw).replace(/^\s*● Test suite failed to run\s*/, '')) || 'Test suite failed to run';
    return { outcome: 'error', message, details: cleanDetails(text || failureMessage || '') };
  }
}

module.exports = TcrunnerJestReporter;
