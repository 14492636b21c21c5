//! One record per test, collected from the tree's events: what a result
//! file writes about a test (its full suite path, file, line, verdict,
//! message, output, tags, retries), for every file output alike.
//!
//! Only open nodes are held: a suite's name until it closes, a running
//! test's record (with its output) until it finishes, so memory stays flat
//! in the number of tests. A jest run's records are also held until their
//! file closes, for jest 30 may still charge a failure to a test that
//! finished (a node's `late`): that failure is folded into the test's
//! record, so the files count the test once, with jest's verdict.
use crate::event::{LogLevel, Outcome, Stream, TestResult};
use crate::hash::FastMap;

use super::grading;
use super::output::{Opened, TreeEvent};

/// How a test ended, as far as a result file tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// The framework's verdict.
    Finished(Outcome),
    /// The run ended under it (crash, time limit, signal): it never finished.
    Stopped,
    /// Collect-only: declared, not run.
    Collected,
}

impl Status {
    /// How the test counts in a tally by group; one only declared
    /// (collect-only) does not.
    pub(crate) fn graded(self) -> Option<grading::Status> {
        match self {
            Status::Finished(outcome) => Some(grading::Status::of(outcome)),
            Status::Stopped => Some(grading::Status::Error),
            Status::Collected => None,
        }
    }

    /// The framework-neutral word for the status: the outcome's own name
    /// (`passed`, `failed`, `error`, `skipped`, `xfail`, `xpass`, `todo`),
    /// `stopped` or `collected`.
    pub(crate) fn raw(self) -> &'static str {
        match self {
            Status::Finished(Outcome::Passed) => "passed",
            Status::Finished(Outcome::Failed) => "failed",
            Status::Finished(Outcome::Error) => "error",
            Status::Finished(Outcome::Skipped) => "skipped",
            Status::Finished(Outcome::Xfail) => "xfail",
            Status::Finished(Outcome::Xpass) => "xpass",
            Status::Finished(Outcome::Todo) => "todo",
            Status::Stopped => "stopped",
            Status::Collected => "collected",
        }
    }
}

/// Everything known about one test when it ends.
#[derive(Debug, Clone)]
pub(crate) struct TestRecord {
    /// The source's id of the test (pytest's node id; a reporter's own id
    /// for jest and vitest; a numbered one for a report file's test).
    pub source_id: String,
    /// The file (or top-level) node it lives under; its own id when it is
    /// top-level itself.
    pub flow: u64,
    /// The short name.
    pub name: String,
    /// The names of the suites above it, outermost first (folders, file,
    /// classes or describe blocks, a parent test for a subtest).
    pub suites: Vec<String>,
    /// Where its flow node is in `suites` (`None`: the test is top-level,
    /// its own flow): the suites before it are folders above the file.
    pub flow_at: Option<usize>,
    /// The source file, as the framework gave it.
    pub file: Option<String>,
    /// 1-based line of the definition.
    pub line: Option<u32>,
    pub status: Status,
    pub duration_ms: Option<u64>,
    pub message: Option<String>,
    pub details: Option<String>,
    pub expected: Option<String>,
    pub actual: Option<String>,
    /// What it printed on stdout, as one text.
    pub stdout: String,
    pub stderr: String,
    /// Markers or tags, as the source named them.
    pub tags: Vec<String>,
    /// Failed attempts before the last one (pytest-rerunfailures, jest's
    /// and vitest's retries), counted from the `Attempt N failed:` lines
    /// the reporters write to the test's stderr.
    pub retries: u32,
}

/// A suite or folder that closed.
#[derive(Debug, Clone)]
pub(crate) struct SuiteRecord {
    pub id: u64,
    /// It is a flow (file or top-level) node: its tests are all done.
    pub is_flow: bool,
    pub name: String,
    /// The names above it, outermost first.
    pub suites: Vec<String>,
    pub file: Option<String>,
}

/// What one tree event meant for the records.
#[derive(Debug)]
pub(crate) enum Collected<'a> {
    /// Nothing a result file writes.
    Nothing,
    /// A test ended (finished, stopped, or declared in a collect-only run).
    Test(Box<TestRecord>),
    /// A suite closed; a file's records held until then come first.
    Suite {
        held: Vec<TestRecord>,
        suite: SuiteRecord,
    },
    /// Output of a suite (`Some(id)`, in flow `flow`) or of the run.
    Output {
        suite: Option<(u64, u64)>,
        stream: Stream,
        text: &'a str,
    },
    /// A run-level note.
    Log { level: LogLevel, text: &'a str },
}

/// An open node's name and place.
#[derive(Debug)]
struct OpenNode {
    name: String,
    parent: u64,
    file: Option<String>,
}

