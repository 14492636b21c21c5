//! `--json FILE`: tcrunner's own result (docs/results.md, checked against
//! docs/result.schema.json): every test with its verdict, group and
//! scenario, the summary, the per-group tally, the run-level errors and
//! the facts of the run.
//!
//! Each test is written to the file as it ends, so memory holds only the
//! output of the tests still running and the open suites' names; the
//! summary, groups, errors and run follow the tests at the end. A run that
//! ends before tcrunner can say how (a write error, a panic) still gets a
//! whole file, with that said in `errors`.
use std::io::{self, Write};
use std::time::{Instant, SystemTime};

use serde::Serialize;
use tcrunner_protocol::Timestamp;

use super::file::AtomicFile;
use super::grading::{Grader, GroupCount, Groups, Status};
use super::output::{Opened, Output, Problem, ProblemKind, RunEnd, RunStart, TreeEvent};
use crate::event::{Node, Outcome, Stream, TestEvent, TestResult};
use crate::hash::FastMap;

/// The result format's version: a new one when a field changes meaning
/// or goes away (new fields do not change it).
pub(crate) const VERSION: u32 = 1;

pub(crate) struct JsonFile {
    file: AtomicFile,
    grader: Grader,
    /// Open suites: name and parent, for a test's suite path.
    suites: FastMap<u64, (String, u64)>,
    /// Output of running tests: stdout, stderr.
    output: FastMap<u64, (String, String)>,
    tests: u64,
    summary: GroupCount,
    /// The tests' own durations added up: a report file's run time.
    tests_ms: u64,
    groups: Groups,
    start: Option<RunStart>,
    started_at: Instant,
    hello: Option<(String, Option<String>)>,
    finished: bool,
}

impl JsonFile {
    /// Writes the head of the document into `file`'s temporary twin.
    pub(crate) fn create(mut file: AtomicFile, grader: Grader) -> io::Result<Self> {
        write!(
            file.writer(),
            "{{\"format\":\"tcrunner-result\",\"version\":{VERSION},\"tests\":["
        )?;
        Ok(JsonFile {
            file,
            grader,
            suites: FastMap::default(),
            output: FastMap::default(),
            tests: 0,
            summary: GroupCount::default(),
            tests_ms: 0,
            groups: Groups::default(),
            start: None,
            started_at: Instant::now(),
            hello: None,
            finished: false,
        })
    }

    /// One test's record. `result` is `None` for a test the run ended under.
    fn record(
        &mut self,
        node: &Opened<'_>,
        result: Option<&TestResult>,
        stdout: &str,
        stderr: &str,
    ) -> io::Result<()> {
        #[derive(Serialize)]
        struct Record<'a> {
            id: &'a str,
            name: &'a str,
            suite: Vec<&'a str>,
            file: Option<&'a str>,
            line: Option<u32>,
            status: &'static str,
            raw_status: &'static str,
            duration_ms: Option<u64>,
            message: Option<&'a str>,
            details: Option<&'a str>,
            expected: Option<&'a str>,
            actual: Option<&'a str>,
            stdout: &'a str,
            stderr: &'a str,
            tags: &'a [String],
            group: &'a str,
            scenario: Option<std::borrow::Cow<'a, str>>,
        }
        let declared: &Node = node.node;
        let (status, raw_status) = match result {
            Some(result) => (Status::of(result.outcome), raw_status(result.outcome)),
            None => (Status::Error, "stopped"),
        };
        let group = self.grader.group(declared);
        self.summary.count(status);
        self.groups.count(group, status);
        let duration_ms = result.and_then(|r| r.duration_ms);
        self.tests_ms += duration_ms.unwrap_or(0);
        let record = Record {
            id: &declared.id,
            name: &declared.name,
            suite: suite_path(&self.suites, node.parent),
            file: declared.file.as_deref(),
            line: declared.line,
            status: status.name(),
            raw_status,
            duration_ms,
            message: match result {
                Some(result) => result.message.as_deref(),
                None => Some("the run ended before this test finished"),
            },
            details: result.and_then(|r| r.details.as_deref()),
            expected: result.and_then(|r| r.expected.as_deref()),
            actual: result.and_then(|r| r.actual.as_deref()),
            stdout,
            stderr,
            tags: &declared.tags,
            group,
            scenario: self.grader.scenario(declared),
        };
        let out = self.file.writer();
        if self.tests > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &record)?;
        self.tests += 1;
        Ok(())
    }

    fn finished_test(&mut self, node: &Opened<'_>, result: Option<&TestResult>) -> io::Result<()> {
        let (stdout, stderr) = self.output.remove(&node.id).unwrap_or_default();
        self.record(node, result, &stdout, &stderr)
    }

    /// Writes everything after the tests and puts the file in place.
    fn end(&mut self, end: Option<&RunEnd>) -> io::Result<()> {
        #[derive(Serialize)]
        struct Summary {
            total: u64,
            passed: u64,
            failed: u64,
            errors: u64,
            skipped: u64,
            duration_ms: u64,
        }
        #[derive(Serialize)]
        struct Run<'a> {
            framework: Option<&'a str>,
            version: Option<&'a str>,
            command: &'a [String],
            exit_code: Option<i32>,
            started: Option<String>,
            finished: String,
            pass_policy: &'static str,
            policy_met: Option<bool>,
            infrastructure_failure: bool,
        }
        #[derive(Serialize)]
        struct Tail<'a> {
            summary: Summary,
            groups: serde_json::Map<String, serde_json::Value>,
            errors: &'a [Problem],
            run: Run<'a>,
        }
        if self.finished {
            return Ok(());
        }
        self.finished = true;
        let live = self.start.as_ref().is_some_and(|s| s.framework.is_some());
        let duration_ms = if live {
            self.started_at.elapsed().as_millis() as u64
        } else {
            self.tests_ms
        };
        let unfinished = [Problem {
            kind: ProblemKind::Interrupted,
            message: "tcrunner stopped before the run ended".to_owned(),
        }];
        let errors = end.map_or(&unfinished[..], |end| &end.errors);
        let groups = self
            .groups
            .iter()
            .map(|(name, count)| (name.to_owned(), serde_json::json!(count)))
            .collect();
        let framework = self
            .hello
            .as_ref()
            .map(|(runner, _)| runner.as_str())
            .or_else(|| self.start.as_ref().and_then(|s| s.framework.as_deref()));
        let tail = Tail {
            summary: Summary {
                total: self.summary.total,
                passed: self.summary.passed,
                failed: self.summary.failed,
                errors: self.summary.errors,
                skipped: self.summary.skipped,
                duration_ms,
            },
            groups,
            errors,
            run: Run {
                framework,
                version: self.hello.as_ref().and_then(|(_, v)| v.as_deref()),
                command: self.start.as_ref().map_or(&[], |s| &s.command),
                exit_code: end.map(|end| end.exit_code),
                started: self.start.as_ref().map(|s| iso(s.started)),
                finished: iso(SystemTime::now()),
                pass_policy: end.map_or("framework", |end| end.policy.name()),
                policy_met: end.and_then(|end| end.policy_met),
                infrastructure_failure: !errors.is_empty(),
            },
        };
        // The tail is one object; its opening brace is the document's, open since the head.
        let tail = serde_json::to_vec(&tail)?;
        let out = self.file.writer();
        out.write_all(b"],")?;
        out.write_all(&tail[1..])?;
        out.write_all(b"\n")?;
        self.file.commit()
    }
}

