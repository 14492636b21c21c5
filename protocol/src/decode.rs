//! Reading a [`Message`] into the typed [`ServiceMessage`].
//!
//! Each modelled key is read from its first occurrence; every other
//! attribute, including a repeated modelled key, goes to `extra` in stream
//! order, so nothing is dropped.
use crate::model::{
    BlockClosed, BlockOpened, BuildProblem, BuildStatisticValue, EnteredTheMatrix, Extra,
    FlowFinished, FlowStarted, LogMessage, Marker, ModelError, NodeMessage, ServiceMessage,
    TestCount, TestFailed, TestFinished, TestIgnored, TestMetadata, TestNode, TestOutput,
    TestRetrySupport, TestStarted,
};
use crate::{Body, Message};

impl ServiceMessage {
    /// Types a parsed message. Unknown names become [`ServiceMessage::Other`].
    ///
    /// ```
    /// use tcrunner_protocol::{Message, ServiceMessage};
    ///
    /// let raw = Message::new("testFinished").with("name", "t").with("duration", "12");
    /// let ServiceMessage::TestFinished(finished) = ServiceMessage::from_message(&raw)? else {
    ///     unreachable!()
    /// };
    /// assert_eq!(finished.duration, Some(12));
    /// # Ok::<(), tcrunner_protocol::ModelError>(())
    /// ```
    pub fn from_message(message: &Message) -> Result<ServiceMessage, ModelError> {
        let typed = match message.name.as_str() {
            "testSuiteStarted" => ServiceMessage::TestSuiteStarted(node_message(message)?),
            "testSuiteFinished" => ServiceMessage::TestSuiteFinished(node_message(message)?),
            "suiteTreeStarted" => ServiceMessage::SuiteTreeStarted(node_message(message)?),
            "suiteTreeNode" => ServiceMessage::SuiteTreeNode(node_message(message)?),
            "suiteTreeEnded" => ServiceMessage::SuiteTreeEnded(node_message(message)?),
            "testStarted" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::TestStarted(TestStarted {
                    node: f.node(),
                    capture_standard_output: f.bool("captureStandardOutput")?,
                    extra: f.extra(),
                })
            }
            "testFinished" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::TestFinished(TestFinished {
                    node: f.node(),
                    duration: f.integer("duration")?,
                    extra: f.extra(),
                })
            }
            "testFailed" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::TestFailed(TestFailed {
                    node: f.node(),
                    message: f.take("message"),
                    details: f.take("details"),
                    expected: f.take("expected"),
                    actual: f.take("actual"),
                    expected_file: f.take("expectedFile"),
                    actual_file: f.take("actualFile"),
                    failure_type: f.take("type"),
                    error: f.take("error"),
                    extra: f.extra(),
                })
            }
            "testIgnored" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::TestIgnored(TestIgnored {
                    node: f.node(),
                    message: f.take("message"),
                    details: f.take("details"),
                    stopped: f.bool("stopped")?,
                    extra: f.extra(),
                })
            }
            "testStdOut" => ServiceMessage::TestStdOut(test_output(message)?),
            "testStdErr" => ServiceMessage::TestStdErr(test_output(message)?),
            "testMetadata" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::TestMetadata(TestMetadata {
                    test_name: f.take("testName"),
                    name: f.take("name"),
                    metadata_type: f.take("type"),
                    value: f.require("value")?,
                    flow_id: f.take("flowId"),
                    extra: f.extra(),
                })
            }
            "testCount" => {
                let mut f = Fields::new(message)?;
                let count = f.integer("count")?.ok_or_else(|| f.missing("count"))?;
                ServiceMessage::TestCount(TestCount {
                    count,
                    flow_id: f.take("flowId"),
                    extra: f.extra(),
                })
            }
            "enteredTheMatrix" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::EnteredTheMatrix(EnteredTheMatrix {
                    duration_strategy: f.take("durationStrategy"),
                    extra: f.extra(),
                })
            }
            "testingStarted" => ServiceMessage::TestingStarted(Marker {
                extra: Fields::new(message)?.extra(),
            }),
            "testingFinished" => ServiceMessage::TestingFinished(Marker {
                extra: Fields::new(message)?.extra(),
            }),
            "testRetrySupport" => {
                let mut f = Fields::new(message)?;
                let enabled = f.bool("enabled")?.ok_or_else(|| f.missing("enabled"))?;
                ServiceMessage::TestRetrySupport(TestRetrySupport {
                    enabled,
                    extra: f.extra(),
                })
            }
            "flowStarted" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::FlowStarted(FlowStarted {
                    flow_id: f.require("flowId")?,
                    parent: f.take("parent"),
                    extra: f.extra(),
                })
            }
            "flowFinished" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::FlowFinished(FlowFinished {
                    flow_id: f.require("flowId")?,
                    extra: f.extra(),
                })
            }
            "blockOpened" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::BlockOpened(BlockOpened {
                    name: f.require("name")?,
                    description: f.take("description"),
                    flow_id: f.take("flowId"),
                    sub_test_result: f.take("subTestResult"),
                    extra: f.extra(),
                })
            }
            "blockClosed" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::BlockClosed(BlockClosed {
                    name: f.require("name")?,
                    flow_id: f.take("flowId"),
                    extra: f.extra(),
                })
            }
            "message" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::Message(LogMessage {
                    text: f.require("text")?,
                    status: f.take("status"),
                    error_details: f.take("errorDetails"),
                    flow_id: f.take("flowId"),
                    extra: f.extra(),
                })
            }
            "buildProblem" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::BuildProblem(BuildProblem {
                    description: f.require("description")?,
                    identity: f.take("identity"),
                    flow_id: f.take("flowId"),
                    extra: f.extra(),
                })
            }
            "buildStatisticValue" => {
                let mut f = Fields::new(message)?;
                ServiceMessage::BuildStatisticValue(BuildStatisticValue {
                    key: f.require("key")?,
                    value: f.require("value")?,
                    flow_id: f.take("flowId"),
                    extra: f.extra(),
                })
            }
            "progressMessage" => match &message.body {
                Body::Value(text) => ServiceMessage::ProgressMessage(text.clone()),
                Body::Attrs(_) => {
                    return Err(ModelError::ExpectedValue {
                        message: message.name.clone(),
                    })
                }
            },
            _ => ServiceMessage::Other(message.clone()),
        };
        Ok(typed)
    }
}