/// Collects [`TestRecord`]s from tree events.
#[derive(Debug, Default)]
pub(crate) struct Records {
    open: FastMap<u64, OpenNode>,
    running: FastMap<u64, Box<TestRecord>>,
    /// Whether records wait for their file to close (a jest run).
    holding: bool,
    /// The ended tests' records of each open file, by flow id, in order.
    held: FastMap<u64, Vec<TestRecord>>,
    /// Text the framework prints is the running test's output: not pytest's
    /// while it captures the tests' output (its text is then its own, `-v`'s
    /// verdict lines, live logs), which bare pytest's reports leave out too.
    text_is_output: bool,
    /// The framework's last text left its line open.
    line_open: bool,
    /// An event ended that open line, as the stream's message does, and no
    /// text came since: a line end the text then brings is that line's.
    broke_line: bool,
}

impl Records {
    /// Takes text the framework printed outside any event: where one test
    /// is running, it is that test's stdout (pytest's `-s`, jest's verbose
    /// console of a one-file run, a test's raw writes), as the stream shows
    /// it inside the test. With several running it is no one test's.
    pub(crate) fn text(&mut self, bytes: &[u8]) {
        let bytes = match bytes.strip_prefix(b"\n") {
            Some(rest) if self.broke_line => rest,
            _ => bytes,
        };
        self.broke_line = false;
        let Some(&last) = bytes.last() else {
            return;
        };
        self.line_open = last != b'\n';
        if !self.text_is_output {
            return;
        }
        if let Some(record) = self.only_running() {
            record.stdout.push_str(&String::from_utf8_lossy(bytes));
        }
    }

    /// The record of the one test running, if only one is.
    fn only_running(&mut self) -> Option<&mut TestRecord> {
        if self.running.len() != 1 {
            return None;
        }
        self.running.values_mut().next().map(|record| &mut **record)
    }

