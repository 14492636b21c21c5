//! Writing the typed [`ServiceMessage`] as a [`Message`].
//!
//! Every struct is destructured, so adding a field to the model fails to
//! compile here until it is written (the habit of quick-junit's serializer).
//! The attribute order is the one [`ServiceMessage`] documents.
use crate::model::{
    BlockClosed, BlockOpened, BuildProblem, BuildStatisticValue, EnteredTheMatrix, Extra,
    FlowFinished, FlowStarted, LogMessage, Marker, NodeMessage, ServiceMessage, TestCount,
    TestFailed, TestFinished, TestIgnored, TestMetadata, TestNode, TestOutput, TestRetrySupport,
    TestStarted,
};
use crate::{Body, Message};

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
