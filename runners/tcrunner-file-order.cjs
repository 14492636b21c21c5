'use strict';
//! The test history's order of test files for jest and vitest (`--ff`,
//! `--nf`), which order files and leave the order inside a file to it.
//! Written next to the jest sequencer and the vitest reporter, which load it
//! from there.
//!
//! tcrunner writes a JSON file and names it in TCRUNNER_FILE_ORDER:
//! `{"first": [path], "new_first": bool, "known": {path: last run},
//! "files": [path]}`, paths absolute, a last run in seconds since the Unix
//! epoch. The framework's own sequencer sorts the files first (its
//! failed-first and duration order, or the project's own sequencer);
//! `order` then keeps only the files of `files`, when it is there (a
//! shard's, a resumed `--sw` run's, a TeamCity batch's: tcrunner passes
//! them as paths too, but the framework also runs whatever the user's own
//! filters after `--` match), and moves, keeping that order within each
//! group:
//!
//! - the files of `first` (those that hold a recorded failure, `--ff`) to
//!   the front;
//! - with `new_first`, the new files to the front of that: those the history
//!   knows no test of, and those modified since their tests last ran, newest
//!   first by modification time (pytest's `--nf`).

const fs = require('fs');
const path = require('path');

/** The order tcrunner asked for, or null (none asked, or unreadable). */
function readFileOrder() {
  const file = process.env.TCRUNNER_FILE_ORDER;
  if (!file) return null;
  try {
    const order = JSON.parse(fs.readFileSync(file, 'utf8'));
    return order && typeof order === 'object' ? order : null;
  } catch {
    return null;
  }
}

/** `file` through its symbolic links, as both sides may name it either way. */
function real(file) {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(String(file));
  }
}

/** A file's modification time in ms, 0 when it cannot be read. */
function modified(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/** `items` split by `test`, keeping the order on both sides, the matching first. */
function partition(items, test) {
  const front = [];
  const back = [];
  for (const item of items) (test(item) ? front : back).push(item);
  return [front, back];
}

/**
 * `items` (the framework's own order) reordered as `order` asks; `pathOf`
 * gives an item's file. A new array; the items are not changed.
 */
function orderItems(items, pathOf, order) {
  if (!order || !Array.isArray(items)) return items;
  const key = new Map(items.map((item) => [item, real(pathOf(item))]));
  let result = [...items];
  if (Array.isArray(order.files)) {
    const files = new Set(order.files.map(real));
    result = result.filter((item) => files.has(key.get(item)));
  }
  const first = Array.isArray(order.first) ? new Set(order.first.map(real)) : new Set();
  if (first.size) {
    const [front, back] = partition(result, (item) => first.has(key.get(item)));
    result = front.concat(back);
  }
  if (order.new_first) {
    const known = new Map();
    for (const [file, lastRun] of Object.entries(order.known || {})) known.set(real(file), Number(lastRun) || 0);
    const mtime = new Map(items.map((item) => [item, modified(key.get(item))]));
    // A last run is whole seconds: a change within that second counts as
    // later, so a file changed since it ran is never taken for old.
    const isNew = (item) => !known.has(key.get(item)) || mtime.get(item) >= known.get(key.get(item)) * 1000;
    const [front, back] = partition(result, isNew);
    // Array.prototype.sort is stable: equal times keep the order above.
    front.sort((a, b) => mtime.get(b) - mtime.get(a));
    result = front.concat(back);
  }
  return result;
}

module.exports = { readFileOrder, orderItems };
