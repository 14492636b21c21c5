//! The one event type every source produces and the tree consumes.
//!
//! Framework reporters in `runners/` write these events as JSON lines on the
//! side channel (`docs/event-protocol.md`); report-file readers build them in
//! memory. Nodes are named by a source-chosen `id` string that is unique within
//! the run; the tree turns ids into IntelliJ node ids.
use serde::{Deserialize, Serialize};

/// One thing that happened in a test run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum TestEvent {
    /// The reporter inside the framework is loaded and talking.
    Hello {
        /// `pytest`, `jest`, `vitest`.
        runner: String,
        /// The framework's version.
        #[serde(default)]
        version: Option<String>,
    },
    /// Declares a suite (directory, file, class, describe block). It starts
    /// when its first test starts, so suites with nothing run never appear.
    Suite(Node),
    /// Declares a test. May be sent long before it runs (collection) or just
    /// before `started`; a `finished` for an undeclared id is an error.
    Test(Node),
    /// The tests' own output goes straight to the framework's stdout, in
    /// the same stream as the events and in order with them (pytest `-s`):
    /// text between a test's start and end is that test's.
    LiveOutput,
    /// The framework's session began: our reporter is loaded and the
    /// framework goes on to collect (pytest).
    SessionStarted,
    /// The framework's session reached its end, however it went: a source
    /// that says [`TestEvent::SessionStarted`] says this too, unless the
    /// process ended early (`os._exit` outside any test).
    SessionEnded,
    /// The number of tests that will run, when the source knows it.
    Collected {
        /// How many.
        count: u64,
    },
    /// A declared test starts running.
    Started {
        /// The test's id.
        id: String,
    },
    /// Output from a test or a suite, or from the run when `id` is absent.
    Output {
        /// The node the output belongs to.
        #[serde(default)]
        id: Option<String>,
        /// Which stream.
        stream: Stream,
        /// The text, as produced.
        text: String,
    },
    /// A test ended (it is started first if it never was).
    Finished(TestResult),
    /// The source will send nothing more under this suite; it closes once its
    /// running children finish.
    SuiteDone {
        /// The suite's id.
        id: String,
    },
    /// A run-level message for the log (not a test): warnings, framework notes.
    Log {
        /// Severity.
        level: LogLevel,
        /// The text.
        text: String,
    },
}

/// A suite or test declaration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Unique within the run, chosen by the source (e.g. a pytest nodeid).
    pub id: String,
    /// The enclosing suite's id; absent for top-level nodes.
    #[serde(default)]
    pub parent: Option<String>,
    /// The short name shown in the tree.
    pub name: String,
    /// What the node is.
    #[serde(default)]
    pub kind: NodeKind,
    /// Absolute path of the source file.
    #[serde(default)]
    pub file: Option<String>,
    /// 1-based line of the definition.
    #[serde(default)]
    pub line: Option<u32>,
    /// IntelliJ `locationHint` (`python<dir>://a.b`, `file://…`, `test://…`).
    #[serde(default)]
    pub hint: Option<String>,
    /// IntelliJ `metainfo`, e.g. the pytest name with parameters for reruns.
    #[serde(default)]
    pub meta: Option<String>,
    /// Markers or tags.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// The id of an earlier test this one reports late: a failure the
    /// framework charged to that test after it had finished (jest 30). The
    /// stream shows it as a node of its own; the result files fold it
    /// into the earlier test's record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late: Option<String>,
}

/// The kind of a tree node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// A directory or package.
    Dir,
    /// A source file (module).
    File,
    /// A class, describe block or other grouping.
    #[default]
    Suite,
    /// A test (a leaf, unless it has subtests).
    Test,
}

/// How a test ended and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// The test's id.
    pub id: String,
    /// The verdict.
    pub outcome: Outcome,
    /// Whole milliseconds.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// One-line reason: the failure message or skip reason.
    #[serde(default)]
    pub message: Option<String>,
    /// Traceback or stack.
    #[serde(default)]
    pub details: Option<String>,
    /// Expected value of a comparison (only with `actual`).
    #[serde(default)]
    pub expected: Option<String>,
    /// Actual value of a comparison (only with `expected`).
    #[serde(default)]
    pub actual: Option<String>,
}

/// A test verdict, as the framework judged it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Passed.
    #[default]
    Passed,
    /// An assertion failed.
    Failed,
    /// Something other than an assertion went wrong (setup error, crash).
    Error,
    /// Skipped, with the reason in `message`.
    Skipped,
    /// Expected to fail and did.
    Xfail,
    /// Expected to fail but passed (non-strict: counts as passed).
    Xpass,
    /// A placeholder (`test.todo`).
    Todo,
}

