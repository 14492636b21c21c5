//! The test history (`.tcrunner/`): sequences of real runs on a copy of a
//! fixture project whose tests are made to fail and then fixed between
//! runs, asserting which tests ran, in which order, and the exit codes of
//! `--lf`, `--ff`, `--lfnf` and `--sw` on pytest, jest and vitest.
//!
//! The jest and vitest tests use the installs of `scripts/setup-node.sh`.
mod util;

use std::time::Duration;

use util::{node_modules, Project, Run, Tcrunner};

const LIMIT: Duration = Duration::from_secs(180);

/// The names of the tests that started, in the order they started.
fn started(run: &Run) -> Vec<String> {
    run.messages()
        .iter()
        .filter(|m| m.starts_with("##teamcity[testStarted "))
        .map(|m| util::attr(m, "name").expect("a name"))
        .collect()
}

/// The line of stdout that starts with `prefix`.
fn line<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.lines().find(|l| l.starts_with(prefix))
}

/// A pytest file of top-level tests, each passing or failing.
fn py_tests(tests: &[(&str, bool)]) -> String {
    tests
        .iter()
        .map(|(name, fails)| format!("def test_{name}():\n    assert {}\n\n", !fails as u8))
        .map(|s| {
            s.replace("assert 1", "assert True")
                .replace("assert 0", "assert False")
        })
        .collect()
}

fn pytest(project: &Project, args: &[&str]) -> Run {
    Tcrunner::pytest(project.path()).args(args).run(LIMIT)
}

#[test]
fn pytest_lf_ff_and_lfnf_over_a_sequence_of_runs() {
    let project = Project::copy("history/pytest");
    project.write(
        "test_one.py",
        &py_tests(&[("a", false), ("b", true), ("c", false)]),
    );
    project.write("test_two.py", &py_tests(&[("d", true), ("e", false)]));
    let all = ["test_a", "test_b", "test_c", "test_d", "test_e"];

    // Nothing recorded yet: --lf runs everything, and says so.
    let run = pytest(&project, &["--lf"]);
    run.assert_code(1).assert_clean();
    assert_eq!(started(&run), all);
    assert_eq!(
        line(&run.text(), "run-last-failure:"),
        Some("run-last-failure: no previously failed tests, not deselecting items.")
    );
    assert!(project
        .path()
        .join(".tcrunner/history-pytest.json")
        .is_file());

    let run = pytest(&project, &["--lf"]);
    run.assert_code(1).assert_clean();
    assert_eq!(started(&run), ["test_b", "test_d"]);
    assert_eq!(
        line(&run.text(), "run-last-failure:"),
        Some("run-last-failure: 2 failed tests of 5")
    );

    // b is fixed: still rerun once (it failed last time), then gone.
    project.write(
        "test_one.py",
        &py_tests(&[("a", false), ("b", false), ("c", false)]),
    );
    let run = pytest(&project, &["--lf"]);
    run.assert_code(1);
    assert_eq!(started(&run), ["test_b", "test_d"]);
    let run = pytest(&project, &["--lf"]);
    assert_eq!(started(&run), ["test_d"]);

    // --ff: everything, the failure first.
    let run = pytest(&project, &["--ff"]);
    run.assert_code(1).assert_clean();
    assert_eq!(
        started(&run),
        ["test_d", "test_a", "test_b", "test_c", "test_e"]
    );
    assert_eq!(
        line(&run.text(), "run-last-failure:"),
        Some("run-last-failure: 1 failed test of 5 first")
    );

    // A file that fails to collect counts as failed, and runs whole once it loads.
    project.write("test_three.py", "def test_f(:\n");
    pytest(&project, &[]).assert_code(1);
    let run = pytest(&project, &["--lf"]);
    assert_eq!(started(&run), ["<collection error>", "test_d"]);
    project.write("test_three.py", &py_tests(&[("f", false), ("g", true)]));
    let run = pytest(&project, &["--lf"]);
    // In the order of their ids: files, then names.
    assert_eq!(started(&run), ["test_f", "test_g", "test_d"]);

    // All fixed: the last failures pass, then nothing is left to rerun.
    project.write("test_two.py", &py_tests(&[("d", false), ("e", false)]));
    project.write("test_three.py", &py_tests(&[("f", false), ("g", false)]));
    let run = pytest(&project, &["--lf"]);
    run.assert_code(0);
    assert_eq!(started(&run), ["test_g", "test_d"]);
    let run = pytest(&project, &["--lf", "--lfnf", "none"]);
    run.assert_code(5).assert_clean();
    assert_eq!(started(&run), Vec::<String>::new());
    assert_eq!(
        line(&run.text(), "run-last-failure:"),
        Some("run-last-failure: no previously failed tests, deselecting all items.")
    );
    let run = pytest(&project, &["--lf"]);
    run.assert_code(0);
    assert_eq!(started(&run).len(), 7);
}

#[test]
fn pytest_lf_within_a_path_and_a_moved_cache_dir() {
    let project = Project::copy("history/pytest");
    project.write("a/test_one.py", &py_tests(&[("a", true), ("b", false)]));
    project.write("b/test_two.py", &py_tests(&[("c", true)]));
    let cache = project.path().join("elsewhere");
    let cache = cache.to_str().unwrap();
    pytest(&project, &["--cache-dir", cache]).assert_code(1);
    assert!(!project.path().join(".tcrunner").exists());
    let run = pytest(&project, &["--cache-dir", cache, "--lf", "--path", "b"]);
    assert_eq!(started(&run), ["test_c"]);
    // A partial run updates only what it ran: a's failure is still known.
    let run = pytest(&project, &["--cache-dir", cache, "--lf"]);
    assert_eq!(started(&run), ["test_a", "test_c"]);
    // --cache-clear forgets it all.
    let run = pytest(&project, &["--cache-dir", cache, "--cache-clear", "--lf"]);
    assert_eq!(started(&run).len(), 3);
}

