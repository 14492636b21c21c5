//! Every exit code tcrunner uses, named once. The README's table mirrors this file.

/// Everything passed (or `check` found the stream clean).
pub(crate) const SUCCESS: i32 = 0;
/// Tests failed (or `check` found violations). pytest's own codes 2-5 pass through.
pub(crate) const TESTS_FAILED: i32 = 1;
/// No tests were collected or selected (pytest's code, used for every framework).
pub(crate) const NO_TESTS: i32 = 5;
/// The command line is wrong.
pub(crate) const USAGE: i32 = 64;
/// An input report or stream is malformed; what was read before the problem is still reported.
pub(crate) const DATA_ERROR: i32 = 65;
/// An input file or directory does not exist or cannot be read.
pub(crate) const NO_INPUT: i32 = 66;
/// The framework (or its interpreter / node) is missing or too old.
pub(crate) const FRAMEWORK_UNAVAILABLE: i32 = 69;
/// A bug in tcrunner.
pub(crate) const INTERNAL: i32 = 70;
/// The framework died before finishing the run (signal, `os._exit`, out of memory).
pub(crate) const FRAMEWORK_CRASHED: i32 = 71;
/// Our reporter never reported from inside the framework (failed to load, side channel closed).
pub(crate) const REPORTER_FAILED: i32 = 73;
/// Writing the output failed for a reason other than the reader going away.
pub(crate) const IO_ERROR: i32 = 74;
/// Under a `--pass-policy` other than `framework`: the run itself failed
/// (the framework did not start or never reported, crashed, was stopped,
/// collected nothing or could not collect a file), whatever the tests did.
pub(crate) const INFRASTRUCTURE: i32 = 75;
/// A test or the whole run exceeded its time limit.
pub(crate) const TIMEOUT: i32 = 124;
/// tcrunner itself was stopped by signal `n`: the code is 128 + n.
pub(crate) const SIGNAL_BASE: i32 = 128;
