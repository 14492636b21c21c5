//! What the human view keeps of a failed test until the end of the run,
//! bounded so that memory follows the number of failures, not of tests,
//! and how it is shown: name, location, message, a diff of expected and
//! actual, the captured output.
use similar::{ChangeTag, TextDiff};

use super::style::{Paint, Style};
use crate::event::{Outcome, Stream, TestResult};

/// The most of a test's captured output (per stream) kept for showing.
pub(super) const OUTPUT_KEPT: usize = 4 * 1024;

/// The most of a failure's message, details, expected or actual kept.
const TEXT_KEPT: usize = 16 * 1024;

/// Lines of a failure's details (its traceback) shown.
const DETAIL_LINES: usize = 60;

/// The end of a growing text, at most [`OUTPUT_KEPT`] bytes of it, with a
/// count of what was cut before it.
#[derive(Debug, Default)]
pub(super) struct Tail {
    text: String,
    cut: usize,
}

impl Tail {
    pub(super) fn push(&mut self, text: &str) {
        self.text.push_str(text);
        // Trimmed once it holds twice the limit: each byte is moved at most
        // once on average.
        if self.text.len() > 2 * OUTPUT_KEPT {
            let mut at = self.text.len() - OUTPUT_KEPT;
            while !self.text.is_char_boundary(at) {
                at += 1;
            }
            self.cut += at;
            self.text.drain(..at);
        }
    }

    fn finish(mut self) -> Tail {
        if self.text.len() > OUTPUT_KEPT {
            let mut at = self.text.len() - OUTPUT_KEPT;
            while !self.text.is_char_boundary(at) {
                at += 1;
            }
            self.cut += at;
            self.text.drain(..at);
        }
        self
    }
}

/// A running test's captured output, per stream.
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub stdout: Tail,
    pub stderr: Tail,
}

impl Captured {
    pub(super) fn push(&mut self, stream: Stream, text: &str) {
        match stream {
            Stream::Stdout => self.stdout.push(text),
            Stream::Stderr => self.stderr.push(text),
        }
    }
}

/// A failed (or stopped) test, as it is shown at the end.
#[derive(Debug)]
pub(super) struct Failure {
    /// `file > suite > test`.
    pub name: String,
    /// `path:line`, when known.
    pub location: Option<String>,
    pub outcome: Option<Outcome>,
    pub message: String,
    pub details: String,
    pub expected: Option<String>,
    pub actual: Option<String>,
    /// `expected` or `actual` was longer than is kept: differences past
    /// the cut are not in the diff.
    pub values_cut: bool,
    pub output: Captured,
}

/// At most `TEXT_KEPT` bytes of `text`, cut at a character boundary.
fn kept(text: &str) -> String {
    if text.len() <= TEXT_KEPT {
        return text.to_owned();
    }
    let mut at = TEXT_KEPT;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}\n… ({} more bytes)", &text[..at], text.len() - at)
}

impl Failure {
    pub(super) fn new(
        name: String,
        location: Option<String>,
        result: Option<&TestResult>,
        output: Captured,
    ) -> Failure {
        let text = |value: Option<&String>| value.map_or_else(String::new, |v| kept(v));
        Failure {
            name,
            location,
            outcome: result.map(|r| r.outcome),
            message: match result {
                Some(result) => text(result.message.as_ref()),
                None => "the run ended before this test finished".to_owned(),
            },
            details: text(result.and_then(|r| r.details.as_ref())),
            expected: result.and_then(|r| r.expected.as_deref()).map(kept),
            actual: result.and_then(|r| r.actual.as_deref()).map(kept),
            values_cut: result.is_some_and(|r| {
                [&r.expected, &r.actual]
                    .iter()
                    .any(|v| v.as_ref().is_some_and(|v| v.len() > TEXT_KEPT))
            }),
            output: Captured {
                stdout: output.stdout.finish(),
                stderr: output.stderr.finish(),
            },
        }
    }

