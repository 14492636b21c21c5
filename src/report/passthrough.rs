//! Plain text on its way to the stream: a line a test printed that would
//! change the tree if a consumer parsed it is wrapped in a `message`, so the
//! text stays visible but cannot start, finish or fail anything.
use tcrunner_protocol::{ParseEvent, Parser};

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
        } else {
            self.pending.extend_from_slice(rest);
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
    fn partial_lines_without_a_hash_flow_immediately() {
        assert_eq!(filter(&[b"...", b"..\n"], false), ["T:...", "T:..\n"]);
    }
}
