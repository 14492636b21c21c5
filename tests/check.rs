//! `tcrunner check` as a user runs it: the real binary on fixture streams,
//! from a file and from stdin; exit codes 0 (clean), 1 (violations) and 66
//! (missing input); the `line N: <rule>: <detail>` lines and the summary.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/streams")
        .join(name)
}

/// Runs `tcrunner check <args>` with `stdin` piped in.
fn check(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcrunner"))
        .arg("check")
        .args(args)
        .env_remove("TEAMCITY_VERSION")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tcrunner");
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    // Write from another thread so a large input cannot deadlock against stdout.
    let writer = std::thread::spawn(move || {
        // The binary may exit before reading everything (a missing file).
        let _ = pipe.write_all(&input);
    });
    let output = child.wait_with_output().expect("wait for tcrunner");
    writer.join().expect("stdin writer");
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("utf-8 stdout")
}

#[track_caller]
fn assert_exit(output: &Output, code: i32) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn a_clean_file_exits_0_with_only_the_summary() {
    let path = fixture("pycharm-serial-tree.txt");
    let output = check(&[path.to_str().unwrap()], b"");
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "check: 21 messages, 3 tests (1 passed, 1 failed, 1 ignored), 5 suites: clean\n"
    );
    assert!(output.stderr.is_empty());
}

#[test]
fn violations_exit_1_one_line_each_then_the_summary() {
    let path = fixture("vitest-teamcity-reporter.stdout.txt");
    let output = check(&[path.to_str().unwrap()], b"");
    assert_exit(&output, 1);
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 20);
    assert_eq!(
        lines[0],
        "line 8: duration: duration='1.2893439999999998' on testFinished is not a non-negative integer of milliseconds"
    );
    assert_eq!(
        lines[13],
        "line 86: suite mismatch: testSuiteFinished '/proj/vitest-suite/other.test.js' does not match the open suite \
         'other.test.js' (line 76) in flow '/proj/vitest-suite/other.test.js'"
    );
    for line in &lines[..19] {
        let (head, detail) = line
            .split_once(": ")
            .and_then(|(h, rest)| Some((h, rest.split_once(": ")?)))
            .unwrap();
        assert!(
            head.strip_prefix("line ")
                .is_some_and(|n| n.parse::<u64>().is_ok()),
            "{line}"
        );
        assert!(["duration", "suite mismatch"].contains(&detail.0), "{line}");
    }
    assert_eq!(
        lines[19],
        "check: 103 messages, 21 tests (10 passed, 8 failed, 3 ignored), 9 suites: 19 violations"
    );
}

#[test]
fn stdin_by_dash_and_by_default() {
    let bytes = std::fs::read(fixture("jest-teamcity.stdout.txt")).unwrap();
    let expected = "line 15: duration: duration='null' on testFinished is not a non-negative integer of milliseconds\n\
                    line 17: duration: duration='null' on testFinished is not a non-negative integer of milliseconds\n\
                    check: 68 messages, 20 tests (10 passed, 9 failed, 1 ignored), 9 suites: 2 violations\n";
    for args in [&["-"][..], &[][..]] {
        let output = check(args, &bytes);
        assert_exit(&output, 1);
        assert_eq!(stdout(&output), expected, "args {args:?}");
    }
}

#[test]
fn quiet_prints_only_the_summary() {
    let path = fixture("pytest-teamcity-messages.stdout.txt");
    for flag in ["--quiet", "-q"] {
        let output = check(&[flag, path.to_str().unwrap()], b"");
        assert_exit(&output, 1);
        assert_eq!(
            stdout(&output),
            "check: 48 messages, 17 tests (6 passed, 8 failed, 3 ignored), 0 suites: 32 violations\n"
        );
    }
}

#[test]
fn a_missing_file_exits_66_naming_it() {
    let output = check(&["/nonexistent/stream.txt"], b"");
    assert_exit(&output, 66);
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("/nonexistent/stream.txt"), "{stderr}");
}

#[test]
fn a_directory_is_not_readable_input() {
    let dir = fixture("");
    let output = check(&[dir.to_str().unwrap()], b"");
    assert_exit(&output, 66);
    assert!(String::from_utf8_lossy(&output.stderr).contains("streams"));
}

/// A stream saved as UTF-16 (PowerShell's `>`) holds no message a reader
/// of ASCII would find: `check` and `view` refuse it, naming it, exit 65.
#[test]
fn utf16_input_is_refused() {
    let text = "##teamcity[testStarted name='t']\n##teamcity[testFinished name='t']\n";
    let le: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
    for input in [le, be] {
        let output = check(&["-"], &input);
        assert_exit(&output, 65);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("standard input: UTF-16 text: convert it to UTF-8 first"),
            "{stderr}"
        );
        let viewed = Command::new(env!("CARGO_BIN_EXE_tcrunner"))
            .args(["view", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                child.stdin.take().unwrap().write_all(&input)?;
                child.wait_with_output()
            })
            .unwrap();
        assert_exit(&viewed, 65);
        assert!(String::from_utf8_lossy(&viewed.stderr).contains("UTF-16 text"));
    }
}

#[test]
fn empty_input_is_clean() {
    let output = check(&["-"], b"");
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "check: 0 messages, 0 tests (0 passed, 0 failed, 0 ignored), 0 suites: clean\n"
    );
}

/// A few megabytes through stdin, in a debug build: linear, no buffering of
/// the whole stream, a node map that does not blow up.
#[test]
fn a_large_id_mode_stream_checks_clean() {
    let mut stream = Vec::new();
    let mut id = 0;
    for suite in 0..200 {
        id += 1;
        let sid = id;
        writeln!(
            stream,
            "##teamcity[testSuiteStarted name='module {suite}' nodeId='{sid}' parentNodeId='0']"
        )
        .unwrap();
        for test in 0..100 {
            id += 1;
            writeln!(
                stream,
                "##teamcity[testStarted name='test {test}' nodeId='{id}' parentNodeId='{sid}']"
            )
            .unwrap();
            writeln!(stream, "output of test {test}").unwrap();
            writeln!(
                stream,
                "##teamcity[testFinished nodeId='{id}' duration='{test}']"
            )
            .unwrap();
        }
        writeln!(stream, "##teamcity[testSuiteFinished nodeId='{sid}']").unwrap();
    }
    let output = check(&["-"], &stream);
    assert_exit(&output, 0);
    assert_eq!(
        stdout(&output),
        "check: 40400 messages, 20000 tests (20000 passed, 0 failed, 0 ignored), 200 suites: clean\n"
    );
}
