//! The typed model: write → parse round trips for every variant, and the
//! errors and `extra` rules of `ServiceMessage::from_message`.
use proptest::prelude::*;
use tcrunner_protocol::{
    BlockClosed, BlockOpened, Body, BuildProblem, BuildStatisticValue, EnteredTheMatrix, Extra,
    FlowFinished, FlowStarted, LogMessage, Marker, Message, ModelError, NodeMessage, ParseEvent,
    Parser, ServiceMessage, TestCount, TestFailed, TestFinished, TestIgnored, TestMetadata,
    TestNode, TestOutput, TestRetrySupport, TestStarted, Writer,
};

/// Characters that must survive escaping, mixed with arbitrary Unicode.
fn value() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        '\'', '|', '[', ']', '\n', '\r', '\u{85}', '\u{2028}', '\u{2029}', ' ', '\t', '#', '=',
        '\0',
    ]);
    prop::collection::vec(prop_oneof![3 => any::<char>(), 2 => special], 0..12)
        .prop_map(String::from_iter)
}

fn opt() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(value())
}

/// Keys no struct models (the `x_` prefix keeps them apart from real keys).
fn extra() -> impl Strategy<Value = Extra> {
    prop::collection::vec(("x_[A-Za-z0-9_.:$-]{0,6}", value()), 0..3)
}

fn node() -> impl Strategy<Value = TestNode> {
    (opt(), opt(), opt(), opt(), opt(), opt()).prop_map(
        |(name, node_id, parent_node_id, flow_id, location_hint, metainfo)| TestNode {
            name,
            node_id,
            parent_node_id,
            flow_id,
            location_hint,
            metainfo,
        },
    )
}

fn node_message() -> impl Strategy<Value = NodeMessage> {
    (node(), extra()).prop_map(|(node, extra)| NodeMessage { node, extra })
}

fn output() -> impl Strategy<Value = TestOutput> {
    (node(), value(), extra()).prop_map(|(node, out, extra)| TestOutput { node, out, extra })
}

fn marker() -> impl Strategy<Value = Marker> {
    extra().prop_map(|extra| Marker { extra })
}

fn other() -> impl Strategy<Value = Message> {
    let attrs = prop::collection::vec(("[A-Za-z_$][A-Za-z0-9_$.:-]{0,6}", value()), 0..4);
    let body = prop_oneof![value().prop_map(Body::Value), attrs.prop_map(Body::Attrs)];
    ("zz[A-Za-z0-9_]{0,6}", body).prop_map(|(name, body)| Message { name, body })
}

fn service_message() -> impl Strategy<Value = ServiceMessage> {
    use ServiceMessage as S;
    prop_oneof![
        node_message().prop_map(S::TestSuiteStarted),
        node_message().prop_map(S::TestSuiteFinished),
        (node(), any::<Option<bool>>(), extra()).prop_map(
            |(node, capture_standard_output, extra)| {
                S::TestStarted(TestStarted {
                    node,
                    capture_standard_output,
                    extra,
                })
            }
        ),
        (node(), any::<Option<u64>>(), extra()).prop_map(
            |(node, duration, extra)| S::TestFinished(TestFinished {
                node,
                duration,
                extra
            })
        ),
        (
            node(),
            (opt(), opt(), opt(), opt()),
            (opt(), opt(), opt(), opt()),
            extra()
        )
            .prop_map(
                |(
                    node,
                    (message, details, expected, actual),
                    (expected_file, actual_file, failure_type, error),
                    extra,
                )| {
                    S::TestFailed(TestFailed {
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
                    })
                }
            ),
        (node(), opt(), opt(), any::<Option<bool>>(), extra()).prop_map(
            |(node, message, details, stopped, extra)| {
                S::TestIgnored(TestIgnored {
                    node,
                    message,
                    details,
                    stopped,
                    extra,
                })
            }
        ),
        output().prop_map(S::TestStdOut),
        output().prop_map(S::TestStdErr),
        (opt(), opt(), opt(), value(), opt(), extra()).prop_map(
            |(test_name, name, metadata_type, value, flow_id, extra)| {
                S::TestMetadata(TestMetadata {
                    test_name,
                    name,
                    metadata_type,
                    value,
                    flow_id,
                    extra,
                })
            }
        ),
        (any::<u64>(), opt(), extra()).prop_map(|(count, flow_id, extra)| S::TestCount(
            TestCount {
                count,
                flow_id,
                extra
            }
        )),
        (opt(), extra()).prop_map(|(duration_strategy, extra)| {
            S::EnteredTheMatrix(EnteredTheMatrix {
                duration_strategy,
                extra,
            })
        }),
        marker().prop_map(S::TestingStarted),
        marker().prop_map(S::TestingFinished),
        (any::<bool>(), extra())
            .prop_map(|(enabled, extra)| S::TestRetrySupport(TestRetrySupport { enabled, extra })),
        (value(), opt(), extra()).prop_map(|(flow_id, parent, extra)| S::FlowStarted(
            FlowStarted {
                flow_id,
                parent,
                extra
            }
        )),
        (value(), extra())
            .prop_map(|(flow_id, extra)| S::FlowFinished(FlowFinished { flow_id, extra })),
        (value(), opt(), opt(), opt(), extra()).prop_map(
            |(name, description, flow_id, sub_test_result, extra)| {
                S::BlockOpened(BlockOpened {
                    name,
                    description,
                    flow_id,
                    sub_test_result,
                    extra,
                })
            }
        ),
        (value(), opt(), extra()).prop_map(|(name, flow_id, extra)| S::BlockClosed(BlockClosed {
            name,
            flow_id,
            extra
        })),
        (value(), opt(), opt(), opt(), extra()).prop_map(
            |(text, status, error_details, flow_id, extra)| {
                S::Message(LogMessage {
                    text,
                    status,
                    error_details,
                    flow_id,
                    extra,
                })
            }
        ),
        (value(), opt(), opt(), extra()).prop_map(|(description, identity, flow_id, extra)| {
            S::BuildProblem(BuildProblem {
                description,
                identity,
                flow_id,
                extra,
            })
        }),
        (value(), value(), opt(), extra()).prop_map(|(key, value, flow_id, extra)| {
            S::BuildStatisticValue(BuildStatisticValue {
                key,
                value,
                flow_id,
                extra,
            })
        }),
        value().prop_map(S::ProgressMessage),
        node_message().prop_map(S::SuiteTreeStarted),
        node_message().prop_map(S::SuiteTreeNode),
        node_message().prop_map(S::SuiteTreeEnded),
        other().prop_map(S::Other),
    ]
}

