//! `--events-out`: a live run recorded beside its stream, replayed by
//! `tcrunner convert` into the same stream, on real pytest, jest and vitest.
mod util;

use std::path::{Path, PathBuf};

use util::{output, tcrunner, Project};

/// The teamcity dialect's flow ids start with the writing process's id, so
/// that two runs reporting into one build never share a flow: that prefix
/// is the one thing a replay writes differently.
fn without_flow_pids(stream: &[u8], pid: u32) -> String {
    String::from_utf8_lossy(stream).replace(&format!("flowId='{pid}-"), "flowId='PID-")
}

/// Runs `args` live with `--events-out`, then replays the recording in the
/// same dialect; asserts the two streams are the same and returns the
/// recording and the live stream.
fn assert_replays(args: &[String], dialect: &str) -> (String, Vec<u8>) {
    let dir = util::path("target/tmp").join(util::unique("events"));
    std::fs::create_dir_all(&dir).unwrap();
    let recording = dir.join("run.jsonl");
    let mut all: Vec<String> = args.to_vec();
    all.extend([
        "--format".into(),
        dialect.into(),
        "--events-out".into(),
        recording.to_string_lossy().into_owned(),
    ]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let live = tcrunner(&all).output().unwrap();
    let live_pid = flow_pid(&live.stdout);
    let replay = output(&mut tcrunner(&[
        "convert",
        "--format",
        dialect,
        recording.to_str().unwrap(),
    ]));
    assert!(
        replay.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&replay.stderr)
    );
    let (live_text, replay_text) = match live_pid {
        Some(pid) => (
            without_flow_pids(&live.stdout, pid),
            without_flow_pids(&replay.stdout, flow_pid(&replay.stdout).unwrap()),
        ),
        None => (
            String::from_utf8_lossy(&live.stdout).into_owned(),
            String::from_utf8_lossy(&replay.stdout).into_owned(),
        ),
    };
    assert!(!live.stdout.is_empty());
    // Byte for byte where no flow id is written.
    if live_pid.is_none() {
        assert_eq!(live.stdout, replay.stdout, "{dialect}: replay differs");
    }
    assert_eq!(live_text, replay_text, "{dialect}: replay differs");
    // A replay ends as the run did: failed tests fail the conversion.
    assert_eq!(
        live.status.code() == Some(0),
        replay.status.code() == Some(0),
        "{dialect}: exit codes {:?} and {:?}",
        live.status.code(),
        replay.status.code()
    );
    let text = std::fs::read_to_string(&recording).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    (text, live.stdout)
}

/// The process id in the first `flowId='<pid>-…'` of a stream.
fn flow_pid(stream: &[u8]) -> Option<u32> {
    let text = String::from_utf8_lossy(stream);
    let at = text.find("flowId='")? + "flowId='".len();
    text[at..].split('-').next()?.parse().ok()
}

