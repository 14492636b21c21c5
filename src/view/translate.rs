//! Service messages back into [`TestEvent`]s, for any producer's stream:
//! id-based trees (`nodeId`/`parentNodeId`, as IntelliJ reads them) and
//! name-based ones (suites nested by name within each `flowId`, as the
//! TeamCity server reads them, parallel flows interleaved). Whatever is not
//! about the tree (`testMetadata`, `blockOpened`, `progressMessage`…) is
//! left out; `message` and `buildProblem` become notes of the run.
use tcrunner_protocol::Message;

use crate::event::{LogLevel, Node, NodeKind, Outcome, Stream, TestEvent, TestResult};
use crate::hash::{FastMap, FastSet};

/// What a message says for the human view: events, or text to show.
#[derive(Debug, PartialEq)]
pub(super) enum Said {
    Events(Vec<TestEvent>),
    /// A `message` of status NORMAL: a line of the log.
    Text(String),
}

/// A test that started and has not finished: its id, its suite's, and the
/// verdict its `testFailed` or `testIgnored` gave, until `testFinished`.
#[derive(Debug)]
struct Running {
    id: String,
    parent: Option<String>,
    /// Tests started before it.
    order: u64,
    verdict: Option<TestResult>,
}

/// The reader's state: open suites per flow (name mode) and running tests.
#[derive(Debug, Default)]
pub(super) struct Translator {
    /// Name mode: per flow, the open suites' names and ids, innermost last.
    suites: FastMap<String, Vec<(String, String)>>,
    /// Running tests by flow and name (name mode) or by `nodeId`.
    running: FastMap<(String, String), Running>,
    /// Id mode: the suites open now (a `parentNodeId` outside them, the
    /// root `0` say, is the top level).
    open_ids: FastSet<String>,
    /// Ids handed out in name mode.
    next: u64,
    /// Tests started so far.
    started: u64,
}

/// A suite named like a file (`math.test.js`, `tests/test_a.py`) is one:
/// its line is a file's line in the view.
fn looks_like_file(name: &str) -> bool {
    match name.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_alphanumeric())
                && !name.contains(' ')
        }
        None => false,
    }
}

/// `file:///a/b.py:3` or `python</root>://a.b`: the file and line, when the
/// hint names a file.
fn file_of(hint: &str) -> (Option<String>, Option<u32>) {
    let Some(rest) = hint.strip_prefix("file://") else {
        return (None, None);
    };
    match rest.rsplit_once(':') {
        Some((file, line)) if line.parse::<u32>().is_ok() => {
            (Some(file.to_owned()), line.parse().ok())
        }
        _ => (Some(rest.to_owned()), None),
    }
}

impl Translator {
    fn fresh(&mut self, prefix: char) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// An id-mode node's parent, when it is an open suite.
    fn id_parent(&self, message: &Message) -> Option<String> {
        let parent = format!("n{}", message.get("parentNodeId")?);
        self.open_ids.contains(&parent).then_some(parent)
    }

    /// The key of a test: its `nodeId`, or its flow and name.
    fn test_key(message: &Message) -> (String, String) {
        match message.get("nodeId") {
            Some(id) => (String::from("\u{0}id"), id.to_owned()),
            None => (
                message.get("flowId").unwrap_or_default().to_owned(),
                message.get("name").unwrap_or_default().to_owned(),
            ),
        }
    }

