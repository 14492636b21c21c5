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
//! files (the basename for a single file), one suite per `ancestorTitles`
//! entry, the test named by `title`.
//!
//! Outcomes, as the live jest reporter gives them: `passed` → passed (a
//! `test.failing` that failed as expected included), `failed` → failed,
//! `pending`/`skipped`/`disabled` → skipped, `todo` → todo, anything else →
//! error naming the status.
//! A failure's message is its text up to the first stack frame (`    at …`),
//! as JetBrains splits it; the stack and further failure messages are the
//! details. Expected/actual come from the first `matcherResult` that has both:
//! strings raw, other values as pretty JSON, dropped when equal.
//!
//! File level: a file with no `assertionResults` but a `message` or
//! `status: failed` (an import error) gets an error pseudo-test
//! `Test suite failed to run`. jest's file `message` repeats every failed
//! test, so a file whose tests all passed but that has a `message` (an
//! `afterAll` error) gets an error pseudo-test `afterAll hook`.
use std::io::BufRead;

use super::common::{Emitter, ReadError};
use super::js_json::{self, Flavor};

const JEST: Flavor = Flavor {
    tool: "jest",
    message_repeats_failures: true,
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
    use crate::convert::testing::{counts, events_of, sample};
    use crate::event::Outcome;

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
}
