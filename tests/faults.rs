//! Faults, on real frameworks (the matrix in docs/faults.md): the framework dies
//! mid-test, time limits, signals to tcrunner, nothing to run, hostile and
//! huge output, a consumer that goes away, leaked processes. Every test
//! checks the exit code, the stream with `tcrunner check`, and that no
//! process of the run outlives it.
//!
//! The pytest faults live in tests/fixtures/faults/pytest (one file per
//! fault, picked with `--path`), the jest and vitest ones next to it; each
//! run works on a fresh copy. jest and vitest tests use the installs of
//! `scripts/setup-node.sh` and are skipped, loudly, when there is none.
mod util;

use std::time::Duration;

use util::{node_modules, Project, Run, Tcrunner};

/// Generous: a loaded two-core machine must never hit it.
const LIMIT: Duration = Duration::from_secs(180);

fn pytest_project() -> Project {
    Project::copy("faults/pytest")
}

/// A copy of the jest fault project linked to jest 30 (or 29).
fn jest_project() -> Project {
    let modules = node_modules("jest30")
        .or_else(|| node_modules("jest29"))
        .expect("no jest under target/node: run `bash scripts/setup-node.sh`");
    Project::copy("faults/jest").link_node_modules(&modules)
}

/// A copy of the vitest fault project linked to vitest 4 (or 3), which run
/// on the machine's node.
fn vitest_project() -> Project {
    let modules = node_modules("vitest4")
        .or_else(|| node_modules("vitest3"))
        .expect("no vitest 3 or 4 under target/node: run `bash scripts/setup-node.sh`");
    Project::copy("faults/vitest").link_node_modules(&modules)
}

/// The checks every fault test ends with.
fn assert_sound(run: &Run, code: i32) {
    run.assert_code(code).assert_clean().assert_no_leftovers();
}

#[track_caller]
fn assert_contains(haystack: &str, needle: &str, run: &Run) {
    assert!(
        haystack.contains(needle),
        "{needle:?} not in {haystack:?}\n{}",
        run.describe()
    );
}

// --- the framework dies mid-test ---------------------------------------------

/// pytest-timeout's thread method ends pytest with `os._exit(1)` after
/// dumping every thread's stack on pytest's stdout: that dump is the story of
/// the crash, so it is in the test's details beside pytest's last stderr.
#[test]
fn pytest_dying_after_a_stack_dump_on_stdout_keeps_it_as_details() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_timeout_thread.py"])
        .run(LIMIT);
    assert_sound(&run, 71);
    let failure = run.failure_of("test_hangs");
    assert_contains(
        &failure,
        "message='pytest exited with code 1 during this test'",
        &run,
    );
    assert_contains(&failure, "last output on stdout:", &run);
    assert_contains(&failure, "in test_hangs", &run);
}

/// `pytest.exit()` in a test is pytest stopping on purpose, not a crash: the
/// test fails with the reason and where it was called, and the run ends with
/// the code the test chose.
#[test]
fn pytest_exit_in_a_test_fails_it_with_the_reason_and_keeps_the_code() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_exit.py"])
        .env("FAULT_HOW", "pytest-exit")
        .run(LIMIT);
    assert_sound(&run, 7);
    assert!(run.passed("test_before"), "{}", run.describe());
    let failure = run.failure_of("test_dies");
    assert_contains(
        &failure,
        "message='pytest.exit: the database is gone'",
        &run,
    );
    assert_contains(&failure, "error='true'", &run);
    assert_contains(&failure, "test_exit.py\", line ", &run);
    assert!(!run.has_test("test_never_runs"), "{}", run.describe());
    assert!(
        !run.stderr.contains("during this test"),
        "{}",
        run.describe()
    );
}

/// `pytest.exit(returncode=0)` inside a test is a clean stop: the test is
/// stopped, not failed by a made-up error. The run still exits 1, as for
/// any test that did not pass: code under test cannot end a graded run
/// early with a success.
#[test]
fn pytest_exit_with_code_0_in_a_test_stops_it_and_exits_1() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_exit.py"])
        .env("FAULT_HOW", "pytest-exit-0")
        .run(LIMIT);
    assert_sound(&run, 1);
    assert!(run.passed("test_before"), "{}", run.describe());
    assert!(run.was_stopped("test_dies"), "{}", run.describe());
    assert!(!run.has_test("test_never_runs"), "{}", run.describe());
    assert_contains(
        &run.text(),
        "message text='pytest.exit: enough for today' status='WARNING'",
        &run,
    );
}

/// A test that closes every descriptor above stderr closes the event pipe
/// too, and the files it opens next take the pipe's number: the reporter
/// sees the descriptor is no longer the pipe, goes on in pytest's stdout,
/// and no result is lost, nor written into the test's files (the last test
/// reads them). (With fd capture pytest itself dies there; `-s` sends events
/// in stdout from the start.) pytest's own code stands: 0, since a file took
/// its log handler's number too, which `tests/order.rs`'s twin, opening
/// nothing, sees fail.
#[test]
fn a_test_closing_the_event_pipe_loses_no_result() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_closes_fds.py", "--", "--capture=sys"])
        .run(LIMIT);
    assert_sound(&run, 0);
    for name in ["test_before", "test_closes_fds", "test_after"] {
        assert!(run.passed(name), "{name}\n{}", run.describe());
    }
}

/// Under `-s` the events go in pytest's stdout, through a descriptor of
/// the reporter's own: a test that points descriptors 1 and 2 at
/// /dev/null silences itself, and every result still arrives.
#[test]
fn a_test_redirecting_stdout_under_capture_off_loses_no_result() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_redirects_stdout.py", "--", "-s"])
        .run(LIMIT);
    assert_sound(&run, 1);
    assert!(run.passed("test_redirects"), "{}", run.describe());
    assert_contains(&run.failure_of("test_fails"), "really failed", &run);
    assert!(run.passed("test_after"), "{}", run.describe());
}

#[test]
fn pytest_dying_mid_test_fails_that_test_and_exits_71() {
    let project = pytest_project();
    for (how, said) in [
        ("exit", "pytest exited with code 3 during this test"),
        ("exit9", "pytest exited with code 3 during this test"),
        (
            "segv",
            "pytest killed by signal 11 (SIGSEGV) during this test",
        ),
        (
            "kill",
            "pytest killed by signal 9 (SIGKILL) during this test",
        ),
    ] {
        // pytest 9, and pytest 8 once.
        let python = util::python(if how == "exit" { 8 } else { 9 });
        let how = how.trim_end_matches('9');
        let run = Tcrunner::new(project.path())
            .arg("--python")
            .arg(python)
            .args(["--path", "test_exit.py"])
            .env("FAULT_HOW", how)
            .run(LIMIT);
        assert_sound(&run, 71);
        assert!(run.passed("test_before"), "{how}\n{}", run.describe());
        let failure = run.failure_of("test_dies");
        assert_contains(&failure, &format!("message='{said}'"), &run);
        assert_contains(&failure, "error='true'", &run);
        assert!(
            !run.has_test("test_never_runs"),
            "{how}: a test that never ran is not invented"
        );
        assert_contains(
            &run.stderr,
            &format!("tcrunner: {said}: test_exit.py::test_dies"),
            &run,
        );
        if how == "segv" {
            // faulthandler's traceback, on the test where an IDE user looks.
            assert_contains(&failure, "Segmentation fault", &run);
        }
    }
}

