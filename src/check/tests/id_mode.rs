//! Id mode: IntelliJ's nodeId/parentNodeId rules.
use super::support::{assert_clean, assert_found};
use crate::check::{Mode, Rule, TestCounts};

/// The PyCharm serial-tree shape: suites open, tests start and finish, a
/// failure and an ignore are each followed by testFinished.
#[test]
fn pycharm_shape_is_clean_and_counted() {
    let report = assert_clean(
        "
        @enteredTheMatrix
        @testCount count=3
        @testSuiteStarted name=tests nodeId=1 parentNodeId=0
        @testSuiteStarted name=TestX nodeId=2 parentNodeId=1
        @testStarted name=test_one nodeId=3 parentNodeId=2
        @testFinished name=test_one nodeId=3 parentNodeId=2 duration=0
        @testSuiteFinished name=TestX nodeId=2 parentNodeId=1
        @testStarted name=test_two nodeId=4 parentNodeId=1
        @testFailed name=test_two nodeId=4 parentNodeId=1 message=m expected=42 actual=54
        @testFinished name=test_two nodeId=4 parentNodeId=1 duration=1
        @testStarted name=test_three nodeId=5 parentNodeId=1
        @testIgnored name=test_three nodeId=5 parentNodeId=1 message=skipped
        @testFinished name=test_three nodeId=5 parentNodeId=1
        @testSuiteFinished name=tests nodeId=1 parentNodeId=0
        ",
    );
    assert_eq!(report.mode, Some(Mode::Id));
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

/// The JetBrains JS reporters' shape: nodes registered with running='false',
/// started later; testFailed and testIgnored end a node without testFinished;
/// an ignored test need not start.
#[test]
fn js_tree_shape_is_clean() {
    let report = assert_clean(
        "
        @testingStarted
        @testSuiteStarted nodeId=1 parentNodeId=0 name=file running=false
        @testStarted nodeId=2 parentNodeId=1 name=a running=false
        @testStarted nodeId=3 parentNodeId=1 name=b running=false
        @testStarted nodeId=4 parentNodeId=1 name=c running=false
        @testStarted nodeId=2 running=true
        @testFinished nodeId=2 duration=3
        @testStarted nodeId=3
        @testFailed nodeId=3 message=boom duration=1
        @testIgnored nodeId=4 message='Pending test'
        @testSuiteFinished nodeId=1
        @testingFinished
        ",
    );
    assert_eq!(
        report.tests,
        TestCounts {
            passed: 1,
            failed: 1,
            ignored: 1,
            unfinished: 0
        }
    );
    assert_eq!(report.suites, 1);
}

#[test]
fn node_id_must_be_set_and_not_root() {
    assert_found(
        "
        @testStarted name=a nodeId='' parentNodeId=0
        @testStarted name=b nodeId=0 parentNodeId=0
        @testFinished nodeId=0
        ",
        &[(1, Rule::NodeId), (2, Rule::NodeId), (3, Rule::NodeId)],
    );
}

#[test]
fn declared_nodes_exist_only_after_tree_ended() {
    // Started after treeEnded: fine.
    assert_clean(
        "
        @suiteTreeStarted name=f nodeId=1 parentNodeId=0
        @suiteTreeNode name=a nodeId=2 parentNodeId=1
        @suiteTreeEnded name=f
        @treeEnded
        @testStarted name=a nodeId=2 parentNodeId=1
        @testFinished nodeId=2
        @testSuiteFinished nodeId=1
        ",
    );
    // Named before treeEnded, as a node and as a parent; and never ended.
    assert_found(
        "
        @suiteTreeStarted name=f nodeId=1 parentNodeId=0
        @suiteTreeNode name=a nodeId=2 parentNodeId=1
        @suiteTreeEnded name=f
        @testStarted name=a nodeId=2 parentNodeId=1
        @testStarted name=b nodeId=3 parentNodeId=1
        @testFinished nodeId=3
        @testFinished nodeId=2
        ",
        &[
            (4, Rule::UnknownNode),
            (5, Rule::UnknownNode),
            (7, Rule::UnknownNode),
            (1, Rule::LeftOpen),
            // Starting a test starts its suite.
            (4, Rule::LeftOpen),
        ],
    );
}

#[test]
fn node_ids_are_never_reused() {
    assert_found(
        "
        @testStarted name=a nodeId=1 parentNodeId=0
        @testFinished nodeId=1
        @testStarted name=a nodeId=1 parentNodeId=0
        ",
        &[(3, Rule::DuplicateNode)],
    );
    // Registered twice without starting.
    assert_found(
        "
        @testStarted name=a nodeId=1 parentNodeId=0 running=false
        @testStarted name=a nodeId=1 parentNodeId=0 running=false
        ",
        &[(2, Rule::DuplicateNode)],
    );
    // A declared node cannot be declared again.
    assert_found(
        "
        @suiteTreeNode name=a nodeId=1 parentNodeId=0
        @suiteTreeNode name=a nodeId=1 parentNodeId=0
        @treeEnded
        ",
        &[(2, Rule::DuplicateNode)],
    );
}

#[test]
fn a_registered_or_declared_node_may_start_once() {
    let report = assert_clean(
        "
        @suiteTreeStarted name=file nodeId=1 parentNodeId=0
        @suiteTreeNode name=a nodeId=2 parentNodeId=1
        @suiteTreeEnded name=file
        @treeEnded
        @testSuiteStarted name=file nodeId=1 parentNodeId=0
        @testStarted name=a nodeId=2 parentNodeId=1
        @testFinished nodeId=2
        @testSuiteFinished nodeId=1
        ",
    );
    assert_eq!(report.tests.passed, 1);
    assert_eq!(report.declared_tests, 1);
}

#[test]
fn starting_a_child_starts_its_registered_ancestors() {
    let report = assert_clean(
        "
        @testSuiteStarted name=outer nodeId=1 parentNodeId=0 running=false
        @testSuiteStarted name=inner nodeId=2 parentNodeId=1 running=false
        @testStarted name=a nodeId=3 parentNodeId=2
        @testFinished nodeId=3
        @testSuiteFinished nodeId=2
        @testSuiteFinished nodeId=1
        ",
    );
    assert_eq!(report.suites, 2);
}

#[test]
fn parent_node_id_is_required() {
    assert_found(
        "
        @testStarted name=a nodeId=1
        @testFinished nodeId=1
        ",
        &[(1, Rule::ParentId)],
    );
    // A restart may repeat the parent, but not change it.
    assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testStarted name=a nodeId=2 parentNodeId=1 running=false
        @testStarted name=a nodeId=2 parentNodeId=0
        @testFinished nodeId=2
        @testSuiteFinished nodeId=1
        ",
        &[(3, Rule::ParentId)],
    );
}