/// As pytest's own `--lf`: the folders and files of the failures are
/// collected first and the others not at all once a failure is found; when
/// none of the failures is collected any more (renamed, deleted), what was
/// collected runs. A run pytest refused records no failure.
#[test]
fn pytest_lf_collects_the_failures_first_and_runs_all_when_they_are_gone() {
    let project = Project::copy("history/pytest");
    project.write("a/test_one.py", &py_tests(&[("a", false), ("old", true)]));
    project.write("b/test_two.py", &py_tests(&[("b", false)]));
    project.write("c/test_three.py", &py_tests(&[("c", true)]));
    pytest(&project, &[]).assert_code(1);

    let run = pytest(&project, &["--lf"]);
    run.assert_code(1).assert_clean();
    assert_eq!(started(&run), ["test_old", "test_c"]);
    // b/test_two.py holds no failure: never collected, so nothing deselected there.
    assert!(run.text().contains("1 deselected"), "{}", run.describe());

    // c's failure is fixed and a's renamed: no failure is left to find,
    // and everything runs.
    project.write("c/test_three.py", &py_tests(&[("c", false)]));
    pytest(&project, &["--path", "c"]).assert_code(0);
    project.write("a/test_one.py", &py_tests(&[("a", false), ("new", false)]));
    let run = pytest(&project, &["--lf"]);
    run.assert_code(0).assert_clean();
    assert_eq!(started(&run), ["test_a", "test_new", "test_b", "test_c"]);
    assert!(
        run.text().contains(
            "message text='run-last-failure: 1 known failures not in selected tests; running what was collected'"
        ),
        "{}",
        run.describe()
    );

    // pytest refusing a target is no test of the suite's: nothing recorded.
    // (test_old stays recorded until a full run, as in pytest's cache.)
    pytest(&project, &["--target", "a/test_one.py::test_gone"]).assert_code(4);
    let recorded =
        std::fs::read_to_string(project.path().join(".tcrunner/history-pytest.json")).unwrap();
    assert!(!recorded.contains("did not start"), "{recorded}");
    let run = pytest(&project, &["--lf"]);
    run.assert_code(0);
    assert_eq!(
        line(&run.text(), "run-last-failure:"),
        Some("run-last-failure: 1 failed test of 5")
    );
}

/// pytest-describe's blocks are files inside a file (a `pytest.Module`
/// with the id `test_d.py::describe_math`): `--lf` took them for files
/// holding no failure and left every block out, so their failures never
/// ran again. Blocks go by their file, as in pytest's own `--lf`.
#[test]
fn pytest_lf_runs_the_failures_inside_describe_blocks_again() {
    let project = Project::copy("history/pytest");
    project.write(
        "test_d.py",
        "def describe_math():\n    def it_adds():\n        assert 1 + 1 == 2\n\n    \
         def describe_nested():\n        def it_fails():\n            assert 1 + 1 == 3\n",
    );
    project.write("test_plain.py", &py_tests(&[("a", false), ("b", true)]));
    let run = |args: &[&str]| {
        Tcrunner::new(project.path())
            .args(["--framework", "pytest", "--python"])
            .arg(util::path("target/venv/pytest9-reruns/bin/python"))
            .args(args)
            .run(LIMIT)
    };
    let first = run(&[]);
    first.assert_code(1).assert_clean();
    assert_eq!(started(&first), ["it_adds", "it_fails", "test_a", "test_b"]);
    let again = run(&["--lf"]);
    again.assert_code(1).assert_clean();
    assert_eq!(
        started(&again),
        ["it_fails", "test_b"],
        "{}",
        again.describe()
    );
    // With the plain failure fixed, the block's alone.
    project.write("test_plain.py", &py_tests(&[("a", false), ("b", false)]));
    run(&["--path", "test_plain.py"]).assert_code(0);
    let again = run(&["--lf"]);
    again.assert_code(1).assert_clean();
    assert_eq!(started(&again), ["it_fails"], "{}", again.describe());
}

/// `--lf` keeps the run's arguments: the recorded ids are relative to
/// pytest's root, which the failures' files given as arguments would move
/// (an ini file beside them; a root above the project).
#[test]
fn pytest_lf_where_the_root_is_not_the_project() {
    let failing = py_tests(&[("ok", false), ("bad", true)]);
    // An ini file in the tests' folder, the root the project's own names.
    let project = Project::copy("history/pytest");
    project.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n",
    );
    project.write("tests/pytest.ini", "[pytest]\n");
    project.write("tests/test_a.py", &failing);
    project.write("tests/test_b.py", &py_tests(&[("other", false)]));
    std::fs::remove_file(project.path().join("pytest.ini")).unwrap();
    pytest(&project, &[]).assert_code(1);
    let run = pytest(&project, &["--lf"]);
    run.assert_code(1).assert_clean();
    assert_eq!(started(&run), ["test_bad"], "{}", run.describe());

    // The root above the project (its ini file there), before and after a
    // run narrowed with --path.
    let outer = Project::copy("history/pytest");
    outer.write("app/tests/test_a.py", &failing);
    outer.write("app/tests/test_b.py", &py_tests(&[("other", true)]));
    let app = outer.path().join("app");
    let app_run = |args: &[&str]| Tcrunner::pytest(&app).args(args).run(LIMIT);
    app_run(&[]).assert_code(1);
    let run = app_run(&["--lf"]);
    run.assert_code(1).assert_clean();
    assert_eq!(
        started(&run),
        ["test_bad", "test_other"],
        "{}",
        run.describe()
    );
    app_run(&["--path", "tests/test_a.py"]).assert_code(1);
    let run = app_run(&["--lf"]);
    assert_eq!(
        started(&run),
        ["test_bad", "test_other"],
        "{}",
        run.describe()
    );
}

#[test]
fn a_corrupt_history_is_one_warning_and_the_run_goes_on() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", true), ("b", false)]));
    project.write(
        ".tcrunner/history-pytest.json",
        "{\"version\": 1, \"tests\": [",
    );
    let run = pytest(&project, &["--lf"]);
    run.assert_code(1);
    assert_eq!(started(&run), ["test_a", "test_b"]);
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("ignoring the test history"))
        .collect();
    assert_eq!(warnings.len(), 1, "{}", run.stderr);
    // The next run finds a sound file again.
    let run = pytest(&project, &["--lf"]);
    assert_eq!(started(&run), ["test_a"]);
    assert!(!run.stderr.contains("ignoring"), "{}", run.stderr);
}

/// Where the history folder cannot be written (here a file holds its
/// name; a read-only checkout does the same), a selection that needs the
/// order file stops the run with exit 74 rather than run every test: two
/// shards would each run them all. An order alone (`--ff`) only warns.
#[test]
fn an_unwritable_history_folder_stops_a_shard_rather_than_run_everything() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", false), ("b", false)]));
    project.write(".tcrunner", "not a folder");
    let run = pytest(&project, &["--shard", "1/2"]);
    run.assert_code(74);
    assert!(started(&run).is_empty(), "{}", run.describe());
    let order = project.path().join(".tcrunner/order-");
    assert!(
        run.stderr
            .contains(&format!("tcrunner: --shard {}", order.display())),
        "{}",
        run.stderr
    );
    let run = pytest(&project, &["--ff"]);
    run.assert_code(0);
    assert_eq!(started(&run), ["test_a", "test_b"]);
}

