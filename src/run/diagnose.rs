//! Diagnosis: recognising what the framework said (timeouts, no tests, why
//! it never started) and turning it into verdicts a user sees in the tree.
use std::io::{self, Write};

use crate::event::{Outcome, TestEvent, TestResult};
use crate::frameworks::Framework;
use crate::process::describe;

use crate::report::Pipeline;

/// A failed test `<name> did not start` saying why: an IDE user sees the
/// tree, not stderr.
pub(super) fn did_not_start<W: Write>(
    pipeline: &mut Pipeline<W>,
    name: &str,
    why: String,
    details: Option<String>,
) -> io::Result<()> {
    let id = format!("{name} did not start");
    pipeline.event(TestEvent::Test(crate::event::Node {
        id: id.clone(),
        name: id.clone(),
        kind: crate::event::NodeKind::Test,
        ..Default::default()
    }))?;
    fail(pipeline, id, why, details)
}

/// Gives the test `id` a failed (error) verdict.
pub(super) fn fail<W: Write>(
    pipeline: &mut Pipeline<W>,
    id: String,
    message: String,
    details: Option<String>,
) -> io::Result<()> {
    pipeline.event(TestEvent::Finished(TestResult {
        id,
        outcome: Outcome::Error,
        message: Some(message),
        details,
        ..TestResult::default()
    }))
}

/// Keeps the last 8 KB of a stream.
pub(super) fn keep_tail(tail: &mut Vec<u8>, bytes: &[u8]) {
    const KEEP: usize = 8192;
    if bytes.len() >= KEEP {
        tail.clear();
        tail.extend_from_slice(&bytes[bytes.len() - KEEP..]);
        return;
    }
    tail.extend_from_slice(bytes);
    let excess = tail.len().saturating_sub(KEEP);
    tail.drain(..excess);
}

/// A kept tail as text without ANSI escape sequences: what a framework
/// printed in colour (vitest colours its errors even into a pipe) reaches
/// the stream plain.
pub(super) fn plain_text(tail: &[u8]) -> String {
    let text = String::from_utf8_lossy(tail);
    if !text.contains('\u{1b}') {
        return text.into_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters and intermediates up to a final byte.
            Some('[') => {
                while chars
                    .next_if(|c| ('\u{20}'..='\u{3f}').contains(c))
                    .is_some()
                {}
                chars.next_if(|c| ('\u{40}'..='\u{7e}').contains(c));
            }
            // OSC (a hyperlink, a title): up to BEL or ESC \.
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                        break;
                    }
                }
            }
            // Any other escape is two characters.
            _ => {}
        }
    }
    out
}

/// One line saying why the framework never reported.
pub(super) fn framework_hint(
    framework: &dyn Framework,
    stderr_tail: &[u8],
    status: Option<std::process::ExitStatus>,
) -> String {
    let name = framework.name();
    let stderr = plain_text(stderr_tail);
    if status.and_then(|s| s.code()) == Some(0) {
        let example = framework
            .disabling_option()
            .map_or_else(String::new, |option| format!(" such as `{option}`"));
        return format!(
            "{name} exited with code 0 but tcrunner's reporter inside it never reported: it was not loaded (disabled by an option{example}, or by a plugin)"
        );
    }
    let how = status.map_or_else(|| "stopped".to_owned(), describe);
    // The line that says what is wrong, else the last one.
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let at = lines
        .iter()
        .rposition(|l| l.to_lowercase().contains("error"))
        .or(lines.len().checked_sub(1));
    match at {
        // A heading (`● Validation Error:`) needs its next line.
        Some(i) if lines[i].ends_with(':') && i + 1 < lines.len() => {
            format!(
                "{name} {how} before reporting any test: {} {}",
                lines[i],
                lines[i + 1]
            )
        }
        Some(i) => format!("{name} {how} before reporting any test: {}", lines[i]),
        None => format!("{name} {how} before reporting any test"),
    }
}

#[cfg(test)]
mod tests {
    use super::plain_text;
    use crate::run::secs;

    #[test]
    fn tails_read_as_plain_text() {
        let coloured = "\u{1b}[31m\u{1b}[1mError\u{1b}[22m: boom\u{1b}[39m \u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{1b}\\ \u{1b}7done";
        assert_eq!(plain_text(coloured.as_bytes()), "Error: boom link done");
        assert_eq!(plain_text(b"plain \xff"), "plain \u{fffd}");
        // A sequence cut off at the end of the tail leaves nothing behind.
        assert_eq!(plain_text(b"cut \x1b[3"), "cut ");
    }

    #[test]
    fn seconds_read_as_typed() {
        assert_eq!(secs(2.0), "2");
        assert_eq!(secs(0.5), "0.5");
    }
}
