//! What every report reader shares: the event sink, the read error, text
//! helpers and the in-memory tree the JSON readers group tests into (their
//! lenient serde decoders are in `lenient`).
use crate::hash::FastMap;
use std::io::{self, Write};

use crate::event::{Node, NodeKind, Stream, TestEvent, TestResult};
use crate::report::Pipeline;
use crate::tree::test_events;

/// Where a reader sends its events.
pub(crate) trait Sink {
    /// One event; an error here is fatal for the whole conversion.
    fn event(&mut self, event: TestEvent) -> io::Result<()>;

    /// One whole test: the events of [`test_events`], which a sink may
    /// take in one step. Its id is new: readers number their nodes
    /// ([`Emitter::numbered_id`]) and send each number once, so a sink need
    /// not look it up. Borrowed: the reader fills the same buffers in for
    /// its next test.
    fn test(
        &mut self,
        node: &Node,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        test_events(node, output, result)
            .into_iter()
            .try_for_each(|event| self.event(event))
    }

    /// Plain text a recorded run's framework printed (`events` input).
    fn text(&mut self, bytes: &[u8]) -> io::Result<()>;
}

impl<W: Write> Sink for Pipeline<W> {
    fn event(&mut self, event: TestEvent) -> io::Result<()> {
        Pipeline::event(self, event)
    }

    fn test(
        &mut self,
        node: &Node,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        Pipeline::test(self, node, output, result)
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        Pipeline::text(self, bytes)
    }
}

/// For tests: the events, with plain text as run-level stdout output.
impl Sink for Vec<TestEvent> {
    fn event(&mut self, event: TestEvent) -> io::Result<()> {
        self.push(event);
        Ok(())
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.push(TestEvent::Output {
            id: None,
            stream: Stream::Stdout,
            text: String::from_utf8_lossy(bytes).into_owned(),
        });
        Ok(())
    }
}

/// Why a report could not be read (completely).
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// The content is not what the format says; events before the problem were sent.
    #[error("line {line}, column {column}: {problem}")]
    Malformed {
        /// 1-based line of the problem.
        line: u64,
        /// 1-based byte column of the problem (0 when serde reports none).
        column: u64,
        /// What is wrong.
        problem: String,
    },
    /// Reading the file failed.
    #[error("read failed: {0}")]
    Io(#[source] io::Error),
    /// The sink failed: stop everything.
    #[error("writing the output failed: {0}")]
    Output(#[source] io::Error),
}

impl ReadError {
    /// A serde_json error, with serde's position split off its message.
    pub(crate) fn from_json(err: serde_json::Error) -> ReadError {
        if err.is_io() {
            return ReadError::Io(err.into());
        }
        let text = err.to_string();
        // serde_json formats "<problem> at line L column C"; keep the problem.
        let problem = match text.rsplit_once(" at line ") {
            Some((problem, _)) => problem.to_string(),
            None => text,
        };
        ReadError::Malformed {
            line: err.line() as u64,
            column: err.column() as u64,
            problem,
        }
    }
}

impl ReadError {
    /// A decoding error from an already parsed document, which has no position.
    pub(crate) fn from_value(err: serde_json::Error) -> ReadError {
        ReadError::Malformed {
            line: 1,
            column: 1,
            problem: err.to_string(),
        }
    }
}

/// Sends events to a sink, wrapping sink failures as [`ReadError::Output`].
pub(crate) struct Emitter<'a> {
    sink: &'a mut dyn Sink,
    /// Prefix that makes this file's ids unique within the run.
    prefix: String,
}

impl<'a> Emitter<'a> {
    pub(crate) fn new(sink: &'a mut dyn Sink, prefix: impl Into<String>) -> Self {
        Emitter {
            sink,
            prefix: prefix.into(),
        }
    }

    /// The id for the `n`th node of a reader that numbers its nodes.
    pub(crate) fn numbered_id(&self, n: u64) -> String {
        let mut id = String::new();
        self.numbered_id_into(n, &mut id, None);
        id
    }

    /// [`Emitter::numbered_id`] written over `id`, reusing its buffer;
    /// `held` is the number whose id `id` holds, if it holds one. A reader's
    /// consecutive tests are often numbered one apart: the last digits of
    /// the id are then counted up in place.
    pub(crate) fn numbered_id_into(&self, n: u64, id: &mut String, held: Option<u64>) {
        if held.is_some_and(|held| held.checked_add(1) == Some(n))
            && count_up(id, self.prefix.len())
        {
            return;
        }
        // Digits formatted on the stack: `write!` costs more than the rest of the id.
        let mut digits = tcrunner_protocol::Decimal::default();
        let digits = digits.format(n);
        id.clear();
        id.reserve(self.prefix.len() + digits.len());
        id.push_str(&self.prefix);
        id.push_str(digits);
    }

    pub(crate) fn send(&mut self, event: TestEvent) -> Result<(), ReadError> {
        self.sink.event(event).map_err(ReadError::Output)
    }

    /// Plain text, as a recorded run's framework printed it.
    pub(crate) fn text(&mut self, bytes: &[u8]) -> Result<(), ReadError> {
        self.sink.text(bytes).map_err(ReadError::Output)
    }

