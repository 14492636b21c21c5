//! What to run, from the history: `--lf` narrows the request to the tests
//! that failed last time, `--ff` puts them first, `--sw` resumes where the
//! last stepwise run stopped. On jest and vitest the result is the request
//! the framework launches as if the user had asked for it (`--target`s,
//! `--path`s), so each selects the tests with the mechanism it already
//! has; on pytest the request stays and the plugin keeps the failures
//! (see [`plan`]).
use std::path::{Path, PathBuf};

use super::store::History;
use crate::frameworks::Request;

/// The history options, as given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub last_failed: bool,
    pub failed_first: bool,
    /// `--lfnf none`: with no failures recorded, `--lf` runs nothing.
    pub none_without_failures: bool,
    pub stepwise: bool,
    pub stepwise_skip: bool,
    pub stepwise_reset: bool,
    /// The test files the user's own arguments after `--` select, where the
    /// framework lists them (jest, vitest): `--lf` keeps the failures in
    /// them, as the framework would OR those filters with the failures'
    /// files.
    pub selected_files: Option<Vec<String>>,
    /// Files of recorded failures that are gone from the project, where
    /// the failures become paths (jest, vitest): named to jest such a file
    /// fails to load, to vitest it selects nothing, so they are left out,
    /// as pytest's `--lf` leaves out failures it no longer collects.
    pub removed_files: Vec<String>,
}

/// What the history changes about the run.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Lines to show before the run (`run-last-failure: …`, `stepwise: …`).
    pub notes: Vec<String>,
    /// Run nothing at all (`--lf --lfnf none` with no failures recorded).
    pub run_nothing: bool,
    /// Tests (stable ids, or files) to run first, in this order.
    pub first: Vec<String>,
    /// Stop the run once this many tests have failed (`--sw`: 1,
    /// `--sw-skip`: 2).
    pub stop_after_failures: Option<u32>,
    /// Stable ids a resumed `--sw` run leaves out.
    pub skip: Vec<String>,
    /// The only tests (stable ids, or files) to keep of those the
    /// framework collects (`--lf`, where the reporter follows the
    /// history's order file).
    pub only: Vec<String>,
    /// The stepwise state is to be dropped before the run.
    pub reset_stepwise: bool,
    /// `--lf` named this many failures to the framework (jest, vitest):
    /// should none of them run, they were renamed since, and the run says so.
    pub reruns_failures: Option<usize>,
    /// The only test files to run, relative to the project, and the
    /// option that chose them: a selection by file (jest, vitest) of a
    /// shard, a resumed `--sw` or a TeamCity batch, which the framework's
    /// sequencer enforces however the user's own filters match.
    pub files: Option<(&'static str, Vec<PathBuf>)>,
}

/// `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `path` as the history writes files: relative, `/`-separated, without
/// `./` or a trailing `/`.
fn normal(path: &Path) -> String {
    let text: PathBuf = path
        .components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect();
    text.to_string_lossy().trim_end_matches('/').to_owned()
}

/// Whether the jest or vitest id `FILE::a > b` names its test by titles a
/// `--target` can carry: not all of them blank (a block titled `''` is
/// selected by the titles around it).
fn nameable(id: &str) -> bool {
    id.split_once("::")
        .is_some_and(|(_, names)| !names.trim().is_empty())
}

/// Whether the test `id` in `file` lies within what the request asked
/// for (everything, when it names nothing).
fn asked_for(request: &Request, id: &str, file: &str) -> bool {
    if request.paths.is_empty() && request.targets.is_empty() {
        return true;
    }
    let under =
        |path: &str| path.is_empty() || file == path || file.starts_with(&format!("{path}/"));
    request.paths.iter().any(|p| under(&normal(p)))
        || request.targets.iter().any(|t| {
            id == t
                || id.starts_with(&format!("{t}::"))
                || id.starts_with(&format!("{t} > "))
                || id.starts_with(&format!("{t}["))
                || (!t.contains("::") && under(&normal(Path::new(t))))
        })
}

