//! `tcrunner convert` end to end: the real binary on every report fixture,
//! its stream validated by `tcrunner check`, and the per-outcome counts in the
//! stream equal to the counts the report itself declares.
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use quick_xml::events::Event;
use serde_json::Value;
use tcrunner_protocol::{ParseEvent, Parser};

const DATA_ERROR: i32 = 65;
const NO_INPUT: i32 = 66;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reports")
        .join(name)
}

fn tcrunner(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tcrunner"));
    command
        .args(args)
        .env_remove("TEAMCITY_VERSION")
        .stdin(Stdio::null());
    command
}

/// `tcrunner convert ARGS…`.
fn convert(args: &[&str]) -> Output {
    let mut all = vec!["convert"];
    all.extend_from_slice(args);
    tcrunner(&all).output().expect("run tcrunner convert")
}

/// `tcrunner check -` on `stream`: its exit code and report.
fn check(stream: &[u8]) -> (i32, String) {
    let mut child = tcrunner(&["check", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tcrunner check");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stream)
        .expect("feed check");
    let out = child.wait_with_output().expect("wait for check");
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), report)
}

/// Distinct nodeIds per message, as the stream reports them.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    failed: usize,
    ignored: usize,
    finished: usize,
}

fn stream_counts(stream: &[u8]) -> Counts {
    let mut sets: [HashSet<String>; 3] = Default::default();
    let mut parser = Parser::new();
    let mut take = |event: ParseEvent| {
        if let ParseEvent::Message { message, .. } = event {
            let slot = match message.name.as_str() {
                "testFailed" => 0,
                "testIgnored" => 1,
                "testFinished" => 2,
                _ => return,
            };
            let id = message
                .get("nodeId")
                .expect("intellij messages carry nodeId")
                .to_string();
            assert!(sets[slot].insert(id), "{} twice for one node", message.name);
        }
    };
    parser.feed(stream, &mut take);
    parser.finish(&mut take);
    let [failed, ignored, finished] = sets.map(|s| s.len());
    Counts {
        failed,
        ignored,
        finished,
    }
}

fn json(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(fixture(name)).unwrap()).unwrap()
}

fn n(v: &Value, pointer: &str) -> usize {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0) as usize
}

/// What the report declares, mapped the documented way.
fn declared(name: &str) -> Counts {
    if name.ends_with(".xml") {
        return junit_declared(name);
    }
    let doc = json(name);
    match name {
        "jest.json" | "vitest.json" => {
            let files = doc["testResults"].as_array().unwrap();
            // Files that failed to run become one error pseudo-test each.
            let broken = files
                .iter()
                .filter(|f| f["assertionResults"].as_array().unwrap().is_empty())
                .count();
            Counts {
                failed: n(&doc, "/numFailedTests") + broken,
                ignored: n(&doc, "/numPendingTests") + n(&doc, "/numTodoTests"),
                finished: n(&doc, "/numTotalTests") + broken,
            }
        }
        "pytest-report.json" => {
            let collect_errors = doc["collectors"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["outcome"] == "failed")
                .count();
            Counts {
                failed: n(&doc, "/summary/failed") + n(&doc, "/summary/error") + collect_errors,
                ignored: n(&doc, "/summary/skipped") + n(&doc, "/summary/xfailed"),
                finished: n(&doc, "/summary/total") + collect_errors,
            }
        }
        "pytest-ctrf.json" => Counts {
            failed: n(&doc, "/results/summary/failed") + n(&doc, "/results/summary/other"),
            ignored: n(&doc, "/results/summary/skipped") + n(&doc, "/results/summary/pending"),
            finished: n(&doc, "/results/summary/tests"),
        },
        other => panic!("no count rule for {other}"),
    }
}

/// `tests`, `failures + errors`, `skipped` summed over the outermost `<testsuite>`s.
fn junit_declared(name: &str) -> Counts {
    let xml = std::fs::read_to_string(fixture(name)).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let (mut depth, mut counts) = (0, Counts::default());
    let mut add = |e: &quick_xml::events::BytesStart<'_>| {
        let get = |key: &str| -> usize {
            e.try_get_attribute(key)
                .ok()
                .flatten()
                .and_then(|a| String::from_utf8_lossy(&a.value).parse().ok())
                .unwrap_or(0)
        };
        counts.failed += get("failures") + get("errors");
        // gtest counts its DISABLED_ tests apart from skipped ones.
        counts.ignored += get("skipped") + get("disabled");
        counts.finished += get("tests");
    };
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) if e.name().as_ref() == b"testsuite" => {
                if depth == 0 {
                    add(&e);
                }
                depth += 1;
            }
            Event::Empty(e) if e.name().as_ref() == b"testsuite" && depth == 0 => add(&e),
            Event::End(e) if e.name().as_ref() == b"testsuite" => depth -= 1,
            Event::Eof => return counts,
            _ => {}
        }
    }
}

