//! Plain text on its way to the stream: a line a test printed that would
//! change the tree if a consumer parsed it is wrapped in a `message`, so the
//! text stays visible but cannot start, finish or fail anything.
use std::io::{self, Write};

use tcrunner_protocol::{ParseEvent, Parser, Timestamp, Value, Writer, WriterOptions};

use crate::cli::OutputConfig;

/// Messages a test may legitimately send to the build (statistics, status
/// text); everything else it prints in service-message form is neutralised.
const ALLOWED: &[&str] = &[
    "buildStatisticValue",
    "message",
    "progressMessage",
    "progressStart",
    "progressFinish",
    "buildProblem",
    "buildStatus",
    "buildNumber",
    "publishArtifacts",
    "setParameter",
    "addBuildTag",
    "removeBuildTag",
];

const MARKER: &[u8] = b"##teamcity[";

/// One piece of filtered text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Bytes to write as they are.
    Text(&'a [u8]),
    /// A line to report inside a `message` (without its line terminator).
    Blocked(String),
}

/// Splits text into lines only as far as needed to find service messages.
#[derive(Debug, Default)]
pub(crate) struct TextFilter {
    /// Bytes of an unfinished line that may hold a message.
    pending: Vec<u8>,
    /// Block every service message, not only tree-changing ones.
    pub(crate) block_all: bool,
    /// Block a `message` without `status`: IntelliJ's handler reads the
    /// status without checking that it is there, and throws.
    status_required: bool,
}

impl TextFilter {
    pub(crate) fn new(block_all: bool, status_required: bool) -> Self {
        TextFilter {
            pending: Vec::new(),
            block_all,
            status_required,
        }
    }

    /// Filters `bytes`, reporting pieces in order.
    pub(crate) fn push(&mut self, bytes: &[u8], mut emit: impl FnMut(Piece<'_>)) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            let (line, tail) = rest.split_at(end + 1);
            if self.pending.is_empty() {
                self.line(line, &mut emit);
            } else {
                let mut joined = std::mem::take(&mut self.pending);
                joined.extend_from_slice(line);
                self.line(&joined, &mut emit);
            }
            rest = tail;
        }
        if rest.is_empty() {
            return;
        }
        // An unfinished line with no `#` cannot hold the start of a message:
        // write it now so progress text stays live.
        if self.pending.is_empty() && !rest.contains(&b'#') {
            emit(Piece::Text(rest));
            return;
        }
        self.pending.extend_from_slice(rest);
        // Nor can what comes before a possible start of a marker (`#`,
        // `##team`) in a line that holds no marker yet: it goes now too, so
        // a progress bar drawn in `#`s stays live. Should the rest of the
        // line bring a message, that rest is judged on its own.
        if !contains(&self.pending, MARKER) {
            let cut = self.pending.len() - marker_start_len(&self.pending);
            if cut > 0 {
                emit(Piece::Text(&self.pending[..cut]));
                self.pending.drain(..cut);
            }
        }
    }

