//! jest's file `message` in `--json` reports: it repeats every failed
//! test's text in a section of its own, headed `  ● ` and the test's titles
//! joined by ` › ` (jest-message-util's format, unchanged since jest 24), and
//! adds a section for a file-level error (an `afterAll` hook's, headed
//! `  ● Test suite failed to run`). [`file_level_sections`] keeps the
//! sections no failed test accounts for.
use std::borrow::Cow;
use std::collections::HashMap;

use super::common::non_empty;

/// What jest joins a test's describe titles and its own with, in the
/// section headings of a file `message` (jest-message-util's
/// `ANCESTRY_SEPARATOR`).
const TITLE_SEPARATOR: &str = " \u{203a} ";

/// The headings jest gives the failed tests of one file, each counted as
/// often as a failed test has it (two tests may share their titles), and
/// once per failure of that test: jest writes a section for each of a
/// test's `failureMessages` (two snapshots that differ in one test are two).
#[derive(Debug, Default)]
pub(crate) struct FailedTitles {
    counts: HashMap<String, usize>,
    /// The headings that span lines (a title with a line break in it),
    /// longest first: jest writes such a heading over as many lines.
    spanning: Vec<String>,
}

impl FailedTitles {
    /// Notes a failed test by its describe titles and its own, with the
    /// number of its failure messages (one section each, at least one).
    pub(crate) fn add(&mut self, ancestors: &[Cow<'_, str>], title: &str, failures: usize) {
        let mut heading = ancestors.join(TITLE_SEPARATOR);
        if !ancestors.is_empty() {
            heading.push_str(TITLE_SEPARATOR);
        }
        heading.push_str(title);
        if heading.contains('\n') && !self.counts.contains_key(&heading) {
            let at = self
                .spanning
                .partition_point(|other| other.len() >= heading.len());
            self.spanning.insert(at, heading.clone());
        }
        *self.counts.entry(heading).or_default() += failures.max(1);
    }

    /// How many of `lines` (without colours) a failed test's heading not
    /// yet claimed takes up, if they start with one; claims it.
    fn claim(&mut self, lines: &[Cow<'_, str>]) -> Option<usize> {
        let first = section_heading(&lines[0])?;
        let spanning = self.spanning.iter().find(|heading| {
            self.counts[heading.as_str()] > 0 && {
                let mut parts = heading.split('\n');
                parts.next() == Some(first)
                    && parts
                        .enumerate()
                        .all(|(i, part)| lines.get(i + 1).is_some_and(|l| line_text(l) == part))
            }
        });
        let (heading, spans) = match spanning {
            Some(heading) => (heading.as_str(), heading.split('\n').count()),
            None => (first, 1),
        };
        let left = self.counts.get_mut(heading).filter(|left| **left > 0)?;
        *left -= 1;
        Some(spans)
    }
}

/// The text of a jest file `message` that no failed test accounts for: the
/// sections headed by anything but a failed test's titles (jest writes an
/// `afterAll` error after the tests' as `● Test suite failed to run`).
/// `None` when every section is a failed test's, and when there is no
/// section at all: jest heads every error it writes there, so such text is
/// a custom runner's own summary (jest-runner-eslint's lint report), whose
/// failures are its tests'.
pub(crate) fn file_level_sections(message: &str, mut failed: FailedTitles) -> Option<String> {
    let lines: Vec<&str> = message.split_inclusive('\n').collect();
    let plain: Vec<Cow<'_, str>> = lines.iter().map(|line| without_colours(line)).collect();
    if !plain.iter().any(|line| section_heading(line).is_some()) {
        return None;
    }
    let mut kept = String::new();
    // Text before the first heading belongs to no test.
    let mut keep = true;
    let mut at = 0;
    while at < lines.len() {
        if section_heading(&plain[at]).is_some() {
            match failed.claim(&plain[at..]) {
                Some(spans) => {
                    keep = false;
                    at += spans;
                    continue;
                }
                None => keep = true,
            }
        }
        if keep {
            kept.push_str(lines[at]);
        }
        at += 1;
    }
    non_empty(Some(&kept))
}

/// The title of a section heading line, `  ● title` (jest-message-util's
/// indent and bullet; a section's body is indented further).
fn section_heading(line: &str) -> Option<&str> {
    Some(line_text(line.strip_prefix("  \u{25cf} ")?))
}

/// A line without its line break.
fn line_text(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

/// `line` without ANSI colour codes (`ESC [ … m`), which jest writes into
/// the message when its output goes to a terminal.
fn without_colours(line: &str) -> Cow<'_, str> {
    if !line.contains('\x1b') {
        return Cow::Borrowed(line);
    }
    let mut plain = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\x1b[") {
        plain.push_str(&rest[..at]);
        let code = &rest[at + 2..];
        let params = code
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(code.len());
        // The parameters and the one letter that ends them.
        let end = code[params..]
            .chars()
            .next()
            .map_or(params, |c| params + c.len_utf8());
        rest = &code[end..];
    }
    plain.push_str(rest);
    Cow::Owned(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_of_failed_tests_are_not_file_errors() {
        let mut failed = FailedTitles::default();
        failed.add(&["outer".into(), "inner".into()], "fails", 1);
        failed.add(&[], "Test suite failed to run", 1);
        let tests_only = "  \u{25cf} outer \u{203a} inner \u{203a} fails\n\n    boom\n";
        assert_eq!(
            file_level_sections(tests_only, FailedTitles::default()).as_deref(),
            Some(tests_only.trim())
        );
        let mut one = FailedTitles::default();
        one.add(&["outer".into(), "inner".into()], "fails", 1);
        assert_eq!(file_level_sections(tests_only, one), None);
        // Coloured headings; a test titled like jest's own heading claims
        // one section, the hook's is the other.
        let message = "\x1b[1m\x1b[31m  \x1b[1m\u{25cf} \x1b[22mouter \u{203a} inner \u{203a} fails\x1b[39m\x1b[22m\n\n    boom\n\n\
            \x20 \u{25cf} Test suite failed to run\n\n    first\n\n\
            \x20 \u{25cf} Test suite failed to run\n\n    hook broke\n";
        let kept = file_level_sections(message, failed).unwrap();
        assert_eq!(kept, "\u{25cf} Test suite failed to run\n\n    hook broke");
    }

    #[test]
    fn a_heading_over_several_lines_is_its_failed_tests() {
        // `test("two\nlines")`: jest writes the title as it is, line break
        // and all; a test titled by its first line alone fails too.
        let message = "  \u{25cf} two\nlines\n\n    first\n\n  \u{25cf} two\n\n    second\n\n\
            \x20 \u{25cf} two\nlines\n\n    hook broke\n";
        let mut failed = FailedTitles::default();
        failed.add(&[], "two\nlines", 1);
        failed.add(&[], "two", 1);
        assert_eq!(
            file_level_sections(message, failed).as_deref(),
            Some("\u{25cf} two\nlines\n\n    hook broke")
        );
        let mut nested = FailedTitles::default();
        nested.add(&["outer".into()], "a\nb\nc", 1);
        let message = "  \u{25cf} outer \u{203a} a\nb\nc\n\n    boom\n";
        assert_eq!(file_level_sections(message, nested), None);
    }
}