/// Turns `request` into what the options and `history` ask to run.
/// `files_as_paths`: the framework cannot mix whole-file and named
/// targets in one run (jest, vitest), so a whole file goes as a `--path`
/// and the run takes whole files.
pub(crate) fn plan(
    options: &Options,
    history: &History,
    request: &mut Request,
    files_as_paths: bool,
) -> Plan {
    let mut plan = Plan::default();
    let known = history.tests.len();
    if options.last_failed || options.failed_first {
        let all_failed: Vec<(&String, &super::store::Entry)> = history.failed().collect();
        let failed: Vec<(&String, &super::store::Entry)> = all_failed
            .iter()
            .copied()
            .filter(|(id, entry)| asked_for(request, id, &entry.file))
            .filter(|(_, entry)| {
                let selected = options.selected_files.as_ref();
                selected.is_none_or(|files| files.contains(&entry.file))
            })
            .filter(|(_, entry)| !options.removed_files.contains(&entry.file))
            .collect();
        let status = if all_failed.is_empty() {
            if options.last_failed && options.none_without_failures {
                plan.run_nothing = true;
                "no previously failed tests, deselecting all items.".to_owned()
            } else {
                "no previously failed tests, not deselecting items.".to_owned()
            }
        } else if failed.is_empty() {
            format!(
                "{} known failures not in selected tests",
                thousands(all_failed.len())
            )
        } else if options.last_failed {
            // A file's load failure, or a test whose titles are all blank
            // (no target can name it), runs as its whole file.
            let whole = failed
                .iter()
                .any(|(id, e)| e.whole_file || (files_as_paths && !nameable(id)));
            let mut targets: Vec<String> = Vec::new();
            let mut files: Vec<PathBuf> = Vec::new();
            for (id, entry) in &failed {
                if files_as_paths && whole {
                    let file = PathBuf::from(&entry.file);
                    if !files.contains(&file) {
                        files.push(file);
                    }
                } else {
                    let target = if entry.whole_file {
                        entry.file.clone()
                    } else {
                        (*id).clone()
                    };
                    if !targets.contains(&target) {
                        targets.push(target);
                    }
                }
            }
            if files_as_paths {
                plan.reruns_failures = Some(failed.len());
                request.paths = files;
                request.targets = targets;
                request.targets_are_tests = true;
            } else {
                // The run as asked, with the reporter collecting only the
                // failures' files and keeping only the failures, as
                // pytest's own `--lf` does: they run in collection order,
                // and a failure since renamed is no error. The ids are
                // relative to pytest's root, which those files given as
                // arguments could move (an ini file beside them, a root
                // above the project): the arguments stay.
                plan.only = targets;
            }
            format!("{} of {}", failed_tests(failed.len()), thousands(known))
        } else {
            for (id, entry) in &failed {
                let first = if entry.whole_file {
                    entry.file.clone()
                } else {
                    (*id).clone()
                };
                plan.first.push(first);
            }
            format!(
                "{} of {} first",
                failed_tests(failed.len()),
                thousands(known)
            )
        };
        plan.notes.push(format!("run-last-failure: {status}"));
    }
    if options.stepwise || options.stepwise_skip || options.stepwise_reset {
        plan.stop_after_failures = Some(if options.stepwise_skip { 2 } else { 1 });
        let state = &history.stepwise;
        let status = if options.stepwise_reset {
            plan.reset_stepwise = true;
            "resetting state, not skipping.".to_owned()
        } else if state.failed.is_none() {
            "no previously failed tests, not skipping.".to_owned()
        } else if state.test_count != known {
            plan.reset_stepwise = true;
            format!(
                "test count changed, not skipping (now {known} tests, previously {}).",
                state.test_count
            )
        } else if files_as_paths {
            // jest and vitest cannot leave single tests out: whole files
            // whose every test is done are left out (the run decides which,
            // from the framework's list of files).
            plan.skip = state.passed.clone();
            format!(
                "skipping the files whose {} already passed items are all their tests (use --sw-reset to discard).",
                thousands(state.passed.len())
            )
        } else {
            plan.skip = state.passed.clone();
            format!(
                "skipping {} already passed items (use --sw-reset to discard).",
                thousands(state.passed.len())
            )
        };
        plan.notes.push(format!("stepwise: {status}"));
    }
    plan
}

