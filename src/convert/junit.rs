//! JUnit XML reports, read as a stream: events go out as each `</testcase>`
//! closes, one reused buffer holds the current XML event, and only the current
//! test case and the open suites are kept, so memory stays flat in the number
//! of tests (a single test's output or failure text is held whole).
//!
//! Shapes read (checked against pytest 9.2.0 `--junitxml` in its default
//! xunit2 and in xunit1 with `junit_logging=all`, vitest 5.1.1
//! `--reporter=junit`, the jest-junit 16 defaults and Maven Surefire 3; the
//! gtest, PHPUnit 10 and mocha-junit-reporter shapes as their docs show them):
//!
//! - `<testsuites>` is the anonymous root and is skipped (so is one nested in
//!   it, as report aggregators write, and pytest's outermost
//!   `<testsuite name="pytest">`, so the tree matches a live run's); every
//!   `<testsuite name>` is a suite, nested `<testsuite>`s (Surefire, some
//!   aggregators) nest; a file whose root is a lone `<testsuite>` works too.
//! - `<testcase classname name time file line>`: a dotted identifier
//!   `classname` (pytest `tests.test_a.TestX`, Java `com.x.FooTest`) becomes
//!   one nested suite per part; a classname that is a file path
//!   (vitest `math.test.js`), equal to its suite's or test's name (Surefire's
//!   suite per class, jest-junit's `{classname} {title}`), or not a dotted
//!   identifier stays one suite or none; a classname that starts with its
//!   suite's name and a dot (`pkg` → `pkg.FooTest`) adds only the rest, and
//!   so does one that goes on with a `$` (Surefire 3.0.0-M4 to 3.5.2 write a
//!   `@Nested` class `pkg.Outer$Inner`'s cases in `pkg.Outer`: `Inner`). A
//!   classname that is the last words of the test's name (mocha-junit-reporter:
//!   the title, of the full title, or with `testCaseSwitchClassnameAndName`
//!   the full title of the title), that names an enclosing suite with other
//!   separators, or that is the front of the innermost suite's name (PHPUnit:
//!   `Tests.FooTest` in `Tests\FooTest` and `Tests\FooTest::testData`) or its
//!   back after a dot (mocha-junit-reporter's `jenkinsMode`: `Outer.inner` in
//!   `Root Suite.Outer.inner`) adds no suite.
//!   Under a classname that is a file path, a name holding ` > ` (vitest's
//!   describe titles and the test's, joined) nests: `outer > inner > passes`
//!   is test `passes` in suites `outer` and `inner`, as in a live run.
//!   For pytest (a suite named `pytest` or a `.py` file) the part before the
//!   first capitalised one is the module, a file suite named `<part>.py` (with
//!   the xunit1 `file`), and the parts before it are directory suites; with
//!   the xunit1 `file` (`Tests/test_x.py`) and a classname that starts with
//!   its dotted path (`Tests.test_x.lower_case`), the file's parts are the
//!   folders and module and the rest are classes, whatever their case.
//!   A classname that comes back after others (pytest-xdist writes cases in
//!   the order its workers finished them) goes back into its suite, which
//!   stays open until its `<testsuite>` ends (up to `PARKED_LIMIT` left
//!   behind at a time).
//! - `time` is seconds, truncated to whole ms; a decimal comma (`0,002`,
//!   `1.234,5`) is read as one, and `,` grouping thousands (`1,000.5`,
//!   `1,234`) as that ([`with_decimal_point`] has the rule). `line` is taken as 1-based except
//!   for pytest's xunit1 `.py` files, where it is the 0-based `def` line
//!   (unittest-xml-reporting's are 1-based: told apart by the `file` it
//!   writes on `<testsuite>`, which pytest does not).
//! - `<failure message type>` → failed (message = `message`, else `type`, else
//!   the text's first line; details = the text). `<error>` → error (pytest's
//!   `failed on setup with …` included). A case with both is failed once, the
//!   error appended to the details. `<skipped type="pytest.xfail">` → xfail,
//!   other `<skipped>` → skipped with `message` (or the text), and so is a
//!   case gtest marks `status="notrun"` (`DISABLED_`) or `result="skipped"`/
//!   `"suppressed"`.
//! - `<failure>`/`<error>` directly in a `<testsuite>` (Ant's
//!   XMLJUnitResultFormatter: a class-level error, counted as a test) → a
//!   failed/error test in that suite named by the element's `type`, else
//!   `suite failure`/`suite error`, with its message and text.
//! - `<system-out>`/`<system-err>` in a case → output of that test; at suite
//!   level → output of the suite (of the run if the suite had no test yet).
//! - A file tcrunner wrote (`--junit-xml`, root `<testsuites
//!   name="tcrunner">`) is read exactly, none of the rules above applying:
//!   a `<testsuite>`'s `package` is its folders (one suite each, shared by
//!   consecutive files of a folder), the rest of its name the file; a
//!   case's `name` is the titles below the file and its own, joined by
//!   ` > `, unless its `titles` property spells them out (a JSON array);
//!   `<testsuite name="tcrunner">` is the run, not a suite.
//! - Text, CDATA, predefined and numeric entities are decoded; an unknown
//!   entity or invalid UTF-8 keeps the raw text. `properties` and Surefire's
//!   `flakyFailure`/`rerunFailure` are ignored.
use std::io::{self, BufRead};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::common::{add_paragraph, line, non_empty, to_ms, Emitter, ReadError, TestNode};
use super::junit_fast::{self, attr_value, local_name, plain_millis, RawValue, Slot};
use super::position::Counted;
use super::pytest_json::COLLECTION_ERROR;
use crate::event::{Node, NodeKind, Outcome, Stream, TestEvent, TestResult};
use crate::hash::FastMap;
use crate::report::JUNIT_ROOT as TCRUNNER;

/// Reads one JUnit XML document, sending events as test cases close.
pub(crate) fn read<R: BufRead>(input: R, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    let mut reader = Reader::from_reader(Counted::new(input));
    let mut state = State::default();
    let result = state.run(&mut reader, out);
    match result {
        Ok(()) => Ok(()),
        Err(err @ ReadError::Output(_)) => Err(err),
        Err(err) => {
            // Close what is open so a later file starts from a clean tree.
            state.close_all(out)?;
            Err(err)
        }
    }
}

