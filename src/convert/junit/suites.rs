//! The tree a JUnit report becomes, as its elements arrive: a suite per
//! `<testsuite>` (nested ones nest), under it the suites a case's
//! `classname` adds ([`classname`], and for pytest
//! [`pytest`]), and each test under those.
//!
//! - Output written at suite level (`<system-out>`/`<system-err>` outside
//!   any case) is the suite's, or the run's if the suite had no test yet.
//! - A classname that comes back after others (pytest-xdist writes cases
//!   in the order its workers finished them) goes back into its suite,
//!   which stays open until its `<testsuite>` ends (up to [`PARKED_LIMIT`]
//!   left behind at a time).
//! - What a classname says is found once per class, not once per case:
//!   consecutive cases of one class, the common case, reuse it
//!   ([`ClassOf`]).
//! - A file tcrunner wrote (`--junit-xml`, root `<testsuites
//!   name="tcrunner">`) is read exactly, none of the rules above applying:
//!   a `<testsuite>`'s `package` is its folders (one suite each, shared by
//!   consecutive files of a folder), the rest of its name the file; a
//!   case's `name` is the titles below the file and its own, joined by
//!   ` > `, unless its `titles` property spells them out (a JSON array);
//!   `<testsuite name="tcrunner">` is the run, not a suite.
use super::ant;
use super::case::{Case, Problem};
use super::classname::{
    self, class_parts, is_file_path, names_a_suite, names_the_test, own_classname, TITLE_SEPARATOR,
};
use super::pytest;
use crate::convert::common::{line, Emitter, ReadError, TestNode};
use crate::event::{Node, NodeKind, Stream, TestEvent};
use crate::hash::FastMap;
use crate::report::JUNIT_ROOT as TCRUNNER;

/// Parked classname suites per `<testsuite>` before they are all done: the
/// memory a file of ever-new classnames may hold.
const PARKED_LIMIT: usize = 1024;

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
/// for, and what is asked of it for every case, found once.
#[derive(Debug)]
struct ClassOf {
    classname: String,
    /// Where [`own_classname`] is in it.
    own: std::ops::Range<usize>,
    /// [`is_file_path`] of it.
    file_path: bool,
    /// It is ASCII with no `&` and neither quote: its own raw value, which
    /// the next case's is compared with whole
    /// ([`empty_testcase`](super::fast::empty_testcase)).
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

/// The open suites of a report and the ids given out so far.
#[derive(Debug)]
pub(super) struct Suites {
    /// The document level, then each open `<testsuite>`.
    frames: Vec<Frame>,
    next_id: u64,
    /// `<testsuites name="pytest tests">`.
    pytest_root: bool,
    /// `<testsuites name="tcrunner">`: a file tcrunner wrote
    /// (`--junit-xml`), whose tree is spelled out exactly.
    tcrunner: bool,
    /// In a tcrunner file: the open folder suites above the `<testsuite>`s
    /// (their `package`), as (name, id).
    folders: Vec<(String, String)>,
    /// The test being sent, filled in over the buffers of the one before.
    test: TestNode,
    /// The number whose id `test.node.id` holds.
    test_id: Option<u64>,
}

impl Default for Suites {
    fn default() -> Self {
        Suites {
            frames: vec![Frame::default()],
            next_id: 0,
            pytest_root: false,
            tcrunner: false,
            folders: Vec::new(),
            test: TestNode::default(),
            test_id: None,
        }
    }
}

impl Suites {
    /// The report's `<testsuites>`, by its `name`.
    pub(super) fn root(&mut self, name: Option<&str>) {
        self.pytest_root = name.is_some_and(pytest::is_run_root);
        self.tcrunner = name == Some(TCRUNNER);
    }

    /// Whether `case`, in the innermost `<testsuite>`, is pytest's.
    pub(super) fn is_pytest(&self, case: &Case) -> bool {
        !self.tcrunner
            && (self.frames.last().is_some_and(|frame| frame.pytest)
                || pytest::is_py_file(case.file.as_deref()))
    }

