//! pytest's `--junitxml` (checked against pytest 9.2.0 in its default
//! xunit2 family and in xunit1 with `junit_logging=all`), read into the tree
//! a live run shows.
//!
//! - `<testsuites name="pytest tests">` holds one `<testsuite
//!   name="pytest">`, which is the run, not a suite: the tree starts at the
//!   folders below it ([`RUN_SUITE`], [`is_run_root`]).
//! - A case's classname `pkg.test_mod.TestClass.Inner` is folders, a module
//!   and classes: the part before the first capitalised one is the module,
//!   a file suite named `<part>.py`, and the parts before it are folders.
//!   Every dot splits it, whatever the folders are named (`my-tests`).
//!   The xunit1 family writes each case's `file` (`Tests/test_x.py`): when
//!   the classname starts with its dotted path, the file's parts are the
//!   folders and module and the rest are classes, whatever their case
//!   ([`class_parts`]). Its `line` is the 0-based line of the `def`
//!   ([`zero_based_lines`]).
//! - A text file's doctests (`--doctest-glob`) are a case named by the
//!   file (`guide.txt`) whose classname is its dotted path, extension kept
//!   (`docs.guide.txt`): a file suite named by the file, holding the test.
//! - A module pytest could not collect is a case named by its dotted path,
//!   with no classname and the error `collection failure`; one that
//!   skipped itself, the same with `<skipped message="collection
//!   skipped">` ([`collection_problem`]).
//! - A test whose call failed and whose teardown failed too is two cases
//!   of one name, the second with the error `failed on teardown with …`
//!   ([`add_teardown`]).
//! - pytest-rerunfailures writes each attempt it reruns as a case of the
//!   test's name with no verdict, right before the next attempt's: one
//!   test, with the last attempt's verdict ([`is_rerun`]).
//! - A `<skipped type="pytest.xfail">` is an xfail ([`case`](super::case)).
//! - pytest-xdist writes cases in the order its workers finished them:
//!   classes come back after others ([`suites`](super::suites) keeps
//!   them open).
use super::case::Case;
use super::classname::own_classname;
use crate::convert::pytest_json::{
    skip_reason_of_text as skip_reason, COLLECTION_ERROR, COLLECTION_SKIPPED,
};
use crate::event::Stream;

/// The name of pytest's one `<testsuite>`, the run.
pub(super) const RUN_SUITE: &str = "pytest";

/// Whether a `<testsuites>` named `name` is pytest's (`pytest tests`).
pub(super) fn is_run_root(name: &str) -> bool {
    name.starts_with("pytest")
}

/// Whether a case's `file` is a Python file: the case is pytest's.
#[inline]
pub(super) fn is_py_file(file: Option<&str>) -> bool {
    file.is_some_and(|f| f.ends_with(".py"))
}

/// Whether the `line` of a pytest case in `file` is 0-based: pytest's
/// xunit1 files give the 0-based line of the `def` (of a doctest's
/// docstring, 0 for a text file's); unittest-xml-reporting's are 1-based,
/// told apart by the `file` it writes on `<testsuite>` (`suite_file`),
/// which pytest does not.
#[inline]
pub(super) fn zero_based_lines(suite_file: bool, file: Option<&str>) -> bool {
    !suite_file && file.is_some()
}

/// Where a pytest classname's folders and module end among its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Module {
    /// How many of the parts are the folders and the module.
    pub(super) end: usize,
    /// The module is a text file's doctests (`--doctest-glob`), named by
    /// the file as it is (`guide.txt`), where a `.py` module's name has no
    /// `.py` in the classname.
    pub(super) text_file: bool,
}

