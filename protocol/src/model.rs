//! A typed view of the service messages a test run uses.
//!
//! [`ServiceMessage`] names the messages TeamCity and the IntelliJ test runner
//! (`smRunner`) understand for test reporting, with one struct per message
//! shape. Attribute keys are the camelCase TeamCity/IntelliJ names, written in
//! each field's doc. Attributes the model does not name are kept, in order, in
//! each struct's `extra`, so converting a [`Message`] to the model and back
//! loses nothing. Conversions live in `decode.rs` and `encode.rs`.
use crate::Message;

/// Attributes that are kept as they came: `(key, value)` in stream order.
pub type Extra = Vec<(String, String)>;

/// The attributes that place a test or suite in the tree, shared by every
/// test, suite and suite-tree message.
///
/// Written in this order: `name`, `nodeId`, `parentNodeId`, `flowId`,
/// `locationHint`, `metainfo`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestNode {
    /// `name`: the display name (TeamCity matches start and finish by it).
    /// Optional because the IntelliJ JS reporters address nodes by `nodeId` only.
    pub name: Option<String>,
    /// `nodeId`: the IntelliJ tree id (decimal, never `0`).
    pub node_id: Option<String>,
    /// `parentNodeId`: the parent's `nodeId`; `0` is the hidden root.
    pub parent_node_id: Option<String>,
    /// `flowId`: the TeamCity flow the message belongs to.
    pub flow_id: Option<String>,
    /// `locationHint`: an IDE navigation URL such as `python<dir>://a.b.test`.
    pub location_hint: Option<String>,
    /// `metainfo`: opaque data the IDE hands back for a rerun.
    pub metainfo: Option<String>,
}

impl TestNode {
    /// A node with only a `name`.
    pub fn named(name: impl Into<String>) -> Self {
        TestNode {
            name: Some(name.into()),
            ..TestNode::default()
        }
    }
}

/// A message that carries only [`TestNode`] attributes: suite start and
/// finish, and the IntelliJ pre-declared tree (`suiteTree*`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeMessage {
    /// Name, ids, flow and location.
    pub node: TestNode,
    /// Attributes the model does not name (e.g. `running`, `nodeType`).
    pub extra: Extra,
}

/// `testStarted`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestStarted {
    /// Name, ids, flow and location.
    pub node: TestNode,
    /// `captureStandardOutput`: `true` makes TeamCity attach plain stdout to the test.
    pub capture_standard_output: Option<bool>,
    /// Attributes the model does not name (e.g. `path`, `lineno`, `running`).
    pub extra: Extra,
}

/// `testFinished`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestFinished {
    /// Name, ids, flow and location.
    pub node: TestNode,
    /// `duration`: whole milliseconds (the spec allows only an integer).
    pub duration: Option<u64>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `testFailed`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestFailed {
    /// Name, ids, flow and location.
    pub node: TestNode,
    /// `message`: the one-line failure message.
    pub message: Option<String>,
    /// `details`: the full report, usually a stack trace.
    pub details: Option<String>,
    /// `expected`: for a comparison failure (IntelliJ wants both or neither).
    pub expected: Option<String>,
    /// `actual`: for a comparison failure (IntelliJ wants both or neither).
    pub actual: Option<String>,
    /// `expectedFile`: a file holding the expected text.
    pub expected_file: Option<String>,
    /// `actualFile`: a file holding the actual text.
    pub actual_file: Option<String>,
    /// `type`: `comparisonFailure` when `expected`/`actual` are set.
    pub failure_type: Option<String>,
    /// `error`: any value makes IntelliJ show an error rather than a failure.
    pub error: Option<String>,
    /// Attributes the model does not name (e.g. `duration` from JS reporters).
    pub extra: Extra,
}

