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
fn fail<W: Write>(
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

/// Fails each test of `ids` with the same `message`, innermost first (the
/// latest started: a subtest before its test), as failing a test closes
/// what runs under it, and a verdict for a closed test would be a new node.
pub(super) fn fail_all<W: Write>(
    pipeline: &mut Pipeline<W>,
    ids: Vec<String>,
    message: &str,
    details: Option<&str>,
) -> io::Result<()> {
    for id in ids.into_iter().rev() {
        fail(pipeline, id, message.to_owned(), details.map(str::to_owned))?;
    }
    Ok(())
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
    match reason(&stderr) {
        Some(line) => format!("{name} {how} before reporting any test: {line}"),
        None => format!("{name} {how} before reporting any test"),
    }
}

/// The line of a framework's stderr that says what went wrong: the last
/// that names an error, else the last line, leaving out what only points
/// elsewhere (stack frames, code frames, links, runtime banners, Python
/// warnings). A heading (`● Validation Error:`) comes with its next line.
fn reason(stderr: &str) -> Option<String> {
    named_error(stderr).or_else(|| last_said(stderr))
}

/// Why a run failed though no test did: a line of stderr that names an
/// error, else one of stdout (pytest-cov says its threshold there), else
/// stderr's last line.
pub(super) fn run_failure_reason(stderr: &str, stdout: &str) -> Option<String> {
    named_error(stderr)
        .or_else(|| named_error(stdout))
        .or_else(|| last_said(stderr))
}

/// The last line of `text` that may say something.
fn last_said(text: &str) -> Option<String> {
    said_lines(text).last().map(|l| (*l).to_owned())
}

/// The last line of `text` that names an error, as [`reason`] reads it.
fn named_error(text: &str) -> Option<String> {
    const NAMES_AN_ERROR: [&str; 8] = [
        "error",
        "unrecognized",
        "exit called",
        "not found",
        "invalid",
        "not met",
        "does not meet",
        "not reached",
    ];
    let lines = said_lines(text);
    let at = lines.iter().rposition(|l| {
        let lower = l.to_lowercase();
        NAMES_AN_ERROR.iter().any(|w| lower.contains(w))
    })?;
    Some(match lines.get(at + 1) {
        Some(next) if lines[at].ends_with(':') => format!("{} {next}", lines[at]),
        _ => lines[at].to_owned(),
    })
}

/// The lines of `text` that may say something, trimmed: not stack frames,
/// code frames, links, runtime banners, jest's notices of how it ended,
/// nor Python warnings (`file.py:3: UserWarning: …` and the source line
/// under it), which say nothing of why a run failed.
fn said_lines(text: &str) -> Vec<&str> {
    // What jest says of how it ended, never why it failed.
    const NOTICES: [&str; 3] = [
        "Force exiting Jest",
        "Jest did not exit one second after",
        "A worker process has failed to exit gracefully",
    ];
    let said = |l: &str| {
        let code_frame = l
            .trim_start_matches('>')
            .trim_start()
            .split_once('|')
            .is_some_and(|(n, _)| n.trim().chars().all(|c| c.is_ascii_digit()));
        !(l.is_empty()
            || l.starts_with("at ")
            || l.starts_with('|')
            || code_frame
            || l.starts_with("http://")
            || l.starts_with("https://")
            || l.ends_with("Documentation:")
            || l.starts_with("Node.js v")
            || NOTICES.iter().any(|notice| l.starts_with(notice)))
    };
    let mut lines = Vec::new();
    let mut in_warning = false;
    for line in text.lines() {
        if in_warning && line.starts_with([' ', '\t']) {
            continue;
        }
        in_warning = python_warning(line);
        let line = line.trim();
        if !in_warning && said(line) {
            lines.push(line);
        }
    }
    lines
}

/// `path:12: SomeWarning: text`, as Python's `warnings` module shows one.
fn python_warning(line: &str) -> bool {
    let Some((place, rest)) = line.split_once(": ") else {
        return false;
    };
    let category = rest.split_once(": ").map_or("", |(c, _)| c);
    let line_number = place.rsplit_once(':').map_or("", |(_, n)| n);
    category.ends_with("Warning")
        && !category.contains(' ')
        && !line_number.is_empty()
        && line_number.bytes().all(|b| b.is_ascii_digit())
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
    fn the_reason_is_the_line_that_names_the_error() {
        use super::reason;
        let unknown_option = "● Unrecognized CLI Parameter:\n\n  Unrecognized option \"lf\".\n\n  CLI Options Documentation:\n  https://jestjs.io/docs/cli\n";
        assert_eq!(
            reason(unknown_option).as_deref(),
            Some("Unrecognized option \"lf\".")
        );
        let exit_in_hook = "  ● process.exit called with \"1\"\n\n      1 | beforeAll(() => process.exit(1));\n    > 2 | test('a', () => { throw new Error('x'); });\n        |                         ^\n      at Object.<anonymous> (a.test.js:1:27)\n";
        assert_eq!(
            reason(exit_in_hook).as_deref(),
            Some("● process.exit called with \"1\"")
        );
        let uncaught = "/p/a.test.js:1\nError: late boom\n    at Timeout._onTimeout (/p/a.test.js:1:60)\n    at listOnTimeout (node:internal/timers:581:17)\n\nNode.js v20.20.2\n";
        assert_eq!(reason(uncaught).as_deref(), Some("Error: late boom"));
        let heading = "● Validation Error:\n\n  Option \"x\" must be of type:\n";
        assert_eq!(
            reason(heading).as_deref(),
            Some("● Validation Error: Option \"x\" must be of type:")
        );
        // jest's coverage threshold, then --forceExit's notice.
        let threshold = "Jest: \"global\" coverage threshold for lines (100%) not met: 75%\nForce exiting Jest: Have you considered using `--detectOpenHandles` to detect async operations that kept running after all tests finished?\n";
        assert_eq!(
            reason(threshold).as_deref(),
            Some("Jest: \"global\" coverage threshold for lines (100%) not met: 75%")
        );
        assert_eq!(reason("only this\n").as_deref(), Some("only this"));
        assert_eq!(reason("\n  \n"), None);
    }

    #[test]
    fn a_coverage_threshold_on_stdout_is_the_reason_not_a_warning_on_stderr() {
        use super::run_failure_reason;
        let warned = "/v/lib/coverage/inorout.py:521: CoverageWarning: Module nosuchmod was never imported. (module-not-imported)\n  self.warn(f\"Module {pkg} was never imported.\", slug=\"module-not-imported\")\n";
        let stdout = "Name      Stmts   Miss  Cover\ncalc.py       4      1    75%\nFAIL Required test coverage of 100% not reached. Total coverage: 75.00%\n1 passed in 0.05s\n";
        let want = "FAIL Required test coverage of 100% not reached. Total coverage: 75.00%";
        assert_eq!(run_failure_reason(warned, stdout).as_deref(), Some(want));
        assert_eq!(run_failure_reason("", stdout).as_deref(), Some(want));
        let older = "ERROR: Coverage failure: total of 75 is less than fail-under=100\n";
        assert_eq!(
            run_failure_reason("", older).as_deref(),
            Some("ERROR: Coverage failure: total of 75 is less than fail-under=100")
        );
        // A warning alone is no reason; stderr's own last line still is.
        assert_eq!(run_failure_reason(warned, "1 passed\n"), None);
        assert_eq!(
            run_failure_reason("setup went wrong\n", "1 passed\n").as_deref(),
            Some("setup went wrong")
        );
    }

    #[test]
    fn seconds_read_as_typed() {
        assert_eq!(secs(2.0), "2");
        assert_eq!(secs(0.5), "0.5");
    }
}
