//! `--timeout` inside pytest (docs/faults.md): our plugin's per-test alarm fails
//! only the test that ran too long, and the run goes on to the next test.
//! The fixture, tests/fixtures/pytest-timeout, has four tests that outlive
//! `--timeout 1` (sleeping in the call, in a fixture's setup, catching the
//! timeout, and under a fake clock a fixture installs) between tests that
//! pass.
mod util;

use std::time::Duration;

use util::{attr, Project, Run, Tcrunner};

/// Generous: a loaded two-core machine must never hit it.
const LIMIT: Duration = Duration::from_secs(180);

/// The tests that outlive the limit, each sleeping 3 s.
const TIMED_OUT: [&str; 4] = [
    "test_sleeps",
    "test_slow_setup",
    "test_catches_the_timeout",
    "test_fake_clock_behind_sleeps",
];

/// Runs the fixture with `--timeout 1`; `ini`, when not empty, replaces its
/// pytest.ini.
fn run_with_timeout(python: u32, ini: &str) -> Run {
    let project = Project::copy("pytest-timeout");
    if !ini.is_empty() {
        project.write("pytest.ini", ini);
    }
    Tcrunner::new(project.path())
        .arg("--python")
        .arg(util::python(python))
        .args(["--timeout", "1"])
        .run(LIMIT)
}

/// The `duration` (ms) of the test named `name`.
fn duration_of(run: &Run, name: &str) -> u64 {
    let id = run.node_id(name);
    let finished = run.message(&["##teamcity[testFinished ", &format!("nodeId='{id}'")]);
    attr(&finished, "duration")
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no duration on {finished}"))
}

fn fails_only_the_slow_tests_and_goes_on(python: u32, ini: &str) {
    let run = run_with_timeout(python, ini);
    // tcrunner's exit code for a run in which a test ran out of time
    // (README "Exit codes"), also when the framework failed it itself.
    run.assert_code(124).assert_clean().assert_no_leftovers();
    for name in TIMED_OUT {
        let failure = run.failure_of(name);
        assert!(
            failure.contains("message='timed out after 1 s'") && failure.contains("error='true'"),
            "pytest {python}: {name}: {failure}\n{}",
            run.describe()
        );
        // Interrupted by the alarm, not by the end of its 3 s sleep. The
        // alarm is set before the setup phase, which pytest's duration of
        // the call leaves out: 999 ms has been seen.
        let ms = duration_of(&run, name);
        assert!(
            (900..2900).contains(&ms),
            "pytest {python}: {name} took {ms} ms\n{}",
            run.describe()
        );
    }
    // The details say where the test was when its time ran out.
    assert!(
        run.failure_of("test_sleeps").contains("time.sleep(3)"),
        "{}",
        run.describe()
    );
    for name in ["test_before", "test_fake_clock_ahead", "test_after"] {
        assert!(
            run.passed(name),
            "pytest {python}: {name} should pass: the run goes on\n{}",
            run.describe()
        );
    }
    assert!(
        !run.stderr.contains("stopping pytest"),
        "pytest {python}: the backstop must not stop the run\n{}",
        run.describe()
    );
}

#[test]
fn pytest9_timeout_fails_only_the_slow_tests_and_the_run_goes_on() {
    fails_only_the_slow_tests_and_goes_on(9, "");
}

#[test]
fn pytest8_timeout_fails_only_the_slow_tests_and_the_run_goes_on() {
    fails_only_the_slow_tests_and_goes_on(8, "");
}

/// A project-wide pytest-timeout limit longer than `--timeout` (its
/// `timeout` ini option, as many projects set one) does not turn ours off,
/// with either of its methods: the signal method's alarm is held while ours
/// runs. Before, every test pytest-timeout limited was left to it, and
/// tcrunner's backstop stopped the whole run at the first slow test.
#[test]
fn a_longer_pytest_timeout_limit_leaves_ours_on() {
    let installed = std::process::Command::new(util::python(9))
        .args(["-c", "import pytest_timeout"])
        .status()
        .expect("run python");
    assert!(
        installed.success(),
        "pytest-timeout is missing from target/venv/pytest9: run `bash scripts/setup-python.sh`"
    );
    for method in ["signal", "thread"] {
        fails_only_the_slow_tests_and_goes_on(
            9,
            &format!("[pytest]\ntimeout = 300\ntimeout_method = {method}\n"),
        );
    }
}

/// Without `--timeout` the plugin arms nothing: the same tests sleep out
/// their 3 s and pass (the catching one never sees a timeout).
#[test]
fn without_timeout_nothing_is_interrupted() {
    let project = Project::copy("pytest-timeout");
    let run = Tcrunner::pytest(project.path())
        .args(["--target", "test_timeout.py::test_catches_the_timeout"])
        .run(LIMIT);
    run.assert_code(0).assert_clean().assert_no_leftovers();
    assert!(run.passed("test_catches_the_timeout"), "{}", run.describe());
    assert!(
        duration_of(&run, "test_catches_the_timeout") >= 2900,
        "{}",
        run.describe()
    );
}