    /// Declares, starts, feeds output to and finishes one test whose id
    /// this reader numbered and never sent before, in one step
    /// ([`Sink::test`]), from the caller's buffers, which it may fill in
    /// again for its next test.
    pub(crate) fn test(&mut self, test: &TestNode) -> Result<(), ReadError> {
        (self.sink)
            .test(&test.node, &test.output, &test.result)
            .map_err(ReadError::Output)
    }
}

/// Counts up the decimal number that follows `prefix_len` bytes of `id` by
/// one, in place. False, with `id` left cut short, when it has no digit that
/// is not a 9 (one more needs another digit).
fn count_up(id: &mut String, prefix_len: usize) -> bool {
    // Nine times in ten the last digit alone changes.
    if let Some(&last @ b'0'..=b'8') = id.as_bytes().get(prefix_len..).and_then(<[u8]>::last) {
        id.pop();
        id.push(char::from(last + 1));
        return true;
    }
    let mut nines = 0;
    while id.len() > prefix_len {
        match id.pop() {
            Some('9') => nines += 1,
            Some(digit @ '0'..='8') => {
                id.push(char::from(digit as u8 + 1));
                id.extend(std::iter::repeat_n('0', nines));
                return true;
            }
            _ => return false,
        }
    }
    false
}

/// A test ready to be sent: its declaration, its output and its result.
#[derive(Debug, Default)]
pub(crate) struct TestNode {
    pub node: crate::event::Node,
    pub output: Vec<(Stream, String)>,
    /// The `id` field is filled in from `node.id`.
    pub result: TestResult,
}

/// One level of a suite path: what the JSON readers group tests under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SuiteSpec {
    pub name: String,
    pub kind: NodeKind,
    pub file: Option<String>,
    pub line: Option<u32>,
}

impl SuiteSpec {
    pub(crate) fn new(name: impl Into<String>, kind: NodeKind) -> Self {
        SuiteSpec {
            name: name.into(),
            kind,
            file: None,
            line: None,
        }
    }
}

/// Groups tests of a fully-read report into suites, keeping first-appearance
/// order, then sends the tree depth-first: each suite is declared before its
/// first child and closed (`SuiteDone`) after its last. Nodes are numbered in
/// the order they are sent, across every [`Grouper::emit`].
#[derive(Debug, Default)]
pub(crate) struct Grouper {
    root: Group,
    /// The last number given.
    numbered: u64,
}

#[derive(Debug, Default)]
struct Group {
    spec: Option<SuiteSpec>,
    children: Vec<Child>,
    /// Child suite name → index in `children`. FxHash: SipHash of a name
    /// per level and test was 62 M of the 2.21 G instructions of jest's
    /// 100,000-test JSON report.
    suites: FastMap<String, usize>,
}

#[derive(Debug)]
enum Child {
    Suite(Group),
    Test(Box<TestNode>),
}

impl Grouper {
    /// Adds a test (its `node.id`, `node.parent` are assigned on emit) under `path`.
    pub(crate) fn add(&mut self, path: &[SuiteSpec], test: TestNode) {
        let mut group = &mut self.root;
        for spec in path {
            let index = match group.suites.get(&spec.name) {
                Some(&i) => i,
                None => {
                    let child = Group {
                        spec: Some(spec.clone()),
                        ..Group::default()
                    };
                    group.children.push(Child::Suite(child));
                    group
                        .suites
                        .insert(spec.name.clone(), group.children.len() - 1);
                    group.children.len() - 1
                }
            };
            group = match &mut group.children[index] {
                Child::Suite(g) => g,
                Child::Test(_) => unreachable!("suites index only suites"),
            };
        }
        group.children.push(Child::Test(Box::new(test)));
    }