/// Writes the messages, each after some text without a newline, checks each
/// is one physical line, parses the bytes back in two chunks cut at `cut`,
/// and returns the messages.
fn write_then_parse(
    messages: &[ServiceMessage],
    text: &[u8],
    cut: prop::sample::Index,
) -> Vec<Message> {
    let mut out = Vec::new();
    let mut writer = Writer::new(&mut out);
    for message in messages {
        writer.text(text).unwrap();
        writer.service_message(message).unwrap();
    }
    drop(writer);
    // Every consumer must see one physical line per message: no raw line
    // breaks of any kind inside it (Java and .NET also break on U+0085,
    // U+2028 and U+2029).
    let written = String::from_utf8(out.clone()).unwrap();
    assert!(
        !written.contains(['\r', '\u{85}', '\u{2028}', '\u{2029}']),
        "{written:?}"
    );
    let lines: Vec<&str> = written.split_terminator('\n').collect();
    let message_lines = lines
        .iter()
        .filter(|l| l.starts_with("##teamcity[") && l.ends_with(']'));
    assert_eq!(message_lines.count(), messages.len(), "{written:?}");
    assert!(lines
        .iter()
        .all(|l| l.starts_with("##teamcity[") || l.as_bytes() == text));
    let (a, b) = out.split_at(cut.index(out.len() + 1));
    let mut parser = Parser::new();
    let mut parsed = Vec::new();
    let mut sink = |event| match event {
        ParseEvent::Message { message, .. } => parsed.push(message),
        ParseEvent::Text { .. } => {}
        ParseEvent::Error(e) => panic!("{e}"),
    };
    parser.feed(a, &mut sink);
    parser.feed(b, &mut sink);
    parser.finish(&mut sink);
    parsed
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn every_variant_round_trips_through_writer_and_parser(
        messages in prop::collection::vec(service_message(), 1..4),
        text in "[a-z \\[\\]%]{0,8}",
        cut in any::<prop::sample::Index>(),
    ) {
        let parsed = write_then_parse(&messages, text.as_bytes(), cut);
        prop_assert_eq!(parsed.len(), messages.len());
        for (parsed, original) in parsed.iter().zip(&messages) {
            prop_assert_eq!(parsed, &Message::from(original));
            prop_assert_eq!(&ServiceMessage::from_message(parsed).unwrap(), original);
        }
    }
}

fn typed(message: &Message) -> Result<ServiceMessage, ModelError> {
    ServiceMessage::from_message(message)
}

