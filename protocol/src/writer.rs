//! Writes messages and plain text so that every message starts at column 0.
use std::io::{self, Write};

use crate::Message;

/// A wall-clock time for the optional `timestamp` attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp {
    /// Year, e.g. 2026.
    pub year: u16,
    /// Month 1-12.
    pub month: u8,
    /// Day 1-31.
    pub day: u8,
    /// Hour 0-23.
    pub hour: u8,
    /// Minute 0-59.
    pub minute: u8,
    /// Second 0-59.
    pub second: u8,
    /// Millisecond 0-999.
    pub millis: u16,
}

/// How the writer behaves.
#[derive(Debug, Clone, Default)]
pub struct WriterOptions {
    /// Flush after every message (default true through [`Writer::new`]).
    pub flush_each: bool,
}

/// A service-message writer over any [`Write`].
pub struct Writer<W: Write> {
    inner: W,
    options: WriterOptions,
    at_line_start: bool,
}

impl<W: Write> Writer<W> {
    /// A writer that flushes after each message.
    pub fn new(inner: W) -> Self {
        Writer::with_options(inner, WriterOptions { flush_each: true })
    }

    /// A writer with explicit options.
    pub fn with_options(inner: W, options: WriterOptions) -> Self {
        Writer { inner, options, at_line_start: true }
    }

    /// Writes one message on its own line (a newline first if the line is open).
    pub fn message(&mut self, message: &Message) -> io::Result<()> {
        let _ = (message, &self.options, &mut self.inner, self.at_line_start);
        todo!()
    }

    /// Writes one message with a `timestamp` attribute first.
    pub fn message_at(&mut self, message: &Message, at: Timestamp) -> io::Result<()> {
        let _ = (message, at);
        todo!()
    }

    /// Writes plain bytes through unchanged, remembering whether they ended a line.
    pub fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        let _ = bytes;
        todo!()
    }

    /// Whether the last byte written ended a line (or nothing was written).
    pub fn at_line_start(&self) -> bool {
        self.at_line_start
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}