    /// Whether the report is one tcrunner wrote.
    pub(super) fn is_tcrunner(&self) -> bool {
        self.tcrunner
    }

    /// The report's `<testsuites>` closes.
    pub(super) fn close_root(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        self.sync_folders(None, out)
    }

    /// The `classname` the next case likely has (the case before's) when
    /// it is plainly written, else empty: the fast path compares it whole.
    #[inline]
    pub(super) fn plain_classname(&self) -> &[u8] {
        (self.frames.last())
            .and_then(|frame| frame.classes_of.as_ref())
            .filter(|of| of.plain)
            .map_or(&b""[..], |of| of.classname.as_bytes())
    }

    /// A `<testsuite>` opens.
    pub(super) fn open(
        &mut self,
        name: Option<String>,
        file: Option<String>,
        package: Option<String>,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        let mut name = name.unwrap_or_else(|| "testsuite".to_string());
        // A tcrunner file's `<testsuite>` under the document is a file (or
        // top-level) node, under the folders its `package` names.
        let outermost = self.tcrunner && self.frames.len() == 1;
        if outermost {
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
            !self.tcrunner && (self.pytest_root || frame.pytest || name == pytest::RUN_SUITE);
        let suite_file = file.is_some();
        // pytest's one `<testsuite name="pytest">` is the run, not a
        // suite: a live run's tree starts at the folders below it. So is
        // the one tcrunner writes for the run's own notes and for tests no
        // file holds.
        let run_suite = match self.tcrunner {
            true => TCRUNNER,
            false => pytest::RUN_SUITE,
        };
        let id = if name == run_suite && frame.id.is_none() {
            None
        } else {
            let id = self.next_id(out);
            let parent = parent_id(&self.frames)
                .or_else(|| self.folders.last().map(|(_, id)| id).filter(|_| outermost));
            let node = Node {
                id: id.clone(),
                parent: parent.cloned(),
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
        Ok(())
    }

    /// The innermost `<testsuite>` closes.
    pub(super) fn close(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        let frame = self.frames.pop().expect("a suite element has a frame");
        close_frame(frame, out)
    }

    /// Output written in the innermost `<testsuite>`, outside any case.
    pub(super) fn output(
        &mut self,
        stream: Stream,
        text: String,
        out: &mut Emitter<'_>,
    ) -> Result<(), ReadError> {
        let frame = self.frames.last().expect("document frame");
        let id = if frame.started {
            frame.id.clone()
        } else {
            None
        };
        if !text.trim().is_empty() {
            out.send(TestEvent::Output { id, stream, text })?;
        }
        Ok(())
    }

    /// Sends a case, taking what it holds but its name buffers.
    pub(super) fn send(&mut self, case: &mut Case, out: &mut Emitter<'_>) -> Result<(), ReadError> {
        pytest::collection_problem(case);
        let frame_index = self.frames.len() - 1;
        if self.tcrunner {
            return self.send_tcrunner(case, frame_index, out);
        }
        let pytest = self.is_pytest(case);
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
        // pytest's classname never names the test: one that is the test's
        // name is a doctest's module (`mod2`, or a text file `README.txt`).
        let names_itself = !pytest && names_the_test(own, &frame.name, &case.name);
        let titles_end = (!pytest && file_path)
            .then(|| classname::titles_end(&case.name))
            .flatten();
        if titles_end.is_some() || names_itself || class_of.is_none() {
            let suites = self.frames.iter().filter(|f| f.id.is_some());
            let file = case.file.as_deref().filter(|_| pytest);
            let (mut parts, module) =
                if names_itself || names_a_suite(&case.classname, suites.map(|f| &*f.name)) {
                    (Vec::new(), None)
                } else if pytest {
                    let (parts, module) =
                        pytest::class_parts(&case.classname, &frame.name, &case.name, file);
                    (parts, Some(module))
                } else {
                    (class_parts(&case.classname, &frame.name), None)
                };
            if let Some(end) = titles_end {
                parts.extend(case.name[..end].split(TITLE_SEPARATOR));
            }
            self.sync_classes(frame_index, &parts, module, file, out)?;
            // The same parts for the next case with this classname, unless
            // they depend on the case's own name (a text file's doctest is
            // told by it).
            let by_name = names_itself
                || titles_end.is_some()
                || module.is_some_and(|module| module.text_file);
            let frame = &mut self.frames[frame_index];
            frame.classes_of = (!by_name).then(|| ClassOf::new(&case.classname, &frame.name));
        }
        if let Some(end) = titles_end {
            case.name.drain(..end + TITLE_SEPARATOR.len());
        }
        self.frames[frame_index].started = true;

        let py_file = pytest
            && pytest::zero_based_lines(self.frames[frame_index].suite_file, case.file.as_deref());
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
        let titles: Option<Vec<String>> = (case.titles.take())
            .and_then(|json| serde_json::from_str(&json).ok())
            .filter(|titles: &Vec<String>| !titles.is_empty());
        if let Some(mut titles) = titles {
            case.name = titles.pop().expect("not empty");
            let parts: Vec<&str> = titles.iter().map(String::as_str).collect();
            self.sync_classes(frame_index, &parts, None, None, out)?;
        } else {
            let titles_end = case.name.rfind(TITLE_SEPARATOR);
            let parts: Vec<&str> = match titles_end {
                Some(end) => case.name[..end].split(TITLE_SEPARATOR).collect(),
                None => Vec::new(),
            };
            self.sync_classes(frame_index, &parts, None, None, out)?;
            if let Some(end) = titles_end {
                case.name.drain(..end + TITLE_SEPARATOR.len());
            }
        }
        let frame = &mut self.frames[frame_index];
        frame.classes_of = None;
        frame.started = true;
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
        // Filled in over the buffers of the test before.
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
        if case.reruns > 0 {
            pytest::rerun_notes(case.reruns, &mut test.output);
        }
        case.take_result(&mut test.result);
        // Numbered here, the test's id is new (the file's prefix sets it
        // apart from other files').
        out.test(test)
    }

    /// A `<failure>` or `<error>` directly in the innermost `<testsuite>`:
    /// a test of its own in that suite ([`ant`]).
    pub(super) fn suite_problem(
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
        let (name, result) = ant::suite_problem(is_error, problem);
        let node = Node {
            id: self.next_id(out),
            parent,
            name,
            kind: NodeKind::Test,
            ..Node::default()
        };
        out.test(&TestNode {
            node,
            result,
            ..TestNode::default()
        })
    }

    /// After an error: closes every open suite, innermost first.
    pub(super) fn close_all(&mut self, out: &mut Emitter<'_>) -> Result<(), ReadError> {
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
        let keep = (self.folders.iter().zip(&parts))
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

    fn next_id(&mut self, out: &Emitter<'_>) -> String {
        self.next_id += 1;
        out.numbered_id(self.next_id)
    }

    /// Makes the open classname suites of the frame equal `parts`; for
    /// pytest, the first `module.end` of them are folders and a module
    /// ([`pytest::class_parts`]).
    fn sync_classes(
        &mut self,
        frame_index: usize,
        parts: &[&str],
        module: Option<pytest::Module>,
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
            let end = module.map(|module| module.end);
            let kind = match end {
                Some(end) if depth + 1 < end => NodeKind::Dir,
                Some(end) if depth + 1 == end => NodeKind::File,
                _ => NodeKind::Suite,
            };
            // Named as the live pytest tree names a module: by its file.
            let name = match kind {
                NodeKind::File if !module.is_some_and(|module| module.text_file) => {
                    format!("{part}.py")
                }
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
