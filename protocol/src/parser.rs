//! A push parser: feed byte chunks, get text and messages back.
use crate::Message;

/// Where something was found in the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Byte offset from the start of the stream (0-based).
    pub offset: u64,
    /// Line number (1-based).
    pub line: u64,
}

/// A malformed message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {}, byte {}: {problem}", .position.line, .position.offset)]
pub struct ParseError {
    /// Where the problem is.
    pub position: Position,
    /// What is wrong, in lowercase words.
    pub problem: String,
}

/// One thing found in the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseEvent {
    /// Plain text (possibly invalid UTF-8), with its line terminator if it had one.
    Text {
        /// The bytes.
        bytes: Vec<u8>,
        /// Where they start.
        position: Position,
    },
    /// A well-formed message.
    Message {
        /// The message.
        message: Message,
        /// Where `##teamcity[` starts.
        position: Position,
        /// True when other text came before it on the same line.
        mid_line: bool,
    },
    /// Something that starts like a message but is not one.
    Error(ParseError),
}

/// A streaming parser; chunk boundaries never change the result.
#[derive(Debug, Default)]
pub struct Parser {
    buffer: Vec<u8>,
    offset: u64,
    line: u64,
}

impl Parser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Parser { buffer: Vec::new(), offset: 0, line: 1 }
    }

    /// Feeds a chunk; complete lines are reported through `sink`.
    pub fn feed(&mut self, chunk: &[u8], sink: impl FnMut(ParseEvent)) {
        let _ = (chunk, sink, &mut self.buffer, self.offset, self.line);
        todo!()
    }

    /// Ends the stream, reporting a final unterminated line.
    pub fn finish(&mut self, sink: impl FnMut(ParseEvent)) {
        let _ = sink;
        todo!()
    }
}