    /// The failure as lines of text, ending with a blank line.
    pub(super) fn render(&self, style: Style, out: &mut String) {
        let label = match self.outcome {
            Some(Outcome::Error) => "ERROR",
            None => "STOPPED",
            Some(_) => "FAILED",
        };
        style.push(out, Paint::Alarm, label);
        out.push(' ');
        style.push(out, Paint::Bold, &self.name);
        out.push('\n');
        if let Some(location) = &self.location {
            out.push_str("  at ");
            style.push(out, Paint::Cyan, location);
            out.push('\n');
        }
        let message = self.message.trim_end();
        if !message.is_empty() {
            out.push('\n');
            indent(out, message, style, None);
        }
        if let (Some(expected), Some(actual)) = (&self.expected, &self.actual) {
            out.push('\n');
            diff(out, expected, actual, style);
            if self.values_cut {
                out.push_str("  ");
                style.push(
                    out,
                    Paint::Dim,
                    &format!(
                        "(the values are compared in their first {} KB: differences after that are not shown; --json and the stream hold them whole)",
                        TEXT_KEPT / 1024
                    ),
                );
                out.push('\n');
            }
        }
        // Most frameworks' details repeat the message first (`Error: …`
        // then the stack): shown once.
        let details = self.details.trim_end();
        let details = match details.strip_prefix(message) {
            Some(rest) if !message.is_empty() => rest.trim_start_matches(['\n', '\r']),
            _ => details,
        };
        if !details.is_empty() {
            out.push('\n');
            let mut hidden = 0;
            let lines: Vec<&str> = details
                .lines()
                .filter(|line| {
                    let internal = is_internal_frame(line);
                    hidden += usize::from(internal);
                    !internal
                })
                .collect();
            let shown = lines.len().min(DETAIL_LINES);
            indent(out, &lines[..shown].join("\n"), style, Some(Paint::Dim));
            if lines.len() > shown {
                out.push_str("  ");
                style.push(
                    out,
                    Paint::Dim,
                    &format!("… {} more lines", lines.len() - shown),
                );
                out.push('\n');
            }
            if hidden > 0 {
                out.push_str("  ");
                let frames = if hidden == 1 { "frame" } else { "frames" };
                style.push(
                    out,
                    Paint::Dim,
                    &format!("({hidden} {frames} of node_modules and node's internals hidden)"),
                );
                out.push('\n');
            }
        }
        for (title, tail) in [
            ("stdout", &self.output.stdout),
            ("stderr", &self.output.stderr),
        ] {
            if tail.text.trim().is_empty() {
                continue;
            }
            out.push('\n');
            out.push_str("  ");
            let heading = match tail.cut {
                0 => format!("── captured {title} ──"),
                cut => {
                    format!("── captured {title} (last {OUTPUT_KEPT} bytes; {cut} before cut) ──")
                }
            };
            style.push(out, Paint::Magenta, &heading);
            out.push('\n');
            indent(out, tail.text.trim_end(), style, None);
        }
        out.push('\n');
    }
}

/// A JavaScript stack frame in the framework or node itself (`at f
/// (/p/node_modules/jest-circus/…)`, `at new Promise (<anonymous>)`,
/// `at node:internal/…`): noise next to the test's own frames.
fn is_internal_frame(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("at ")
        && (line.contains("/node_modules/")
            || line.contains("(<anonymous>)")
            || line.contains("node:internal/"))
}

/// `text`, each line indented by two spaces.
fn indent(out: &mut String, text: &str, style: Style, paint: Option<Paint>) {
    for line in text.lines() {
        out.push_str("  ");
        match paint {
            Some(paint) => style.push(out, paint, line),
            None => out.push_str(line),
        }
        out.push('\n');
    }
}

/// Expected against actual: two labelled lines for short single-line
/// values, a unified diff of lines otherwise.
fn diff(out: &mut String, expected: &str, actual: &str, style: Style) {
    let short = |v: &str| !v.contains('\n') && v.len() <= 60;
    if short(expected) && short(actual) {
        out.push_str("  ");
        style.push(out, Paint::Green, &format!("expected: {expected}"));
        out.push('\n');
        out.push_str("  ");
        style.push(out, Paint::Red, &format!("actual:   {actual}"));
        out.push('\n');
        return;
    }
    out.push_str("  ");
    style.push(out, Paint::Green, "- expected");
    out.push_str("  ");
    style.push(out, Paint::Red, "+ actual");
    out.push('\n');
    let diff = TextDiff::from_lines(expected, actual);
    for (index, group) in diff.grouped_ops(3).iter().enumerate() {
        if index > 0 {
            out.push_str("  ");
            style.push(out, Paint::Dim, "⋮");
            out.push('\n');
        }
        for op in group {
            for change in diff.iter_changes(op) {
                let (sign, paint) = match change.tag() {
                    ChangeTag::Delete => ('-', Some(Paint::Green)),
                    ChangeTag::Insert => ('+', Some(Paint::Red)),
                    ChangeTag::Equal => (' ', None),
                };
                let line = format!("{sign} {}", change.value().trim_end_matches(['\n', '\r']));
                out.push_str("  ");
                match paint {
                    Some(paint) => style.push(out, paint, &line),
                    None => out.push_str(&line),
                }
                out.push('\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_end_and_counts_the_rest() {
        let mut tail = Tail::default();
        for _ in 0..10_000 {
            tail.push("0123456789");
        }
        assert!(tail.text.len() <= 2 * OUTPUT_KEPT);
        let tail = tail.finish();
        assert_eq!(tail.text.len(), OUTPUT_KEPT);
        assert_eq!(tail.cut + OUTPUT_KEPT, 100_000);
    }

    #[test]
    fn multi_line_values_get_a_unified_diff() {
        let mut out = String::new();
        diff(&mut out, "a\nb\nc\n", "a\nB\nc\n", Style { color: false });
        assert_eq!(
            out, "  - expected  + actual\n    a\n  - b\n  + B\n    c\n",
            "{out}"
        );
        let mut out = String::new();
        diff(&mut out, "3", "2", Style { color: false });
        assert_eq!(out, "  expected: 3\n  actual:   2\n");
    }
}
