//! Writes messages and plain text so that every message starts at column 0.
//!
//! TeamCity and IntelliJ only recognise a message that has a line to itself
//! (IntelliJ trims the line and then requires it to *be* a message), so
//! [`Writer::message`] ends any open text line first. Each message, with that
//! newline, is built in one reusable buffer and handed to the inner writer
//! with a single `write_all`: no allocation per message once the buffer has
//! grown, and, on an unbuffered pipe, usually one system call, so other
//! writers to the same pipe are unlikely to land inside it (a pipe only
//! guarantees that for writes up to `PIPE_BUF` bytes). Without
//! [`WriterOptions::flush_each`], messages are collected in that buffer and
//! handed over [`BATCH`] bytes at a time, before plain text, and by
//! [`Writer::flush`] and [`Writer::into_inner`]: a `write_all` per message
//! cost more than building the message, even into a `BufWriter`.
use std::io::{self, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::escape::{escape_from, find_may_escape, Out};
use crate::parser::is_identifier;
use crate::{Body, Message, ServiceMessage};

/// A UTC time for the optional `timestamp` attribute.
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

impl Timestamp {
    /// The current time in UTC.
    ///
    /// Written with its zone (`+0000`): TeamCity reads a timestamp without
    /// one as the agent's local time.
    pub fn now_utc() -> Self {
        Timestamp::from_system_time(SystemTime::now())
    }

    /// A [`SystemTime`] in UTC, truncated to milliseconds. Times before 1970
    /// become 1970-01-01T00:00:00.000.
    pub fn from_system_time(time: SystemTime) -> Self {
        let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since_epoch.as_secs();
        let (year, month, day) = civil_from_days(secs / 86_400);
        let secs_of_day = secs % 86_400;
        Timestamp {
            year: u16::try_from(year).unwrap_or(u16::MAX),
            month,
            day,
            hour: (secs_of_day / 3600) as u8,
            minute: (secs_of_day / 60 % 60) as u8,
            second: (secs_of_day % 60) as u8,
            millis: since_epoch.subsec_millis() as u16,
        }
    }

    /// Appends `yyyy-MM-ddTHH:mm:ss.SSS+0000`, the form TeamCity's
    /// `timestamp` takes (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`), in UTC.
    fn push_to(&self, out: &mut impl Out) {
        push_padded(out, u32::from(self.year), 4);
        out.push_str("-");
        push_padded(out, u32::from(self.month), 2);
        out.push_str("-");
        push_padded(out, u32::from(self.day), 2);
        out.push_str("T");
        push_padded(out, u32::from(self.hour), 2);
        out.push_str(":");
        push_padded(out, u32::from(self.minute), 2);
        out.push_str(":");
        push_padded(out, u32::from(self.second), 2);
        out.push_str(".");
        push_padded(out, u32::from(self.millis), 3);
        out.push_str("+0000");
    }
}

impl std::fmt::Display for Timestamp {
    /// `yyyy-MM-ddTHH:mm:ss.SSS+0000`, e.g. `2008-09-03T14:02:34.487+0000`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut s = String::with_capacity(28);
        self.push_to(&mut s);
        f.write_str(&s)
    }
}

/// Appends `n` in decimal, zero-padded to at least `width` digits.
fn push_padded(out: &mut impl Out, n: u32, width: usize) {
    let mut digits = Decimal::default();
    let digits = digits.format(u64::from(n));
    for _ in digits.len()..width {
        out.push_str("0");
    }
    out.push_str(digits);
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u8, u8) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// An attribute value for [`Writer::message_parts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    /// Text, escaped as it is written.
    Text(&'a str),
    /// A number, written in decimal: ids, counts and durations, which have
    /// nothing to escape and need no string of their own.
    Number(u64),
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(text: &'a str) -> Self {
        Value::Text(text)
    }
}

impl From<u64> for Value<'_> {
    fn from(number: u64) -> Self {
        Value::Number(number)
    }
}

/// A decimal number formatted on the stack.
#[derive(Debug, Default)]
pub struct Decimal {
    buf: [u8; 20],
}