#[test]
fn parent_must_be_registered() {
    assert_found(
        "
        @testStarted name=a nodeId=2 parentNodeId=9
        @testFinished nodeId=2
        ",
        &[(1, Rule::UnknownParent)],
    );
}

#[test]
fn parent_must_not_have_ended() {
    assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testSuiteFinished nodeId=1
        @testStarted name=a nodeId=2 parentNodeId=1
        @testFinished nodeId=2
        ",
        &[(3, Rule::ParentFinished)],
    );
    // Through a registered-only suite to the ended one above it.
    assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testSuiteStarted name=t nodeId=2 parentNodeId=1 running=false
        @testSuiteFinished nodeId=1
        @testStarted name=a nodeId=3 parentNodeId=2
        @testFinished nodeId=3
        @testSuiteFinished nodeId=2
        ",
        &[(4, Rule::ParentFinished)],
    );
    // Starting a registered node whose parent has since ended.
    assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testStarted name=a nodeId=2 parentNodeId=1 running=false
        @testSuiteFinished nodeId=1
        @testStarted nodeId=2
        @testFinished nodeId=2
        ",
        &[(4, Rule::ParentFinished)],
    );
}

#[test]
fn messages_to_unknown_nodes_fire() {
    assert_found(
        "
        @testFinished nodeId=7
        @testFailed nodeId=8 message=m
        @testIgnored nodeId=9
        @testStdOut nodeId=10 out=x
        @testSuiteFinished nodeId=11
        ",
        &[
            (1, Rule::UnknownNode),
            (2, Rule::UnknownNode),
            (3, Rule::UnknownNode),
            (4, Rule::UnknownNode),
            (5, Rule::UnknownNode),
        ],
    );
}

#[test]
fn legal_state_moves() {
    let report = assert_clean(
        "
        @testStarted name=a nodeId=1 parentNodeId=0
        @testFinished nodeId=1
        @testFailed nodeId=1 message='teardown failed'
        @testStarted name=b nodeId=2 parentNodeId=0 running=false
        @testIgnored nodeId=2
        @testFinished nodeId=2
        ",
    );
    // FINISHED -> FAILED moves forward; NOT_RUNNING -> IGNORED counts as ignored.
    assert_eq!(
        report.tests,
        TestCounts {
            passed: 0,
            failed: 1,
            ignored: 1,
            unfinished: 0
        }
    );
}

