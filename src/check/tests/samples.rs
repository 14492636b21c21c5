//! The captured third-party streams (`tests/fixtures/streams/`, copied from
//! the reference samples) and the hand-written id-mode streams. The expected
//! violations were read off the streams themselves: each one is a defect the
//! reference notes already name.
use crate::check::{check_bytes, Mode, Report, Rule, TestCounts};

macro_rules! stream {
    ($file:literal) => {
        check_bytes(include_bytes!(concat!(
            "../../../tests/fixtures/streams/",
            $file
        )))
    };
}

fn found(report: &Report) -> Vec<(u64, Rule)> {
    report.violations.iter().map(|v| (v.line, v.rule)).collect()
}

fn counts(passed: u64, failed: u64, ignored: u64) -> TestCounts {
    TestCounts {
        passed,
        failed,
        ignored,
        unfinished: 0,
    }
}

/// teamcity-messages 1.33 under `pytest -v`: every message printed after
/// pytest's own `PASSED [ 6%]` text (or after `collecting ... `) is glued
/// mid-line; nothing else is wrong.
#[test]
fn pytest_teamcity_messages_has_only_mid_line_messages() {
    let report = stream!("pytest-teamcity-messages.stdout.txt");
    let mid_lines = [
        6, 12, 13, 15, 16, 19, 20, 23, 25, 28, 30, 33, 35, 37, 38, 40, 41, 43, 44, 47, 48, 52, 53,
        56, 57, 59, 63, 64, 67, 68, 71, 72,
    ];
    let expected: Vec<_> = mid_lines.iter().map(|&l| (l, Rule::MidLine)).collect();
    assert_eq!(found(&report), expected, "{:#?}", report.violations);
    assert_eq!(report.messages, 48);
    assert_eq!(report.mode, Some(Mode::Name));
    // 17 tests: the collect error and the teardown error are tests of their own.
    assert_eq!(report.tests, counts(6, 8, 3));
    assert_eq!(report.suites, 0);
}

/// jest-teamcity 1.12: skipped and todo tests finish with `duration='null'`.
#[test]
fn jest_teamcity_has_null_durations() {
    let report = stream!("jest-teamcity.stdout.txt");
    assert_eq!(
        found(&report),
        [(15, Rule::Duration), (17, Rule::Duration)],
        "{:#?}",
        report.violations
    );
    assert_eq!(
        report.violations[0].detail,
        "duration='null' on testFinished is not a non-negative integer of milliseconds"
    );
    assert_eq!(report.messages, 68);
    // The todo test counts as passed: a defect of the reporter, not of the protocol.
    assert_eq!(report.tests, counts(10, 9, 1));
    assert_eq!(report.suites, 9);
}

/// jest-teamcity-reporter 0.9: the same `duration='null'`, flat names.
#[test]
fn jest_teamcity_reporter_has_null_durations() {
    let report = stream!("jest-teamcity-reporter.stdout.txt");
    assert_eq!(
        found(&report),
        [(13, Rule::Duration), (15, Rule::Duration)],
        "{:#?}",
        report.violations
    );
    assert_eq!(report.messages, 58);
    assert_eq!(report.tests, counts(10, 9, 1));
    assert_eq!(report.suites, 4);
}

/// vitest-teamcity-reporter 0.6.1: every file suite finishes under its
/// absolute path after starting under its relative name, and durations are
/// fractional milliseconds.
#[test]
fn vitest_teamcity_reporter_has_suite_mismatches_and_fractional_durations() {
    let report = stream!("vitest-teamcity-reporter.stdout.txt");
    let mut expected: Vec<_> = [8, 13, 18, 24, 28, 32, 37, 49, 56, 74, 80, 85, 94, 98, 102]
        .iter()
        .map(|&l| (l, Rule::Duration))
        .collect();
    expected.extend([75, 86, 88, 104].iter().map(|&l| (l, Rule::SuiteMismatch)));
    expected.sort_by_key(|&(line, _)| line);
    assert_eq!(found(&report), expected, "{:#?}", report.violations);
    assert_eq!(
        (
            report.count(Rule::Duration),
            report.count(Rule::SuiteMismatch)
        ),
        (15, 4)
    );
    assert_eq!(
        report.violations.iter().find(|v| v.rule == Rule::SuiteMismatch).unwrap().detail,
        "testSuiteFinished '/proj/vitest-suite/math.test.js' does not match the open suite 'math.test.js' (line 1) \
         in flow '/proj/vitest-suite/math.test.js'"
    );
    assert_eq!(report.messages, 103);
    // `ctx.skip()` shows as a standalone testIgnored and then a passed test
    // (TeamCity allows both forms, so only the counts show it).
    assert_eq!(report.tests, counts(10, 8, 3));
    assert_eq!(report.suites, 9);
}

