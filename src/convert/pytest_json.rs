//! pytest-json-report files (`pytest --json-report`; checked against
//! pytest-json-report 1.5.0 on pytest 9.2.0, `samples/pytest-report.json`).
//!
//! Read: `root`, `tests[]` with `nodeid`, `lineno` (0-based), `outcome`, and
//! per phase (`setup`, `call`, `teardown`) `duration` (s), `outcome`,
//! `crash.message`, `longrepr` (a string, or for skips the repr of a
//! `(path, line, "Skipped: reason")` tuple), `stdout`, `stderr`; and
//! `collectors[]` with `nodeid`, `outcome`, `longrepr`.
//!
//! Tree from the nodeid `a/b/test_x.py::Cls::Inner::test[p]`: `a`, `b` are
//! directory suites, `test_x.py` a file suite, `Cls`, `Inner` class suites,
//! `test[p]` the test (a `[…]` parameter id may hold `/` or `::`). Files are
//! made absolute with `root`; the test's line is `lineno + 1`; its meta is the
//! name with parameters.
//!
//! Outcomes: `passed`, `failed`, `error`, `skipped`, `xfailed` → xfail,
//! `xpassed` → xpass; anything else is an error naming it. The message is
//! the `crash.message` of the first phase that failed (setup, call,
//! teardown; the call's for xfail; else the first line of its `longrepr`),
//! the details its `longrepr` and those of later phases that failed; a skip's
//! message is the reason from its `longrepr`. The duration is the sum of the
//! phases. Each phase's `stdout`/`stderr` is the test's output, in order.
//!
//! A collector with `outcome: failed` (an import error, which pytest keeps out
//! of `tests` and `summary`) becomes an error pseudo-test `<collection error>`
//! (the live pytest plugin's name) under that file's suite, its message the
//! last `E ` line of the `longrepr`; one with `outcome: skipped` (a module
//! that skipped itself) a skipped `<collection skipped>` with the reason.
use std::io::Read;

use serde::Deserialize;
use serde_json::Value;