#[test]
fn unknown_and_repeated_attributes_go_to_extra_in_order() {
    let raw = Message::new("testStarted")
        .with("timestamp", "2026-01-01T00:00:00.000")
        .with("name", "first")
        .with("path", "/p")
        .with("name", "second");
    let ServiceMessage::TestStarted(started) = typed(&raw).unwrap() else {
        panic!()
    };
    assert_eq!(started.node, TestNode::named("first"));
    assert_eq!(
        started.extra,
        vec![
            ("timestamp".to_owned(), "2026-01-01T00:00:00.000".to_owned()),
            ("path".to_owned(), "/p".to_owned()),
            ("name".to_owned(), "second".to_owned()),
        ]
    );
}

#[test]
fn unknown_names_are_other() {
    let raw = Message::single("publishArtifacts", "out/**");
    assert_eq!(typed(&raw), Ok(ServiceMessage::Other(raw.clone())));
    assert_eq!(
        ServiceMessage::Other(raw.clone()).name(),
        "publishArtifacts"
    );
}

#[test]
fn duration_and_count_must_be_plain_integers() {
    for bad in ["1.5", "-1", "+5", "", " 5", "99999999999999999999"] {
        let raw = Message::new("testFinished").with("duration", bad);
        assert_eq!(
            typed(&raw),
            Err(ModelError::NotAnInteger {
                message: "testFinished".into(),
                attribute: "duration",
                value: bad.into()
            })
        );
    }
    let error = typed(&Message::new("testCount").with("count", "x")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "attribute `count` of `testCount` is not an integer: `x`"
    );
    let ServiceMessage::TestFinished(f) =
        typed(&Message::new("testFinished").with("duration", "007")).unwrap()
    else {
        panic!()
    };
    assert_eq!(f.duration, Some(7));
}

#[test]
fn booleans_must_be_true_or_false() {
    let error = typed(&Message::new("testIgnored").with("stopped", "yes")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "attribute `stopped` of `testIgnored` is not `true` or `false`: `yes`"
    );
    let error =
        typed(&Message::new("testStarted").with("captureStandardOutput", "True")).unwrap_err();
    assert!(matches!(
        error,
        ModelError::NotABool {
            attribute: "captureStandardOutput",
            ..
        }
    ));
}

#[test]
fn required_attributes_are_reported_missing() {
    let cases = [
        ("testCount", "count"),
        ("testRetrySupport", "enabled"),
        ("testStdOut", "out"),
        ("testStdErr", "out"),
        ("testMetadata", "value"),
        ("flowStarted", "flowId"),
        ("flowFinished", "flowId"),
        ("blockOpened", "name"),
        ("blockClosed", "name"),
        ("message", "text"),
        ("buildProblem", "description"),
        ("buildStatisticValue", "key"),
    ];
    for (name, attribute) in cases {
        assert_eq!(
            typed(&Message::new(name)),
            Err(ModelError::Missing {
                message: name.into(),
                attribute
            }),
            "{name}"
        );
    }
    assert_eq!(
        typed(&Message::new("message")).unwrap_err().to_string(),
        "`message` has no `text` attribute"
    );
}

#[test]
fn body_form_must_match_the_message() {
    assert_eq!(
        typed(&Message::new("progressMessage").with("text", "x")),
        Err(ModelError::ExpectedValue {
            message: "progressMessage".into()
        })
    );
    assert_eq!(
        typed(&Message::single("testStarted", "x"))
            .unwrap_err()
            .to_string(),
        "`testStarted` takes attributes, not a single value"
    );
}

#[test]
fn node_attributes_are_found_on_every_test_and_suite_message() {
    let raw = Message::new("testSuiteStarted")
        .with("parentNodeId", "0")
        .with("nodeId", "1")
        .with("name", "s");
    let typed = typed(&raw).unwrap();
    let node = typed.node().unwrap();
    assert_eq!(
        (node.node_id.as_deref(), node.parent_node_id.as_deref()),
        (Some("1"), Some("0"))
    );
    // Written back in the documented order, not the order read.
    assert_eq!(
        Message::from(typed).attrs(),
        [
            ("name".into(), "s".into()),
            ("nodeId".into(), "1".into()),
            ("parentNodeId".into(), "0".into())
        ]
    );
}

/// Every optional field set, so every key is written.
fn full_node() -> TestNode {
    TestNode {
        name: Some("n".into()),
        node_id: Some("2".into()),
        parent_node_id: Some("1".into()),
        flow_id: Some("f".into()),
        location_hint: Some("l".into()),
        metainfo: Some("m".into()),
    }
}

fn s(value: &str) -> Option<String> {
    Some(value.to_owned())
}