/// Names of the open suites above `parent`, outermost first.
fn suite_path(suites: &FastMap<u64, (String, u64)>, mut parent: u64) -> Vec<&str> {
    let mut path = Vec::new();
    while let Some((name, up)) = suites.get(&parent) {
        path.push(name.as_str());
        parent = *up;
    }
    path.reverse();
    path
}

/// A time as RFC 3339 in UTC, to the millisecond.
fn iso(time: SystemTime) -> String {
    let text = Timestamp::from_system_time(time).to_string();
    match text.strip_suffix("+0000") {
        Some(utc) => format!("{utc}Z"),
        None => text,
    }
}

/// The framework's own verdict, as the event protocol names it.
fn raw_status(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Passed => "passed",
        Outcome::Failed => "failed",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
        Outcome::Xfail => "xfail",
        Outcome::Xpass => "xpass",
        Outcome::Todo => "todo",
    }
}

impl Output for JsonFile {
    fn source(&mut self, _: &TestEvent) -> io::Result<()> {
        Ok(())
    }

    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::RunStarted(start) => {
                self.start = Some(start.clone());
                self.started_at = Instant::now();
                Ok(())
            }
            TreeEvent::Hello { runner, version } => {
                self.hello = Some((runner.to_owned(), version.map(str::to_owned)));
                Ok(())
            }
            TreeEvent::Started(node) if !node.is_test => {
                self.suites
                    .insert(node.id, (node.node.name.clone(), node.parent));
                Ok(())
            }
            TreeEvent::SuiteFinished(node) => {
                self.suites.remove(&node.id);
                Ok(())
            }
            TreeEvent::Output {
                node: Some(node),
                stream,
                text,
            } if node.is_test => {
                let (stdout, stderr) = self.output.entry(node.id).or_default();
                match stream {
                    Stream::Stdout => stdout.push_str(text),
                    Stream::Stderr => stderr.push_str(text),
                }
                Ok(())
            }
            TreeEvent::Finished { node, result } => self.finished_test(node, Some(result)),
            TreeEvent::Stopped(node) => self.finished_test(node, None),
            TreeEvent::RunEnded(end) => self.end(Some(end)),
            // Suite and run output, notes and the pre-declared tree are
            // the stream's; the result has tests only.
            TreeEvent::Started(_)
            | TreeEvent::LiveOutput
            | TreeEvent::Count(_)
            | TreeEvent::Output { .. }
            | TreeEvent::Log { .. }
            | TreeEvent::TreeSuite(_)
            | TreeEvent::TreeTest(_)
            | TreeEvent::TreeSuiteEnd(_)
            | TreeEvent::TreeEnded => Ok(()),
        }
    }

    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        let joined = |wanted: Stream| -> String {
            output
                .iter()
                .filter(|(stream, _)| *stream == wanted)
                .map(|(_, text)| text.as_str())
                .collect()
        };
        if output.is_empty() {
            return self.record(node, Some(result), "", "");
        }
        let (stdout, stderr) = (joined(Stream::Stdout), joined(Stream::Stderr));
        self.record(node, Some(result), &stdout, &stderr)
    }

    fn text(&mut self, _: &[u8]) -> io::Result<()> {
        Ok(())
    }

    /// Written whole at the end: a result is read after the run.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Normally done at [`TreeEvent::RunEnded`]; without one, the run's
    /// end was never told, and the file says so.
    fn finish(&mut self) -> io::Result<()> {
        self.end(None)
    }
}

impl Drop for JsonFile {
    /// tcrunner gave up before the end (an error, a panic): what was known
    /// is written whole, with that said.
    fn drop(&mut self) {
        let _ = self.end(None);
    }
}
