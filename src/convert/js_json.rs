//! What jest `--json` and vitest `--reporter=json` share: vitest copied jest's
//! `FormattedTestResults` shape (`testResults[]` per file, `assertionResults[]`
//! per test with `ancestorTitles`, `title`, `status`, `duration`,
//! `failureMessages`, `location`). The per-format modules say where they differ.
use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::io::BufRead;

use serde::Deserialize;
use serde_json::Value;

use super::common::{
    line, non_empty, split_stack, to_ms, Emitter, Grouper, ReadError, SuiteSpec, TestNode,
};
use super::file_names::Root;
use super::jest_message::{file_level_sections, FailedTitles};
use super::js_entry::{self, Assertion, FileEntry, FileResult};
use super::{json_stream, lenient};
use crate::event::{LogLevel, Node, NodeKind, Outcome, TestEvent, TestResult};

/// How one tool's flavour of the shape differs.
pub(crate) struct Flavor {
    /// `jest`, `vitest`: for log messages.
    pub tool: &'static str,
    /// jest's file `message` repeats every failed test's text, one section
    /// each ([`file_level_sections`] takes those out); vitest's
    /// holds only the file-level error.
    pub message_repeats_failures: bool,
    /// vitest 1 puts its file's unnamed default suite first in every test's
    /// `ancestorTitles` (`["", "outer"]`, [vitest#5834]); vitest 2 and jest
    /// do not, and there an empty title is a real `describe('')`. Under
    /// `--typecheck` (vitest 3 and 4 at least) every test of a type-check
    /// file has `meta.typecheck` and starts with the file's path relative to
    /// vitest's root (`["test/types.test-d.ts", "outer"]`), a suite the live
    /// reporter never sees.
    ///
    /// [vitest#5834]: https://github.com/vitest-dev/vitest/issues/5834
    pub titles_may_start_with_file: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Report {
    #[serde(deserialize_with = "lenient::list")]
    pub test_results: Vec<FileResult>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub was_interrupted: bool,
}

/// The name of the pseudo-test for a file that failed before running tests.
pub(crate) const FAILED_TO_RUN: &str = "Test suite failed to run";
/// The name of the pseudo-test for a file-level error beside its tests (the
/// live reporters' name: in jest it can only be an `afterAll` error).
pub(crate) const FILE_ERROR: &str = "afterAll hook";
/// The name of that pseudo-test where the report cannot tell which hook
/// failed: vitest skips the tests under a failed `beforeAll`, so in a file
/// with a skipped test the error may be either hook's.
pub(crate) const HOOK_ERROR: &str = "beforeAll/afterAll hook";

/// Reads the whole report, then sends it file by file: for a report that
/// can be read only once.
pub(crate) fn read(
    input: impl BufRead,
    flavor: &Flavor,
    out: &mut Emitter<'_>,
) -> Result<(), ReadError> {
    let mut files = Vec::new();
    let interrupted = stream(input, |file| {
        files.push(file.into_owned());
        Ok(())
    })?;
    send(
        Report {
            test_results: files,
            was_interrupted: interrupted,
        },
        flavor,
        out,
    )
}

/// Reads a report twice, in memory that does not grow with it: the first
/// pass takes only the files' names (their common directory names the file
/// suites), the second sends each file's tests as its entry is read. A
/// malformed report fails in the second pass, after the files before the
/// problem were sent.
pub(crate) fn read_twice(
    first: impl BufRead,
    second: impl BufRead,
    flavor: &Flavor,
    out: &mut Emitter<'_>,
) -> Result<(), ReadError> {
    let mut names = Vec::new();
    let name = |text: &[u8]| {
        lenient::string(&mut serde_json::Deserializer::from_slice(text))
            .ok()
            .flatten()
    };
    // The name of the entry whose members were walked where it was read.
    let walked = Cell::new(None);
    // Only the names are decoded. A problem here comes back in the second
    // pass, at the same place.
    let _ = json_stream::read_entries_measured(
        first,
        "testResults",
        // One walk of the entry's members for its name and its end, not a
        // scan of its brackets and then the walk: jest's report 1.87 → 1.77 G
        // instructions.
        |rest| {
            let (text, len) = json_stream::object_member(rest, "name")?;
            walked.set(Some(text.and_then(name)));
            Some(len)
        },
        |entry| {
            match walked.take() {
                Some(walked) => names.push(walked),
                // As in the second pass, an entry that is not an object is none.
                None if entry.is_object() => names.push(entry.member("name").and_then(name)),
                None => {}
            }
            Ok(())
        },
        |_, _| Ok(()),
    );
    let mut files = Files::new(flavor, names.iter().map(Option::as_deref));
    let interrupted = stream(second, |file| files.send(file, out))?;
    files.finish(interrupted, out)
}

/// Reads a report's top level, giving each `testResults` entry to `each`
/// as soon as it is read; returns `wasInterrupted`.
fn stream(
    input: impl BufRead,
    each: impl FnMut(FileEntry<'_>) -> Result<(), ReadError>,
) -> Result<bool, ReadError> {
    let mut interrupted = false;
    let each = RefCell::new(each);
    // What sending the entry decoded where it was read gave, before a scan
    // found its end. It is sent there, as its strings borrow that text.
    let sent = Cell::new(None);
    json_stream::read_entries_measured(
        input,
        "testResults",
        // Saves the second pass's scan of each entry: jest's report 2.14 →
        // 2.04 G instructions, vitest's 1.74 → 1.67 G.
        |rest| {
            let (file, len) = js_entry::file_result_at(rest)?;
            sent.set(Some(each.borrow_mut()(file)));
            Some(len)
        },
        // The usual entry in one pass (jest's 100,000-test report: 3.00 →
        // 2.69 G instructions); any other the derived way.
        |entry| {
            if let Some(sent) = sent.take() {
                return sent;
            }
            let mut each = each.borrow_mut();
            match js_entry::file_result(entry.text()) {
                Some(file) => each(file),
                None => entry.decode()?.map_or(Ok(()), &mut *each),
            }
        },
        |key, text| {
            if key == "wasInterrupted" {
                interrupted = serde_json::from_slice(text).unwrap_or(false);
            }
            Ok(())
        },
    )?;
    Ok(interrupted)
}

/// Decodes an already parsed document.
pub(crate) fn from_value(doc: Value) -> Result<Report, ReadError> {
    serde_json::from_value(doc).map_err(ReadError::from_value)
}

/// Sends a whole report.
pub(crate) fn send(
    report: Report,
    flavor: &Flavor,
    out: &mut Emitter<'_>,
) -> Result<(), ReadError> {
    let names = report.test_results.iter().map(|f| f.name.as_deref());
    let mut files = Files::new(flavor, names);
    for file in report.test_results {
        files.send(file, out)?;
    }
    files.finish(report.was_interrupted, out)
}

/// Sends a report's files one at a time.
struct Files<'f> {
    flavor: &'f Flavor,
    /// The folder every file is in, which file suites are named below.
    root: Root,
    /// Numbers the nodes of every file.
    tree: Grouper,
    /// Said at the end of the report.
    warnings: Vec<String>,
}

/// The current directory, to name files below (see [`Root::new`]).
fn current_dir() -> Option<String> {
    std::env::current_dir()
        .ok()?
        .into_os_string()
        .into_string()
        .ok()
}

impl<'f> Files<'f> {
    /// For the report whose files are `names`.
    fn new<'n>(flavor: &'f Flavor, names: impl Iterator<Item = Option<&'n str>>) -> Self {
        Files {
            flavor,
            root: Root::new(names, current_dir().as_deref()),
            tree: Grouper::default(),
            warnings: Vec::new(),
        }
    }