/// The suites a pytest case's `classname` adds under its `<testsuite>`
/// named `suite`, and where its folders and module end among them.
///
/// pytest writes the test's node id with each `/` made a dot and the
/// `.py` left out (`my-tests/test_a.py::TestK` is `my-tests.test_a.TestK`):
/// every dot is a part, whatever the names around it are (a folder
/// `my-tests` or `my dir` too). With the xunit1 `file`, when the classname
/// starts with its dotted path, the file's parts are the folders and the
/// module, even with a dot in a name (`v1.2/`), and the rest are classes,
/// whatever their case; else up to the last part before the first
/// capitalised one, which is wrong for a capitalised folder or a lowercase
/// class. A text file's doctest (`--doctest-glob`) is named by the file,
/// which keeps its extension in the classname (`docs.guide.txt`, test
/// `guide.txt`): the file is the module. The parts the `<testsuite>`'s
/// name stands for ([`own_classname`]) are left out. Runs only when the
/// classname changes.
pub(super) fn class_parts<'c>(
    classname: &'c str,
    suite: &str,
    name: &str,
    file: Option<&str>,
) -> (Vec<&'c str>, Module) {
    let own = own_classname(classname, suite);
    if own.is_empty() || own == suite {
        let module = Module {
            end: 0,
            text_file: false,
        };
        return (Vec::new(), module);
    }
    if let Some(file) = file {
        let whole = classname.trim();
        let (path, text_file) = match file.strip_suffix(".py") {
            Some(module) => (module, false),
            None => (file, true),
        };
        if let Some((parts, end)) = split_at_file(whole, path) {
            // The bytes the suite's name stands for, and the parts in them.
            let front = whole.len() - own.len();
            let mut at = 0;
            let left_out = parts
                .iter()
                .take_while(|part| {
                    let starts = at;
                    at += part.len() + 1;
                    starts < front
                })
                .count();
            let module = Module {
                end: end.saturating_sub(left_out),
                text_file,
            };
            return (parts[left_out..].to_vec(), module);
        }
    }
    if let Some(folders) = text_file_folders(own, name) {
        let mut parts: Vec<&str> = folders.split('.').filter(|p| !p.is_empty()).collect();
        parts.push(&own[folders.len()..]);
        let module = Module {
            end: parts.len(),
            text_file: true,
        };
        return (parts, module);
    }
    // A path out of pytest's root (`../x/test_a.py`, `...x.test_a`) has
    // no name between its dots.
    let parts: Vec<&str> = own.split('.').filter(|p| !p.is_empty()).collect();
    let first_class = parts.iter().position(|p| p.starts_with(char::is_uppercase));
    let module = Module {
        end: first_class.unwrap_or(parts.len()).max(1),
        text_file: false,
    };
    (parts, module)
}

/// `classname` split into the parts of `path` (a file's path, without
/// `.py` for a module) and, after them, its dotted rest; with how many are
/// the path's. `None` if the classname does not start with the path.
fn split_at_file<'c>(classname: &'c str, path: &str) -> Option<(Vec<&'c str>, usize)> {
    let mut parts = Vec::new();
    let mut rest = classname;
    for dir in path.split(['/', '\\']) {
        if dir.is_empty() || dir == "." {
            continue;
        }
        if !parts.is_empty() {
            rest = rest.strip_prefix('.')?;
        }
        rest.strip_prefix(dir)?;
        let (part, after) = rest.split_at(dir.len());
        parts.push(part);
        rest = after;
    }
    let end = parts.len();
    if end == 0 {
        return None;
    }
    if !rest.is_empty() {
        parts.extend(rest.strip_prefix('.')?.split('.'));
    }
    Some((parts, end))
}

/// The folders in front of a text file's doctest's classname (`docs.` in
/// `docs.guide.txt`, empty for `README.txt`): pytest names the test by the
/// file's name, which has a dot, and writes the file's dotted path as the
/// classname. A `.py` module's doctests are named by the module and the
/// object (`mod.double` in classname `pkg.mod`), which never end it.
fn text_file_folders<'c>(own: &'c str, name: &str) -> Option<&'c str> {
    if !name.contains('.') {
        return None;
    }
    let folders = own.strip_suffix(name)?;
    (folders.is_empty() || folders.ends_with('.')).then_some(folders)
}

/// Whether the next case may be a rerun of this one: pytest-rerunfailures
/// writes each attempt it reruns as a case of the test's name with nothing
/// in it but its output, right before the next attempt's. A passed pytest
/// case is held until the next case shows which it is ([`is_rerun`]).
#[inline]
pub(super) fn rerun_may_follow(case: &Case) -> bool {
    case.failure.is_none() && case.error.is_none() && case.skipped.is_none() && !case.not_run
}

