//! Rules every stream follows, whatever its mode.
use tcrunner_protocol::{ParseError, Position};

use super::support::{assert_clean, assert_found, check};
use crate::check::{check_bytes, Checker, Mode, Rule};

#[test]
fn empty_stream_is_clean() {
    let report = assert_clean("");
    assert_eq!(report.messages, 0);
    assert_eq!(report.mode, None);
    assert_eq!(
        report.summary(),
        "check: 0 messages, 0 tests (0 passed, 0 failed, 0 ignored), 0 suites: clean"
    );
}

#[test]
fn non_test_messages_and_text_are_allowed() {
    let report = assert_clean(
        "
        some plain output
        @enteredTheMatrix
        @testingStarted
        @testCount count=3
        @progressMessage 'collecting'
        @message text='hello' status='WARNING'
        @blockOpened name='setup'
        @blockClosed name='setup'
        @buildStatisticValue key=CodeCoverageAbsLCovered value=10
        @customProgressStatus type=testStarted
        @someFutureMessage a=1
        @testingFinished
        ",
    );
    assert_eq!(report.messages, 11);
}

#[test]
fn syntax_errors_are_violations() {
    let mut checker = Checker::new();
    checker.parse_error(&ParseError {
        position: Position {
            offset: 10,
            line: 2,
        },
        problem: "unterminated value".into(),
    });
    let report = checker.finish();
    assert_eq!(report.violations.len(), 1);
    assert_eq!(
        report.violations[0].to_string(),
        "line 2: syntax: unterminated value"
    );
}

#[test]
fn mid_line_messages_fire() {
    let report = assert_found(
        "
        @testStarted name=a
        PASSED [100%]
        ~@testFinished name=a
        ",
        &[(3, Rule::MidLine)],
    );
    // Still checked as if it started the line: the test is closed.
    assert_eq!(report.tests.passed, 1);
}

#[test]
fn messages_at_line_start_do_not_fire_mid_line() {
    assert_clean("@testStarted name=a\n@testFinished name=a");
}

/// IntelliJ reads a line only when `line.trim()` is exactly one message:
/// Java's trim drops every char up to U+0020, so blank and control
/// characters around a message are fine, anything else loses it.
#[test]
fn the_ide_line_rule_through_the_parser() {
    let fine =
        b"  ##teamcity[testStarted name='a']  \r\n\x1b##teamcity[testFinished name='a']\x0c\n";
    let report = check_bytes(fine);
    assert!(report.is_clean(), "{:#?}", report.violations);
    assert_eq!(report.tests.passed, 1);

    let report = check_bytes(
        b"##teamcity[testStarted name='a'] trailing words\n\
          ##teamcity[testStdOut name='a' out='x']##teamcity[testFinished name='a']\n\
          ##teamcity[testCount count='1'] ##teamcity[oops\n",
    );
    let found: Vec<_> = report
        .violations
        .iter()
        .map(|v| (v.line, v.rule, v.detail.clone()))
        .collect();
    let followed = "is followed by other text on its line; the IDE reads a message only when nothing but whitespace follows it";
    let follows =
        "follows other text on its line; IntelliJ before about 2019 reads only a line that is one message";
    assert_eq!(
        found,
        [
            (1, Rule::MidLine, format!("testStarted {followed}")),
            (2, Rule::MidLine, format!("testStdOut {followed}")),
            (2, Rule::MidLine, format!("testFinished {follows}")),
            (3, Rule::MidLine, format!("testCount {followed}")),
            (
                3,
                Rule::Syntax,
                "unterminated message: expected `]`".to_string()
            ),
        ]
    );
    // Still checked as the TeamCity agent reads them.
    assert_eq!(report.tests.passed, 1);
}

#[test]
fn timestamps() {
    assert_clean(
        "
        @testStarted name=a timestamp='2026-11-21T17:40:04.932'
        @testFinished name=a timestamp='2008-09-03T14:02:34.487+0400'
        @progressMessage 'no attributes at all'
        ",
    );
    assert_found(
        "
        @testCount count=1 timestamp='2026-11-21 17:40:04.932'
        @testCount count=1 timestamp='2026-13-21T17:40:04.932'
        @testCount count=1 timestamp='2026-11-21T17:40:04'
        @testCount count=1 timestamp='2026-11-21T17:40:04.932Z'
        ",
        &[
            (1, Rule::Timestamp),
            (2, Rule::Timestamp),
            (3, Rule::Timestamp),
            (4, Rule::Timestamp),
        ],
    );
}

#[test]
fn test_count() {
    assert_clean("@testCount count=15\n@testCount count=0");
    assert_found(
        "
        @testCount count=3.0
        @testCount count=-1
        @testCount count=99999999999
        @testCount
        ",
        &[
            (1, Rule::Count),
            (2, Rule::Count),
            (3, Rule::Count),
            (4, Rule::Count),
        ],
    );
}