    /// The events one message stands for.
    pub(super) fn message(&mut self, message: &Message) -> Said {
        let name = message.get("name").unwrap_or_default();
        let flow = message.get("flowId").unwrap_or_default().to_owned();
        let mut events = Vec::new();
        match message.name.as_str() {
            "testCount" => {
                if let Some(count) = message.get("count").and_then(|c| c.parse().ok()) {
                    events.push(TestEvent::Collected { count });
                }
            }
            "testSuiteStarted" => {
                let (file, line) = file_of(message.get("locationHint").unwrap_or_default());
                let (id, parent) = match message.get("nodeId") {
                    Some(id) => {
                        let id = format!("n{id}");
                        self.open_ids.insert(id.clone());
                        (id, self.id_parent(message))
                    }
                    None => {
                        let id = self.fresh('s');
                        let stack = self.suites.entry(flow).or_default();
                        let parent = stack.last().map(|(_, id)| id.clone());
                        stack.push((name.to_owned(), id.clone()));
                        (id, parent)
                    }
                };
                events.push(TestEvent::Suite(Node {
                    id,
                    parent,
                    name: name.to_owned(),
                    kind: if looks_like_file(name) {
                        NodeKind::File
                    } else {
                        NodeKind::Suite
                    },
                    file,
                    line,
                    ..Node::default()
                }));
            }
            "testSuiteFinished" => {
                let id = match message.get("nodeId") {
                    Some(id) => {
                        let id = format!("n{id}");
                        self.open_ids.remove(&id);
                        Some(id)
                    }
                    None => {
                        let stack = self.suites.entry(flow).or_default();
                        // The innermost suite of that name; the server
                        // closes the ones inside it with it.
                        match stack.iter().rposition(|(n, _)| n == name) {
                            Some(at) => {
                                let closed: Vec<_> = stack.drain(at..).collect();
                                for (_, inner) in closed.iter().skip(1).rev() {
                                    self.end_judged(
                                        |parent| parent == Some(inner.as_str()),
                                        &mut events,
                                    );
                                    events.push(TestEvent::SuiteDone { id: inner.clone() });
                                }
                                Some(closed[0].1.clone())
                            }
                            None => None,
                        }
                    }
                };
                if let Some(id) = id {
                    self.end_judged(|parent| parent == Some(id.as_str()), &mut events);
                    events.push(TestEvent::SuiteDone { id });
                }
            }
            "testStarted" => {
                let id = self.start(message, &mut events);
                events.push(TestEvent::Started { id });
            }
            "testFailed" | "testIgnored" => {
                let key = Self::test_key(message);
                // A verdict without a start is a whole test, as TeamCity
                // reads it (vitest-teamcity-reporter's skips and todos).
                let whole = !self.running.contains_key(&key);
                if whole {
                    let id = self.start(message, &mut events);
                    events.push(TestEvent::Started { id });
                }
                let running = self.running.get_mut(&key).expect("just started");
                let text = |key: &str| message.get(key).map(str::to_owned);
                let comparison = message.get("type") == Some("comparisonFailure");
                let result = TestResult {
                    id: running.id.clone(),
                    outcome: match (message.name.as_str(), message.get("error")) {
                        ("testIgnored", _) => Outcome::Skipped,
                        (_, Some("true")) => Outcome::Error,
                        _ => Outcome::Failed,
                    },
                    duration_ms: None,
                    message: text("message"),
                    details: text("details"),
                    expected: text("expected").filter(|_| comparison),
                    actual: text("actual").filter(|_| comparison),
                };
                // A second verdict (a failure after an ignore) keeps the failure.
                if running
                    .verdict
                    .as_ref()
                    .is_none_or(|v| v.outcome == Outcome::Skipped)
                {
                    running.verdict = Some(result);
                }
                if whole {
                    let running = self.running.remove(&key).expect("just started");
                    events.extend(running.verdict.map(TestEvent::Finished));
                }
            }
            "testFinished" => {
                let key = Self::test_key(message);
                if let Some(running) = self.running.remove(&key) {
                    let mut result = running.verdict.unwrap_or(TestResult {
                        id: running.id,
                        ..TestResult::default()
                    });
                    result.duration_ms = message
                        .get("duration")
                        .and_then(|d| d.parse::<f64>().ok())
                        .filter(|d| d.is_finite() && *d >= 0.0)
                        .map(|d| d.round() as u64);
                    events.push(TestEvent::Finished(result));
                }
            }
            "testStdOut" | "testStdErr" => {
                let key = Self::test_key(message);
                let stream = if message.name == "testStdOut" {
                    Stream::Stdout
                } else {
                    Stream::Stderr
                };
                let text = message.get("out").unwrap_or_default();
                let mut text = text.to_owned();
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                events.push(TestEvent::Output {
                    id: self.running.get(&key).map(|r| r.id.clone()),
                    stream,
                    text,
                });
            }
            "message" => {
                let text = message.get("text").unwrap_or_default().to_owned();
                let level = match message.get("status") {
                    Some("ERROR" | "FAILURE") => LogLevel::Error,
                    Some("WARNING") => LogLevel::Warning,
                    _ => return Said::Text(text + "\n"),
                };
                let text = match message.get("errorDetails") {
                    Some(details) if !details.is_empty() => format!("{text}\n{details}"),
                    _ => text,
                };
                events.push(TestEvent::Log { level, text });
            }
            "buildProblem" => events.push(TestEvent::Log {
                level: LogLevel::Error,
                text: message
                    .get("description")
                    .or(message.value())
                    .unwrap_or_default()
                    .to_owned(),
            }),
            _ => {}
        }
        Said::Events(events)
    }