impl Decimal {
    /// `n` in decimal, as `Display` writes it.
    #[inline(always)]
    pub fn format(&mut self, mut n: u64) -> &str {
        // Two digits per division: ids and durations have several.
        const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
            2021222324252627282930313233343536373839\
            4041424344454647484950515253545556575859\
            6061626364656667686970717273747576777879\
            8081828384858687888990919293949596979899";
        let mut at = self.buf.len();
        while n >= 100 {
            let pair = (n % 100) as usize * 2;
            n /= 100;
            at -= 2;
            self.buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if n >= 10 {
            let pair = n as usize * 2;
            at -= 2;
            self.buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        } else {
            at -= 1;
            self.buf[at] = b'0' + n as u8;
        }
        // SAFETY: `buf[at..]` holds only the ASCII digits written above.
        unsafe { std::str::from_utf8_unchecked(&self.buf[at..]) }
    }
}

/// How the writer behaves.
#[derive(Debug, Clone, Default)]
pub struct WriterOptions {
    /// Flush after every message (default true through [`Writer::new`]).
    /// Plain text from [`Writer::text`] is not flushed on its own. Without
    /// it, messages are collected and handed to the inner writer in
    /// batches: [`Writer::flush`], [`Writer::into_inner`] and dropping the
    /// writer hand over the last ones.
    pub flush_each: bool,
}

/// A service-message writer over any [`Write`].
///
/// Names and keys must be identifiers (`[A-Za-z_$][A-Za-z0-9_$.:-]*`, the
/// same rule [`crate::Parser`] reads); anything else is refused with
/// [`io::ErrorKind::InvalidInput`] and nothing is written, so every written
/// message parses back to itself.
pub struct Writer<W: Write> {
    /// `None` only once [`Writer::into_inner`] has taken it.
    inner: Option<W>,
    options: WriterOptions,
    at_line_start: bool,
    /// A message ended a line of text that was still open, and no text came
    /// since: the text's own line end, if it comes next, is not written again.
    broke_line: bool,
    /// The buffer each message line is built in, after the lines not yet
    /// handed to `inner` (none with `flush_each`).
    line: Vec<u8>,
}

/// How many bytes of messages a writer without
/// [`WriterOptions::flush_each`] collects before it hands them over.
const BATCH: usize = 64 * 1024;

/// A message line being built, from a dozen short pieces: the name, keys,
/// ids, and the quotes and `=` between them. A piece of up to 16 bytes is
/// copied as two machine words, or half-words, or bytes, that overlap
/// unless the piece fills both: a `memcpy` call per piece cost more than
/// the copying, and slice copies their bounds checks (docs/performance.md).
///
/// The line's place in its buffer is held here, in locals the compiler
/// keeps in registers, and written back to the buffer once, in
/// [`Line::finish`]: kept in the vector, its length had to be read back
/// from memory after every byte stored (a store through a byte pointer may
/// change anything, for all the compiler knows). Only the buffer, never the
/// `Line`, is handed to code that is not inlined, so that nothing can.
struct Line<'a> {
    buf: &'a mut Vec<u8>,
    /// `buf`'s storage.
    ptr: *mut u8,
    /// Bytes written: `buf`'s length once the line is finished.
    len: usize,
    /// `buf`'s capacity.
    cap: usize,
}

impl<'a> Line<'a> {
    /// Starts a line at the end of `buf`.
    #[inline(always)]
    fn start(buf: &'a mut Vec<u8>) -> Self {
        Line {
            ptr: buf.as_mut_ptr(),
            len: buf.len(),
            cap: buf.capacity(),
            buf,
        }
    }

    /// Ends the line: `buf` holds what was written.
    #[inline(always)]
    fn finish(self) {
        // SAFETY: `len <= cap`, and the first `len` bytes were there before
        // or written by `push_bytes` or by `buf`'s own methods (`sync`,
        // `reload`).
        unsafe { self.buf.set_len(self.len) };
    }

    /// The buffer with the line so far, for code that is not inlined to
    /// append to; [`Line::reload`] after it.
    #[inline(always)]
    fn sync(&mut self) -> &mut Vec<u8> {
        // SAFETY: as in `finish`.
        unsafe { self.buf.set_len(self.len) };
        self.buf
    }