    /// Sends everything added since the last call, depth-first, and
    /// forgets it. Nodes are numbered in that order: unique whatever the
    /// names, and short whatever the depth. A loop with a stack rather than
    /// a recursion: a report may nest suites thousands deep.
    pub(crate) fn emit(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        let root = std::mem::take(&mut self.root);
        let numbered = &mut self.numbered;
        // The children still to send of each open suite, and its id.
        let mut stack = vec![(root.children.into_iter(), None::<String>)];
        // The id of the last test sent, and its number: the next test's id
        // is written over it (mostly by counting it up), and a test borrows
        // its suite's id as its parent, instead of two new strings a test
        // (jest's report 1.77 → 1.73 G instructions).
        let (mut test_id, mut held) = (String::new(), None);
        while let Some((children, suite)) = stack.last_mut() {
            match children.next() {
                Some(Child::Suite(group)) => {
                    let spec = group.spec.expect("non-root groups have a spec");
                    *numbered += 1;
                    let id = out.numbered_id(*numbered);
                    out.send(TestEvent::Suite(crate::event::Node {
                        id: id.clone(),
                        parent: suite.clone(),
                        name: spec.name,
                        kind: spec.kind,
                        file: spec.file,
                        line: spec.line,
                        ..Default::default()
                    }))?;
                    stack.push((group.children.into_iter(), Some(id)));
                }
                Some(Child::Test(mut test)) => {
                    *numbered += 1;
                    out.numbered_id_into(*numbered, &mut test_id, held);
                    held = Some(*numbered);
                    std::mem::swap(&mut test.node.id, &mut test_id);
                    test.node.parent = suite.take();
                    test.node.kind = NodeKind::Test;
                    out.test(&test)?;
                    std::mem::swap(&mut test.node.id, &mut test_id);
                    *suite = test.node.parent.take();
                }
                None => {
                    if let Some((_, Some(id))) = stack.pop() {
                        out.send(TestEvent::SuiteDone { id })?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// Whole milliseconds from a float amount of `unit_ms` (1 for ms, 1000 for
/// seconds), truncated. Negative, NaN or absurd values give `None`.
pub(crate) fn to_ms(value: f64, unit_ms: f64) -> Option<u64> {
    let ms = value * unit_ms;
    // The epsilon keeps 0.009 s from becoming 8 ms through binary rounding.
    if (0.0..1e15).contains(&ms) {
        Some((ms + 1e-6).floor() as u64)
    } else {
        None
    }
}

/// A line number from a foreign report, shifted by `add` (1 for 0-based
/// sources); 0 or out-of-range results give `None`.
pub(crate) fn line(value: Option<f64>, add: u32) -> Option<u32> {
    let v = value?;
    if !v.is_finite() || v < 0.0 || v > f64::from(u32::MAX - add) {
        return None;
    }
    let line = v as u32 + add;
    (line > 0).then_some(line)
}

/// The part of a failure text before its first stack frame (`    at f (x:1:2)`
/// or ` ❯ file:1:2`), as JetBrains splits jest messages; the rest is the stack.
pub(crate) fn split_stack(text: &str) -> (String, Option<String>) {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("at ") || trimmed.starts_with("❯ ") {
            let head = text[..offset].trim_end().to_string();
            let stack = text[offset..].trim_end().to_string();
            if head.is_empty() {
                break;
            }
            return (head, Some(stack));
        }
        offset += line.len();
    }
    (text.trim_end().to_string(), None)
}

/// Appends `text` to `details` as a paragraph of its own (after a blank
/// line when there is text already).
pub(crate) fn add_paragraph(details: &mut Option<String>, text: &str) {
    let details = details.get_or_insert_with(String::new);
    if !details.is_empty() {
        details.push_str("\n\n");
    }
    details.push_str(text);
}

/// Non-empty, trimmed text, or `None`.
pub(crate) fn non_empty(text: Option<&str>) -> Option<String> {
    text.map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_ms_truncates_and_survives_rounding() {
        assert_eq!(to_ms(0.009, 1000.0), Some(9));
        assert_eq!(to_ms(0.0025, 1000.0), Some(2));
        assert_eq!(to_ms(4.115451, 1.0), Some(4));
        assert_eq!(to_ms(-1.0, 1.0), None);
        assert_eq!(to_ms(f64::NAN, 1.0), None);
    }

    #[test]
    fn split_stack_keeps_diffs_whole() {
        let text = "Error: expect(received).toEqual(expected)\n\n- Expected\n+ Received\n\n    \"a\": 1,\n    at Object.toBe (/a.js:1:2)\n    at x (/b.js:3:4)";
        let (head, stack) = split_stack(text);
        assert!(head.ends_with("\"a\": 1,"), "{head}");
        assert_eq!(
            stack.as_deref(),
            Some("    at Object.toBe (/a.js:1:2)\n    at x (/b.js:3:4)")
        );
        assert_eq!(split_stack("plain"), ("plain".to_string(), None));
    }

    #[test]
    fn numbered_ids_are_prefixed_decimals() {
        let mut sink = Vec::new();
        let out = Emitter::new(&mut sink, "3:");
        assert_eq!(out.numbered_id(0), "3:0");
        assert_eq!(out.numbered_id(7), "3:7");
        assert_eq!(out.numbered_id(u64::MAX), format!("3:{}", u64::MAX));
        // Written over the id of the number before, or of another.
        let mut id = String::new();
        let mut held = None;
        for n in (0..1_200).chain([
            9_999,
            10_000,
            10_001,
            99_999,
            100_000,
            u64::MAX - 1,
            u64::MAX,
        ]) {
            out.numbered_id_into(n, &mut id, held);
            assert_eq!(id, format!("3:{n}"));
            held = Some(n);
        }
        // An id taken away (a test sent with its output), or another number.
        id.clear();
        out.numbered_id_into(8, &mut id, Some(7));
        assert_eq!(id, "3:8");
        out.numbered_id_into(20, &mut id, Some(8));
        assert_eq!(id, "3:20");
    }

    #[test]
    fn serde_positions_are_split_off() {
        let err = serde_json::from_str::<serde_json::Value>("{\n  \"a\": ").unwrap_err();
        let ReadError::Malformed {
            line,
            column,
            problem,
        } = ReadError::from_json(err)
        else {
            panic!("not malformed")
        };
        assert_eq!((line, column), (2, 7));
        assert_eq!(problem, "EOF while parsing a value");
    }
}