    /// What is left at the end of the stream: the tests that got a verdict
    /// and no `testFinished` end with that verdict, as IntelliJ keeps a
    /// failed test failed and `check` counts it. The others are closed as
    /// stopped with the rest of the tree.
    pub(super) fn finish(&mut self) -> Vec<TestEvent> {
        let mut events = Vec::new();
        self.end_judged(|_| true, &mut events);
        events
    }

    /// Ends, with their verdicts, the running tests that have one and
    /// whose suite `inside` takes.
    fn end_judged(&mut self, inside: impl Fn(Option<&str>) -> bool, events: &mut Vec<TestEvent>) {
        let mut ended: Vec<_> = self
            .running
            .iter()
            .filter(|(_, running)| running.verdict.is_some() && inside(running.parent.as_deref()))
            .map(|(key, _)| key.clone())
            .collect();
        ended.sort_by_key(|key| self.running[key].order);
        for key in ended {
            if let Some(verdict) = self.running.remove(&key).and_then(|r| r.verdict) {
                events.push(TestEvent::Finished(verdict));
            }
        }
    }

    /// Declares the test `message` starts; returns its id.
    fn start(&mut self, message: &Message, events: &mut Vec<TestEvent>) -> String {
        let key = Self::test_key(message);
        let (id, parent) = match message.get("nodeId") {
            Some(id) => (format!("n{id}"), self.id_parent(message)),
            None => {
                let parent = self
                    .suites
                    .get(&key.0)
                    .and_then(|stack| stack.last())
                    .map(|(_, id)| id.clone());
                (self.fresh('t'), parent)
            }
        };
        let (mut file, mut line) = file_of(message.get("locationHint").unwrap_or_default());
        if let Some(path) = message.get("path") {
            file = Some(path.to_owned());
            line = message.get("lineno").and_then(|l| l.parse().ok()).or(line);
        }
        events.push(TestEvent::Test(Node {
            id: id.clone(),
            parent: parent.clone(),
            name: message.get("name").unwrap_or_default().to_owned(),
            kind: NodeKind::Test,
            file,
            line,
            ..Node::default()
        }));
        self.running.insert(
            key,
            Running {
                id: id.clone(),
                parent,
                order: self.started,
                verdict: None,
            },
        );
        self.started += 1;
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcrunner_protocol::{ParseEvent, Parser};

    fn events(stream: &str) -> Vec<TestEvent> {
        let mut translator = Translator::default();
        let mut out = Vec::new();
        let mut parser = Parser::new();
        let mut take = |event: ParseEvent| {
            if let ParseEvent::Message { message, .. } = event {
                if let Said::Events(events) = translator.message(&message) {
                    out.extend(events);
                }
            }
        };
        parser.feed(stream.as_bytes(), &mut take);
        parser.finish(&mut take);
        out
    }

    #[test]
    fn name_mode_nests_by_flow() {
        let got = events(concat!(
            "##teamcity[testSuiteStarted name='a.js' flowId='1']\n",
            "##teamcity[testSuiteStarted name='b.js' flowId='2']\n",
            "##teamcity[testStarted name='t' flowId='2']\n",
            "##teamcity[testStarted name='t' flowId='1']\n",
            "##teamcity[testFailed name='t' flowId='1' message='m' type='comparisonFailure' expected='1' actual='2']\n",
            "##teamcity[testFinished name='t' flowId='1' duration='1.6']\n",
            "##teamcity[testFinished name='t' flowId='2']\n",
            "##teamcity[testSuiteFinished name='a.js' flowId='1']\n",
        ));
        let parents: Vec<_> = got
            .iter()
            .filter_map(|e| match e {
                TestEvent::Test(n) => Some((n.id.as_str(), n.parent.as_deref())),
                _ => None,
            })
            .collect();
        assert_eq!(parents, [("t3", Some("s2")), ("t4", Some("s1"))]);
        let TestEvent::Finished(failed) = &got[6] else {
            panic!("{got:?}")
        };
        assert_eq!(
            (
                failed.id.as_str(),
                failed.outcome,
                failed.duration_ms,
                failed.expected.as_deref()
            ),
            ("t4", Outcome::Failed, Some(2), Some("1"))
        );
        assert_eq!(got[8], TestEvent::SuiteDone { id: "s1".into() });
    }

    #[test]
    fn a_verdict_without_a_start_is_a_whole_test() {
        let got = events(concat!(
            "##teamcity[testIgnored name='todo' flowId='f']\n",
            "##teamcity[testStarted name='t' flowId='f']\n",
        ));
        let TestEvent::Finished(result) = &got[2] else {
            panic!("{got:?}")
        };
        assert_eq!(
            (result.id.as_str(), result.outcome),
            ("t1", Outcome::Skipped)
        );
        assert_eq!(got.len(), 5, "{got:?}");
    }

    /// A failure or an ignore whose `testFinished` never comes keeps its
    /// verdict: when its suite ends (name and id mode), or at the end.
    #[test]
    fn a_verdict_without_a_finish_is_kept() {
        let mut translator = Translator::default();
        let mut got = Vec::new();
        let mut parser = Parser::new();
        let stream = concat!(
            "##teamcity[testSuiteStarted name='s']\n",
            "##teamcity[testStarted name='a']\n",
            "##teamcity[testFailed name='a' message='boom']\n",
            "##teamcity[testSuiteStarted name='inner']\n",
            "##teamcity[testStarted name='b']\n",
            "##teamcity[testIgnored name='b' message='later']\n",
            "##teamcity[testSuiteFinished name='s']\n",
            "##teamcity[testSuiteStarted nodeId='1' parentNodeId='0' name='f']\n",
            "##teamcity[testStarted nodeId='2' parentNodeId='1' name='c']\n",
            "##teamcity[testFailed nodeId='2' message='id']\n",
            "##teamcity[testSuiteFinished nodeId='1']\n",
            "##teamcity[testStarted name='d']\n",
            "##teamcity[testFailed name='d' message='last']\n",
            "##teamcity[testStarted name='e']\n",
        );
        parser.feed(stream.as_bytes(), |event| {
            if let ParseEvent::Message { message, .. } = event {
                if let Said::Events(events) = translator.message(&message) {
                    got.extend(events);
                }
            }
        });
        got.extend(translator.finish());
        let ends: Vec<_> = got
            .iter()
            .filter_map(|event| match event {
                TestEvent::Finished(r) => Some(format!("{} {:?}", r.id, r.outcome)),
                TestEvent::SuiteDone { id } => Some(format!("{id} done")),
                _ => None,
            })
            .collect();
        // `e` has no verdict: it stays running, for the tree to close as stopped.
        assert_eq!(
            ends,
            [
                "t4 Skipped",
                "s3 done",
                "t2 Failed",
                "s1 done",
                "n2 Failed",
                "n1 done",
                "t5 Failed"
            ]
        );
    }

    #[test]
    fn id_mode_keeps_the_tree_and_locations() {
        let got = events(concat!(
            "##teamcity[testSuiteStarted nodeId='1' parentNodeId='0' name='f.py']\n",
            "##teamcity[testStarted nodeId='2' parentNodeId='1' name='t' path='/p/f.py' lineno='4']\n",
            "##teamcity[testIgnored nodeId='2' message='why']\n",
            "##teamcity[testFinished nodeId='2' duration='3']\n",
        ));
        let TestEvent::Test(test) = &got[1] else {
            panic!("{got:?}")
        };
        assert_eq!(
            (test.parent.as_deref(), test.file.as_deref(), test.line),
            (Some("n1"), Some("/p/f.py"), Some(4))
        );
        let TestEvent::Finished(result) = &got[3] else {
            panic!("{got:?}")
        };
        assert_eq!(result.outcome, Outcome::Skipped);
    }
}
