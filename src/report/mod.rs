//! Reporters: turn tree events into an output stream, one per dialect.
//!
//! [`Pipeline`] is what every source feeds: events go through the
//! [`Tree`], which assigns ids and decides what opens and
//! closes, then to the reporter of the configured dialect.
mod intellij;
mod passthrough;
mod teamcity;

use std::collections::HashMap;
use std::io::{self, Write};

use tcrunner_protocol::{Message, Timestamp, Value, Writer};

use crate::cli::{Dialect, OutputConfig};
use crate::event::{LogLevel, Node, Outcome, Stream, TestEvent, TestResult};
use crate::tree::{report_test, Opened, Reporter, Tree, TreeEvent};
use passthrough::{Piece, TextFilter};

/// The most characters one `testStdOut`/`testStdErr` carries; longer output
/// is split across messages (teamcity-messages uses the same size).
const OUTPUT_CHUNK_CHARS: usize = 50_000;

/// Counts of what a run reported, by outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
    pub xfailed: u64,
    pub xpassed: u64,
    pub todo: u64,
    /// Tests that started but never finished (closed as stopped).
    pub stopped: u64,
}

impl Summary {
    pub(crate) fn count(&mut self, outcome: Outcome) {
        let slot = match outcome {
            Outcome::Passed => &mut self.passed,
            Outcome::Failed => &mut self.failed,
            Outcome::Error => &mut self.errors,
            Outcome::Skipped => &mut self.skipped,
            Outcome::Xfail => &mut self.xfailed,
            Outcome::Xpass => &mut self.xpassed,
            Outcome::Todo => &mut self.todo,
        };
        *slot += 1;
    }

    /// Every test reported, whatever its outcome.
    pub(crate) fn total(&self) -> u64 {
        self.passed
            + self.failed
            + self.errors
            + self.skipped
            + self.xfailed
            + self.xpassed
            + self.todo
            + self.stopped
    }

    /// Whether any test failed, errored or was stopped.
    pub(crate) fn any_failed(&self) -> bool {
        self.failed + self.errors + self.stopped > 0
    }
}

/// Why a test that never finished was closed.
const STOPPED: &str = "stopped: the run ended before this test finished";

/// The attributes of a `testFailed` after the `n` in `attrs` that name the
/// test: the failure's message, details, and the comparison when both values
/// are known. Returns the new length.
fn failure<'a>(
    attrs: &mut [(&'a str, Value<'a>); 8],
    mut n: usize,
    result: &'a TestResult,
) -> usize {
    attrs[n] = ("message", failure_message(result).into());
    attrs[n + 1] = ("details", result.details.as_deref().unwrap_or("").into());
    n += 2;
    if let (Some(expected), Some(actual)) = (&result.expected, &result.actual) {
        attrs[n] = ("type", "comparisonFailure".into());
        attrs[n + 1] = ("expected", expected.as_str().into());
        attrs[n + 2] = ("actual", actual.as_str().into());
        n += 3;
    }
    n
}

/// A duration in whole milliseconds as consumers read it (a Java long).
fn duration(ms: u64) -> Value<'static> {
    Value::Number(ms.min(i64::MAX as u64))
}

/// A run-level note as a `message` with TeamCity's status words.
fn log_message(level: LogLevel, text: &str) -> Message {
    let status = match level {
        LogLevel::Info => "NORMAL",
        LogLevel::Warning => "WARNING",
        LogLevel::Error => "ERROR",
    };
    Message::new("message")
        .with("text", text)
        .with("status", status)
}

/// The message text of a failed or ignored test.
fn failure_message(result: &TestResult) -> &str {
    if let Some(message) = result.message.as_deref() {
        return message;
    }
    match result.outcome {
        Outcome::Passed | Outcome::Xpass => "",
        Outcome::Failed => "Failed",
        Outcome::Error => "Error",
        Outcome::Skipped => "Skipped",
        Outcome::Xfail => "Expected failure",
        Outcome::Todo => "Todo",
    }
}