#[test]
fn jest_dying_mid_test_fails_that_test_and_exits_71() {
    let project = jest_project();
    for (how, said) in [
        ("exit", "jest exited with code 3 during this test"),
        ("kill", "jest killed by signal 9 (SIGKILL) during this test"),
    ] {
        let run = Tcrunner::new(project.path())
            .args(["--path", "exit.test.js"])
            .env("FAULT_HOW", how)
            .run(LIMIT);
        assert_sound(&run, 71);
        assert!(run.passed("before"), "{how}\n{}", run.describe());
        assert_contains(&run.failure_of("dies"), &format!("message='{said}'"), &run);
        // Named as the tree shows it, not by the reporter's JSON id.
        assert_contains(
            &run.stderr,
            &format!("tcrunner: {said}: exit.test.js > dies\n"),
            &run,
        );
        assert!(
            !run.has_test("never runs"),
            "{how}: a test that never ran is not invented"
        );
    }
}

/// `process.exit(0)` in a jest hook ends the run inside the file, outside
/// any test: with a code of 0 and the tree green (or empty), the files
/// after it would be lost without a word. It is a crash, named by its file.
#[test]
fn jest_ending_the_run_inside_a_file_is_a_crash() {
    let project = jest_project();
    for (how, passed) in [("before", false), ("after", true)] {
        let run = Tcrunner::new(project.path())
            .args(["--path", "hook_exit.test.js"])
            .env("FAULT_HOW", how)
            .run(LIMIT);
        assert_sound(&run, 71);
        let said = "jest exited with code 0 outside any test while running hook_exit.test.js: the files after it did not run";
        assert_contains(
            &run.text(),
            &format!("message text='{said}' status='ERROR'"),
            &run,
        );
        assert_contains(&run.stderr, &format!("tcrunner: {said}"), &run);
        assert!(
            !run.text().contains("ran no tests"),
            "{how}\n{}",
            run.describe()
        );
        if passed {
            assert!(run.passed("passes"), "{how}\n{}", run.describe());
        }
    }
}

/// A test in jest's own process closes the descriptor the reporter was
/// given: the reporter writes through one of its own, so every later
/// result still arrives (they were lost, and the run called a crash).
#[test]
fn jest_tests_closing_the_event_descriptor_lose_nothing() {
    let project = jest_project();
    let run = Tcrunner::new(project.path())
        .args(["--path", "closes_fd.test.js", "--", "-i"])
        .run(LIMIT);
    assert_sound(&run, 1);
    for name in ["before", "closes the event descriptor", "passes after"] {
        assert!(run.passed(name), "{name}\n{}", run.describe());
    }
    assert_contains(&run.failure_of("fails after"), "toBe(expected)", &run);
}

/// A coverage threshold fails jest's run, and `--forceExit` has jest say
/// it forced its exit after that: the threshold is the reason given.
#[test]
fn a_coverage_threshold_is_the_reason_not_jests_notice_after_it() {
    let project = jest_project();
    let run = Tcrunner::new(project.path())
        .args([
            "--path",
            "partly.test.js",
            "--",
            "--coverage",
            "--forceExit",
        ])
        .args([
            "--collectCoverageFrom=partly.js",
            r#"--coverageThreshold={"global":{"functions":100}}"#,
        ])
        .run(LIMIT);
    assert_sound(&run, 1);
    assert!(run.passed("passes"), "{}", run.describe());
    // jest 29: `Jest: "global" coverage threshold for functions (100%) not
    // met: 50%`; jest 30: `Jest: Coverage for functions (50%) does not meet
    // "global" threshold (100%)`.
    let said = run.message(&["message text='jest exited with code 1 though no test failed"]);
    assert_contains(&said, "no test failed: Jest: ", &run);
    assert_contains(&said, "threshold", &run);
}

/// pytest-cov says on stdout why it fails a run whose tests passed, after
/// a warning on stderr: its stdout line is the reason, not the warning's
/// source line.
#[test]
fn a_coverage_gate_on_pytests_stdout_is_the_reason_not_a_warning() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_gated.py", "--", "-p", "gate_plugin"])
        .run(LIMIT);
    assert_sound(&run, 1);
    assert!(run.passed("test_passes"), "{}", run.describe());
    let said = run.message(&["message text='pytest exited with code 1 though no test failed"]);
    assert_contains(
        &said,
        "no test failed: FAIL Required test coverage of 100% not reached. Total coverage: 75.00%'",
        &run,
    );
}

/// jest fails the run outside any test, every test passed: a global
/// teardown that throws, or an uncaught error after the last test. The
/// tree is green, so a run-level error says why, and a pass policy does
/// not pass the run.
#[test]
fn a_run_failed_outside_any_test_is_a_run_level_error() {
    let project = jest_project();
    for (env, said) in [
        (
            "FAULT_TEARDOWN",
            "jest exited with code 1 though no test failed: Error: Jest: Got error running globalTeardown",
        ),
        (
            "FAULT_HOW",
            "jest exited with code 1 though no test failed: Error: late boom",
        ),
    ] {
        let json = project.path().join(format!("{env}.json"));
        let run = Tcrunner::new(project.path())
            .args(["--path", "late.test.js", "--json", json.to_str().unwrap()])
            .env(env, "late")
            .run(LIMIT);
        assert_sound(&run, 1);
        assert!(run.passed("passes"), "{env}\n{}", run.describe());
        assert_contains(&run.text(), &format!("message text='{said}"), &run);
        assert_contains(&run.stderr, &format!("tcrunner: {said}"), &run);
        let doc = util::json(&json);
        assert_eq!(doc["errors"][0]["kind"], "run_failed", "{doc}");
        let graded = Tcrunner::new(project.path())
            .args(["--path", "late.test.js", "--pass-policy", "all"])
            .env(env, "late")
            .run(LIMIT);
        assert_sound(&graded, 75);
    }
}

#[test]
fn vitest_killed_mid_test_fails_that_test_and_exits_71() {
    let project = vitest_project();
    let run = Tcrunner::new(project.path())
        .args(["--path", "exit.test.mjs"])
        .run(LIMIT);
    assert_sound(&run, 71);
    assert!(run.passed("before"), "{}", run.describe());
    assert_contains(
        &run.failure_of("dies"),
        "message='vitest killed by signal 9 (SIGKILL) during this test'",
        &run,
    );
    assert!(!run.has_test("never runs"));
}

// --- time limits --------------------------------------------------------------

/// Without an alarm in the plugin, the backstop stops the run; with one, the
/// run goes on. Either way the test fails with the limit and the code is 124.
#[test]
fn pytest_test_timeout_fails_the_test_and_exits_124() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--timeout", "1", "--path", "test_slow.py"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert!(run.passed("test_quick"));
    assert_contains(
        &run.failure_of("test_sleeps"),
        "message='timed out after 1 s'",
        &run,
    );
    if run.has_test("test_after") {
        assert!(run.passed("test_after"), "{}", run.describe());
    }
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

