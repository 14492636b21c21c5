//! jest `--json --outputFile=F` reports (checked against jest 30.5.2,
//! `samples/jest.json`; the shape is unchanged since jest 24).
//!
//! Read: `testResults[]` per file (`name` absolute path, `status`, `message`,
//! `assertionResults[]`), and per test `ancestorTitles`, `title`, `status`,
//! `duration` (integer ms, `null` for skipped/todo → none), `failureMessages`,
//! `failureDetails[].matcherResult.{expected,actual}`, `location.line`
//! (1-based, only with `--testLocationInResults`); `wasInterrupted` (a
//! warning `Log` event).
//!
//! Tree: a file suite named by its path below the common directory of all
//! files (the basename for a single file; a Windows path, `C:\proj\a.test.js`,
//! is split at `\` too: [`super::file_names`]), one suite per
//! `ancestorTitles` entry, the test named by `title`.
//!
//! Outcomes, as the live jest reporter gives them: `passed` → passed (a
//! `test.failing` that failed as expected included), `failed` → failed,
//! `pending`/`skipped`/`disabled` → skipped, `todo` → todo, anything else →
//! error naming the status.
//! A failure's message is its text up to the first stack frame (`    at …`),
//! as JetBrains splits it; the stack and further failure messages are the
//! details.
//! Expected/actual come from the first `matcherResult` that has both:
//! strings raw, other values as pretty JSON, dropped when equal.
//!
//! File level: a file with no `assertionResults` but a `message` or
//! `status: failed` (an import error) gets an error pseudo-test
//! `Test suite failed to run`. jest's file `message` repeats every failed
//! test's text in a section of its own, headed `  ● ` and the test's titles
//! joined by ` › `; a file-level error (an `afterAll` hook's) is a further
//! section, headed `  ● Test suite failed to run`. Every section that is
//! not a failed test's (colour codes aside) becomes an error pseudo-test
//! `afterAll hook`, whether or not tests failed. A message with no section
//! at all beside tests is a custom runner's own report
//! (jest-runner-eslint's), not an error: dropped when a test failed or the
//! file passed, as the live reporter never sees it.
use std::io::BufRead;

use super::common::{Emitter, ReadError};
use super::js_json::{self, Flavor};

const JEST: Flavor = Flavor {
    tool: "jest",
    message_repeats_failures: true,
    // jest's titles are its describe blocks', and `describe('')` is one.
    titles_may_start_with_file: false,
};

/// Reads one jest JSON report.
pub(crate) fn read(input: impl BufRead, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    js_json::read(input, &JEST, out)
}

/// Reads one report from a file that can be read twice, in memory that does
/// not grow with it ([`js_json::read_twice`]).
pub(crate) fn read_twice(
    first: impl BufRead,
    second: impl BufRead,
    out: &mut Emitter<'_>,
) -> Result<(), ReadError> {
    js_json::read_twice(first, second, &JEST, out)
}

/// Sends an already parsed document (when detection had to parse it).
pub(crate) fn send(doc: serde_json::Value, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    js_json::send(js_json::from_value(doc)?, &JEST, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::testing::{
        counts, events_of, first_result, sample, suite_names, test_names,
    };
    use crate::event::Outcome;

    #[test]
    fn a_test_with_two_failures_has_two_sections() {
        // A test whose two snapshots both differ: jest keeps both failures
        // and writes a section for each under the same heading.
        let bytes = sample("jest-two-failures.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let c = counts(&events);
        assert_eq!((c[&Outcome::Failed], c[&Outcome::Error]), (2, 0));
        assert_eq!(test_names(&events), ["fails two snapshots", "fails once"]);
    }

    #[test]
    fn counts_match_the_report() {
        let bytes = sample("jest.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let n = |k: &str| doc[k].as_u64().unwrap();
        let c = counts(&events);
        assert_eq!(
            c[&Outcome::Passed] + c[&Outcome::Xfail],
            n("numPassedTests")
        );
        assert_eq!(c[&Outcome::Failed], n("numFailedTests"));
        assert_eq!(c[&Outcome::Skipped], n("numPendingTests"));
        assert_eq!(c[&Outcome::Todo], n("numTodoTests"));
        // The import-error file is a pseudo-test jest does not count.
        assert_eq!(c[&Outcome::Error], n("numRuntimeErrorTestSuites"));
    }

    #[test]
    fn an_after_all_error_beside_failed_tests_is_kept() {
        // b1-hook.test.js: `afterAll` throws in a file where another test failed.
        let bytes = sample("jest-afterall.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let c = counts(&events);
        assert_eq!((c[&Outcome::Failed], c[&Outcome::Error]), (1, 1));
        let error = first_result(&events, Outcome::Error).expect("an error pseudo-test");
        assert_eq!(error.message.as_deref(), Some("afterAll broke"));
        let details = error.details.as_deref().unwrap_or_default();
        assert!(
            details.starts_with("● Test suite failed to run"),
            "{details}"
        );
        assert!(!details.contains("Received: 1"), "{details}");
        let names = test_names(&events);
        assert_eq!(names, ["ok", "fails", js_json::FILE_ERROR]);
    }

    #[test]
    fn a_custom_runners_own_file_message_is_no_hook_error() {
        // jest-runner-eslint's shape: its lint report as the file's
        // message, with no `●` section, beside the test that carries the
        // failure; and a passed file whose report only warns.
        let bytes = sample("jest-custom-runner.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        assert_eq!(test_names(&events), ["my-rule", "ESLint"]);
        let c = counts(&events);
        assert_eq!((c[&Outcome::Failed], c[&Outcome::Error]), (1, 0));
        let failed = first_result(&events, Outcome::Failed).expect("my-rule failed");
        assert_eq!(failed.message.as_deref(), Some("something is wrong"));
    }

    #[test]
    fn windows_paths_are_named_below_their_common_folder() {
        let json = r#"{"numTotalTestSuites":2,"numRuntimeErrorTestSuites":0,"testResults":[
          {"name":"C:\\proj\\src\\math.test.js","status":"passed","message":"","assertionResults":[
            {"ancestorTitles":[],"title":"t1","status":"passed"}]},
          {"name":"C:\\proj\\src\\deep\\hook.test.js","status":"passed","message":"","assertionResults":[
            {"ancestorTitles":[],"title":"t2","status":"passed"}]}]}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        assert_eq!(suite_names(&events), ["math.test.js", "deep/hook.test.js"]);
    }
}