/// Writes messages and filtered plain text to the stream.
pub(crate) struct Emitter<W: Write> {
    writer: Writer<W>,
    timestamps: bool,
    /// The intellij dialect: its consumer prints a `message`'s text as it is.
    intellij: bool,
    filter: TextFilter,
}

impl<W: Write> Emitter<W> {
    fn send(&mut self, message: Message) -> io::Result<()> {
        self.settle_text()?;
        if self.timestamps {
            self.writer.message_at(&message, Timestamp::now_utc())
        } else {
            self.writer.message(&message)
        }
    }

    /// Sends a message given as borrowed parts (no allocation).
    fn send_parts(&mut self, name: &str, attrs: &[(&str, Value<'_>)]) -> io::Result<()> {
        self.settle_text()?;
        let at = self.timestamps.then(Timestamp::now_utc);
        self.writer.message_parts(name, attrs, at)
    }

    /// Sends `name` with `attrs` (at most three) plus `key=<chunk>` once per
    /// chunk of `text`.
    fn send_chunked(
        &mut self,
        name: &str,
        attrs: &[(&str, Value<'_>)],
        key: &str,
        text: &str,
    ) -> io::Result<()> {
        let mut all = [("", Value::Text("")); 4];
        let n = attrs.len();
        all[..n].copy_from_slice(attrs);
        let mut rest = text;
        loop {
            // No more bytes than the limit means no more characters either.
            let cut = if rest.len() <= OUTPUT_CHUNK_CHARS {
                rest.len()
            } else {
                rest.char_indices()
                    .nth(OUTPUT_CHUNK_CHARS)
                    .map_or(rest.len(), |(i, _)| i)
            };
            let (chunk, tail) = rest.split_at(cut);
            all[n] = (key, Value::Text(chunk));
            self.send_parts(name, &all[..=n])?;
            if tail.is_empty() {
                return Ok(());
            }
            rest = tail;
        }
    }

    /// Plain text, with tree-changing service messages neutralised.
    fn text(&mut self, text: &str) -> io::Result<()> {
        self.bytes(text.as_bytes())
    }

    fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut result = Ok(());
        let (writer, timestamps, line_break) = (&mut self.writer, self.timestamps, self.intellij);
        self.filter.push(bytes, |piece| {
            if result.is_ok() {
                result = write_piece(writer, timestamps, line_break, piece);
            }
        });
        result
    }

    fn finish(&mut self) -> io::Result<()> {
        self.settle_text()?;
        self.writer.flush()
    }

    /// Writes out an unfinished line of text the filter holds (one with a
    /// `#`, kept in case it grows into a service message) before a message:
    /// the consumer gives text to the test running when it arrives, and the
    /// line is that test's. Its rest, if any, is a line of its own.
    #[inline]
    fn settle_text(&mut self) -> io::Result<()> {
        if !self.filter.holds_text() {
            return Ok(());
        }
        self.write_held_text()
    }

    /// [`Emitter::settle_text`] when there is text held: apart, so that the
    /// check before every message stays small.
    #[cold]
    fn write_held_text(&mut self) -> io::Result<()> {
        let mut result = Ok(());
        let (writer, timestamps, line_break) = (&mut self.writer, self.timestamps, self.intellij);
        self.filter.finish(|piece| {
            if result.is_ok() {
                result = write_piece(writer, timestamps, line_break, piece);
            }
        });
        result
    }
}

/// Writes a piece of filtered text; a blocked line goes out as a `message`
/// with `status='NORMAL'` (IntelliJ reads `status` without checking that it
/// is there), ending in a line break where the IDE prints the text as it is.
fn write_piece<W: Write>(
    writer: &mut Writer<W>,
    timestamps: bool,
    line_break: bool,
    piece: Piece<'_>,
) -> io::Result<()> {
    match piece {
        Piece::Text(bytes) => writer.text(bytes),
        Piece::Blocked(mut line) => {
            if line_break {
                line.push('\n');
            }
            let at = timestamps.then(Timestamp::now_utc);
            let attrs = [
                ("text", Value::Text(&line)),
                ("status", Value::Text("NORMAL")),
            ];
            writer.message_parts("message", &attrs, at)
        }
    }
}

/// The configured dialect.
enum Dialected<W: Write> {
    Intellij(intellij::Intellij<W>),
    Teamcity(teamcity::Teamcity<W>),
}

impl<W: Write> Dialected<W> {
    fn emitter(&mut self) -> &mut Emitter<W> {
        match self {
            Dialected::Intellij(r) => &mut r.out,
            Dialected::Teamcity(r) => &mut r.out,
        }
    }
}

impl<W: Write> Reporter for Dialected<W> {
    fn report(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match self {
            Dialected::Intellij(r) => r.report(event),
            Dialected::Teamcity(r) => r.report(event),
        }
    }

    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        match self {
            Dialected::Intellij(r) => r.test(node, output, result),
            Dialected::Teamcity(r) => r.test(node, output, result),
        }
    }
}

/// Between the tree and the dialect: counts verdicts and, when asked, holds
/// a test's output until it is known whether the test passed.
struct Counting<W: Write> {
    dialect: Dialected<W>,
    summary: Summary,
    /// Output held per running test when passed tests' output is dropped.
    held: Option<HashMap<u64, Vec<(Stream, String)>>>,
}

impl<W: Write> Reporter for Counting<W> {
    fn report(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::Output {
                node: Some(node),
                stream,
                text,
            } if node.is_test => {
                if let Some(held) = &mut self.held {
                    held.entry(node.id)
                        .or_default()
                        .push((stream, text.to_owned()));
                    return Ok(());
                }
                self.dialect.report(TreeEvent::Output {
                    node: Some(node),
                    stream,
                    text,
                })
            }
            TreeEvent::Finished { node, result } => {
                self.summary.count(result.outcome);
                self.release(
                    node,
                    result.outcome.verdict() == crate::event::Verdict::Passed,
                )?;
                self.dialect.report(TreeEvent::Finished { node, result })
            }
            TreeEvent::Stopped(node) => {
                self.summary.stopped += 1;
                self.release(node, false)?;
                self.dialect.report(TreeEvent::Stopped(node))
            }
            // Listed, not `_`, so a new event is a compile error here too.
            event @ (TreeEvent::Count(_)
            | TreeEvent::Started(_)
            | TreeEvent::Output { .. }
            | TreeEvent::SuiteFinished(_)
            | TreeEvent::Log { .. }
            | TreeEvent::TreeSuite(_)
            | TreeEvent::TreeTest(_)
            | TreeEvent::TreeSuiteEnd(_)
            | TreeEvent::TreeEnded) => self.dialect.report(event),
        }
    }

    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        if self.held.is_some() {
            // The test's output waits for its verdict: event by event.
            return report_test(self, node, output, result);
        }
        // Counted before its events are written, not between them: the
        // count is only read once the whole stream is written.
        self.summary.count(result.outcome);
        self.dialect.test(node, output, result)
    }
}