use super::common::{
    add_paragraph, line, non_empty, to_ms, Emitter, Grouper, ReadError, SuiteSpec, TestNode,
};
use super::lenient;
use crate::event::{Node, NodeKind, Outcome, Stream, TestResult};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Report {
    #[serde(deserialize_with = "lenient::string")]
    root: Option<String>,
    #[serde(deserialize_with = "lenient::list")]
    tests: Vec<Test>,
    #[serde(deserialize_with = "lenient::list")]
    collectors: Vec<Collector>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Test {
    #[serde(deserialize_with = "lenient::string")]
    nodeid: Option<String>,
    #[serde(deserialize_with = "lenient::f64")]
    lineno: Option<f64>,
    #[serde(deserialize_with = "lenient::string")]
    outcome: Option<String>,
    #[serde(deserialize_with = "lenient::or_default")]
    setup: Option<Phase>,
    #[serde(deserialize_with = "lenient::or_default")]
    call: Option<Phase>,
    #[serde(deserialize_with = "lenient::or_default")]
    teardown: Option<Phase>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Phase {
    #[serde(deserialize_with = "lenient::f64")]
    duration: Option<f64>,
    #[serde(deserialize_with = "lenient::string")]
    outcome: Option<String>,
    #[serde(deserialize_with = "lenient::or_default")]
    crash: Option<Crash>,
    #[serde(deserialize_with = "lenient::optional_value")]
    longrepr: Option<Value>,
    #[serde(deserialize_with = "lenient::string")]
    stdout: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    stderr: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Crash {
    #[serde(deserialize_with = "lenient::string")]
    message: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Collector {
    #[serde(deserialize_with = "lenient::string")]
    nodeid: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    outcome: Option<String>,
    #[serde(deserialize_with = "lenient::optional_value")]
    longrepr: Option<Value>,
}

/// The name of the pseudo-test for a file that failed to collect.
pub(crate) const COLLECTION_ERROR: &str = "<collection error>";

/// Reads one pytest-json-report file.
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

fn send_report(report: Report, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    let root = report.root.as_deref().filter(|r| !r.is_empty());
    let mut tree = Grouper::default();
    for test in report.tests {
        let nodeid = test.nodeid.clone().unwrap_or_default();
        let parsed = NodeId::parse(&nodeid);
        let path = parsed.suites(root);
        let file = parsed.file.as_deref().map(|f| absolute(root, f));
        let node = Node {
            name: parsed.name.clone().unwrap_or_else(|| nodeid.clone()),
            file,
            line: line(test.lineno, 1),
            meta: parsed.name,
            ..Node::default()
        };
        let (result, output) = outcome(test);
        tree.add(
            &path,
            TestNode {
                node,
                output,
                result,
            },
        );
    }
    for collector in report.collectors {
        let nodeid = collector.nodeid.unwrap_or_default();
        let (name, result) = match collector.outcome.as_deref() {
            Some("failed") => {
                let details = collector.longrepr.as_ref().and_then(text_of);
                let message = details
                    .as_deref()
                    .and_then(|d| d.lines().rev().find(|l| l.starts_with("E ")))
                    .map(|l| l.trim_start_matches('E').trim().to_string())
                    .or_else(|| Some(format!("error collecting {nodeid}")));
                let result = TestResult {
                    outcome: Outcome::Error,
                    message,
                    details,
                    ..TestResult::default()
                };
                (COLLECTION_ERROR, result)
            }
            // A module that skipped itself (`allow_module_level=True`).
            Some("skipped") => {
                let result = TestResult {
                    outcome: Outcome::Skipped,
                    message: collector.longrepr.as_ref().and_then(skip_reason),
                    ..TestResult::default()
                };
                (COLLECTION_SKIPPED, result)
            }
            _ => continue,
        };
        // A collector's nodeid names a suite (a file, a class), never a test.
        let parsed = NodeId::parse(&format!("{nodeid}::_"));
        let path = parsed.suites(root);
        let node = Node {
            name: name.to_string(),
            file: parsed.file.as_deref().map(|f| absolute(root, f)),
            ..Node::default()
        };
        tree.add(
            &path,
            TestNode {
                node,
                result,
                ..TestNode::default()
            },
        );
    }
    tree.emit(out)
}

fn outcome(test: Test) -> (TestResult, Vec<(Stream, String)>) {
    let status = test.outcome.clone().unwrap_or_default();
    let outcome = match status.as_str() {
        "passed" => Outcome::Passed,
        "failed" => Outcome::Failed,
        "error" => Outcome::Error,
        "skipped" => Outcome::Skipped,
        "xfailed" => Outcome::Xfail,
        "xpassed" => Outcome::Xpass,
        // pytest-rerunfailures: pytest-json-report keeps the first
        // attempt's `rerun` while the phases are those of the last attempt.
        "rerun" => rerun_outcome(&test),
        _ => Outcome::Error,
    };
    let phases: Vec<Phase> = [test.setup, test.call, test.teardown]
        .into_iter()
        .flatten()
        .collect();
    let total: f64 = phases.iter().filter_map(|p| p.duration).sum();
    let mut result = TestResult {
        outcome,
        duration_ms: phases
            .iter()
            .any(|p| p.duration.is_some())
            .then(|| to_ms(total, 1000.0))
            .flatten(),
        ..TestResult::default()
    };
    let phase_with = |wanted: &str| phases.iter().find(|p| p.outcome.as_deref() == Some(wanted));
    let telling = match outcome {
        Outcome::Failed | Outcome::Error => phase_with("failed"),
        Outcome::Skipped => phase_with("skipped"),
        Outcome::Xfail => phases
            .iter()
            .find(|p| p.crash.is_some())
            .or_else(|| phase_with("skipped")),
        _ => None,
    };
    if let Some(phase) = telling {
        let details = phase.longrepr.as_ref().and_then(text_of);
        if outcome == Outcome::Skipped {
            result.message = phase.longrepr.as_ref().and_then(skip_reason);
        } else {
            let crash = phase
                .crash
                .as_ref()
                .and_then(|c| non_empty(c.message.as_deref()));
            // A strict xpass has no crash, only `[XPASS(strict)] reason`.
            result.message =
                crash.or_else(|| details.as_deref().and_then(|d| non_empty(d.lines().next())));
            result.details = details;
        }
    }
    if matches!(outcome, Outcome::Failed | Outcome::Error) {
        // A teardown error after a failed call: one verdict, the error is context.
        let later = phases
            .iter()
            .filter(|p| p.outcome.as_deref() == Some("failed"))
            .skip(1)
            .filter_map(|p| p.longrepr.as_ref().and_then(text_of));
        for text in later {
            add_paragraph(&mut result.details, &text);
        }
    }
    if result.outcome == Outcome::Error && result.message.is_none() && status != "error" {
        result.message = Some(format!("unknown outcome '{status}'"));
    }
    let mut output = Vec::new();
    for phase in phases {
        output.extend(phase.stdout.map(|t| (Stream::Stdout, t)));
        output.extend(phase.stderr.map(|t| (Stream::Stderr, t)));
    }
    (result, output)
}

/// The verdict of a rerun test's last attempt, from its phases: an error
/// in setup or teardown, a failed or skipped call, else a pass.
fn rerun_outcome(test: &Test) -> Outcome {
    let failed = |phase: &Option<Phase>| {
        phase
            .as_ref()
            .is_some_and(|p| p.outcome.as_deref() == Some("failed"))
    };
    let call = test.call.as_ref().and_then(|p| p.outcome.as_deref());
    if failed(&test.setup) || (call != Some("failed") && failed(&test.teardown)) {
        return Outcome::Error;
    }
    match call {
        Some("failed") => Outcome::Failed,
        Some("skipped") => Outcome::Skipped,
        _ if test.call.is_none() => Outcome::Skipped,
        _ => Outcome::Passed,
    }
}

/// A `longrepr` as text: strings as they are, other shapes as JSON.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::Null => None,
        Value::String(s) => non_empty(Some(s)),
        other => Some(other.to_string()),
    }
}

/// The reason of a skip's `longrepr`: `('/p/t.py', 22, 'Skipped: why')` as a
/// string (pytest-json-report) or a `[path, line, text]` array.
fn skip_reason(value: &Value) -> Option<String> {
    match value {
        Value::Array(items) => {
            let text = items.get(2)?.as_str()?;
            non_empty(Some(text.strip_prefix("Skipped: ").unwrap_or(text)))
        }
        Value::String(s) => skip_reason_of_text(s).or_else(|| {
            let s = s.trim();
            non_empty(Some(s.strip_prefix("Skipped: ").unwrap_or(s)))
        }),
        _ => None,
    }
}

/// The name of the test of a module that skipped itself, as a live run
/// names it.
pub(crate) const COLLECTION_SKIPPED: &str = "<collection skipped>";

/// The reason of a module-level skip from the text pytest writes for it:
/// the `repr` of its `(path, line, message)` tuple
/// (`('/p/tests/test_m.py', 3, 'Skipped: not here')`), whose message
/// loses its `Skipped: ` as a live run's does. `None` if the text is not
/// such a tuple.
pub(crate) fn skip_reason_of_text(text: &str) -> Option<String> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    let quote = inner
        .chars()
        .next_back()
        .filter(|c| matches!(c, '\'' | '"'))?;
    let body = &inner[..inner.len() - 1];
    // The opening quote: the last one not escaped by a backslash (`repr`
    // escapes every one inside), after the tuple's `, `.
    let (open, _) = body.rmatch_indices(quote).find(|&(at, _)| {
        let backslashes = body[..at].chars().rev().take_while(|&c| c == '\\').count();
        backslashes % 2 == 0 && body[..at].ends_with(", ")
    })?;
    let message = unescape_python(&body[open + 1..]);
    let reason = message.strip_prefix("Skipped: ").unwrap_or(&message);
    (!reason.is_empty()).then(|| reason.to_string())
}

/// The text of a Python string literal's body, as `repr` escapes it
/// (`\\`, the quotes, `\n`, `\t`, `\r`, `\xNN`, `\uNNNN`, `\UNNNNNNNN`).
fn unescape_python(body: &str) -> String {
    let mut text = String::with_capacity(body.len());
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        let Some(escaped) = chars.next() else {
            text.push(c);
            break;
        };
        let hex_len = match escaped {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            _ => 0,
        };
        if hex_len > 0 {
            let digits: String = chars.clone().take(hex_len).collect();
            let code = u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32);
            if let (true, Some(code)) = (digits.len() == hex_len, code) {
                text.push(code);
                chars.nth(hex_len - 1);
                continue;
            }
        }
        match escaped {
            'n' => text.push('\n'),
            't' => text.push('\t'),
            'r' => text.push('\r'),
            '\\' | '\'' | '"' => text.push(escaped),
            other => {
                text.push('\\');
                text.push(other);
            }
        }
    }
    text
}