    /// Takes the buffer's place back after [`Line::sync`].
    #[inline(always)]
    fn reload(&mut self) {
        self.ptr = self.buf.as_mut_ptr();
        self.len = self.buf.len();
        self.cap = self.buf.capacity();
    }

    /// Makes room for `n` more bytes.
    #[inline(always)]
    fn reserve(&mut self, n: usize) {
        if self.cap - self.len < n {
            grow(self.sync(), n);
            self.reload();
        }
    }

    #[inline(always)]
    fn push_bytes(&mut self, piece: &[u8]) {
        let n = piece.len();
        self.reserve(n);
        let src = piece.as_ptr();
        // SAFETY: `reserve` left room for `n` more bytes after `len` in
        // `ptr`'s allocation, and every write below is to one of them
        // (`dst[..n]`); every read is from `piece` (`src[..n]`), which does
        // not overlap the buffer's spare capacity. They copy `piece` whole,
        // so the `n` bytes `len` grows by are initialised.
        unsafe {
            let dst = self.ptr.add(self.len);
            match n {
                0 => {}
                1..=3 => {
                    *dst = *src;
                    *dst.add(n / 2) = *src.add(n / 2);
                    *dst.add(n - 1) = *src.add(n - 1);
                }
                4..=7 => {
                    copy_word::<4>(src, dst);
                    copy_word::<4>(src.add(n - 4), dst.add(n - 4));
                }
                8..=16 => {
                    copy_word::<8>(src, dst);
                    copy_word::<8>(src.add(n - 8), dst.add(n - 8));
                }
                _ => std::ptr::copy_nonoverlapping(src, dst, n),
            }
        }
        self.len += n;
    }

    #[inline(always)]
    fn push_str(&mut self, text: &str) {
        self.push_bytes(text.as_bytes());
    }

    /// Appends `text` escaped ([`crate::escape`]).
    #[inline(always)]
    fn push_escaped(&mut self, text: &str) {
        // Most values (ids, names) have nothing to escape: one scan and one
        // copy.
        match find_may_escape(text.as_bytes()) {
            None => self.push_str(text),
            Some(first) => {
                escape_from(text, first, self.sync());
                self.reload();
            }
        }
    }

    /// Appends `n` in decimal.
    #[inline(always)]
    fn push_number(&mut self, n: u64) {
        self.push_str(Decimal::default().format(n));
    }
}

/// Makes room for `n` more bytes in `buf`: apart, as it is seldom needed
/// once the buffer has grown to the longest line.
#[cold]
#[inline(never)]
fn grow(buf: &mut Vec<u8>, n: usize) {
    buf.reserve(n);
}

/// Copies `N` bytes from `src` to `dst`, as one load and one store.
///
/// # Safety
///
/// `src` must be valid for reading and `dst` for writing `N` bytes.
#[inline(always)]
unsafe fn copy_word<const N: usize>(src: *const u8, dst: *mut u8) {
    // SAFETY: the caller's; unaligned reads and writes need no alignment.
    unsafe {
        dst.cast::<[u8; N]>()
            .write_unaligned(src.cast::<[u8; N]>().read_unaligned())
    };
}

impl<W: Write> Writer<W> {
    /// A writer that flushes after each message.
    pub fn new(inner: W) -> Self {
        Writer::with_options(inner, WriterOptions { flush_each: true })
    }

    /// A writer with explicit options.
    pub fn with_options(inner: W, options: WriterOptions) -> Self {
        Writer {
            inner: Some(inner),
            options,
            at_line_start: true,
            broke_line: false,
            line: Vec::new(),
        }
    }

    /// Writes one message on its own line (a newline first if the line is open).
    ///
    /// Attributes are written in the message's order; the line is
    /// `##teamcity[name k='v' …]\n` or `##teamcity[name 'v']\n`.
    pub fn message(&mut self, message: &Message) -> io::Result<()> {
        self.write_line(message, None)
    }