/// The contract with the plugin (TCRUNNER_TEST_TIMEOUT, an alarm, a failure
/// that says `timed out after N s`), here implemented by a conftest: the
/// timed-out test fails, the run goes on, and the exit code is still 124.
#[test]
fn pytest_in_process_timeout_lets_the_run_go_on() {
    let project = pytest_project();
    project.write(
        "conftest.py",
        include_str!("fixtures/faults/alarm_conftest.py"),
    );
    let run = Tcrunner::pytest(project.path())
        .args(["--timeout", "1", "--path", "test_slow.py"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert!(run.passed("test_quick"));
    assert_contains(&run.failure_of("test_sleeps"), "timed out after 1 s", &run);
    assert!(
        run.passed("test_after"),
        "the run goes on after an in-process timeout\n{}",
        run.describe()
    );
}

/// A test that blocks SIGALRM cannot be interrupted in-process: the backstop
/// stops the run (SIGTERM to the group) and the verdict names the limit.
#[test]
fn pytest_timeout_backstop_stops_a_test_that_blocks_the_alarm() {
    let project = pytest_project();
    project.write(
        "conftest.py",
        include_str!("fixtures/faults/alarm_conftest.py"),
    );
    let run = Tcrunner::pytest(project.path())
        .args([
            "--timeout",
            "1",
            "--target",
            "test_stubborn.py::test_blocks_the_alarm",
        ])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert_contains(
        &run.failure_of("test_blocks_the_alarm"),
        "message='timed out after 1 s'",
        &run,
    );
    assert_contains(
        &run.stderr,
        "tcrunner: a test timed out after 1 s (--timeout): stopping pytest",
        &run,
    );
}

/// A test that ignores SIGTERM is killed once the grace period runs out.
#[test]
fn pytest_timeout_escalates_to_sigkill_after_the_grace_period() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args([
            "--timeout",
            "1",
            "--grace-period",
            "1",
            "--target",
            "test_stubborn.py::test_ignores_sigterm",
        ])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert_contains(
        &run.failure_of("test_ignores_sigterm"),
        "message='timed out after 1 s'",
        &run,
    );
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

#[test]
fn pytest_session_timeout_fails_the_running_test_and_exits_124() {
    let project = pytest_project();
    // test_sleeps never ends by itself: the limit can stay well above the
    // seconds pytest may need to reach it on a loaded two-core machine.
    let run = Tcrunner::pytest(project.path())
        .args(["--session-timeout", "8", "--path", "test_slow.py"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert!(run.passed("test_quick"));
    assert_contains(
        &run.failure_of("test_sleeps"),
        "message='timed out after 8 s (--session-timeout)'",
        &run,
    );
    assert!(!run.has_test("test_after"));
    assert_contains(
        &run.stderr,
        "tcrunner: the session time limit of 8 s ran out: stopping pytest",
        &run,
    );
    // What the test printed before it was stopped, held by pytest's capture.
    let id = run.node_id("test_sleeps");
    for message in [
        format!("##teamcity[testStdOut nodeId='{id}' out='going to sleep|n']"),
        format!("##teamcity[testStdErr nodeId='{id}' out='for a long time|n']"),
    ] {
        assert_contains(&run.text(), &message, &run);
    }
}

/// jest's own `--testTimeout` fails a waiting test and goes on; a test that
/// blocks the event loop is stopped by the backstop.
#[test]
fn jest_timeouts_fail_the_test_and_exit_124() {
    let project = jest_project();
    let run = Tcrunner::new(project.path())
        .args(["--timeout", "1", "--path", "slow.test.js"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert_contains(
        &run.failure_of("waits"),
        "Exceeded timeout of 1000 ms",
        &run,
    );
    assert!(
        run.passed("quick") && run.passed("after"),
        "{}",
        run.describe()
    );

    let run = Tcrunner::new(project.path())
        .args(["--timeout", "1", "--path", "spin.test.js"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert!(run.passed("quick"));
    assert_contains(
        &run.failure_of("spins"),
        "message='timed out after 1 s'",
        &run,
    );
    assert!(!run.has_test("after"));

    let run = Tcrunner::new(project.path())
        .args(["--session-timeout", "4", "--path", "slow.test.js"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert_contains(
        &run.failure_of("waits"),
        "message='timed out after 4 s (--session-timeout)'",
        &run,
    );
}

#[test]
fn vitest_timeouts_fail_the_test_and_exit_124() {
    let project = vitest_project();
    let run = Tcrunner::new(project.path())
        .args(["--timeout", "1", "--path", "slow.test.mjs"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert_contains(&run.failure_of("waits"), "Test timed out in 1000ms", &run);
    assert!(
        run.passed("quick") && run.passed("after"),
        "{}",
        run.describe()
    );

    // The session limit is a safety net: should vitest never report the
    // start, it ends the run (and the assertion on `spins` fails) early.
    let run = Tcrunner::new(project.path())
        .args([
            "--timeout",
            "3",
            "--session-timeout",
            "90",
            "--path",
            "spin.test.mjs",
        ])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert_contains(
        &run.failure_of("spins"),
        "message='timed out after 3 s'",
        &run,
    );
    assert!(!run.has_test("after"));
}

/// `file` under `--timeout 1`, with a session limit as the backstop should
/// the test that blocks never be known to run.
fn timed_run_with_backstop(project: &Project, file: &str) -> Run {
    Tcrunner::new(project.path())
        .args(["--timeout", "1", "--session-timeout", "60", "--path", file])
        .run(LIMIT)
}

/// A test that blocks vitest's worker from its first instant: tcrunner's
/// runner sent its start before its body ran, so `--timeout` names it (with
/// vitest's throttled updates alone it was never known to run, and only the
/// session limit, here the backstop, ended the run).
#[test]
fn vitest_timeout_names_a_test_that_blocks_its_worker_from_the_start() {
    let project = vitest_project();
    let run = timed_run_with_backstop(&project, "block.test.mjs");
    assert_sound(&run, 124);
    assert_contains(
        &run.failure_of("blocks at once"),
        "message='timed out after 1 s'",
        &run,
    );
    assert_eq!(
        run.count(&["the session time limit"]),
        0,
        "{}",
        run.describe()
    );
}

/// A test that blocks its worker right after a quick test: gathered with
/// the quick test's end, its start never left the worker, and the limit was
/// put on the quick test, which had passed.
#[test]
fn vitest_timeout_names_a_test_that_blocks_right_after_another() {
    let project = vitest_project();
    let run = timed_run_with_backstop(&project, "loop.test.mjs");
    assert_sound(&run, 124);
    assert!(run.passed("before"), "{}", run.describe());
    assert_contains(
        &run.failure_of("loops"),
        "message='timed out after 1 s'",
        &run,
    );
    assert!(!run.has_test("after"));
}

/// A jest `afterAll` that blocks after a passing test: the session limit
/// stops the run with no test running, and says which file was still open.
#[test]
fn jest_session_limit_outside_any_test_names_the_open_file() {
    let project = jest_project();
    let run = Tcrunner::new(project.path())
        .args([
            "--session-timeout",
            "3",
            "--path",
            "hook_spin.test.js",
            "--",
            "-i",
        ])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert!(run.passed("passes"), "{}", run.describe());
    assert_contains(
        &run.text(),
        "the session time limit of 3 s ran out outside any test while running hook_spin.test.js: stopping jest",
        &run,
    );
}

/// An `afterAll` that blocks the worker after a quick test: `--timeout`
/// bounds tests, not the hooks around them, so the session limit stops the
/// run, and the test that passed keeps its verdict.
#[test]
fn vitest_hook_blocking_after_a_test_leaves_its_verdict_alone() {
    let project = vitest_project();
    let run = Tcrunner::new(project.path())
        .args([
            "--timeout",
            "1",
            "--session-timeout",
            "5",
            "--path",
            "after-all.test.mjs",
        ])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert!(run.passed("passes"), "{}", run.describe());
    assert_contains(&run.text(), "the session time limit of 5 s ran out", &run);
}

/// What a test printed before a time limit stopped it: the reporter holds
/// a test's console output for its result, which never comes.
#[test]
fn vitest_test_stopped_by_a_time_limit_keeps_what_it_printed() {
    let project = vitest_project();
    let run = Tcrunner::new(project.path())
        .args(["--session-timeout", "4", "--path", "hang.test.mjs"])
        .run(LIMIT);
    assert_sound(&run, 124);
    assert_contains(
        &run.failure_of("hangs"),
        "message='timed out after 4 s (--session-timeout)'",
        &run,
    );
    let id = run.node_id("hangs");
    assert_contains(
        &run.text(),
        &format!("##teamcity[testStdOut nodeId='{id}' out='hang start|n']"),
        &run,
    );
}

// --- signals to tcrunner ---------------------------------------------------------

/// The first signal reaches pytest, which stops the running test: it keeps
/// what it printed (with SIGINT pytest had already moved that into the
/// test's sections when the plugin looked), also when tcrunner was started
/// with SIGINT ignored, which pytest inherited and so never stopped.
#[test]
fn pytest_first_signal_is_forwarded_and_unfinished_tests_are_stopped() {
    let project = pytest_project();
    for (signal, code, ignored) in [
        (libc::SIGINT, 130, false),
        (libc::SIGTERM, 143, false),
        (libc::SIGINT, 130, true),
    ] {
        let mut tcrunner = Tcrunner::pytest(project.path());
        tcrunner.args(["--path", "test_slow.py", "--grace-period", "30"]);
        if ignored {
            tcrunner.ignoring(libc::SIGINT);
        }
        let mut running = tcrunner.spawn();
        running.wait_for("name='test_sleeps'", LIMIT);
        // Into the test's body, past what it prints.
        std::thread::sleep(Duration::from_millis(500));
        running.signal(signal);
        let run = running.finish(LIMIT);
        assert_sound(&run, code);
        assert!(run.passed("test_quick"));
        assert!(run.was_stopped("test_sleeps"), "{}", run.describe());
        assert!(!run.has_test("test_after"));
        assert_contains(&run.text(), "status='WARNING'", &run);
        assert_contains(&run.stderr, "tcrunner: tcrunner received signal", &run);
        let id = run.node_id("test_sleeps");
        for message in [
            format!("##teamcity[testStdOut nodeId='{id}' out='going to sleep|n']"),
            format!("##teamcity[testStdErr nodeId='{id}' out='for a long time|n']"),
        ] {
            assert_contains(&run.text(), &message, &run);
        }
        // pytest stopped by itself, long before the grace period's SIGKILL.
        assert!(run.elapsed < Duration::from_secs(20), "{:?}", run.elapsed);
    }
}

/// A KeyboardInterrupt that reaches pytest without tcrunner (a test raised
/// it): pytest's own "interrupted", exit code 2, not a crash; the test is
/// stopped and keeps what it printed.
#[test]
fn pytest_interrupted_by_itself_keeps_its_code_and_the_tests_output() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_interrupt.py"])
        .run(LIMIT);
    assert_sound(&run, 2);
    assert!(run.passed("test_before"));
    assert!(run.was_stopped("test_interrupts"), "{}", run.describe());
    assert!(!run.has_test("test_after"));
    let id = run.node_id("test_interrupts");
    assert_contains(
        &run.text(),
        &format!("##teamcity[testStdOut nodeId='{id}' out='about to interrupt|n']"),
        &run,
    );
    assert_contains(
        &run.text(),
        "message text='pytest was interrupted during test_interrupt.py::test_interrupts' status='WARNING'",
        &run,
    );
}

/// A test that swallows KeyboardInterrupt keeps pytest alive after the first
/// Ctrl-C; the second kills the group at once (the grace period is long).
#[test]
fn pytest_second_signal_kills_the_group() {
    let project = pytest_project();
    let mut running = Tcrunner::pytest(project.path())
        .args([
            "--grace-period",
            "600",
            "--target",
            "test_stubborn.py::test_swallows_interrupts",
        ])
        .spawn();
    running.wait_for("name='test_swallows_interrupts'", LIMIT);
    running.signal(libc::SIGINT);
    running.wait_for("a second signal kills it", LIMIT);
    running.signal(libc::SIGINT);
    let run = running.finish(LIMIT);
    assert_sound(&run, 130);
    assert!(
        run.was_stopped("test_swallows_interrupts"),
        "{}",
        run.describe()
    );
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

/// Bytes written into the reporter's descriptor without a newline stick
/// to the front of its next event line: the event is still read (from its
/// `{"ev":"`), the bytes dropped with one line on stderr, and the test keeps
/// its own verdict rather than be blamed for a crash.
#[test]
fn junk_before_an_event_loses_neither_the_event_nor_the_verdict() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_event_junk.py"])
        .run(LIMIT);
    assert_sound(&run, 1);
    let failure = run.failure_of("test_fails_after_writing_junk");
    assert_contains(&failure, "message='AssertionError: really failed'", &run);
    assert!(run.passed("test_passes"), "{}", run.describe());
    assert_eq!(
        tcrunner_line(&run),
        "tcrunner: ignoring 23 bytes before an event from the reporter: \
         something else wrote into its descriptor"
    );
}

/// tcrunner killed outright (SIGKILL, which it cannot catch) takes the
/// framework with it: pytest is not left running a test nobody reads.
#[test]
fn pytest_does_not_outlive_tcrunner_killed_outright() {
    let project = pytest_project();
    let mut tcrunner = Tcrunner::pytest(project.path());
    tcrunner.args(["--path", "test_slow.py"]);
    let marker = tcrunner.marker().to_owned();
    let mut running = tcrunner.spawn();
    running.wait_for("name='test_sleeps'", LIMIT);
    let tcrunner_pid = running.pid() as i32;
    running.signal(libc::SIGKILL);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let alive = || {
        util::leftovers(&marker)
            .into_iter()
            .filter(|(pid, _)| *pid != tcrunner_pid)
            .collect::<Vec<_>>()
    };
    while !alive().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left = alive();
    util::kill_marked(&marker);
    assert!(left.is_empty(), "left running: {left:?}");
}

/// With no second signal, the framework gets the grace period, then SIGKILL.
#[test]
fn pytest_signal_then_grace_period_then_kill() {
    let project = pytest_project();
    let mut running = Tcrunner::pytest(project.path())
        .args([
            "--grace-period",
            "1",
            "--target",
            "test_stubborn.py::test_swallows_interrupts",
        ])
        .spawn();
    running.wait_for("name='test_swallows_interrupts'", LIMIT);
    running.signal(libc::SIGTERM);
    let run = running.finish(LIMIT);
    assert_sound(&run, 143);
    assert!(
        run.was_stopped("test_swallows_interrupts"),
        "{}",
        run.describe()
    );
}

/// What a vitest test printed before the run was stopped (the IDE's stop
/// is SIGINT, which tcrunner passes on): the reporter holds a test's
/// console output for its result, and sends it on each signal before the
/// signal ends vitest.
#[test]
fn vitest_test_stopped_by_a_signal_keeps_what_it_printed() {
    let project = vitest_project();
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGHUP, 129)] {
        let mut running = Tcrunner::new(project.path())
            .args(["--path", "hang.test.mjs"])
            .spawn();
        running.wait_for("name='hangs'", LIMIT);
        // Past the test's `console.log`, which vitest hands on within 100 ms.
        std::thread::sleep(Duration::from_millis(1500));
        running.signal(signal);
        let run = running.finish(LIMIT);
        assert_sound(&run, code);
        assert!(run.was_stopped("hangs"), "{}", run.describe());
        let id = run.node_id("hangs");
        assert_contains(
            &run.text(),
            &format!("##teamcity[testStdOut nodeId='{id}' out='hang start|n']"),
            &run,
        );
    }
}

#[test]
fn jest_signal_stops_the_run() {
    let project = jest_project();
    let mut running = Tcrunner::new(project.path())
        .args(["--path", "slow.test.js"])
        .spawn();
    running.wait_for("name='waits'", LIMIT);
    running.signal(libc::SIGINT);
    let run = running.finish(LIMIT);
    assert_sound(&run, 130);
    assert!(run.passed("quick"));
    assert!(run.was_stopped("waits"), "{}", run.describe());
    assert!(!run.has_test("after"));
}

// --- nothing to run, cannot run ----------------------------------------------------

/// The one `tcrunner:` line of stderr (the framework's own stderr may precede it).
fn tcrunner_line(run: &Run) -> String {
    let lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("tcrunner:"))
        .collect();
    assert_eq!(lines.len(), 1, "one tcrunner line\n{}", run.describe());
    lines[0].to_owned()
}

#[test]
fn pytest_not_installed_exits_69_with_one_line() {
    let project = pytest_project();
    let venv = project.path().join("venv-without-pytest");
    let made = std::process::Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("python3 -m venv");
    assert!(made.success());
    let run = Tcrunner::new(project.path())
        .arg("--python")
        .arg(venv.join("bin/python"))
        .run(LIMIT);
    assert_sound(&run, 69);
    let python = venv.join("bin/python");
    // The venv has no pip: the command gives it one first (or uses uv).
    let line = tcrunner_line(&run);
    let py = python.display();
    let through_pip = format!(
        "pytest is not installed for {py}: install it with `{py} -m ensurepip && {py} -m pip install pytest`"
    );
    let through_uv = format!(
        "pytest is not installed for {py}: install it with `uv pip install --python {py} pytest`"
    );
    assert!(
        line.contains(&through_pip) || line.contains(&through_uv),
        "{line}"
    );
    assert_contains(
        &run.failure_of("pytest did not start"),
        "pytest is not installed",
        &run,
    );

    let run = Tcrunner::new(project.path())
        .args(["--python", "/nonexistent/bin/python"])
        .run(LIMIT);
    assert_sound(&run, 69);
    assert_contains(
        &tcrunner_line(&run),
        "cannot start /nonexistent/bin/python: No such file or directory",
        &run,
    );
    assert_contains(
        &run.failure_of("pytest did not start"),
        "cannot start /nonexistent/bin/python",
        &run,
    );
    assert_eq!(
        run.count(&["##teamcity[testingFinished]"]),
        1,
        "the stream ends whole"
    );
}

#[test]
fn pytest_usage_error_keeps_pytests_code_4_and_shows_a_failed_node() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_slow.py", "--", "--no-such-option"])
        .run(LIMIT);
    assert_sound(&run, 4);
    let line = tcrunner_line(&run);
    assert_contains(
        &line,
        "pytest exited with code 4 before reporting any test",
        &run,
    );
    assert_contains(&line, "unrecognized arguments: --no-such-option", &run);
    assert_contains(
        &run.failure_of("pytest did not start"),
        "unrecognized arguments: --no-such-option",
        &run,
    );
}

/// A target that names no test (renamed since the IDE last saw it): pytest
/// refuses it with `ERROR: not found`, after our plugin loaded. That was
/// only a warning that no tests ran; the reason was on stderr alone.
#[test]
fn pytest_target_that_names_no_test_says_so_on_a_failed_node() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--target", "test_slow.py::test_renamed"])
        .run(LIMIT);
    assert_sound(&run, 4);
    assert_contains(&run.failure_of("pytest did not start"), "not found: ", &run);
    assert_contains(
        &run.failure_of("pytest did not start"),
        "test_renamed",
        &run,
    );
    assert_eq!(run.count(&["ran no tests"]), 0, "{}", run.describe());
}

/// A test whose process dies after some of its subtests ended: those keep
/// their verdicts, the test fails with the crash, and nothing else is
/// invented (the subtests' ends were held back, and the crash was told
/// again as a node of its own).
#[test]
fn a_crash_after_subtests_ended_keeps_their_verdicts() {
    let project = Project::copy("pytest-subtests");
    project.write(
        "test_dies_after_subtests.py",
        "import os\nimport unittest\n\n\n\
         def test_fixture(subtests):\n    \
         with subtests.test(msg='passes'):\n        pass\n    \
         with subtests.test(msg='dies'):\n        os._exit(0)\n\n\n\
         class TestCase(unittest.TestCase):\n    \
         def test_method(self):\n        \
         with self.subTest('fails'):\n            self.fail('no')\n        \
         with self.subTest('dies'):\n            os._exit(0)\n",
    );
    for (target, test, subtest, verdict) in [
        ("test_fixture", "test_fixture", "[passes]", "passed"),
        ("TestCase", "test_method", "[fails]", "failed"),
    ] {
        let json = project.path().join("result.json");
        let run = Tcrunner::pytest(project.path())
            .args([
                "--target",
                &format!("test_dies_after_subtests.py::{target}"),
            ])
            .arg("--json")
            .arg(&json)
            .run(LIMIT);
        assert_sound(&run, 71);
        assert_contains(
            &run.failure_of(test),
            "message='pytest exited with code 0 during this test'",
            &run,
        );
        let found = util::tests_by_path(&run.stdout);
        let names: Vec<&String> = found.keys().collect();
        assert_eq!(names.len(), 2, "{target}: {names:?}");
        let sub = found
            .iter()
            .find(|(key, _)| key.ends_with(&format!("{test} > {subtest}")))
            .unwrap_or_else(|| panic!("{target}: {names:?}"));
        assert_eq!(sub.1.verdict, verdict, "{target}");
        let mut files = util::result_tests(&json, ["status", "message"]);
        files.sort();
        assert_eq!(files.len(), 2, "{target}: {files:?}");
        let statuses: Vec<(&str, &str)> = files
            .iter()
            .map(|(n, s, _)| (n.as_str(), s.as_str()))
            .collect();
        assert!(
            statuses.contains(&(subtest, verdict)),
            "{target}: {statuses:?}"
        );
        assert!(
            statuses.contains(&(test, "error")),
            "{target}: {statuses:?}"
        );
    }
}

/// `pytest.exit()` outside any test (a conftest giving up before the run):
/// pytest stops on purpose with the code it was given, which stands. It
/// was told as a run that found no tests, exit 5.
#[test]
fn pytest_exit_before_any_test_keeps_its_code_and_reason() {
    let project = Project::copy("pytest-subtests");
    project.write(
        "conftest.py",
        "import os\nimport pytest\n\n\n\
         def pytest_collection_modifyitems(items):\n    \
         pytest.exit('no database here', returncode=int(os.environ['EXIT_CODE']))\n",
    );
    for code in [0, 3] {
        let run = Tcrunner::pytest(project.path())
            .env("EXIT_CODE", code.to_string())
            .run(LIMIT);
        assert_sound(&run, code);
        assert_contains(
            &run.text(),
            "message text='pytest.exit: no database here' status='WARNING'",
            &run,
        );
        assert_eq!(run.count(&["ran no tests"]), 0, "{}", run.describe());
    }
}

/// pytest's process ending outside any test before its session ended
/// (`os._exit` while a test module is imported, or right after code under
/// test forged its test's pass into the event pipe) is a crash: the tests
/// after that point did not run. Neither a run whose reporter never loaded,
/// nor, with code 0, a whole run.
#[test]
fn pytest_ending_before_its_session_did_is_a_crash() {
    let project = pytest_project();
    for (how, when) in [
        ("import", "while collecting tests"),
        ("forge", "between tests"),
    ] {
        let run = Tcrunner::pytest(project.path())
            .args(["--path", "test_session_exit.py"])
            .env("FAULT_HOW", how)
            .run(LIMIT);
        assert_sound(&run, 71);
        let said = format!(
            "tcrunner: pytest exited with code 0 {when}, before its session ended: \
             the tests after that point did not run"
        );
        assert_eq!(tcrunner_line(&run), said, "{how}");
        assert_contains(&run.text(), "status='ERROR'", &run);
        assert_eq!(
            run.count(&["did not start"]),
            0,
            "{how}\n{}",
            run.describe()
        );
        assert!(
            !run.has_test("test_never_runs"),
            "{how}: a test that never ran is not invented"
        );
    }
}

#[test]
fn pytest_no_tests_exits_5_and_says_so() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "empty"])
        .run(LIMIT);
    assert_sound(&run, 5);
    assert_eq!(run.count(&["##teamcity[testStarted "]), 0);
    assert_contains(&tcrunner_line(&run), "pytest ran no tests", &run);
}

/// A conftest hook that raises makes pytest stop with INTERNALERROR (code 3)
/// after collection: the tree shows the crash as a failed test, not a run
/// that merely found nothing.
#[test]
fn pytest_internal_error_keeps_code_3_and_shows_a_failed_node() {
    let project = pytest_project();
    project.write(
        "internal/conftest.py",
        "def pytest_collection_modifyitems(items):\n    raise RuntimeError('boom in hook')\n",
    );
    project.write(
        "internal/test_fine.py",
        "def test_fine():\n    pass\n\ndef test_also():\n    pass\n",
    );
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "internal"])
        .run(LIMIT);
    assert_sound(&run, 3);
    assert_contains(
        &run.failure_of("<internal error>"),
        "message='RuntimeError: boom in hook'",
        &run,
    );
    assert_eq!(run.count(&["ran no tests"]), 0, "{}", run.describe());
    // The count the IDE's progress goes by is the tree's one node, not the
    // two tests that were collected and never run.
    assert_eq!(
        run.count(&["##teamcity[testCount count='1']"]),
        1,
        "{}",
        run.describe()
    );
}

/// jest refuses a broken configuration before loading our reporter: one line
/// with jest's reason, a failed node, and 73 (jest has no usage-error code).
#[test]
fn jest_bad_config_exits_73_with_its_reason() {
    let project = jest_project();
    project.write(
        "jest.config.js",
        "module.exports = { testEnvironment: 'no-such-env' };\n",
    );
    let run = Tcrunner::new(project.path())
        .args(["--path", "exit.test.js"])
        .run(LIMIT);
    assert_sound(&run, 73);
    let line = tcrunner_line(&run);
    assert_contains(&line, "jest exited with code 1 before reporting any test: ● Validation Error: Test environment no-such-env cannot be found", &run);
    assert_contains(&run.failure_of("jest did not start"), "no-such-env", &run);
}

/// jest exits before loading reporters when it finds no tests; vitest
/// reports an empty run. Both are 5, with one line saying so.
#[test]
fn js_no_tests_exits_5_and_says_so() {
    for project in [jest_project(), vitest_project()] {
        let run = Tcrunner::new(project.path())
            .args(["--path", "empty"])
            .run(LIMIT);
        assert_sound(&run, 5);
        assert_eq!(
            run.count(&["##teamcity[testStarted "]),
            0,
            "{}",
            run.describe()
        );
        assert_contains(&tcrunner_line(&run), "ran no tests", &run);
        assert_eq!(
            run.count(&["##teamcity[message ", "ran no tests", "status='WARNING'"]),
            1
        );
        // Told that no tests is fine, the framework exits 0, and so do we.
        let run = Tcrunner::new(project.path())
            .args(["--path", "empty", "--", "--passWithNoTests"])
            .run(LIMIT);
        assert_sound(&run, 0);
        assert_contains(&tcrunner_line(&run), "ran no tests", &run);
    }
}

#[test]
fn pytest_collection_errors_everywhere_are_failed_nodes_not_success() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "broken"])
        .run(LIMIT);
    assert_sound(&run, 1);
    assert_eq!(
        run.count(&["##teamcity[testStarted ", "name='<collection error>'"]),
        2,
        "{}",
        run.describe()
    );
    assert_eq!(run.count(&["##teamcity[testFailed ", "error='true'"]), 2);
    // The IDE's progress counts them: it ends at 2 of 2.
    assert_eq!(run.count(&["##teamcity[testCount count='2']"]), 1);
    assert_contains(
        &run.text(),
        "No module named |'module_that_does_not_exist|'",
        &run,
    );
    assert_contains(&run.text(), "SyntaxError", &run);
}