    fn send(&mut self, file: FileEntry<'_>, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        let flavor = self.flavor;
        let abs = file.name.clone().filter(|n| !n.is_empty());
        let display = self.root.display_name(file.name.as_deref().unwrap_or(""));
        let mut file_spec = SuiteSpec::new(display.clone(), NodeKind::File);
        file_spec.file = abs.clone();
        let mut any_failed = false;
        let mut any_skipped = false;
        let count = file.assertion_results.len();
        let message = non_empty(file.message.as_deref());
        // The section titles jest gives failed tests, to tell them from
        // file-level errors in its `message`.
        let mut failed_titles = FailedTitles::default();
        let titles_needed = flavor.message_repeats_failures && message.is_some();
        let skip = usize::from(
            flavor.titles_may_start_with_file
                && titles_start_with_file(&file.assertion_results, abs.as_deref()),
        );
        // The last test's suites, kept for the next: tests mostly share
        // their describes', and a path built anew cost two copies per level
        // and test and a grown list (about 170 M of the 2.69 G instructions
        // of jest's 100,000-test report).
        let mut suite_path = vec![file_spec.clone()];
        for a in file.assertion_results {
            if titles_needed && a.status.as_deref() == Some("failed") {
                failed_titles.add(
                    &a.ancestor_titles,
                    a.title.as_deref().unwrap_or(""),
                    a.failure_messages.len(),
                );
            }
            let titles = a.ancestor_titles.get(skip..).unwrap_or_default();
            let shared = suite_path[1..]
                .iter()
                .zip(titles)
                .take_while(|(spec, title)| spec.name == **title)
                .count();
            suite_path.truncate(1 + shared);
            for title in &titles[shared..] {
                let mut spec = SuiteSpec::new(title.as_ref(), NodeKind::Suite);
                spec.file = abs.clone();
                suite_path.push(spec);
            }
            let test = assertion(a, abs.clone());
            any_failed |= test.result.outcome == Outcome::Failed;
            any_skipped |= test.result.outcome == Outcome::Skipped;
            self.tree.add(&suite_path, test);
        }
        let failed = file.status.as_deref() == Some("failed");
        // What jest's message says beyond its tests' failures. A file-level
        // error beside tests is a section of its own; a message with no
        // section at all is a custom runner's summary (jest-runner-eslint's),
        // which its failed tests carry, or which failed nothing: the live
        // reporter, which sees only jest's `testExecError`, shows neither.
        let message = if message.is_some()
            && flavor.message_repeats_failures
            && count > 0
            && (any_failed || !failed)
        {
            file_level_sections(file.message.as_deref().unwrap_or(""), failed_titles)
        } else {
            message
        };
        // A file failed with no failed test and no error text: vitest
        // keeps no beforeAll/afterAll hook's error in its JSON report, but
        // the file's failure is a result all the same.
        let unexplained = failed && !any_failed && message.is_none();
        let pseudo = if count == 0 {
            (message.is_some() || failed).then_some(FAILED_TO_RUN)
        } else {
            // jest fails each test under a failed `beforeAll`, so its
            // file-level error is an `afterAll`'s; vitest skips them.
            let either = !flavor.message_repeats_failures && any_skipped;
            (message.is_some() || unexplained).then_some(if either {
                HOOK_ERROR
            } else {
                FILE_ERROR
            })
        };
        if let Some(name) = pseudo {
            let text = message.clone().unwrap_or_else(|| match count {
                0 => format!("{} marked the file failed", flavor.tool),
                _ => format!(
                    "{} marked the file failed but recorded no error (a beforeAll/afterAll \
                     hook failure is not kept in its JSON report)",
                    flavor.tool
                ),
            });
            let node = Node {
                name: name.to_string(),
                file: abs.clone(),
                ..Node::default()
            };
            let result = TestResult {
                outcome: Outcome::Error,
                message: Some(headline(&text)),
                details: Some(text),
                ..TestResult::default()
            };
            self.tree.add(
                &[file_spec],
                TestNode {
                    node,
                    result,
                    ..TestNode::default()
                },
            );
        }
        self.tree.emit(out)
    }