    /// Writes one message with a `timestamp` attribute first.
    ///
    /// The single-value form has no room for attributes, so a single-value
    /// message is written without the timestamp. The message itself should
    /// not carry a `timestamp` attribute too.
    pub fn message_at(&mut self, message: &Message, at: Timestamp) -> io::Result<()> {
        self.write_line(message, Some(at))
    }

    /// Writes a typed message, in the attribute order [`ServiceMessage`] documents.
    pub fn service_message(&mut self, message: &ServiceMessage) -> io::Result<()> {
        self.message(&Message::from(message))
    }

    /// Writes plain bytes through, remembering whether they ended a line.
    /// A message written while a line of text was open started on a line of
    /// its own, which ended that line: a line end the text then brings
    /// (pytest's `-v` ends a test's line when the next one starts) is that
    /// line's, and is not written a second time as an empty line.
    pub fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        let bytes = match bytes.strip_prefix(b"\n") {
            Some(rest) if self.broke_line => rest,
            _ => bytes,
        };
        self.broke_line = false;
        let Some(&last) = bytes.last() else {
            return Ok(());
        };
        self.hand_over()?;
        // Set before writing: after a failed or partial write the column is
        // unknown, and starting the next message with a newline is the safe side.
        self.at_line_start = false;
        self.inner().write_all(bytes)?;
        self.at_line_start = last == b'\n';
        Ok(())
    }

    /// Whether the last byte written ended a line (or nothing was written).
    pub fn at_line_start(&self) -> bool {
        self.at_line_start
    }

    /// The underlying writer, for writing to it beside the messages (plain
    /// text kept apart from them, say). Messages collected since the last
    /// hand-over are not in it yet, and what is written through it does
    /// not move the column [`Writer::at_line_start`] tells.
    pub fn get_mut(&mut self) -> &mut W {
        self.inner()
    }

    /// Hands the collected messages over and flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.hand_over()?;
        self.inner().flush()
    }

    /// The underlying writer, once the collected messages are handed to it
    /// (a failure to is not reported: [`Writer::flush`] first to see it).
    pub fn into_inner(mut self) -> W {
        let _ = self.hand_over();
        self.inner.take().expect("taken only here")
    }

    fn inner(&mut self) -> &mut W {
        self.inner.as_mut().expect("taken only by into_inner")
    }
}

impl<W: Write> Drop for Writer<W> {
    /// Hands the collected messages over, as a `BufWriter` writes out what
    /// it holds when dropped: a writer left on an early return or an unwind
    /// loses none of them. A failure is not reported ([`Writer::flush`]
    /// first to see it).
    fn drop(&mut self) {
        if self.inner.is_some() {
            let _ = self.hand_over();
        }
    }
}

impl<W: Write> Writer<W> {
    /// Hands the collected message lines to the inner writer.
    fn hand_over(&mut self) -> io::Result<()> {
        if self.line.is_empty() {
            return Ok(());
        }
        let inner = self.inner.as_mut().expect("taken only by into_inner");
        // As for text: after a failed write the column is unknown.
        self.at_line_start = false;
        let written = inner.write_all(&self.line);
        // Written or failed, they are not written again.
        self.line.clear();
        written?;
        self.at_line_start = true;
        Ok(())
    }

