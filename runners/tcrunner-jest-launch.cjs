'use strict';
//! tcrunner's jest launcher: starts the project's jest through its
//! programmatic entry, `jest-cli`'s `run(argv)` (jest 29.7 and 30.5), so that
//! jest gets tcrunner's arguments (our reporter, the paths and name pattern
//! of `--path` and `--target`) while `process.argv` is what bare `jest` with
//! the user's own arguments has: tests jest runs in band run in this process
//! and may parse it.
//!
//! Usage: `node tcrunner-jest-launch.cjs JEST_BIN START END ARG...`, where
//! ARG... are jest's arguments and ARG[START..END] the user's own; JEST_BIN
//! is jest's `bin/jest.js`, which bare `jest` runs as `process.argv[1]`.
//!
//! jest's own text (its verbose console, its errors and warnings) is made
//! plain here, in this process, rather than through colour variables every
//! test would see: the chalk and picocolors copies jest's packages print
//! with are turned off.
//! Tests load their own copies (jest's module registry), which decide as
//! under bare jest; what jest sends our reporter is stripped of ANSI there.
//!
//! With an order of files from the test history (`--ff`, `--nf`), it puts
//! our sequencer (tcrunner-jest-sequencer.cjs) in place of jest's.

const fs = require('fs');
const path = require('path');

const [jestBin, start, end, ...args] = process.argv.slice(2);
process.argv.splice(1, Infinity, jestBin, ...args.slice(Number(start), Number(end)));

// What jest-cli's bin does before it starts.
if (process.env.NODE_ENV == null) process.env.NODE_ENV = 'test';

/** The folder of `pkg` as found from `dir`, or null. */
function packageDir(pkg, dir) {
  try {
    return path.dirname(require.resolve(`${pkg}/package.json`, { paths: [dir] }));
  } catch {
    return null;
  }
}

/** `dir` through its symbolic links, or as it is when that fails. */
function realDir(dir) {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}

/** Sets `key` of the module `name` as found from `dir`, if it is there. */
function quiet(name, dir, key, value) {
  if (!dir) return;
  try {
    require(require.resolve(name, { paths: [dir] }))[key] = value;
  } catch {
    // Not there: nothing to quiet.
  }
}

// From jest's real folder, as node loads it: under pnpm `node_modules/jest`
// is a link into `.pnpm`, where jest-cli sits beside it.
const cli = packageDir('jest-cli', realDir(path.dirname(jestBin)));
const core = cli && packageDir('@jest/core', cli);
const messages = core && packageDir('jest-message-util', core);
for (const dir of [cli, core, core && packageDir('@jest/console', core), messages]) {
  quiet('chalk', dir, 'level', 0);
}
// The code frames of jest's messages (a console call's place, in the
// verbose console) are coloured by @babel/code-frame, which asks picocolors
// at each call.
quiet('picocolors', messages && packageDir('@babel/code-frame', messages), 'isColorSupported', false);

/**
 * With an order of files from the test history (TCRUNNER_FILE_ORDER), our
 * sequencer (tcrunner-jest-sequencer.cjs) takes the place of the one jest
 * resolved from the config and the arguments, and extends it: jest reads
 * its config through jest-config's `readConfigs`, which @jest/core calls
 * through the module's exports, so the resolved name is seen and replaced
 * there. Where that is not possible (a jest whose packages are laid out
 * otherwise) the framework's order stands.
 */
function orderFiles(core) {
  if (!process.env.TCRUNNER_FILE_ORDER || !core) return;
  let config;
  try {
    config = require(require.resolve('jest-config', { paths: [core] }));
  } catch {
    return;
  }
  const read = config.readConfigs;
  if (typeof read !== 'function') return;
  const ours = path.join(__dirname, 'tcrunner-jest-sequencer.cjs');
  try {
    config.readConfigs = async function (...given) {
      const found = await read.apply(this, given);
      const global = found && found.globalConfig;
      if (!global || typeof global.testSequencer !== 'string' || global.testSequencer === ours) return found;
      // Ours loads it with `require`, which an ES module sequencer may not
      // allow (node before 22.12): jest then keeps it, unordered.
      try {
        require(global.testSequencer);
      } catch (err) {
        process.stderr.write(
          `tcrunner: the test history cannot order jest's files: ${global.testSequencer} cannot be loaded with require (${err && err.code ? err.code : err})\n`,
        );
        return found;
      }
      process.env.TCRUNNER_JEST_SEQUENCER = global.testSequencer;
      const globalConfig = { ...global, testSequencer: ours };
      return { ...found, globalConfig: Object.isFrozen(global) ? Object.freeze(globalConfig) : globalConfig };
    };
  } catch {
    // Exports that cannot be replaced: the framework's order stands.
  }
}

if (cli) {
  orderFiles(core);
  require(cli).run(args);
} else {
  // A jest without jest-cli beside it: its bin reads the arguments from
  // process.argv, so they are handed over there.
  process.argv.splice(2, Infinity, ...args);
  require(jestBin);
}