#[test]
fn durations() {
    assert_clean(
        "
        @testSuiteStarted name=s
        @testStarted name=a
        @testFinished name=a duration=0
        @testStarted name=b
        @testFinished name=b duration=301
        @testSuiteFinished name=s duration=940
        ",
    );
    let report = assert_found(
        "
        @testStarted name=a
        @testFinished name=a duration=1.5427020000000198
        @testStarted name=b
        @testFinished name=b duration=null
        @testStarted name=c
        @testFinished name=c duration=''
        @testStarted name=d
        @testFinished name=d duration=-1
        ",
        &[
            (2, Rule::Duration),
            (4, Rule::Duration),
            (6, Rule::Duration),
            (8, Rule::Duration),
        ],
    );
    assert_eq!(
        report.violations[0].to_string(),
        "line 2: duration: duration='1.5427020000000198' on testFinished is not a non-negative integer of milliseconds"
    );
}

#[test]
fn comparison_failures_need_both_sides() {
    assert_clean(
        "
        @testStarted name=a
        @testFailed name=a message=m expected=3 actual=2
        @testFinished name=a
        @testStarted name=b
        @testFailed name=b message=m
        @testFinished name=b
        ",
    );
    assert_found(
        "
        @testStarted name=a
        @testFailed name=a message=m expected=3
        @testFinished name=a
        @testStarted name=b
        @testFailed name=b message=m actual=2
        @testFinished name=b
        ",
        &[(2, Rule::Comparison), (5, Rule::Comparison)],
    );
}

#[test]
fn test_failed_needs_a_message() {
    assert_clean("@testStarted name=a\n@testFailed name=a message=''\n@testFinished name=a");
    assert_found(
        "@testStarted name=a\n@testFailed name=a details=trace\n@testFinished name=a",
        &[(2, Rule::MissingMessage)],
    );
}

#[test]
fn a_message_with_text_needs_a_status() {
    assert_clean("@message text=hi status=NORMAL\n@message text=''");
    assert_found("@message text=hi", &[(1, Rule::MissingStatus)]);
}

#[test]
fn nothing_counts_after_testing_finished() {
    assert_clean("@testingStarted\n@testStarted name=a\n@testFinished name=a\n@testingFinished");
    let report = assert_found(
        "
        @testingStarted
        @testingFinished
        @testStarted name=a
        @testFinished name=a
        ",
        &[(3, Rule::AfterFinish), (4, Rule::AfterFinish)],
    );
    assert_eq!(report.tests.total(), 0);
}

#[test]
fn the_first_tree_message_decides_the_mode() {
    let report = assert_clean(
        "@testSuiteStarted name=s nodeId=1 parentNodeId=0\n@testSuiteFinished nodeId=1",
    );
    assert_eq!(report.mode, Some(Mode::Id));
    let report = assert_clean(
        "@testCount count=0 nodeId=1\n@testSuiteStarted name=s\n@testSuiteFinished name=s",
    );
    assert_eq!(report.mode, Some(Mode::Name));
}

#[test]
fn mixing_modes_fires() {
    assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testStarted name=a
        @testSuiteFinished nodeId=1
        ",
        &[(2, Rule::MixedMode)],
    );
    assert_found(
        "
        @testSuiteStarted name=s
        @testStarted name=a nodeId=2 parentNodeId=0
        @testSuiteFinished name=s
        ",
        &[(2, Rule::MixedMode)],
    );
}

#[test]
fn declared_trees_balance() {
    for ids in [false, true] {
        let id = |n: u32, p: u32| {
            if ids {
                format!("nodeId={n} parentNodeId={p}")
            } else {
                String::new()
            }
        };
        let report = assert_clean(&format!(
            "
            @suiteTreeStarted name=file {}
            @suiteTreeStarted name=cls {}
            @suiteTreeNode name=t1 {}
            @suiteTreeEnded name=cls
            @suiteTreeNode name=t2 {}
            @suiteTreeEnded name=file
            @treeEnded
            ",
            id(1, 0),
            id(2, 1),
            id(3, 2),
            id(4, 1)
        ));
        assert_eq!(report.declared_tests, 2);
        assert_eq!(report.tests.total(), 0);
        assert_found(
            &format!(
                "
                @suiteTreeStarted name=file {}
                @suiteTreeStarted name=cls {}
                @suiteTreeEnded name=other
                @treeEnded
                @suiteTreeEnded name=file
                @suiteTreeEnded name=file
                @suiteTreeStarted name=never {}
                ",
                id(1, 0),
                id(2, 1),
                id(3, 0)
            ),
            &[
                (3, Rule::SuiteMismatch),
                (4, Rule::Unbalanced),
                (6, Rule::Unbalanced),
                (7, Rule::LeftOpen),
            ][..]
                .iter()
                .copied()
                // In id mode the last declaration also never reaches the IDE.
                .chain(ids.then_some((7, Rule::LeftOpen)))
                .collect::<Vec<_>>(),
        );
    }
}

#[test]
fn summary_and_report_lines() {
    let report = check(
        "
        @testStarted name=a
        @testFinished name=a duration=x
        @testStarted name=b
        @testFailed name=b message=m
        @testFinished name=b
        @testIgnored name=c
        @testSuiteStarted name=s
        @testSuiteFinished name=s
        ",
    );
    assert_eq!(
        report.summary(),
        "check: 8 messages, 3 tests (1 passed, 1 failed, 1 ignored), 1 suites: 1 violations"
    );
    assert_eq!(
        report.violations[0].to_string(),
        "line 2: duration: duration='x' on testFinished is not a non-negative integer of milliseconds"
    );
}
