//! `--ctrf FILE`: the run as a CTRF report (Common Test Report Format,
//! schema 1.0.0 of `ctrf-io/ctrf`, as the npm package `ctrf` validates it).
//!
//! Streamed: each test is written as it ends, so memory stays flat in the
//! number of tests. JSON objects are unordered, so `results.tests` comes
//! first and `results.summary`, whose counts are known only then, after
//! it, with `tool` (whose version the framework's reporter tells) and
//! `extra` (the run's errors and warnings, and tcrunner's own counts).
//!
//! A test: `name` (its short name), `status` (`passed`, `failed`, `skipped`,
//! `pending` for a todo, `other` for one the run ended under or one only
//! collected), `duration` (whole ms), `rawStatus` (tcrunner's outcome:
//! `error`, `xfail`, `xpass`, `todo`, `stopped`, …), `suite` (every suite
//! above it, folders and file included, outermost first), `filePath`,
//! `line`, `message`, `trace`, `tags`, `retries` and `flaky` (passed after
//! failed attempts), `stdout`/`stderr` (lines), and under `extra` the
//! source's `id` of the test and a comparison's `expected`/`actual`.
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

use super::file::AtomicFile;
use super::grading::{Grader, Groups};
use super::output::{Output, TreeEvent};
use super::record::{Collected, Records, Status, TestRecord};
use crate::event::{LogLevel, Outcome, TestEvent};

/// The CTRF version written.
const SPEC_VERSION: &str = "1.0.0";

/// The summary's counts.
#[derive(Debug, Default, Serialize)]
struct Counts {
    tests: u64,
    passed: u64,
    failed: u64,
    skipped: u64,
    pending: u64,
    other: u64,
    flaky: u64,
}

/// tcrunner's own counts, by outcome, under `summary.extra`.
#[derive(Debug, Default, Serialize)]
struct Outcomes {
    passed: u64,
    failed: u64,
    error: u64,
    skipped: u64,
    xfail: u64,
    xpass: u64,
    todo: u64,
    stopped: u64,
    collected: u64,
}

pub(crate) struct CtrfFile {
    file: AtomicFile,
    /// [`Output::finish`] ran: the file is whole and in place.
    finished: bool,
    records: Records,
    start: u64,
    counts: Counts,
    outcomes: Outcomes,
    /// A test was written (the next one needs a comma).
    written: bool,
    framework: Option<(String, Option<String>)>,
    errors: Vec<String>,
    warnings: Vec<String>,
    grader: Grader,
    /// The tally by group (docs/results.md, "Groups").
    groups: Groups,
}

/// Now, in ms since the epoch.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl CtrfFile {
    /// Creates the file's temporary twin and writes everything before the
    /// first test.
    pub(crate) fn create(mut file: AtomicFile, grader: Grader) -> io::Result<Self> {
        write!(
            file.writer(),
            "{{\"reportFormat\":\"CTRF\",\"specVersion\":\"{SPEC_VERSION}\",\"generatedBy\":\"tcrunner\",\"results\":{{\"tests\":["
        )?;
        Ok(CtrfFile {
            file,
            finished: false,
            records: Records::default(),
            start: now_ms(),
            counts: Counts::default(),
            outcomes: Outcomes::default(),
            written: false,
            framework: None,
            errors: Vec::new(),
            warnings: Vec::new(),
            grader,
            groups: Groups::default(),
        })
    }

    fn test(&mut self, record: &TestRecord) -> io::Result<()> {
        if let Some(status) = record.status.graded() {
            let group = self.grader.group(record.file.as_deref(), &record.tags);
            self.groups.count(group, status);
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Test<'a> {
            name: &'a str,
            status: &'static str,
            duration: u64,
            raw_status: &'static str,
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            suite: &'a [String],
            #[serde(skip_serializing_if = "Option::is_none")]
            file_path: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            line: Option<u32>,
            #[serde(skip_serializing_if = "Option::is_none")]
            message: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            trace: Option<&'a str>,
            #[serde(skip_serializing_if = "<[_]>::is_empty")]
            tags: &'a [String],
            retries: u32,
            flaky: bool,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            stdout: Vec<&'a str>,
            #[serde(skip_serializing_if = "Vec::is_empty")]
            stderr: Vec<&'a str>,
            extra: Extra<'a>,
        }
        #[derive(Serialize)]
        struct Extra<'a> {
            id: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            expected: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            actual: Option<&'a str>,
        }
        let status = match record.status {
            Status::Finished(Outcome::Passed | Outcome::Xpass) => "passed",
            Status::Finished(Outcome::Failed | Outcome::Error) => "failed",
            Status::Finished(Outcome::Skipped | Outcome::Xfail) => "skipped",
            Status::Finished(Outcome::Todo) => "pending",
            Status::Stopped | Status::Collected => "other",
        };
        let flaky = status == "passed" && record.retries > 0;
        self.count(record.status, status, flaky);
        let message = match record.status {
            Status::Stopped => Some("stopped: the run ended before this test finished"),
            Status::Finished(_) | Status::Collected => record.message.as_deref(),
        };
        let test = Test {
            // The schema wants a name of at least one character.
            name: if record.name.is_empty() {
                "(unnamed)"
            } else {
                &record.name
            },
            status,
            duration: record.duration_ms.unwrap_or(0),
            raw_status: record.status.raw(),
            suite: &record.suites,
            file_path: record.file.as_deref(),
            line: record.line,
            message,
            trace: record.details.as_deref(),
            tags: &record.tags,
            retries: record.retries,
            flaky,
            stdout: record.stdout.lines().collect(),
            stderr: record.stderr.lines().collect(),
            extra: Extra {
                id: &record.source_id,
                expected: record.expected.as_deref(),
                actual: record.actual.as_deref(),
            },
        };
        let out = self.file.writer();
        if self.written {
            out.write_all(b",\n")?;
        } else {
            out.write_all(b"\n")?;
            self.written = true;
        }
        serde_json::to_writer(&mut *out, &test)?;
        Ok(())
    }

    fn count(&mut self, status: Status, ctrf: &str, flaky: bool) {
        let counts = &mut self.counts;
        counts.tests += 1;
        counts.flaky += u64::from(flaky);
        *match ctrf {
            "passed" => &mut counts.passed,
            "failed" => &mut counts.failed,
            "skipped" => &mut counts.skipped,
            "pending" => &mut counts.pending,
            _ => &mut counts.other,
        } += 1;
        let outcomes = &mut self.outcomes;
        *match status {
            Status::Finished(Outcome::Passed) => &mut outcomes.passed,
            Status::Finished(Outcome::Failed) => &mut outcomes.failed,
            Status::Finished(Outcome::Error) => &mut outcomes.error,
            Status::Finished(Outcome::Skipped) => &mut outcomes.skipped,
            Status::Finished(Outcome::Xfail) => &mut outcomes.xfail,
            Status::Finished(Outcome::Xpass) => &mut outcomes.xpass,
            Status::Finished(Outcome::Todo) => &mut outcomes.todo,
            Status::Stopped => &mut outcomes.stopped,
            Status::Collected => &mut outcomes.collected,
        } += 1;
    }
}