/// `root/path` unless `path` is absolute or there is no root.
fn absolute(root: Option<&str>, path: &str) -> String {
    match root {
        Some(root) if !path.starts_with('/') => format!("{}/{path}", root.trim_end_matches('/')),
        _ => path.to_string(),
    }
}

/// The parts of a pytest nodeid.
#[derive(Debug, Default, PartialEq)]
struct NodeId {
    dirs: Vec<String>,
    file: Option<String>,
    classes: Vec<String>,
    name: Option<String>,
}

impl NodeId {
    fn parse(nodeid: &str) -> NodeId {
        // Parameter ids may contain anything, so split only before the `[`.
        let (structure, params) = match nodeid.find('[') {
            Some(at) => nodeid.split_at(at),
            None => (nodeid, ""),
        };
        let mut parts: Vec<&str> = structure.split("::").collect();
        if parts.len() < 2 {
            return NodeId {
                name: Some(nodeid.to_string()).filter(|n| !n.is_empty()),
                ..NodeId::default()
            };
        }
        let name = format!("{}{params}", parts.pop().unwrap_or_default());
        let path = parts.remove(0);
        let mut dirs: Vec<String> = path
            .split('/')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let file = dirs.pop();
        NodeId {
            dirs,
            file: file.map(|_| path.to_string()),
            classes: parts.iter().map(|c| c.to_string()).collect(),
            name: Some(name),
        }
    }