#[test]
fn every_variant_writes_attributes_in_the_documented_order() {
    use ServiceMessage as S;
    const NODE: &str = "name nodeId parentNodeId flowId locationHint metainfo";
    let extra = || vec![("zExtra".to_owned(), "e".to_owned())];
    let nm = || NodeMessage {
        node: full_node(),
        extra: extra(),
    };
    let out = || TestOutput {
        node: full_node(),
        out: "o".into(),
        extra: extra(),
    };
    let cases: Vec<(ServiceMessage, String)> = vec![
        (S::TestSuiteStarted(nm()), NODE.into()),
        (S::TestSuiteFinished(nm()), NODE.into()),
        (S::SuiteTreeStarted(nm()), NODE.into()),
        (S::SuiteTreeNode(nm()), NODE.into()),
        (S::SuiteTreeEnded(nm()), NODE.into()),
        (
            S::TestStarted(TestStarted {
                node: full_node(),
                capture_standard_output: Some(false),
                extra: extra(),
            }),
            format!("{NODE} captureStandardOutput"),
        ),
        (
            S::TestFinished(TestFinished {
                node: full_node(),
                duration: Some(1),
                extra: extra(),
            }),
            format!("{NODE} duration"),
        ),
        (
            S::TestFailed(TestFailed {
                node: full_node(),
                message: s("m"),
                details: s("d"),
                expected: s("e"),
                actual: s("a"),
                expected_file: s("ef"),
                actual_file: s("af"),
                failure_type: s("comparisonFailure"),
                error: s("yes"),
                extra: extra(),
            }),
            format!("{NODE} message details expected actual expectedFile actualFile type error"),
        ),
        (
            S::TestIgnored(TestIgnored {
                node: full_node(),
                message: s("m"),
                details: s("d"),
                stopped: Some(true),
                extra: extra(),
            }),
            format!("{NODE} message details stopped"),
        ),
        (S::TestStdOut(out()), format!("{NODE} out")),
        (S::TestStdErr(out()), format!("{NODE} out")),
        (
            S::TestMetadata(TestMetadata {
                test_name: s("t"),
                name: s("n"),
                metadata_type: s("ms"),
                value: "1".into(),
                flow_id: s("f"),
                extra: extra(),
            }),
            "testName name type value flowId".into(),
        ),
        (
            S::TestCount(TestCount {
                count: 3,
                flow_id: s("f"),
                extra: extra(),
            }),
            "count flowId".into(),
        ),
        (
            S::EnteredTheMatrix(EnteredTheMatrix {
                duration_strategy: s("manual"),
                extra: extra(),
            }),
            "durationStrategy".into(),
        ),
        (S::TestingStarted(Marker { extra: extra() }), String::new()),
        (S::TestingFinished(Marker { extra: extra() }), String::new()),
        (
            S::TestRetrySupport(TestRetrySupport {
                enabled: true,
                extra: extra(),
            }),
            "enabled".into(),
        ),
        (
            S::FlowStarted(FlowStarted {
                flow_id: "f".into(),
                parent: s("p"),
                extra: extra(),
            }),
            "flowId parent".into(),
        ),
        (
            S::FlowFinished(FlowFinished {
                flow_id: "f".into(),
                extra: extra(),
            }),
            "flowId".into(),
        ),
        (
            S::BlockOpened(BlockOpened {
                name: "b".into(),
                description: s("d"),
                flow_id: s("f"),
                sub_test_result: s("Success"),
                extra: extra(),
            }),
            "name description flowId subTestResult".into(),
        ),
        (
            S::BlockClosed(BlockClosed {
                name: "b".into(),
                flow_id: s("f"),
                extra: extra(),
            }),
            "name flowId".into(),
        ),
        (
            S::Message(LogMessage {
                text: "t".into(),
                status: s("ERROR"),
                error_details: s("d"),
                flow_id: s("f"),
                extra: extra(),
            }),
            "text status errorDetails flowId".into(),
        ),
        (
            S::BuildProblem(BuildProblem {
                description: "d".into(),
                identity: s("i"),
                flow_id: s("f"),
                extra: extra(),
            }),
            "description identity flowId".into(),
        ),
        (
            S::BuildStatisticValue(BuildStatisticValue {
                key: "k".into(),
                value: "1".into(),
                flow_id: s("f"),
                extra: extra(),
            }),
            "key value flowId".into(),
        ),
    ];
    for (typed, keys) in cases {
        let message = Message::from(&typed);
        assert_eq!(message.name, typed.name());
        let written: Vec<&str> = message.attrs().iter().map(|(k, _)| k.as_str()).collect();
        let expected: Vec<&str> = keys.split_whitespace().chain(["zExtra"]).collect();
        assert_eq!(written, expected, "{}", typed.name());
    }
    assert_eq!(
        Message::from(ServiceMessage::ProgressMessage("p".into())),
        Message::single("progressMessage", "p")
    );
}