#[test]
fn illegal_state_moves() {
    let report = assert_found(
        "
        @testStarted name=a nodeId=1 parentNodeId=0 running=false
        @testFinished nodeId=1
        @testStarted name=b nodeId=2 parentNodeId=0
        @testIgnored nodeId=2
        @testFailed nodeId=2 message=m
        @testStarted name=c nodeId=3 parentNodeId=0
        @testFailed nodeId=3 message=m
        @testFailed nodeId=3 message=m
        @testStarted name=d nodeId=4 parentNodeId=0
        @testFinished nodeId=4
        @testFinished nodeId=4
        @testStarted name=e nodeId=5 parentNodeId=0
        @testFailed nodeId=5 message=m
        @testFinished nodeId=5
        @testFinished nodeId=5
        ",
        &[
            (2, Rule::StateChange),
            (5, Rule::StateChange),
            (8, Rule::StateChange),
            (11, Rule::StateChange),
            (15, Rule::StateChange),
        ],
    );
    assert_eq!(
        report.violations[0].detail,
        "testFinished: [NOT_RUNNING -> FINISHED] for test 'a' (nodeId 1)"
    );
    assert_eq!(
        report.violations[1].detail,
        "testFailed: [IGNORED -> FAILED] for test 'b' (nodeId 2)"
    );
}

#[test]
fn finish_messages_match_the_node_kind() {
    assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testStarted name=a nodeId=2 parentNodeId=1
        @testSuiteFinished nodeId=2
        @testFinished nodeId=1
        ",
        &[(3, Rule::NodeKind), (4, Rule::NodeKind)],
    );
}

#[test]
fn suites_end_after_their_children() {
    assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testStarted name=a nodeId=2 parentNodeId=1
        @testSuiteFinished nodeId=1
        @testFinished nodeId=2
        ",
        &[(3, Rule::ChildrenRunning)],
    );
}

#[test]
fn output_goes_to_a_running_node() {
    assert_clean(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testStdOut nodeId=1 out=suite-level
        @testStarted name=a nodeId=2 parentNodeId=1
        @testStdOut nodeId=2 out=x
        @testStdErr nodeId=2 out=y
        @testFinished nodeId=2
        @testSuiteFinished nodeId=1
        ",
    );
    assert_found(
        "
        @testStarted name=a nodeId=1 parentNodeId=0
        @testFinished nodeId=1
        @testStdOut nodeId=1 out=late
        @testStarted name=b nodeId=2 parentNodeId=0 running=false
        @testStdErr nodeId=2 out=early
        @testIgnored nodeId=2
        ",
        &[(3, Rule::OutputTarget), (5, Rule::OutputTarget)],
    );
}

#[test]
fn running_nodes_left_open_fire() {
    let report = assert_found(
        "
        @testSuiteStarted name=s nodeId=1 parentNodeId=0
        @testStarted name=a nodeId=2 parentNodeId=1
        @testStarted name=b nodeId=3 parentNodeId=1
        @testFinished nodeId=3
        ",
        &[(1, Rule::LeftOpen), (2, Rule::LeftOpen)],
    );
    assert_eq!(
        report.violations[1].to_string(),
        "line 2: left open: test 'a' (nodeId 2) started on line 2 never ended"
    );
    assert_eq!(
        report.tests,
        TestCounts {
            passed: 1,
            failed: 0,
            ignored: 0,
            unfinished: 1
        }
    );
    assert_eq!(
        report.summary(),
        "check: 4 messages, 2 tests (1 passed, 0 failed, 0 ignored), 1 suites: 2 violations"
    );
}

#[test]
fn registered_nodes_never_started_are_not_open() {
    assert_clean("@testStarted name=a nodeId=1 parentNodeId=0 running=false");
}

#[test]
fn starts_need_a_name() {
    assert_found(
        "@testStarted nodeId=1 parentNodeId=0\n@testFinished nodeId=1",
        &[(1, Rule::MissingName)],
    );
}

/// Subtests: PyCharm hangs `(i=0)` test nodes under the test node.
#[test]
fn tests_may_have_child_tests() {
    assert_clean(
        "
        @testStarted name=test_x nodeId=1 parentNodeId=0
        @testStarted name=(i=0) nodeId=2 parentNodeId=1
        @testFailed nodeId=2 message=m
        @testFinished nodeId=2
        @testFailed nodeId=1 message='One or more subtests failed'
        @testFinished nodeId=1
        ",
    );
}
