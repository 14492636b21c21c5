//! `tcrunner check`: validates a service-message stream as a consumer would.
//!
//! Any stream, ours or another reporter's, is read through the push parser and
//! held to the rules of the consumer it addresses: IntelliJ's id-based
//! converter when tree messages carry `nodeId` (`id_tree`), the TeamCity
//! server's name and flow rules otherwise (`name_tree`). Every other test in
//! the project can pipe tcrunner's output through `check_bytes` and assert on
//! the `Report`.
//!
//! A message glued after other text on its line is reported (IntelliJ before
//! about 2019 did not parse it; current versions split text at every
//! `##teamcity[`, so a stream that works everywhere starts each message on
//! its own line) and then checked as if it had started the line, the way
//! current consumers read it, so one misplaced newline gives one violation.
mod checker;
mod id_tree;
mod name_tree;
mod report;
mod run;
mod tree_msg;

#[cfg(test)]
mod tests;

#[allow(unused_imports)] // `CheckError` is for callers that wrap it.
pub(crate) use run::{run, CheckError};

// The library surface for the crate's tests: pipe a stream through
// `check_bytes` and assert on the `Report`.
#[cfg(test)]
#[allow(unused_imports)]
pub(crate) use checker::{check_bytes, Checker};
#[cfg(test)]
#[allow(unused_imports)]
pub(crate) use report::{Mode, Report, Rule, TestCounts, Violation};
