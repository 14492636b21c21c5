//! Tests of the command: exit codes, error lines, and robustness of every
//! reader against cut-off input.
use std::path::PathBuf;

use clap::Parser as _;

use super::*;
use crate::cli::{Config, RawArgs};
use crate::convert::testing::{events_of, sample, SAMPLES};

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/reports/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Runs `convert ARGS…`; returns the code, stdout and stderr.
fn convert(args: &[&str]) -> (i32, String, String) {
    let raw = RawArgs::try_parse_from(["tcrunner", "convert"].iter().chain(args)).unwrap();
    let Config::Convert(config) = Config::from_args(raw, None) else {
        panic!("not convert")
    };
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = run_with(&config, &mut out, &mut err).unwrap();
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

fn temp(name: &str, content: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tcrunner-convert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, content).unwrap();
    path
}

#[test]
fn every_sample_converts_with_failures() {
    for (name, _) in SAMPLES {
        let (code, out, err) = convert(&[&fixture(name)]);
        assert_eq!((code, err.as_str()), (exit::TESTS_FAILED, ""), "{name}");
        assert!(out.contains("testFailed"), "{name}: {out}");
    }
}

#[test]
fn passing_report_succeeds_and_input_format_overrides() {
    let path = temp(
        "pass.data",
        b"<testsuite name='s'><testcase name='ok' time='0.5'/></testsuite>",
    );
    let (code, out, err) = convert(&[path.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (exit::SUCCESS, ""));
    assert!(out.contains("name='ok'"), "{out}");
    let (code, _, err) = convert(&["--input-format", "junit", path.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (exit::SUCCESS, ""));
    let (code, out, err) = convert(&["--input-format", "ctrf", path.to_str().unwrap()]);
    assert_eq!(code, exit::DATA_ERROR);
    assert_eq!(
        err,
        format!(
            "tcrunner: {}: a junit report, not ctrf: leave --input-format out, or give junit\n",
            path.display()
        )
    );
    assert!(!out.contains("testStarted"), "{out}");
}

/// A format given that the content is not is refused (exit 65) rather than
/// read into an empty run: a report of another format, and a JSON document
/// with none of the format's keys. jest's and vitest's JSON read as each
/// other, as they share one shape.
#[test]
fn a_format_given_that_the_content_is_not_is_refused() {
    let refused = [
        ("jest.json", "ctrf", "a jest-json report, not ctrf"),
        (
            "jest.json",
            "pytest-json",
            "a jest-json report, not pytest-json",
        ),
        (
            "pytest-report.json",
            "ctrf",
            "a pytest-json report, not ctrf",
        ),
        (
            "pytest-report.json",
            "vitest-json",
            "a pytest-json report, not vitest-json",
        ),
        ("vitest.json", "events", "a vitest-json report, not events"),
    ];
    for (name, format, message) in refused {
        let (code, out, err) = convert(&["--input-format", format, &fixture(name)]);
        assert_eq!(code, exit::DATA_ERROR, "{name} as {format}: {err}");
        assert!(err.contains(message), "{name} as {format}: {err}");
        assert!(!out.contains("testStarted"), "{name} as {format}: {out}");
    }
    for (name, format) in [("jest.json", "vitest-json"), ("vitest.json", "jest-json")] {
        let (code, out, _) = convert(&["--input-format", format, &fixture(name)]);
        assert_eq!(code, exit::TESTS_FAILED, "{name} as {format}");
        assert!(out.contains("testFailed"), "{name} as {format}");
    }
    // Keys that come late leave the prefix undecided: the whole document
    // decides, and a document of no format names the key it lacks.
    let late = format!("{{\"padding\": \"{}\", \"a\": 1}}", "x".repeat(20_000));
    let path = temp("late.json", late.as_bytes());
    for (format, key) in [
        ("ctrf", "results"),
        ("jest-json", "testResults"),
        ("vitest-json", "testResults"),
        ("pytest-json", "tests"),
    ] {
        let (code, _, err) = convert(&["--input-format", format, path.to_str().unwrap()]);
        assert_eq!(code, exit::DATA_ERROR, "{format}: {err}");
        assert!(
            err.contains(&format!("no `{key}` key, so not a {format} report")),
            "{format}: {err}"
        );
    }
    let late = format!(
        "{{\"padding\": \"{}\", \"tests\": [], \"collectors\": []}}",
        "x".repeat(20_000)
    );
    let path = temp("late-pytest.json", late.as_bytes());
    let (code, _, err) = convert(&["--input-format", "ctrf", path.to_str().unwrap()]);
    assert_eq!(code, exit::DATA_ERROR, "{err}");
    assert!(err.contains("a pytest-json report, not ctrf"), "{err}");
}

#[test]
fn bad_files_do_not_stop_the_others() {
    let dir = std::env::temp_dir();
    let empty = temp("empty.xml", b"");
    let unknown = temp("unknown.txt", b"hello, not a report\n");
    let json = std::fs::read(fixture("jest.json")).unwrap();
    let truncated = temp("truncated.json", &json[..json.len() / 2]);
    let cases: [(&str, i32, String); 5] = [
        (
            "/definitely/missing.xml",
            exit::NO_INPUT,
            "no such file".into(),
        ),
        (
            dir.to_str().unwrap(),
            exit::NO_INPUT,
            "is a directory".into(),
        ),
        (
            empty.to_str().unwrap(),
            exit::DATA_ERROR,
            "empty file".into(),
        ),
        (
            unknown.to_str().unwrap(),
            exit::DATA_ERROR,
            "unknown report format (expected one of: junit".into(),
        ),
        (
            truncated.to_str().unwrap(),
            exit::DATA_ERROR,
            "EOF while parsing".into(),
        ),
    ];
    let good = fixture("vitest-junit.xml");
    for (bad, expected_code, problem) in cases {
        let (code, out, err) = convert(&[&good, bad, &good]);
        assert_eq!(code, expected_code, "{bad}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("tcrunner: {bad}: ")), "{err}");
        assert!(err.contains(&problem), "{err}");
        // Both good copies were emitted in full.
        assert_eq!(out.matches("name='slow 3'").count(), 2, "{bad}");
    }
    // The worst input error wins.
    let (code, _, err) = convert(&[empty.to_str().unwrap(), "/definitely/missing.xml"]);
    assert_eq!((code, err.lines().count()), (exit::NO_INPUT, 2));
}

#[test]
fn truncated_xml_keeps_what_was_read() {
    let xml = std::fs::read(fixture("vitest-junit.xml")).unwrap();
    let cut = String::from_utf8_lossy(&xml)
        .find("name=\"other file passes\"")
        .unwrap();
    let path = temp("cut.xml", &xml[..cut]);
    let (code, out, err) = convert(&[path.to_str().unwrap()]);
    assert_eq!(code, exit::DATA_ERROR);
    // The cut is inside the tag that opens on line 121.
    assert!(err.contains(": line 121, column 9: "), "{err}");
    assert!(out.contains("setup throws in beforeAll"), "{out}");
}

/// Every sample cut at every 97th byte and at each of its last 64 bytes gives
/// events or a read error, never a panic.
#[test]
fn readers_survive_truncation() {
    for (name, format) in SAMPLES {
        let bytes = sample(name);
        let len = bytes.len();
        let cuts = (0..len).step_by(97).chain(len.saturating_sub(64)..=len);
        for cut in cuts {
            let input = &bytes[..cut];
            match events_of(|out| read(format, input, out)) {
                Ok(_) => {}
                Err((_, ReadError::Malformed { .. })) => {}
                Err((_, other)) => panic!("{name} cut at {cut}: {other}"),
            }
        }
    }
}

#[test]
fn readers_survive_garbage() {
    let inputs: [&[u8]; 6] = [
        b"",
        b"\xff\xfe\x00\x01binary",
        b"{\"testResults\": 5, \"tests\": \"x\", \"results\": []}",
        b"{\"testResults\": [{\"assertionResults\": [1, {\"status\": 7, \"duration\": \"fast\"}]}]}",
        b"{\"tests\": [{\"nodeid\": 1, \"call\": [], \"setup\": {\"longrepr\": {}}}], \"collectors\": {}}",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    ];
    for input in inputs {
        for (_, format) in SAMPLES {
            let _ = events_of(|out| read(format, input, out));
        }
    }
}

#[test]
fn a_utf8_byte_order_mark_is_skipped() {
    let json = std::fs::read(fixture("jest.json")).unwrap();
    let bom = temp("bom.json", &[b"\xEF\xBB\xBF", &json[..]].concat());
    let (code, out, err) = convert(&[bom.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (exit::TESTS_FAILED, ""));
    assert!(out.contains("testFailed"), "{out}");
}

#[test]
fn utf16_reports_get_a_clear_error() {
    let xml = "<testsuite name='s'><testcase name='t'/></testsuite>";
    let le: Vec<u8> = xml.encode_utf16().flat_map(u16::to_le_bytes).collect();
    let with_bom = temp("bom16.xml", &[b"\xFF\xFE", &le[..]].concat());
    let without_bom = temp("plain16.xml", &le);
    for path in [with_bom, without_bom] {
        let (code, out, err) = convert(&[path.to_str().unwrap()]);
        assert_eq!(code, exit::DATA_ERROR);
        assert!(
            err.contains("UTF-16 text: convert the report to UTF-8"),
            "{err}"
        );
        assert!(!out.contains("testStarted"), "{out}");
    }
    // UTF-8 text is not mistaken for it.
    let utf8 = temp("utf8.xml", xml.as_bytes());
    assert_eq!(convert(&[utf8.to_str().unwrap()]).0, exit::SUCCESS);
}

/// Reports that hold no test exit 5, as a run that collected none, with
/// one line saying so; beside a report with tests they change nothing.
#[test]
fn reports_without_tests_exit_as_a_run_that_collected_none() {
    let empty = [
        temp("no-tests.xml", b"<testsuites/>"),
        temp(
            "no-tests-jest.json",
            br#"{"numTotalTestSuites": 0, "numRuntimeErrorTestSuites": 0, "testResults": []}"#,
        ),
        temp(
            "no-tests.ctrf.json",
            br#"{"reportFormat": "CTRF", "results": {"tool": {"name": "x"}, "tests": []}}"#,
        ),
    ];
    for path in &empty {
        let (code, _, err) = convert(&[path.to_str().unwrap()]);
        assert_eq!(code, exit::NO_TESTS, "{}: {err}", path.display());
        assert_eq!(err, "tcrunner: no tests in the reports\n");
    }
    // Under a pass policy it is a run that failed as a whole.
    let (code, _, _) = convert(&["--pass-policy", "all", empty[0].to_str().unwrap()]);
    assert_eq!(code, exit::INFRASTRUCTURE);
    let passing = temp(
        "one-test.xml",
        b"<testsuite name='s'><testcase name='ok'/></testsuite>",
    );
    let (code, _, err) = convert(&[empty[0].to_str().unwrap(), passing.to_str().unwrap()]);
    assert_eq!((code, err.as_str()), (exit::SUCCESS, ""));
}