impl<W: Write> Counting<W> {
    /// Reports the output held for a test that ended, unless it passed.
    #[inline]
    fn release(&mut self, node: &crate::tree::Opened<'_>, passed: bool) -> io::Result<()> {
        match &mut self.held {
            // Nothing is held unless passed tests' output is dropped.
            None => Ok(()),
            Some(held) => match held.remove(&node.id) {
                Some(output) => self.report_held(node, passed, output),
                None => Ok(()),
            },
        }
    }

    fn report_held(
        &mut self,
        node: &crate::tree::Opened<'_>,
        passed: bool,
        output: Vec<(Stream, String)>,
    ) -> io::Result<()> {
        if passed {
            return Ok(());
        }
        for (stream, text) in output {
            self.dialect.report(TreeEvent::Output {
                node: Some(node),
                stream,
                text: &text,
            })?;
        }
        Ok(())
    }
}

/// Events in, service messages out: the tree plus the dialect's reporter.
pub(crate) struct Pipeline<W: Write> {
    tree: Tree,
    sink: Counting<W>,
}

impl<W: Write> Pipeline<W> {
    /// Starts a stream: writes the run's opening messages.
    pub(crate) fn new(config: &OutputConfig, out: W) -> io::Result<Self> {
        let emitter = Emitter {
            writer: Writer::with_options(
                out,
                tcrunner_protocol::WriterOptions { flush_each: false },
            ),
            timestamps: config.timestamps,
            intellij: config.dialect == Dialect::Intellij,
            filter: TextFilter::new(
                config.block_service_messages,
                config.dialect == Dialect::Intellij,
            ),
        };
        let mut dialect = match config.dialect {
            Dialect::Intellij => {
                let mut r = intellij::Intellij {
                    out: emitter,
                    embedded: config.offset > 0,
                    no_matrix: std::env::var_os("_jb_do_not_call_enter_matrix").is_some(),
                };
                r.start()?;
                Dialected::Intellij(r)
            }
            Dialect::Teamcity => {
                let mut r = teamcity::Teamcity::new(emitter, config.retry_support);
                r.start()?;
                Dialected::Teamcity(r)
            }
        };
        dialect.emitter().writer.flush()?;
        let held = config.skip_passed_output.then(HashMap::new);
        Ok(Pipeline {
            tree: if config.collect_only {
                Tree::collect_only(config.offset)
            } else {
                Tree::new(config.offset)
            },
            sink: Counting {
                dialect,
                summary: Summary::default(),
                held,
            },
        })
    }