impl Output for CtrfFile {
    /// The framework's name and version, from its reporter's hello.
    fn source(&mut self, event: &TestEvent) -> io::Result<()> {
        if let TestEvent::Hello { runner, version } = event {
            self.framework = Some((runner.clone(), version.clone()));
        }
        Ok(())
    }

    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        if let TreeEvent::RunEnded(end) = event {
            self.errors.retain(|told| !end.quotes(told));
            (self.errors).extend(end.errors.iter().map(|e| e.message.clone()));
        }
        match self.records.event(event) {
            Collected::Test(record) => self.test(&record),
            Collected::Suite { held, .. } => held.iter().try_for_each(|record| self.test(record)),
            Collected::Log { level, text } => {
                match level {
                    LogLevel::Error => self.errors.push(text.to_owned()),
                    LogLevel::Warning => self.warnings.push(text.to_owned()),
                    LogLevel::Info => {}
                }
                Ok(())
            }
            // CTRF has no place for a suite's output.
            Collected::Nothing | Collected::Output { .. } => Ok(()),
        }
    }

    /// Writes the summary, the tool and the run's extras after the tests,
    /// and puts the file in place.
    /// Text printed while one test runs is that test's stdout.
    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.records.text(bytes);
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        for record in self.records.release() {
            self.test(&record)?;
        }
        #[derive(Serialize)]
        struct Summary<'a> {
            #[serde(flatten)]
            counts: &'a Counts,
            start: u64,
            stop: u64,
            duration: u64,
            extra: &'a Outcomes,
        }
        #[derive(Serialize)]
        struct Tool<'a> {
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            version: Option<&'a str>,
            extra: ToolExtra,
        }
        #[derive(Serialize)]
        struct ToolExtra {
            tcrunner: &'static str,
        }
        #[derive(Serialize)]
        struct Extra<'a> {
            errors: &'a [String],
            warnings: &'a [String],
            groups: &'a Groups,
        }
        let stop = now_ms().max(self.start);
        let summary = Summary {
            counts: &self.counts,
            start: self.start,
            stop,
            duration: stop - self.start,
            extra: &self.outcomes,
        };
        let tool = Tool {
            name: self.framework.as_ref().map_or("tcrunner", |(name, _)| name),
            version: self.framework.as_ref().and_then(|(_, v)| v.as_deref()),
            extra: ToolExtra {
                tcrunner: env!("CARGO_PKG_VERSION"),
            },
        };
        let extra = Extra {
            errors: &self.errors,
            warnings: &self.warnings,
            groups: &self.groups,
        };
        let out = self.file.writer();
        out.write_all(b"\n],\"summary\":")?;
        serde_json::to_writer(&mut *out, &summary)?;
        out.write_all(b",\"tool\":")?;
        serde_json::to_writer(&mut *out, &tool)?;
        out.write_all(b",\"extra\":")?;
        serde_json::to_writer(&mut *out, &extra)?;
        out.write_all(b"}}\n")?;
        self.file.commit()
    }
}

impl Drop for CtrfFile {
    /// A run that ends without reaching the outputs' end (tcrunner failed
    /// to write its stream, say) still leaves a whole file, saying so.
    fn drop(&mut self) {
        if !self.finished {
            self.errors
                .push("tcrunner stopped before the end of the run".to_owned());
            let _ = self.finish();
        }
    }
}
