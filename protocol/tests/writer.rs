//! The writer: line placement, attribute forms, flushing and one write per message.
use std::io::{self, Write};
use std::time::{Duration, UNIX_EPOCH};

use tcrunner_protocol::{
    Decimal, Message, ServiceMessage, TestFinished, TestNode, Timestamp, Value, Writer,
    WriterOptions,
};

/// Records every `write` and `flush` call.
#[derive(Default)]
struct Recorder {
    bytes: Vec<u8>,
    writes: usize,
    flushes: usize,
}

impl Write for Recorder {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writes += 1;
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flushes += 1;
        Ok(())
    }
}

fn written(build: impl FnOnce(&mut Writer<&mut Vec<u8>>) -> io::Result<()>) -> String {
    let mut out = Vec::new();
    build(&mut Writer::new(&mut out)).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn message_after_unterminated_text_starts_at_column_0() {
    let out = written(|w| {
        w.text(b"PASSED [100%]")?;
        assert!(!w.at_line_start());
        w.message(&Message::new("testFinished").with("name", "a"))?;
        assert!(w.at_line_start());
        Ok(())
    });
    assert_eq!(out, "PASSED [100%]\n##teamcity[testFinished name='a']\n");
}

#[test]
fn message_after_terminated_text_adds_no_blank_line() {
    let out = written(|w| {
        w.text(b"line\n")?;
        w.text(b"")?;
        w.message(&Message::new("testingStarted"))
    });
    assert_eq!(out, "line\n##teamcity[testingStarted]\n");
}

#[test]
fn a_carriage_return_does_not_end_a_line() {
    let out = written(|w| {
        w.text(b"progress\r")?;
        w.message(&Message::new("testingFinished"))
    });
    assert_eq!(out, "progress\r\n##teamcity[testingFinished]\n");
}

#[test]
fn text_is_written_unchanged() {
    let bytes = b"\xff\x00 ##teamcity[not parsed here\r\n";
    let mut out = Vec::new();
    Writer::new(&mut out).text(bytes).unwrap();
    assert_eq!(out, bytes);
}

#[test]
fn single_value_form() {
    let out = written(|w| w.message(&Message::single("progressMessage", "50% ['done']")));
    assert_eq!(out, "##teamcity[progressMessage '50% |[|'done|'|]']\n");
}

#[test]
fn attributes_keep_their_order_and_are_escaped() {
    let message = Message::new("testFailed")
        .with("name", "t")
        .with("message", "a|b\nc")
        .with("details", "");
    let out = written(|w| w.message(&message));
    assert_eq!(
        out,
        "##teamcity[testFailed name='t' message='a||b|nc' details='']\n"
    );
}

#[test]
fn message_at_writes_the_timestamp_first() {
    let at = Timestamp {
        year: 2008,
        month: 9,
        day: 3,
        hour: 14,
        minute: 2,
        second: 34,
        millis: 7,
    };
    let out = written(|w| {
        w.message_at(&Message::new("testStarted").with("name", "t"), at)?;
        w.message_at(&Message::single("progressMessage", "p"), at)
    });
    assert_eq!(
        out,
        "##teamcity[testStarted timestamp='2008-09-03T14:02:34.007+0000' name='t']\n\
         ##teamcity[progressMessage 'p']\n"
    );
}

#[test]
fn message_parts_writes_what_message_writes() {
    let at = Timestamp {
        year: 2024,
        month: 1,
        day: 2,
        hour: 3,
        minute: 4,
        second: 5,
        millis: 6,
    };
    let attrs = [
        ("name", Value::Text("it's [odd]\n|")),
        ("nodeId", Value::Number(7)),
        ("empty", Value::Text("")),
        ("duration", Value::Number(u64::MAX)),
    ];
    let mut message = Message::new("testStarted");
    for (key, value) in attrs {
        message = match value {
            Value::Text(text) => message.with(key, text),
            Value::Number(n) => message.with(key, n.to_string()),
        };
    }
    for stamp in [None, Some(at)] {
        let parts = written(|w| {
            w.text(b"open text")?;
            w.message_parts("testStarted", &attrs, stamp)
        });
        let whole = written(|w| {
            w.text(b"open text")?;
            match stamp {
                Some(at) => w.message_at(&message, at),
                None => w.message(&message),
            }
        });
        assert_eq!(parts, whole);
    }
}

#[test]
fn numbers_format_as_display_does() {
    let some = (0..2_000).chain([99_999, 100_000, 1_234_567, u64::MAX / 10, u64::MAX]);
    for n in some {
        assert_eq!(Decimal::default().format(n), n.to_string());
    }
}

#[test]
fn typed_messages_are_written_in_the_documented_order() {
    let finished = ServiceMessage::TestFinished(TestFinished {
        node: TestNode {
            name: Some("n".into()),
            node_id: Some("2".into()),
            parent_node_id: Some("1".into()),
            flow_id: Some("f".into()),
            location_hint: Some("python<x>://a.n".into()),
            metainfo: Some("m".into()),
        },
        duration: Some(12),
        extra: vec![("x".into(), "y".into())],
    });
    let out = written(|w| w.service_message(&finished));
    assert_eq!(
        out,
        "##teamcity[testFinished name='n' nodeId='2' parentNodeId='1' flowId='f' \
         locationHint='python<x>://a.n' metainfo='m' duration='12' x='y']\n"
    );
}

#[test]
fn each_message_is_one_write_even_after_open_text() {
    let mut writer = Writer::new(Recorder::default());
    writer.text(b"open").unwrap();
    let message = Message::new("testStarted").with("name", "a".repeat(10_000));
    writer.message(&message).unwrap();
    writer.message(&message).unwrap();
    let recorder = writer.into_inner();
    assert_eq!(recorder.writes, 3, "one for the text, one per message");
    assert!(recorder.bytes.starts_with(b"open\n##teamcity["));
}

#[test]
fn flush_each_flushes_after_every_message_only() {
    let mut writer = Writer::new(Recorder::default());
    writer.text(b"text\n").unwrap();
    writer.message(&Message::new("a")).unwrap();
    writer.message(&Message::new("b")).unwrap();
    assert_eq!(writer.into_inner().flushes, 2);

    let mut writer = Writer::with_options(Recorder::default(), WriterOptions { flush_each: false });
    writer.message(&Message::new("a")).unwrap();
    assert_eq!(writer.into_inner().flushes, 0);
}

#[test]
fn names_and_keys_that_would_not_parse_back_are_refused() {
    for bad in [
        Message::new("two words"),
        Message::new(""),
        Message::new("ok").with("bad]key", "v"),
        Message::new("ok").with("1st", "v"),
    ] {
        let mut out = Vec::new();
        let error = Writer::new(&mut out).message(&bad).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{bad:?}");
        assert!(out.is_empty(), "nothing written for {bad:?}");
    }
    let out = written(|w| {
        w.message(
            &Message::new("tc:x$y")
                .with("tc:tags", "tc:internal")
                .with("a.b-c", ""),
        )
    });
    assert_eq!(out, "##teamcity[tc:x$y tc:tags='tc:internal' a.b-c='']\n");
}

#[test]
fn timestamp_from_system_time_is_utc() {
    let at = Timestamp::from_system_time(UNIX_EPOCH + Duration::from_millis(1_000_000_000_123));
    assert_eq!(at.to_string(), "2001-09-09T01:46:40.123+0000");
    let leap = Timestamp::from_system_time(UNIX_EPOCH + Duration::from_secs(1_709_251_199));
    assert_eq!(leap.to_string(), "2024-02-29T23:59:59.000+0000");
    assert_eq!(
        Timestamp::from_system_time(UNIX_EPOCH).to_string(),
        "1970-01-01T00:00:00.000+0000"
    );
    let now = Timestamp::now_utc();
    assert!(now.year >= 2024 && (1..=12).contains(&now.month) && now.millis < 1000);
}