#[test]
fn pytest_without_our_reporter_exits_73() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args([
            "--path",
            "test_hostile.py",
            "--",
            "-p",
            "no:tcrunner_pytest",
        ])
        .run(LIMIT);
    assert_sound(&run, 73);
    assert_contains(
        &tcrunner_line(&run),
        "reporter inside it never reported",
        &run,
    );
    assert_contains(
        &run.failure_of("pytest did not start"),
        "never reported",
        &run,
    );
}

// --- hostile and huge output ---------------------------------------------------------

#[test]
fn printed_service_messages_cannot_change_the_tree() {
    let project = pytest_project();
    for capture in ["-s", "--capture=fd"] {
        let run = Tcrunner::pytest(project.path())
            .args(["--path", "test_hostile.py", "--", capture])
            .run(LIMIT);
        assert_sound(&run, 0);
        assert!(
            run.passed("test_prints_messages") && run.passed("test_after"),
            "{}",
            run.describe()
        );
        let msgs = util::messages(&run.stdout);
        let tree: Vec<_> = msgs.iter().filter(|m| m.name.starts_with("test")).collect();
        assert!(
            tree.iter()
                .all(|m| m.get("nodeId") != Some("999") && m.get("name") != Some("fake")),
            "{capture}"
        );
        assert_eq!(
            msgs.iter().filter(|m| m.name == "testStarted").count(),
            2,
            "{capture}"
        );
        assert_eq!(
            msgs.iter().filter(|m| m.name == "testFinished").count(),
            2,
            "{capture}"
        );
        assert_eq!(
            msgs.iter().filter(|m| m.name == "testFailed").count(),
            0,
            "{capture}"
        );
        if capture == "-s" {
            // Printed straight to stdout: blocked lines stay visible in a
            // `message` (with the status IntelliJ needs, and the line break
            // it prints); build statistics pass through as they are.
            assert_eq!(
                run.count(&["##teamcity[message text='##teamcity|[testFinished nodeId=|'1|'|]|n' status='NORMAL']"]),
                1
            );
            assert_eq!(
                run.count(&["##teamcity[buildStatisticValue key='fault.metric' value='42']"]),
                1
            );
            // What the test wrote on stderr is its `testStdErr`, escaped,
            // and nothing of it is on tcrunner's stderr, which IntelliJ
            // parses as well.
            assert_eq!(
                run.count(&["##teamcity[testStdErr ", "|'fake on stderr|'|]"]),
                1,
                "{}",
                run.describe()
            );
            assert!(
                util::messages(run.stderr.as_bytes()).is_empty(),
                "{}",
                run.describe()
            );
        } else {
            // Captured: the text is the test's output, escaped inside testStdOut.
            assert_eq!(
                run.count(&["##teamcity[testStdOut ", "##teamcity|[buildStatisticValue"]),
                1
            );
        }
    }
    // A person's terminal parses nothing: stderr goes as it is.
    let run = Tcrunner::pytest(project.path())
        .args(["--format", "human", "--path", "test_hostile.py", "--", "-s"])
        .run(LIMIT);
    assert!(
        run.stderr
            .lines()
            .any(|l| l
                == "##teamcity[testFailed name='test_prints_messages' message='fake on stderr']"),
        "{}",
        run.describe()
    );
    let run = Tcrunner::pytest(project.path())
        .args([
            "--block-service-messages",
            "--path",
            "test_hostile.py",
            "--",
            "-s",
        ])
        .run(LIMIT);
    assert_sound(&run, 0);
    assert_eq!(run.count(&["##teamcity[buildStatisticValue"]), 0);
    assert_eq!(
        run.count(&["##teamcity[message text='##teamcity|[buildStatisticValue"]),
        1
    );
}