/// `1 failed test`, `3 failed tests`, `1,200 failed tests`.
pub(crate) fn failed_tests(count: usize) -> String {
    let noun = if count == 1 { "test" } else { "tests" };
    format!("{} failed {noun}", thousands(count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{merge, RanTest, Verdict};

    fn history(tests: &[(&str, Verdict)]) -> History {
        let mut history = History::empty("jest");
        let ran: Vec<RanTest> = tests
            .iter()
            .map(|(id, verdict)| RanTest {
                id: (*id).into(),
                file: id.split("::").next().unwrap().into(),
                verdict: *verdict,
                duration_ms: 1,
                whole_file: id.ends_with("Test suite failed to run"),
            })
            .collect();
        merge(&mut history, &ran, true);
        history
    }

    #[test]
    fn last_failed_narrows_to_the_failures_within_what_was_asked() {
        let h = history(&[
            ("a.test.js::x > one", Verdict::Failed),
            ("a.test.js::two", Verdict::Passed),
            ("src/b.test.js::three", Verdict::Failed),
        ]);
        let lf = Options {
            last_failed: true,
            ..Options::default()
        };
        let mut request = Request::default();
        let plan = plan(&lf, &h, &mut request, true);
        assert_eq!(plan.notes, ["run-last-failure: 2 failed tests of 3"]);
        assert_eq!(
            request.targets,
            ["a.test.js::x > one", "src/b.test.js::three"]
        );
        // The user's own filters after `--` select `src/` alone.
        let narrowed = Options {
            selected_files: Some(vec!["src/b.test.js".to_owned()]),
            ..Options {
                last_failed: true,
                ..Options::default()
            }
        };
        let mut request = Request::default();
        super::plan(&narrowed, &h, &mut request, true);
        assert_eq!(request.targets, ["src/b.test.js::three"]);
        let mut request = Request {
            paths: vec!["./src/".into()],
            ..Request::default()
        };
        super::plan(&lf, &h, &mut request, true);
        assert_eq!(request.targets, ["src/b.test.js::three"]);
        assert!(request.paths.is_empty());
        let mut request = Request {
            targets: vec!["a.test.js::two".into()],
            ..Request::default()
        };
        let plan = super::plan(&lf, &h, &mut request, true);
        assert_eq!(
            plan.notes,
            ["run-last-failure: 2 known failures not in selected tests"]
        );
        assert_eq!(request.targets, ["a.test.js::two"]);
    }

    #[test]
    fn a_failure_no_target_can_name_runs_its_file_whole() {
        // test('') and test(' '): titles a `--target` cannot carry
        // (`describe('')` can: `e.test.js:: > t`).
        for id in ["e.test.js::", "e.test.js:: "] {
            let h = history(&[(id, Verdict::Failed), ("b.test.js::one", Verdict::Failed)]);
            let lf = Options {
                last_failed: true,
                ..Options::default()
            };
            let mut request = Request::default();
            plan(&lf, &h, &mut request, true);
            assert!(request.targets.is_empty(), "{id}: {:?}", request.targets);
            assert_eq!(
                request.paths,
                [PathBuf::from("b.test.js"), PathBuf::from("e.test.js")],
                "{id}"
            );
        }
    }

    #[test]
    fn a_file_that_failed_to_load_runs_whole() {
        let h = history(&[
            ("a.test.js::Test suite failed to run", Verdict::Failed),
            ("b.test.js::one", Verdict::Failed),
        ]);
        let lf = Options {
            last_failed: true,
            ..Options::default()
        };
        let mut request = Request::default();
        plan(&lf, &h, &mut request, true);
        assert!(request.targets.is_empty());
        assert_eq!(
            request.paths,
            [PathBuf::from("a.test.js"), "b.test.js".into()]
        );
        // pytest: the run as asked, the reporter keeping the failures.
        let mut request = Request {
            paths: vec![".".into()],
            ..Request::default()
        };
        let plan = plan(&lf, &h, &mut request, false);
        assert_eq!(request.paths, [PathBuf::from(".")]);
        assert!(request.targets.is_empty());
        assert_eq!(plan.only, ["a.test.js", "b.test.js::one"]);
    }

    #[test]
    fn nothing_recorded_runs_all_or_none() {
        let h = history(&[("a.test.js::one", Verdict::Passed)]);
        let mut lf = Options {
            last_failed: true,
            ..Options::default()
        };
        let mut request = Request::default();
        let all = plan(&lf, &h, &mut request, true);
        assert!(!all.run_nothing);
        assert_eq!(
            all.notes,
            ["run-last-failure: no previously failed tests, not deselecting items."]
        );
        lf.none_without_failures = true;
        let none = plan(&lf, &h, &mut request, true);
        assert!(none.run_nothing);
        assert_eq!(thousands(5000), "5,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
