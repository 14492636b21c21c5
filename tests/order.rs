//! The stream keeps the order in which things happened across the
//! framework's two channels: the last test's events (the side channel) come
//! before the text the framework prints after them (its stdout), however
//! late tcrunner reads the two.
//!
//! Each run holds tcrunner still (SIGSTOP) while its last test runs and
//! until every process of the framework has exited, so the last events and
//! the closing text are both waiting when it reads again: what a loaded
//! machine does by chance, made certain. The fixtures are in
//! tests/fixtures/order; their last test waits for the file `$ORDER_GO`.
mod util;

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use util::{leftovers, node_modules, Project, Run, Tcrunner};

/// Generous: a loaded two-core machine must never hit it.
const LIMIT: Duration = Duration::from_secs(180);

/// Runs `tcrunner`, pausing it once the test named `last` has started until
/// the framework has written everything and exited.
fn run_held(tcrunner: &mut Tcrunner, project: &Path, last: &str) -> Run {
    let go = project.join("go");
    let mut running = tcrunner.env("ORDER_GO", &go).spawn();
    running.wait_for(&format!(" name='{last}'"), LIMIT);
    // Past the run loop's short pause for gathering event lines, so that it
    // resumes in a wait that reads every pipe.
    thread::sleep(Duration::from_millis(100));
    running.signal(libc::SIGSTOP);
    std::fs::write(&go, "").expect("write the go-ahead file");
    let tcrunner_pid = running.pid() as i32;
    let marker = tcrunner.marker().to_owned();
    let deadline = Instant::now() + LIMIT;
    while leftovers(&marker)
        .iter()
        .any(|(pid, _)| *pid != tcrunner_pid)
    {
        if Instant::now() >= deadline {
            running.signal(libc::SIGCONT);
            panic!("the framework still runs {LIMIT:?} after its last test was let go");
        }
        thread::sleep(Duration::from_millis(20));
    }
    running.signal(libc::SIGCONT);
    running.finish(LIMIT)
}

/// Asserts that the line holding `closing` comes after the last message of
/// the test named `last` (its output and its `testFinished`).
#[track_caller]
fn assert_after_last_test(run: &Run, closing: &str, last: &str) {
    run.assert_clean();
    let text = run.text();
    let lines: Vec<&str> = text.lines().collect();
    let node = format!("nodeId='{}'", run.node_id(last));
    let finished = lines
        .iter()
        .position(|l| l.starts_with("##teamcity[testFinished ") && l.contains(&node))
        .unwrap_or_else(|| panic!("no testFinished of {last}\n{}", run.describe()));
    let last_own = lines
        .iter()
        .rposition(|l| l.contains(&node))
        .expect("the test's messages");
    let closing_at = lines
        .iter()
        .position(|l| l.contains(closing))
        .unwrap_or_else(|| panic!("no {closing:?} in the stream\n{}", run.describe()));
    assert!(
        closing_at > finished && closing_at > last_own,
        "{closing:?} (line {closing_at}) before the last test's messages (finished at line {finished})\n{}",
        run.describe()
    );
}

#[test]
fn pytest_summary_comes_after_the_last_tests_messages() {
    let project = Project::copy("order/pytest");
    let run = run_held(
        &mut Tcrunner::pytest(project.path()),
        project.path(),
        "test_last",
    );
    run.assert_code(0);
    let out = run.message(&["##teamcity[testStdOut ", "printed by the last test"]);
    assert!(out.contains(&run.node_id("test_last")), "{out}");
    assert_after_last_test(&run, "2 passed in ", "test_last");
}

/// With pytest's capture off the events go through its stdout in frames:
/// one pipe, so the order was exact already; it stays so.
#[test]
fn pytest_summary_comes_after_the_last_test_with_capture_off() {
    let project = Project::copy("order/pytest");
    let run = run_held(
        Tcrunner::pytest(project.path()).args(["--", "-s"]),
        project.path(),
        "test_last",
    );
    run.assert_code(0);
    assert_after_last_test(&run, "printed by the last test", "test_first");
    assert_after_last_test(&run, "2 passed in ", "test_last");
}

