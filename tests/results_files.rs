//! `--ctrf` and `--junit-xml` on real runs of pytest, jest and vitest and
//! on `convert` of every sample report: each CTRF file validated by the
//! reference implementation (the npm package `ctrf`, from
//! `scripts/setup-node.sh`), each JUnit file read by an independent reader
//! (junitparser, in the pytest 9 venv of `scripts/setup-python.sh`) and
//! converted back by tcrunner into the same tree and verdicts; both
//! checked test by test, by full path, against the stream of the same run.
mod util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use tcrunner_protocol::{ParseEvent, Parser};
use util::{node_modules, tcrunner, Project, Run, Tcrunner};

const LIMIT: Duration = Duration::from_secs(180);

/// Verdicts by full path (names from the top of the tree, joined by
/// ` / `), several for a path that names several tests.
type Verdicts = BTreeMap<String, Vec<&'static str>>;

/// The verdict of every test of an intellij stream, by full path.
fn stream_verdicts(stream: &[u8]) -> Verdicts {
    let mut nodes: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut verdict: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut parser = Parser::new();
    let mut take = |event: ParseEvent| {
        let ParseEvent::Message { message, .. } = event else {
            return;
        };
        let id = || message.get("nodeId").unwrap_or_default().to_string();
        match message.name.as_str() {
            "testSuiteStarted" | "testStarted" => {
                let parent = message.get("parentNodeId").unwrap_or_default().to_string();
                let name = message.get("name").unwrap_or_default().to_string();
                nodes.insert(id(), (name, parent));
                if message.name == "testStarted" {
                    order.push(id());
                    verdict.insert(id(), "passed");
                }
            }
            "testFailed" => {
                verdict.insert(id(), "failed");
            }
            "testIgnored" => {
                verdict.insert(id(), "ignored");
            }
            _ => {}
        }
    };
    parser.feed(stream, &mut take);
    parser.finish(&mut take);
    let mut verdicts = Verdicts::new();
    for id in order {
        let mut names = Vec::new();
        let mut at = id.clone();
        while let Some((name, parent)) = nodes.get(&at) {
            names.push(name.clone());
            at = parent.clone();
        }
        names.reverse();
        verdicts
            .entry(names.join(" / "))
            .or_default()
            .push(verdict[&id]);
    }
    for list in verdicts.values_mut() {
        list.sort_unstable();
    }
    verdicts
}

