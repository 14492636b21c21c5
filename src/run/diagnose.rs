//! Diagnosis: recognising what the framework said (timeouts, no tests, why
//! it never started) and turning it into verdicts a user sees in the tree.
use std::io::{self, Write};

use crate::event::{Outcome, TestEvent, TestResult};
use crate::process::describe;

use crate::report::Pipeline;

/// Whether a failure message is the framework's own per-test time limit
/// (`prefix`, from [`Framework::timeout_prefix`]), which the framework may
/// wrap as `Failed: …`, `Error: …` or `Error: thrown: "…"`.
///
/// [`Framework::timeout_prefix`]: crate::frameworks::Framework::timeout_prefix
pub(super) fn is_timeout_message(message: &str, prefix: &str) -> bool {
    let message = message.strip_prefix("Failed: ").unwrap_or(message);
    let message = message.strip_prefix("Error: ").unwrap_or(message);
    let message = message.strip_prefix("thrown: \"").unwrap_or(message);
    message.starts_with(prefix)
}

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

/// A JavaScript error's own line in `stderr` (`Error: boom`,
/// `TypeError: …`), not the code frame vitest prints under it.
pub(super) fn thrown_error_line(stderr: &str) -> Option<&str> {
    stderr.lines().map(str::trim).find(|line| {
        line.split_once("Error: ")
            .is_some_and(|(kind, _)| kind.chars().all(char::is_alphanumeric))
    })
}

/// One line saying why the framework never reported.
pub(super) fn framework_hint(
    name: &str,
    stderr_tail: &[u8],
    status: Option<std::process::ExitStatus>,
) -> String {
    let stderr = plain_text(stderr_tail);
    if status.and_then(|s| s.code()) == Some(0) {
        let example = if name == "pytest" {
            " such as `-p no:tcrunner_pytest`"
        } else {
            ""
        };
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
        // A heading such as jest's `● Validation Error:` needs its next line.
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
    use super::*;
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
    fn in_framework_timeouts_are_recognised() {
        use crate::frameworks::{Framework, Jest, Pytest, Vitest};
        let (pytest, jest, vitest) = (
            Pytest.timeout_prefix(),
            Jest.timeout_prefix(),
            Vitest.timeout_prefix(),
        );
        for (message, prefix) in [
            ("timed out after 2 s", pytest),
            ("Failed: timed out after 0.5 s", pytest),
            (
                "Exceeded timeout of 2000 ms for a test.\nAdd a timeout value to this test",
                jest,
            ),
            (
                "Error: thrown: \"Exceeded timeout of 1000 ms for a test.\nAdd a timeout value\"",
                jest,
            ),
            ("Error: Test timed out in 2000ms.", vitest),
        ] {
            assert!(is_timeout_message(message, prefix), "{message}");
        }
        for (message, prefix) in [
            ("assert 1 == 2", pytest),
            ("Error: boom", jest),
            ("a test that timed out after all", pytest),
            ("timed out after 2 s", vitest),
        ] {
            assert!(!is_timeout_message(message, prefix), "{message}");
        }
    }

    #[test]
    fn seconds_read_as_typed() {
        assert_eq!(secs(2.0), "2");
        assert_eq!(secs(0.5), "0.5");
    }
}
