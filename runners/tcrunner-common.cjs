'use strict';
//! What tcrunner's jest and vitest reporters share: the side channel, ANSI
//! stripping, locationHint escaping and the scan of a test file for the lines
//! of its test and describe calls. Written next to the reporters at run time
//! and loaded from there (`require('./tcrunner-common.cjs')`).

const fs = require('fs');

const ANSI = /[\u001b\u009b][[\]()#;?]*(?:(?:(?:;[-a-zA-Z\d/#&.:=?%@~_]*)*)?\u0007|(?:\d{1,4}(?:;\d{0,4})*)?[\dA-PR-TZcf-nq-uy=><~])/g;

const PAUSE = new Int32Array(new SharedArrayBuffer(4));

// node's own, taken as this file loads, before any test runs: a test that
// mocks `fs.writeSync` (`jest.spyOn(fs, 'writeSync')`, kept by jest's
// default `restoreMocks: false`) in the reporter's process must not take
// the events with it.
const writeSync = fs.writeSync;
// So is JSON's encoder, which jest's in-band tests reach in the reporter's
// realm (`process.constructor.constructor('return JSON')()`): patched, it
// would rewrite every event, a failed test's verdict too.
const stringify = JSON.stringify;

/**
 * A descriptor of this process's own for the event pipe `fd`: tests running
 * in this process see `TCRUNNER_EVENT_FD` and may close that one (a test of
 * code that closes descriptors), which would lose every later event. Opened
 * through `/proc` (Linux; close-on-exec, as node opens files), without
 * waiting: a pipe whose reader is gone then fails at once, and `fd` itself
 * is used, as it is wherever that fails. A full pipe is waited on by `send`.
 */
function ownCopy(fd) {
  try {
    return fs.openSync(`/proc/self/fd/${fd}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    return fd;
  }
}

/**
 * The bytes this process writes to its stdout (`[1]`) and stderr (`[2]`)
 * with `fs.writeSync`, below `process.stdout`, which does not count them:
 * a logger such as pino writes there. Tests share the process's `fs` (jest
 * hands tests node's own), so theirs count too. Without them, the counts
 * of a `written` line fall short, and such text would go after the events
 * sent behind it, into a later test.
 */
function countRawWrites() {
  if (fs.writeSync.tcrunnerCounts) return fs.writeSync.tcrunnerCounts;
  const counts = [0, 0, 0];
  const underneath = fs.writeSync;
  fs.writeSync = function writeSyncCounted(fd, ...rest) {
    const n = underneath.call(this, fd, ...rest);
    if (fd === 1 || fd === 2) counts[fd] += n;
    return n;
  };
  fs.writeSync.tcrunnerCounts = counts;
  require('module').syncBuiltinESMExports(); // `import { writeSync } from 'node:fs'` too
  return counts;
}

/**
 * The side channel, or null when tcrunner did not ask for events.
 * `blockingText`: for a process that prints tests' output live (jest).
 */
function openSink({ blockingText = false } = {}) {
  let fd = -1;
  const fdVar = process.env.TCRUNNER_EVENT_FD;
  const fileVar = process.env.TCRUNNER_EVENT_FILE;
  try {
    if (fdVar) fd = Number.parseInt(fdVar, 10);
    else if (fileVar) fd = fs.openSync(fileVar, 'a');
  } catch {
    fd = -1;
  }
  if (!(fd >= 0)) return null;
  if (fdVar) fd = ownCopy(fd);
  const key = fdVar ? process.env.TCRUNNER_INBAND_KEY : '';
  let gathered = null; // what `send` holds while `gather` runs
  // What this process had written to its stdout and stderr at the last
  // send; null where they are not the pipes tcrunner reads (a file, a TTY,
  // a worker thread's streams have no `bytesWritten`). It starts at -1, so
  // that the first send says the counts are kept: tcrunner then orders text
  // by them alone (src/process/reader.rs).
  const counted = key && typeof process.stdout.bytesWritten === 'number' && typeof process.stderr.bytesWritten === 'number';
  const written = counted ? { stdout: -1, stderr: -1 } : null;
  const raw = counted && blockingText ? countRawWrites() : null;
  if (counted && blockingText) {
    // Node makes its pipes non-blocking and queues what a full pipe does not
    // take (a test's 200 KB console.log), so the text would reach tcrunner
    // after the events sent behind it: a blocking pipe takes a write whole
    // before `write` returns, as it does for Python. Not for vitest's main
    // process, where tests' output comes as events (it cost vitest's
    // passing suite about 4% CPU, 5 paired rounds).
    for (const stream of [process.stdout, process.stderr]) {
      if (stream._handle && typeof stream._handle.setBlocking === 'function') stream._handle.setBlocking(true);
    }
  }
  return {
    /**
     * Writes an empty frame into the process's stdout after the last event:
     * a point both pipes share (src/process/reader.rs). Every event sent so
     * far is in the event pipe before it, so tcrunner passes them on before
     * what the framework prints after it (its closing text, a coverage
     * table), however late it reads the two. Through `process.stdout`, so
     * that it keeps its place among the framework's own writes there.
     */
    sync() {
      if (fd >= 0 && key) process.stdout.write(`\u001b_tcrunner;${key};\u001b\\`);
    },
    /**
     * Runs `fn` and sends what it sends in one write when it returns: for
     * events that are known at the same instant (one update from a
     * worker), so that they cost one write, and one read of tcrunner's,
     * rather than one each.
     */
    gather(fn) {
      if (gathered) return fn();
      gathered = [];
      try {
        return fn();
      } finally {
        const events = gathered;
        gathered = null;
        if (events.length) this.send(...events);
      }
    },
    /** Writes events as JSON lines in one write, so they arrive together. */
    send(...events) {
      if (fd < 0) return;
      if (gathered) {
        gathered.push(...events);
        return;
      }
      let text = '';
      if (written) {
        // A `written` line ahead of the events when text went out since the
        // last send: tcrunner passes on that much of stdout and stderr before
        // them, however late it reads the pipes (docs/event-protocol.md).
        // Reading the two counts costs some 0.3 µs.
        const stdout = process.stdout.bytesWritten + (raw ? raw[1] : 0);
        const stderr = process.stderr.bytesWritten + (raw ? raw[2] : 0);
        if (stdout !== written.stdout || stderr !== written.stderr) {
          written.stdout = stdout;
          written.stderr = stderr;
          text = `{"ev":"written","stdout":${stdout},"stderr":${stderr}}\n`;
        }
      }
      for (const event of events) text += `${stringify(event)}\n`;
      // The text as it is: a Buffer made for each write costs more than the
      // write's own JavaScript. A write the pipe cuts short goes on in bytes.
      let buf = null;
      let off = 0;
      for (;;) {
        try {
          if (buf === null) {
            const n = writeSync(fd, text);
            if (n === Buffer.byteLength(text, 'utf8')) return;
            buf = Buffer.from(text, 'utf8');
            off = n;
          } else {
            off += writeSync(fd, buf, off, buf.length - off);
            if (off >= buf.length) return;
          }
        } catch (err) {
          if (err && err.code === 'EAGAIN') {
            Atomics.wait(PAUSE, 0, 0, 1); // a non-blocking pipe is full: let tcrunner read
            continue;
          }
          fd = -1; // EPIPE, EBADF: tcrunner is gone; stay silent.
          return;
        }
      }
    },
  };
}

const stripAnsi = (text) => String(text).replace(ANSI, '');

/** A JetBrains JS locationHint part: `.` and `\` escaped (parts are joined by `.`). */
const escapePart = (part) => (/[.\\]/.test(part) ? part.replace(/[.\\]/g, '\\$&') : part);

// A test or describe call with a literal title: `test(`, `it.only(`,
// `describe.skip(`, vitest's `test.skipIf(cond)(` … `'title'` (a template
// without `${}` is literal too); group 1 is the function, group 2 the title.
const CALL = /\b(it|test|fit|xit|xtest|describe|fdescribe|xdescribe|suite)(?:\s*\.\s*(?:(?:skipIf|runIf)\s*\([^()\n]*\)|[A-Za-z]+))*\s*\(\s*('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\$]|\\.|\$(?!\{))*`)/g;
const SUITE_CALLS = new Set(['describe', 'fdescribe', 'xdescribe', 'suite']);
const ESCAPES = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', 0: '\0' };

/**
 * The 1-based lines of a source file's test calls (`tests`) and describe
 * calls (`suites`), by title, for titles that occur once in that role: a
 * reporter that must declare a test before the framework gives its location
 * (jest), or that runs without the framework's location option (it costs
 * jest and vitest 12-14% of their CPU), takes lines from here. Ambiguous or
 * computed titles (`test.each`, templates with `${}`) get no line rather than
 * a wrong one; so does a file that cannot be read.
 */
function scanLines(file) {
  const tests = new Map(); // title -> line, or 0 when the title repeats
  const suites = new Map();
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { tests, suites };
  }
  let line = 1;
  let at = 0;
  for (const match of text.matchAll(CALL)) {
    for (let i = text.indexOf('\n', at); i !== -1 && i < match.index; i = text.indexOf('\n', i + 1)) line++;
    at = match.index;
    const title = match[2].slice(1, -1).replace(/\\(.)/gs, (_, c) => (c in ESCAPES ? ESCAPES[c] : c === '\n' ? '' : c));
    const lines = SUITE_CALLS.has(match[1]) ? suites : tests;
    lines.set(title, lines.has(title) ? 0 : line);
  }
  return { tests, suites };
}

/** `@word` and `@word(args)` in a title: a tag, for frameworks with no tags of their own (docs/results.md). */
const TITLE_TAG = /(?:^|\s)@([A-Za-z_][\w.-]*(?:\([^()]*\))?)/g;

/** The tags of a test: the framework's own (`own`), then the `@tags` in its titles, outermost first; each once. */
function tagsOf(own, titles) {
  const tags = [];
  for (const tag of own || []) if (!tags.includes(tag)) tags.push(tag);
  // Nearest first, as pytest lists a test's markers: the test's title,
  // then its blocks' outward (the nearest `scenario(…)` is the test's).
  for (let i = titles.length - 1; i >= 0; i--) {
    const title = titles[i];
    if (!title.includes('@')) continue;
    for (const match of title.matchAll(TITLE_TAG)) if (!tags.includes(match[1])) tags.push(match[1]);
  }
  return tags;
}

module.exports = { openSink, stripAnsi, escapePart, scanLines, tagsOf, stringify };
