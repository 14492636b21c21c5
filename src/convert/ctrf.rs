//! CTRF (Common Test Report Format) files, read leniently as the spec's
//! readers should be (checked against pytest-json-ctrf 0.6.1 on pytest 9.2.0,
//! `samples/pytest-ctrf.json`, jest-ctrf-json-reporter 0.0.11 on jest 30, and
//! the `ctrf-io/ctrf` schema 1.0.0).
//!
//! Read: `results.summary.start` (to tell the time unit) and `results.tests[]`
//! with `name`, `status`, `duration`, `suite[]`, `filePath`, `line`,
//! `message`, `trace`, `rawStatus`, `tags`, `stdout[]`, `stderr[]`. Lenient:
//! `reportFormat` may be missing, snake_case `raw_status`/`file_path` (older
//! pytest-json-ctrf) are accepted, numbers may be floats or strings, and
//! durations are taken as seconds when `summary.start` is an epoch in seconds
//! (older producers), else as ms.
//!
//! A report tcrunner wrote (`generatedBy: tcrunner`) is taken as written:
//! its `suite` entries and `name` are never split or shortened, and a test
//! with no `suite` stays at the top level.
//!
//! Tree: one suite per `suite[]` entry (the first is a file suite when it
//! equals `filePath` or its last component), or a file suite from `filePath`
//! when there is no `suite`. A `suite` that is one string with ` > ` in it
//! (jest-ctrf-json-reporter's `a.test.js > outer > inner`) is split there.
//! The test's name is `name` without the `a::b::` prefix that repeats its
//! suites (pytest writes the full nodeid) or the `outer inner ` prefix that
//! repeats its describe blocks (jest's full name).
//!
//! Outcomes: `passed` → passed (`rawStatus: xpassed` → xpass), `failed` →
//! failed (`rawStatus` `setup_failed`/`teardown_failed` → error, as pytest
//! counts them), `skipped` → skipped (`rawStatus: xfailed` → xfail, its reason
//! from the `xfail::reason_…` tag), `pending` → skipped, `other`, `error` and
//! anything else → error, except `rawStatus: todo` → todo (jest's
//! `test.todo`, which jest-ctrf-json-reporter writes as `other`). tcrunner's
//! own `rawStatus` words (`--ctrf`) read back as they were written: `xpass`,
//! `error`, `xfail`, and `stopped`/`collected` (`other`) → skipped. The message
//! is `message`, else the first `E ` line of a pytest `trace`; the details are
//! `trace`.
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use super::common::{line, non_empty, to_ms, Emitter, Grouper, ReadError, SuiteSpec, TestNode};
use super::lenient;
use crate::event::{Node, NodeKind, Outcome, Stream, TestResult};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Report {
    #[serde(deserialize_with = "lenient::or_default")]
    results: Results,
    /// `tcrunner` for tcrunner's own reports, whose names and suites are
    /// taken as written.
    #[serde(rename = "generatedBy", deserialize_with = "lenient::string")]
    generated_by: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Results {
    #[serde(deserialize_with = "lenient::or_default")]
    summary: Summary,
    #[serde(deserialize_with = "lenient::list")]
    tests: Vec<Test>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Summary {
    #[serde(deserialize_with = "lenient::f64")]
    start: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Test {
    #[serde(deserialize_with = "lenient::string")]
    name: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    status: Option<String>,
    #[serde(deserialize_with = "lenient::f64")]
    duration: Option<f64>,
    #[serde(deserialize_with = "lenient::f64")]
    start: Option<f64>,
    #[serde(deserialize_with = "lenient::strings")]
    suite: Vec<String>,
    #[serde(alias = "file_path", deserialize_with = "lenient::string")]
    file_path: Option<String>,
    #[serde(deserialize_with = "lenient::f64")]
    line: Option<f64>,
    #[serde(deserialize_with = "lenient::string")]
    message: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    trace: Option<String>,
    #[serde(alias = "raw_status", deserialize_with = "lenient::string")]
    raw_status: Option<String>,
    #[serde(deserialize_with = "lenient::strings")]
    tags: Vec<String>,
    #[serde(deserialize_with = "lenient::strings")]
    stdout: Vec<String>,
    #[serde(deserialize_with = "lenient::strings")]
    stderr: Vec<String>,
}

/// Reads one CTRF report.
pub(crate) fn read(input: impl Read, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    let report: Report = serde_json::from_reader(input).map_err(ReadError::from_json)?;
    send_report(report, out)
}

/// Sends an already parsed document (when detection had to parse it).
pub(crate) fn send(doc: Value, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    send_report(
        serde_json::from_value(doc).map_err(ReadError::from_value)?,
        out,
    )
}

/// How jest-ctrf-json-reporter joins the parts of a `suite` string.
const SUITE_SEPARATOR: &str = " > ";

/// Epoch values below this are seconds, not milliseconds (it is 1973 in ms).
const EPOCH_SECONDS_LIMIT: f64 = 1e11;

fn send_report(report: Report, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    let start = report
        .results
        .summary
        .start
        .or_else(|| report.results.tests.iter().find_map(|t| t.start));
    let unit_ms = match start {
        Some(s) if s > 0.0 && s < EPOCH_SECONDS_LIMIT => 1000.0,
        _ => 1.0,
    };
    let ours = report.generated_by.as_deref() == Some("tcrunner");
    let mut tree = Grouper::default();
    for mut test in report.results.tests {
        // jest-ctrf-json-reporter writes `suite` as one string, the file's
        // name and the describe blocks joined with ` > `.
        if let [one] = &test.suite[..] {
            if one.contains(SUITE_SEPARATOR) && !ours {
                test.suite = one.split(SUITE_SEPARATOR).map(str::to_string).collect();
            }
        }
        let file = test.file_path.clone().filter(|f| !f.is_empty());
        let first_is_file = match (test.suite.first(), &file) {
            (Some(first), Some(file)) => {
                file == first
                    || file
                        .strip_suffix(first.as_str())
                        .is_some_and(|dir| dir.ends_with(['/', '\\']))
            }
            _ => false,
        };
        let mut path: Vec<SuiteSpec> = test
            .suite
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let is_file = i == 0 && first_is_file;
                let mut spec = SuiteSpec::new(
                    s.clone(),
                    if is_file {
                        NodeKind::File
                    } else {
                        NodeKind::Suite
                    },
                );
                spec.file = file.clone();
                spec
            })
            .collect();
        if path.is_empty() && !ours {
            if let Some(f) = &file {
                let mut spec = SuiteSpec::new(f.clone(), NodeKind::File);
                spec.file = file.clone();
                path.push(spec);
            }
        }
        let full = test
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "(unnamed test)".into());
        // pytest writes the nodeid (`file::Class::test`), jest its full name
        // (the describe blocks and the title joined with spaces).
        let nodeid_prefix = format!("{}::", test.suite.join("::"));
        let describes = &test.suite[usize::from(first_is_file)..];
        let full_name_prefix = format!("{} ", describes.join(" "));
        let name = match full.strip_prefix(&nodeid_prefix) {
            _ if ours => full,
            Some(rest) if !test.suite.is_empty() && !rest.is_empty() => rest.to_string(),
            _ => match full.strip_prefix(&full_name_prefix) {
                Some(rest) if !describes.is_empty() && !rest.is_empty() => rest.to_string(),
                _ => full,
            },
        };
        let mut output = Vec::new();
        if !test.stdout.is_empty() {
            output.push((Stream::Stdout, lines(&test.stdout)));
        }
        if !test.stderr.is_empty() {
            output.push((Stream::Stderr, lines(&test.stderr)));
        }
        let node = Node {
            name,
            file,
            line: line(test.line, 0),
            ..Node::default()
        };
        let result = result(&test, unit_ms);
        tree.add(
            &path,
            TestNode {
                node,
                output,
                result,
            },
        );
    }
    tree.emit(out)
}