/// 100 MB written straight to stdout (`-s`): every byte arrives, and
/// tcrunner's memory stays flat (the readers block on a bounded queue).
#[test]
fn a_hundred_megabytes_of_output_arrive_whole_in_bounded_memory() {
    let project = pytest_project();
    let mut running = Tcrunner::pytest(project.path())
        .args([
            "--target",
            "test_huge.py::test_hundred_megabytes",
            "--",
            "-s",
        ])
        .spawn();
    let mut peak = 0;
    while !running.is_finished() {
        peak = peak.max(running.peak_rss_kib().unwrap_or(0));
        running.drain(Duration::from_millis(20));
    }
    let run = running.finish(LIMIT);
    assert_sound(&run, 0);
    let mut line = b"0123456789abcdef".repeat(64);
    line.pop(); // the newline takes the 1024th byte
    let lines = run
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| *l == line.as_slice())
        .count();
    assert_eq!(lines, 100 * 1024, "every 1 KB line of the 100 MB arrives");
    eprintln!("peak RSS of tcrunner with 100 MB on stdout: {} KiB", peak);
    assert!(peak > 0 && peak < 64 * 1024, "peak RSS {peak} KiB");
}

/// A consumer that reads slowly keeps output draining well after pytest
/// exits: that is not a leak, and nothing may be dropped.
#[test]
fn a_slow_consumer_loses_nothing_and_is_not_a_leak() {
    slow_reader_gets_every_line(4, Duration::from_millis(10));
}

