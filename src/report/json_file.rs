//! `--json FILE`: tcrunner's own result (docs/results.md, checked against
//! docs/result.schema.json): every test with its verdict, group and
//! scenario, the summary, the per-group tally, the run-level errors and
//! the facts of the run.
//!
//! Each test is written to the file as it ends, from the record every
//! result file shares (`record.rs`), so memory holds only the output of
//! the tests still running and the open suites' names; the
//! summary, groups, errors and run follow the tests at the end. A run that
//! ends before tcrunner can say how (a write error, a panic) still gets a
//! whole file, with that said in `errors`.
use std::io::{self, Write};
use std::time::{Instant, SystemTime};

use serde::Serialize;
use tcrunner_protocol::Timestamp;

use super::file::AtomicFile;
use super::grading::{Grader, GroupCount, Groups};
use super::output::{Output, Problem, ProblemKind, RunEnd, RunStart, TreeEvent};
use super::record::{self, Collected, Records, TestRecord};

/// The result format's version: a new one when a field changes meaning
/// or goes away (new fields do not change it).
pub(crate) const VERSION: u32 = 1;

pub(crate) struct JsonFile {
    file: AtomicFile,
    grader: Grader,
    /// The tests' records, as they end.
    records: Records,
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
            records: Records::default(),
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

    /// Writes one test that ended; one only declared (collect-only) is
    /// not a result.
    fn write(&mut self, test: &TestRecord) -> io::Result<()> {
        #[derive(Serialize)]
        struct Test<'a> {
            id: &'a str,
            name: &'a str,
            suite: &'a [String],
            file: Option<&'a str>,
            line: Option<u32>,
            status: Option<&'static str>,
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
            scenario: Option<&'a str>,
        }
        // A test only collected (`--collect-only`) is listed with no
        // verdict, and counted nowhere.
        let status = test.status.graded();
        let group = self.grader.group(test.file.as_deref(), &test.tags);
        if let Some(status) = status {
            self.summary.count(status);
            self.groups.count(group, status);
        }
        self.tests_ms = self.tests_ms.saturating_add(test.duration_ms.unwrap_or(0));
        let message = match test.status {
            record::Status::Stopped => Some("the run ended before this test finished"),
            _ => test.message.as_deref(),
        };
        let json = Test {
            id: &test.source_id,
            name: &test.name,
            suite: &test.suites,
            file: test.file.as_deref(),
            line: test.line,
            status: status.map(|s| s.name()),
            raw_status: test.status.raw(),
            duration_ms: test.duration_ms,
            message,
            details: test.details.as_deref(),
            expected: test.expected.as_deref(),
            actual: test.actual.as_deref(),
            stdout: &test.stdout,
            stderr: &test.stderr,
            tags: &test.tags,
            group,
            scenario: self.grader.scenario(&test.source_id, &test.tags),
        };
        let out = self.file.writer();
        if self.tests > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, &json)?;
        self.tests += 1;
        Ok(())
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
            groups: &'a Groups,
            errors: &'a [Problem],
            run: Run<'a>,
        }
        if self.finished {
            return Ok(());
        }
        for test in self.records.release() {
            self.write(&test)?;
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
            groups: &self.groups,
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

/// A time as RFC 3339 in UTC, to the millisecond.
fn iso(time: SystemTime) -> String {
    let text = Timestamp::from_system_time(time).to_string();
    match text.strip_suffix("+0000") {
        Some(utc) => format!("{utc}Z"),
        None => text,
    }
}

impl Output for JsonFile {
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::RunStarted(start) => {
                self.start = Some(start.clone());
                self.started_at = Instant::now();
                Ok(())
            }
            TreeEvent::Hello { runner, version } => {
                self.hello = Some((runner.to_owned(), version.map(str::to_owned)));
                self.records.event(event);
                Ok(())
            }
            TreeEvent::RunEnded(end) => self.end(Some(end)),
            _ => match self.records.event(event) {
                Collected::Test(test) => self.write(&test),
                Collected::Suite { held, .. } => held.iter().try_for_each(|test| self.write(test)),
                _ => Ok(()),
            },
        }
    }

    /// Normally done at [`TreeEvent::RunEnded`]; without one, the run's
    /// end was never told, and the file says so.
    /// Text printed while one test runs is that test's stdout.
    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.records.text(bytes);
        Ok(())
    }

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