/// What an open element is, as far as the reader cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elem {
    Root,
    Suite,
    Case,
    Capture(Capture),
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capture {
    Failure,
    Error,
    Skipped,
    Out(Stream),
}

/// An open `<testsuite>` (or the document level, with no id).
#[derive(Debug, Default)]
struct Frame {
    id: Option<String>,
    name: String,
    pytest: bool,
    /// The `<testsuite>` has a `file`, which pytest never writes:
    /// unittest-xml-reporting does, and its `.py` cases' lines are 1-based.
    suite_file: bool,
    /// A test of this suite was sent, so the suite has started.
    started: bool,
    /// The open classname suites under this frame: (part, (number, id)).
    classes: Vec<(String, (u64, String))>,
    /// The `classname` that `classes` were opened for, when the next case
    /// with the same `classname` needs no change (consecutive cases of one
    /// class, the common case, skip splitting it again).
    classes_of: Option<ClassOf>,
    /// Classname suites that left `classes` but are not done: by their path
    /// (parts joined by `\u{1f}`), their number and id. A later case of the
    /// same class goes back into its suite, so cases written in the order
    /// parallel workers finished them (pytest-xdist's) give each class one
    /// suite. Done when the `<testsuite>` ends, or [`PARKED_LIMIT`] at a time.
    parked: FastMap<String, (u64, String)>,
}

/// A `classname` that the open classname suites of a frame were opened
/// for, and what the reader asks of it for every case, found once.
#[derive(Debug)]
struct ClassOf {
    classname: String,
    /// Where [`own_classname`] is in it.
    own: std::ops::Range<usize>,
    /// [`is_file_path`] of it.
    file_path: bool,
    /// It is ASCII with no `&` and neither quote: its own raw value, which
    /// the next case's is compared with whole ([`junit_fast::empty_testcase`]).
    plain: bool,
}

impl ClassOf {
    fn new(classname: &str, suite: &str) -> Self {
        let own = own_classname(classname, suite);
        // `own` is a part of `classname`.
        let start = own.as_ptr() as usize - classname.as_ptr() as usize;
        ClassOf {
            classname: classname.to_string(),
            own: start..start + own.len(),
            file_path: is_file_path(classname),
            plain: classname
                .bytes()
                .all(|b| b.is_ascii() && !matches!(b, b'&' | b'"' | b'\'')),
        }
    }
}

/// The name of the test for an `<error>` with no `type` directly in a
/// `<testsuite>`.
const SUITE_ERROR: &str = "suite error";
/// The name of the test for a `<failure>` with no `type` directly in a
/// `<testsuite>`.
const SUITE_FAILURE: &str = "suite failure";

/// Parked classname suites per `<testsuite>` before they are all done: the
/// memory a file of ever-new classnames may hold.
const PARKED_LIMIT: usize = 1024;

/// A problem element (`failure`, `error`, `skipped`) of a case.
#[derive(Debug, Default)]
struct Problem {
    message: Option<String>,
    kind: Option<String>,
    text: String,
}

#[derive(Debug, Default)]
struct Case {
    name: String,
    classname: String,
    duration_ms: Option<u64>,
    file: Option<String>,
    line: Option<f64>,
    /// gtest's `status="notrun"` (a `DISABLED_` test) or
    /// `result="suppressed"`/`"skipped"`: skipped with no `<skipped>`.
    not_run: bool,
    // Boxed: most cases have none, and a case is moved a few times.
    failure: Option<Box<Problem>>,
    error: Option<Box<Problem>>,
    skipped: Option<Box<Problem>>,
    output: Vec<(Stream, String)>,
    /// A tcrunner file's `titles` property: the suites' titles below the
    /// `<testsuite>` and the test's name, as a JSON array, written when
    /// one of them holds ` > ` itself.
    titles: Option<String>,
}

impl Case {
    /// Makes this a case with no attributes, keeping its name buffers. The
    /// problems and output that only elements inside a case add are taken
    /// when it is sent.
    fn reset(&mut self) {
        self.name.clear();
        self.classname.clear();
        self.duration_ms = None;
        self.file = None;
        self.line = None;
        self.not_run = false;
    }

    /// Takes one `<testcase>` attribute, by qualified name and raw value.
    fn set(&mut self, key: &[u8], raw: RawValue<'_>) {
        // A name without a prefix, the usual one, is its own local name:
        // no need to look for a `:` in it (none of these names has one).
        if let Some(slot) = Slot::of(key).or_else(|| Slot::of(local_name(key))) {
            self.set_slot(slot, raw);
        }
    }

    /// Takes one `<testcase>` attribute, by what it is and its raw value.
    fn set_slot(&mut self, slot: Slot, raw: RawValue<'_>) {
        let value = raw.decode();
        match slot {
            Slot::Name => {
                self.name.clear();
                self.name.push_str(&value);
            }
            Slot::Classname => {
                self.classname.clear();
                self.classname.push_str(&value);
            }
            Slot::Time => self.duration_ms = seconds(&value),
            Slot::File => self.file = Some(value.into_owned()).filter(|f| !f.is_empty()),
            Slot::Line => self.line = value.trim().parse().ok(),
            Slot::Status => {
                let value = value.trim();
                self.not_run |= ["notrun", "suppressed", "skipped", "disabled"]
                    .iter()
                    .any(|v| value.eq_ignore_ascii_case(v));
            }
        }
    }
}

#[derive(Debug, Default)]
struct State {
    elems: Vec<Elem>,
    frames: Vec<Frame>,
    case: Option<Case>,
    /// The element being captured and its text so far.
    capture: Option<(Capture, Problem)>,
    next_id: u64,
    seen_root: bool,
    /// `<testsuites name="pytest tests">`.
    pytest_root: bool,
    /// `<testsuites name="tcrunner">`: a file tcrunner wrote
    /// (`--junit-xml`), whose tree is spelled out exactly.
    tcrunner: bool,
    /// In a tcrunner file: the open folder suites above the `<testsuite>`s
    /// (their `package`), as (name, id).
    folders: Vec<(String, String)>,
    /// The last sent case's `classname`, kept for its buffer.
    spare_classname: String,
    /// A buffer for the next case's `name`.
    spare_name: String,
    /// The test being sent, filled in over the buffers of the one before.
    test: TestNode,
    /// The number whose id `test.node.id` holds.
    test_id: Option<u64>,
    /// Bytes read past quick-xml (plain empty test cases, taken directly);
    /// added to its positions to give positions in the file.
    skipped: u64,
    /// quick-xml's last event was markup, so it would read text next: the
    /// place where a plain empty `<testcase/>` may be taken directly.
    after_markup: bool,
    /// A failed case not sent yet: pytest writes a test whose call failed
    /// and whose teardown failed too as two cases, the second right after
    /// the first ([`is_teardown_of`]), and a live run shows one test.
    held: Option<Case>,
}