    /// Writes `##teamcity[name k='v' …]` from borrowed parts: the line
    /// [`Writer::message_at`] writes for the equal [`Message`] (with `at`,
    /// and numbers in decimal), without building one, so a caller can write
    /// a message without allocating. Names and keys are meant to be the
    /// caller's literals: they are checked in debug builds only (the check
    /// was 7% of `convert`).
    pub fn message_parts(
        &mut self,
        name: &str,
        attrs: &[(&str, Value<'_>)],
        at: Option<Timestamp>,
    ) -> io::Result<()> {
        debug_assert!(is_identifier(name.as_bytes()), "message name `{name}`");
        debug_assert!(
            attrs.iter().all(|(k, _)| is_identifier(k.as_bytes())),
            "attribute keys {attrs:?}"
        );
        let mut line = Line::start(&mut self.line);
        start_line(&mut line, self.at_line_start, name);
        push_timestamp(&mut line, at);
        // A value's closing quote goes with the space before the next key,
        // as one piece.
        match attrs.split_first() {
            None => line.push_str("]\n"),
            Some((&(key, value), rest)) => {
                line.push_str(" ");
                push_attr(&mut line, key, value);
                for &(key, value) in rest {
                    line.push_str("' ");
                    push_attr(&mut line, key, value);
                }
                line.push_str("']\n");
            }
        }
        line.finish();
        self.message_done()
    }

    /// After a message line is built: hands it over (with the lines before
    /// it) when it is time to.
    #[inline(always)]
    fn message_done(&mut self) -> io::Result<()> {
        self.broke_line |= !self.at_line_start;
        self.at_line_start = true;
        if self.options.flush_each {
            self.hand_over()?;
            return self.inner().flush();
        }
        if self.line.len() >= BATCH {
            return self.hand_over();
        }
        Ok(())
    }

    fn write_line(&mut self, message: &Message, at: Option<Timestamp>) -> io::Result<()> {
        check_identifier("message name", &message.name)?;
        for (key, _) in message.attrs() {
            check_identifier("attribute key", key)?;
        }
        let mut line = Line::start(&mut self.line);
        start_line(&mut line, self.at_line_start, &message.name);
        match &message.body {
            Body::Value(value) => {
                line.push_str(" '");
                line.push_escaped(value);
                line.push_str("'");
            }
            Body::Attrs(attrs) => {
                push_timestamp(&mut line, at);
                for (key, value) in attrs {
                    start_attr(&mut line, key);
                    line.push_escaped(value);
                    line.push_str("'");
                }
            }
        }
        line.push_str("]\n");
        line.finish();
        self.message_done()
    }
}

/// Starts `line` as `##teamcity[name`, on a line of its own.
#[inline(always)]
fn start_line(line: &mut Line<'_>, at_line_start: bool, name: &str) {
    if !at_line_start {
        line.push_str("\n");
    }
    line.push_str("##teamcity[");
    line.push_str(name);
}

/// Appends the `timestamp` attribute, if any.
#[inline(always)]
fn push_timestamp(line: &mut Line<'_>, at: Option<Timestamp>) {
    if let Some(at) = at {
        line.push_str(" timestamp='");
        at.push_to(line.sync());
        line.reload();
        line.push_str("'");
    }
}

/// Appends `key='value`, for the closing quote to follow.
#[inline(always)]
fn push_attr(line: &mut Line<'_>, key: &str, value: Value<'_>) {
    line.push_str(key);
    line.push_str("='");
    match value {
        Value::Text(text) => line.push_escaped(text),
        Value::Number(n) => line.push_number(n),
    }
}

/// Appends ` key='`, for the value and its closing quote to follow.
#[inline(always)]
fn start_attr(line: &mut Line<'_>, key: &str) {
    line.push_str(" ");
    line.push_str(key);
    line.push_str("='");
}

impl<W: Write> std::fmt::Debug for Writer<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("options", &self.options)
            .field("at_line_start", &self.at_line_start)
            .finish_non_exhaustive()
    }
}

