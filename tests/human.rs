//! The human view (`--format human`) on real runs of each framework, and
//! `tcrunner view` on the reference samples' streams, as insta snapshots
//! with colours on and off; and who gets which format by default: a
//! terminal nobody else reads gets the human view, an IDE or CI (even
//! under a pseudo-terminal) the service messages.
//!
//! Each run is taken once with `--color always`; the plain snapshot is that
//! output with its colour codes taken out, and one test checks that this is
//! exactly what `--color never` writes. What varies between runs (durations,
//! paths, addresses, Python's version) is redacted first. Runs happen in
//! the project's folder, so paths show as a user there sees them.
//!
//! Update with `INSTA_UPDATE=always cargo test --test human`.
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;
use util::{node_modules, path, pytest9, repo, Project};

/// Runs tcrunner in `project` with `args` (the format and colour added)
/// and `env`; returns the exit code and stdout.
fn run(project: &Path, args: &[&str], env: &[(&str, &str)], color: &str) -> (i32, String) {
    let mut command = util::tcrunner(&["--format", "human", "--color", color]);
    command
        .arg("--project")
        .arg(project)
        .args(args)
        .current_dir(project)
        .env("CI", "true")
        .env_remove("FORCE_COLOR")
        .env_remove("NO_COLOR");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = util::output(&mut command);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The text without its ANSI colour codes.
fn plain(text: &str) -> String {
    Regex::new(r"\x1b\[[0-9;]*m")
        .unwrap()
        .replace_all(text, "")
        .into_owned()
}

/// Replaces what differs between runs and machines with placeholders.
fn redact(text: &str, project: &Path) -> String {
    let mut text = text.to_owned();
    let mut paths: Vec<(String, &str)> = Vec::new();
    for (dir, label) in [(project.to_path_buf(), "<PROJECT>"), (repo(), "<ROOT>")] {
        if let Ok(canonical) = dir.canonicalize() {
            paths.push((canonical.display().to_string(), label));
        }
        paths.push((dir.display().to_string(), label));
    }
    // jest's name patterns escape a path's `/` and `.`.
    for (path, label) in paths.clone() {
        paths.push((path.replace('/', r"\/").replace('.', r"\."), label));
    }
    let base = Command::new(pytest9())
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .expect("run the pytest 9 interpreter");
    let base = String::from_utf8_lossy(&base.stdout).trim().to_owned();
    if !base.is_empty() {
        paths.push((base, "<PYTHON>"));
    }
    paths.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
    for (path, label) in paths {
        text = text.replace(&path, label);
    }
    let re = |p: &str| Regex::new(p).expect("a valid regex");
    for (pattern, with) in [
        (re(r"\b\d+m \d{2}s\b|\b\d+\.\d+s\b"), "<t>"),
        (re(r"\[ *<t>\]"), "[<t>]"),
        (re(r"0x[0-9a-fA-F]+"), "0x…"),
        (re(r"\bpython3\.\d+\b"), "python3.X"),
        (re(r"\bPython 3\.\d+\.\d+\w*"), "Python 3.X"),
        (re(r"(<PYTHON>/[^\s:']+\.py):\d+"), "$1:<line>"),
        (
            re(r"(?:<ROOT>/|(?:\.\./)+)target/venv/pytest\d/lib/python3\.X/site-packages/"),
            "<SITE-PACKAGES>/",
        ),
        // The same from a copy of a fixture under target/tmp.
        (
            re(r"(?:\.\./)+venv/pytest\d/lib/python3\.X/site-packages/"),
            "<SITE-PACKAGES>/",
        ),
        // Python 3.11+ marks the failing expression with a line of `^`.
        (re(r"(?m)^ *(?:\x1b\[2m)? *[\^~][\^~ ]*(?:\x1b\[0m)?\n"), ""),
    ] {
        text = pattern.replace_all(&text, with).into_owned();
    }
    text
}

/// Snapshots a run, colours on and off, with its exit code.
fn snapshot(name: &str, project: &Path, args: &[&str], env: &[(&str, &str)], code: i32) {
    let (got, colored) = run(project, args, env, "always");
    let colored = redact(&colored, project);
    assert_eq!(got, code, "{name}: exit code\n{colored}");
    assert!(colored.contains("\x1b["), "{name}: no colour\n{colored}");
    insta::assert_snapshot!(format!("{name}_color"), colored);
    insta::assert_snapshot!(name.to_owned(), plain(&colored));
}

fn pytest_args(more: &[&'static str]) -> Vec<&'static str> {
    let python: &'static str = pytest9().to_str().expect("UTF-8").to_owned().leak();
    let mut args = vec!["--python", python];
    args.extend(more);
    args
}

fn install(name: &str) -> PathBuf {
    node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"))
        .parent()
        .expect("an install folder")
        .to_path_buf()
}

const JEST: &[&str] = &["--", "--runInBand", "--no-cache"];
const VITEST: &[&str] = &["--", "--no-file-parallelism", "--no-cache"];

fn with(first: &[&'static str], then: &[&'static str]) -> Vec<&'static str> {
    first.iter().chain(then).copied().collect()
}

// --- pytest -------------------------------------------------------------------

/// A copy of the pytest fixture: pytest leaves its cache behind.
fn pytest_fixture() -> Project {
    Project::copy("pytest")
}

#[test]
fn pytest_passing() {
    let project = pytest_fixture();
    let args = pytest_args(&["--target", "tests/test_basic.py::test_add"]);
    snapshot("pytest_passing", project.path(), &args, &[], 0);
}

/// A run that collected no test says so rather than PASSED, beside its
/// exit 5.
#[test]
fn a_run_without_tests_is_not_passed() {
    let project = Project::copy("faults/pytest");
    let (code, out) = run(
        project.path(),
        &pytest_args(&["--path", "empty"]),
        &[],
        "never",
    );
    assert_eq!(code, 5, "{out}");
    let last = out.lines().last().unwrap_or_default();
    assert!(last.starts_with("NO TESTS ran in "), "{out}");
}

#[test]
fn pytest_failing() {
    let project = pytest_fixture();
    let args = pytest_args(&["--target", "tests/test_basic.py::test_str_equality"]);
    snapshot("pytest_failing", project.path(), &args, &[], 1);
}

#[test]
fn pytest_mixed() {
    let project = pytest_fixture();
    snapshot("pytest_mixed", project.path(), &pytest_args(&[]), &[], 1);
}

#[test]
fn pytest_crashed() {
    let project = Project::copy("faults/pytest");
    let args = pytest_args(&["--path", "test_exit.py"]);
    snapshot(
        "pytest_crashed",
        project.path(),
        &args,
        &[("FAULT_HOW", "exit")],
        71,
    );
}

#[test]
fn pytest_timed_out() {
    let project = Project::copy("faults/pytest");
    let args = pytest_args(&["--timeout", "1", "--path", "test_slow.py"]);
    snapshot("pytest_timed_out", project.path(), &args, &[], 124);
}

// --- jest ---------------------------------------------------------------------

#[test]
fn jest_passing() {
    let args = with(&["--target", "outcomes.test.js::passes"], JEST);
    snapshot("jest_passing", &install("jest30"), &args, &[], 0);
}

#[test]
fn jest_failing() {
    let args = with(
        &["--target", "outcomes.test.js::fails toBe with numbers"],
        JEST,
    );
    snapshot("jest_failing", &install("jest30"), &args, &[], 1);
}

#[test]
fn jest_mixed() {
    snapshot("jest_mixed", &install("jest30"), JEST, &[], 1);
}

fn jest_faults() -> Project {
    Project::copy("faults/jest").link_node_modules(&node_modules("jest30").expect("jest 30"))
}

#[test]
fn jest_crashed() {
    let project = jest_faults();
    let args = with(&["--path", "exit.test.js"], JEST);
    snapshot(
        "jest_crashed",
        project.path(),
        &args,
        &[("FAULT_HOW", "exit")],
        71,
    );
}

#[test]
fn jest_timed_out() {
    let project = jest_faults();
    let args = with(&["--timeout", "1", "--path", "slow.test.js"], JEST);
    snapshot("jest_timed_out", project.path(), &args, &[], 124);
}

// --- vitest -------------------------------------------------------------------

#[test]
fn vitest_passing() {
    let args = with(&["--target", "outcomes.test.ts::passes"], VITEST);
    snapshot("vitest_passing", &install("vitest4"), &args, &[], 0);
}

#[test]
fn vitest_failing() {
    let args = with(
        &["--target", "outcomes.test.ts::fails toBe with numbers"],
        VITEST,
    );
    snapshot("vitest_failing", &install("vitest4"), &args, &[], 1);
}

#[test]
fn vitest_mixed() {
    snapshot("vitest_mixed", &install("vitest4"), VITEST, &[], 1);
}

fn vitest_faults() -> Project {
    Project::copy("faults/vitest").link_node_modules(&node_modules("vitest4").expect("vitest 4"))
}

#[test]
fn vitest_crashed() {
    let project = vitest_faults();
    let args = with(&["--path", "exit.test.mjs"], VITEST);
    snapshot("vitest_crashed", project.path(), &args, &[], 71);
}

#[test]
fn vitest_timed_out() {
    let project = vitest_faults();
    let args = with(&["--timeout", "1", "--path", "slow.test.mjs"], VITEST);
    snapshot("vitest_timed_out", project.path(), &args, &[], 124);
}

// --- options ------------------------------------------------------------------

/// `--color never` writes exactly the coloured view without its codes.
#[test]
fn color_never_is_the_coloured_view_without_codes() {
    let fixture = pytest_fixture();
    let project = fixture.path().to_path_buf();
    let args = pytest_args(&["--path", "tests/test_basic.py"]);
    let (_, never) = run(&project, &args, &[], "never");
    let (_, always) = run(&project, &args, &[], "always");
    assert!(!never.contains('\x1b'), "{never}");
    assert_eq!(redact(&never, &project), redact(&plain(&always), &project));
}

/// `-q` leaves out the file lines and the framework's text; `-v` has a
/// line for every test.
#[test]
fn quiet_and_verbose() {
    let fixture = pytest_fixture();
    let project = fixture.path().to_path_buf();
    let args = pytest_args(&["--path", "tests/test_basic.py"]);
    let (_, quiet) = run(&project, &with(&["-q"], &args), &[], "never");
    let (_, normal) = run(&project, &args, &[], "never");
    let (_, verbose) = run(&project, &with(&["-v"], &args), &[], "never");
    assert!(!quiet.contains("Launching"), "{quiet}");
    assert!(!quiet.contains("  FAIL "), "{quiet}");
    assert!(quiet.contains("FAILED tests/test_basic.py > test_int_equality"));
    assert!(normal.contains("  FAIL  [") && normal.contains("] tests/test_basic.py  ("));
    assert!(
        !normal.contains("] tests/test_basic.py > test_add"),
        "{normal}"
    );
    assert!(verbose.contains("  PASS  ["), "{verbose}");
    assert!(
        verbose.contains("] tests/test_basic.py > test_add\n"),
        "{verbose}"
    );
    for out in [&quiet, &normal, &verbose] {
        let last = out.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("FAILED 2 passed, 8 failed, 2 errors in "),
            "{last}"
        );
    }
}

// --- tcrunner view ------------------------------------------------------------

const SAMPLES: &str = "/work/shared/reference/samples";

fn samples() -> PathBuf {
    let local = repo().join("../shared/reference/samples");
    if local.is_dir() {
        local
    } else {
        PathBuf::from(SAMPLES)
    }
}

/// `tcrunner view` of `stream`, written to a file of its own (`label` in
/// its name) and removed after: the exit code and what it showed.
fn view_stream(label: &str, stream: &str) -> (i32, String) {
    let file = std::env::temp_dir().join(util::unique(label));
    std::fs::write(&file, stream).unwrap();
    let shown = view(&file, "never");
    let _ = std::fs::remove_file(&file);
    shown
}

/// `tcrunner view FILE --color COLOR`: its exit code and output.
fn view(file: &Path, color: &str) -> (i32, String) {
    let out = util::output(util::tcrunner(&["view", "--color", color]).arg(file));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn view_reference_samples() {
    for (name, file) in [
        (
            "view_pytest_teamcity_messages",
            "pytest-teamcity-messages.stdout.txt",
        ),
        ("view_jest_teamcity", "jest-teamcity.stdout.txt"),
        (
            "view_jest_teamcity_reporter",
            "jest-teamcity-reporter.stdout.txt",
        ),
        (
            "view_vitest_teamcity_reporter",
            "vitest-teamcity-reporter.stdout.txt",
        ),
    ] {
        let (code, out) = view(&samples().join(file), "always");
        assert_eq!(code, 1, "{name}: every sample has failures\n{out}");
        let out = redact(&out, &repo());
        insta::assert_snapshot!(format!("{name}_color"), out);
        insta::assert_snapshot!(name, plain(&out));
    }
}

/// Our own streams, in both dialects, read back: the same tests and
/// verdicts as the human view of the run itself.
#[test]
fn view_reads_our_streams_in_both_dialects() {
    let fixture = pytest_fixture();
    let project = fixture.path().to_path_buf();
    let args = pytest_args(&["--path", "tests/test_basic.py"]);
    let (_, human) = run(&project, &args, &[], "never");
    let summary = |out: &str| out.lines().last().unwrap_or_default().to_owned();
    let time = Regex::new(r" in \S+$").unwrap();
    let strip = |s: &str| time.replace(s, "").into_owned();
    for dialect in ["intellij", "teamcity"] {
        let out = util::output(
            util::tcrunner(&["--format", dialect, "--project"])
                .arg(&project)
                .args(&args)
                .current_dir(&project),
        );
        let stream = std::env::temp_dir().join(util::unique(&format!("view-{dialect}")));
        std::fs::write(&stream, &out.stdout).unwrap();
        let (code, viewed) = view(&stream, "never");
        let _ = std::fs::remove_file(&stream);
        assert_eq!(code, 1);
        let viewed = plain(&viewed);
        // The teamcity dialect has no `error='true'`: errors read as failures.
        let expected = match dialect {
            "intellij" => strip(&summary(&human)),
            _ => "FAILED 2 passed, 10 failed".to_owned(),
        };
        assert_eq!(strip(&summary(&viewed)), expected, "{dialect}\n{viewed}");
        assert!(human.ends_with(&format!("{}\n", summary(&human))));
        assert!(
            viewed.contains("FAILED tests/test_basic.py > test_str_equality")
                || viewed.contains("FAILED test_basic.py > test_str_equality"),
            "{dialect}\n{viewed}"
        );
        assert!(
            viewed.contains("  expected: 42\n  actual:   54\n"),
            "{dialect}\n{viewed}"
        );
    }
}

/// A message glued after text on its line is read (teamcity-messages's
/// verbose mode), a malformed one is shown as text and counted, and the
/// stream is read from stdin as it arrives.
#[test]
fn view_reads_glued_and_malformed_messages_from_stdin() {
    let stream = concat!(
        "test_a.py::test_one PASSED [ 50%]##teamcity[testStarted name='test_one' flowId='f']\n",
        "##teamcity[testFinished name='test_one' flowId='f' duration='3']\n",
        "##teamcity[testStarted name='broken' flowId='f' oops]\n",
        "text ##teamcity[testStarted name='test_two' flowId='f']",
        "##teamcity[testFailed name='test_two' flowId='f' message='boom']",
        "##teamcity[testFinished name='test_two' flowId='f']\n",
    );
    let mut child = util::tcrunner(&["view", "--color", "never", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        text.contains("test_a.py::test_one PASSED [ 50%]\n"),
        "{text}"
    );
    assert!(
        text.contains("##teamcity[testStarted name='broken' flowId='f' oops]\n"),
        "the malformed message is shown as text\n{text}"
    );
    assert!(
        text.contains("WARNING 1 malformed service message shown as text (the first on line 3)"),
        "{text}"
    );
    assert!(text.contains("FAILED test_two\n"), "{text}");
    assert!(
        text.ends_with(&format!(
            "FAILED 1 passed, 1 failed in {}",
            text.rsplit(" in ").next().unwrap()
        )),
        "{text}"
    );
}

/// A `testFailed` or `testIgnored` whose `testFinished` never comes keeps
/// its verdict, as IntelliJ shows it and `check` counts it, not "stopped".
#[test]
fn view_keeps_a_verdict_whose_test_never_finished() {
    let stream = concat!(
        "##teamcity[testSuiteStarted name='s']\n",
        "##teamcity[testStarted name='a']\n",
        "##teamcity[testFailed name='a' message='boom' details='the trace']\n",
        "##teamcity[testStarted name='b']\n",
        "##teamcity[testIgnored name='b' message='skip it']\n",
        "##teamcity[testSuiteFinished name='s']\n",
    );
    let (code, out) = view_stream("view-unfinished", stream);
    let (_, checked) = util::check(stream.as_bytes());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAILED s > a\n\n  boom\n\n  the trace\n"),
        "{out}"
    );
    assert!(!out.contains("STOPPED"), "{out}");
    assert!(out.contains("FAILED 1 failed, 1 skipped in "), "{out}");
    assert!(
        checked.contains("(0 passed, 1 failed, 1 ignored)"),
        "{checked}"
    );
}

/// A build log saved from TeamCity: each line's time and block prefix is
/// left out where a message follows it, and the tree is read.
#[test]
fn view_reads_a_saved_teamcity_build_log() {
    let log = concat!(
        "[10:00:00] : Step 1/1: pytest\n",
        "[10:00:01]i:\t [Step 1/1] ##teamcity[testSuiteStarted name='t.py' flowId='7']\n",
        "[10:00:01]i:\t [Step 1/1] ##teamcity[testStarted name='t.py::test_one' flowId='7']\n",
        "[10:00:02]i:\t [Step 1/1] ##teamcity[testFailed name='t.py::test_one' flowId='7' message='boom']\n",
        "[10:00:02]i:\t [Step 1/1] ##teamcity[testFinished name='t.py::test_one' flowId='7']\n",
        "[10:00:02]i:\t [Step 1/1] ##teamcity[testSuiteFinished name='t.py' flowId='7']\n",
    );
    let (code, out) = view_stream("view-build-log", log);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.starts_with("[10:00:00] : Step 1/1: pytest\n  FAIL "),
        "{out}"
    );
    assert!(!out.contains("[10:00:01]"), "{out}");
    assert!(
        out.contains("FAILED t.py > t.py::test_one\n\n  boom\n"),
        "{out}"
    );
}

/// Durations too large for any clock add up without overflowing (a debug
/// build panics on an overflow): in the view, and in the result files of a
/// report's conversion.
#[test]
fn durations_too_large_to_add_are_taken() {
    let stream = concat!(
        "##teamcity[testStarted name='a']\n",
        "##teamcity[testFinished name='a' duration='18446744073709551615']\n",
        "##teamcity[testStarted name='b']\n",
        "##teamcity[testFinished name='b' duration='1e300']\n",
    );
    let (code, text) = view_stream("huge-durations", stream);
    let file = std::env::temp_dir().join(util::unique("huge-durations"));
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("PASSED 2 passed in "), "{text}");
    // 20,000 tests of a little under 1e15 ms, the most a report's time is
    // read as: together past what 64 bits hold.
    let report = file.with_extension("junit.xml");
    let cases: String = (0..20_000)
        .map(|i| format!(r#"<testcase name="t{i}" time="999999999999.999"/>"#))
        .collect();
    std::fs::write(
        &report,
        format!(r#"<testsuite name="s">{cases}</testsuite>"#),
    )
    .unwrap();
    let (json, junit) = (file.with_extension("json"), file.with_extension("xml"));
    let out = util::output(
        util::tcrunner(&["convert", "--format", "none", "--json"])
            .arg(&json)
            .arg("--junit-xml")
            .arg(&junit)
            .arg(&report),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = util::json(&json);
    assert_eq!(doc["tests"][0]["duration_ms"], 999_999_999_999_999u64);
    assert_eq!(doc["summary"]["total"], 20_000);
    assert!(std::fs::read_to_string(&junit)
        .unwrap()
        .contains("<testsuites"));
    for path in [&report, &json, &junit] {
        let _ = std::fs::remove_file(path);
    }
}

// --- who gets which format ----------------------------------------------------

/// Runs `tcrunner ARGS` under a pseudo-terminal (`script`), with `env`;
/// returns what the terminal showed.
fn under_pty(args: &str, env: &[(&str, &str)]) -> String {
    let command = format!("{} {args}", util::bin().display());
    let mut script = Command::new("script");
    script
        .args(["-qefc", &command, "/dev/null"])
        .env_remove("TEAMCITY_VERSION")
        .env_remove("JB_TEAMCITY_SOCKET_PATH")
        .env_remove("JB_TEAMCITY_SOCKET_PORT")
        .env_remove("NO_COLOR")
        .env("TERM", "xterm-256color")
        .stdin(std::process::Stdio::null());
    for (key, value) in env {
        script.env(key, value);
    }
    let out = script.output().expect("run script(1)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `view` at a terminal, fed by a producer that goes quiet: the status
/// line's clock goes on, and Ctrl-C (SIGINT) ends the view with the
/// failures and summary so far, exit 130, rather than killing it with its
/// status line on the screen.
#[test]
fn view_at_a_terminal_keeps_time_and_ends_whole_on_ctrl_c() {
    let fifo = std::env::temp_dir().join(util::unique("view-fifo"));
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    let command = format!(
        "{} view --color never {}",
        util::bin().display(),
        fifo.display()
    );
    let script = Command::new("script")
        .args(["-qefc", &command, "/dev/null"])
        .env("TERM", "xterm-256color")
        .env_remove("NO_COLOR")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The producer: a test starts, then nothing for a while.
    let mut producer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    use std::io::Write as _;
    producer
        .write_all(b"##teamcity[testSuiteStarted name='s']\n##teamcity[testStarted name='slow']\n")
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let pid = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
            (args.first() == Some(&util::bin().to_str().unwrap().as_bytes())
                && args.iter().any(|a| *a == fifo.to_str().unwrap().as_bytes()))
            .then_some(pid)
        })
        .next()
        .expect("the view is running");
    // SAFETY: kill has no memory effects.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let out = script.wait_with_output().unwrap();
    drop(producer);
    let _ = std::fs::remove_file(&fifo);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    let clock = Regex::new(r"RUNNING [^\r\n]*?(\d+\.\d{3}s)").unwrap();
    let times: std::collections::BTreeSet<&str> = clock
        .captures_iter(&text)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert!(times.len() >= 3, "the clock stood still: {times:?}\n{text}");
    // The run ended under it: an error of the run's, not the test's failure.
    let errors = text
        .find("──── ERRORS (1) ────")
        .expect("an ERRORS section");
    assert!(text[errors..].contains("STOPPED s > slow"), "{text}");
    assert!(!text.contains("FAILURES"), "{text}");
    assert!(text.contains("1 stopped in "), "{text}");
}

/// At a terminal nobody else reads, the human view, coloured; with
/// `TEAMCITY_VERSION=LOCAL` (PyCharm, which may run programs under a
/// pseudo-terminal) or an IDE transport variable, service messages.
#[test]
fn a_terminal_gets_the_human_view_and_an_ide_under_a_pty_the_messages() {
    let convert = format!(
        "convert {}",
        path("tests/fixtures/reports/jest.json").display()
    );
    let human = under_pty(&convert, &[]);
    assert!(!human.contains("##teamcity["), "{human}");
    assert!(human.contains("\x1b[1;31mFAILED\x1b[0m"), "{human}");
    let out = under_pty(&convert, &[("TEAMCITY_VERSION", "LOCAL")]);
    assert!(out.contains("##teamcity[testStarted"), "{out}");
    // An IDE transport variable: the messages go to the IDE's socket (a
    // listener here, reading what arrives), and the terminal gets no view.
    let read_all = |mut stream: Box<dyn std::io::Read + Send>| {
        let mut got = String::new();
        let _ = stream.read_to_string(&mut got);
        got
    };
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port().to_string();
    let ide = std::thread::spawn(move || read_all(Box::new(tcp.accept().unwrap().0)));
    let out = under_pty(
        &convert,
        &[
            ("JB_TEAMCITY_SOCKET_PORT", &port),
            ("JB_TEAMCITY_SOCKET_HOST", "127.0.0.1"),
        ],
    );
    let messages = ide.join().unwrap();
    assert!(messages.contains("##teamcity[testStarted"), "{messages}");
    assert!(
        !out.contains("FAILED") && !out.contains("##teamcity["),
        "{out}"
    );
    let socket = repo().join("target/tmp").join(util::unique("ide-sock"));
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    let unix = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let ide = std::thread::spawn(move || read_all(Box::new(unix.accept().unwrap().0)));
    let out = under_pty(
        &convert,
        &[("JB_TEAMCITY_SOCKET_PATH", socket.to_str().unwrap())],
    );
    let messages = ide.join().unwrap();
    let _ = std::fs::remove_file(&socket);
    assert!(messages.contains("##teamcity[testStarted"), "{messages}");
    assert!(
        !out.contains("FAILED") && !out.contains("##teamcity["),
        "{out}"
    );
    // A terminal that is asked for messages gets them; a dumb one gets
    // the human view without colour.
    let out = under_pty(&format!("{convert} --format intellij"), &[]);
    assert!(out.contains("##teamcity[testStarted"), "{out}");
    let dumb = under_pty(&convert, &[("TERM", "dumb")]);
    assert!(
        !dumb.contains("##teamcity[") && !dumb.contains('\x1b'),
        "{dumb}"
    );
    let no_color = under_pty(&convert, &[("NO_COLOR", "1")]);
    assert!(
        no_color.contains("FAILED") && !no_color.contains("\x1b[1;31m"),
        "{no_color}"
    );
}

/// A run under a pty with `TEAMCITY_VERSION=LOCAL` writes service messages.
#[test]
fn a_pytest_run_under_a_pty_for_pycharm_writes_messages() {
    let fixture = pytest_fixture();
    let project = fixture.path();
    let args = format!(
        "--project {} --python {} --target tests/test_basic.py::test_add",
        project.display(),
        pytest9().display()
    );
    let out = under_pty(&args, &[("TEAMCITY_VERSION", "LOCAL")]);
    assert!(out.contains("##teamcity[testStarted"), "{out}");
    assert!(out.contains("##teamcity[testFinished"), "{out}");
    let human = under_pty(&args, &[]);
    assert!(!human.contains("##teamcity["), "{human}");
    assert!(human.contains("1 passed"), "{human}");
}

/// `--collect-only`: the framework's own list, then how many were
/// collected beside the files that failed to; `-v` lists them as the view
/// names them.
#[test]
fn collect_only_counts_what_was_collected() {
    let fixture = pytest_fixture();
    let project = fixture.path().to_path_buf();
    let args = pytest_args(&["--collect-only"]);
    let (code, normal) = run(&project, &args, &[], "never");
    assert_eq!(
        code, 1,
        "a file that did not import fails the run\n{normal}"
    );
    assert!(
        !normal.contains("tests/test_basic.py > test_add"),
        "{normal}"
    );
    let last = normal.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("FAILED 53 tests collected, 1 error, 1 skipped in "),
        "{last}"
    );
    let (_, verbose) = run(&project, &with(&["-v"], &args), &[], "never");
    assert!(
        verbose.contains("\ntests/test_basic.py > test_add\n"),
        "{verbose}"
    );
}

/// A name's control characters reach the terminal as escapes: a test
/// titled with a screen-clearing sequence and a carriage return is shown
/// as `\x1b[2J` and `\r`, and no byte of the view is a control character
/// but the view's own colours and line ends.
#[test]
fn names_reach_the_terminal_without_their_control_characters() {
    let (code, out) = view_stream(
        "view-controls",
        "##teamcity[testStarted name='clears \x1b[2J|rthe screen']\n\
         ##teamcity[testFailed name='clears \x1b[2J|rthe screen' message='no']\n\
         ##teamcity[testFinished name='clears \x1b[2J|rthe screen']\n",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(r"clears \x1b[2J\rthe screen"), "{out}");
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
}

/// Values longer than the view keeps are diffed in their first part, and
/// the view says so: a difference past the cut is never silently missing.
#[test]
fn a_diff_of_values_cut_short_says_so() {
    let lines = |changed: usize| -> String {
        (0..3000)
            .map(|i| {
                if i == changed {
                    "changed".to_owned()
                } else {
                    format!("line {i}")
                }
            })
            .collect::<Vec<_>>()
            .join("|n")
    };
    let (code, out) = view_stream(
        "view-long-diff",
        &format!(
            "##teamcity[testStarted name='t']\n\
             ##teamcity[testFailed name='t' message='m' type='comparisonFailure' expected='{}' actual='{}']\n\
             ##teamcity[testFinished name='t']\n",
            lines(usize::MAX),
            lines(2500)
        ),
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("- expected  + actual"), "{out}");
    assert!(
        out.contains("differences after that are not shown"),
        "{out}"
    );
}