impl State {
    fn run<R: BufRead>(
        &mut self,
        reader: &mut Reader<Counted<R>>,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        self.frames.push(Frame::default());
        let mut buf = Vec::with_capacity(64 * 1024);
        // The plain empty test cases, read one after another over the same
        // buffers.
        let mut plain = Case::default();
        loop {
            if self.after_markup
                && self.capture.is_none()
                && matches!(self.elems.last(), Some(Elem::Root | Elem::Suite))
            {
                // Most test cases are one plainly written empty element:
                // read here, they cost a fraction of what quick-xml's events
                // (whitespace text, then the element) cost. quick-xml would
                // read the same, and the text is ignored at this level.
                let counted = reader.get_mut();
                plain.reset();
                // Most cases have the classname of the case before.
                let classname = (self.frames.last())
                    .and_then(|frame| frame.classes_of.as_ref())
                    .filter(|of| of.plain)
                    .map_or(&b""[..], |of| of.classname.as_bytes());
                let buffered = counted.buffered();
                let read =
                    junit_fast::empty_testcase(buffered, classname, |key, slot, raw| match slot {
                        Some(slot) => plain.set_slot(slot, raw),
                        None => plain.set(key, raw),
                    });
                if let Some(len) = read {
                    counted.consume(len);
                    self.skipped += len as u64;
                    // What opening and closing the element do.
                    self.send_case(&mut plain, out)?;
                    continue;
                }
            }
            buf.clear();
            let before = reader.buffer_position() + self.skipped;
            let event = match reader.read_event_into(&mut buf) {
                Ok(event) => event,
                Err(quick_xml::Error::Io(err)) => {
                    return Err(ReadError::Io(io::Error::new(err.kind(), err.to_string())))
                }
                Err(err) => {
                    let pos = reader.error_position() + self.skipped;
                    return Err(malformed(reader, pos, err.to_string()));
                }
            };
            self.after_markup = !matches!(event, Event::Text(_));
            match event {
                Event::Start(e) => {
                    let elem = self.open(&e, out, reader)?;
                    self.elems.push(elem);
                }
                Event::Empty(e) => {
                    let elem = self.open(&e, out, reader)?;
                    self.close(elem, out)?;
                }
                Event::End(_) => {
                    let elem = self.elems.pop().unwrap_or(Elem::Other);
                    self.close(elem, out)?;
                }
                Event::Text(e) => {
                    if let Some((_, problem)) = &mut self.capture {
                        match e.unescape() {
                            Ok(text) => problem.text.push_str(&text),
                            Err(_) => problem.text.push_str(&String::from_utf8_lossy(&e)),
                        }
                    } else if !self.seen_root && !e.iter().all(u8::is_ascii_whitespace) {
                        let problem = "text before the root element".to_string();
                        return Err(malformed(reader, before, problem));
                    }
                }
                Event::CData(e) => {
                    if let Some((_, problem)) = &mut self.capture {
                        problem.text.push_str(&String::from_utf8_lossy(&e));
                    }
                }
                Event::Eof => {
                    self.send_held(out)?;
                    let pos = reader.buffer_position() + self.skipped;
                    if let Some(elem) = self.elems.last() {
                        let name = match elem {
                            Elem::Root => "the root element",
                            Elem::Suite => "<testsuite>",
                            Elem::Case => "<testcase>",
                            _ => "an element",
                        };
                        let problem = format!("unexpected end of file inside {name}");
                        return Err(malformed(reader, pos, problem));
                    }
                    if !self.seen_root {
                        let problem = "no <testsuites> or <testsuite> element".to_string();
                        return Err(malformed(reader, pos, problem));
                    }
                    return Ok(());
                }
                Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            }
        }
    }

    /// An empty case, with the name buffers of earlier ones.
    fn new_case(&mut self) -> Case {
        let mut classname = std::mem::take(&mut self.spare_classname);
        classname.clear();
        let mut name = std::mem::take(&mut self.spare_name);
        name.clear();
        Case {
            classname,
            name,
            ..Case::default()
        }
    }

    /// Keeps the name buffers of a case that is done with.
    fn recycle(&mut self, case: Case) {
        self.spare_classname = case.classname;
        self.spare_name = case.name;
    }

    /// A case from the attribute text of its `<testcase>`, if every
    /// attribute is plainly written ([`junit_fast::plain_attributes`]).
    fn plain_case(&mut self, attrs: &[u8]) -> Option<Case> {
        let mut case = self.new_case();
        if junit_fast::plain_attributes(attrs, |key, raw| case.set(key, raw)) {
            return Some(case);
        }
        self.recycle(case);
        None
    }