    /// Whether an unfinished line waits for its end.
    pub(crate) fn holds_text(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Flushes an unfinished last line.
    pub(crate) fn finish(&mut self, mut emit: impl FnMut(Piece<'_>)) {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            self.line(&pending, &mut emit);
        }
    }

    fn line(&self, line: &[u8], emit: &mut impl FnMut(Piece<'_>)) {
        if !contains(line, MARKER) || self.allowed(line) {
            emit(Piece::Text(line));
            return;
        }
        let text = String::from_utf8_lossy(line);
        let text = text.strip_suffix('\n').unwrap_or(&text);
        emit(Piece::Blocked(
            text.strip_suffix('\r').unwrap_or(text).to_owned(),
        ));
    }

    /// True when every message on the line is an allowed, well-formed one,
    /// and every `##teamcity[` on it starts one of them: IntelliJ splits text
    /// at each marker, so one inside a value would be read as a message too.
    fn allowed(&self, line: &[u8]) -> bool {
        if self.block_all {
            return false;
        }
        let mut parser = Parser::new();
        let mut ok = true;
        let mut messages = 0;
        let mut check = |event: ParseEvent| match event {
            ParseEvent::Text { .. } => {}
            ParseEvent::Message { message, .. } => {
                messages += 1;
                ok &= ALLOWED.contains(&message.name.as_str())
                    && !(self.status_required
                        && message.name == "message"
                        && message.get("status").is_none());
            }
            ParseEvent::Error(_) => ok = false,
        };
        parser.feed(line, &mut check);
        parser.finish(&mut check);
        ok && count(line, MARKER) == messages
    }
}

/// Writes a blocked line as a `message` with `status='NORMAL'` (IntelliJ
/// reads `status` without checking that it is there), ending in a line
/// break where the IDE prints the text as it is (`line_break`).
pub(crate) fn write_blocked<W: Write>(
    writer: &mut Writer<W>,
    mut line: String,
    timestamps: bool,
    line_break: bool,
) -> io::Result<()> {
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

/// The framework's stderr on its way to tcrunner's. IntelliJ reads service
/// messages on stderr as it does on stdout, so where the stream is service
/// messages, a line there that would change the tree goes out as a
/// `message` too, on stderr, in its place; elsewhere (the human view, no
/// stream) the text goes as it is.
pub(crate) struct StderrText<E: Write> {
    writer: Writer<E>,
    filter: Option<TextFilter>,
    timestamps: bool,
    line_break: bool,
    /// See [`StderrText::goes_to_tests`].
    to_tests: bool,
}

impl<E: Write> StderrText<E> {
    pub(crate) fn new(out: E, config: &OutputConfig) -> Self {
        let intellij = config.dialect == crate::cli::Dialect::Intellij;
        StderrText {
            writer: Writer::with_options(out, WriterOptions { flush_each: false }),
            filter: config
                .dialect
                .writes_messages()
                .then(|| TextFilter::new(config.block_service_messages, intellij)),
            timestamps: config.timestamps,
            line_break: intellij,
            to_tests: config.dialect != crate::cli::Dialect::Human,
        }
    }

    /// Whether what the framework writes to stderr while one test runs in
    /// its process goes to that test, as its output: everywhere but in the
    /// human view, which shows a test's output only when it fails, where a
    /// person watching `-s` expects stderr as it comes.
    pub(crate) fn goes_to_tests(&self) -> bool {
        self.to_tests
    }

    /// Passes `bytes` on; a line that may still grow into a service message
    /// waits for its end or [`StderrText::finish`].
    pub(crate) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.filter.is_none() {
            self.writer.text(bytes)?;
            return self.writer.flush();
        }
        self.filtered(|filter, emit| filter.push(bytes, emit))
    }

    /// Writes out an unfinished last line.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        self.filtered(|filter, emit| filter.finish(emit))
    }

    fn filtered(
        &mut self,
        feed: impl FnOnce(&mut TextFilter, &mut dyn FnMut(Piece<'_>)),
    ) -> io::Result<()> {
        let Some(filter) = &mut self.filter else {
            return Ok(());
        };
        let mut result = Ok(());
        let (writer, timestamps, line_break) = (&mut self.writer, self.timestamps, self.line_break);
        feed(filter, &mut |piece| {
            if result.is_ok() {
                result = match piece {
                    Piece::Text(text) => writer.text(text),
                    Piece::Blocked(line) => write_blocked(writer, line, timestamps, line_break),
                };
            }
        });
        result?;
        self.writer.flush()
    }
}

/// How many bytes at the end of `text` may begin a marker: the longest
/// proper prefix of `##teamcity[` that `text` ends with.
fn marker_start_len(text: &[u8]) -> usize {
    (1..MARKER.len())
        .rev()
        .find(|&n| text.ends_with(&MARKER[..n]))
        .unwrap_or(0)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(chunks: &[&[u8]], block_all: bool) -> Vec<String> {
        filter_for(chunks, block_all, true)
    }

    fn filter_for(chunks: &[&[u8]], block_all: bool, status_required: bool) -> Vec<String> {
        let mut f = TextFilter::new(block_all, status_required);
        let mut out = Vec::new();
        let mut push = |p: Piece<'_>| match p {
            Piece::Text(t) => out.push(format!("T:{}", String::from_utf8_lossy(t))),
            Piece::Blocked(b) => out.push(format!("B:{b}")),
        };
        for chunk in chunks {
            f.push(chunk, &mut push);
        }
        f.finish(&mut push);
        out
    }

    #[test]
    fn tree_messages_are_blocked_even_split_across_chunks() {
        let out = filter(
            &[b"ok\n##team", b"city[testFinished name='x']\nafter"],
            false,
        );
        assert_eq!(
            out,
            ["T:ok\n", "B:##teamcity[testFinished name='x']", "T:after"]
        );
    }

    #[test]
    fn build_statistics_pass_unless_everything_is_blocked() {
        let line: &[u8] = b"##teamcity[buildStatisticValue key='k' value='1']\n";
        assert_eq!(
            filter(&[line], false),
            ["T:##teamcity[buildStatisticValue key='k' value='1']\n"]
        );
        assert_eq!(
            filter(&[line], true),
            ["B:##teamcity[buildStatisticValue key='k' value='1']"]
        );
    }

    #[test]
    fn mid_line_and_malformed_messages_are_blocked() {
        assert_eq!(
            filter(&[b"PASSED ##teamcity[testStarted name='y']\r\n"], false),
            ["B:PASSED ##teamcity[testStarted name='y']"]
        );
        assert_eq!(
            filter(&[b"##teamcity[oops\n"], false),
            ["B:##teamcity[oops"]
        );
    }

    #[test]
    fn a_marker_inside_a_value_blocks_the_line() {
        let line: &[u8] =
            b"##teamcity[message text='##teamcity[testingFinished ' status='NORMAL']\n";
        assert_eq!(
            filter(&[line], false),
            ["B:##teamcity[message text='##teamcity[testingFinished ' status='NORMAL']"]
        );
        let two: &[u8] = b"##teamcity[progressMessage 'a']##teamcity[progressMessage 'b']\n";
        assert_eq!(
            filter(&[two], false),
            [format!("T:{}", String::from_utf8_lossy(two))]
        );
    }

    #[test]
    fn a_message_without_status_is_blocked_for_intellij_only() {
        let line: &[u8] = b"##teamcity[message text='hi']\n";
        assert_eq!(filter(&[line], false), ["B:##teamcity[message text='hi']"]);
        assert_eq!(
            filter_for(&[line], false, false),
            ["T:##teamcity[message text='hi']\n"]
        );
        let with_status: &[u8] = b"##teamcity[message text='hi' status='WARNING']\n";
        assert_eq!(
            filter(&[with_status], false),
            [format!("T:{}", String::from_utf8_lossy(with_status))]
        );
    }

    #[test]
    fn stderr_lines_that_would_change_the_tree_go_out_as_messages() {
        let mut err = StderrText {
            writer: Writer::new(Vec::new()),
            filter: Some(TextFilter::new(false, true)),
            timestamps: false,
            line_break: true,
            to_tests: true,
        };
        err.write(b"warn\n##teamcity[testFailed name='x']\n##team")
            .unwrap();
        // The unfinished line may still become a message: it waits.
        assert_eq!(
            String::from_utf8_lossy(err.writer.get_mut()),
            "warn\n##teamcity[message text='##teamcity|[testFailed name=|'x|'|]|n' status='NORMAL']\n"
        );
        err.write(b"city[x").unwrap();
        err.finish().unwrap();
        assert!(
            String::from_utf8_lossy(err.writer.get_mut())
                .ends_with("##teamcity[message text='##teamcity|[x|n' status='NORMAL']\n"),
            "{:?}",
            String::from_utf8_lossy(err.writer.get_mut())
        );
    }

    #[test]
    fn partial_lines_without_a_hash_flow_immediately() {
        assert_eq!(filter(&[b"...", b"..\n"], false), ["T:...", "T:..\n"]);
    }

    #[test]
    fn only_a_possible_start_of_a_marker_waits() {
        // A progress bar in `#`s goes as it is drawn, but for its last two
        // `#`s; a trailing `##team` waits, and turns out to start a message
        // that is blocked.
        assert_eq!(
            filter(
                &[
                    b"\r 50%|#####",
                    b"     |\r 60%|######",
                    b"|##team",
                    b"city[testFailed name='x']\n"
                ],
                false
            ),
            [
                "T:\r 50%|###",
                "T:##     |\r 60%|####",
                "T:##|",
                "B:##teamcity[testFailed name='x']"
            ]
        );
        // A line that holds a marker waits whole for its end.
        assert_eq!(
            filter(&[b"a ##teamcity[testFailed", b" name='x'] b\n"], false),
            ["B:a ##teamcity[testFailed name='x'] b"]
        );
    }
}
