//! vitest `--reporter=json --outputFile=F` reports (checked against vitest
//! 5.1.1, `samples/vitest.json`; 3.2.7 and 4.1.12 write the same shape, with
//! `tags` from 4 on and `benchmarks` from 5 on).
//!
//! Read: the jest shape ([`super::jest_json`] lists the fields) minus
//! `failureDetails` and `wasInterrupted`; `duration` is float ms
//! (truncated), absent for skip/todo; `location` only with
//! `--includeTaskLocation`; `tags` become node tags.
//!
//! Tree and outcomes as for jest (`test.fails` is `passed` here too); there
//! are no expected/actual values. vitest 1 starts every test's
//! `ancestorTitles` with an empty title, its file's default suite: when
//! every test of a file has one, it is dropped, so no file gets an unnamed
//! suite (an empty title elsewhere is a `describe('')` and stays). Under
//! `--typecheck`, vitest 3 and 4 start the titles of a type-check file's
//! tests (`meta.typecheck`) with the file's path, which is dropped the same
//! way (`samples/vitest-typecheck.json`).
//!
//! File level: a file with no `assertionResults` (an import error) gets an
//! error pseudo-test `Test suite failed to run` carrying the file `message`.
//! vitest's file `message` holds only file-level errors, so a file that has
//! tests and a non-empty `message` gets an error pseudo-test beside them.
//! When a `beforeAll` hook fails, vitest marks the tests under it `skipped`
//! with no error and the file `failed`, and keeps the hook's error in the
//! file's `message` when the hook is the file's own, and nowhere when it is
//! a `describe`'s ([vitest#4516]): those tests stay skipped, and a failed
//! file with no failed test and no message gets the pseudo-test too, saying
//! that the error was not kept. The pseudo-test
//! is `afterAll hook` (the live reporter's name for a suite error no test
//! carries) when every test of the file ran, and `beforeAll/afterAll hook`
//! when one was skipped, as the report cannot tell the two hooks apart then.
//!
//! [vitest#4516]: https://github.com/vitest-dev/vitest/issues/4516
use std::io::BufRead;

use super::common::{Emitter, ReadError};
use super::js_json::{self, Flavor};

const VITEST: Flavor = Flavor {
    tool: "vitest",
    message_repeats_failures: false,
    titles_may_start_with_file: true,
};

/// Reads one vitest JSON report.
pub(crate) fn read(input: impl BufRead, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    js_json::read(input, &VITEST, out)
}

/// Reads one report from a file that can be read twice, in memory that does
/// not grow with it ([`js_json::read_twice`]).
pub(crate) fn read_twice(
    first: impl BufRead,
    second: impl BufRead,
    out: &mut Emitter<'_>,
) -> Result<(), ReadError> {
    js_json::read_twice(first, second, &VITEST, out)
}

/// Sends an already parsed document (when detection had to parse it).
pub(crate) fn send(doc: serde_json::Value, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    js_json::send(js_json::from_value(doc)?, &VITEST, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::testing::{counts, events_of, sample, suite_names};
    use crate::event::{LogLevel, Outcome, TestEvent};

    #[test]
    fn counts_match_the_report() {
        let bytes = sample("vitest.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let n = |k: &str| doc[k].as_u64().unwrap();
        let c = counts(&events);
        assert_eq!(c[&Outcome::Passed], n("numPassedTests"));
        assert_eq!(c[&Outcome::Failed], n("numFailedTests"));
        assert_eq!(c[&Outcome::Skipped], n("numPendingTests"));
        assert_eq!(c[&Outcome::Todo], n("numTodoTests"));
        // broken.test.js failed to import.
        assert_eq!(c[&Outcome::Error], 1);
        // math.test.js lost its beforeAll error, but has failed tests: no warning.
        assert!(!events.iter().any(|e| matches!(
            e,
            TestEvent::Log {
                level: LogLevel::Warning,
                ..
            }
        )));
    }

    #[test]
    fn before_all_failure_keeps_skips_and_adds_the_file_error() {
        let json = r#"{"numTotalTestSuites":2,"testResults":[
          {"name":"/p/a.test.js","status":"failed","message":"hook boom","assertionResults":[
            {"ancestorTitles":["d"],"title":"t1","status":"skipped","failureMessages":[]},
            {"ancestorTitles":["d"],"title":"t2","status":"skipped","failureMessages":[]}]},
          {"name":"/p/b.test.js","status":"failed","message":"","assertionResults":[
            {"ancestorTitles":[],"title":"t3","status":"skipped","failureMessages":[]}]},
          {"name":"/p/c.test.js","status":"failed","message":"teardown boom","assertionResults":[
            {"ancestorTitles":[],"title":"t4","status":"passed","failureMessages":[]}]}]}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        let c = counts(&events);
        assert_eq!(c[&Outcome::Skipped], 3);
        // b.test.js failed with no error kept (a hook's, as vitest's JSON
        // drops them): a failed node says so, and the run fails.
        assert_eq!(c[&Outcome::Error], 3);
        // Beside skipped tests the error may be either hook's; where every
        // test ran, only an afterAll's.
        let names: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                TestEvent::Test(node) if node.name.contains("hook") => Some(node.name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            names,
            [
                js_json::HOOK_ERROR,
                js_json::HOOK_ERROR,
                js_json::FILE_ERROR
            ]
        );
        let errors: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                TestEvent::Finished(r) if r.outcome == Outcome::Error => r.message.as_deref(),
                _ => None,
            })
            .collect();
        assert_eq!(errors[0], "hook boom");
        assert_eq!(errors[2], "teardown boom");
        assert!(
            errors[1].starts_with("vitest marked the file failed but recorded no error"),
            "{errors:?}"
        );
    }

    #[test]
    fn vitest_1s_unnamed_file_suite_is_dropped() {
        let bytes = sample("vitest1.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let names = suite_names(&events);
        assert!(!names.contains(&""), "{names:?}");
        assert_eq!(
            names,
            [
                "broken.test.ts",
                "each.test.ts",
                "block 1",
                "block 2",
                "empty.test.ts",
                "math.test.ts",
                "outer",
                "inner",
                "hooky"
            ]
        );
        // A `describe('')` beside other tests (vitest 2 and later) stays.
        let json = r#"{"numTotalTestSuites":1,"testResults":[{"name":"/p/a.test.js",
          "status":"passed","message":"","assertionResults":[
            {"ancestorTitles":["", "d"],"title":"t1","status":"passed"},
            {"ancestorTitles":[],"title":"t2","status":"passed"}]}]}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        assert_eq!(suite_names(&events), ["a.test.js", "", "d"]);
    }

    #[test]
    fn a_type_check_files_own_suite_is_dropped() {
        // vitest 3 and 4 under --typecheck start every test of a `.test-d.ts`
        // file's `ancestorTitles` with the file's path: the live tree has no
        // such suite, the file's node is already that suite.
        let bytes = sample("vitest-typecheck.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        assert_eq!(
            suite_names(&events),
            ["plain.test.ts", "types.test-d.ts", "strings"]
        );
        assert_eq!(counts(&events)[&Outcome::Failed], 1);
        // A describe named as its file, in a run without type checks, stays.
        let json = r#"{"numTotalTestSuites":1,"testResults":[{"name":"/p/a.test.js",
          "status":"passed","message":"","assertionResults":[
            {"ancestorTitles":["a.test.js"],"title":"t1","status":"passed","meta":{}}]}]}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        assert_eq!(suite_names(&events), ["a.test.js", "a.test.js"]);
    }
}