    /// Handles an opening tag.
    fn open<R: BufRead>(
        &mut self,
        e: &BytesStart<'_>,
        out: &mut Emitter<'_>,
        reader: &Reader<Counted<R>>,
    ) -> Result<Elem, ReadError> {
        let tag = local_name(e.name().into_inner());
        let parent = self.elems.last().copied();
        if !self.seen_root {
            self.seen_root = true;
            match tag {
                b"testsuites" => {
                    let name = attr(e, b"name");
                    self.pytest_root = name.as_deref().is_some_and(|n| n.starts_with("pytest"));
                    self.tcrunner = name.as_deref() == Some(TCRUNNER);
                    return Ok(Elem::Root);
                }
                b"testsuite" | b"testcase" => {}
                other => {
                    let name = String::from_utf8_lossy(other);
                    let problem = format!("expected <testsuites> or <testsuite>, found <{name}>");
                    let pos = reader.buffer_position() + self.skipped;
                    return Err(malformed(reader, pos, problem));
                }
            }
        }
        Ok(match (parent, tag) {
            // Some aggregators nest whole reports: an inner root is transparent.
            (Some(Elem::Root), b"testsuites") => Elem::Root,
            (None | Some(Elem::Root | Elem::Suite), b"testsuite") => {
                self.send_held(out)?;
                let [name, file, package] = attrs(e, [b"name", b"file", b"package"]);
                let mut name = name.unwrap_or_else(|| "testsuite".to_string());
                if self.tcrunner && self.frames.len() == 1 {
                    let package = package.as_deref().filter(|p| !p.is_empty());
                    self.sync_folders(package, out)?;
                    if let Some(own) = package
                        .and_then(|p| name.strip_prefix(p))
                        .and_then(|rest| rest.strip_prefix('/'))
                    {
                        name = own.to_string();
                    }
                }
                let frame = self
                    .frames
                    .last()
                    .expect("the document frame is never popped");
                let pytest =
                    !self.tcrunner && (self.pytest_root || frame.pytest || name == "pytest");
                let suite_file = file.is_some();
                // pytest's one `<testsuite name="pytest">` is the run, not a
                // suite: a live run's tree starts at the folders below it.
                // So is the one tcrunner writes for the run's own notes and
                // for tests no file holds.
                let run_suite = match self.tcrunner {
                    true => name == TCRUNNER,
                    false => name == "pytest",
                };
                let id = if run_suite && frame.id.is_none() {
                    None
                } else {
                    let id = self.next_id(out);
                    // A tcrunner file's `<testsuite>` under the document is a
                    // file (or top-level) node, under its folders.
                    let outermost = self.tcrunner && self.frames.len() == 1;
                    let node = Node {
                        id: id.clone(),
                        parent: self.parent_id().cloned().or_else(|| {
                            outermost
                                .then(|| self.folders.last().map(|(_, id)| id.clone()))
                                .flatten()
                        }),
                        name: name.clone(),
                        kind: if outermost && file.is_some() {
                            NodeKind::File
                        } else {
                            NodeKind::Suite
                        },
                        file,
                        ..Node::default()
                    };
                    out.send(TestEvent::Suite(node))?;
                    Some(id)
                };
                let frame = Frame {
                    id,
                    name,
                    pytest,
                    suite_file,
                    ..Frame::default()
                };
                self.frames.push(frame);
                Elem::Suite
            }
            (None | Some(Elem::Root | Elem::Suite), b"testcase") => {
                // One pass over the attributes (one `attr` call each would
                // scan them five times per test case). Plainly written ones
                // (what JUnit writers write) are split directly; anything
                // else goes through quick-xml's iterator, with the same result.
                let case = match self.plain_case(e.attributes_raw()) {
                    Some(case) => case,
                    None => {
                        let mut case = self.new_case();
                        for a in e.attributes().with_checks(false).flatten() {
                            case.set(a.key.into_inner(), RawValue::new(&a.value));
                        }
                        case
                    }
                };
                self.case = Some(case);
                Elem::Case
            }
            (Some(Elem::Other), b"property") if self.tcrunner && self.case.is_some() => {
                let [name, value] = attrs(e, [b"name", b"value"]);
                if let (Some("titles"), Some(case)) = (name.as_deref(), self.case.as_mut()) {
                    case.titles = value;
                }
                Elem::Other
            }
            (Some(Elem::Case), b"failure" | b"error" | b"skipped")
            | (Some(Elem::Suite), b"failure" | b"error")
            | (Some(Elem::Case | Elem::Suite), b"system-out" | b"system-err") => {
                let capture = match tag {
                    b"failure" => Capture::Failure,
                    b"error" => Capture::Error,
                    b"skipped" => Capture::Skipped,
                    b"system-out" => Capture::Out(Stream::Stdout),
                    _ => Capture::Out(Stream::Stderr),
                };
                let [message, kind] = attrs(e, [b"message", b"type"]);
                let problem = Problem {
                    message,
                    kind,
                    text: String::new(),
                };
                self.capture = Some((capture, problem));
                Elem::Capture(capture)
            }
            _ => Elem::Other,
        })
    }

    fn close(&mut self, elem: Elem, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        match elem {
            Elem::Root => self.sync_folders(None, out)?,
            Elem::Other => {}
            Elem::Capture(capture) => {
                let Some((_, problem)) = self.capture.take() else {
                    return Ok(());
                };
                if self.case.is_none() {
                    self.send_held(out)?;
                }
                match (capture, &mut self.case) {
                    (Capture::Out(stream), Some(case)) => case.output.push((stream, problem.text)),
                    (Capture::Out(stream), None) => {
                        let frame = self.frames.last().expect("document frame");
                        let id = if frame.started {
                            frame.id.clone()
                        } else {
                            None
                        };
                        if !problem.text.trim().is_empty() {
                            out.send(TestEvent::Output {
                                id,
                                stream,
                                text: problem.text,
                            })?;
                        }
                    }
                    (Capture::Failure, Some(case)) => add_problem(&mut case.failure, problem),
                    (Capture::Error, Some(case)) => add_problem(&mut case.error, problem),
                    (Capture::Skipped, Some(case)) => add_problem(&mut case.skipped, problem),
                    (Capture::Failure | Capture::Error, None) => {
                        self.send_suite_problem(capture == Capture::Error, problem, out)?
                    }
                    (Capture::Skipped, None) => {}
                }
            }
            Elem::Case => {
                if let Some(mut case) = self.case.take() {
                    self.send_case(&mut case, out)?;
                    self.recycle(case);
                }
            }
            Elem::Suite => {
                self.send_held(out)?;
                let frame = self.frames.pop().expect("a suite element has a frame");
                close_frame(frame, out)?;
            }
        }
        Ok(())
    }

    fn next_id(&mut self, out: &Emitter<'_>) -> String {
        self.next_id += 1;
        out.numbered_id(self.next_id)
    }

    fn parent_id(&self) -> Option<&String> {
        parent_id(&self.frames)
    }

    /// Sends a closed case, taking what it holds but its name buffers; a
    /// failed one is held until the next case shows whether it is that
    /// test's teardown error.
    fn send_case(&mut self, case: &mut Case, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        if self.held.is_some() {
            if self.add_teardown(case) {
                return self.send_held(out);
            }
            self.send_held(out)?;
        }
        if case.failure.is_some() && case.error.is_none() && !self.tcrunner {
            self.held = Some(std::mem::take(case));
            return Ok(());
        }
        self.send_now(case, out)
    }

