//! A push parser: feed byte chunks, get text and messages back.
//!
//! Bytes are buffered until a `\n`; each complete line is then split into
//! [`ParseEvent::Text`], [`ParseEvent::Message`] and [`ParseEvent::Error`].
//! Because nothing is decided before a line is complete, the events do not
//! depend on how the stream was cut into chunks. A line that never ends is
//! held until [`Parser::finish`].
//!
//! The grammar follows TeamCity's `service-messages.md`:
//!
//! ```text
//! message = "##teamcity[" name ( WSP "'" value "'" OWSP
//!                              | ( WSP key OWSP "=" OWSP "'" value "'" )* OWSP ) "]"
//! name, key = [A-Za-z_$] [A-Za-z0-9_$.:-]*     (Java-identifier-like, ASCII)
//! WSP = 1*( " " / "\t" )    OWSP = *( " " / "\t" )
//! ```
//!
//! Inside a value only `|` escapes (decoded by [`crate::unescape`]); `[` and
//! `]` may also appear raw. A message may follow other text on its line
//! (`PASSED [100%]##teamcity[…]`): TeamCity reads it, IntelliJ does not (it
//! trims the line and then requires it to be a message), so it is reported with
//! `mid_line: true`.
//!
//! Line terminators (`\n` or `\r\n`): a line without messages is one `Text`
//! with its terminator. On a line with messages, the text between them is
//! reported without a terminator except the text after the last message,
//! which keeps it; gaps made only of spaces and tabs (and the terminator) are
//! not reported, as IntelliJ trims them. After a malformed message the rest of
//! the line, from the text before it to the terminator, is reported as `Text`
//! after the `Error`, so no byte is lost.
use crate::{unescape, Message};

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
    /// Where the problem is: the offending byte, on the message's line.
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
        /// True when something other than spaces and tabs (text, or another
        /// message) came before it on the same line.
        mid_line: bool,
    },
    /// Something that starts like a message but is not one.
    Error(ParseError),
}

/// A streaming parser; chunk boundaries never change the result.
#[derive(Debug)]
pub struct Parser {
    buffer: Vec<u8>,
    offset: u64,
    line: u64,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new()
    }
}

const MARKER: &[u8] = b"##teamcity[";

impl Parser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Parser {
            buffer: Vec::new(),
            offset: 0,
            line: 1,
        }
    }

    /// Feeds a chunk; complete lines are reported through `sink`.
    pub fn feed(&mut self, chunk: &[u8], mut sink: impl FnMut(ParseEvent)) {
        let sink: &mut dyn FnMut(ParseEvent) = &mut sink;
        let mut rest = chunk;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            let (line, tail) = rest.split_at(newline + 1);
            if self.buffer.is_empty() {
                self.line_done(line, sink);
            } else {
                let mut buffered = std::mem::take(&mut self.buffer);
                buffered.extend_from_slice(line);
                self.line_done(&buffered, sink);
                buffered.clear();
                self.buffer = buffered;
            }
            rest = tail;
        }
        self.buffer.extend_from_slice(rest);
    }

    /// Ends the stream, reporting a final unterminated line.
    ///
    /// The parser can be fed again afterwards; positions continue.
    pub fn finish(&mut self, mut sink: impl FnMut(ParseEvent)) {
        if !self.buffer.is_empty() {
            let buffered = std::mem::take(&mut self.buffer);
            self.line_done(&buffered, &mut sink);
        }
    }

    fn line_done(&mut self, line: &[u8], sink: &mut dyn FnMut(ParseEvent)) {
        split_line(
            line,
            Position {
                offset: self.offset,
                line: self.line,
            },
            sink,
        );
        self.offset += line.len() as u64;
        if line.last() == Some(&b'\n') {
            self.line += 1;
        }
    }
}

/// Reports one line (with its terminator, if any) starting at `start`.
fn split_line(line: &[u8], start: Position, sink: &mut dyn FnMut(ParseEvent)) {
    let content = line
        .strip_suffix(b"\n")
        .map_or(line, |l| l.strip_suffix(b"\r").unwrap_or(l));
    let at = |index: usize| Position {
        offset: start.offset + index as u64,
        line: start.line,
    };
    let text = |from: usize, to: usize, sink: &mut dyn FnMut(ParseEvent)| {
        sink(ParseEvent::Text {
            bytes: line[from..to].to_vec(),
            position: at(from),
        });
    };
    // `reported` is where the bytes not yet handed to `sink` begin.
    let mut reported = 0;
    while let Some(found) = find_marker(content, reported) {
        let gap = &content[reported..found];
        let mid_line = !content[..found].iter().all(|&b| is_wsp(b));
        match parse_message(content, found) {
            Ok((message, end)) => {
                if !gap.iter().all(|&b| is_wsp(b)) {
                    text(reported, found, sink);
                }
                sink(ParseEvent::Message {
                    message,
                    position: at(found),
                    mid_line,
                });
                reported = end;
            }
            Err((index, problem)) => {
                sink(ParseEvent::Error(ParseError {
                    position: at(index),
                    problem,
                }));
                text(reported, line.len(), sink);
                return;
            }
        }
    }
    let after_messages = reported > 0 && content[reported..].iter().all(|&b| is_wsp(b));
    if reported < line.len() && !after_messages {
        text(reported, line.len(), sink);
    }
}

