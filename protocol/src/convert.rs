//! Conversions between the untyped [`Message`] and the typed [`ServiceMessage`].
//!
//! Writing destructures every struct, so adding a field to the model fails to
//! compile here until it is written (the habit of quick-junit's serializer).
//! Reading takes each modelled key's first occurrence; every other attribute,
//! including a repeated modelled key, goes to `extra` in stream order.
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

impl From<&ServiceMessage> for Message {
    fn from(typed: &ServiceMessage) -> Message {
        let mut a = Attrs(Vec::new());
        match typed {
            ServiceMessage::TestSuiteStarted(m)
            | ServiceMessage::TestSuiteFinished(m)
            | ServiceMessage::SuiteTreeStarted(m)
            | ServiceMessage::SuiteTreeNode(m)
            | ServiceMessage::SuiteTreeEnded(m) => {
                let NodeMessage { node, extra } = m;
                a.node(node);
                a.extra(extra);
            }
            ServiceMessage::TestStarted(TestStarted {
                node,
                capture_standard_output,
                extra,
            }) => {
                a.node(node);
                a.bool("captureStandardOutput", *capture_standard_output);
                a.extra(extra);
            }
            ServiceMessage::TestFinished(TestFinished {
                node,
                duration,
                extra,
            }) => {
                a.node(node);
                if let Some(duration) = duration {
                    a.put("duration", duration.to_string());
                }
                a.extra(extra);
            }
            ServiceMessage::TestFailed(TestFailed {
                node,
                message,
                details,
                expected,
                actual,
                expected_file,
                actual_file,
                failure_type,
                error,
                extra,
            }) => {
                a.node(node);
                a.opt("message", message);
                a.opt("details", details);
                a.opt("expected", expected);
                a.opt("actual", actual);
                a.opt("expectedFile", expected_file);
                a.opt("actualFile", actual_file);
                a.opt("type", failure_type);
                a.opt("error", error);
                a.extra(extra);
            }
            ServiceMessage::TestIgnored(TestIgnored {
                node,
                message,
                details,
                stopped,
                extra,
            }) => {
                a.node(node);
                a.opt("message", message);
                a.opt("details", details);
                a.bool("stopped", *stopped);
                a.extra(extra);
            }
            ServiceMessage::TestStdOut(TestOutput { node, out, extra })
            | ServiceMessage::TestStdErr(TestOutput { node, out, extra }) => {
                a.node(node);
                a.put("out", out.clone());
                a.extra(extra);
            }
            ServiceMessage::TestMetadata(TestMetadata {
                test_name,
                name,
                metadata_type,
                value,
                flow_id,
                extra,
            }) => {
                a.opt("testName", test_name);
                a.opt("name", name);
                a.opt("type", metadata_type);
                a.put("value", value.clone());
                a.opt("flowId", flow_id);
                a.extra(extra);
            }
            ServiceMessage::TestCount(TestCount {
                count,
                flow_id,
                extra,
            }) => {
                a.put("count", count.to_string());
                a.opt("flowId", flow_id);
                a.extra(extra);
            }
            ServiceMessage::EnteredTheMatrix(EnteredTheMatrix {
                duration_strategy,
                extra,
            }) => {
                a.opt("durationStrategy", duration_strategy);
                a.extra(extra);
            }
            ServiceMessage::TestingStarted(Marker { extra })
            | ServiceMessage::TestingFinished(Marker { extra }) => {
                a.extra(extra);
            }
            ServiceMessage::TestRetrySupport(TestRetrySupport { enabled, extra }) => {
                a.bool("enabled", Some(*enabled));
                a.extra(extra);
            }
            ServiceMessage::FlowStarted(FlowStarted {
                flow_id,
                parent,
                extra,
            }) => {
                a.put("flowId", flow_id.clone());
                a.opt("parent", parent);
                a.extra(extra);
            }
            ServiceMessage::FlowFinished(FlowFinished { flow_id, extra }) => {
                a.put("flowId", flow_id.clone());
                a.extra(extra);
            }
            ServiceMessage::BlockOpened(BlockOpened {
                name,
                description,
                flow_id,
                sub_test_result,
                extra,
            }) => {
                a.put("name", name.clone());
                a.opt("description", description);
                a.opt("flowId", flow_id);
                a.opt("subTestResult", sub_test_result);
                a.extra(extra);
            }
            ServiceMessage::BlockClosed(BlockClosed {
                name,
                flow_id,
                extra,
            }) => {
                a.put("name", name.clone());
                a.opt("flowId", flow_id);
                a.extra(extra);
            }
            ServiceMessage::Message(LogMessage {
                text,
                status,
                error_details,
                flow_id,
                extra,
            }) => {
                a.put("text", text.clone());
                a.opt("status", status);
                a.opt("errorDetails", error_details);
                a.opt("flowId", flow_id);
                a.extra(extra);
            }
            ServiceMessage::BuildProblem(BuildProblem {
                description,
                identity,
                flow_id,
                extra,
            }) => {
                a.put("description", description.clone());
                a.opt("identity", identity);
                a.opt("flowId", flow_id);
                a.extra(extra);
            }
            ServiceMessage::BuildStatisticValue(BuildStatisticValue {
                key,
                value,
                flow_id,
                extra,
            }) => {
                a.put("key", key.clone());
                a.put("value", value.clone());
                a.opt("flowId", flow_id);
                a.extra(extra);
            }
            ServiceMessage::ProgressMessage(text) => {
                return Message::single(typed.name(), text.clone())
            }
            ServiceMessage::Other(message) => return message.clone(),
        }
        Message {
            name: typed.name().to_owned(),
            body: Body::Attrs(a.0),
        }
    }
}

impl From<ServiceMessage> for Message {
    fn from(typed: ServiceMessage) -> Message {
        match typed {
            ServiceMessage::Other(message) => message,
            typed => Message::from(&typed),
        }
    }
}

/// Attributes being written, in order.
struct Attrs(Vec<(String, String)>);

impl Attrs {
    fn put(&mut self, key: &str, value: String) {
        self.0.push((key.to_owned(), value));
    }

    fn opt(&mut self, key: &str, value: &Option<String>) {
        if let Some(value) = value {
            self.put(key, value.clone());
        }
    }

    fn bool(&mut self, key: &str, value: Option<bool>) {
        if let Some(value) = value {
            self.put(key, value.to_string());
        }
    }

    fn node(&mut self, node: &TestNode) {
        let TestNode {
            name,
            node_id,
            parent_node_id,
            flow_id,
            location_hint,
            metainfo,
        } = node;
        self.opt("name", name);
        self.opt("nodeId", node_id);
        self.opt("parentNodeId", parent_node_id);
        self.opt("flowId", flow_id);
        self.opt("locationHint", location_hint);
        self.opt("metainfo", metainfo);
    }

    fn extra(&mut self, extra: &Extra) {
        self.0.extend(extra.iter().cloned());
    }
}