    /// Adds `case` to the held one if it is that test's teardown error.
    #[cold]
    fn add_teardown(&mut self, case: &mut Case) -> bool {
        let Some(held) = self.held.as_mut().filter(|held| is_teardown_of(case, held)) else {
            return false;
        };
        held.error = case.error.take();
        held.duration_ms = match (held.duration_ms, case.duration_ms) {
            (Some(call), Some(teardown)) => Some(call + teardown),
            (call, teardown) => call.or(teardown),
        };
        held.output.append(&mut case.output);
        true
    }

    /// Sends the held failed case, if any.
    fn send_held(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        match self.held.take() {
            Some(mut held) => {
                let sent = self.send_now(&mut held, out);
                self.recycle(held);
                sent
            }
            None => Ok(()),
        }
    }

    /// Sends a case now, taking what it holds but its name buffers.
    fn send_now(&mut self, case: &mut Case, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        collection_error(case);
        let frame_index = self.frames.len() - 1;
        if self.tcrunner {
            return self.send_tcrunner(case, frame_index, out);
        }
        let pytest = self.frames[frame_index].pytest
            || case.file.as_deref().is_some_and(|f| f.ends_with(".py"));
        let frame = &self.frames[frame_index];
        // Most cases have the classname of the case before: what is asked
        // of it was found for that one.
        let class_of = frame
            .classes_of
            .as_ref()
            .filter(|of| of.classname == case.classname);
        let (own, file_path) = match class_of {
            Some(of) => (&case.classname[of.own.clone()], of.file_path),
            None => (
                own_classname(&case.classname, &frame.name),
                is_file_path(&case.classname),
            ),
        };
        let names_itself = names_the_test(own, &frame.name, &case.name);
        // vitest names a test by its describe blocks' titles and its own,
        // joined by ` > `, under its file as the classname: the titles nest,
        // as they do in a live run and in vitest's JSON.
        let titles_end = (!pytest && file_path)
            .then(|| case.name.rfind(" > "))
            .flatten();
        if titles_end.is_some() || names_itself || class_of.is_none() {
            let mut parts = if names_itself || names_a_suite(&case.classname, &self.frames) {
                Vec::new()
            } else {
                class_parts(&case.classname, &frame.name)
            };
            if let Some(end) = titles_end {
                parts.extend(case.name[..end].split(" > "));
            }
            let file = case.file.as_deref().filter(|_| pytest);
            let module_end = pytest.then(|| pytest_module_end(&case.classname, &parts, file));
            self.sync_classes(frame_index, &parts, module_end, file, out)?;
            // The same parts for the next case with this classname, unless
            // they depend on the case's own name.
            let frame = &mut self.frames[frame_index];
            frame.classes_of = (!names_itself && titles_end.is_none())
                .then(|| ClassOf::new(&case.classname, &frame.name));
        }
        if let Some(end) = titles_end {
            case.name.drain(..end + " > ".len());
        }
        self.frames[frame_index].started = true;
        let py_file = pytest
            && !self.frames[frame_index].suite_file
            && case.file.as_deref().is_some_and(|f| f.ends_with(".py"));
        self.send_test(case, py_file, out)
    }

    /// A case of a tcrunner file: its `name` is the titles of the suites
    /// between its `<testsuite>` and the test, and its own, joined by
    /// ` > ` (or, when a title holds ` > `, its `titles` property); its
    /// `classname` only repeats the `<testsuite>`'s name.
    fn send_tcrunner(
        &mut self,
        case: &mut Case,
        frame_index: usize,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        let titles: Option<Vec<String>> = case
            .titles
            .take()
            .and_then(|json| serde_json::from_str(&json).ok())
            .filter(|titles: &Vec<String>| !titles.is_empty());
        if let Some(mut titles) = titles {
            case.name = titles.pop().expect("not empty");
            let parts: Vec<&str> = titles.iter().map(String::as_str).collect();
            self.sync_classes(frame_index, &parts, None, None, out)?;
        } else {
            let titles_end = case.name.rfind(" > ");
            let parts: Vec<&str> = match titles_end {
                Some(end) => case.name[..end].split(" > ").collect(),
                None => Vec::new(),
            };
            self.sync_classes(frame_index, &parts, None, None, out)?;
            if let Some(end) = titles_end {
                case.name.drain(..end + " > ".len());
            }
        }
        self.frames[frame_index].classes_of = None;
        self.frames[frame_index].started = true;
        self.send_test(case, false, out)
    }

    /// Sends a case as a test under the innermost open suite; `py_file`:
    /// its `line` is pytest's 0-based one.
    fn send_test(
        &mut self,
        case: &mut Case,
        py_file: bool,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        let test = &mut self.test;
        let node = &mut test.node;
        out.numbered_id_into(self.next_id + 1, &mut node.id, self.test_id);
        self.next_id += 1;
        self.test_id = Some(self.next_id);
        match (&mut node.parent, parent_id(&self.frames)) {
            (Some(parent), Some(id)) => {
                parent.clear();
                parent.push_str(id);
            }
            (parent, id) => *parent = id.cloned(),
        }
        std::mem::swap(&mut node.name, &mut case.name);
        node.kind = NodeKind::Test;
        node.line = line(case.line, if py_file { 1 } else { 0 });
        node.file = case.file.take();
        test.output = std::mem::take(&mut case.output);
        let result = &mut test.result;
        *result = TestResult {
            duration_ms: case.duration_ms,
            ..TestResult::default()
        };
        if let Some(failure) = case.failure.take() {
            result.outcome = Outcome::Failed;
            let (message, mut details) = describe(*failure);
            if let Some(error) = case.error.take() {
                // Never two verdicts: a teardown error after a failure is context.
                let (error_message, error_details) = describe(*error);
                for part in [error_message, error_details].into_iter().flatten() {
                    add_paragraph(&mut details, &part);
                }
            }
            (result.message, result.details) = (message, details);
        } else if let Some(error) = case.error.take() {
            result.outcome = Outcome::Error;
            (result.message, result.details) = describe(*error);
        } else if let Some(skipped) = case.skipped.take() {
            let xfail = skipped.kind.as_deref() == Some("pytest.xfail");
            result.outcome = if xfail {
                Outcome::Xfail
            } else {
                Outcome::Skipped
            };
            let text = non_empty(Some(&skipped.text));
            result.message = non_empty(skipped.message.as_deref()).or_else(|| text.clone());
            result.details = text.filter(|t| Some(t) != result.message.as_ref());
        } else if case.not_run {
            result.outcome = Outcome::Skipped;
        }
        // Numbered here, the test's id is new (the file's prefix sets it
        // apart from other files').
        out.test(test)
    }