    /// The warnings, after every file.
    fn finish(mut self, interrupted: bool, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        if interrupted {
            let tool = self.flavor.tool;
            self.warnings
                .push(format!("{tool} reports the run was interrupted"));
        }
        for text in self.warnings {
            out.send(TestEvent::Log {
                level: LogLevel::Warning,
                text,
            })?;
        }
        Ok(())
    }
}

/// Whether every test's first ancestor title is its file's own suite
/// ([`Flavor::titles_may_start_with_file`]): vitest 1's unnamed one, or a
/// type-check file's, named by the end of the file's path.
///
/// In vitest 1 every test is in an unnamed default suite, which is the
/// file. A vitest 2 file whose tests are all in one `describe('')` looks
/// the same, and losing that one nameless level there costs less than an
/// empty suite in every file of vitest 1.
fn titles_start_with_file(tests: &[Assertion<'_>], file: Option<&str>) -> bool {
    let names_file = |a: &Assertion<'_>, title: &str| {
        a.meta.typecheck
            && !title.is_empty()
            && file
                .and_then(|f| f.strip_suffix(title))
                .is_some_and(|rest| rest.ends_with('/') || rest.ends_with('\\'))
    };
    let Some(first) = tests.first().and_then(|a| a.ancestor_titles.first()) else {
        return false;
    };
    tests.iter().all(|a| {
        a.ancestor_titles.first() == Some(first) && (first.is_empty() || names_file(a, first))
    })
}