impl Outcome {
    /// Every outcome, for tables and tests.
    #[cfg(test)]
    pub const ALL: [Outcome; 7] = [
        Outcome::Passed,
        Outcome::Failed,
        Outcome::Error,
        Outcome::Skipped,
        Outcome::Xfail,
        Outcome::Xpass,
        Outcome::Todo,
    ];

    /// How a consumer with three states (passed, failed, ignored) sees it.
    pub fn verdict(self) -> Verdict {
        match self {
            Outcome::Passed | Outcome::Xpass => Verdict::Passed,
            Outcome::Failed | Outcome::Error => Verdict::Failed,
            Outcome::Skipped | Outcome::Xfail | Outcome::Todo => Verdict::Ignored,
        }
    }
}

/// The three states TeamCity and IntelliJ know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// `testFinished` only.
    Passed,
    /// `testFailed`.
    Failed,
    /// `testIgnored`.
    Ignored,
}

/// An output stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// Severity of a [`TestEvent::Log`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    /// Informational.
    Info,
    /// Something the user should look at.
    Warning,
    /// The run is broken.
    Error,
}

impl TestEvent {
    /// Decodes one line of the side channel. A lone UTF-16 surrogate escape
    /// (`\ud800`), which `JSON.stringify` and Python's `json` write for a
    /// string holding half of a pair (a title or value cut in the middle of
    /// an emoji), reads as U+FFFD: serde_json refuses it, and the whole
    /// event, a test's `finished` among them, would be lost.
    pub(crate) fn from_line(line: &[u8]) -> serde_json::Result<TestEvent> {
        Self::decode(line).or_else(|err| match without_lone_surrogates(line) {
            Some(fixed) => Self::decode(&fixed),
            None => Err(err),
        })
    }

    /// Decodes an event. Our reporters write `"ev"` first, and such a line
    /// of the events every test sends is read straight into its variant's
    /// fields: serde reads an internally tagged enum by buffering the whole
    /// object first, half of tcrunner's work per event. Any other line, and
    /// any the short way refuses, takes serde's own way, errors included.
    fn decode(line: &[u8]) -> serde_json::Result<TestEvent> {
        match Self::decode_tag_first(line) {
            Some(event) => Ok(event),
            None => serde_json::from_slice(line),
        }
    }