    /// A `<failure>` or `<error>` directly in a `<testsuite>` (Ant's
    /// XMLJUnitResultFormatter writes a class-level error there, such as a
    /// failed static initialiser, and counts it as a test): a test of its own
    /// in that suite, named by the element's `type`, else
    /// [`SUITE_ERROR`]/[`SUITE_FAILURE`], so the report's failure is not lost.
    fn send_suite_problem(
        &mut self,
        is_error: bool,
        problem: Problem,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        let frame_index = self.frames.len() - 1;
        // It belongs to the suite, not to the class of the case before it.
        self.sync_classes(frame_index, &[], None, None, out)?;
        let frame = &mut self.frames[frame_index];
        frame.classes_of = None;
        frame.started = true;
        let parent = frame.id.clone();
        let fallback = if is_error { SUITE_ERROR } else { SUITE_FAILURE };
        let name = non_empty(problem.kind.as_deref()).unwrap_or_else(|| fallback.to_string());
        let (message, details) = describe(problem);
        let node = Node {
            id: self.next_id(out),
            parent,
            name,
            kind: NodeKind::Test,
            ..Node::default()
        };
        let result = TestResult {
            outcome: if is_error {
                Outcome::Error
            } else {
                Outcome::Failed
            },
            message,
            details,
            ..TestResult::default()
        };
        out.test(&TestNode {
            node,
            result,
            ..TestNode::default()
        })
    }

    /// Makes the open classname suites of the frame equal `parts`; for
    /// pytest, the first `module_end` of them are folders and a module
    /// ([`pytest_module_end`]).
    fn sync_classes(
        &mut self,
        frame_index: usize,
        parts: &[&str],
        module_end: Option<usize>,
        file: Option<&str>,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        let frame = &mut self.frames[frame_index];
        let keep = frame
            .classes
            .iter()
            .zip(parts)
            .take_while(|((open, _), new)| open == *new);
        let keep = keep.count();
        while frame.classes.len() > keep {
            let path = class_path(&frame.classes);
            let (_, (n, id)) = frame.classes.pop().expect("len > keep");
            frame.parked.insert(path, (n, id));
        }
        if frame.parked.len() > PARKED_LIMIT {
            finish_parked(frame, out)?;
        }
        for (depth, part) in parts.iter().enumerate().skip(keep) {
            let frame = &mut self.frames[frame_index];
            if !frame.parked.is_empty() {
                let mut path = class_path(&frame.classes);
                if !path.is_empty() {
                    path.push('\u{1f}');
                }
                path.push_str(part);
                if let Some(suite) = frame.parked.remove(&path) {
                    frame.classes.push((part.to_string(), suite));
                    continue;
                }
            }
            let kind = match module_end {
                Some(end) if depth + 1 < end => NodeKind::Dir,
                Some(end) if depth + 1 == end => NodeKind::File,
                _ => NodeKind::Suite,
            };
            // Named as the live pytest tree names a module: by its file.
            let name = match kind {
                NodeKind::File => format!("{part}.py"),
                _ => part.to_string(),
            };
            let file = file.filter(|_| kind != NodeKind::Dir).map(str::to_string);
            self.next_id += 1;
            let id = out.numbered_id(self.next_id);
            let frame = &self.frames[frame_index];
            let parent = frame
                .classes
                .last()
                .map(|(_, (_, id))| id.clone())
                .or(frame.id.clone());
            let node = Node {
                id: id.clone(),
                parent,
                name,
                kind,
                file,
                ..Node::default()
            };
            out.send(TestEvent::Suite(node))?;
            self.frames[frame_index]
                .classes
                .push((part.to_string(), (self.next_id, id)));
        }
        Ok(())
    }

    /// After an error: closes every open suite, innermost first.
    fn close_all(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        self.send_held(out)?;
        while let Some(frame) = self.frames.pop() {
            close_frame(frame, out)?;
        }
        self.sync_folders(None, out)
    }

    /// In a tcrunner file: makes the open folder suites those of
    /// `package` (folder names joined by `/`), so that the files of one
    /// folder share its suite, as in a live run.
    fn sync_folders(
        &mut self,
        package: Option<&str>,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        let parts: Vec<&str> = package.map_or_else(Vec::new, |p| p.split('/').collect());
        let keep = self
            .folders
            .iter()
            .zip(&parts)
            .take_while(|((open, _), new)| open == *new)
            .count();
        while self.folders.len() > keep {
            let (_, id) = self.folders.pop().expect("longer than keep");
            out.send(TestEvent::SuiteDone { id })?;
        }
        for part in &parts[keep..] {
            let id = self.next_id(out);
            out.send(TestEvent::Suite(Node {
                id: id.clone(),
                parent: self.folders.last().map(|(_, id)| id.clone()),
                name: (*part).to_string(),
                kind: NodeKind::Dir,
                ..Node::default()
            }))?;
            self.folders.push(((*part).to_string(), id));
        }
        Ok(())
    }
}

/// The id of the innermost open suite: a classname suite, else the `<testsuite>`.
fn parent_id(frames: &[Frame]) -> Option<&String> {
    let frame = frames.last()?;
    frame
        .classes
        .last()
        .map(|(_, (_, id))| id)
        .or(frame.id.as_ref())
}

fn close_frame(mut frame: Frame, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    while let Some((_, (_, id))) = frame.classes.pop() {
        out.send(TestEvent::SuiteDone { id })?;
    }
    finish_parked(&mut frame, out)?;
    if let Some(id) = frame.id {
        out.send(TestEvent::SuiteDone { id })?;
    }
    Ok(())
}

/// Says every parked suite of `frame` is done, the latest opened first.
fn finish_parked(frame: &mut Frame, out: &mut Emitter<'_>) -> Result<(), ReadError> {
    let mut parked: Vec<(u64, String)> = frame.parked.drain().map(|(_, suite)| suite).collect();
    parked.sort_unstable_by_key(|&(n, _)| std::cmp::Reverse(n));
    for (_, id) in parked {
        out.send(TestEvent::SuiteDone { id })?;
    }
    Ok(())
}