#[test]
fn concurrent_runs_leave_a_whole_history() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", true), ("b", false)]));
    let mut runs: Vec<_> = (0..4)
        .map(|_| Tcrunner::pytest(project.path()).spawn())
        .collect();
    for run in runs.drain(..) {
        run.finish(LIMIT).assert_code(1);
    }
    let history = util::json(&project.path().join(".tcrunner/history-pytest.json"));
    assert_eq!(history["version"], 1);
    assert_eq!(history["tests"]["test_one.py::test_a"]["verdict"], "failed");
    let leftovers: Vec<_> = std::fs::read_dir(project.path().join(".tcrunner"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Runs that end at once merge into the history in turn, under a lock on
/// its folder: each reads what the one before it wrote, and none loses
/// another's results. Held from outside here, the lock keeps two runs
/// waiting after their streams ended; let go, both are recorded.
#[test]
fn runs_ending_at_once_merge_into_the_history_in_turn() {
    use std::os::fd::AsRawFd;
    let project = Project::copy("history/pytest");
    project.write("test_a.py", &py_tests(&[("a", true)]));
    project.write("test_b.py", &py_tests(&[("b", false)]));
    let dir = project.path().join(".tcrunner");
    std::fs::create_dir_all(&dir).unwrap();
    let held = std::fs::File::open(&dir).unwrap();
    assert_eq!(unsafe { libc::flock(held.as_raw_fd(), libc::LOCK_EX) }, 0);
    let mut runs: Vec<_> = ["test_a.py", "test_b.py"]
        .into_iter()
        .map(|file| {
            let mut run = Tcrunner::pytest(project.path())
                .args(["--path", file])
                .spawn();
            run.wait_for("##teamcity[testingFinished]", LIMIT);
            run
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for run in &mut runs {
        assert!(!run.is_finished(), "a run merged while the lock was held");
    }
    drop(held);
    let codes: Vec<i32> = runs.into_iter().map(|r| r.finish(LIMIT).code()).collect();
    assert_eq!(codes, [1, 0]);
    let tests = &util::json(&dir.join("history-pytest.json"))["tests"];
    assert_eq!(tests["test_a.py::test_a"]["verdict"], "failed", "{tests}");
    assert_eq!(tests["test_b.py::test_b"]["verdict"], "passed", "{tests}");
}

#[test]
fn a_run_keeps_what_another_run_recorded_while_it_ran() {
    let project = Project::copy("history/pytest");
    let (started, release) = (
        project.path().join("started"),
        project.path().join("release"),
    );
    project.write(
        "test_slow.py",
        &format!(
            "import os, time\n\ndef test_waits():\n    open({:?}, 'w').close()\n    while not os.path.exists({:?}):\n        time.sleep(0.05)\n",
            started.to_str().unwrap(),
            release.to_str().unwrap()
        ),
    );
    project.write("test_fast.py", &py_tests(&[("quick", true)]));
    pytest(&project, &["--path", "test_fast.py"]).assert_code(1);
    let history = project.path().join(".tcrunner/history-pytest.json");
    // The slow run has read the history (the fast test failed) and is
    // running when the fast run records the fast test passing.
    let slow = Tcrunner::pytest(project.path())
        .args(["--path", "test_slow.py"])
        .spawn();
    let deadline = std::time::Instant::now() + LIMIT;
    while !started.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    project.write("test_fast.py", &py_tests(&[("quick", false)]));
    pytest(&project, &["--path", "test_fast.py"]).assert_code(0);
    std::fs::write(&release, "").unwrap();
    slow.finish(LIMIT).assert_code(0);
    let tests = &util::json(&history)["tests"];
    assert_eq!(tests["test_slow.py::test_waits"]["verdict"], "passed");
    assert_eq!(
        tests["test_fast.py::test_quick"]["verdict"], "passed",
        "{tests}"
    );
}

#[test]
fn pytest_stepwise_stops_at_a_failure_and_resumes_there() {
    let project = Project::copy("history/pytest");
    let write = |b: bool, c: bool| {
        project.write(
            "test_one.py",
            &py_tests(&[("a", false), ("b", b), ("c", c), ("d", false)]),
        );
    };
    write(true, true);
    let run = pytest(&project, &["--sw"]);
    run.assert_code(1).assert_clean();
    // Stopped after b: c and d never started.
    assert_eq!(started(&run), ["test_a", "test_b"]);
    assert!(run
        .text()
        .contains("stepwise: no previously failed tests, not skipping."));
    // Not fixed: resumes at b, stops there again.
    let run = pytest(&project, &["--sw"]);
    assert_eq!(started(&run), ["test_b"]);
    assert!(
        run.text()
            .contains("stepwise: skipping 1 already passed items"),
        "{}",
        run.describe()
    );
    write(false, true);
    let run = pytest(&project, &["--sw"]);
    run.assert_code(1);
    assert_eq!(started(&run), ["test_b", "test_c"]);
    // --sw-skip lets c pass and runs to the end; as pytest's, a failure
    // it let pass is not where the next run resumes: it starts over.
    let run = pytest(&project, &["--sw-skip"]);
    run.assert_code(1).assert_clean();
    assert_eq!(started(&run), ["test_c", "test_d"]);
    let run = pytest(&project, &["--sw"]);
    assert_eq!(started(&run), ["test_a", "test_b", "test_c"]);
    write(false, false);
    let run = pytest(&project, &["--sw"]);
    run.assert_code(0);
    assert_eq!(started(&run), ["test_c", "test_d"]);
    // Through to the end: the next --sw starts over.
    let run = pytest(&project, &["--sw"]);
    assert_eq!(started(&run), ["test_a", "test_b", "test_c", "test_d"]);
    // --sw-reset starts over whatever the state.
    write(true, false);
    pytest(&project, &["--sw"]).assert_code(1);
    let run = pytest(&project, &["--sw-reset"]);
    assert_eq!(started(&run), ["test_a", "test_b"]);
}

/// A JS test file: `describe('group')` around the first test, the rest at
/// the top; each test passes or throws.
fn js_tests(tests: &[(&str, bool)], esm: bool) -> String {
    let mut text = String::new();
    if esm {
        text.push_str("import { describe, test } from 'vitest';\n");
    }
    for (i, (name, fails)) in tests.iter().enumerate() {
        let body = if *fails { "throw new Error('no');" } else { "" };
        let test = format!("test('{name}', () => {{ {body} }});\n");
        if i == 0 {
            text.push_str(&format!("describe('group', () => {{\n  {test}}});\n"));
        } else {
            text.push_str(&test);
        }
    }
    text
}

fn js_sequence(project: &Project, ext: &str, esm: bool) {
    let file = |n: &str| format!("{n}.test.{ext}");
    let run = |args: &[&str]| {
        // In band, so that the order of files is one.
        let mut t = Tcrunner::new(project.path());
        t.args(args);
        if ext == "js" {
            t.args(["--", "-i"]);
        }
        t.run(LIMIT)
    };
    let sorted = |run: &Run| {
        let mut names = started(run);
        names.sort();
        names
    };
    project.write(
        &file("one"),
        &js_tests(
            &[("a", true), ("b", false), ("c", true), ("c extra", false)],
            esm,
        ),
    );
    project.write(&file("two"), &js_tests(&[("d", false), ("a", false)], esm));
    run(&[]).assert_code(1).assert_clean();
    let history = format!(
        ".tcrunner/history-{}.json",
        if esm { "vitest" } else { "jest" }
    );
    let recorded = util::json(&project.path().join(&history));
    let one = file("one");
    assert_eq!(
        recorded["tests"][format!("{one}::group > a")]["verdict"],
        "failed"
    );
    assert_eq!(recorded["tests"][format!("{one}::c")]["verdict"], "failed");

    // Exactly the failed tests: `a` of two.test has a's title but passed,
    // and `c extra` only starts like `c`.
    let lf = run(&["--lf"]);
    lf.assert_code(1).assert_clean();
    assert_eq!(started(&lf), ["a", "c"], "{}", lf.describe());
    assert_eq!(
        line(&lf.text(), "run-last-failure:"),
        Some("run-last-failure: 2 failed tests of 6")
    );
    project.write(
        &file("one"),
        &js_tests(&[("a", false), ("b", false), ("c", true)], esm),
    );
    run(&["--lf"]).assert_code(1);
    assert_eq!(started(&run(&["--lf"])), ["c"]);

    // A file that fails to load runs whole on --lf, and once it loads its
    // tests are recorded.
    project.write(&file("two"), "import './nope.js';\n");
    run(&[]).assert_code(1);
    project.write(&file("two"), &js_tests(&[("d", true), ("e", false)], esm));
    let lf = run(&["--lf"]);
    // jest and vitest cannot run a whole file beside named tests: the
    // failed files run whole.
    assert_eq!(sorted(&lf), ["a", "b", "c", "d", "e"], "{}", lf.describe());
    let lf = run(&["--lf"]);
    assert_eq!(sorted(&lf), ["c", "d"], "{}", lf.describe());

    // Fixed: rerun once, then nothing recorded, --lfnf none runs nothing.
    project.write(
        &file("one"),
        &js_tests(&[("a", false), ("b", false), ("c", false)], esm),
    );
    project.write(&file("two"), &js_tests(&[("d", false), ("e", false)], esm));
    run(&["--lf"]).assert_code(0);
    let none = run(&["--lf", "--lfnf", "none"]);
    none.assert_code(5).assert_clean();
    assert!(started(&none).is_empty());
}

/// A copy of the history fixture for `framework` (`jest` or `vitest`),
/// linked to the newest install of it under target/node.
fn js_project(framework: &str) -> Project {
    let (newest, older) = match framework {
        "jest" => ("jest30", "jest29"),
        _ => ("vitest4", "vitest3"),
    };
    let modules = node_modules(newest)
        .or_else(|| node_modules(older))
        .unwrap_or_else(|| {
            panic!("no {framework} under target/node: run `bash scripts/setup-node.sh`")
        });
    Project::copy(&format!("history/{framework}")).link_node_modules(&modules)
}

#[test]
fn jest_lf_reruns_exactly_the_failed_tests() {
    let project = js_project("jest");
    js_sequence(&project, "js", false);
}

#[test]
fn vitest_lf_reruns_exactly_the_failed_tests() {
    let project = js_project("vitest");
    js_sequence(&project, "mjs", true);
}

/// `--lf -- one`: the user's own filter after `--` narrows the failures
/// rerun, where jest and vitest would OR it with the failures' files.
#[test]
fn lf_keeps_to_the_users_own_filters_on_jest_and_vitest() {
    for (framework, ext, esm) in [("jest", "js", false), ("vitest", "mjs", true)] {
        let project = js_project(framework);
        project.write(
            &format!("one/a.test.{ext}"),
            &js_tests(&[("a good", false), ("a bad", true)], esm),
        );
        project.write(
            &format!("two/b.test.{ext}"),
            &js_tests(&[("b good", false), ("b bad", true)], esm),
        );
        Tcrunner::new(project.path()).run(LIMIT).assert_code(1);
        let lf = Tcrunner::new(project.path())
            .args(["--lf", "--", "one"])
            .run(LIMIT);
        lf.assert_code(1).assert_clean();
        assert_eq!(started(&lf), ["a bad"], "{framework}: {}", lf.describe());
        assert_eq!(
            line(&lf.text(), "run-last-failure:"),
            Some("run-last-failure: 1 failed test of 4"),
            "{framework}"
        );
    }
}

/// `--lf` after the failed tests changed: a removed file's failures are
/// left out, as pytest leaves out failures it no longer collects (named to
/// jest, the file failed to load), and a renamed failure that selects
/// nothing is no pass.
#[test]
fn lf_after_the_failures_were_renamed_or_removed() {
    for (framework, ext, esm) in [("jest", "js", false), ("vitest", "mjs", true)] {
        let project = js_project(framework);
        let (stay, gone) = (format!("stay.test.{ext}"), format!("gone.test.{ext}"));
        project.write(&stay, &js_tests(&[("stay", false)], esm));
        project.write(&gone, &js_tests(&[("old", true)], esm));
        Tcrunner::new(project.path()).run(LIMIT).assert_code(1);
        project.write(&gone, &js_tests(&[("renamed", true)], esm));
        let lf = Tcrunner::new(project.path()).arg("--lf").run(LIMIT);
        lf.assert_code(5).assert_clean();
        assert!(started(&lf).is_empty(), "{framework}: {}", lf.describe());
        assert!(
            lf.text().contains(
                "run-last-failure: the failed test did not run: renamed since the last run?"
            ),
            "{framework}: {}",
            lf.describe()
        );
        Tcrunner::new(project.path()).run(LIMIT).assert_code(1);
        std::fs::remove_file(project.path().join(&gone)).unwrap();
        let lf = Tcrunner::new(project.path()).arg("--lf").run(LIMIT);
        lf.assert_code(0).assert_clean();
        assert_eq!(started(&lf), ["stay"], "{framework}: {}", lf.describe());
        assert_eq!(
            line(&lf.text(), "run-last-failure:"),
            Some("run-last-failure: 1 known failures not in selected tests"),
            "{framework}"
        );
    }
}

/// Titles holding a lone UTF-16 surrogate (`'\ud800'`), which the stream
/// and the history can only show as U+FFFD: `--lf` still reruns those that
/// failed, where it selected nothing and passed.
#[test]
fn lf_reruns_failures_whose_titles_hold_lone_surrogates() {
    for (framework, ext, esm) in [("jest", "js", false), ("vitest", "mjs", true)] {
        let project = js_project(framework);
        let import = if esm {
            "import { expect, test } from 'vitest';\n"
        } else {
            ""
        };
        project.write(
            &format!("gen.test.{ext}"),
            &format!(
                "{import}test.each(['\\ud800', '\\udfff', 'ok'])('gen %s', (s) => {{\n  \
                 expect(s).toBe('ok');\n}});\n"
            ),
        );
        Tcrunner::new(project.path()).run(LIMIT).assert_code(1);
        let lf = Tcrunner::new(project.path()).arg("--lf").run(LIMIT);
        lf.assert_code(1).assert_clean();
        assert_eq!(
            started(&lf),
            ["gen \u{fffd}", "gen \u{fffd}"],
            "{framework}: {}",
            lf.describe()
        );
    }
}

/// `--ff`, then `--nf`, on each installed major of jest (`jest29`, …) or
/// vitest: the files the history puts first start first, in one worker.
/// The framework's own cache is left out of every run (a fresh jest cache
/// folder each time, vitest's `--no-cache`), as on a CI machine that keeps
/// only tcrunner's history: both frameworks then start the larger file
/// first, so without the history's order the file that failed, and the
/// new file, would start last.
fn js_failed_and_new_first(framework: &str, installs: &[&str]) {
    let esm = framework == "vitest";
    let ext = if esm { "mjs" } else { "js" };
    for install in installs {
        let modules = node_modules(install).unwrap_or_else(|| {
            panic!("no {install} under target/node: run `bash scripts/setup-node.sh`")
        });
        let project = Project::copy(&format!("history/{framework}")).link_node_modules(&modules);
        let runs = std::cell::Cell::new(0);
        let run = |args: &[&str]| {
            runs.set(runs.get() + 1);
            let mut t = Tcrunner::new(project.path());
            if *install == "vitest5" {
                t.arg("--node")
                    .arg(util::node22().expect("node22 under target/node"));
            }
            t.args(["-j", "1"]).args(args).arg("--");
            if esm {
                t.arg("--no-cache");
            } else {
                t.arg(format!("--cacheDirectory=jest-cache-{}", runs.get()));
            }
            let run = t.run(LIMIT);
            run.assert_clean();
            run
        };
        let padding = format!("// {}\n", "-".repeat(4000));
        let big = format!(
            "{padding}{}",
            js_tests(&[("b1", false), ("b2", false)], esm)
        );
        project.write(&format!("big.test.{ext}"), &big);
        let small = format!("small.test.{ext}");
        project.write(&small, &js_tests(&[("s1", true), ("s2", false)], esm));
        let plain = run(&[]);
        plain.assert_code(1);
        assert_eq!(
            started(&plain),
            ["b1", "b2", "s1", "s2"],
            "{install}: {}",
            plain.describe()
        );

        let ff = run(&["--ff"]);
        ff.assert_code(1);
        assert_eq!(
            started(&ff),
            ["s1", "s2", "b1", "b2"],
            "{install}: {}",
            ff.describe()
        );
        assert_eq!(
            line(&ff.text(), "run-last-failure:"),
            Some("run-last-failure: 1 failed test of 4 first"),
            "{install}"
        );

        // The small file fixed since it last ran, and a smaller file added
        // after it: both are new to the history, the newest first.
        project.write(&small, &js_tests(&[("s1", false), ("s2", false)], esm));
        let added = project.path().join(format!("added.test.{ext}"));
        project.write(
            &format!("added.test.{ext}"),
            &js_tests(&[("n1", false)], esm),
        );
        let later = std::fs::metadata(project.path().join(&small))
            .unwrap()
            .modified()
            .unwrap()
            + Duration::from_secs(1);
        std::fs::File::options()
            .write(true)
            .open(&added)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let nf = run(&["--nf"]);
        nf.assert_code(0);
        assert_eq!(
            started(&nf),
            ["n1", "s1", "s2", "b1", "b2"],
            "{install}: {}",
            nf.describe()
        );
        assert_eq!(
            line(&nf.text(), "new-first:"),
            Some("new-first: 4 tests in 2 test files known to the history"),
            "{install}"
        );
        // Known and unchanged since they last ran: the framework's own
        // order again.
        let before = std::time::SystemTime::now() - Duration::from_secs(60);
        for file in ["big", "small", "added"] {
            std::fs::File::options()
                .write(true)
                .open(project.path().join(format!("{file}.test.{ext}")))
                .unwrap()
                .set_modified(before)
                .unwrap();
        }
        let nf = run(&["--nf"]);
        assert_eq!(started(&nf), ["b1", "b2", "s1", "s2", "n1"], "{install}");
    }
}

#[test]
fn jest_ff_and_nf_start_the_history_s_files_first() {
    js_failed_and_new_first("jest", &["jest29", "jest30"]);
}

#[test]
fn vitest_ff_and_nf_start_the_history_s_files_first() {
    js_failed_and_new_first("vitest", &["vitest3", "vitest4", "vitest5"]);
}

/// `--ff` with the project's own sequencer (by file name, last first, in
/// the config): the failed file starts first, and the rest keep that
/// sequencer's order, not the framework's default (the larger file first).
fn js_failed_first_keeps_the_project_s_sequencer(framework: &str) {
    let project = js_project(framework);
    let esm = framework == "vitest";
    let ext = if esm { "mjs" } else { "js" };
    if esm {
        project.write(
            "vitest.config.mjs",
            "import { defineConfig } from 'vitest/config';\n\
             import { BaseSequencer } from 'vitest/node';\n\
             class LastNameFirst extends BaseSequencer {\n\
             \x20 async sort(files) { return [...files].sort((a, b) => (a.moduleId < b.moduleId ? 1 : -1)); }\n\
             }\n\
             export default defineConfig({ test: { environment: 'node', include: ['**/*.test.mjs'], \
             sequence: { sequencer: LastNameFirst } } });\n",
        );
    } else {
        project.write(
            "jest.config.js",
            "module.exports = { testEnvironment: 'node', testSequencer: '<rootDir>/sequencer.js' };\n",
        );
        project.write(
            "sequencer.js",
            "const Sequencer = require('@jest/test-sequencer').default;\n\
             module.exports = class LastNameFirst extends Sequencer {\n\
             \x20 sort(tests) { return [...tests].sort((a, b) => (a.path < b.path ? 1 : -1)); }\n\
             };\n",
        );
    }
    let padding = format!("// {}\n", "-".repeat(4000));
    project.write(&format!("a.test.{ext}"), &js_tests(&[("a1", true)], esm));
    let b = format!("{padding}{}", js_tests(&[("b1", false)], esm));
    project.write(&format!("b.test.{ext}"), &b);
    project.write(&format!("c.test.{ext}"), &js_tests(&[("c1", false)], esm));
    let run = |args: &[&str]| {
        let run = Tcrunner::new(project.path())
            .args(["-j", "1"])
            .args(args)
            .run(LIMIT);
        run.assert_code(1).assert_clean();
        run
    };
    let plain = run(&[]);
    assert_eq!(started(&plain), ["c1", "b1", "a1"], "{}", plain.describe());
    let ff = run(&["--ff"]);
    assert_eq!(started(&ff), ["a1", "c1", "b1"], "{}", ff.describe());
}

#[test]
fn jest_ff_keeps_the_project_s_sequencer() {
    js_failed_first_keeps_the_project_s_sequencer("jest");
}

#[test]
fn vitest_ff_keeps_the_project_s_sequencer() {
    js_failed_first_keeps_the_project_s_sequencer("vitest");
}

#[test]
fn jest_stepwise_stops_at_the_first_failure_as_a_stop() {
    let project = js_project("jest");
    project.write(
        "one.test.js",
        "test('a', () => {});\ntest('b', () => { throw new Error('no'); });\n\
         test('c', () => new Promise((r) => setTimeout(r, 3000)));\ntest('d', () => {});\n",
    );
    let run = Tcrunner::new(project.path())
        .args(["--sw", "--", "-i"])
        .run(LIMIT);
    run.assert_code(1).assert_clean().assert_no_leftovers();
    let names = started(&run);
    assert_eq!(names[..2], ["a", "b"], "{}", run.describe());
    assert!(!names.contains(&"d".to_owned()), "{}", run.describe());
    assert!(
        run.stderr.contains("stepwise: stopping jest"),
        "{}",
        run.stderr
    );
    let history = util::json(&project.path().join(".tcrunner/history-jest.json"));
    assert_eq!(history["stepwise"]["failed"], "one.test.js::b");
}

/// Copies the project's history into a folder of its own, as each machine
/// of a CI matrix starts from the same restored history.
fn history_copy(project: &Project, label: &str) -> String {
    let from = project.path().join(".tcrunner");
    let to = project.path().join(format!("cache-{label}"));
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(&to).unwrap();
    for entry in std::fs::read_dir(&from).into_iter().flatten().flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    to.to_string_lossy().into_owned()
}

/// Runs every shard of `count` from the same history, of pytest or of the
/// framework the project has (`js`), with `args` after tcrunner's; returns
/// each shard's started tests and its run.
fn shards(project: &Project, count: usize, js: bool, args: &[&str]) -> Vec<(Vec<String>, Run)> {
    (1..=count)
        .map(|k| {
            let cache = history_copy(project, &format!("{k}-{count}"));
            let shard = format!("{k}/{count}");
            let mut t = if js {
                Tcrunner::new(project.path())
            } else {
                Tcrunner::pytest(project.path())
            };
            t.args(["--shard", &shard, "--cache-dir", &cache])
                .args(args);
            let run = t.run(LIMIT);
            (started(&run), run)
        })
        .collect()
}

/// Asserts the shards' tests together are `all`, each once.
fn assert_partition(shards: &[(Vec<String>, Run)], all: &[String]) {
    let mut union: Vec<String> = shards.iter().flat_map(|(names, _)| names.clone()).collect();
    union.sort();
    let mut all = all.to_vec();
    all.sort();
    assert_eq!(union, all, "every test in exactly one shard");
}

#[test]
fn pytest_shards_cover_the_suite_once_balanced_by_durations() {
    let project = Project::copy("history/pytest");
    let mut all = Vec::new();
    for file in 0..3 {
        let mut text = String::from("import time\n\n");
        for test in 0..5 {
            let name = format!("t{file}{test}");
            // Two slow tests, in one file: a split by count would put them together.
            let sleep = if file == 0 && test < 2 { "0.4" } else { "0" };
            text.push_str(&format!("def test_{name}():\n    time.sleep({sleep})\n\n"));
            all.push(format!("test_{name}"));
        }
        project.write(&format!("test_{file}.py"), &text);
    }
    // No history yet: by count, 15 tests into 2 shards of 8 and 7.
    let by_count = shards(&project, 2, false, &[]);
    assert_partition(&by_count, &all);
    assert_eq!(by_count[0].0.len(), 8);
    let split = line(&by_count[0].1.text(), "##teamcity[message text='shard 1/2")
        .map(str::to_owned)
        .unwrap_or_default();
    assert!(
        split.contains("8 of 15 tests"),
        "{}",
        by_count[0].1.describe()
    );

    // With durations: the slow tests go to different shards.
    pytest(&project, &[]).assert_code(0);
    let timed = shards(&project, 2, false, &[]);
    assert_partition(&timed, &all);
    for (names, run) in &timed {
        run.assert_code(0).assert_clean();
        assert_eq!(
            names
                .iter()
                .filter(|n| *n == "test_t00" || *n == "test_t01")
                .count(),
            1,
            "{names:?}"
        );
        assert!(run.text().contains("planned "), "{}", run.describe());
    }
    let three = shards(&project, 3, false, &[]);
    assert_partition(&three, &all);
}

/// Shards run in turn on one history (one machine, no copies): each run
/// updates the durations the next would split by, yet every shard splits
/// as the round's first did, and the round starts over after its last.
#[test]
fn pytest_shards_run_in_turn_on_one_history_cover_the_suite_once() {
    let project = Project::copy("history/pytest");
    let write = |slow: &str| {
        let mut text = format!("import time\n\ndef test_a():\n    time.sleep({slow})\n\n");
        text.push_str(&py_tests(&[
            ("b", false),
            ("c", false),
            ("d", false),
            ("e", false),
        ]));
        project.write("test_one.py", &text);
    };
    // Recorded: a is slow, so shard 1/2 is a alone and shard 2/2 the rest.
    write("0.4");
    pytest(&project, &[]).assert_code(0);
    // a is quick now: after shard 1's run the history would split by count.
    write("0");
    let all = ["test_a", "test_b", "test_c", "test_d", "test_e"];
    for _round in 0..2 {
        let first = pytest(&project, &["--shard", "1/2"]);
        first.assert_code(0).assert_clean();
        let second = pytest(&project, &["--shard", "2/2"]);
        second.assert_code(0).assert_clean();
        assert!(
            second
                .text()
                .contains("split by the durations the history had for shard 1/2"),
            "{}",
            second.describe()
        );
        let mut union = [started(&first), started(&second)].concat();
        union.sort();
        assert_eq!(union, all, "{}\n{}", first.describe(), second.describe());
    }
    // A run of the whole suite ends a round: the next shard starts one.
    pytest(&project, &["--shard", "1/2"]).assert_code(0);
    pytest(&project, &[]).assert_code(0);
    let fresh = pytest(&project, &["--shard", "2/2"]);
    assert!(
        !fresh.text().contains("split by the durations"),
        "{}",
        fresh.describe()
    );
}

#[test]
fn a_bad_shard_is_a_usage_error() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", false)]));
    for bad in ["0/2", "3/2", "2"] {
        let run = pytest(&project, &["--shard", bad]);
        run.assert_code(64);
        assert!(run.stderr.contains("--shard"), "{}", run.stderr);
    }
}

/// More shards than tests: each test goes to a shard of its own and the
/// rest run nothing (exit 5), however many there are, at no cost.
#[test]
fn a_huge_shard_count_gives_each_test_a_shard_and_the_rest_nothing() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", false), ("b", false)]));
    let huge = 4_294_967_297u64;
    let mut ran = Vec::new();
    for k in 1..=2 {
        let run = pytest(&project, &["--shard", &format!("{k}/{huge}")]);
        run.assert_code(0);
        ran.extend(started(&run));
    }
    ran.sort();
    assert_eq!(ran, ["test_a", "test_b"]);
    let run = pytest(&project, &["--shard", &format!("3/{huge}")]);
    run.assert_code(5);
    assert!(started(&run).is_empty(), "{}", run.describe());
}

fn js_shards(project: &Project, ext: &str, esm: bool) {
    let mut all = Vec::new();
    for file in 0..5 {
        let tests: Vec<(String, bool)> = (0..3).map(|t| (format!("t{file}{t}"), false)).collect();
        let tests: Vec<(&str, bool)> = tests.iter().map(|(n, f)| (n.as_str(), *f)).collect();
        project.write(&format!("f{file}.test.{ext}"), &js_tests(&tests, esm));
        all.extend(tests.iter().map(|(n, _)| (*n).to_owned()));
    }
    let full = Tcrunner::new(project.path()).run(LIMIT);
    full.assert_code(0);
    let runs = shards(project, 3, true, &[]);
    assert_partition(&runs, &all);
    for (names, run) in &runs {
        run.assert_code(0).assert_clean();
        // Whole files: a file's three tests are in one shard.
        assert_eq!(names.len() % 3, 0, "{names:?}");
        assert!(
            run.text()
                .lines()
                .any(|l| l.starts_with("shard ") && l.contains(" of 5 test files, planned ")),
            "{}",
            run.describe()
        );
    }
    // More shards than files: the empty ones run nothing (exit 5).
    let runs = shards(project, 6, true, &[]);
    assert_partition(&runs, &all);
    assert_eq!(runs.iter().filter(|(names, _)| names.is_empty()).count(), 1);
    assert!(runs
        .iter()
        .any(|(names, run)| names.is_empty() && run.code() == 5));
    // The user's own filter after `--` matches every file: the framework
    // ORs it with the shard's files, which must still be all it runs.
    let runs = shards(project, 3, true, &["--", "f"]);
    assert_partition(&runs, &all);
    for (_, run) in &runs {
        run.assert_code(0).assert_clean();
    }
    // A shard of one file (`vitest list` must not take it for the file to
    // write its list to).
    let one = format!("f0.test.{ext}");
    let before = std::fs::read_to_string(project.path().join(&one)).unwrap();
    let runs = shards(project, 2, true, &["--path", &one]);
    assert_partition(&runs, &all[..3]);
    assert_eq!(
        std::fs::read_to_string(project.path().join(&one)).unwrap(),
        before
    );
}

/// In pnpm's layout, where the project's `node_modules` holds a link to
/// jest alone and jest-cli sits beside jest's real folder.
#[test]
fn jest_shards_split_test_files() {
    let modules = node_modules("jest30")
        .or_else(|| node_modules("jest29"))
        .expect("jest under target/node: run `bash scripts/setup-node.sh`");
    let project = Project::copy("history/jest");
    std::fs::create_dir(project.path().join("node_modules")).unwrap();
    std::os::unix::fs::symlink(
        modules.join("jest"),
        project.path().join("node_modules/jest"),
    )
    .unwrap();
    js_shards(&project, "js", false);
}

#[test]
fn vitest_shards_split_test_files() {
    let project = js_project("vitest");
    js_shards(&project, "mjs", true);
}

/// Writes TeamCity's build properties naming a Parallel Tests filter file
/// (`key` is `includesFile` or `excludesFile`) that lists `classes`, in the
/// format the build feature writes; returns the properties file.
fn teamcity_batch(project: &Project, key: &str, classes: &[&str]) -> std::path::PathBuf {
    let filter = project.path().join("parallel-tests.txt");
    let mut text =
        String::from("#version=1\n#algorithm=duration\n#current_batch=2\n#total_batches=3\n");
    for class in classes {
        text.push_str(class);
        text.push('\n');
    }
    std::fs::write(&filter, text).unwrap();
    let properties = project.path().join("build.properties");
    // Java properties escape `:` (and `\`).
    let escaped = filter
        .to_string_lossy()
        .replace('\\', "\\\\")
        .replace(':', "\\:");
    std::fs::write(
        &properties,
        format!("teamcity.build.id=7\nteamcity.build.parallelTests.{key}={escaped}\n"),
    )
    .unwrap();
    properties
}

#[test]
fn a_teamcity_parallel_tests_file_selects_this_batch_on_pytest() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", false), ("b", false)]));
    project.write("sub/test_two.py", &py_tests(&[("c", false)]));
    project.write("test_three.py", &py_tests(&[("d", false)]));
    let run = |properties: &std::path::Path| {
        Tcrunner::pytest(project.path())
            .env("TEAMCITY_BUILD_PROPERTIES_FILE", properties)
            .run(LIMIT)
    };
    let included = run(&teamcity_batch(
        &project,
        "includesFile",
        &["test_one.py", "sub/test_two.py: c"],
    ));
    included.assert_code(0).assert_clean();
    assert_eq!(started(&included), ["test_c", "test_a", "test_b"]);
    assert_eq!(
        line(&included.text(), "TeamCity parallel tests:"),
        Some("TeamCity parallel tests: batch 2 of 3, running 2 test files")
    );
    let excluded = run(&teamcity_batch(
        &project,
        "excludesFile",
        &["test_one.py", "sub/test_two.py"],
    ));
    excluded.assert_code(0);
    assert_eq!(started(&excluded), ["test_d"]);
    // Properties without the feature: every test runs.
    let properties = project.path().join("plain.properties");
    std::fs::write(&properties, "teamcity.build.id=7\n").unwrap();
    assert_eq!(started(&run(&properties)).len(), 4);
}

#[test]
fn a_teamcity_parallel_tests_file_selects_this_batch_on_jest() {
    let project = js_project("jest");
    project.write(
        "one.test.js",
        &js_tests(&[("a", false), ("b", false)], false),
    );
    project.write("sub/two.test.js", &js_tests(&[("c", false)], false));
    project.write("three.test.js", &js_tests(&[("d", false)], false));
    let properties = teamcity_batch(&project, "excludesFile", &["one.test.js", "three.test.js"]);
    let run = Tcrunner::new(project.path())
        .env("TEAMCITY_BUILD_PROPERTIES_FILE", &properties)
        .run(LIMIT);
    run.assert_code(0).assert_clean();
    assert_eq!(started(&run), ["c"]);
    assert_eq!(
        line(&run.text(), "TeamCity parallel tests:"),
        Some("TeamCity parallel tests: batch 2 of 3, 1 of 3 test files")
    );
}

#[test]
fn pytest_nf_runs_new_tests_first_then_the_newest_files() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", false), ("b", false)]));
    project.write("test_two.py", &py_tests(&[("c", false)]));
    pytest(&project, &[]).assert_code(0);
    // A new test in the older file, and the other file touched later.
    project.write(
        "test_one.py",
        &py_tests(&[("a", false), ("b", false), ("n", false)]),
    );
    let old = std::time::SystemTime::now() - Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(project.path().join("test_one.py"))
        .unwrap()
        .set_modified(old)
        .unwrap();
    let run = pytest(&project, &["--nf"]);
    run.assert_code(0).assert_clean();
    assert_eq!(started(&run), ["test_n", "test_c", "test_a", "test_b"]);
    assert_eq!(
        line(&run.text(), "new-first:"),
        Some("new-first: 3 tests known to the history")
    );
}