const SAMPLES: [&str; 14] = [
    "jest.json",
    "vitest.json",
    "vitest-junit.xml",
    "pytest-junit.xml",
    "pytest-junit-xunit1-logall.xml",
    "pytest-report.json",
    "pytest-ctrf.json",
    "jest-junit.xml",
    "surefire-nested.xml",
    "single-testsuite.xml",
    "unicode-cdata.xml",
    "gtest.xml",
    "phpunit.xml",
    "mocha-junit.xml",
];

#[test]
fn every_sample_gives_a_valid_stream_with_the_reports_counts() {
    for name in SAMPLES {
        let path = fixture(name);
        let out = convert(&[path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{name}: every sample has failures; {stderr}"
        );
        assert!(stderr.is_empty(), "{name}: {stderr}");
        let (code, report) = check(&out.stdout);
        assert_eq!(code, 0, "{name}: check says\n{report}");
        assert_eq!(stream_counts(&out.stdout), declared(name), "{name}");
    }
}

#[test]
fn all_samples_in_one_run_and_the_teamcity_dialect() {
    let paths: Vec<String> = SAMPLES
        .iter()
        .map(|s| fixture(s).to_string_lossy().into_owned())
        .collect();
    let mut args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let out = convert(&args);
    assert_eq!(out.status.code(), Some(1));
    let (code, report) = check(&out.stdout);
    assert_eq!(code, 0, "{report}");
    let total: usize = SAMPLES.iter().map(|s| declared(s).finished).sum();
    assert_eq!(stream_counts(&out.stdout).finished, total);

    args.extend(["--format", "teamcity"]);
    let out = convert(&args);
    assert_eq!(out.status.code(), Some(1));
    let (code, report) = check(&out.stdout);
    assert_eq!(code, 0, "{report}");
}

#[test]
fn a_passing_report_exits_zero() {
    let dir = scratch("pass");
    let path = dir.join("pass.xml");
    std::fs::write(
        &path,
        "<testsuite name='s'><testcase classname='a.B' name='ok' time='0.25'/></testsuite>",
    )
    .unwrap();
    let out = convert(&[path.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("testFinished") && text.contains("duration='250'"),
        "{text}"
    );
}

#[test]
fn suites_nested_fifty_thousand_deep_convert_in_both_dialects() {
    // Nothing stops a report from nesting suites this deep; a tree or a
    // reader that recursed per level overflowed its stack at about 5,000.
    const DEPTH: usize = 50_000;
    let dir = scratch("deep");
    let junit = dir.join("deep.xml");
    let mut xml = String::from("<testsuites>");
    for i in 0..DEPTH {
        xml.push_str(&format!("<testsuite name='s{i}'>"));
    }
    xml.push_str("<testcase classname='c' name='t'><failure message='no'/></testcase>");
    xml.push_str(&"</testsuite>".repeat(DEPTH));
    xml.push_str("</testsuites>");
    std::fs::write(&junit, xml).unwrap();
    let jest = dir.join("deep.json");
    let titles: Vec<String> = (0..DEPTH).map(|i| format!("d{i}")).collect();
    let report = serde_json::json!({
        "numTotalTests": 1,
        "testResults": [{
            "name": "/p/deep.test.js",
            "status": "failed",
            "assertionResults": [{
                "ancestorTitles": titles,
                "title": "t",
                "status": "failed",
                "failureMessages": ["Error: no"],
            }],
        }],
    });
    std::fs::write(&jest, report.to_string()).unwrap();
    // JUnit: the suites and the classname's; jest: the file and the describes.
    for path in [junit, jest] {
        for format in ["intellij", "teamcity"] {
            let what = format!("{} {format}", path.display());
            let out = convert(&["--format", format, path.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what}: {stderr}");
            let (code, report) = check(&out.stdout);
            assert_eq!(code, 0, "{what}: {report}");
            let expected = format!(
                "1 tests (0 passed, 1 failed, 0 ignored), {} suites",
                DEPTH + 1
            );
            assert!(report.contains(&expected), "{what}: {report}");
        }
    }
}

fn scratch(label: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("convert-{label}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn bad_inputs_give_their_code_one_line_and_keep_the_rest() {
    let dir = scratch("bad");
    let empty = dir.join("empty.json");
    std::fs::write(&empty, "").unwrap();
    let unknown = dir.join("notes.txt");
    std::fs::write(&unknown, "just some text\n").unwrap();
    let jest = std::fs::read(fixture("jest.json")).unwrap();
    let truncated_json = dir.join("truncated.json");
    std::fs::write(&truncated_json, &jest[..jest.len() * 2 / 3]).unwrap();
    // Cut inside the last file's entry: the three files before it are sent
    // (14 + 2 tests, and the pseudo-test of the file that failed to run).
    let last_file = String::from_utf8_lossy(&jest)
        .rfind("{\"assertionResults\"")
        .unwrap();
    let cut_json = dir.join("cut-in-last-file.json");
    std::fs::write(&cut_json, &jest[..last_file + 40]).unwrap();
    let xml = std::fs::read(fixture("pytest-junit.xml")).unwrap();
    let truncated_xml = dir.join("truncated.xml");
    let cut = String::from_utf8_lossy(&xml)
        .find("name=\"test_prints_to_stdout\"")
        .unwrap();
    std::fs::write(&truncated_xml, &xml[..cut]).unwrap();
    let missing = dir.join("missing.xml");
    let sub = dir.join("a-directory");
    std::fs::create_dir_all(&sub).unwrap();

    let good = fixture("vitest-junit.xml");
    let good_count = declared("vitest-junit.xml").finished;
    let cases: [(&Path, i32, &str, usize); 7] = [
        (&missing, NO_INPUT, "no such file", 0),
        (&sub, NO_INPUT, "is a directory", 0),
        (&empty, DATA_ERROR, "empty file", 0),
        (&unknown, DATA_ERROR, "unknown report format", 0),
        (&truncated_json, DATA_ERROR, "EOF while parsing", 0),
        (&cut_json, DATA_ERROR, "EOF while parsing", 17),
        // Cut inside the 11th test case's tag: ten complete cases before it.
        (&truncated_xml, DATA_ERROR, "tag not closed", 10),
    ];
    for (bad, code, problem, partial) in cases {
        let out = convert(&[
            good.to_str().unwrap(),
            bad.to_str().unwrap(),
            good.to_str().unwrap(),
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{}: {stderr}", bad.display());
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("tcrunner: {}: ", bad.display())),
            "{stderr}"
        );
        assert!(stderr.contains(problem), "{stderr}");
        let (check_code, report) = check(&out.stdout);
        assert_eq!(check_code, 0, "{}: {report}", bad.display());
        assert_eq!(
            stream_counts(&out.stdout).finished,
            2 * good_count + partial,
            "{}",
            bad.display()
        );
    }

    // A malformed report alone: what was read is still emitted and closed, and
    // the error points at the `<` of the cut tag.
    let out = convert(&[truncated_xml.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(DATA_ERROR));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(": line 37, column 55: "), "{stderr}");
    assert_eq!(stream_counts(&out.stdout).finished, 10);
    assert_eq!(check(&out.stdout).0, 0);

    // The worst input error wins over failed tests.
    let out = convert(&[
        good.to_str().unwrap(),
        empty.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(NO_INPUT));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 2);
}

/// `--input-format` reads the content as the format given, where it is
/// one: vitest's JSON shares jest's shape. Content of another format is
/// refused with one line naming both (exit 65), not read into a run with
/// no tests.
#[test]
fn input_format_overrides_detection() {
    let jest = fixture("jest.json");
    let out = convert(&["--input-format", "vitest-json", jest.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("testFailed"));
    for (format, message) in [
        ("pytest-json", "a jest-json report, not pytest-json"),
        ("junit", "a jest-json report, not junit"),
    ] {
        let out = convert(&["--input-format", format, jest.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(DATA_ERROR), "{format}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{format}: {stderr}");
        assert!(stderr.contains(message), "{format}: {stderr}");
    }
}

/// A failed test must not vanish for how its report item is written: a
/// `toEqual` on a linked list 200 nodes long nests `failureDetails` past
/// serde_json's limit of 128 levels, and a key written twice is legal JSON.
/// Both items were dropped, and the report converted clean with exit 0.
#[test]
fn deep_values_and_repeated_keys_keep_their_failed_tests() {
    let dir = scratch("deep");
    let list = format!("{}null{}", r#"{"next":"#.repeat(200), "}".repeat(200));
    let deep = format!(
        r#"{{"title":"compares a long list","status":"failed","failureMessages":["Error: expect(received).toEqual(expected)"],"failureDetails":[{{"matcherResult":{{"expected":{list},"actual":1}}}}]}}"#
    );
    let twice = r#"{"title":"writes a key twice","title":"writes a key twice","status":"failed","failureMessages":["Error: boom"]}"#;
    let passed = r#"{"title":"passes","status":"passed"}"#;
    let results = format!(
        r#"[{{"name":"/p/a.test.js","status":"failed","message":"","assertionResults":[{deep},{twice},{passed}]}}]"#
    );
    // Detected from its first bytes, and (its telling keys at the end) from
    // the whole parsed document.
    let early = format!(
        r#"{{"numTotalTestSuites":1,"numRuntimeErrorTestSuites":0,"testResults":{results}}}"#
    );
    let late =
        format!(r#"{{"testResults":{results},"numTotalTestSuites":1,"wasInterrupted":false}}"#);
    for (name, text) in [("early.json", early), ("late.json", late)] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let out = convert(&[path.to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        let counts = stream_counts(&out.stdout);
        assert_eq!((counts.failed, counts.finished), (2, 3), "{name}");
        assert_eq!(check(&out.stdout).0, 0, "{name}");
    }
}

/// The `testSuiteStarted` messages of a stream: each suite's name and, in
/// the intellij dialect, its parent's name.
fn suites_of(stream: &[u8]) -> Vec<(String, Option<String>)> {
    let mut names_by_id = std::collections::HashMap::new();
    let mut suites = Vec::new();
    let mut parser = Parser::new();
    let mut take = |event: ParseEvent| {
        if let ParseEvent::Message { message, .. } = event {
            if message.name == "testSuiteStarted" {
                let name = message.get("name").unwrap_or_default().to_string();
                let parent = message
                    .get("parentNodeId")
                    .and_then(|id| names_by_id.get(id).cloned());
                if let Some(id) = message.get("nodeId") {
                    names_by_id.insert(id.to_string(), name.clone());
                }
                suites.push((name, parent));
            }
        }
    };
    parser.feed(stream, &mut take);
    parser.finish(&mut take);
    suites
}

/// Surefire 3.0.0-M4 to 3.5.2 write a JUnit 5 `@Nested` class's cases
/// (`org.example.TestingAStackDemo$WhenNew`) in its outer class's suite:
/// the nested class is a suite directly in it, named as Surefire's `$`
/// names it below the outer class, not a package path `org > example`.
#[test]
fn surefire_nested_classes_are_suites_of_their_outer_class() {
    let path = fixture("surefire-nested-classes.xml");
    let outer = "org.example.TestingAStackDemo";
    for format in ["intellij", "teamcity"] {
        let out = convert(&["--format", format, path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{format}");
        assert_eq!(check(&out.stdout).0, 0, "{format}");
        let suites = suites_of(&out.stdout);
        let names: Vec<&str> = suites.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [outer, "WhenNew", "WhenNew$AfterPushing"],
            "{format}"
        );
        if format == "intellij" {
            assert!(suites[1..].iter().all(|(_, p)| p.as_deref() == Some(outer)));
        }
    }
}

/// `tcrunner convert ARGS…` with `input` on its stdin.
fn convert_piped(args: &[&str], input: &[u8]) -> Output {
    let mut all = vec!["convert"];
    all.extend_from_slice(args);
    let mut child = tcrunner(&all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tcrunner convert");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).expect("feed convert");
    drop(stdin);
    child.wait_with_output().expect("wait for convert")
}

/// `-` reads standard input, as `tcrunner check -` does (it was a missing
/// file named `-`, exit 66); beside files, and for every format.
#[test]
fn a_dash_reads_standard_input() {
    for name in ["jest.json", "vitest-junit.xml", "pytest-report.json"] {
        let report = std::fs::read(fixture(name)).unwrap();
        let out = convert_piped(&["-"], &report);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.is_empty(), "{name}: {stderr}");
        assert_eq!(check(&out.stdout).0, 0, "{name}");
        assert_eq!(stream_counts(&out.stdout), declared(name), "{name}");
    }
    let file = fixture("vitest-junit.xml");
    let report = std::fs::read(fixture("jest.json")).unwrap();
    let out = convert_piped(&[file.to_str().unwrap(), "-"], &report);
    assert_eq!(out.status.code(), Some(1));
    let finished = declared("vitest-junit.xml").finished + declared("jest.json").finished;
    assert_eq!(stream_counts(&out.stdout).finished, finished);
    // Problems name it.
    let out = convert_piped(&["-"], b"");
    assert_eq!(out.status.code(), Some(DATA_ERROR));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("tcrunner: standard input: "), "{stderr}");
}