/// The path of the innermost open classname suite: its parts joined by `\u{1f}`.
fn class_path(classes: &[(String, (u64, String))]) -> String {
    let mut path = String::new();
    for (i, (part, _)) in classes.iter().enumerate() {
        if i > 0 {
            path.push('\u{1f}');
        }
        path.push_str(part);
    }
    path
}

fn add_problem(slot: &mut Option<Box<Problem>>, problem: Problem) {
    match slot {
        None => *slot = Some(Box::new(problem)),
        Some(first) => {
            // A second <failure> in one case (some aggregators) adds to the first.
            let extra = [problem.message, non_empty(Some(&problem.text))];
            for part in extra.into_iter().flatten() {
                first.text.push_str("\n\n");
                first.text.push_str(&part);
            }
        }
    }
}

/// pytest's junitxml closes the case of a test whose call failed when its
/// teardown fails too, and writes the teardown's error as a second case of
/// the same name, right after it (apart from it only under pytest-xdist,
/// where other workers' cases may come between).
fn is_teardown_of(case: &Case, failed: &Case) -> bool {
    const PYTEST_PREFIX: &str = "failed on teardown with ";
    case.failure.is_none()
        && case.skipped.is_none()
        && case.error.as_ref().is_some_and(|error| {
            error
                .message
                .as_deref()
                .is_some_and(|m| m.starts_with(PYTEST_PREFIX))
        })
        && case.name == failed.name
        && case.classname == failed.classname
        && case.file == failed.file
}

/// Message and details of a problem element.
fn describe(problem: Problem) -> (Option<String>, Option<String>) {
    let details = trim_block(&problem.text);
    let message = non_empty(problem.message.as_deref())
        .or_else(|| non_empty(problem.kind.as_deref()))
        .or_else(|| details.as_deref().and_then(|d| non_empty(d.lines().next())));
    (message, details)
}

/// pytest writes a module it could not collect as a case named by the
/// module's dotted path, with no classname and an error `collection
/// failure`: made the `<collection error>` test of that module, as a live
/// run and pytest-json-report show it, with the exception's `E` line as its
/// message.
fn collection_error(case: &mut Case) {
    const PYTEST_MESSAGE: &str = "collection failure";
    let Some(error) = case.error.as_deref_mut() else {
        return;
    };
    if !case.classname.is_empty() || error.message.as_deref() != Some(PYTEST_MESSAGE) {
        return;
    }
    std::mem::swap(&mut case.classname, &mut case.name);
    case.name.push_str(COLLECTION_ERROR);
    if let Some(line) = error.text.lines().rev().find(|l| l.starts_with("E ")) {
        error.message = Some(line.trim_start_matches('E').trim().to_string());
    }
}

/// Text without leading blank lines and trailing whitespace; `None` if blank.
fn trim_block(text: &str) -> Option<String> {
    let start = text.find(|c: char| !c.is_whitespace())?;
    let start = text[..start].rfind('\n').map_or(0, |nl| nl + 1);
    Some(text[start..].trim_end().to_string())
}

/// `classname` without its `<testsuite>`'s name in front: Surefire names the
/// suite after the class, aggregators after the package, and Surefire
/// 3.0.0-M4 to 3.5.2 write the cases of a JUnit 5 `@Nested` class
/// `pkg.Outer$Inner` in `pkg.Outer`'s suite, where it is `Inner`.
fn own_classname<'c>(classname: &'c str, suite: &str) -> &'c str {
    let classname = trim(classname);
    classname
        .strip_prefix(suite)
        .and_then(|r| r.strip_prefix('.').or_else(|| r.strip_prefix('$')))
        .unwrap_or(classname)
}

/// `text.trim()`, without its search for Unicode whitespace at both ends
/// when they are plainly not whitespace, as in nearly every classname (this
/// runs for every test case).
fn trim(text: &str) -> &str {
    match text.as_bytes() {
        [first, .., last] if first.is_ascii_graphic() && last.is_ascii_graphic() => text,
        _ => text.trim(),
    }
}

/// Whether the classname whose [`own_classname`] is `own` is the test's
/// own name (so it adds no suite):
/// equal to it (jest-junit's `{classname} {title}` for both), or its last
/// words (mocha-junit-reporter's title as the classname of its full title),
/// or the suite's name, a space and the test's name
/// (mocha-junit-reporter's `testCaseSwitchClassnameAndName`: the full
/// title as the classname of the title).
fn names_the_test(own: &str, suite: &str, test: &str) -> bool {
    let ends_with_words = |text: &str, words: &str| {
        !words.is_empty()
            && text
                .strip_suffix(words)
                .is_some_and(|front| front.ends_with(' '))
    };
    // Nearly always, neither ends with a space and the other: then neither
    // need be compared with the other's end.
    let space_before = |text: &str, end: &str| {
        text.len()
            .checked_sub(end.len() + 1)
            .is_some_and(|at| text.as_bytes()[at] == b' ')
    };
    if own.len() != test.len() && !space_before(test, own) && !space_before(own, test) {
        return false;
    }
    own == test
        || ends_with_words(test, own)
        || own
            .strip_suffix(test)
            .and_then(|front| front.strip_suffix(' '))
            .is_some_and(|front| front == suite || ends_with_words(front, suite))
}

/// Whether the `classname` names an enclosing `<testsuite>` with other
/// separators (PHPUnit and gtest suites are `Tests\FooTest` or `Foo::Bar`
/// where the classname has dots), or is the front of the innermost one's
/// name (PHPUnit's data-provider suite `Tests\FooTest::testData`) or its
/// back after a dot (mocha-junit-reporter's full suite titles).
fn names_a_suite(classname: &str, frames: &[Frame]) -> bool {
    let dotted = |name: &str| name.trim().replace("::", ".").replace(['\\', '/'], ".");
    let class = dotted(classname);
    if class.is_empty() {
        return false;
    }
    let mut names = frames
        .iter()
        .filter(|f| f.id.is_some())
        .map(|f| dotted(&f.name));
    let innermost = names.next_back();
    innermost.as_deref().is_some_and(|n| {
        n.strip_prefix(&class)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            // mocha-junit-reporter's jenkinsMode: `Root Suite.Outer.inner`
            // holds cases of class `Outer.inner`.
            || n.strip_suffix(&class).is_some_and(|rest| rest.ends_with('.'))
    }) || names.any(|n| n == class)
}