#[test]
fn tcrunner_history_shows_failures_the_slowest_and_the_stepwise_position() {
    let project = Project::copy("history/pytest");
    project.write(
        "test_one.py",
        &py_tests(&[("a", false), ("b", true), ("c", false)]),
    );
    let shown = |args: &[&str]| {
        let out = util::tcrunner(&["history", "--project"])
            .arg(project.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    assert!(
        shown(&[]).starts_with("no test history in "),
        "{}",
        shown(&[])
    );
    pytest(&project, &["--sw"]).assert_code(1);
    let text = shown(&[]);
    assert!(text.starts_with("pytest: 2 tests in "), "{text}");
    assert!(
        text.contains("  failed last time: 1\n    test_one.py::test_b\n"),
        "{text}"
    );
    assert!(text.contains(" s  test_one.py::test_a\n"), "{text}");
    assert!(
        text.contains("  stepwise: stopped at test_one.py::test_b, 1 tests done before it\n"),
        "{text}"
    );
    assert_eq!(
        shown(&["--framework", "jest"]),
        format!(
            "no test history in {}\n",
            project.path().join(".tcrunner").display()
        )
    );
    // A project that is not there is bad input, not an empty history.
    let missing = project.path().join("missing");
    let out = util::tcrunner(&["history", "--project"])
        .arg(&missing)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(66));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "tcrunner: --project {}: no such directory\n",
            missing.display()
        )
    );
}