    /// For report files, whose suites get nothing after they are done
    /// ([`Tree::forget_done_suites`]).
    pub(crate) fn forget_done_suites(&mut self) {
        self.tree.forget_done_suites();
    }

    /// One event from a source.
    pub(crate) fn event(&mut self, event: TestEvent) -> io::Result<()> {
        if let (TestEvent::LiveOutput, Dialected::Teamcity(teamcity)) =
            (&event, &mut self.sink.dialect)
        {
            teamcity.live_output = true;
        }
        self.tree.apply(event, &mut self.sink)
    }

    /// The events of one test whose id is new, in one step
    /// ([`Tree::new_test`]), from the caller's buffers.
    pub(crate) fn new_test(
        &mut self,
        node: &Node,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        self.tree.new_test(node, output, result, &mut self.sink)
    }

    /// Plain framework output, passed through (tree-changing service
    /// messages in it are neutralised).
    pub(crate) fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.sink.dialect.emitter().bytes(bytes)
    }

    /// Pushes what was written so far to the output.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.sink.dialect.emitter().writer.flush()
    }

    /// Source ids of the tests running now, oldest first.
    pub(crate) fn running_tests(&self) -> Vec<String> {
        self.tree.running_tests()
    }

    /// Where an open node sits in the tree, by names (`a.test.js > block >
    /// test`), for telling the user of it: jest's and vitest's source ids
    /// are JSON.
    pub(crate) fn path_of(&self, source: &str) -> Option<String> {
        self.tree.path_of(source)
    }

    /// What has been reported so far.
    pub(crate) fn summary(&self) -> &Summary {
        &self.sink.summary
    }

    /// Ends the stream: closes every open node (unfinished tests as stopped)
    /// and returns what was reported.
    pub(crate) fn finish(mut self) -> io::Result<Summary> {
        self.sink.dialect.emitter().finish()?;
        self.tree.close_all(&mut self.sink)?;
        match &mut self.sink.dialect {
            Dialected::Intellij(r) => r.end()?,
            Dialected::Teamcity(r) => r.end()?,
        }
        self.sink.dialect.emitter().finish()?;
        Ok(self.sink.summary)
    }
}
