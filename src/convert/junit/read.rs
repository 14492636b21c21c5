//! Reading the XML of a JUnit report: quick-xml's events over one reused
//! buffer (a plainly written empty `<testcase/>` taken straight from its
//! input, [`fast`]), which element is open, text, CDATA and attributes
//! decoded, and errors with their line and column. What the elements mean
//! is [`Suites`]' job: this module hands it each suite as it opens and
//! closes and each case as it closes.
//!
//! - `<testsuites>` is the anonymous root (so is one nested in it, as report
//!   aggregators write); every `<testsuite>` is a suite and nested ones
//!   nest (Surefire, some aggregators); a file whose root is a lone
//!   `<testsuite>` works too.
//! - A `<testcase>` with its `<failure>`, `<error>`, `<skipped>`,
//!   `<system-out>` and `<system-err>` becomes a [`Case`]; `<failure>` and
//!   `<error>` directly in a `<testsuite>` ([`ant`](super::ant)) and
//!   `<system-out>`/`<system-err>` there (output of the suite) go to
//!   [`Suites`] as they close.
//! - Text, CDATA, predefined and numeric entities are decoded; an unknown
//!   entity or invalid UTF-8 keeps the raw text. Other elements
//!   (`properties`, Surefire's `flakyFailure`/`rerunFailure`) are ignored.
use std::io::{self, BufRead};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::case::{Case, Problem};
use super::fast::{self, attr_value, local_name, RawValue};
use super::pytest;
use super::suites::Suites;
use crate::convert::common::{Emitter, ReadError};
use crate::convert::position::Counted;
use crate::event::{Outcome, Stream};

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

#[derive(Debug, Default)]
struct State {
    elems: Vec<Elem>,
    /// The suites and tests the report's elements make.
    suites: Suites,
    case: Option<Case>,
    /// The element being captured and its text so far.
    capture: Option<(Capture, Problem)>,
    seen_root: bool,
    /// Bytes read past quick-xml (plain empty test cases, taken directly);
    /// added to its positions to give positions in the file.
    skipped: u64,
    /// quick-xml's last event was markup, so it would read text next: the
    /// place where a plain empty `<testcase/>` may be taken directly.
    after_markup: bool,
    /// A case not sent yet, as the next may be part of its test: pytest
    /// writes a test whose call failed and whose teardown failed too as two
    /// cases, the second right after the first ([`pytest::add_teardown`]),
    /// and pytest-rerunfailures each attempt it reran before the next
    /// ([`pytest::is_rerun`]); a live run shows one test.
    held: Option<Case>,
    /// The last case done with, whose buffers the next case is read into.
    spare: Case,
}