#[test]
fn jest_stepwise_resumes_by_leaving_out_the_files_that_passed() {
    let project = js_project("jest");
    // With nothing cached jest runs the larger file first: p, then q.
    let padding = format!("// {}\n", "-".repeat(4000));
    project.write(
        "p.test.js",
        &format!("{padding}test('p1', () => {{}});\ntest('p2', () => {{}});\n"),
    );
    project.write(
        "q.test.js",
        "test('q1', () => { throw new Error('no'); });\ntest('q2', () => {});\n",
    );
    let sw = || {
        Tcrunner::new(project.path())
            .args(["--sw", "--", "-i"])
            .run(LIMIT)
    };
    let run = sw();
    run.assert_code(1).assert_clean();
    assert_eq!(started(&run), ["p1", "p2", "q1"], "{}", run.describe());
    // p's tests all passed: p is left out; q runs whole, stopping again.
    let run = sw();
    run.assert_code(1).assert_clean();
    assert_eq!(started(&run), ["q1"], "{}", run.describe());
    assert_eq!(
        line(&run.text(), "stepwise: 1 of 2"),
        Some("stepwise: 1 of 2 test files left to run")
    );
    project.write(
        "q.test.js",
        "test('q1', () => {});\ntest('q2', () => {});\n",
    );
    let run = sw();
    run.assert_code(0);
    assert_eq!(started(&run), ["q1", "q2"]);
    // Through to the end: the next --sw starts over with every file.
    let run = sw();
    assert_eq!(started(&run).len(), 4);
}