impl TryFrom<&Message> for ServiceMessage {
    type Error = ModelError;

    fn try_from(message: &Message) -> Result<Self, ModelError> {
        ServiceMessage::from_message(message)
    }
}

fn node_message(message: &Message) -> Result<NodeMessage, ModelError> {
    let mut f = Fields::new(message)?;
    Ok(NodeMessage {
        node: f.node(),
        extra: f.extra(),
    })
}

fn test_output(message: &Message) -> Result<TestOutput, ModelError> {
    let mut f = Fields::new(message)?;
    Ok(TestOutput {
        node: f.node(),
        out: f.require("out")?,
        extra: f.extra(),
    })
}

/// The attributes of one message, handed out once each.
struct Fields<'a> {
    message: &'a str,
    attrs: &'a [(String, String)],
    taken: Vec<bool>,
}

impl<'a> Fields<'a> {
    fn new(message: &'a Message) -> Result<Self, ModelError> {
        match &message.body {
            Body::Attrs(attrs) => Ok(Fields {
                message: &message.name,
                attrs,
                taken: vec![false; attrs.len()],
            }),
            Body::Value(_) => Err(ModelError::ExpectedAttributes {
                message: message.name.clone(),
            }),
        }
    }

    /// The first value of `key`; later ones stay for [`Fields::extra`].
    fn take(&mut self, key: &str) -> Option<String> {
        let index = self.attrs.iter().position(|(k, _)| k == key)?;
        self.taken[index] = true;
        Some(self.attrs[index].1.clone())
    }

    fn require(&mut self, key: &'static str) -> Result<String, ModelError> {
        self.take(key).ok_or_else(|| self.missing(key))
    }

    fn missing(&self, attribute: &'static str) -> ModelError {
        ModelError::Missing {
            message: self.message.to_owned(),
            attribute,
        }
    }

    /// A plain decimal integer: ASCII digits only (no sign, no fraction).
    fn integer(&mut self, key: &'static str) -> Result<Option<u64>, ModelError> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        let digits = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
        match value.parse() {
            Ok(n) if digits => Ok(Some(n)),
            _ => Err(ModelError::NotAnInteger {
                message: self.message.to_owned(),
                attribute: key,
                value,
            }),
        }
    }

    /// Exactly `true` or `false`, as TeamCity and the JetBrains reporters write them.
    fn bool(&mut self, key: &'static str) -> Result<Option<bool>, ModelError> {
        match self.take(key).as_deref() {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(value) => Err(ModelError::NotABool {
                message: self.message.to_owned(),
                attribute: key,
                value: value.to_owned(),
            }),
        }
    }

    fn node(&mut self) -> TestNode {
        TestNode {
            name: self.take("name"),
            node_id: self.take("nodeId"),
            parent_node_id: self.take("parentNodeId"),
            flow_id: self.take("flowId"),
            location_hint: self.take("locationHint"),
            metainfo: self.take("metainfo"),
        }
    }

    /// Everything not taken, in stream order.
    fn extra(self) -> Extra {
        self.attrs
            .iter()
            .zip(self.taken)
            .filter(|(_, taken)| !taken)
            .map(|(attr, _)| attr.clone())
            .collect()
    }
}