fn assertion(a: Assertion<'_>, file: Option<String>) -> TestNode {
    let name = a
        .title
        .or(a.full_name)
        .map_or_else(|| "(unnamed test)".to_string(), Cow::into_owned);
    let status = a.status.unwrap_or_default();
    let outcome = match status.as_ref() {
        // A `test.failing` that failed as it should is `passed` too, as the
        // live jest reporter reports it.
        "passed" => Outcome::Passed,
        "failed" => Outcome::Failed,
        "pending" | "skipped" | "disabled" => Outcome::Skipped,
        "todo" => Outcome::Todo,
        _ => Outcome::Error,
    };
    let mut result = TestResult {
        outcome,
        duration_ms: a.duration.and_then(|d| to_ms(d, 1.0)),
        ..TestResult::default()
    };
    if outcome == Outcome::Error {
        result.message = Some(format!("unknown test status '{status}'"));
    }
    if outcome == Outcome::Failed {
        let mut messages = a.failure_messages.into_iter();
        if let Some(first) = messages.next() {
            let (head, stack) = split_stack(&first);
            let rest: Vec<String> = messages.collect();
            let details = stack
                .into_iter()
                .chain(rest)
                .collect::<Vec<_>>()
                .join("\n\n");
            result.message = Some(head);
            result.details = Some(details).filter(|d| !d.is_empty());
        }
        (result.expected, result.actual) = expected_actual(&a.failure_details);
    }
    let node = Node {
        name,
        file,
        line: line(a.location.and_then(|l| l.line), 0),
        tags: a.tags,
        ..Node::default()
    };
    TestNode {
        node,
        result,
        ..TestNode::default()
    }
}

/// jest's `failureDetails[].matcherResult.{expected, actual}`: strings as they
/// are, other values as pretty JSON; both or neither, and neither when equal.
pub(crate) fn expected_actual(details: &[Value]) -> (Option<String>, Option<String>) {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    for detail in details {
        let Some(m) = detail.get("matcherResult") else {
            continue;
        };
        if let (Some(e), Some(a)) = (m.get("expected"), m.get("actual")) {
            let (e, a) = (text(e), text(a));
            return if e == a {
                (None, None)
            } else {
                (Some(e), Some(a))
            };
        }
    }
    (None, None)
}

/// The first line of a file-level message that says something (jest opens
/// with `● Test suite failed to run`).
fn headline(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('●'))
        .unwrap_or("test file failed")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_twice_sends_what_one_read_sends() {
        use crate::convert::testing::{events_of, sample};
        let odd = r#"{"testResults": [7, {"name": "/p/a/x.test.js", "assertionResults": [
            {"title": "t", "status": "passed", "title": "u"}, "not a test"]},
            {"name": "/p/b/y.test.js", "status": "failed"}], "wasInterrupted": true}"#;
        let flavor = Flavor {
            tool: "jest",
            message_repeats_failures: true,
            titles_may_start_with_file: false,
        };
        for text in [sample("jest.json"), sample("vitest.json"), odd.into()] {
            let once = events_of(|out| read(&text[..], &flavor, out)).unwrap();
            let twice = events_of(|out| read_twice(&text[..], &text[..], &flavor, out)).unwrap();
            assert_eq!(once, twice);
            assert!(once.len() > 5, "{once:?}");
        }
        let odd = events_of(|out| read(odd.as_bytes(), &flavor, out)).unwrap();
        let names: Vec<&str> = odd
            .iter()
            .filter_map(|e| match e {
                TestEvent::Suite(node) | TestEvent::Test(node) => Some(node.name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["a/x.test.js", "u", "b/y.test.js", FAILED_TO_RUN]);
    }

    #[test]
    fn expected_actual_rules() {
        let d = |e: Value, a: Value| {
            vec![serde_json::json!({"matcherResult": {"expected": e, "actual": a}})]
        };
        assert_eq!(
            expected_actual(&d("a\nc".into(), "a\nb".into())),
            (Some("a\nc".into()), Some("a\nb".into()))
        );
        assert_eq!(
            expected_actual(&d(3.into(), 2.into())),
            (Some("3".into()), Some("2".into()))
        );
        assert_eq!(expected_actual(&d(3.into(), 3.into())), (None, None));
        assert_eq!(expected_actual(&[serde_json::json!({})]), (None, None));
        let only = vec![serde_json::json!({"matcherResult": {"actual": 1}})];
        assert_eq!(expected_actual(&only), (None, None));
    }
}