impl State {
    fn run<R: BufRead>(
        &mut self,
        reader: &mut Reader<Counted<R>>,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
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
                let classname = self.suites.plain_classname();
                let buffered = counted.buffered();
                let read = fast::empty_testcase(buffered, classname, |key, slot, raw| match slot {
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

    /// An empty case, with the buffers of the last one done with.
    fn new_case(&mut self) -> Case {
        let mut case = std::mem::take(&mut self.spare);
        case.reset();
        case
    }

    /// Keeps the buffers of a case that is done with.
    fn recycle(&mut self, case: Case) {
        self.spare = case;
    }

    /// A case from the attribute text of its `<testcase>`, if every
    /// attribute is plainly written ([`fast::plain_attributes`]).
    fn plain_case(&mut self, attrs: &[u8]) -> Option<Case> {
        let mut case = self.new_case();
        if fast::plain_attributes(attrs, |key, raw| case.set(key, raw)) {
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
                    self.suites.root(attr(e, b"name").as_deref());
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
                self.suites.open(name, file, package, out)?;
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
            (Some(Elem::Other), b"property") if self.suites.is_tcrunner() => {
                if let Some(case) = &mut self.case {
                    let [name, value] = attrs(e, [b"name", b"value"]);
                    match name.as_deref() {
                        Some("titles") => case.titles = value,
                        Some("status") => {
                            case.status = match value.as_deref() {
                                Some("xpass") => Some(Outcome::Xpass),
                                Some("todo") => Some(Outcome::Todo),
                                _ => None,
                            }
                        }
                        _ => {}
                    }
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
            Elem::Root => self.suites.close_root(out)?,
            Elem::Other => {}
            Elem::Capture(capture) => {
                let Some((_, mut problem)) = self.capture.take() else {
                    return Ok(());
                };
                // Each block of output is whole: the IDE shows a test's or
                // suite's blocks one after another, so one that does not end
                // its line would share it with the next (`out` then `err`).
                // tcrunner's own files hold the text exactly as it was.
                if matches!(capture, Capture::Out(_))
                    && !self.suites.is_tcrunner()
                    && !problem.text.is_empty()
                    && !problem.text.ends_with('\n')
                {
                    problem.text.push('\n');
                }
                if self.case.is_none() {
                    self.send_held(out)?;
                }
                match (capture, &mut self.case) {
                    (Capture::Out(stream), Some(case)) => case.output.push((stream, problem.text)),
                    (Capture::Out(stream), None) => {
                        self.suites.output(stream, problem.text, out)?
                    }
                    (Capture::Failure, Some(case)) => case.add_failure(problem),
                    (Capture::Error, Some(case)) => case.add_error(problem),
                    (Capture::Skipped, Some(case)) => case.add_skipped(problem),
                    (Capture::Failure | Capture::Error, None) => {
                        let is_error = capture == Capture::Error;
                        self.suites.suite_problem(is_error, problem, out)?;
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
                self.suites.close(out)?;
            }
        }
        Ok(())
    }

    /// Sends a closed case, taking what it holds but its name buffers; a
    /// failed one is held until the next case shows whether it is that
    /// test's teardown error.
    fn send_case(&mut self, case: &mut Case, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        if let Some(held) = &mut self.held {
            if pytest::is_rerun(held, case) {
                // An attempt that was rerun: this case is the test's.
                case.reruns = held.reruns + 1;
                held.output.clear();
                let rerun = self.held.take().expect("held");
                self.recycle(rerun);
            } else {
                let teardown = pytest::add_teardown(held, case);
                self.send_held(out)?;
                if teardown {
                    return Ok(());
                }
            }
        }
        if !self.suites.is_tcrunner()
            && (pytest::teardown_may_follow(case)
                || pytest::rerun_may_follow(case) && self.suites.is_pytest(case))
        {
            // Held as it is; the caller recycles the spare buffers left in
            // `case`.
            let mut held = std::mem::take(&mut self.spare);
            std::mem::swap(&mut held, case);
            self.held = Some(held);
            return Ok(());
        }
        self.suites.send(case, out)
    }

    /// Sends the held case, if any.
    fn send_held(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        match self.held.take() {
            Some(mut held) => {
                let sent = self.suites.send(&mut held, out);
                self.recycle(held);
                sent
            }
            None => Ok(()),
        }
    }

    /// After an error: closes every open suite, innermost first.
    fn close_all(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        self.send_held(out)?;
        self.suites.close_all(out)
    }
}

/// The first value of each attribute of `keys` ([`attr`]), in one pass:
/// plainly written attributes split directly
/// ([`fast::plain_attributes`]), others by quick-xml's iterator.
pub(super) fn attrs<const N: usize>(e: &BytesStart<'_>, keys: [&[u8]; N]) -> [Option<String>; N] {
    let mut found = [const { None }; N];
    let take = |found: &mut [Option<String>; N], key: &[u8], raw: RawValue<'_>| {
        let key = local_name(key);
        if let Some(i) = keys.iter().position(|k| *k == key) {
            found[i].get_or_insert_with(|| raw.decode().into_owned());
        }
    };
    if !fast::plain_attributes(e.attributes_raw(), |key, raw| take(&mut found, key, raw)) {
        found = [const { None }; N];
        for a in e.attributes().with_checks(false).flatten() {
            take(&mut found, a.key.into_inner(), RawValue::new(&a.value));
        }
    }
    found
}

/// The first value of attribute `key`, decoded; raw text if it does not decode.
pub(super) fn attr(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    let a = e
        .attributes()
        .with_checks(false)
        .flatten()
        .find(|a| local_name(a.key.into_inner()) == key)?;
    Some(attr_value(&a.value).into_owned())
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