/// `megabytes` of 1 KB lines printed under `-s`, read by a consumer that
/// pauses `pause` after each 4 KB: every line arrives, and tcrunner says
/// nothing (no leak warning).
fn slow_reader_gets_every_line(megabytes: usize, pause: Duration) {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args([
            "--target",
            "test_huge.py::test_hundred_megabytes",
            "--",
            "-s",
        ])
        .env("FAULT_MB", megabytes.to_string())
        .throttle_stdout(pause)
        .run(LIMIT);
    assert_sound(&run, 0);
    let mut line = b"0123456789abcdef".repeat(64);
    line.pop();
    let lines = run
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| *l == line.as_slice())
        .count();
    assert_eq!(lines, megabytes * 1024, "every line arrives");
    assert!(!run.stderr.contains("tcrunner"), "{}", run.stderr);
}

/// The same 100 MB captured by pytest: it reaches tcrunner as one event
/// line, and arrives as 50,000-character testStdOut chunks.
#[test]
fn a_hundred_captured_megabytes_arrive_whole_in_chunks() {
    let project = pytest_project();
    let mut running = Tcrunner::pytest(project.path())
        .args(["--target", "test_huge.py::test_hundred_megabytes"])
        .spawn();
    let mut peak = 0;
    while !running.is_finished() {
        peak = peak.max(running.peak_rss_kib().unwrap_or(0));
        running.drain(Duration::from_millis(20));
    }
    let run = running.finish(LIMIT);
    assert_sound(&run, 0);
    let out: usize = util::messages(&run.stdout)
        .iter()
        .filter(|m| m.name == "testStdOut")
        .map(|m| m.get("out").map_or(0, str::len))
        .sum();
    assert_eq!(out, 100 << 20, "every captured byte arrives");
    eprintln!("peak RSS of tcrunner with 100 MB captured: {} KiB", peak);
}

