//! The service messages that build or address the test tree, by kind: what
//! the checker picks out of a stream and hands to the id-mode tree
//! (`id_tree`) or the name-mode tree (`name_tree`).

/// The messages that build or address the test tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TreeMsg {
    SuiteStarted,
    SuiteFinished,
    TestStarted,
    TestFinished,
    TestFailed,
    TestIgnored,
    StdOut,
    StdErr,
    /// `suiteTreeStarted`: declares a suite of a tree built before running.
    TreeSuiteStarted,
    /// `suiteTreeNode`: declares a test of that tree.
    TreeNode,
    /// `suiteTreeEnded`: closes a declared suite (by name, in every mode).
    TreeSuiteEnded,
}

impl TreeMsg {
    pub(super) fn from_name(name: &str) -> Option<TreeMsg> {
        Some(match name {
            "testSuiteStarted" => TreeMsg::SuiteStarted,
            "testSuiteFinished" => TreeMsg::SuiteFinished,
            "testStarted" => TreeMsg::TestStarted,
            "testFinished" => TreeMsg::TestFinished,
            "testFailed" => TreeMsg::TestFailed,
            "testIgnored" => TreeMsg::TestIgnored,
            "testStdOut" => TreeMsg::StdOut,
            "testStdErr" => TreeMsg::StdErr,
            "suiteTreeStarted" => TreeMsg::TreeSuiteStarted,
            "suiteTreeNode" => TreeMsg::TreeNode,
            "suiteTreeEnded" => TreeMsg::TreeSuiteEnded,
            _ => return None,
        })
    }
}
