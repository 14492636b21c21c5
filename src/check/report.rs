//! What `check` found: violations by rule, test counts, and the summary line.
use std::fmt;

/// The rules a stream can break. The `Display` form is the `<rule>` part of a
/// `line N: <rule>: <detail>` report line, so it is part of the output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Rule {
    /// Something starts like a message but does not parse.
    Syntax,
    /// A message glued after other text on its line. IntelliJ before about
    /// 2019 parsed only a line that *is* a message after `trim()`
    /// (teamcity-messages #119, #131); current versions split at every marker.
    MidLine,
    /// A tree message in the other addressing mode (nodeId vs name).
    MixedMode,
    /// `nodeId` empty or `0` (the root id): "Illegal nodeId" in IntelliJ.
    NodeId,
    /// A start or declaration for a node id that is already in use.
    DuplicateNode,
    /// `parentNodeId` missing on a start or declaration, or changed on a restart.
    ParentId,
    /// `parentNodeId` names no registered node: "Parent node is undefined".
    UnknownParent,
    /// The parent already ended: "Parent node should be registered or running".
    ParentFinished,
    /// A message addresses a node id that was never registered.
    UnknownNode,
    /// A move the IntelliJ node state machine rejects ("Illegal state change").
    StateChange,
    /// A suite message for a test node or a test message for a suite node.
    NodeKind,
    /// A node ends while some of its children are still running.
    ChildrenRunning,
    /// testStdOut/testStdErr for a node or test that is not running.
    OutputTarget,
    /// Something still open when the stream (or its flow) ends.
    LeftOpen,
    /// testFailed with only one of `expected`/`actual`.
    Comparison,
    /// testFailed without a `message` attribute (the IDE asserts one).
    MissingMessage,
    /// A `message` with text but no `status` (IntelliJ's handler reads it
    /// without a null check).
    MissingStatus,
    /// `duration` is not a non-negative integer (IntelliJ uses `Long.parseLong`).
    Duration,
    /// `count` is not a non-negative integer (IntelliJ uses `Integer.parseInt`).
    Count,
    /// `timestamp` is not `yyyy-MM-dd'T'HH:mm:ss.SSS[Z]`.
    Timestamp,
    /// A tree message without its `name` attribute.
    MissingName,
    /// A suite end whose name does not match the innermost open suite.
    SuiteMismatch,
    /// An end with nothing open to end.
    Unbalanced,
    /// testStarted while another test runs in the same flow (TeamCity ends the first).
    TestOverlap,
    /// A test message naming a test other than the one running in its flow.
    WrongTest,
    /// A second testFailed for one test; TeamCity keeps only the first.
    DuplicateFailure,
    /// flowStarted/flowFinished out of order or without a flowId.
    Flow,
    /// A tree message after testingFinished, which the IDE no longer reads
    /// (`OutputToGeneralTestEventsConverter.finishTesting` disposes its
    /// processor and drops every later event).
    AfterFinish,
}

impl Rule {
    /// The rule's name as printed.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Rule::Syntax => "syntax",
            Rule::MidLine => "mid-line message",
            Rule::MixedMode => "mixed mode",
            Rule::NodeId => "node id",
            Rule::DuplicateNode => "duplicate node",
            Rule::ParentId => "parent node id",
            Rule::UnknownParent => "unknown parent",
            Rule::ParentFinished => "parent node is finished",
            Rule::UnknownNode => "unknown node",
            Rule::StateChange => "illegal state change",
            Rule::NodeKind => "node kind",
            Rule::ChildrenRunning => "children running",
            Rule::OutputTarget => "output target",
            Rule::LeftOpen => "left open",
            Rule::Comparison => "comparison failure",
            Rule::MissingMessage => "missing message",
            Rule::MissingStatus => "missing status",
            Rule::Duration => "duration",
            Rule::Count => "count",
            Rule::Timestamp => "timestamp",
            Rule::MissingName => "missing name",
            Rule::SuiteMismatch => "suite mismatch",
            Rule::Unbalanced => "unbalanced",
            Rule::TestOverlap => "test already running",
            Rule::WrongTest => "wrong test",
            Rule::DuplicateFailure => "duplicate testFailed",
            Rule::Flow => "flow",
            Rule::AfterFinish => "after testingFinished",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule, at the line where it shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Violation {
    /// 1-based line (for things left open: the line that opened them).
    pub line: u64,
    pub rule: Rule,
    pub detail: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.rule, self.detail)
    }
}

/// Tests by final verdict, as the consumer would show them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    /// Started but never ended (each is also a `left open` violation).
    pub unfinished: u64,
}

impl TestCounts {
    /// Every test that ran or was ignored, whatever became of it.
    pub(crate) fn total(&self) -> u64 {
        self.passed + self.failed + self.ignored + self.unfinished
    }
}

/// How the stream addresses its tree nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// `nodeId`/`parentNodeId` (IntelliJ's id-based converter).
    Id,
    /// Names, per `flowId` (TeamCity).
    Name,
}

/// Everything `check` learned about a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    /// In the order found; things left open come last.
    pub violations: Vec<Violation>,
    /// Well-formed service messages, mid-line ones included.
    pub messages: u64,
    pub tests: TestCounts,
    /// Suites that started running.
    pub suites: u64,
    /// Tests declared by suiteTreeNode (collect-only trees), run or not.
    pub declared_tests: u64,
    /// `None` when the stream has no tree messages at all.
    pub mode: Option<Mode>,
}

impl Report {
    pub(crate) fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// How many violations of `rule` were found.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn count(&self, rule: Rule) -> usize {
        self.violations.iter().filter(|v| v.rule == rule).count()
    }

    /// `check: N messages, T tests (P passed, F failed, I ignored), K suites: clean`.
    pub(crate) fn summary(&self) -> String {
        let t = &self.tests;
        let verdict = if self.is_clean() {
            "clean".to_string()
        } else {
            format!("{} violations", self.violations.len())
        };
        format!(
            "check: {} messages, {} tests ({} passed, {} failed, {} ignored), {} suites: {verdict}",
            self.messages,
            t.total(),
            t.passed,
            t.failed,
            t.ignored,
            self.suites
        )
    }
}

/// Where the checkers put what they find.
#[derive(Debug, Default)]
pub(crate) struct Violations(pub Vec<Violation>);

impl Violations {
    pub(crate) fn push(&mut self, line: u64, rule: Rule, detail: impl Into<String>) {
        self.0.push(Violation {
            line,
            rule,
            detail: detail.into(),
        });
    }
}