#[test]
fn a_ten_megabyte_line_and_binary_output_arrive_whole() {
    let project = pytest_project();
    let long = format!("{}#end-of-long-line", "L".repeat(10 << 20));
    // Straight to stdout: the bytes pass through untouched.
    let run = Tcrunner::pytest(project.path())
        .args([
            "--path",
            "test_huge.py",
            "--",
            "-s",
            "-k",
            "ten_megabyte or binary",
        ])
        .run(LIMIT);
    assert_sound(&run, 0);
    let lines: Vec<&[u8]> = run.stdout.split(|&b| b == b'\n').collect();
    assert!(
        lines.contains(&long.as_bytes()),
        "the long line arrives whole, on a line of its own"
    );
    let binary: &[u8] = b"bad utf-8: \xff\xfe\xc3( NUL: \x00 end-of-binary";
    assert!(
        lines.iter().any(|l| l.ends_with(binary)),
        "raw bytes pass through"
    );

    // Captured: pytest decodes with replacement, JSON carries it, and the
    // chunks of testStdOut add up to the whole line.
    let run = Tcrunner::pytest(project.path())
        .args([
            "--path",
            "test_huge.py",
            "--",
            "-k",
            "ten_megabyte or binary",
        ])
        .run(LIMIT);
    assert_sound(&run, 0);
    let msgs = util::messages(&run.stdout);
    let id = |name: &str| {
        msgs.iter()
            .find(|m| m.name == "testStarted" && m.get("name") == Some(name))
            .and_then(|m| m.get("nodeId"))
            .unwrap()
    };
    let output_of = |name: &str| -> String {
        let id = id(name);
        msgs.iter()
            .filter(|m| m.name == "testStdOut" && m.get("nodeId") == Some(id))
            .filter_map(|m| m.get("out"))
            .collect()
    };
    assert!(
        output_of("test_ten_megabyte_line").contains(&long),
        "the long line arrives whole"
    );
    assert_eq!(
        output_of("test_binary"),
        "bad utf-8: \u{fffd}\u{fffd}\u{fffd}( NUL: \0 end-of-binary\n"
    );
}

// --- the consumer goes away -----------------------------------------------------------

#[test]
fn a_closed_stdout_stops_the_run_quietly() {
    let project = pytest_project();
    // As `tcrunner | head -1`: the next write fails.
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_slow.py"])
        .run_closing_stdout_at("\n", LIMIT);
    assert_eq!(run.code(), 141, "{}", run.describe());
    assert!(
        !run.stderr.contains("tcrunner"),
        "no error spam: {}",
        run.stderr
    );
    run.assert_no_leftovers();
    // As an IDE closing the pipe while a test is quiet: noticed without a write.
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_slow.py"])
        .run_closing_stdout_at("name='test_sleeps'", LIMIT);
    assert_eq!(run.code(), 141, "{}", run.describe());
    assert!(
        !run.stderr.contains("tcrunner"),
        "no error spam: {}",
        run.stderr
    );
    assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
    run.assert_no_leftovers();
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

/// A reader that never reads (a harness reading stdout only after the
/// run): tcrunner still stops the run when its time runs out, writes every
/// result to the files, gives the reader the grace period, and says what
/// it could not deliver.
#[test]
fn a_reader_that_never_reads_does_not_hold_back_the_time_limit() {
    let project = pytest_project();
    let json = project.path().join("result.json");
    let run = Tcrunner::pytest(project.path())
        .args(["--session-timeout", "4", "--grace-period", "1", "--json"])
        .arg(&json)
        .args(["--path", "test_chatty.py"])
        .stall_stdout()
        .run(LIMIT);
    run.assert_code(124).assert_no_leftovers();
    assert!(run.elapsed < Duration::from_secs(60), "{:?}", run.elapsed);
    assert_contains(&run.stderr, "bytes were not delivered", &run);
    let doc = util::json(&json);
    let outcome = |name: &str| {
        doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|test| test["name"] == name)
            .map(|test| test["status"].clone())
    };
    assert_eq!(outcome("test_prints_megabytes"), Some("passed".into()));
    assert_eq!(outcome("test_sleeps"), Some("error".into()));
    assert_eq!(doc["run"]["exit_code"], 124);
}

/// The same reader, and SIGTERM to tcrunner: the run ends with 143.
#[test]
fn a_reader_that_never_reads_does_not_hold_back_a_signal() {
    let project = pytest_project();
    let running = Tcrunner::pytest(project.path())
        .args(["--path", "test_chatty.py"])
        .stall_stdout()
        .spawn();
    std::thread::sleep(Duration::from_secs(3));
    running.signal(libc::SIGTERM);
    let run = running.finish(LIMIT);
    run.assert_code(143).assert_no_leftovers();
    assert!(run.elapsed < Duration::from_secs(60), "{:?}", run.elapsed);
}