fn pytest_args(project: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        "--project".to_owned(),
        project.to_string_lossy().into_owned(),
        "--python".to_owned(),
        util::pytest9().to_string_lossy().into_owned(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    args
}

#[test]
fn a_pytest_run_replays_into_the_same_stream() {
    let project = Project::copy("pytest");
    for dialect in ["intellij", "teamcity"] {
        let (recording, live) = assert_replays(&pytest_args(project.path(), &[]), dialect);
        // The recording holds the source's events, not the stream.
        assert!(recording.starts_with(r#"{"ev":"run","collect_only":false"#));
        assert!(recording.contains(r#"{"ev":"hello","runner":"pytest""#));
        assert!(!recording.contains("##teamcity[testStarted"));
        util::assert_clean(&live);
    }
}

/// Tests printing straight to stdout (capture off): forged service
/// messages and bytes that are not UTF-8 pass through as text, and the
/// replay writes them exactly as the live run did.
#[test]
fn plain_text_with_forged_messages_and_raw_bytes_replays_exactly() {
    let project = Project::copy("pytest-edges");
    project.write(
        "test_raw_output.py",
        concat!(
            "import os, sys\n",
            "def test_forges_and_writes_raw_bytes():\n",
            "    sys.stdout.flush()\n",
            "    os.write(1, b\"##teamcity[testFinished name='forged' nodeId='1']\\n\")\n",
            "    os.write(1, b'raw \\xff\\xfe\\xc3( bytes\\n')\n",
            "    os.write(1, b'half a line with # ')\n",
            "def test_after():\n",
            "    print('plain')\n",
        ),
    );
    let args = pytest_args(project.path(), &["--", "-s", "test_raw_output.py"]);
    for dialect in ["intellij", "teamcity"] {
        let (recording, live) = assert_replays(&args, dialect);
        assert!(recording.contains(r#"{"ev":"live_output"}"#), "{recording}");
        assert!(
            recording.contains(r#""bytes":["#),
            "raw bytes recorded as bytes"
        );
        let raw: &[u8] = b"raw \xff\xfe\xc3( bytes";
        assert!(
            live.windows(raw.len()).any(|w| w == raw),
            "raw bytes pass through"
        );
        let live = String::from_utf8_lossy(&live);
        assert!(!live.contains("##teamcity[testFinished name='forged' nodeId='1']"));
    }
}

#[test]
fn a_collect_only_run_replays_as_its_declared_tree() {
    let project = Project::copy("pytest");
    let (recording, live) = assert_replays(
        &pytest_args(project.path(), &["--collect-only"]),
        "intellij",
    );
    assert!(recording.starts_with(r#"{"ev":"run","collect_only":true"#));
    assert!(String::from_utf8_lossy(&live).contains("##teamcity[treeEnded]"));
}

fn js_args(name: &str) -> Option<Vec<String>> {
    let modules = util::node_modules(name)?;
    let mut args = vec![
        "--project".to_owned(),
        modules.parent().unwrap().to_string_lossy().into_owned(),
    ];
    if name == "vitest5" {
        args.extend([
            "--node".into(),
            util::node22()?.to_string_lossy().into_owned(),
        ]);
    }
    Some(args)
}

fn installed(name: &str) -> Vec<String> {
    js_args(name).unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"))
}

#[test]
fn jest_runs_replay_into_the_same_stream() {
    for name in ["jest29", "jest30"] {
        for dialect in ["intellij", "teamcity"] {
            let (recording, live) = assert_replays(&installed(name), dialect);
            assert!(recording.contains(r#"{"ev":"hello","runner":"jest""#));
            // output.test.js prints a forged testFinished to the real stdout.
            let live = String::from_utf8_lossy(&live);
            assert!(live.contains("testFinished name=|'x|'"), "{name} {dialect}");
        }
    }
}

#[test]
fn vitest_runs_replay_into_the_same_stream() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        for dialect in ["intellij", "teamcity"] {
            let (recording, live) = assert_replays(&installed(name), dialect);
            assert!(recording.contains(r#"{"ev":"hello","runner":"vitest""#));
            let live = String::from_utf8_lossy(&live);
            assert!(live.contains("testFinished name=|'x|'"), "{name} {dialect}");
        }
    }
}

#[test]
fn format_none_writes_only_the_file() {
    let project = Project::copy("pytest");
    let recording: PathBuf = project.path().join("events.jsonl");
    let mut args = pytest_args(project.path(), &[]);
    args.extend([
        "--format".into(),
        "none".into(),
        "--events-out".into(),
        recording.to_string_lossy().into_owned(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = output(&mut tcrunner(&args));
    assert!(
        run.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
    assert_eq!(run.status.code(), Some(1), "the fixture has failing tests");
    let replay = output(&mut tcrunner(&["convert", recording.to_str().unwrap()]));
    util::assert_clean(&replay.stdout);
    assert!(String::from_utf8_lossy(&replay.stdout).contains("testFailed"));
}

#[test]
fn an_unwritable_events_file_stops_the_run_before_it_starts() {
    let project = Project::copy("pytest");
    let mut args = pytest_args(project.path(), &[]);
    args.extend([
        "--events-out".into(),
        "/nonexistent-dir/events.jsonl".into(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = output(&mut tcrunner(&args));
    assert_eq!(run.status.code(), Some(74));
    assert!(
        run.stdout.is_empty(),
        "nothing ran: {}",
        String::from_utf8_lossy(&run.stdout)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--events-out /nonexistent-dir/events.jsonl"),
        "{stderr}"
    );
    assert!(
        !project.path().join(".pytest_cache").exists(),
        "pytest never started"
    );
}

#[test]
fn a_malformed_recording_is_one_line_and_keeps_what_came_before() {
    let dir = util::path("target/tmp").join(util::unique("events-bad"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.jsonl");
    std::fs::write(
        &file,
        concat!(
            "{\"ev\":\"test\",\"id\":\"t\",\"name\":\"t\",\"kind\":\"test\"}\n",
            "{\"ev\":\"finished\",\"id\":\"t\",\"outcome\":\"passed\"}\n",
            "{\"ev\":\"started\",\n",
        ),
    )
    .unwrap();
    let run = output(&mut tcrunner(&["convert", file.to_str().unwrap()]));
    assert_eq!(run.status.code(), Some(65));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("line 3"), "{stderr}");
    let stream = String::from_utf8_lossy(&run.stdout);
    assert!(stream.contains("testFinished nodeId='1'"), "{stream}");
    util::assert_clean(&run.stdout);
    std::fs::remove_dir_all(&dir).unwrap();
}