/// Whether the `held` case is an attempt of the test of `case` that
/// pytest-rerunfailures reran: a live run shows one test, with the final
/// attempt's verdict and a note per earlier attempt ([`rerun_notes`]).
/// pytest writes the teardown error of a test that passed in its case,
/// never as a second one.
#[cold]
pub(super) fn is_rerun(held: &Case, case: &Case) -> bool {
    rerun_may_follow(held)
        && held.name == case.name
        && held.classname == case.classname
        && held.file == case.file
}

/// The notes of a test's attempts that were rerun, before its own output,
/// as a live run writes them (`Attempt 1 failed: …`; the report keeps no
/// more of them than that they failed). pytest's own output of the final
/// attempt already holds the earlier attempts' (`junit_logging`).
#[cold]
pub(super) fn rerun_notes(reruns: u32, output: &mut Vec<(Stream, String)>) {
    let notes = (1..=reruns).map(|n| (Stream::Stderr, format!("Attempt {n} failed\n")));
    output.splice(0..0, notes);
}

/// Whether a teardown error of the same test may come as the next case: a
/// failed case is held until then ([`add_teardown`]).
#[inline]
pub(super) fn teardown_may_follow(case: &Case) -> bool {
    case.failure.is_some() && case.error.is_none()
}

/// Adds `case` to the `failed` one before it if it is that test's teardown
/// error: pytest's junitxml closes the case of a test whose call failed
/// when its teardown fails too, and writes the teardown's error as a second
/// case of the same name, right after it (apart from it only under
/// pytest-xdist, where other workers' cases may come between, and then
/// they stay two tests). One failed test, as in a live run, with the
/// teardown's error after the failure in its details and the two times
/// added.
#[cold]
pub(super) fn add_teardown(failed: &mut Case, case: &mut Case) -> bool {
    if !is_teardown_of(case, failed) {
        return false;
    }
    failed.error = case.error.take();
    failed.duration_ms = match (failed.duration_ms, case.duration_ms) {
        (Some(call), Some(teardown)) => Some(call + teardown),
        (call, teardown) => call.or(teardown),
    };
    failed.output.append(&mut case.output);
    true
}

/// Whether `case` is the teardown error of the `failed` test.
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

/// pytest writes a module it could not collect as a case named by the
/// module's dotted path, with no classname and an error `collection
/// failure`: made the `<collection error>` test of that module, as a live
/// run and pytest-json-report show it, with the exception's `E` line as its
/// message. A module that skipped itself (`pytest.skip(...,
/// allow_module_level=True)`) is such a case with a `<skipped
/// message="collection skipped">`: made its `<collection skipped>` test,
/// with the reason as the live run gives it ([`skip_reason`]).
pub(super) fn collection_problem(case: &mut Case) {
    const PYTEST_ERROR: &str = "collection failure";
    const PYTEST_SKIP: &str = "collection skipped";
    if !case.classname.is_empty() {
        return;
    }
    if let Some(error) = case.error.as_deref_mut() {
        if error.message.as_deref() != Some(PYTEST_ERROR) {
            return;
        }
        if let Some(line) = error.text.lines().rev().find(|l| l.starts_with("E ")) {
            error.message = Some(line.trim_start_matches('E').trim().to_string());
        }
        std::mem::swap(&mut case.classname, &mut case.name);
        case.name.push_str(COLLECTION_ERROR);
    } else if let Some(skipped) = case.skipped.as_deref_mut() {
        if case.failure.is_some() || skipped.message.as_deref() != Some(PYTEST_SKIP) {
            return;
        }
        // The reason is all a live run shows: the text only repeats it
        // with the file and line.
        if let Some(reason) = skip_reason(&skipped.text) {
            skipped.message = Some(reason);
            skipped.text.clear();
        }
        std::mem::swap(&mut case.classname, &mut case.name);
        case.name.push_str(COLLECTION_SKIPPED);
    }
}
