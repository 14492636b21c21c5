'use strict';
//! tcrunner's jest test sequencer (`--ff`, `--nf`): the sequencer the
//! project would use (jest's own, or its configured `testSequencer`), with
//! the test history's order of files on top of its `sort`.
//!
//! Our launcher (tcrunner-jest-launch.cjs) puts this file in jest's global
//! config in place of the sequencer jest resolved, which it names in
//! TCRUNNER_JEST_SEQUENCER; everything else (`shard`, `cacheResults`,
//! `allFailedTests`, the constructor) is that sequencer's, by inheritance.

const { readFileOrder, orderItems } = require('./tcrunner-file-order.cjs');

/** The class a sequencer module exports, as jest's `requireOrImportModule` takes it. */
function sequencerClass(file) {
  const loaded = require(file);
  if (typeof loaded === 'function') return loaded;
  return loaded && typeof loaded.default === 'function' ? loaded.default : loaded;
}

const Inner = sequencerClass(process.env.TCRUNNER_JEST_SEQUENCER);

class TcrunnerSequencer extends Inner {
  async sort(tests) {
    const sorted = await super.sort(tests);
    return orderItems(sorted, (test) => test.path, readFileOrder());
  }
}

module.exports = TcrunnerSequencer;
