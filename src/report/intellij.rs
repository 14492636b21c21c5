//! The `intellij` dialect: the nodeId/parentNodeId tree PyCharm, IntelliJ
//! and WebStorm build their test view from (pycharm-and-teamcity-protocol
//! §1.5-1.9).
use std::io::{self, Write};

use tcrunner_protocol::{Message, Value};

use super::messages::{duration, failure, failure_message, log_message, MessageWriter, STOPPED};
use super::output::{Opened, Output, TreeEvent};
use crate::event::{Stream, TestResult, Verdict};

pub(crate) struct Intellij<W: Write> {
    out: MessageWriter<W>,
    /// Part of an outer run (`--offset` > 0): the outer runner starts and
    /// finishes testing, so `testingStarted`/`testingFinished` would end it early.
    embedded: bool,
    /// `_jb_do_not_call_enter_matrix` is set (PyCharm's tox runner sets it
    /// for child runs): no `enteredTheMatrix` and no `testCount`.
    no_matrix: bool,
}

impl<W: Write> Intellij<W> {
    /// Writes the run's opening messages.
    pub(super) fn start(
        out: MessageWriter<W>,
        embedded: bool,
        no_matrix: bool,
        parallel: bool,
    ) -> io::Result<Self> {
        let mut stream = Intellij {
            out,
            embedded,
            no_matrix,
        };
        if !no_matrix {
            let mut matrix = Message::new("enteredTheMatrix");
            if parallel {
                // As PyCharm's runner in parallel mode: durations are the
                // reported ones, not the IDE's clock between messages.
                matrix = matrix.with("durationStrategy", "manual");
            }
            stream.out.send(matrix)?;
        }
        if !embedded {
            stream.out.send(Message::new("testingStarted"))?;
        }
        Ok(stream)
    }
}

fn with_ids(name: &str, node: &Opened<'_>) -> Message {
    Message::new(name).with("nodeId", node.id.to_string())
}

impl<W: Write> Output for Intellij<W> {
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            // The IDE gives plain text to the running test anyway.
            TreeEvent::LiveOutput => Ok(()),
            TreeEvent::Count(_) if self.no_matrix => Ok(()),
            // IntelliJ reads the count as an int: a larger one is not sent.
            TreeEvent::Count(count) if count > i32::MAX as u64 => Ok(()),
            TreeEvent::Count(count) => self
                .out
                .send(Message::new("testCount").with("count", count.to_string())),
            TreeEvent::Started(node) => self.opening(started(node), node),
            TreeEvent::TreeSuite(node) => self.opening("suiteTreeStarted", node),
            TreeEvent::TreeTest(node) => self.opening("suiteTreeNode", node),
            TreeEvent::TreeSuiteEnd(node) => self
                .out
                .send(with_ids("suiteTreeEnded", node).with("name", node.node.name.as_str())),
            TreeEvent::TreeEnded => self.out.send(Message::new("treeEnded")),
            // The IDE shows the framework's exit through the process itself.
            TreeEvent::RunStarted(_) | TreeEvent::Hello { .. } | TreeEvent::RunEnded(_) => Ok(()),
            TreeEvent::Output {
                node: Some(node),
                stream,
                text,
            } => self.output(node, stream, text),
            TreeEvent::Output {
                node: None, text, ..
            } => self.out.text(text),
            TreeEvent::Finished { node, result } => self.finished(node, result),
            TreeEvent::Stopped(node) => {
                self.out.send(
                    with_ids("testIgnored", node)
                        .with("message", STOPPED)
                        .with("stopped", "true"),
                )?;
                self.out.send(with_ids("testFinished", node))
            }
            TreeEvent::SuiteFinished(node) => self.out.send_parts(
                "testSuiteFinished",
                &[
                    ("nodeId", node.id.into()),
                    ("name", node.node.name.as_str().into()),
                ],
            ),
            TreeEvent::Log { level, text } => self.out.send(log_message(level, text)),
        }
    }

    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        self.opening(started(node), node)?;
        for (stream, text) in output.iter().filter(|(_, text)| !text.is_empty()) {
            self.output(node, *stream, text)?;
        }
        self.finished(node, result)
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.bytes(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        if !self.embedded {
            self.out.send(Message::new("testingFinished"))?;
        }
        self.out.finish()
    }
}

