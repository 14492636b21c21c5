//! Service messages out: the writer both dialects write through, and the
//! attributes they share.
use std::io::{self, Write};

use tcrunner_protocol::{Message, Timestamp, Value, Writer, WriterOptions};

use super::passthrough::{write_blocked, Piece, TextFilter};
use super::transport::Transport;
use crate::cli::{Dialect, OutputConfig};
use crate::event::{LogLevel, Outcome, TestResult};

/// The most characters one `testStdOut`/`testStdErr` carries; longer output
/// is split across messages (teamcity-messages uses the same size).
const OUTPUT_CHUNK_CHARS: usize = 50_000;

/// Why a test that never finished was closed.
pub(super) const STOPPED: &str = "stopped: the run ended before this test finished";

/// The attributes of a `testFailed` after the `n` in `attrs` that name the
/// test: the failure's message, details, and the comparison when both values
/// are known. Returns the new length.
pub(super) fn failure<'a>(
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
pub(super) fn duration(ms: u64) -> Value<'static> {
    Value::Number(ms.min(i64::MAX as u64))
}

/// A run-level note as a `message` with TeamCity's status words.
pub(super) fn log_message(level: LogLevel, text: &str) -> Message {
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
pub(super) fn failure_message(result: &TestResult) -> &str {
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

/// Writes service messages and filtered plain text to the stream: what
/// both dialects write through. The text goes with the messages, or apart
/// from them when they go to the IDE's socket ([`Transport`]).
pub(crate) struct MessageWriter<W: Write> {
    pub(super) writer: Writer<Transport<W>>,
    pub(super) timestamps: bool,
    /// The intellij dialect: its consumer prints a `message`'s text as it is.
    pub(super) intellij: bool,
    pub(super) filter: TextFilter,
}

impl<W: Write> MessageWriter<W> {
    /// A writer of `out` for the stream `config` describes.
    pub(super) fn new(out: Transport<W>, config: &OutputConfig) -> Self {
        let intellij = config.dialect == Dialect::Intellij;
        MessageWriter {
            writer: Writer::with_options(out, WriterOptions { flush_each: false }),
            timestamps: config.timestamps,
            intellij,
            filter: TextFilter::new(config.block_service_messages, intellij),
        }
    }

    /// Hands what was written so far on.
    pub(super) fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    pub(super) fn send(&mut self, message: Message) -> io::Result<()> {
        self.settle_text()?;
        if self.timestamps {
            self.writer.message_at(&message, Timestamp::now_utc())
        } else {
            self.writer.message(&message)
        }
    }

    /// Sends a message given as borrowed parts (no allocation).
    pub(super) fn send_parts(&mut self, name: &str, attrs: &[(&str, Value<'_>)]) -> io::Result<()> {
        self.settle_text()?;
        let at = self.timestamps.then(Timestamp::now_utc);
        self.writer.message_parts(name, attrs, at)
    }

    /// Sends `name` with `attrs` (at most three) plus `key=<chunk>` once per
    /// chunk of `text`.
    pub(super) fn send_chunked(
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
    pub(super) fn text(&mut self, text: &str) -> io::Result<()> {
        self.bytes(text.as_bytes())
    }

    pub(super) fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut result = Ok(());
        let (writer, timestamps, line_break) = (&mut self.writer, self.timestamps, self.intellij);
        self.filter.push(bytes, |piece| {
            if result.is_ok() {
                result = write_piece(writer, timestamps, line_break, piece);
            }
        });
        result
    }

    pub(super) fn finish(&mut self) -> io::Result<()> {
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

    /// [`MessageWriter::settle_text`] when there is text held: apart, so that the
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
/// ([`write_blocked`]). That message goes where the messages go; the text,
/// where the text goes.
fn write_piece<W: Write>(
    writer: &mut Writer<Transport<W>>,
    timestamps: bool,
    line_break: bool,
    piece: Piece<'_>,
) -> io::Result<()> {
    match piece {
        Piece::Text(bytes) => match writer.get_mut().text_apart() {
            None => writer.text(bytes),
            Some(text) => text.write_all(bytes),
        },
        Piece::Blocked(line) => write_blocked(writer, line, timestamps, line_break),
    }
}