#[test]
fn a_collect_only_run_keeps_the_history() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", true), ("b", false)]));
    pytest(&project, &[]).assert_code(1);
    pytest(&project, &["--collect-only"]).assert_code(0);
    let run = pytest(&project, &["--lf"]);
    assert_eq!(started(&run), ["test_a"]);
}

#[test]
fn a_run_killed_mid_way_and_a_torn_temporary_file_leave_the_history_whole() {
    let project = Project::copy("history/pytest");
    project.write("test_one.py", &py_tests(&[("a", true), ("b", false)]));
    pytest(&project, &[]).assert_code(1);
    let file = project.path().join(".tcrunner/history-pytest.json");
    let before = std::fs::read_to_string(&file).unwrap();
    // A write cut short by a crash: only its temporary file is torn.
    project.write(
        ".tcrunner/.history-pytest.json.99999.tmp",
        "{\"version\": 1, \"tes",
    );
    project.write(
        "test_two.py",
        "import time\n\ndef test_slow():\n    time.sleep(30)\n",
    );
    let mut tcrunner = Tcrunner::pytest(project.path());
    let marker = tcrunner.marker().to_owned();
    let mut running = tcrunner.spawn();
    running.wait_for("name='test_slow'", LIMIT);
    running.signal(libc::SIGKILL);
    // tcrunner is gone; pytest, in its own process group, is not.
    util::kill_marked(&marker);
    let _ = running.finish(LIMIT);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    let run = pytest(&project, &["--lf", "--path", "test_one.py"]);
    assert_eq!(started(&run), ["test_a"]);
    assert!(!run.stderr.contains("ignoring"), "{}", run.stderr);
}