/// A reader slower than the framework by far more than tcrunner holds for
/// it (8 MB): the framework is made to wait, which is neither silence nor
/// a leak, and every line arrives.
#[test]
fn a_reader_far_behind_holds_the_framework_and_loses_nothing() {
    slow_reader_gets_every_line(24, Duration::from_micros(100));
}

// --- leaks -----------------------------------------------------------------------------

#[test]
fn a_leaked_process_holding_the_pipes_is_killed_after_the_leak_timeout() {
    let project = pytest_project();
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_leak.py", "--", "-s"])
        .run(LIMIT);
    assert_sound(&run, 0);
    assert!(run.passed("test_starts_a_background_process"));
    assert_contains(
        &tcrunner_line(&run),
        "tcrunner: warning: a process started by the tests still held",
        &run,
    );
    assert_eq!(
        run.count(&["##teamcity[message ", "still held", "status='WARNING'"]),
        1,
        "{}",
        run.describe()
    );
    assert!(
        run.elapsed < Duration::from_secs(100),
        "not the 120 s of the leaked sleep: {:?}",
        run.elapsed
    );
}

/// A process that left the framework's process group (`setsid`) is not
/// killed with it: the run still ends, and says the process was left
/// running, where it said only that the group was killed.
#[test]
fn a_leaked_process_in_a_session_of_its_own_is_said_to_be_left_running() {
    let project = pytest_project();
    project.write(
        "test_own_session.py",
        "import os, subprocess, sys\n\n\n\
         def test_starts_a_session_of_its_own():\n    \
             child = subprocess.Popen(\n        \
                 [sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True\n    )\n    \
             with open(os.environ['PID_FILE'], 'w') as f:\n        \
                 f.write(str(child.pid))\n",
    );
    let pid_file = project.path().join("child.pid");
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_own_session.py", "--", "-s"])
        .env("PID_FILE", &pid_file)
        .run(LIMIT);
    let pid: i32 = std::fs::read_to_string(&pid_file).unwrap().parse().unwrap();
    // SAFETY: kill(2) of a pid this test's fixture started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert_sound(&run, 0);
    assert_contains(
        &run.stderr,
        "tcrunner: warning: a process that left pytest's process group (setsid) still holds its output open: it was left running",
        &run,
    );
    assert!(run.elapsed < Duration::from_secs(30), "{:?}", run.elapsed);
}

// --- a live stream ----------------------------------------------------------------------

/// The second test of `file` (`second`) waits (up to 60 s) for the file named by
/// `TCRUNNER_GO_FILE`, which this creates only once tcrunner's stdout has
/// shown the first test passed and the second one started: a stream held
/// back until the end of the run (or of a buffer) deadlocks here and the
/// second test fails.
fn assert_results_arrive_while_the_run_goes_on(
    project: &Project,
    mut command: Tcrunner,
    file: &str,
    [first, second]: [&str; 2],
) {
    let go = project.path().join("go");
    let mut running = command
        .args(["--path", file])
        .env("TCRUNNER_GO_FILE", &go)
        .spawn();
    let second_name = format!("name='{second}'");
    running.wait_for(&second_name, LIMIT);
    assert!(!running.is_finished(), "the run is still waiting");
    std::fs::write(&go, "").expect("write the go file");
    let run = running.finish(LIMIT);
    assert_sound(&run, 0);
    assert!(run.passed(first), "{}", run.describe());
    assert!(run.passed(second), "{}", run.describe());
    let first_passed = run.text().find("testFinished").expect("a testFinished");
    let second_started = run.text().find(&second_name);
    assert!(
        second_started.is_some_and(|at| first_passed < at),
        "the first verdict came before the second test's start\n{}",
        run.describe()
    );
}

#[test]
fn pytest_results_arrive_while_the_run_goes_on() {
    let project = pytest_project();
    project.write(
        "test_live.py",
        "import os, pathlib, time\n\
         \n\
         def test_first():\n    pass\n\
         \n\
         def test_waits_for_the_reader():\n\
         \x20   go = pathlib.Path(os.environ['TCRUNNER_GO_FILE'])\n\
         \x20   deadline = time.monotonic() + 60\n\
         \x20   while not go.exists():\n\
         \x20       assert time.monotonic() < deadline, 'the reader never saw test_first pass'\n\
         \x20       time.sleep(0.01)\n",
    );
    assert_results_arrive_while_the_run_goes_on(
        &project,
        Tcrunner::pytest(project.path()),
        "test_live.py",
        ["test_first", "test_waits_for_the_reader"],
    );
}

/// The JS version of the waiting test, for jest (`require`) or vitest (`import`).
fn js_live_test(header: &str) -> String {
    format!(
        "{header}\n\
         test('first', () => {{}});\n\
         test('waits for the reader', async () => {{\n\
         \x20 const deadline = Date.now() + 60_000;\n\
         \x20 while (!fs.existsSync(process.env.TCRUNNER_GO_FILE)) {{\n\
         \x20   if (Date.now() > deadline) throw new Error('the reader never saw \"first\" pass');\n\
         \x20   await new Promise((resolve) => setTimeout(resolve, 10));\n\
         \x20 }}\n\
         }}, 90_000);\n"
    )
}

#[test]
fn jest_results_arrive_while_the_run_goes_on() {
    let project = jest_project();
    project.write("live.test.js", &js_live_test("const fs = require('fs');"));
    assert_results_arrive_while_the_run_goes_on(
        &project,
        Tcrunner::new(project.path()),
        "live.test.js",
        ["first", "waits for the reader"],
    );
}

#[test]
fn vitest_results_arrive_while_the_run_goes_on() {
    let project = vitest_project();
    project.write(
        "live.test.mjs",
        &js_live_test("import fs from 'node:fs';\nimport { test } from 'vitest';"),
    );
    assert_results_arrive_while_the_run_goes_on(
        &project,
        Tcrunner::new(project.path()),
        "live.test.mjs",
        ["first", "waits for the reader"],
    );
}

/// A test that stops its process group (SIGSTOP) acts on the time limit's
/// SIGTERM only once it runs again: tcrunner continues it, so pytest's
/// handler keeps what the test printed and the grace period is not waited
/// out. A test that moves pytest out of its group and ignores SIGTERM is
/// still killed when the grace period ends: the main process is signalled
/// itself, not only its group.
#[test]
fn a_test_that_stops_or_leaves_its_group_is_stopped_in_time() {
    let project = pytest_project();
    for (test, printed, grace) in [
        ("test_stops_its_group", "printed before stopping", "30"),
        ("test_leaves_its_group", "printed before leaving", "1"),
    ] {
        let target = format!("test_stops_itself.py::{test}");
        let run = Tcrunner::pytest(project.path())
            .args([
                "--session-timeout",
                "4",
                "--grace-period",
                grace,
                "--target",
                &target,
            ])
            .run(LIMIT);
        run.assert_code(124);
        assert!(
            run.failure_of(test).contains("--session-timeout"),
            "{}",
            run.describe()
        );
        // Well inside the 30 s grace: pytest ran again and stopped itself.
        // The escaped one: the session limit and the grace (4 + 1 s), not
        // the 5 s more that waiting on a group without it took.
        let bound = if grace == "30" { 20 } else { 8 };
        assert!(
            run.elapsed < Duration::from_secs(bound),
            "{test}: {:?}",
            run.elapsed
        );
        if grace == "30" {
            let id = run.node_id(test);
            let message = format!("##teamcity[testStdOut nodeId='{id}' out='{printed}|n']");
            assert_contains(&run.text(), &message, &run);
        }
    }
}