/// The serial-tree trace of the protocol notes (§1.6), with its elisions
/// filled in and close_suites' full dotted suite name made the short one.
#[test]
fn pycharm_serial_tree_is_clean() {
    let report = stream!("pycharm-serial-tree.txt");
    assert!(report.is_clean(), "{:#?}", report.violations);
    assert_eq!(report.mode, Some(Mode::Id));
    assert_eq!(report.messages, 21);
    assert_eq!(report.tests, counts(1, 1, 1));
    assert_eq!(report.suites, 5);
}

/// The JetBrains JS reporters' tree: register, then start; testFailed and
/// testIgnored end a node on their own.
#[test]
fn js_tree_is_clean() {
    let report = stream!("js-tree.txt");
    assert!(report.is_clean(), "{:#?}", report.violations);
    assert_eq!(report.messages, 16);
    assert_eq!(report.tests, counts(1, 1, 1));
    assert_eq!(report.suites, 2);
}

#[test]
fn collect_only_tree_is_clean() {
    let report = stream!("collect-only-tree.txt");
    assert!(report.is_clean(), "{:#?}", report.violations);
    assert_eq!(report.mode, Some(Mode::Id));
    assert_eq!(report.declared_tests, 3);
    assert_eq!(report.tests.total(), 0);
    assert_eq!(
        report.summary(),
        "check: 10 messages, 0 tests (0 passed, 0 failed, 0 ignored), 0 suites: clean"
    );
}

/// One defect per line, each the rule named next to it.
#[test]
fn id_mode_defects_are_each_found_once() {
    let report = stream!("id-mode-defects.txt");
    assert_eq!(
        found(&report),
        [
            (5, Rule::Duration),
            (6, Rule::DuplicateNode),
            (7, Rule::UnknownParent),
            (8, Rule::Comparison),
            (12, Rule::StateChange),
            (14, Rule::MidLine),
            (14, Rule::OutputTarget),
            (15, Rule::UnknownNode),
            (17, Rule::ChildrenRunning),
            (18, Rule::ParentFinished),
            (20, Rule::MixedMode),
            (16, Rule::LeftOpen),
        ],
        "{:#?}",
        report.violations
    );
    assert_eq!(report.messages, 20);
    assert_eq!(
        report.tests,
        TestCounts {
            passed: 1,
            failed: 1,
            ignored: 1,
            unfinished: 1
        }
    );
    assert_eq!(report.suites, 2);
    let lines: Vec<String> = report.violations.iter().map(ToString::to_string).collect();
    assert_eq!(lines[4], "line 12: illegal state change: testFailed: [IGNORED -> FAILED] for test 'test_four' (nodeId 4)");
    assert_eq!(
        lines[11],
        "line 16: left open: test 'test_five' (nodeId 5) started on line 16 never ended"
    );
}

/// The parser's chunking must not change what check finds: feed a sample a
/// few bytes at a time.
#[test]
fn chunk_boundaries_do_not_matter() {
    let bytes =
        include_bytes!("../../../tests/fixtures/streams/pytest-teamcity-messages.stdout.txt");
    let whole = check_bytes(bytes);
    for size in [1, 7, 4096] {
        let chunked = crate::check::run::check_reader(Chunks { bytes, size }, "test").unwrap();
        assert_eq!(chunked, whole, "chunk size {size}");
    }
}

/// A reader that hands out at most `size` bytes per read.
struct Chunks<'a> {
    bytes: &'a [u8],
    size: usize,
}

impl std::io::Read for Chunks<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.size.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}