fn result(test: &Test, unit_ms: f64) -> TestResult {
    let status = test.status.as_deref().unwrap_or("").to_ascii_lowercase();
    let raw = test.raw_status.as_deref().unwrap_or("");
    let outcome = match status.as_str() {
        "passed" if matches!(raw, "xpassed" | "xpass") => Outcome::Xpass,
        "passed" => Outcome::Passed,
        "failed" if matches!(raw, "setup_failed" | "teardown_failed" | "error") => Outcome::Error,
        "failed" => Outcome::Failed,
        "skipped" if matches!(raw, "xfailed" | "xfail") => Outcome::Xfail,
        // tcrunner's own: a test the run ended under, or one only collected.
        "other" if matches!(raw, "stopped" | "collected") => Outcome::Skipped,
        // jest-ctrf-json-reporter: a `test.todo` is `other` with `rawStatus: todo`.
        _ if raw.eq_ignore_ascii_case("todo") => Outcome::Todo,
        "skipped" | "pending" => Outcome::Skipped,
        _ => Outcome::Error,
    };
    let trace = non_empty(test.trace.as_deref());
    let mut message = non_empty(test.message.as_deref());
    if outcome == Outcome::Xfail && message.is_none() {
        message = test
            .tags
            .iter()
            .find_map(|t| non_empty(t.strip_prefix("xfail::reason_")));
    }
    if message.is_none() && matches!(outcome, Outcome::Failed | Outcome::Error | Outcome::Xfail) {
        // pytest's trace marks the exception lines with `E `.
        message = trace
            .as_deref()
            .and_then(|t| t.lines().find(|l| l.starts_with("E ")))
            .map(|l| l[1..].trim().to_string());
    }
    if outcome == Outcome::Error
        && message.is_none()
        && !matches!(status.as_str(), "other" | "error")
    {
        message = Some(format!("unknown status '{status}'"));
    }
    TestResult {
        outcome,
        duration_ms: test.duration.and_then(|d| to_ms(d, unit_ms)),
        message,
        details: trace,
        ..TestResult::default()
    }
}