    /// Takes one event.
    pub(crate) fn event<'a>(&mut self, event: TreeEvent<'a>) -> Collected<'a> {
        let message = !matches!(
            event,
            TreeEvent::Hello { .. }
                | TreeEvent::LiveOutput
                | TreeEvent::Count(_)
                | TreeEvent::TreeEnded
                | TreeEvent::RunStarted(_)
                | TreeEvent::RunEnded(_)
        );
        if message && std::mem::take(&mut self.line_open) {
            // The stream starts the event's message on a line of its own,
            // which ends the open line of the text: the test's text ends it
            // there too (pytest's `-v` verdict, then the test's output).
            self.broke_line = true;
            if self.text_is_output {
                if let Some(record) = self.only_running() {
                    record.stdout.push('\n');
                }
            }
        }
        match event {
            TreeEvent::Started(node) | TreeEvent::TreeSuite(node) => {
                if node.is_test && matches!(event, TreeEvent::Started(_)) {
                    let record = Box::new(self.record(node));
                    self.running.insert(node.id, record);
                }
                self.open.insert(
                    node.id,
                    OpenNode {
                        name: node.node.name.clone(),
                        parent: node.parent,
                        file: node.node.file.clone(),
                    },
                );
                Collected::Nothing
            }
            TreeEvent::Output { node, stream, text } => match node {
                Some(node) => match self.running.get_mut(&node.id) {
                    Some(record) => {
                        let into = match stream {
                            Stream::Stdout => &mut record.stdout,
                            Stream::Stderr => &mut record.stderr,
                        };
                        into.push_str(text);
                        Collected::Nothing
                    }
                    None => Collected::Output {
                        suite: Some((node.id, node.flow)),
                        stream,
                        text,
                    },
                },
                None => Collected::Output {
                    suite: None,
                    stream,
                    text,
                },
            },
            TreeEvent::Finished { node, result } => {
                let mut record = self.take_running(node);
                fill(&mut record, result);
                self.ended(record, node.node.late.as_deref())
            }
            TreeEvent::Stopped(node) => {
                let mut record = self.take_running(node);
                record.status = Status::Stopped;
                self.ended(record, None)
            }
            TreeEvent::TreeTest(node) => {
                let mut record = Box::new(self.record(node));
                record.status = Status::Collected;
                Collected::Test(record)
            }
            TreeEvent::SuiteFinished(node) | TreeEvent::TreeSuiteEnd(node) => {
                let suites = self.path(node.parent);
                let open = self.open.remove(&node.id);
                let is_flow = node.flow == node.id;
                let held = match is_flow {
                    true => self.held.remove(&node.id).unwrap_or_default(),
                    false => Vec::new(),
                };
                Collected::Suite {
                    held,
                    suite: SuiteRecord {
                        id: node.id,
                        is_flow,
                        name: node.node.name.clone(),
                        suites,
                        file: open.and_then(|open| open.file),
                    },
                }
            }
            TreeEvent::Hello { runner, .. } => {
                self.holding = runner == "jest";
                self.text_is_output = runner != "pytest";
                Collected::Nothing
            }
            TreeEvent::LiveOutput => {
                self.text_is_output = true;
                Collected::Nothing
            }
            TreeEvent::Log { level, text } => Collected::Log { level, text },
            TreeEvent::Count(_)
            | TreeEvent::TreeEnded
            | TreeEvent::RunStarted(_)
            | TreeEvent::RunEnded(_) => Collected::Nothing,
        }
    }

    /// A test's record as it ends: written now, or held with its file's
    /// (a late failure folded into the record it reports on).
    fn ended(&mut self, record: Box<TestRecord>, late: Option<&str>) -> Collected<'static> {
        if !self.holding || record.flow_at.is_none() {
            return Collected::Test(record);
        }
        let held = self.held.entry(record.flow).or_default();
        let earlier = late.and_then(|id| held.iter_mut().rev().find(|r| r.source_id == id));
        match earlier {
            Some(earlier) => earlier.fold_late(*record),
            None => held.push(*record),
        }
        Collected::Nothing
    }

    /// The records still held, of files that never closed (a run cut
    /// short), to write before the file's end.
    pub(crate) fn release(&mut self) -> Vec<TestRecord> {
        let mut flows: Vec<_> = self.held.drain().collect();
        flows.sort_unstable_by_key(|(flow, _)| *flow);
        flows.into_iter().flat_map(|(_, records)| records).collect()
    }

    /// A test's record as it starts.
    fn record(&self, node: &Opened<'_>) -> TestRecord {
        let suites = self.path(node.parent);
        let flow_at = (node.flow != node.id)
            .then(|| self.depth(node.flow))
            .flatten();
        TestRecord {
            source_id: node.node.id.clone(),
            flow: node.flow,
            name: node.node.name.clone(),
            suites,
            flow_at,
            file: node.node.file.clone(),
            line: node.node.line,
            status: Status::Finished(Outcome::Passed),
            duration_ms: None,
            message: None,
            details: None,
            expected: None,
            actual: None,
            stdout: String::new(),
            stderr: String::new(),
            tags: node.node.tags.clone(),
            retries: 0,
        }
    }

    /// The running test's record; one started and finished at once (never
    /// registered as running) starts here.
    fn take_running(&mut self, node: &Opened<'_>) -> Box<TestRecord> {
        self.open.remove(&node.id);
        match self.running.remove(&node.id) {
            Some(record) => record,
            None => Box::new(self.record(node)),
        }
    }

    /// The names of `id` and of its open ancestors, outermost first.
    fn path(&self, mut id: u64) -> Vec<String> {
        let mut names = Vec::new();
        while let Some(open) = self.open.get(&id) {
            names.push(open.name.clone());
            id = open.parent;
        }
        names.reverse();
        names
    }

    /// How many open ancestors `id` has.
    fn depth(&self, id: u64) -> Option<usize> {
        let mut open = self.open.get(&id)?;
        let mut depth = 0;
        while let Some(parent) = self.open.get(&open.parent) {
            depth += 1;
            open = parent;
        }
        Some(depth)
    }
}

impl TestRecord {
    /// Takes a failure reported after this test had finished: the verdict
    /// and its reason are the late one's, the time this test's own, the
    /// output both.
    fn fold_late(&mut self, late: TestRecord) {
        self.status = late.status;
        self.message = late.message;
        self.details = late.details;
        self.expected = late.expected;
        self.actual = late.actual;
        self.stdout.push_str(&late.stdout);
        self.stderr.push_str(&late.stderr);
    }
}

/// Takes a verdict into a record.
fn fill(record: &mut TestRecord, result: &TestResult) {
    record.status = Status::Finished(result.outcome);
    record.duration_ms = result.duration_ms;
    record.message.clone_from(&result.message);
    record.details.clone_from(&result.details);
    record.expected.clone_from(&result.expected);
    record.actual.clone_from(&result.actual);
    record.retries = retries(&record.stderr);
}