/// The verdict of every test of a CTRF file, by full path (`suite` and
/// `name`): `passed`, `failed`, and `ignored` for the rest.
fn ctrf_verdicts(doc: &Value) -> Verdicts {
    let mut verdicts = Verdicts::new();
    for test in doc["results"]["tests"].as_array().unwrap() {
        let mut names: Vec<String> = test["suite"]
            .as_array()
            .map(|s| s.iter().map(|n| n.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        names.push(test["name"].as_str().unwrap().to_owned());
        let verdict = match test["status"].as_str().unwrap() {
            "passed" => "passed",
            "failed" => "failed",
            _ => "ignored",
        };
        verdicts.entry(names.join(" / ")).or_default().push(verdict);
    }
    for list in verdicts.values_mut() {
        list.sort_unstable();
    }
    verdicts
}

/// The `ctrf` package's `validate` on `path`: its result, as JSON.
fn ctrf_validate(path: &Path) -> Value {
    let dir = util::path("target/node/ctrf");
    assert!(
        dir.join("node_modules/ctrf").is_dir(),
        "target/node/ctrf missing: run `bash scripts/setup-node.sh`"
    );
    let script = "import { validate } from 'ctrf'; import { readFileSync } from 'node:fs'; \
        console.log(JSON.stringify(validate(JSON.parse(readFileSync(process.argv[1], 'utf8')))));";
    let out = Command::new("node")
        .current_dir(&dir)
        .args(["--input-type=module", "-e", script])
        .arg(path)
        .output()
        .expect("run node");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Asserts the `ctrf` package finds `path` valid; returns the document.
#[track_caller]
fn assert_valid_ctrf(path: &Path) -> Value {
    let result = ctrf_validate(path);
    assert_eq!(result["valid"], true, "{}: {result}", path.display());
    let doc = util::json(path);
    let tests = doc["results"]["tests"].as_array().unwrap();
    let summary = &doc["results"]["summary"];
    assert_eq!(summary["tests"], tests.len(), "summary.tests");
    for status in ["passed", "failed", "skipped", "pending", "other"] {
        let n = tests.iter().filter(|t| t["status"] == status).count();
        assert_eq!(summary[status], n, "summary.{status}");
    }
    doc
}

/// Every test case junitparser reads in `path`: (suite, classname, name,
/// result: `passed`, `failure`, `error` or `skipped`), and each suite's
/// declared counts checked against its cases.
fn junitparser_cases(path: &Path) -> Vec<[String; 4]> {
    let script = r#"
import json, sys
from junitparser import JUnitXml
cases = []
for suite in JUnitXml.fromfile(sys.argv[1]):
    kinds = []
    for case in suite:
        kind = type(case.result[0]).__name__.lower() if case.result else "passed"
        kinds.append(kind)
        cases.append([suite.name, case.classname, case.name, kind])
    declared = (suite.tests, suite.failures, suite.errors, suite.skipped)
    counted = (len(kinds), kinds.count("failure"), kinds.count("error"), kinds.count("skipped"))
    assert declared == counted, (suite.name, declared, counted)
print(json.dumps(cases))
"#;
    let out = Command::new(util::pytest9())
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "junitparser on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `tcrunner convert FILE` in the intellij dialect: its stream.
fn convert_stream(path: &Path) -> Vec<u8> {
    let out = tcrunner(&["convert", "--format", "intellij", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Checks both files of a run or conversion against its intellij stream.
#[track_caller]
fn assert_files_match(stream: &[u8], ctrf: &Path, junit: &Path, what: &str) {
    let verdicts = stream_verdicts(stream);
    assert!(!verdicts.is_empty(), "{what}: no tests in the stream");
    let doc = assert_valid_ctrf(ctrf);
    assert_eq!(ctrf_verdicts(&doc), verdicts, "{what}: CTRF verdicts");
    // tcrunner reads its CTRF back into the same verdicts too.
    let back = convert_stream(ctrf);
    assert_eq!(stream_verdicts(&back), verdicts, "{what}: CTRF round trip");
    // The JUnit file converts back into the same tree and verdicts.
    let back = convert_stream(junit);
    assert_eq!(stream_verdicts(&back), verdicts, "{what}: JUnit round trip");
    // An independent reader sees every test, with the same verdict.
    let cases = junitparser_cases(junit);
    let total: usize = verdicts.values().map(Vec::len).sum();
    assert_eq!(cases.len(), total, "{what}: junitparser's cases");
    let read = |kind: &str| cases.iter().filter(|c| c[3] == kind).count();
    let count = |verdict: &str| {
        verdicts
            .values()
            .flatten()
            .filter(|v| **v == verdict)
            .count()
    };
    assert_eq!(read("passed"), count("passed"), "{what}: passed");
    assert_eq!(
        read("failure") + read("error"),
        count("failed"),
        "{what}: failed"
    );
    assert_eq!(read("skipped"), count("ignored"), "{what}: skipped");
}

fn scratch(label: &str) -> PathBuf {
    let dir = util::path("target/tmp").join(util::unique(label));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `tcrunner ARGS --ctrf --junit-xml` (intellij stream) and checks
/// the files against the stream; returns the stream and the files.
fn run_with_files(args: &[String], what: &str) -> (Vec<u8>, PathBuf, PathBuf) {
    let dir = scratch("results");
    let (ctrf, junit) = (dir.join("ctrf.json"), dir.join("junit.xml"));
    let mut all: Vec<String> = args.to_vec();
    all.extend([
        "--format".into(),
        "intellij".into(),
        "--ctrf".into(),
        ctrf.to_string_lossy().into_owned(),
        "--junit-xml".into(),
        junit.to_string_lossy().into_owned(),
    ]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let live = tcrunner(&all).output().unwrap();
    assert_files_match(&live.stdout, &ctrf, &junit, what);
    (live.stdout, ctrf, junit)
}

fn js_args(name: &str) -> Vec<String> {
    let modules = node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"));
    let mut args = vec![
        "--project".to_owned(),
        modules.parent().unwrap().to_string_lossy().into_owned(),
    ];
    if name == "vitest5" {
        let node = util::node22().expect("target/node/node22 missing");
        args.extend(["--node".into(), node.to_string_lossy().into_owned()]);
    }
    args
}

#[test]
fn a_pytest_run_writes_both_files_truthfully() {
    let project = Project::copy("pytest");
    let args = vec![
        "--project".to_owned(),
        project.path().to_string_lossy().into_owned(),
        "--python".to_owned(),
        util::pytest9().to_string_lossy().into_owned(),
    ];
    let (_, ctrf, junit) = run_with_files(&args, "pytest");
    let doc = util::json(&ctrf);
    let tests = doc["results"]["tests"].as_array().unwrap();
    let by_name = |name: &str| {
        tests
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not in the CTRF file"))
    };
    assert_eq!(doc["results"]["tool"]["name"], "pytest");
    let inner = by_name("test_inner_fails");
    assert_eq!(
        inner["suite"],
        serde_json::json!(["tests", "unit", "test_classes.py", "TestOuter", "TestInner"])
    );
    assert_eq!(inner["status"], "failed");
    assert_eq!(inner["line"], 13);
    assert!(inner["filePath"]
        .as_str()
        .unwrap()
        .ends_with("tests/unit/test_classes.py"));
    assert!(inner["trace"].as_str().is_some_and(|t| !t.is_empty()));
    assert_eq!(by_name("test_type_error")["rawStatus"], "error");
    assert_eq!(by_name("test_xfail")["rawStatus"], "xfail");
    assert_eq!(by_name("test_xfail")["status"], "skipped");
    assert_eq!(by_name("test_xpass")["rawStatus"], "xpass");
    assert_eq!(by_name("test_xpass")["status"], "passed");
    let equality = by_name("test_int_equality");
    assert!(equality["extra"]["expected"].is_string(), "{equality}");
    assert!(by_name("test_tagged")["tags"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<testsuite name="tests/unit/test_classes.py" package="tests/unit" file="#)
    );
    assert!(xml.contains(r#"classname="tests/unit/test_classes.py" name="TestOuter &gt; TestInner &gt; test_inner_fails""#));
    assert!(xml.contains(r#"<skipped message="#));
    assert!(xml.contains(r#"type="pytest.xfail""#));
    assert!(xml.contains("<system-out>"));
}

/// `--collect-only`: the JUnit file holds every collected test as skipped
/// ("collected, not run"), each under its file's `<testsuite>` as in a run.
#[test]
fn a_collect_only_run_files_each_test_under_its_file() {
    let project = Project::copy("pytest");
    let dir = scratch("collect-only");
    let junit = dir.join("junit.xml");
    let run = Tcrunner::pytest(project.path())
        .args(["--collect-only", "--junit-xml", junit.to_str().unwrap()])
        .run(Duration::from_secs(120));
    // The fixture's broken import is a collection error, and its module
    // skip a skipped node, as in a run: both run live.
    run.assert_code(1);
    let declared = run.count(&["##teamcity[suiteTreeNode "]);
    let live = run.count(&["##teamcity[testStarted "]);
    let cases = junitparser_cases(&junit);
    assert!(declared > 5, "{}", run.describe());
    assert_eq!(cases.len(), declared + live, "{cases:?}");
    for [suite, classname, name, kind] in &cases {
        let expected = if name == "<collection error>" {
            "error"
        } else {
            "skipped"
        };
        assert_eq!(kind, expected, "{name}");
        assert_eq!(suite, classname, "{name}");
        assert!(suite.starts_with("tests/"), "{suite} holds {name}");
    }
    assert!(cases.iter().any(|c| c[0] == "tests/unit/test_classes.py"
        && c[2] == "TestOuter > TestInner > test_inner_fails"));
}

#[test]
fn jest_runs_write_both_files_truthfully() {
    for name in ["jest29", "jest30"] {
        let (_, ctrf, _) = run_with_files(&js_args(name), name);
        let doc = util::json(&ctrf);
        assert_eq!(doc["results"]["tool"]["name"], "jest");
        let todo = doc["results"]["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["rawStatus"] == "todo");
        assert_eq!(todo.map(|t| &t["status"]), Some(&Value::from("pending")));
    }
}

#[test]
fn vitest_runs_write_both_files_truthfully() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let (_, ctrf, _) = run_with_files(&js_args(name), name);
        assert_eq!(util::json(&ctrf)["results"]["tool"]["name"], "vitest");
    }
}

/// Every report tcrunner reads, from the fixtures and the reference
/// samples.
fn sample_reports() -> Vec<PathBuf> {
    let mut reports = Vec::new();
    for dir in [
        util::path("tests/fixtures/reports"),
        PathBuf::from("/work/shared/reference/samples"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy();
            if name.ends_with(".xml") || name.ends_with(".json") {
                reports.push(path);
            }
        }
    }
    reports.sort();
    assert!(reports.len() >= 17, "{reports:?}");
    reports
}

#[test]
fn converting_every_sample_report_writes_both_files_truthfully() {
    let dir = scratch("convert-files");
    for (i, report) in sample_reports().into_iter().enumerate() {
        let (ctrf, junit) = (dir.join(format!("{i}.json")), dir.join(format!("{i}.xml")));
        let out = tcrunner(&[
            "convert",
            "--format",
            "intellij",
            report.to_str().unwrap(),
            "--ctrf",
            ctrf.to_str().unwrap(),
            "--junit-xml",
            junit.to_str().unwrap(),
        ])
        .output()
        .unwrap();
        assert!(
            out.stderr.is_empty(),
            "{}: {}",
            report.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_files_match(&out.stdout, &ctrf, &junit, &report.display().to_string());
    }
}

#[test]
fn convert_merges_several_reports_into_one_file_of_each() {
    let dir = scratch("merge");
    let (ctrf, junit) = (dir.join("all.json"), dir.join("all.xml"));
    let reports = [
        util::path("tests/fixtures/reports/pytest-junit.xml"),
        util::path("tests/fixtures/reports/vitest.json"),
        util::path("tests/fixtures/reports/jest.json"),
    ];
    let mut args = vec!["convert"];
    args.extend(reports.iter().map(|r| r.to_str().unwrap()));
    args.extend([
        "--ctrf",
        ctrf.to_str().unwrap(),
        "--junit-xml",
        junit.to_str().unwrap(),
        "--format",
        "none",
    ]);
    let merged = tcrunner(&args).output().unwrap();
    assert!(merged.stdout.is_empty(), "--format none writes no stream");
    assert_eq!(merged.status.code(), Some(1), "the reports hold failures");
    // The same as the stream of converting them together.
    let mut args = vec!["convert", "--format", "intellij"];
    args.extend(reports.iter().map(|r| r.to_str().unwrap()));
    let stream = tcrunner(&args).output().unwrap().stdout;
    assert_files_match(&stream, &ctrf, &junit, "merged");
    let total: usize = reports
        .iter()
        .map(|r| {
            stream_verdicts(&convert_stream(r))
                .values()
                .map(Vec::len)
                .sum::<usize>()
        })
        .sum();
    assert_eq!(
        util::json(&ctrf)["results"]["summary"]["tests"],
        total,
        "every report's tests"
    );
}

#[test]
fn the_validator_and_the_round_trip_can_fail() {
    // The checks above would catch a file that is wrong.
    let dir = scratch("controls");
    let report = util::path("tests/fixtures/reports/pytest-junit.xml");
    let (ctrf, junit) = (dir.join("a.json"), dir.join("a.xml"));
    let _ = tcrunner(&[
        "convert",
        report.to_str().unwrap(),
        "--ctrf",
        ctrf.to_str().unwrap(),
        "--junit-xml",
        junit.to_str().unwrap(),
        "--format",
        "none",
    ])
    .output()
    .unwrap();
    let text = std::fs::read_to_string(&ctrf).unwrap();
    let broken = dir.join("broken.json");
    std::fs::write(
        &broken,
        text.replacen(r#""status":"failed""#, r#""status":"error""#, 1),
    )
    .unwrap();
    assert_eq!(ctrf_validate(&broken)["valid"], false);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let renamed = dir.join("renamed.xml");
    std::fs::write(&renamed, xml.replacen("TestInner", "TestOther", 1)).unwrap();
    assert_ne!(
        stream_verdicts(&convert_stream(&renamed)),
        stream_verdicts(&convert_stream(&report))
    );
}

/// A file named through a symbolic link is written at the link's target,
/// the link kept; a path that is no regular file (stdout, a pipe, a
/// device) takes the bytes as they come, never replaced by a file.
#[test]
fn a_link_or_a_special_file_is_written_through() {
    let dir = scratch("through");
    let report = sample_reports().into_iter().next().expect("a sample");
    std::fs::write(dir.join("target.xml"), "old").unwrap();
    std::os::unix::fs::symlink("target.xml", dir.join("link.xml")).unwrap();
    std::os::unix::fs::symlink("/proc/self/fd/1", dir.join("stdout.xml")).unwrap();
    let link = dir.join("link.xml");
    let stdout = dir.join("stdout.xml");
    let out = tcrunner(&[
        "convert",
        "--format",
        "none",
        "--junit-xml",
        link.to_str().unwrap(),
        "--ctrf",
        stdout.to_str().unwrap(),
        report.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let written = std::fs::read_to_string(dir.join("target.xml")).unwrap();
    assert!(written.starts_with("<?xml"), "{written}");
    assert!(std::fs::symlink_metadata(&stdout)
        .unwrap()
        .file_type()
        .is_symlink());
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.starts_with("{\"reportFormat\":\"CTRF\""),
        "{printed}"
    );
}

#[test]
fn an_unwritable_path_stops_before_anything_runs() {
    let project = Project::copy("pytest");
    // pytest loads a conftest.py at the project's root first thing.
    project.write("conftest.py", "open(__file__ + '.ran', 'w').close()\n");
    let ran = project.path().join("conftest.py.ran");
    for option in ["--ctrf", "--junit-xml"] {
        let path = project.path().join("no/such/dir/out");
        let run = tcrunner(&[
            "--project",
            project.path().to_str().unwrap(),
            "--python",
            util::pytest9().to_str().unwrap(),
            option,
            path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
        assert_eq!(run.status.code(), Some(74), "{option}");
        assert!(run.stdout.is_empty(), "{option}: nothing ran");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("tcrunner: {option} {}", path.display())),
            "{stderr}"
        );
        assert!(!ran.exists(), "{option}: pytest ran");
        let report = util::path("tests/fixtures/reports/jest.json");
        let convert = tcrunner(&[
            "convert",
            report.to_str().unwrap(),
            option,
            path.to_str().unwrap(),
        ])
        .output()
        .unwrap();
        assert_eq!(convert.status.code(), Some(74), "convert {option}");
        assert!(convert.stdout.is_empty());
    }
}

/// Two result files at one path would write over each other: refused
/// before anything runs, whichever way the path is spelt.
#[test]
fn two_outputs_naming_one_file_are_refused() {
    let project = Project::copy("pytest");
    project.write("conftest.py", "open(__file__ + '.ran', 'w').close()\n");
    let ran = project.path().join("conftest.py.ran");
    let path = project.path().join("out.json");
    let same = project.path().join("sub/../out.json");
    std::fs::create_dir(project.path().join("sub")).unwrap();
    let run = tcrunner(&[
        "--project",
        project.path().to_str().unwrap(),
        "--python",
        util::pytest9().to_str().unwrap(),
        "--json",
        path.to_str().unwrap(),
        "--ctrf",
        same.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(run.status.code(), Some(64));
    assert!(run.stdout.is_empty(), "nothing ran");
    assert!(!ran.exists(), "pytest ran");
    assert!(!path.exists(), "a file was written");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        stderr,
        format!("tcrunner: --json {}: --ctrf names it too\n", path.display())
    );
    let report = util::path("tests/fixtures/reports/jest.json");
    let convert = tcrunner(&[
        "convert",
        report.to_str().unwrap(),
        "--junit-xml",
        path.to_str().unwrap(),
        "--ctrf",
        path.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    assert_eq!(convert.status.code(), Some(64), "convert");
    assert!(convert.stdout.is_empty());
    assert!(!path.exists(), "convert wrote a file");
}

// --- whatever happens: crash, time limit, signal ------------------------------

fn fault_run(project: &Project, dir: &Path) -> Tcrunner {
    let mut tcrunner = Tcrunner::pytest(project.path());
    tcrunner
        .arg("--ctrf")
        .arg(dir.join("ctrf.json"))
        .arg("--junit-xml")
        .arg(dir.join("junit.xml"));
    tcrunner
}

/// The files after a run that ended badly: valid, and what the stream said.
fn assert_files_after(run: &util::Run, dir: &Path, what: &str) -> Value {
    let (ctrf, junit) = (dir.join("ctrf.json"), dir.join("junit.xml"));
    assert_files_match(&run.stdout, &ctrf, &junit, what);
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{what}: {leftovers:?}");
    util::json(&ctrf)
}

fn by_name<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["results"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in {doc}"))
}

#[test]
fn files_are_whole_and_truthful_after_a_crash() {
    let project = Project::copy("faults/pytest");
    let dir = scratch("crash");
    let run = fault_run(&project, &dir)
        .args(["--path", "test_exit.py"])
        .env("FAULT_HOW", "segv")
        .run(LIMIT);
    run.assert_code(71);
    let doc = assert_files_after(&run, &dir, "crash");
    assert_eq!(by_name(&doc, "test_before")["status"], "passed");
    let dies = by_name(&doc, "test_dies");
    assert_eq!(dies["rawStatus"], "error");
    assert!(dies["message"]
        .as_str()
        .unwrap()
        .contains("killed by signal 11"));
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(xml.contains("killed by signal 11 (SIGSEGV) during this test"));
    // The crash is the run's error too, once in each file, as in --json.
    let said = "pytest killed by signal 11 (SIGSEGV) during this test: test_exit.py::test_dies";
    let errors = &doc["results"]["extra"]["errors"];
    assert_eq!(errors, &serde_json::json!([said]), "{errors}");
    let property = format!("<property name=\"error\" value=\"{said}\"/>");
    assert_eq!(xml.matches(&property).count(), 1, "{xml}");
}

/// The files' run of `file`, whose tests find the files' folder in
/// `RESULT_DIR`, with `--json` there too.
fn run_touching_the_files(project: &Project, dir: &Path, file: &str) -> Run {
    fault_run(project, dir)
        .arg("--json")
        .arg(dir.join("result.json"))
        .env("RESULT_DIR", dir)
        .args(["--path", file])
        .run(LIMIT)
}

/// A test that replaces the files' temporary twins in their folder (one a
/// sandboxed run may write, `--writable`) forges nothing: what tcrunner
/// wrote goes in place, not what bears the temporary name at the end.
#[test]
fn files_replaced_while_the_run_goes_on_are_tcrunners_at_the_end() {
    let project = Project::copy("faults/pytest");
    let dir = scratch("swapped");
    project.write(
        "test_swaps.py",
        "import os\n\n\
         def test_swaps():\n\
         \x20   out = os.environ['RESULT_DIR']\n\
         \x20   for name in os.listdir(out):\n\
         \x20       path = os.path.join(out, name)\n\
         \x20       os.unlink(path)\n\
         \x20       with open(path, 'w') as f:\n\
         \x20           f.write('FOR' + 'GED')\n\
         \x20   assert False, 'really failed'\n",
    );
    let run = run_touching_the_files(&project, &dir, "test_swaps.py");
    run.assert_code(1);
    let doc = assert_files_after(&run, &dir, "swapped");
    assert_eq!(by_name(&doc, "test_swaps")["status"], "failed");
    let result = util::json(&dir.join("result.json"));
    assert_eq!(result["summary"]["failed"], 1, "{result}");
    for name in ["ctrf.json", "junit.xml", "result.json"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(!text.contains("FORGED"), "{name}: {text}");
    }
}

/// A test that removes the files' whole folder (cleaning up after itself):
/// the folder is made again at the end and every file is whole in it.
#[test]
fn files_whose_folder_a_test_removed_are_written_all_the_same() {
    let project = Project::copy("faults/pytest");
    let dir = scratch("folder-gone");
    project.write(
        "test_cleans_up.py",
        "import os, shutil\n\n\
         def test_cleans_up():\n\
         \x20   shutil.rmtree(os.environ['RESULT_DIR'])\n\n\
         def test_after():\n\
         \x20   pass\n",
    );
    let run = run_touching_the_files(&project, &dir, "test_cleans_up.py");
    run.assert_code(0);
    let doc = assert_files_after(&run, &dir, "folder removed");
    assert_eq!(by_name(&doc, "test_after")["status"], "passed");
    let result = util::json(&dir.join("result.json"));
    assert_eq!(result["summary"]["passed"], 2, "{result}");
}

#[test]
fn files_are_whole_and_truthful_after_a_time_limit() {
    let project = Project::copy("faults/pytest");
    let dir = scratch("timeout");
    let run = fault_run(&project, &dir)
        .args(["--session-timeout", "10", "--path", "test_slow.py"])
        .run(LIMIT);
    run.assert_code(124);
    let doc = assert_files_after(&run, &dir, "session timeout");
    assert_eq!(by_name(&doc, "test_quick")["status"], "passed");
    assert_eq!(by_name(&doc, "test_sleeps")["status"], "failed");
    // The run-level note, in both files.
    let extra = &doc["results"]["extra"];
    let said = "the session time limit of 10 s ran out";
    assert!(extra.to_string().contains(said), "{extra}");
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    assert!(xml.contains(said), "{xml}");
}

#[test]
fn files_are_whole_and_truthful_after_sigterm() {
    let project = Project::copy("faults/pytest");
    let dir = scratch("sigterm");
    let mut running = fault_run(&project, &dir)
        .args(["--path", "test_slow.py", "--grace-period", "30"])
        .spawn();
    running.wait_for("name='test_sleeps'", LIMIT);
    std::thread::sleep(Duration::from_millis(500));
    running.signal(libc::SIGTERM);
    let run = running.finish(LIMIT);
    run.assert_code(143);
    let doc = assert_files_after(&run, &dir, "sigterm");
    assert_eq!(by_name(&doc, "test_quick")["status"], "passed");
    let sleeps = by_name(&doc, "test_sleeps");
    assert_eq!(sleeps["rawStatus"], "stopped");
    assert_eq!(sleeps["status"], "other");
    // What it printed before the signal.
    assert_eq!(sleeps["stdout"], serde_json::json!(["going to sleep"]));
    let warnings = doc["results"]["extra"]["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("received signal")),
        "{warnings:?}"
    );
}

#[test]
fn files_are_whole_and_truthful_after_the_streams_reader_goes() {
    let project = Project::copy("faults/pytest");
    let dir = scratch("reader-gone");
    // As an IDE closing the pipe while a test runs: the run stops.
    let run = fault_run(&project, &dir)
        .args(["--path", "test_slow.py"])
        .run_closing_stdout_at("name='test_sleeps'", LIMIT);
    assert_eq!(run.code(), 141, "{}", run.describe());
    let (ctrf, junit) = (dir.join("ctrf.json"), dir.join("junit.xml"));
    let doc = assert_valid_ctrf(&ctrf);
    assert_eq!(by_name(&doc, "test_quick")["status"], "passed");
    assert_eq!(by_name(&doc, "test_sleeps")["rawStatus"], "stopped");
    assert!(!doc.to_string().contains("test_after"));
    // Both files tell the same story, which the stream could not finish.
    let from_junit = stream_verdicts(&convert_stream(&junit));
    assert_eq!(from_junit, ctrf_verdicts(&doc));
    assert_eq!(junitparser_cases(&junit).len(), 2);
}