/// The index of the next `##teamcity[` at or after `from`.
fn find_marker(content: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(hash) = content[i..].iter().position(|&b| b == b'#') {
        i += hash;
        if content[i..].starts_with(MARKER) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// A problem: the index of the offending byte in the line, and what is wrong.
type Problem = (usize, String);

/// Parses the message whose `##teamcity[` starts at `start`; returns it and
/// the index just after its `]`.
fn parse_message(content: &[u8], start: usize) -> Result<(Message, usize), Problem> {
    let mut i = start + MARKER.len();
    let name = identifier(content, &mut i)
        .ok_or((i, "expected a message name after `##teamcity[`".to_owned()))?;
    let mut message = Message::new(name);
    let mut spaced = skip_wsp(content, &mut i);
    if spaced && content.get(i) == Some(&b'\'') {
        message.body = crate::Body::Value(value(content, &mut i)?);
        skip_wsp(content, &mut i);
        return match content.get(i) {
            Some(b']') => Ok((message, i + 1)),
            _ => Err((i, "expected `]` after the value".to_owned())),
        };
    }
    loop {
        match content.get(i) {
            Some(b']') => return Ok((message, i + 1)),
            None => return Err((i, "unterminated message: expected `]`".to_owned())),
            Some(_) if !spaced => return Err((i, "expected a space or `]`".to_owned())),
            Some(_) => {}
        }
        let key = identifier(content, &mut i)
            .ok_or((i, "expected an attribute name or `]`".to_owned()))?;
        skip_wsp(content, &mut i);
        if content.get(i) != Some(&b'=') {
            return Err((i, format!("expected `=` after attribute `{key}`")));
        }
        i += 1;
        skip_wsp(content, &mut i);
        if content.get(i) != Some(&b'\'') {
            return Err((i, format!("expected `'` to open the value of `{key}`")));
        }
        let value = value(content, &mut i)?;
        message.push(key, value);
        spaced = skip_wsp(content, &mut i);
    }
}

/// Reads an identifier at `*i`, advancing past it.
fn identifier<'a>(content: &'a [u8], i: &mut usize) -> Option<&'a str> {
    let start = *i;
    let len = identifier_len(&content[start..]);
    *i += len;
    // Identifiers are ASCII, so this never fails once `len > 0`.
    (len > 0)
        .then(|| std::str::from_utf8(&content[start..start + len]).ok())
        .flatten()
}

/// The length of the identifier at the start of `bytes` (0 if none).
fn identifier_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(&b) if b.is_ascii_alphabetic() || b == b'_' || b == b'$' => {
            1 + bytes[1..]
                .iter()
                .take_while(|&&b| {
                    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'$' | b'.' | b':' | b'-')
                })
                .count()
        }
        _ => 0,
    }
}

/// Whether `bytes` is exactly one message name or attribute key.
pub(crate) fn is_identifier(bytes: &[u8]) -> bool {
    !bytes.is_empty() && identifier_len(bytes) == bytes.len()
}

/// Reads a quoted value whose `'` is at `*i`, advancing past the closing `'`.
fn value(content: &[u8], i: &mut usize) -> Result<String, Problem> {
    let open = *i;
    let start = open + 1;
    let mut j = start;
    loop {
        match content.get(j) {
            None => return Err((open, "unterminated value: no closing `'`".to_owned())),
            Some(b'\'') => break,
            // The escaped byte is skipped; `unescape` checks it below.
            Some(b'|') => j += 2,
            Some(_) => j += 1,
        }
    }
    let raw = &content[start..j];
    let raw = std::str::from_utf8(raw).map_err(|e| {
        (
            start + e.valid_up_to(),
            "value is not valid utf-8".to_owned(),
        )
    })?;
    let decoded = unescape(raw).map_err(|e| {
        let byte = raw
            .char_indices()
            .nth(e.offset())
            .map_or(raw.len(), |(b, _)| b);
        (start + byte, e.to_string())
    })?;
    *i = j + 1;
    Ok(decoded)
}

fn is_wsp(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Skips spaces and tabs; true if there were any.
fn skip_wsp(content: &[u8], i: &mut usize) -> bool {
    let start = *i;
    while content.get(*i).is_some_and(|&b| is_wsp(b)) {
        *i += 1;
    }
    *i > start
}
