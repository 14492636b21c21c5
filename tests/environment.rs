//! `--env`, `--env-clear`, `--ci` and `-j/--jobs` on the real frameworks:
//! what a test sees of its environment, and the same verdicts whatever the
//! number of workers.
mod util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use util::{assert_clean, tests_by_path, Project, Tcrunner};

const LIMIT: Duration = Duration::from_secs(120);

/// A pytest test that fails unless its environment is exactly what
/// `--env-clear --ci --env MY_VAR='a=b c'` gives.
const PYTEST_ENV_TEST: &str = r#"
import os

def test_environment():
    assert os.environ.get("MY_VAR") == "a=b c"
    assert os.environ.get("CI") == "true"
    assert "HOST_ONLY" not in os.environ
    assert "NODE_ENV" not in os.environ
    assert os.environ.get("HOME")
    ours = {"PATH", "HOME", "LANG", "TMPDIR", "TERM", "CI", "MY_VAR", "UNUSED", "PWD", "LC_CTYPE"}
    extra = {k for k in set(os.environ) - ours if not k.startswith(("PYTHON", "PYTEST", "TCRUNNER"))}
    assert not extra, sorted(extra)
"#;

/// The same for jest and vitest (`test` is a global in jest; vitest's
/// fixture config turns globals on too, else it is imported).
const JS_ENV_TEST: &str = r#"
test('environment', () => {
  expect(process.env.MY_VAR).toBe('a=b c');
  expect(process.env.CI).toBe('true');
  expect(process.env.NODE_ENV).toBe('test');
  expect(process.env.HOST_ONLY).toBeUndefined();
});
"#;

fn node_modules(name: &str) -> PathBuf {
    util::node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"))
}

/// Runs `file` of `project` with the environment options, with `HOST_ONLY`
/// set in tcrunner's own environment; returns the test's verdict.
fn environment_verdict(
    project: &Path,
    command: &mut Tcrunner,
    file: &str,
    flags: &[&str],
) -> String {
    let run = command
        .env("HOST_ONLY", "1")
        .args(["--path", file])
        .args(flags)
        .run(LIMIT);
    run.assert_clean();
    let tests = tests_by_path(&run.stdout);
    assert_eq!(tests.len(), 1, "{}: {}", project.display(), run.describe());
    let outcome = tests.into_values().next().unwrap();
    if outcome.verdict != "passed" {
        eprintln!("{}: {:?}", project.display(), outcome.message);
    }
    outcome.verdict
}

const FLAGS: [&str; 5] = [
    "--env-clear",
    "--ci",
    "--env",
    "MY_VAR=a=b c",
    "--env=UNUSED=1",
];

#[test]
fn a_pytest_test_sees_only_the_environment_asked_for() {
    let project = Project::copy("pytest");
    project.write("tests/test_env.py", PYTEST_ENV_TEST);
    let file = "tests/test_env.py";
    let verdict = environment_verdict(
        project.path(),
        &mut Tcrunner::pytest(project.path()),
        file,
        &FLAGS,
    );
    assert_eq!(verdict, "passed");
    // Without the options the same test fails: it tells them apart.
    let bare = environment_verdict(
        project.path(),
        &mut Tcrunner::pytest(project.path()),
        file,
        &[],
    );
    assert_eq!(bare, "failed");
}

fn js_environment(name: &str, fixture: &str, file: &str) {
    let project = Project::copy(fixture).link_node_modules(&node_modules(name));
    let source = if fixture == "vitest" {
        format!("import {{ test, expect }} from 'vitest';\n{JS_ENV_TEST}")
    } else {
        JS_ENV_TEST.to_owned()
    };
    project.write(file, &source);
    let verdict = environment_verdict(
        project.path(),
        &mut Tcrunner::new(project.path()),
        file,
        &FLAGS,
    );
    assert_eq!(verdict, "passed", "{name}");
    let bare = environment_verdict(
        project.path(),
        &mut Tcrunner::new(project.path()),
        file,
        &[],
    );
    assert_eq!(bare, "failed", "{name}");
}

#[test]
fn a_jest_test_sees_only_the_environment_asked_for() {
    js_environment("jest30", "jest", "env.test.js");
}

#[test]
fn a_vitest_test_sees_only_the_environment_asked_for() {
    js_environment("vitest4", "vitest", "env.test.ts");
}

/// Every test's path and verdict in one run of `project` with `-j jobs`,
/// and the framework arguments it was launched with.
fn verdicts_with_jobs(command: &mut Tcrunner, jobs: &str) -> (BTreeMap<String, String>, String) {
    let run = command.args(["-j", jobs]).run(LIMIT);
    run.assert_code(1); // the fixtures fail on purpose
    assert_clean(&run.stdout);
    let verdicts = util::verdicts_by_path(&run.stdout);
    let text = run.text();
    let banner = text
        .lines()
        .find(|l| l.starts_with("Launching "))
        .unwrap_or_default()
        .to_owned();
    (verdicts, banner)
}

fn same_verdicts_in_parallel(new: impl Fn() -> Tcrunner, parallel: &str) {
    let (one, banner_one) = verdicts_with_jobs(&mut new(), "1");
    let (two, banner_two) = verdicts_with_jobs(&mut new(), "2");
    assert!(banner_two.contains(parallel), "{banner_two}");
    assert!(!banner_one.contains(parallel), "{banner_one}");
    assert!(one.len() > 10, "{one:?}");
    assert_eq!(one, two);
}

#[test]
fn pytest_in_two_workers_gives_the_verdicts_of_one() {
    let project = Project::copy("pytest");
    same_verdicts_in_parallel(|| Tcrunner::pytest(project.path()), "-n 2");
}

#[test]
fn jest_in_two_workers_gives_the_verdicts_of_one() {
    let project = Project::copy("jest").link_node_modules(&node_modules("jest30"));
    same_verdicts_in_parallel(|| Tcrunner::new(project.path()), "--maxWorkers=2");
}

#[test]
fn vitest_in_two_workers_gives_the_verdicts_of_one() {
    for name in ["vitest3", "vitest4"] {
        let project = Project::copy("vitest").link_node_modules(&node_modules(name));
        same_verdicts_in_parallel(|| Tcrunner::new(project.path()), "--maxWorkers=2");
    }
}

/// Without pytest-xdist, `-j 2` is one line naming the install command,
/// and nothing runs.
#[test]
fn pytest_jobs_without_xdist_is_a_one_line_error() {
    let project = Project::copy("pytest");
    // pytest 9's interpreter without its site-packages: no pytest-xdist.
    let python = project.path().join("python-without-site");
    project.write(
        "python-without-site",
        &format!("#!/bin/sh\nexec {} -S \"$@\"\n", util::pytest9().display()),
    );
    std::fs::set_permissions(&python, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let run = Tcrunner::new(project.path())
        .arg("--python")
        .arg(&python)
        .args(["-j", "2"])
        .run(LIMIT);
    run.assert_code(69);
    let stderr = &run.stderr;
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("-m pip install pytest-xdist"), "{stderr}");
    assert!(run.stdout.is_empty());
}