/// CTRF output is a list of lines.
fn lines(items: &[String]) -> String {
    let mut text = items.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::testing::{counts, events_of, first_result, sample, test_names};
    use crate::event::TestEvent;

    #[test]
    fn counts_match_the_summary() {
        let bytes = sample("pytest-ctrf.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let n = |k: &str| doc["results"]["summary"][k].as_u64().unwrap();
        let c = counts(&events);
        assert_eq!(c[&Outcome::Passed] + c[&Outcome::Xpass], n("passed"));
        assert_eq!(c[&Outcome::Failed] + c[&Outcome::Error], n("failed"));
        assert_eq!(
            c[&Outcome::Skipped] + c[&Outcome::Xfail],
            n("skipped") + n("pending")
        );
        assert_eq!(c[&Outcome::Error], 2, "setup and teardown errors");
        assert_eq!(c[&Outcome::Xfail], 1);
        let names = test_names(&events);
        assert!(names.contains(&"test_add[2-3-6]"), "{names:?}");
    }

    #[test]
    fn lenient_shapes() {
        let json = r#"{"results":{"tool":{"name":"old"},"summary":{"start":1700000000.5},"tests":[
          {"name":"a","status":"passed","duration":0.25,"file_path":"t.py","line":"7"},
          {"name":"b","status":"error","duration":"x","raw_status":"boom","stdout":["l1","l2"]},
          {"name":"c","status":"weird"},
          {"name":"d","status":"pending"},
          "not a test"]}}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        let c = counts(&events);
        assert_eq!(
            (
                c[&Outcome::Passed],
                c[&Outcome::Error],
                c[&Outcome::Skipped]
            ),
            (1, 2, 1)
        );
        let a = first_result(&events, Outcome::Passed);
        assert_eq!(a.unwrap().duration_ms, Some(250), "seconds, by the epoch");
        assert!(events.iter().any(|e| matches!(e, TestEvent::Test(n) if n.line == Some(7) && n.file.as_deref() == Some("t.py"))));
        assert!(events
            .iter()
            .any(|e| matches!(e, TestEvent::Output { text, .. } if text == "l1\nl2\n")));
    }

    /// The shape jest-ctrf-json-reporter 0.0.11 writes (specVersion 0.0.0).
    #[test]
    fn jest_ctrf_suite_string_and_todo() {
        let json = r#"{"reportFormat":"CTRF","results":{"tool":{"name":"jest"},
          "summary":{"tests":3,"passed":1,"failed":0,"pending":0,"skipped":0,"other":1,"start":1795313598395},
          "tests":[
          {"name":"outer inner.dots passes","duration":21,"status":"passed","rawStatus":"passed",
           "filePath":"/p/__tests__/a.test.js","suite":"a.test.js > outer > inner.dots"},
          {"name":"outer inner.dots todo one","duration":0,"status":"other","rawStatus":"todo",
           "filePath":"/p/__tests__/a.test.js","suite":"a.test.js > outer > inner.dots"},
          {"name":"top level","duration":1,"status":"passed","rawStatus":"passed",
           "filePath":"/p/__tests__/a.test.js","suite":"a.test.js"}]}}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        let c = counts(&events);
        assert_eq!((c[&Outcome::Passed], c[&Outcome::Todo]), (2, 1));
        let tree: Vec<(NodeKind, &str)> = events
            .iter()
            .filter_map(|e| match e {
                TestEvent::Suite(n) => Some((n.kind, n.name.as_str())),
                TestEvent::Test(n) => Some((NodeKind::Test, n.name.as_str())),
                _ => None,
            })
            .collect();
        assert_eq!(
            tree,
            [
                (NodeKind::File, "a.test.js"),
                (NodeKind::Suite, "outer"),
                (NodeKind::Suite, "inner.dots"),
                (NodeKind::Test, "passes"),
                (NodeKind::Test, "todo one"),
                (NodeKind::Test, "top level"),
            ]
        );
    }
}
