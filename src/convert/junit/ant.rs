//! Apache Ant's `XMLJUnitResultFormatter` writes a class-level error (a
//! failed static initialiser, say) as a `<failure>` or `<error>` directly in
//! the `<testsuite>`, and counts it as a test: it becomes a failed or error
//! test of its own in that suite, named by the element's `type`, else
//! [`SUITE_FAILURE`]/[`SUITE_ERROR`], with its message and text, so the
//! report's failure is not lost.
use super::case::{describe, Problem};
use crate::convert::common::non_empty;
use crate::event::{Outcome, TestResult};

/// The name of the test for an `<error>` with no `type` directly in a
/// `<testsuite>`.
pub(super) const SUITE_ERROR: &str = "suite error";
/// The name of the test for a `<failure>` with no `type` directly in a
/// `<testsuite>`.
pub(super) const SUITE_FAILURE: &str = "suite failure";

/// The name and result of the test a `<failure>` (or, with `is_error`, an
/// `<error>`) directly in a `<testsuite>` becomes.
pub(super) fn suite_problem(is_error: bool, problem: Problem) -> (String, TestResult) {
    let fallback = if is_error { SUITE_ERROR } else { SUITE_FAILURE };
    let name = non_empty(problem.kind.as_deref()).unwrap_or_else(|| fallback.to_string());
    let (message, details) = describe(problem);
    let result = TestResult {
        outcome: if is_error {
            Outcome::Error
        } else {
            Outcome::Failed
        },
        message,
        details,
        ..TestResult::default()
    };
    (name, result)
}