    fn decode_tag_first(line: &[u8]) -> Option<TestEvent> {
        #[derive(Deserialize)]
        struct Id {
            id: String,
        }
        #[derive(Deserialize)]
        struct Output {
            #[serde(default)]
            id: Option<String>,
            stream: Stream,
            text: String,
        }
        /// Checked as UTF-8 once, whole: serde_json checks a slice's
        /// strings one by one, a call each.
        fn fields<T: serde::de::DeserializeOwned>(json: &[u8]) -> Option<T> {
            serde_json::from_str(std::str::from_utf8(json).ok()?).ok()
        }

        let rest = line.strip_prefix(br#"{"ev":""#)?;
        let end = rest.iter().position(|&b| b == b'"')?;
        let (tag, rest) = (&rest[..end], &rest[end + 1..]);
        // The object without its tag: `{` and what followed the tag's comma.
        let mut json = Vec::with_capacity(rest.len() + 1);
        json.push(b'{');
        match rest.first()? {
            b',' => json.extend_from_slice(&rest[1..]),
            b'}' => json.extend_from_slice(rest),
            _ => return None,
        }
        Some(match tag {
            b"test" => TestEvent::Test(fields(&json)?),
            b"suite" => TestEvent::Suite(fields(&json)?),
            b"started" => TestEvent::Started {
                id: fields::<Id>(&json)?.id,
            },
            b"finished" => TestEvent::Finished(fields(&json)?),
            b"suite_done" => TestEvent::SuiteDone {
                id: fields::<Id>(&json)?.id,
            },
            b"output" => {
                let Output { id, stream, text } = fields(&json)?;
                TestEvent::Output { id, stream, text }
            }
            _ => return None, // once a run or rarer: serde's way
        })
    }
}

/// `line` with every `\uXXXX` escape of a surrogate that is not half of a
/// high-low pair replaced by `\ufffd`, or `None` when it has none. A
/// backslash only occurs inside strings in valid JSON, so escapes are found
/// by walking from one backslash to the next.
fn without_lone_surrogates(line: &[u8]) -> Option<Vec<u8>> {
    let unit = |at: usize| -> Option<u16> {
        let hex = line.get(at..at + 6)?;
        if &hex[..2] != br"\u" {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut at = 0;
    while let Some(offset) = line[at..].iter().position(|&b| b == b'\\') {
        at += offset;
        let Some(code) = unit(at) else {
            at += 2; // `\"`, `\\`, `\n`: the escaped byte is never a backslash that starts one
            continue;
        };
        let high = (0xD800..0xDC00).contains(&code);
        let paired = high && unit(at + 6).is_some_and(|c| (0xDC00..0xE000).contains(&c));
        if paired {
            at += 12;
        } else if (0xD800..0xE000).contains(&code) {
            let out = out.get_or_insert_with(|| Vec::with_capacity(line.len()));
            out.extend_from_slice(&line[copied..at]);
            out.extend_from_slice(br"\ufffd");
            at += 6;
            copied = at;
        } else {
            at += 6;
        }
    }
    let mut out = out?;
    out.extend_from_slice(&line[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_form_is_tagged_json() {
        let line =
            r#"{"ev":"finished","id":"t.py::a","outcome":"xfail","duration_ms":3,"message":"bug"}"#;
        let event: TestEvent = serde_json::from_str(line).unwrap();
        assert_eq!(
            event,
            TestEvent::Finished(TestResult {
                id: "t.py::a".into(),
                outcome: Outcome::Xfail,
                duration_ms: Some(3),
                message: Some("bug".into()),
                ..TestResult::default()
            })
        );
        let back = serde_json::to_string(&event).unwrap();
        assert_eq!(serde_json::from_str::<TestEvent>(&back).unwrap(), event);
    }

    #[test]
    fn lone_surrogate_escapes_read_as_replacement_characters() {
        let line = br#"{"ev":"output","id":"a","stream":"stdout","text":"x\ud800y \udc00 \ud83d\ude00 \\ud800 \"\ud83d"}"#;
        assert!(serde_json::from_slice::<TestEvent>(line).is_err());
        let TestEvent::Output { text, .. } = TestEvent::from_line(line).unwrap() else {
            panic!("not output")
        };
        assert_eq!(text, "x\u{fffd}y \u{fffd} \u{1f600} \\ud800 \"\u{fffd}");
        // Nothing to replace: serde's own error stays.
        assert!(TestEvent::from_line(br#"{"ev":"output","#).is_err());
        assert_eq!(
            without_lone_surrogates(br#"{"a":"\u00e9 \\ \ud83d\ude00"}"#),
            None
        );
    }

    #[test]
    fn tag_first_lines_decode_as_serde_decodes_them() {
        let lines: &[&[u8]] = &[
            br#"{"ev":"test","id":"t.py::a[1]","name":"a[1]","kind":"test","file":"/p/t.py","parent":"t.py","line":3,"hint":"python</p>://t.a","meta":"a[1]","tags":["slow"]}"#,
            br#"{"ev":"test","id":"x","name":"x"}"#,
            br#"{"ev":"suite","id":"t.py","name":"t.py","kind":"file","file":"/p/t.py","hint":"python</p>://t"}"#,
            br#"{"ev":"started","id":"t.py::a"}"#,
            br#"{"ev":"started","id":"q\"uote\u00e9 \ud83d\ude00"}"#,
            br#"{"ev":"finished","id":"a","outcome":"failed","duration_ms":12,"message":"m","details":"d","expected":"1","actual":"2"}"#,
            br#"{"ev":"finished","id":"a","outcome":"passed","duration_ms":0,"unknown":[1,{"x":null}]}"#,
            br#"{"ev":"suite_done","id":"t.py"}"#,
            br#"{"ev":"output","id":"a","stream":"stderr","text":"line\n"}"#,
            br#"{"ev":"output","stream":"stdout","text":""}"#,
            br#"{"ev":"collected","count":5}"#,
            br#"{"ev":"hello","runner":"pytest","version":"9.2.0"}"#,
            br#"{"ev":"log","level":"warning","text":"w"}"#,
            br#"{"id":"a","ev":"started"}"#,
            br#"{ "ev":"started","id":"a"}"#,
        ];
        for line in lines {
            let serde: TestEvent = serde_json::from_slice(line).unwrap();
            assert_eq!(
                TestEvent::from_line(line).unwrap(),
                serde,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let tagged_first = lines
            .iter()
            .filter(|l| TestEvent::decode_tag_first(l).is_some());
        assert_eq!(tagged_first.count(), 10);
        // Refused either way, with serde's own error.
        for line in [
            &br#"{"ev":"started"}"#[..],
            br#"{"ev":"finished","id":"a","outcome":"great"}"#,
            br#"{"ev":"started","id":"a""#,
            br#"{"ev":"started","id":"a","id":"b"}"#,
            br#"{"ev":"nope","id":"a"}"#,
        ] {
            let serde = serde_json::from_slice::<TestEvent>(line).unwrap_err();
            let ours = TestEvent::from_line(line).unwrap_err();
            assert_eq!(ours.to_string(), serde.to_string());
        }
    }

    #[test]
    fn node_declaration_defaults() {
        let event: TestEvent =
            serde_json::from_str(r#"{"ev":"test","id":"x","name":"x","kind":"test"}"#).unwrap();
        let TestEvent::Test(node) = event else {
            panic!("not a test")
        };
        assert_eq!(node.parent, None);
        assert_eq!(node.kind, NodeKind::Test);
    }
}