/// A failure inside a `describe('')` is recorded as `FILE:: > test`, which
/// `--target` takes and `--lf` reruns alone: the target was refused (an
/// empty name) and `--lf` ran its whole file.
#[test]
fn lf_reruns_a_failure_inside_an_untitled_describe_alone() {
    for (framework, ext, esm) in [("jest", "js", false), ("vitest", "mjs", true)] {
        let project = js_project(framework);
        let import = if esm {
            "import { describe, test } from 'vitest';\n"
        } else {
            ""
        };
        let file = format!("untitled.test.{ext}");
        project.write(
            &file,
            &format!(
                "{import}describe('', () => {{ test('fails inside', () => {{ throw new Error('no'); }}); }});\n\
                 test('passes', () => {{}});\n"
            ),
        );
        let first = Tcrunner::new(project.path())
            .args(["--path", &file])
            .run(LIMIT);
        first.assert_code(1);
        let lf = Tcrunner::new(project.path()).args(["--lf"]).run(LIMIT);
        lf.assert_code(1).assert_clean();
        assert_eq!(
            started(&lf),
            ["fails inside"],
            "{framework}: {}",
            lf.describe()
        );
        let target = format!("{file}:: > fails inside");
        let again = Tcrunner::new(project.path())
            .args(["--target", &target])
            .run(LIMIT);
        again.assert_code(1).assert_clean();
        assert_eq!(
            started(&again),
            ["fails inside"],
            "{framework}: {}",
            again.describe()
        );
    }
}
