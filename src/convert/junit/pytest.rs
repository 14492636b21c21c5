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
//!   The xunit1 family writes each case's `file` (`Tests/test_x.py`): when
//!   the classname starts with its dotted path, the file's parts are the
//!   folders and module and the rest are classes, whatever their case
//!   ([`module_end`]). Its `line` is the 0-based line of the `def`
//!   ([`zero_based_lines`]).
//! - A module pytest could not collect is a case named by its dotted path,
//!   with no classname and the error `collection failure`
//!   ([`collection_error`]).
//! - A test whose call failed and whose teardown failed too is two cases
//!   of one name, the second with the error `failed on teardown with …`
//!   ([`add_teardown`]).
//! - A `<skipped type="pytest.xfail">` is an xfail ([`case`](super::case)).
//! - pytest-xdist writes cases in the order its workers finished them:
//!   classes come back after others ([`suites`](super::suites) keeps
//!   them open).
use super::case::Case;
use crate::convert::pytest_json::COLLECTION_ERROR;

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
/// xunit1 `.py` files give the 0-based `def` line; unittest-xml-reporting's
/// are 1-based, told apart by the `file` it writes on `<testsuite>`
/// (`suite_file`), which pytest does not.
#[inline]
pub(super) fn zero_based_lines(suite_file: bool, file: Option<&str>) -> bool {
    !suite_file && is_py_file(file)
}

/// How many of a pytest classname's `parts` are its folders and module
/// (`pkg.module.Class.Inner`). With the xunit1 `file`, when the classname
/// starts with its dotted path (`Tests/test_x.py`, `Tests.test_x`), those;
/// else up to the last part before the first capitalised one, which is
/// wrong for a capitalised folder or a lowercase class, so the file decides
/// when there is one. `parts` may lack the front of the classname its
/// `<testsuite>` is named by. Runs only when the classname changes.
pub(super) fn module_end(classname: &str, parts: &[&str], file: Option<&str>) -> usize {
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
/// message.
pub(super) fn collection_error(case: &mut Case) {
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