fn check_identifier(what: &str, s: &str) -> io::Result<()> {
    if is_identifier(s.as_bytes()) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what} `{s}` is not an identifier"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records each write, and flushes.
    #[derive(Default)]
    struct Writes {
        writes: Vec<Vec<u8>>,
        flushes: usize,
    }

    impl Write for &mut Writes {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.writes.push(bytes.to_vec());
            Ok(bytes.len())
        }

        fn flush(&mut self) -> io::Result<()> {
            self.flushes += 1;
            Ok(())
        }
    }

    #[test]
    fn messages_are_handed_over_in_batches_without_flush_each() {
        let mut writes = Writes::default();
        let mut writer = Writer::with_options(&mut writes, WriterOptions { flush_each: false });
        let name = "n".repeat(1000);
        let attrs = [("name", Value::Text(&name))];
        let mut started = 0;
        let mut start = |writer: &mut Writer<&mut Writes>| {
            writer.message_parts("testStarted", &attrs, None).unwrap();
            started += 1;
        };
        for _ in 0..3 {
            start(&mut writer);
        }
        writer.message(&Message::new("a")).unwrap();
        writer.text(b"text").unwrap();
        // Up to a batch, then two more.
        loop {
            let before = writer.line.len();
            start(&mut writer);
            if writer.line.len() < before {
                break;
            }
        }
        start(&mut writer);
        start(&mut writer);
        writer.flush().unwrap();
        writer.message(&Message::new("b")).unwrap();
        writer.into_inner();
        assert_eq!(writes.flushes, 1);
        let writes: Vec<String> = (writes.writes.iter())
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        // The lines before the text, the text, a batch, the rest at the
        // flush, the last line when the writer is taken apart.
        let line = format!("##teamcity[testStarted name='{name}']\n");
        assert_eq!(writes.len(), 5);
        assert_eq!(writes[0], line.repeat(3) + "##teamcity[a]\n");
        assert_eq!(writes[1], "text");
        assert_eq!(
            writes[2],
            "\n".to_string() + &line.repeat(writes[2].len() / line.len())
        );
        assert!((BATCH..BATCH + line.len()).contains(&writes[2].len()));
        assert_eq!(writes[3], line.repeat(2));
        assert_eq!(writes[4], "##teamcity[b]\n");
        assert_eq!(writes.concat().matches(&line).count(), started);

        // A writer dropped unflushed (an early return, an unwind) hands its
        // lines over as well.
        let mut out = Vec::new();
        {
            let mut writer = Writer::with_options(&mut out, WriterOptions { flush_each: false });
            writer.message(&Message::new("c")).unwrap();
        }
        assert_eq!(out, b"##teamcity[c]\n");
    }

    #[test]
    fn a_line_end_a_message_already_gave_is_not_written_again() {
        let mut out = Vec::new();
        let mut writer = Writer::new(&mut out);
        writer.text(b"t.py::a PASSED").unwrap();
        writer.message(&Message::new("a")).unwrap();
        writer.message(&Message::new("b")).unwrap();
        writer.text(b"\nt.py::b ").unwrap();
        writer.text(b"FAILED\n").unwrap();
        writer.message(&Message::new("c")).unwrap();
        writer.text(b"\n").unwrap();
        writer.text(b"x").unwrap();
        writer.message(&Message::new("d")).unwrap();
        writer.text(b"y\n").unwrap();
        drop(writer);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "t.py::a PASSED\n##teamcity[a]\n##teamcity[b]\nt.py::b FAILED\n##teamcity[c]\n\nx\n##teamcity[d]\ny\n"
        );
    }

    #[test]
    fn pieces_of_every_length_are_appended_whole() {
        let text: Vec<u8> = (0..128u8).map(|i| b'a' + i % 26).collect();
        let mut buf = Vec::new();
        for before in 0..40 {
            for len in 0..40 {
                buf.clear();
                let mut line = Line::start(&mut buf);
                line.push_bytes(&text[40..40 + before]);
                line.push_bytes(&text[..len]);
                line.push_bytes(b"]");
                line.finish();
                let mut want = text[40..40 + before].to_vec();
                want.extend_from_slice(&text[..len]);
                want.push(b']');
                assert_eq!(buf, want, "{before} then {len}");
                // A line goes on from what the buffer holds.
                Line::start(&mut buf).finish();
                assert_eq!(buf, want);
            }
        }
        // Growing from nothing, a byte at a time and in long pieces.
        for piece in [1, 3, 17, 100] {
            let mut buf = Vec::new();
            let mut line = Line::start(&mut buf);
            let mut want = Vec::new();
            for i in 0..50 {
                let bytes = &text[i % 20..i % 20 + piece];
                line.push_bytes(bytes);
                want.extend_from_slice(bytes);
                line.push_escaped("x'y");
                want.extend_from_slice(b"x|'y");
                line.push_number(i as u64 * 1_000_003);
                want.extend_from_slice((i as u64 * 1_000_003).to_string().as_bytes());
            }
            line.finish();
            assert_eq!(buf, want, "pieces of {piece}");
        }
    }
}
