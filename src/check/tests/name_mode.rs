//! Name mode: the TeamCity rules, per flowId.
use super::support::{assert_clean, assert_found};
use crate::check::{Mode, Rule, TestCounts};

#[test]
fn nested_suites_and_tests_are_clean_and_counted() {
    let report = assert_clean(
        "
        @testSuiteStarted name=file
        @testSuiteStarted name=outer
        @testStarted name=passes
        @testStdOut name=passes out=hello
        @testStdErr name=passes out=oops
        @testFinished name=passes duration=2
        @testStarted name=fails
        @testFailed name=fails message=m
        @testFinished name=fails
        @testStarted name=skipped
        @testIgnored name=skipped message=pending
        @testFinished name=skipped
        @testSuiteFinished name=outer
        @testSuiteFinished name=file
        ",
    );
    assert_eq!(report.mode, Some(Mode::Name));
    assert_eq!(
        report.tests,
        TestCounts {
            passed: 1,
            failed: 1,
            ignored: 1,
            unfinished: 0
        }
    );
    assert_eq!(report.suites, 2);
}

#[test]
fn tree_messages_need_a_name() {
    assert_found(
        "@testStarted flowId=1\n@testSuiteStarted",
        &[(1, Rule::MissingName), (2, Rule::MissingName)],
    );
}

#[test]
fn suite_ends_must_match() {
    // vitest-teamcity-reporter: started by relative name, finished by absolute path.
    let report = assert_found(
        "
        @testSuiteStarted name=math.test.js flowId=/p/math.test.js
        @testSuiteFinished name=/p/math.test.js flowId=/p/math.test.js
        ",
        &[(2, Rule::SuiteMismatch)],
    );
    assert_eq!(
        report.violations[0].detail,
        "testSuiteFinished '/p/math.test.js' does not match the open suite 'math.test.js' (line 1) in flow '/p/math.test.js'"
    );
    // Ending the outer suite while the inner one is open closes both.
    assert_found(
        "
        @testSuiteStarted name=outer
        @testSuiteStarted name=inner
        @testSuiteFinished name=outer
        ",
        &[(3, Rule::SuiteMismatch)],
    );
}

#[test]
fn ends_without_starts_are_unbalanced() {
    assert_found(
        "
        @testSuiteFinished name=s
        @testFinished name=a
        ",
        &[(1, Rule::Unbalanced), (2, Rule::Unbalanced)],
    );
}

#[test]
fn suites_and_tests_do_not_interleave() {
    assert_found(
        "
        @testStarted name=a
        @testSuiteStarted name=s
        @testSuiteFinished name=s
        @testFinished name=a
        ",
        &[
            (2, Rule::Unbalanced),
            (3, Rule::Unbalanced),
            (4, Rule::Unbalanced),
        ],
    );
}

#[test]
fn one_test_at_a_time_per_flow() {
    let report = assert_found(
        "
        @testStarted name=a
        @testStarted name=b
        @testFinished name=b
        ",
        &[(2, Rule::TestOverlap)],
    );
    // TeamCity finished 'a' when 'b' started.
    assert_eq!(report.tests.passed, 2);
    // Different flows may overlap.
    assert_clean(
        "
        @testStarted name=a flowId=1
        @testStarted name=b flowId=2
        @testStdOut name=a flowId=1 out=x
        @testFinished name=a flowId=1
        @testFinished name=b flowId=2
        ",
    );
}

#[test]
fn test_messages_name_the_running_test() {
    assert_found(
        "
        @testStarted name=a
        @testFailed name=b message=m
        @testIgnored name=b
        @testFinished name=b
        @testFailed name=a message=m
        ",
        &[
            (2, Rule::WrongTest),
            (3, Rule::WrongTest),
            (4, Rule::WrongTest),
            (5, Rule::WrongTest),
        ],
    );
    // A test in another flow is not running in this one.
    assert_found(
        "
        @testStarted name=a flowId=1
        @testFinished name=a flowId=2
        @testFinished name=a flowId=1
        ",
        &[(2, Rule::Unbalanced)],
    );
}

#[test]
fn test_ignored_may_stand_alone() {
    let report =
        assert_clean("@testIgnored name=skipped message=todo\n@testIgnored name=other flowId=f");
    assert_eq!(
        report.tests,
        TestCounts {
            passed: 0,
            failed: 0,
            ignored: 2,
            unfinished: 0
        }
    );
}

#[test]
fn one_test_failed_per_test() {
    let report = assert_found(
        "
        @testStarted name=a
        @testFailed name=a message=first
        @testFailed name=a message=second
        @testFinished name=a
        ",
        &[(3, Rule::DuplicateFailure)],
    );
    assert_eq!(report.tests.failed, 1);
}

#[test]
fn failed_and_ignored_do_not_mix() {
    assert_found(
        "
        @testStarted name=a
        @testIgnored name=a
        @testFailed name=a message=m
        @testFinished name=a
        @testStarted name=b
        @testFailed name=b message=m
        @testIgnored name=b
        @testIgnored name=b
        @testFinished name=b
        ",
        &[
            (3, Rule::StateChange),
            (7, Rule::StateChange),
            (8, Rule::StateChange),
        ],
    );
}

#[test]
fn output_names_the_running_test() {
    assert_found(
        "
        @testStdOut name=a out=x
        @testStarted name=a
        @testStdErr name=b out=y
        @testFinished name=a
        ",
        &[(1, Rule::OutputTarget), (3, Rule::OutputTarget)],
    );
}

#[test]
fn open_tests_suites_and_flows_at_the_end_fire() {
    let report = assert_found(
        "
        @flowStarted flowId=sub parent=main
        @testSuiteStarted name=s
        @testStarted name=a flowId=x
        ",
        &[
            (1, Rule::LeftOpen),
            (2, Rule::LeftOpen),
            (3, Rule::LeftOpen),
        ],
    );
    assert_eq!(report.tests.unfinished, 1);
    assert_eq!(
        report.violations[2].to_string(),
        "line 3: left open: test 'a' in flow 'x' never finished"
    );
}

#[test]
fn flows_balance() {
    assert_clean(
        "
        @testStarted name=a flowId=main
        @flowStarted flowId=sub parent=main
        @testStdOut name=a flowId=main out=x
        @flowFinished flowId=sub
        @testFinished name=a flowId=main
        ",
    );
    assert_found(
        "
        @flowStarted flowId=sub
        @flowStarted flowId=sub
        @flowFinished flowId=sub
        @flowFinished flowId=sub
        @flowFinished flowId=never
        @flowStarted
        @flowFinished
        ",
        &[
            (2, Rule::Flow),
            (4, Rule::Flow),
            (5, Rule::Flow),
            (6, Rule::Flow),
            (7, Rule::Flow),
        ],
    );
}

#[test]
fn a_flow_finishing_with_open_work_fires() {
    assert_found(
        "
        @flowStarted flowId=sub
        @testSuiteStarted name=s flowId=sub
        @testStarted name=a flowId=sub
        @flowFinished flowId=sub
        ",
        &[(3, Rule::LeftOpen), (2, Rule::LeftOpen)],
    );
}

/// teamcity-messages gives every test its own flowId: each flow empties
/// right away and nothing is left behind.
#[test]
fn a_flow_per_test_is_clean() {
    let mut script = String::new();
    for i in 0..1000 {
        script.push_str(&format!(
            "@testStarted name=t{i} flowId=t{i}\n@testFinished name=t{i} flowId=t{i}\n"
        ));
    }
    let report = assert_clean(&script);
    assert_eq!(report.tests.passed, 1000);
}