    /// The suites a node sits in: directories, the file, the classes.
    fn suites(&self, root: Option<&str>) -> Vec<SuiteSpec> {
        let mut path: Vec<SuiteSpec> = self
            .dirs
            .iter()
            .map(|d| SuiteSpec::new(d.clone(), NodeKind::Dir))
            .collect();
        if let Some(file) = &self.file {
            let base = file.rsplit('/').next().unwrap_or(file);
            let mut spec = SuiteSpec::new(base, NodeKind::File);
            spec.file = Some(absolute(root, file));
            path.push(spec.clone());
            for class in &self.classes {
                let mut class_spec = SuiteSpec::new(class.clone(), NodeKind::Suite);
                class_spec.file = spec.file.clone();
                path.push(class_spec);
            }
        }
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::testing::{counts, events_of, first_result, sample};
    use crate::event::TestEvent;

    #[test]
    fn counts_match_the_summary() {
        let bytes = sample("pytest-report.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let n = |k: &str| doc["summary"][k].as_u64().unwrap_or(0);
        let c = counts(&events);
        assert_eq!(c[&Outcome::Passed], n("passed"));
        assert_eq!(c[&Outcome::Failed], n("failed"));
        assert_eq!(c[&Outcome::Skipped], n("skipped"));
        assert_eq!(c[&Outcome::Xfail], n("xfailed"));
        assert_eq!(c[&Outcome::Xpass], n("xpassed"));
        // Plus one collection error, which pytest keeps out of the summary.
        assert_eq!(c[&Outcome::Error], n("error") + 1);
    }

    #[test]
    fn tree_lines_messages_and_output() {
        let bytes = sample("pytest-report.json");
        let events = events_of(|out| read(&bytes[..], out)).unwrap();
        let test = |name: &str| {
            events.iter().find_map(|e| match e {
                TestEvent::Test(n) if n.name == name => Some(n.clone()),
                _ => None,
            })
        };
        let passes = test("test_passes").unwrap();
        assert_eq!(passes.line, Some(13));
        assert_eq!(passes.file.as_deref(), Some("/proj/suite/test_sample.py"));
        let suites: Vec<(String, NodeKind)> = events
            .iter()
            .filter_map(|e| match e {
                TestEvent::Suite(n) => Some((n.name.clone(), n.kind)),
                _ => None,
            })
            .collect();
        assert!(suites.contains(&("TestInner".into(), NodeKind::Suite)));
        assert!(suites.contains(&("test_sample.py".into(), NodeKind::File)));
        let skip = first_result(&events, Outcome::Skipped);
        assert_eq!(
            skip.unwrap().message.as_deref(),
            Some("not implemented yet")
        );
        let printed = events.iter().any(|e| {
            matches!(e, TestEvent::Output { stream: Stream::Stderr, text, .. } if text == "hello from test stderr\n")
        });
        assert!(printed);
    }

    #[test]
    fn nodeids_split_outside_parameters() {
        let id = NodeId::parse("a/b/test_x.py::Cls::test[p/q::r]");
        assert_eq!(id.dirs, ["a", "b"]);
        assert_eq!(id.file.as_deref(), Some("a/b/test_x.py"));
        assert_eq!(id.classes, ["Cls"]);
        assert_eq!(id.name.as_deref(), Some("test[p/q::r]"));
        assert_eq!(NodeId::parse("odd").name.as_deref(), Some("odd"));
        assert_eq!(
            skip_reason(&Value::String(
                "('/p/t.py', 22, 'Skipped: it\\'s, later')".into()
            ))
            .as_deref(),
            Some("it's, later")
        );
        assert_eq!(
            skip_reason(&serde_json::json!(["/p", 3, "Skipped: x"])).as_deref(),
            Some("x")
        );
    }

    /// A module that skipped itself is only a collector of outcome
    /// `skipped` (pytest-json-report 1.5.0 on pytest 9): it is the module's
    /// skipped `<collection skipped>` test with the reason, as in a live run.
    #[test]
    fn a_module_that_skipped_itself_is_its_collection_skipped_test() {
        let doc = r#"{"root": "/p", "tests": [], "collectors": [
            {"nodeid": "", "outcome": "passed", "result": []},
            {"nodeid": "t/test_m.py", "outcome": "skipped", "result": [],
             "longrepr": "('/p/t/test_m.py', 2, 'Skipped: not \\'here\\'')"}]}"#;
        let events = events_of(|out| read(doc.as_bytes(), out)).unwrap();
        let test = events
            .iter()
            .find_map(|e| match e {
                TestEvent::Test(node) => Some(node),
                _ => None,
            })
            .expect("a test");
        assert_eq!(test.name, COLLECTION_SKIPPED);
        assert_eq!(test.file.as_deref(), Some("/p/t/test_m.py"));
        let result = first_result(&events, Outcome::Skipped).expect("skipped");
        assert_eq!(result.message.as_deref(), Some("not 'here'"));
    }

