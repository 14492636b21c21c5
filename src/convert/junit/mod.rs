//! JUnit XML reports, read as a stream: events go out as each `</testcase>`
//! closes, and only the current test case and the open suites are kept, so
//! memory stays flat in the number of tests (a single test's output or
//! failure text is held whole).
//!
//! Reading the XML and mapping what each producer means by it are apart:
//!
//! | file | job |
//! | --- | --- |
//! | [`read`](mod@read) | the XML: quick-xml's events, which element is open, text and attributes decoded, errors with their position |
//! | [`fast`] | fast paths of the XML reading for a plainly written empty `<testcase/>` and plainly written attributes |
//! | [`case`] | one `<testcase>`: its attributes, and its verdict from `<failure>`, `<error>`, `<skipped>` (gtest's `status`, pytest's xfail) |
//! | [`time`] | the `time` attribute in any writer's number format (decimal commas, thousands separators) |
//! | [`suites`] | the tree: a node per `<testsuite>`, the suites a classname adds, each test under them, classes written apart (pytest-xdist) |
//! | [`classname`] | what a `classname` says: Surefire (suite per class, `@Nested`), jest-junit, mocha-junit-reporter, PHPUnit, gtest, vitest |
//! | [`pytest`] | pytest's `--junitxml`: xunit1 and xunit2, its run suite, folders and modules, collection errors, teardown errors |
//! | [`ant`] | Ant's `<failure>`/`<error>` directly in a `<testsuite>` |
//!
//! Checked against pytest 9.2.0 `--junitxml` in its default xunit2 and in
//! xunit1 with `junit_logging=all`, vitest 5.1.1 `--reporter=junit`, the
//! jest-junit 16 defaults and Maven Surefire 3; the gtest, PHPUnit 10 and
//! mocha-junit-reporter shapes as their docs show them.
mod ant;
mod case;
mod classname;
mod fast;
mod pytest;
mod read;
mod suites;
#[cfg(test)]
mod tests;
mod time;

pub(crate) use read::read;