/// The suites a `classname` adds under its `<testsuite>`.
fn class_parts<'c>(classname: &'c str, suite: &str) -> Vec<&'c str> {
    let classname = own_classname(classname, suite);
    if classname.is_empty() || classname == suite {
        return Vec::new();
    }
    let is_path = is_file_path(classname);
    let identifier = |part: &str| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
            && part
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    if !is_path && classname.split('.').all(identifier) {
        classname.split('.').collect()
    } else {
        vec![classname]
    }
}

/// How many of a pytest classname's `parts` are its folders and module
/// (`pkg.module.Class.Inner`). With the xunit1 `file`, when the classname
/// starts with its dotted path (`Tests/test_x.py`, `Tests.test_x`), those;
/// else up to the last part before the first capitalised one, which is
/// wrong for a capitalised folder or a lowercase class, so the file decides
/// when there is one. `parts` may lack the front of the classname its
/// `<testsuite>` is named by. Runs only when the classname changes.
fn pytest_module_end(classname: &str, parts: &[&str], file: Option<&str>) -> usize {
    if let Some(end) = file.and_then(|f| file_module_end(classname.trim(), f)) {
        let left_out = classname
            .trim()
            .split('.')
            .count()
            .saturating_sub(parts.len());
        return end.saturating_sub(left_out);
    }
    let first_class = parts.iter().position(|p| p.starts_with(char::is_uppercase));
    first_class.unwrap_or(parts.len()).max(1)
}

/// How many parts of `classname` are the dotted path of the `.py` `file`
/// (`tests/test_a.py` in `tests.test_a.TestX`: 2), if it starts with it.
fn file_module_end(classname: &str, file: &str) -> Option<usize> {
    let module = file.strip_suffix(".py")?;
    let mut class = classname.split('.');
    let mut end = 0;
    for dir in module.split(['/', '\\']) {
        if dir.is_empty() || dir == "." {
            continue;
        }
        if class.next() != Some(dir) {
            return None;
        }
        end += 1;
    }
    (end > 0).then_some(end)
}

/// Whether a classname is a file's path (vitest's `math.test.js`).
fn is_file_path(classname: &str) -> bool {
    const FILE_EXTENSIONS: &[&str] = &[
        "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte", "py", "rb", "go",
        "java", "kt", "cs", "php", "rs",
    ];
    classname.contains(['/', '\\'])
        || classname
            .rsplit_once('.')
            .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext))
}

/// The first value of each attribute of `keys` ([`attr`]), in one pass:
/// plainly written attributes split directly
/// ([`junit_fast::plain_attributes`]), others by quick-xml's iterator.
fn attrs<const N: usize>(e: &BytesStart<'_>, keys: [&[u8]; N]) -> [Option<String>; N] {
    let mut found = [const { None }; N];
    let take = |found: &mut [Option<String>; N], key: &[u8], raw: RawValue<'_>| {
        let key = local_name(key);
        if let Some(i) = keys.iter().position(|k| *k == key) {
            found[i].get_or_insert_with(|| raw.decode().into_owned());
        }
    };
    if !junit_fast::plain_attributes(e.attributes_raw(), |key, raw| take(&mut found, key, raw)) {
        found = [const { None }; N];
        for a in e.attributes().with_checks(false).flatten() {
            take(&mut found, a.key.into_inner(), RawValue::new(&a.value));
        }
    }
    found
}

/// The first value of attribute `key`, decoded; raw text if it does not decode.
fn attr(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    let a = e
        .attributes()
        .with_checks(false)
        .flatten()
        .find(|a| local_name(a.key.into_inner()) == key)?;
    Some(attr_value(&a.value).into_owned())
}

/// A `time` attribute (seconds) in whole milliseconds. Writers formatting
/// with their locale's number format give a decimal comma (`0,002`,
/// `1.234,5`) or `,` thousands separators (`1,000.5`, Surefire):
/// [`with_decimal_point`] tells them apart.
fn seconds(value: &str) -> Option<u64> {
    plain_millis(value.as_bytes()).or_else(|| other_seconds(value))
}

/// [`seconds`] of what is not plainly written: kept out of line, so the
/// plain case, nearly every one, stays as small as it was.
#[cold]
#[inline(never)]
fn other_seconds(value: &str) -> Option<u64> {
    let value = value.trim();
    let parsed = if value.contains(',') {
        with_decimal_point(value).parse()
    } else {
        value.parse()
    };
    parsed.ok().and_then(|secs: f64| to_ms(secs, 1000.0))
}

/// A number with `,` in it rewritten with `.` as its decimal separator and
/// no thousands separators. With both `,` and `.`, the last one is the
/// decimal separator and the other groups thousands. Several `,` alone group
/// thousands, and so does one followed by exactly three digits after a
/// non-zero whole part (`1,234` is 1234, as Jenkins reads it); any other
/// lone `,` is a decimal comma (`0,002`, `1,5`, `0,500`).
fn with_decimal_point(value: &str) -> String {
    let last_comma = value.rfind(',');
    let decimal_comma = match (last_comma, value.rfind('.')) {
        (Some(comma), Some(dot)) => comma > dot,
        (Some(comma), None) => {
            let (whole, fraction) = (&value[..comma], &value[comma + 1..]);
            let groups_thousands = fraction.len() == 3
                && fraction.bytes().all(|b| b.is_ascii_digit())
                && whole.bytes().any(|b| matches!(b, b'1'..=b'9'));
            !whole.contains(',') && !groups_thousands
        }
        (None, _) => false,
    };
    let mut number = String::with_capacity(value.len());
    for (at, c) in value.char_indices() {
        match c {
            ',' if decimal_comma && Some(at) == last_comma => number.push('.'),
            ',' => {}
            '.' if decimal_comma => {}
            _ => number.push(c),
        }
    }
    number
}

/// A problem at byte `pos` of the file.
fn malformed<R: BufRead>(reader: &Reader<Counted<R>>, pos: u64, problem: String) -> ReadError {
    let (line, column) = reader.get_ref().line_column(pos);
    ReadError::Malformed {
        line,
        column,
        problem,
    }
}

#[cfg(test)]
#[path = "junit_tests.rs"]
mod tests;