/// The failed attempts a reporter told in a test's stderr: lines that start
/// `Attempt N failed: ` (pytest, jest, vitest) or `An attempt failed: `
/// (vitest, when it does not number them).
fn retries(stderr: &str) -> u32 {
    if !stderr.contains("ttempt") {
        return 0;
    }
    let told = |line: &str| {
        if line.starts_with("An attempt failed: ") {
            return true;
        }
        line.strip_prefix("Attempt ")
            .and_then(|rest| rest.split_once(" failed: "))
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    stderr.lines().filter(|line| told(line)).count() as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Node, NodeKind};

    fn opened(id: u64, parent: u64, flow: u64, is_test: bool, node: &Node) -> Opened<'_> {
        Opened {
            id,
            parent,
            flow,
            is_test,
            node,
        }
    }

    #[test]
    fn a_test_gets_its_path_output_and_verdict() {
        let dir = Node {
            name: "tests".into(),
            kind: NodeKind::Dir,
            ..Node::default()
        };
        let file = Node {
            name: "test_a.py".into(),
            kind: NodeKind::File,
            file: Some("/p/tests/test_a.py".into()),
            ..Node::default()
        };
        let test = Node {
            name: "test_x".into(),
            kind: NodeKind::Test,
            line: Some(3),
            tags: vec!["slow".into()],
            ..Node::default()
        };
        let (d, f, t) = (
            opened(1, 0, 1, false, &dir),
            opened(2, 1, 2, false, &file),
            opened(3, 2, 2, true, &test),
        );
        let mut records = Records::default();
        for node in [&d, &f, &t] {
            assert!(matches!(
                records.event(TreeEvent::Started(node)),
                Collected::Nothing
            ));
        }
        records.event(TreeEvent::Output {
            node: Some(&t),
            stream: Stream::Stderr,
            text: "Attempt 1 failed: boom\ntrace\n",
        });
        let result = TestResult {
            outcome: Outcome::Failed,
            duration_ms: Some(7),
            message: Some("boom".into()),
            ..TestResult::default()
        };
        let Collected::Test(record) = records.event(TreeEvent::Finished {
            node: &t,
            result: &result,
        }) else {
            panic!("no record")
        };
        assert_eq!(record.suites, ["tests", "test_a.py"]);
        assert_eq!(record.flow_at, Some(1));
        assert_eq!(record.status.raw(), "failed");
        assert_eq!(record.retries, 1);
        assert_eq!(record.tags, ["slow"]);
        assert_eq!(record.line, Some(3));
        let Collected::Suite { suite, .. } = records.event(TreeEvent::SuiteFinished(&f)) else {
            panic!("no suite")
        };
        assert!(suite.is_flow);
        assert_eq!(suite.suites, ["tests"]);
        assert_eq!(suite.file.as_deref(), Some("/p/tests/test_a.py"));
        assert!(records.open.len() == 1 && records.running.is_empty());
    }

    #[test]
    fn a_jest_files_records_wait_for_it_and_take_late_failures_in() {
        let file = Node {
            name: "a.test.js".into(),
            kind: NodeKind::File,
            ..Node::default()
        };
        let test = |id: &str, late: Option<&str>| Node {
            id: id.into(),
            name: "t".into(),
            kind: NodeKind::Test,
            late: late.map(str::to_owned),
            ..Node::default()
        };
        let (first, second, late) = (test("1", None), test("2", None), test("3", Some("1")));
        let f = opened(1, 0, 1, false, &file);
        let tests = [
            opened(2, 1, 1, true, &first),
            opened(3, 1, 1, true, &second),
            opened(4, 1, 1, true, &late),
        ];
        let mut records = Records::default();
        records.event(TreeEvent::Hello {
            runner: "jest",
            version: None,
        });
        records.event(TreeEvent::Started(&f));
        let results =
            [Outcome::Passed, Outcome::Skipped, Outcome::Error].map(|outcome| TestResult {
                outcome,
                duration_ms: Some(5),
                message: Some(format!("{outcome:?}")),
                ..TestResult::default()
            });
        for (node, result) in tests.iter().zip(&results) {
            records.event(TreeEvent::Started(node));
            let collected = records.event(TreeEvent::Finished { node, result });
            assert!(matches!(collected, Collected::Nothing));
        }
        let held = records.release();
        let found: Vec<_> = held
            .iter()
            .map(|r| (r.source_id.as_str(), r.status.raw(), r.message.as_deref()))
            .collect();
        assert_eq!(
            found,
            [
                ("1", "error", Some("Error")),
                ("2", "skipped", Some("Skipped"))
            ]
        );
        assert!(records.release().is_empty());
    }

    #[test]
    fn retries_count_told_attempts_only() {
        assert_eq!(retries(""), 0);
        assert_eq!(
            retries("Attempt 1 failed: a\nx\nAttempt 2 failed: b\nAn attempt failed: c\n"),
            3
        );
        assert_eq!(retries("Attempt one failed: a\n  Attempt 1 failed: b\n"), 0);
    }
}