/// `testIgnored`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestIgnored {
    /// Name, ids, flow and location.
    pub node: TestNode,
    /// `message`: the reason, e.g. `Skipped: why`.
    pub message: Option<String>,
    /// `details`: a stack trace, shown by IntelliJ.
    pub details: Option<String>,
    /// `stopped`: `true` when the run was interrupted (PyCharm's `testStopped`).
    pub stopped: Option<bool>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `testStdOut` and `testStdErr`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestOutput {
    /// Name, ids, flow and location.
    pub node: TestNode,
    /// `out`: the text (required).
    pub out: String,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `testMetadata`.
///
/// Written in this order: `testName`, `name`, `type`, `value`, `flowId`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestMetadata {
    /// `testName`: the test; may be omitted during or right after it.
    pub test_name: Option<String>,
    /// `name`: the metadata label.
    pub name: Option<String>,
    /// `type`: `text` (default), `number`, `ms`, `bytes`, `percent`, `link`,
    /// `artifact`, `image` or `video`.
    pub metadata_type: Option<String>,
    /// `value` (required).
    pub value: String,
    /// `flowId`.
    pub flow_id: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `testCount`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestCount {
    /// `count` (required): the number of tests that will run.
    pub count: u64,
    /// `flowId`.
    pub flow_id: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `enteredTheMatrix`: the IntelliJ test-runner protocol is on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnteredTheMatrix {
    /// `durationStrategy`: PyCharm sends `manual` in parallel mode.
    pub duration_strategy: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// A message with no modelled attributes: `testingStarted`, `testingFinished`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marker {
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `testRetrySupport`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestRetrySupport {
    /// `enabled` (required): a later pass in the same build mutes a failure.
    pub enabled: bool,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `flowStarted`. Written in this order: `flowId`, `parent`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowStarted {
    /// `flowId` (required).
    pub flow_id: String,
    /// `parent`: the enclosing flow.
    pub parent: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `flowFinished`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowFinished {
    /// `flowId` (required).
    pub flow_id: String,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `blockOpened`. Written in this order: `name`, `description`, `flowId`,
/// `subTestResult`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockOpened {
    /// `name` (required).
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// `flowId`.
    pub flow_id: Option<String>,
    /// `subTestResult`: PyCharm's unittest subtest outcome (`Success`,
    /// `Failure`, `Error`, `Skip`); ignored by TeamCity.
    pub sub_test_result: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `blockClosed`. Written in this order: `name`, `flowId`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockClosed {
    /// `name` (required).
    pub name: String,
    /// `flowId`.
    pub flow_id: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `message`: a build-log line. Written in this order: `text`, `status`,
/// `errorDetails`, `flowId`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogMessage {
    /// `text` (required).
    pub text: String,
    /// `status`: `NORMAL`, `WARNING`, `FAILURE` or `ERROR`.
    pub status: Option<String>,
    /// `errorDetails`: shown with `status='ERROR'`.
    pub error_details: Option<String>,
    /// `flowId`.
    pub flow_id: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `buildProblem`. Written in this order: `description`, `identity`, `flowId`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildProblem {
    /// `description` (required).
    pub description: String,
    /// `identity`: a stable id so the problem is tracked across builds.
    pub identity: Option<String>,
    /// `flowId`.
    pub flow_id: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// `buildStatisticValue`. Written in this order: `key`, `value`, `flowId`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildStatisticValue {
    /// `key` (required), e.g. `CodeCoverageAbsLCovered`.
    pub key: String,
    /// `value` (required): a number, kept as written.
    pub value: String,
    /// `flowId`.
    pub flow_id: Option<String>,
    /// Attributes the model does not name.
    pub extra: Extra,
}

/// A service message, typed.
///
/// Build one and write it with [`crate::Writer::message`] through
/// `Message::from(&service_message)`; read one with
/// [`ServiceMessage::from_message`].
///
/// Attributes are written in this fixed order, followed by `extra` in its
/// own order; absent options are not written. *node* stands for the
/// [`TestNode`] attributes `name nodeId parentNodeId flowId locationHint
/// metainfo`.
///
/// | message | attributes |
/// | --- | --- |
/// | `testSuiteStarted` `testSuiteFinished` `suiteTreeStarted` `suiteTreeNode` `suiteTreeEnded` | *node* |
/// | `testStarted` | *node* `captureStandardOutput` |
/// | `testFinished` | *node* `duration` |
/// | `testFailed` | *node* `message details expected actual expectedFile actualFile type error` |
/// | `testIgnored` | *node* `message details stopped` |
/// | `testStdOut` `testStdErr` | *node* `out` |
/// | `testMetadata` | `testName name type value flowId` |
/// | `testCount` | `count flowId` |
/// | `enteredTheMatrix` | `durationStrategy` |
/// | `testingStarted` `testingFinished` | (only `extra`) |
/// | `testRetrySupport` | `enabled` |
/// | `flowStarted` | `flowId parent` |
/// | `flowFinished` | `flowId` |
/// | `blockOpened` | `name description flowId subTestResult` |
/// | `blockClosed` | `name flowId` |
/// | `message` | `text status errorDetails flowId` |
/// | `buildProblem` | `description identity flowId` |
/// | `buildStatisticValue` | `key value flowId` |
/// | `progressMessage` | single value |
/// | other | the [`Message`] as it is |
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceMessage {
    /// `testSuiteStarted`.
    TestSuiteStarted(NodeMessage),
    /// `testSuiteFinished`.
    TestSuiteFinished(NodeMessage),
    /// `testStarted`.
    TestStarted(TestStarted),
    /// `testFinished`.
    TestFinished(TestFinished),
    /// `testFailed`.
    TestFailed(TestFailed),
    /// `testIgnored`.
    TestIgnored(TestIgnored),
    /// `testStdOut`.
    TestStdOut(TestOutput),
    /// `testStdErr`.
    TestStdErr(TestOutput),
    /// `testMetadata`.
    TestMetadata(TestMetadata),
    /// `testCount` (IntelliJ only).
    TestCount(TestCount),
    /// `enteredTheMatrix` (IntelliJ only).
    EnteredTheMatrix(EnteredTheMatrix),
    /// `testingStarted` (IntelliJ only).
    TestingStarted(Marker),
    /// `testingFinished` (IntelliJ only).
    TestingFinished(Marker),
    /// `testRetrySupport`.
    TestRetrySupport(TestRetrySupport),
    /// `flowStarted`.
    FlowStarted(FlowStarted),
    /// `flowFinished`.
    FlowFinished(FlowFinished),
    /// `blockOpened`.
    BlockOpened(BlockOpened),
    /// `blockClosed`.
    BlockClosed(BlockClosed),
    /// `message`.
    Message(LogMessage),
    /// `buildProblem`.
    BuildProblem(BuildProblem),
    /// `buildStatisticValue`.
    BuildStatisticValue(BuildStatisticValue),
    /// `progressMessage`, the single-value form: `##teamcity[progressMessage 'text']`.
    ProgressMessage(String),
    /// `suiteTreeStarted` (IntelliJ pre-declared tree).
    SuiteTreeStarted(NodeMessage),
    /// `suiteTreeNode` (IntelliJ pre-declared tree).
    SuiteTreeNode(NodeMessage),
    /// `suiteTreeEnded` (IntelliJ pre-declared tree).
    SuiteTreeEnded(NodeMessage),
    /// Any message whose name is not one of the above, unchanged. Holding a
    /// known name here is allowed but does not survive a round trip:
    /// [`ServiceMessage::from_message`] would type it.
    Other(Message),
}

impl ServiceMessage {
    /// The message name as written after `##teamcity[`.
    pub fn name(&self) -> &str {
        match self {
            ServiceMessage::TestSuiteStarted(_) => "testSuiteStarted",
            ServiceMessage::TestSuiteFinished(_) => "testSuiteFinished",
            ServiceMessage::TestStarted(_) => "testStarted",
            ServiceMessage::TestFinished(_) => "testFinished",
            ServiceMessage::TestFailed(_) => "testFailed",
            ServiceMessage::TestIgnored(_) => "testIgnored",
            ServiceMessage::TestStdOut(_) => "testStdOut",
            ServiceMessage::TestStdErr(_) => "testStdErr",
            ServiceMessage::TestMetadata(_) => "testMetadata",
            ServiceMessage::TestCount(_) => "testCount",
            ServiceMessage::EnteredTheMatrix(_) => "enteredTheMatrix",
            ServiceMessage::TestingStarted(_) => "testingStarted",
            ServiceMessage::TestingFinished(_) => "testingFinished",
            ServiceMessage::TestRetrySupport(_) => "testRetrySupport",
            ServiceMessage::FlowStarted(_) => "flowStarted",
            ServiceMessage::FlowFinished(_) => "flowFinished",
            ServiceMessage::BlockOpened(_) => "blockOpened",
            ServiceMessage::BlockClosed(_) => "blockClosed",
            ServiceMessage::Message(_) => "message",
            ServiceMessage::BuildProblem(_) => "buildProblem",
            ServiceMessage::BuildStatisticValue(_) => "buildStatisticValue",
            ServiceMessage::ProgressMessage(_) => "progressMessage",
            ServiceMessage::SuiteTreeStarted(_) => "suiteTreeStarted",
            ServiceMessage::SuiteTreeNode(_) => "suiteTreeNode",
            ServiceMessage::SuiteTreeEnded(_) => "suiteTreeEnded",
            ServiceMessage::Other(message) => &message.name,
        }
    }

    /// The tree attributes, for the messages that have them.
    pub fn node(&self) -> Option<&TestNode> {
        match self {
            ServiceMessage::TestSuiteStarted(m)
            | ServiceMessage::TestSuiteFinished(m)
            | ServiceMessage::SuiteTreeStarted(m)
            | ServiceMessage::SuiteTreeNode(m)
            | ServiceMessage::SuiteTreeEnded(m) => Some(&m.node),
            ServiceMessage::TestStarted(m) => Some(&m.node),
            ServiceMessage::TestFinished(m) => Some(&m.node),
            ServiceMessage::TestFailed(m) => Some(&m.node),
            ServiceMessage::TestIgnored(m) => Some(&m.node),
            ServiceMessage::TestStdOut(m) | ServiceMessage::TestStdErr(m) => Some(&m.node),
            ServiceMessage::TestMetadata(_)
            | ServiceMessage::TestCount(_)
            | ServiceMessage::EnteredTheMatrix(_)
            | ServiceMessage::TestingStarted(_)
            | ServiceMessage::TestingFinished(_)
            | ServiceMessage::TestRetrySupport(_)
            | ServiceMessage::FlowStarted(_)
            | ServiceMessage::FlowFinished(_)
            | ServiceMessage::BlockOpened(_)
            | ServiceMessage::BlockClosed(_)
            | ServiceMessage::Message(_)
            | ServiceMessage::BuildProblem(_)
            | ServiceMessage::BuildStatisticValue(_)
            | ServiceMessage::ProgressMessage(_)
            | ServiceMessage::Other(_) => None,
        }
    }
}

/// Why a [`Message`] does not fit the typed model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// A required attribute is absent.
    #[error("`{message}` has no `{attribute}` attribute")]
    Missing {
        /// The message name.
        message: String,
        /// The attribute key.
        attribute: &'static str,
    },
    /// An integer attribute (`duration`, `count`) is not a plain decimal `u64`.
    #[error("attribute `{attribute}` of `{message}` is not an integer: `{value}`")]
    NotAnInteger {
        /// The message name.
        message: String,
        /// The attribute key.
        attribute: &'static str,
        /// The value as written.
        value: String,
    },
    /// A boolean attribute is not exactly `true` or `false`.
    #[error("attribute `{attribute}` of `{message}` is not `true` or `false`: `{value}`")]
    NotABool {
        /// The message name.
        message: String,
        /// The attribute key.
        attribute: &'static str,
        /// The value as written.
        value: String,
    },
    /// A single-value message (`progressMessage`) came with attributes.
    #[error("`{message}` takes a single value, not attributes")]
    ExpectedValue {
        /// The message name.
        message: String,
    },
    /// An attribute message came in the single-value form.
    #[error("`{message}` takes attributes, not a single value")]
    ExpectedAttributes {
        /// The message name.
        message: String,
    },
}