/// A test that closes the event pipe (`os.closerange`) sends the rest of
/// the run framed in pytest's stdout. The event lines still in the pipe were
/// written first, and come first, however late tcrunner reads the two.
#[test]
fn pytest_events_in_the_pipe_come_before_those_framed_after_it_closed() {
    let project = Project::copy("order/pytest_closing");
    // With fd capture pytest dies in that test: its saved descriptors go too.
    let run = run_held(
        Tcrunner::pytest(project.path()).args(["--", "--capture=sys"]),
        project.path(),
        "test_waits",
    );
    // pytest's log handler lost its descriptor too: it fails as it ends.
    run.assert_code(1).assert_clean();
    for name in ["test_waits", "test_closes_fds", "test_after"] {
        assert!(run.passed(name), "{name}\n{}", run.describe());
    }
    assert_eq!(
        run.count(&["##teamcity[testSuiteStarted "]),
        1,
        "one file holds the three tests\n{}",
        run.describe()
    );
    let text = run.text();
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no {needle:?}\n{}", run.describe()))
    };
    let waited = format!(
        "##teamcity[testFinished nodeId='{}'",
        run.node_id("test_waits")
    );
    let closing = format!(
        "##teamcity[testStarted nodeId='{}'",
        run.node_id("test_closes_fds")
    );
    assert!(at(&waited) < at(&closing), "{}", run.describe());
}

/// A copy of `tests/fixtures/order/<fixture>` that uses the install `name`
/// of target/node.
fn node_project(fixture: &str, name: &str) -> Project {
    let modules = node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"));
    Project::copy(&format!("order/{fixture}")).link_node_modules(&modules)
}

/// jest prints its coverage table after our reporter's last events.
fn jest_coverage_comes_after_the_last_tests_messages(name: &str) {
    let project = node_project("jest", name);
    let run = run_held(
        Tcrunner::new(project.path()).args(["--", "--coverage"]),
        project.path(),
        "last",
    );
    run.assert_code(0);
    assert_after_last_test(&run, "printed by the last test", "first");
    assert_after_last_test(&run, "All files", "last");
}

#[test]
fn jest29_coverage_comes_after_the_last_tests_messages() {
    jest_coverage_comes_after_the_last_tests_messages("jest29");
}

#[test]
fn jest30_coverage_comes_after_the_last_tests_messages() {
    jest_coverage_comes_after_the_last_tests_messages("jest30");
}

/// vitest's own reporters asked for after `--` print after ours: `json`
/// its report (or where it wrote it), `dot` its summary.
fn vitest_reports_come_after_the_last_tests_messages(name: &str) {
    // vitest 5 writes the json report to a file and says where.
    let json = if name == "vitest5" {
        "JSON report written to"
    } else {
        "\"numTotalTestSuites\""
    };
    for (reporter, closing) in [("json", json), ("dot", "Test Files")] {
        let project = node_project("vitest", name);
        let mut tcrunner = Tcrunner::new(project.path());
        if name == "vitest5" {
            let node =
                util::node22().expect("target/node/node22 missing: run scripts/setup-node.sh");
            tcrunner.arg("--node").arg(node);
        }
        let reporter = format!("--reporter={reporter}");
        let run = run_held(tcrunner.args(["--", &reporter]), project.path(), "last");
        run.assert_code(0);
        let out = run.message(&["##teamcity[testStdOut ", "printed by the last test"]);
        assert!(out.contains(&run.node_id("last")), "{out}");
        assert_after_last_test(&run, closing, "last");
    }
}

#[test]
fn vitest3_reports_come_after_the_last_tests_messages() {
    vitest_reports_come_after_the_last_tests_messages("vitest3");
}

#[test]
fn vitest4_reports_come_after_the_last_tests_messages() {
    vitest_reports_come_after_the_last_tests_messages("vitest4");
}

#[test]
fn vitest5_reports_come_after_the_last_tests_messages() {
    vitest_reports_come_after_the_last_tests_messages("vitest5");
}