/// The message that opens a node.
fn started(node: &Opened<'_>) -> &'static str {
    if node.is_test {
        "testStarted"
    } else {
        "testSuiteStarted"
    }
}

impl<W: Write> Intellij<W> {
    /// Output of an open node.
    fn output(&mut self, node: &Opened<'_>, stream: Stream, text: &str) -> io::Result<()> {
        let kind = match stream {
            Stream::Stdout => "testStdOut",
            Stream::Stderr => "testStdErr",
        };
        self.out
            .send_chunked(kind, &[("nodeId", node.id.into())], "out", text)
    }

    /// A test's verdict and its end.
    fn finished(&mut self, node: &Opened<'_>, result: &TestResult) -> io::Result<()> {
        let id = Value::Number(node.id);
        match result.outcome.verdict() {
            Verdict::Passed => {}
            Verdict::Failed => {
                let mut attrs = [("", Value::Text("")); 8];
                attrs[0] = ("nodeId", id);
                let mut n = failure(&mut attrs, 1, result);
                if result.outcome == crate::event::Outcome::Error {
                    attrs[n] = ("error", "true".into());
                    n += 1;
                }
                self.out.send_parts("testFailed", &attrs[..n])?;
            }
            Verdict::Ignored => {
                let message = failure_message(result).into();
                self.out
                    .send_parts("testIgnored", &[("nodeId", id), ("message", message)])?;
            }
        }
        match result.duration_ms {
            Some(ms) => self.out.send_parts(
                "testFinished",
                &[("nodeId", id), ("duration", duration(ms))],
            ),
            None => self.out.send_parts("testFinished", &[("nodeId", id)]),
        }
    }

    /// A message that registers a node (ids, name, location, metainfo),
    /// written from borrowed parts: the hot path of every run.
    fn opening(&mut self, kind: &str, node: &Opened<'_>) -> io::Result<()> {
        let ids = [
            ("nodeId", node.id.into()),
            ("parentNodeId", node.parent.into()),
            ("name", node.node.name.as_str().into()),
        ];
        // A node with no place in a file and no metainfo (every test of
        // most report files) has its ids and name only.
        if node.node.hint.is_none() && node.node.meta.is_none() && node.node.file.is_none() {
            return self.out.send_parts(kind, &ids);
        }
        let built_hint;
        let hint = match &node.node.hint {
            Some(hint) => Some(hint.as_str()),
            None => {
                built_hint = file_hint(node);
                built_hint.as_deref()
            }
        };
        let mut attrs = [("", Value::Text("")); 7];
        attrs[..3].copy_from_slice(&ids);
        let mut n = 3;
        if let Some(hint) = hint {
            attrs[n] = ("locationHint", hint.into());
            n += 1;
        }
        if let Some(meta) = &node.node.meta {
            attrs[n] = ("metainfo", meta.as_str().into());
            n += 1;
        }
        // PyCharm's runner adds the file and 1-based line of a test, both or neither.
        if let (true, Some(file), Some(line)) = (node.is_test, &node.node.file, node.node.line) {
            attrs[n] = ("path", file.as_str().into());
            attrs[n + 1] = ("lineno", u64::from(line).into());
            n += 2;
        }
        self.out.send_parts(kind, &attrs[..n])
    }
}

/// A `file://` URL built from the node's file and line, for a node whose
/// source gave no hint.
fn file_hint(node: &Opened<'_>) -> Option<String> {
    let file = node.node.file.as_deref()?;
    // Built by hand: `format!` cost about 1,150 instructions a test, 4% of
    // converting jest's 100,000-test JSON report (115 M of 2.69 G).
    let mut hint = String::with_capacity("file://".len() + file.len() + ":4294967295".len());
    hint.push_str("file://");
    hint.push_str(file);
    if let Some(line) = node.node.line {
        let mut digits = [0u8; 10];
        let mut at = digits.len();
        let mut rest = line;
        loop {
            at -= 1;
            digits[at] = b'0' + (rest % 10) as u8;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        hint.push(':');
        hint.push_str(std::str::from_utf8(&digits[at..]).expect("ASCII digits"));
    }
    Some(hint)
}