    /// pytest-json-report 1.5.0: a failed call followed by a teardown error
    /// (outcome `error`), and a strict xpass (no `crash`).
    #[test]
    fn teardown_error_after_failure_and_strict_xpass() {
        let json = r#"{"root":"/p","summary":{"collected":2},"tests":[
          {"nodeid":"t.py::test_a","lineno":45,"outcome":"error",
           "setup":{"duration":0.1,"outcome":"passed"},
           "call":{"duration":0.1,"outcome":"failed","crash":{"message":"assert 0"},
                   "longrepr":"E       assert 0"},
           "teardown":{"duration":0.1,"outcome":"failed","crash":{"message":"ValueError: teardown boom"},
                   "longrepr":"E       ValueError: teardown boom"}},
          {"nodeid":"t.py::test_b","lineno":26,"outcome":"failed",
           "setup":{"outcome":"passed"},
           "call":{"outcome":"failed","longrepr":"[XPASS(strict)] strict"},
           "teardown":{"outcome":"passed"}}]}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        let results: Vec<&TestResult> = events
            .iter()
            .filter_map(|e| match e {
                TestEvent::Finished(r) => Some(r),
                _ => None,
            })
            .collect();
        assert_eq!(results[0].outcome, Outcome::Error);
        assert_eq!(results[0].message.as_deref(), Some("assert 0"));
        assert_eq!(
            results[0].details.as_deref(),
            Some("E       assert 0\n\nE       ValueError: teardown boom")
        );
        assert_eq!(results[1].outcome, Outcome::Failed);
        assert_eq!(
            results[1].message.as_deref(),
            Some("[XPASS(strict)] strict")
        );
    }

    /// pytest-rerunfailures under pytest-json-report 1.5.0: a test keeps
    /// the first attempt's outcome `rerun`, with the last attempt's phases.
    #[test]
    fn a_rerun_test_has_its_last_attempts_verdict() {
        let json = r#"{"root":"/p","summary":{"rerun":3,"total":3,"collected":3},"tests":[
          {"nodeid":"t.py::test_flaky","outcome":"rerun",
           "setup":{"outcome":"passed"},"call":{"outcome":"passed"},"teardown":{"outcome":"passed"}},
          {"nodeid":"t.py::test_broken","outcome":"rerun",
           "setup":{"outcome":"passed"},
           "call":{"outcome":"failed","crash":{"message":"assert 1 == 2"}},
           "teardown":{"outcome":"passed"}},
          {"nodeid":"t.py::test_fixture","outcome":"rerun",
           "setup":{"outcome":"failed","crash":{"message":"RuntimeError: db"}},
           "teardown":{"outcome":"passed"}}]}"#;
        let events = events_of(|out| read(json.as_bytes(), out)).unwrap();
        let verdicts: Vec<(Outcome, Option<&str>)> = events
            .iter()
            .filter_map(|e| match e {
                TestEvent::Finished(r) => Some((r.outcome, r.message.as_deref())),
                _ => None,
            })
            .collect();
        assert_eq!(
            verdicts,
            [
                (Outcome::Passed, None),
                (Outcome::Failed, Some("assert 1 == 2")),
                (Outcome::Error, Some("RuntimeError: db")),
            ]
        );
    }
}
