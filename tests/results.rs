//! `--json`, groups, scenario ids and pass policies (docs/results.md), on
//! real pytest, jest and vitest runs and on `convert`; every result file is
//! checked against docs/result.schema.json.
mod util;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use util::{output, tcrunner, Project, Tcrunner};

/// Checks `result` against the JSON Schema in the repository.
fn assert_valid(result: &Value) {
    let schema_path = util::path("docs/result.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    let url = "file:///result.schema.json";
    compiler.add_resource(url, schema).unwrap();
    let index = compiler.compile(url, &mut schemas).unwrap();
    if let Err(error) = schemas.validate(result, index) {
        panic!("not valid against the schema: {error:#}\n{result:#}");
    }
}

/// Reads and validates a result file.
fn result(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap();
    assert_valid(&value);
    value
}

fn test<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no test {name} in {result:#}"))
}

fn json_path(project: &Path) -> PathBuf {
    project.join("result.json")
}

/// Runs the grading fixture with `args`; returns the exit code and result.
fn graded(project: &Project, args: &[&str]) -> (i32, Value) {
    let path = json_path(project.path());
    let _ = std::fs::remove_file(&path);
    let run = Tcrunner::pytest(project.path())
        .args(["--format", "none", "--json"])
        .arg(&path)
        .args(args)
        .run(Duration::from_secs(60));
    assert!(run.stdout.is_empty(), "--format none: {}", run.text());
    (run.code(), result(&path))
}

#[test]
fn pytest_json_result_has_every_field() {
    let project = Project::copy("pytest-grading");
    let (code, result) = graded(&project, &["--current", "test_checkpoint_2.py"]);
    assert_eq!(code, 1, "framework policy: tests failed");
    assert_eq!(
        result["summary"],
        serde_json::json!({"total": 8, "passed": 5, "failed": 1, "errors": 1, "skipped": 1,
            "duration_ms": result["summary"]["duration_ms"]})
    );
    let core = test(&result, "test_core_passes");
    assert_eq!(core["id"], "tests/test_checkpoint_2.py::test_core_passes");
    assert_eq!(
        core["suite"],
        serde_json::json!(["tests", "test_checkpoint_2.py"])
    );
    assert!(core["file"]
        .as_str()
        .unwrap()
        .ends_with("/tests/test_checkpoint_2.py"));
    assert_eq!(core["line"], 6);
    assert_eq!(core["status"], "passed");
    assert_eq!(core["stdout"], "core says hi\n");
    assert_eq!(core["tags"], serde_json::json!(["scenario(s1)"]));
    assert_eq!(core["scenario"], "s1");
    assert_eq!(core["group"], "CORE");
    assert_eq!(
        test(&result, "test_s7_core_also_passes")["stderr"],
        "to stderr\n"
    );
    let feature = test(&result, "test_feature_fails");
    assert_eq!(feature["status"], "failed");
    assert_eq!(feature["group"], "FUNCTIONALITY");
    assert!(
        feature["message"].as_str().unwrap().contains("assert"),
        "{feature}"
    );
    assert!(feature["details"].as_str().is_some());
    let edge = test(&result, "test_edge_fails");
    assert_eq!(edge["status"], "error", "an exception, not an assertion");
    assert_eq!(edge["tags"], serde_json::json!(["error(bad input)"]));
    assert_eq!(edge["group"], "ERROR");
    let skipped = test(&result, "test_feature_skipped");
    assert_eq!(
        (&skipped["status"], &skipped["raw_status"]),
        (&"skipped".into(), &"skipped".into())
    );
    assert_eq!(test(&result, "test_prior_passes")["group"], "REGRESSION");
    assert_eq!(
        test(&result, "test_regression_passes")["group"],
        "REGRESSION"
    );
    // Without --group, a custom marker is only a tag.
    assert_eq!(test(&result, "test_slow_passes")["group"], "CORE");
    assert_eq!(
        result["groups"]["REGRESSION"],
        serde_json::json!({"total": 2, "passed": 2, "failed": 0, "errors": 0, "skipped": 0})
    );
    assert_eq!(result["errors"], serde_json::json!([]));
    let run = &result["run"];
    assert_eq!(run["framework"], "pytest");
    assert_eq!(run["version"], "9.2.0");
    assert_eq!(run["exit_code"], 1);
    assert_eq!(run["pass_policy"], "framework");
    assert_eq!(run["policy_met"], Value::Null);
    assert_eq!(run["infrastructure_failure"], false);
    let command = run["command"].as_array().unwrap();
    assert!(command.iter().any(|a| a == "pytest"), "{command:?}");
}

#[test]
fn groups_scenarios_and_every_pass_policy() {
    let project = Project::copy("pytest-grading");
    let base = [
        "--current",
        "tests/test_checkpoint_2.py",
        "--group",
        "slow=SLOW",
        "--scenario-id",
        r"test_(s\d+)_",
    ];
    let ctrf = project.path().join("result.ctrf.json");
    let mut with_ctrf: Vec<&str> = base.to_vec();
    with_ctrf.extend(["--ctrf", ctrf.to_str().unwrap()]);
    let (_, result) = graded(&project, &with_ctrf);
    assert_eq!(test(&result, "test_slow_passes")["group"], "SLOW");
    // CTRF carries the same tally by group.
    let ctrf: Value = serde_json::from_slice(&std::fs::read(&ctrf).unwrap()).unwrap();
    assert_eq!(ctrf["results"]["extra"]["groups"], result["groups"]);
    // A marker's scenario wins over the id's; the id's is used otherwise.
    assert_eq!(test(&result, "test_core_passes")["scenario"], "s1");
    assert_eq!(test(&result, "test_s7_core_also_passes")["scenario"], "s7");
    assert_eq!(test(&result, "test_feature_fails")["scenario"], Value::Null);
    assert_eq!(result["groups"]["SLOW"]["passed"], 1);
    // (policy, -k selection, exit code): each policy met and not met.
    let cases = [
        ("framework", None, 1),
        ("all", None, 1),
        ("all", Some("not feature and not edge"), 0),
        ("core", None, 0),
        ("core", Some("feature"), 1),
        ("all-but-error", None, 1),
        ("all-but-error", Some("not feature"), 0),
        ("any", None, 0),
        ("any", Some("feature or edge"), 1),
    ];
    for (policy, selection, expected) in cases {
        let mut args: Vec<&str> = base.to_vec();
        args.extend(["--pass-policy", policy]);
        if let Some(selection) = selection {
            args.extend(["--", "-k", selection]);
        }
        let (code, result) = graded(&project, &args);
        assert_eq!(code, expected, "{policy} {selection:?}");
        assert_eq!(result["run"]["exit_code"], expected);
        assert_eq!(result["run"]["pass_policy"], policy);
        let met = (policy != "framework").then_some(expected == 0);
        assert_eq!(
            result["run"]["policy_met"],
            serde_json::json!(met),
            "{policy}"
        );
    }
}

/// `--collect-only --json` lists every collected test, with no verdict
/// (`status` null, `raw_status` `collected`), counted in no summary: the
/// same tests the CTRF and JUnit files list.
#[test]
fn a_collect_only_result_lists_the_collected_tests_without_a_verdict() {
    let project = Project::copy("pytest-grading");
    let (code, result) = graded(&project, &["--collect-only"]);
    assert_eq!(code, 0, "{result:#}");
    let tests = result["tests"].as_array().unwrap();
    let (run_code, full) = graded(&project, &[]);
    assert_eq!(run_code, 1);
    assert_eq!(tests.len(), full["tests"].as_array().unwrap().len());
    for test in tests {
        assert_eq!(test["status"], Value::Null, "{test}");
        assert_eq!(test["raw_status"], "collected", "{test}");
    }
    assert_eq!(result["summary"]["total"], 0);
    assert!(test(&result, "test_core_passes")["group"].is_string());
}

#[test]
fn teamcity_dialect_reports_group_statistics() {
    let project = Project::copy("pytest-grading");
    let run = Tcrunner::pytest(project.path())
        .args(["--format", "teamcity", "--pass-policy", "core"])
        .run(Duration::from_secs(60));
    assert_eq!(run.code(), 0);
    let messages = run.messages();
    let stats: Vec<&String> = messages
        .iter()
        .filter(|m| m.starts_with("##teamcity[buildStatisticValue"))
        .collect();
    assert!(
        stats.contains(
            &&"##teamcity[buildStatisticValue key='tcrunner.group.CORE.passed' value='4']"
                .to_owned()
        ),
        "{stats:#?}"
    );
    assert!(stats.contains(
        &&"##teamcity[buildStatisticValue key='tcrunner.group.ERROR.total' value='1']".to_owned()
    ));
    // Not graded: no statistics, the stream as before.
    let plain = Tcrunner::pytest(project.path())
        .args(["--format", "teamcity"])
        .run(Duration::from_secs(60));
    assert!(!plain.text().contains("buildStatisticValue"));
}

#[test]
fn strict_markers_accept_the_group_markers() {
    // The fixture runs with --strict-markers; a marker nobody registered
    // still fails collection, so the check is live.
    let project = Project::copy("pytest-grading");
    project.write(
        "tests/test_unknown_marker.py",
        "import pytest\n\n@pytest.mark.unheard_of\ndef test_x():\n    pass\n",
    );
    let (code, result) = graded(&project, &["--pass-policy", "any"]);
    assert_eq!(code, 75, "a collection error is an infrastructure failure");
    let errors = result["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["kind"], "collection");
    assert!(errors[0]["message"]
        .as_str()
        .unwrap()
        .contains("test_unknown_marker.py"));
    assert_eq!(result["run"]["infrastructure_failure"], true);
    // Tests passed, which `any` asks for; still no policy passes it.
    assert_eq!(result["run"]["policy_met"], false);
    // The registered markers themselves collected fine.
    assert_eq!(test(&result, "test_edge_fails")["group"], "ERROR");
}

#[test]
fn a_crash_leaves_a_truthful_file() {
    let project = Project::copy("pytest-grading");
    project.write(
        "tests/test_crash.py",
        "import os, signal\n\ndef test_dies():\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    );
    let (code, result) = graded(&project, &[]);
    assert_eq!(code, 71, "framework policy: the crash's own code");
    assert_eq!(result["errors"][0]["kind"], "crash");
    let dies = test(&result, "test_dies");
    assert_eq!(dies["status"], "error");
    assert_eq!(result["run"]["exit_code"], 71);
    let (code, result) = graded(&project, &["--pass-policy", "core"]);
    assert_eq!(
        code, 75,
        "an infrastructure failure whatever the groups say"
    );
    assert_eq!(result["run"]["exit_code"], 75);
}

#[test]
fn a_session_timeout_leaves_a_truthful_file() {
    let project = Project::copy("pytest-grading");
    project.write(
        "tests/test_slow.py",
        "import time\n\ndef test_sleeps():\n    time.sleep(60)\n",
    );
    let (code, result) = graded(
        &project,
        &[
            "--session-timeout",
            "10",
            "--grace-period",
            "1",
            "--pass-policy",
            "any",
        ],
    );
    assert_eq!(code, 75);
    assert_eq!(result["errors"][0]["kind"], "timeout");
    let sleeps = test(&result, "test_sleeps");
    assert_eq!(sleeps["status"], "error");
    assert!(
        sleeps["message"].as_str().unwrap().contains("timed out"),
        "{sleeps}"
    );
    // What ran before the limit is there.
    assert_eq!(test(&result, "test_prior_passes")["status"], "passed");
}

#[test]
fn a_framework_that_never_starts_is_an_infrastructure_failure() {
    let project = Project::copy("pytest-grading");
    let path = json_path(project.path());
    let run = Tcrunner::new(project.path())
        .args([
            "--framework",
            "pytest",
            "--python",
            "/bin/false",
            "--format",
            "none",
        ])
        .args(["--pass-policy", "all", "--json"])
        .arg(&path)
        .run(Duration::from_secs(60));
    assert_eq!(run.code(), 75, "{}", run.stderr);
    let result = result(&path);
    assert_eq!(result["errors"][0]["kind"], "not_started");
    assert_eq!(result["run"]["framework"], "pytest");
    assert_eq!(result["run"]["version"], Value::Null);
}

#[test]
fn an_unwritable_json_path_stops_before_the_run() {
    let project = Project::copy("pytest-grading");
    let run = Tcrunner::pytest(project.path())
        .args(["--json", "/nonexistent-dir/result.json"])
        .run(Duration::from_secs(60));
    assert_eq!(run.code(), 74);
    // One line, naming the option, the path and the reason once.
    assert_eq!(
        run.stderr.trim_end(),
        "tcrunner: --json /nonexistent-dir/result.json: cannot write: \
         No such file or directory (os error 2)",
    );
    assert!(!run.text().contains("testStarted"), "nothing ran");
}

fn js_project(name: &str) -> Project {
    let modules = util::node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"));
    let fixture = if name.starts_with("jest") {
        "jest"
    } else {
        "vitest"
    };
    Project::copy(fixture).link_node_modules(&modules)
}

fn js_run(name: &str, project: &Project) -> (i32, Value) {
    let path = json_path(project.path());
    let mut command = Tcrunner::new(project.path());
    command.args(["--format", "none", "--json"]).arg(&path);
    if name == "vitest5" {
        command.arg("--node").arg(util::node22().unwrap());
    }
    let run = command.run(Duration::from_secs(120));
    (run.code(), result(&path))
}

#[test]
fn jest_and_vitest_results_with_title_tags() {
    for name in ["jest30", "vitest4", "vitest5"] {
        let project = js_project(name);
        let (file, body) = if name.starts_with("jest") {
            ("tagged.test.js", "")
        } else {
            (
                "tagged.test.ts",
                "import { describe, it, expect } from 'vitest';\n",
            )
        };
        project.write(
            file,
            &format!(
                "{body}describe('parser @functionality @scenario(s1)', () => {{\n  it('rejects input @error @scenario(s9)', () => {{ expect(1).toBe(2); }});\n  it('reads input', () => {{ expect(1).toBe(1); }});\n}});\n"
            ),
        );
        let (code, result) = js_run(name, &project);
        assert_eq!(code, 1, "{name}: the fixture has failing tests");
        let rejects = test(&result, "rejects input @error @scenario(s9)");
        assert_eq!(
            rejects["tags"],
            serde_json::json!(["error", "scenario(s9)", "functionality", "scenario(s1)"]),
            "{name}"
        );
        assert_eq!(rejects["group"], "ERROR", "{name}");
        // The nearest scenario is the test's, as for pytest's markers.
        assert_eq!(rejects["scenario"], "s9", "{name}");
        assert_eq!(test(&result, "reads input")["scenario"], "s1", "{name}");
        assert_eq!(rejects["status"], "failed", "{name}");
        assert!(rejects["expected"].is_string(), "{name}: {rejects}");
        assert_eq!(
            rejects["suite"].as_array().unwrap().last().unwrap(),
            "parser @functionality @scenario(s1)"
        );
        assert_eq!(
            test(&result, "reads input")["group"],
            "FUNCTIONALITY",
            "{name}"
        );
        let framework = if name.starts_with("jest") {
            "jest"
        } else {
            "vitest"
        };
        assert_eq!(result["run"]["framework"], framework);
        assert!(result["run"]["version"].is_string(), "{name}");
        let total = result["summary"]["total"].as_u64().unwrap();
        assert_eq!(total as usize, result["tests"].as_array().unwrap().len());
    }
}

#[test]
fn a_js_file_that_cannot_load_is_a_collection_error() {
    for name in ["jest30", "vitest4"] {
        let project = js_project(name);
        let file = if name.starts_with("jest") {
            "broken.test.js"
        } else {
            "broken.test.ts"
        };
        project.write(file, "describe('never', () => {\n  it('x', () => {\n");
        let path = json_path(project.path());
        let mut command = Tcrunner::new(project.path());
        command.args(["--format", "none", "--json"]).arg(&path);
        command.args(["--pass-policy", "all"]);
        let run = command.run(Duration::from_secs(120));
        let result = result(&path);
        assert_eq!(
            run.code(),
            75,
            "{name}: a file that cannot load is an infrastructure failure"
        );
        let errors = result["errors"].as_array().unwrap();
        // The fixture has a file that fails to import already: each file
        // that cannot load is its own collection error.
        let ours: Vec<&str> = (errors.iter())
            .filter(|e| e["kind"] == "collection")
            .filter_map(|e| e["message"].as_str())
            .filter(|m| m.contains(file))
            .collect();
        assert_eq!(ours.len(), 1, "{name}: {errors:?}");
        assert!(
            ours[0].starts_with("cannot collect "),
            "{name}: {}",
            ours[0]
        );
        assert!(
            errors.iter().all(|e| e["kind"] == "collection"),
            "{name}: nothing else went wrong: {errors:?}"
        );
        assert_eq!(result["run"]["infrastructure_failure"], true, "{name}");
    }
}

#[test]
fn convert_writes_the_result_of_every_sample_format() {
    let reports = util::path("tests/fixtures/reports");
    let mut seen = 0;
    for entry in std::fs::read_dir(&reports).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let dir = util::path("target/tmp").join(util::unique("convert-json"));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("result.json");
        let run = output(&mut tcrunner(&[
            "convert",
            "--format",
            "none",
            "--json",
            out.to_str().unwrap(),
            path.to_str().unwrap(),
        ]));
        let result = result(&out);
        assert!(run.stdout.is_empty());
        assert_eq!(result["run"]["framework"], Value::Null);
        assert_eq!(result["run"]["exit_code"], run.status.code().unwrap());
        let tests = result["tests"].as_array().unwrap();
        assert_eq!(
            result["summary"]["total"].as_u64().unwrap() as usize,
            tests.len()
        );
        if run.status.code() == Some(65) {
            assert_eq!(result["errors"][0]["kind"], "input", "{}", path.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
        seen += 1;
    }
    assert!(seen >= 5, "{seen} sample reports");
}

#[test]
fn convert_of_a_recorded_run_keeps_tags_and_groups() {
    let project = Project::copy("pytest-grading");
    let recording = project.path().join("run.jsonl");
    let run = Tcrunner::pytest(project.path())
        .args(["--format", "none", "--events-out"])
        .arg(&recording)
        .run(Duration::from_secs(60));
    assert_eq!(run.code(), 1);
    let out = project.path().join("converted.json");
    let converted = output(&mut tcrunner(&[
        "convert",
        "--format",
        "none",
        "--pass-policy",
        "core",
        "--json",
        out.to_str().unwrap(),
        recording.to_str().unwrap(),
    ]));
    assert_eq!(converted.status.code(), Some(0), "core passed");
    let result = result(&out);
    assert_eq!(test(&result, "test_edge_fails")["group"], "ERROR");
    assert_eq!(result["groups"]["CORE"]["total"], 4);
    assert_eq!(result["run"]["policy_met"], true);
    assert_eq!(result["run"]["version"], "9.2.0", "the recording's hello");
}

#[test]
fn a_sigterm_leaves_a_truthful_file() {
    let project = Project::copy("pytest-grading");
    project.write(
        "tests/test_slow.py",
        "import time\n\ndef test_sleeps():\n    time.sleep(60)\n",
    );
    let path = json_path(project.path());
    let mut running = Tcrunner::pytest(project.path())
        .args(["--format", "teamcity", "--pass-policy", "core", "--json"])
        .arg(&path)
        .spawn();
    running.wait_for("testStarted name='test_sleeps'", Duration::from_secs(60));
    running.signal(libc::SIGTERM);
    let run = running.finish(Duration::from_secs(60));
    assert_eq!(
        run.code(),
        75,
        "graded: an interrupted run is an infrastructure failure"
    );
    let result = result(&path);
    assert_eq!(
        result["errors"][0]["kind"], "interrupted",
        "{}",
        result["errors"]
    );
    assert!(result["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("SIGTERM"));
    assert_eq!(result["run"]["exit_code"], 75);
    assert_eq!(test(&result, "test_sleeps")["status"], "error");
    assert_eq!(test(&result, "test_prior_passes")["status"], "passed");
}

#[test]
fn the_file_is_written_when_the_reader_of_stdout_goes_away() {
    let project = Project::copy("pytest-grading");
    let path = json_path(project.path());
    let run = Tcrunner::pytest(project.path())
        .args(["--format", "teamcity", "--json"])
        .arg(&path)
        .run_closing_stdout_at("testStarted", Duration::from_secs(60));
    assert_eq!(run.code(), 141);
    let result = result(&path);
    assert_eq!(
        result["errors"][0]["kind"], "output_gone",
        "{}",
        result["errors"]
    );
    assert_eq!(result["run"]["exit_code"], 141);
}

#[test]
fn a_framework_that_cannot_launch_is_recorded_before_anything_runs() {
    // No python at that path: the spawn fails, said on a test of its own.
    let project = Project::copy("pytest-grading");
    let path = json_path(project.path());
    let run = Tcrunner::new(project.path())
        .args(["--framework", "pytest", "--python", "/nonexistent/python3"])
        .args(["--format", "none", "--pass-policy", "all", "--json"])
        .arg(&path)
        .run(Duration::from_secs(60));
    assert_eq!(run.code(), 75, "{}", run.stderr);
    let result = result(&path);
    assert_eq!(result["errors"][0]["kind"], "not_started");
    assert_eq!(test(&result, "pytest did not start")["status"], "error");
    assert_eq!(result["run"]["exit_code"], 75);
    // No jest installed: found before anything is spawned.
    let empty = util::path("target/tmp").join(util::unique("no-jest"));
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::write(empty.join("package.json"), "{}").unwrap();
    let path = empty.join("result.json");
    for (policy, code) in [("all", 75), ("framework", 69)] {
        let run = Tcrunner::new(&empty)
            .args([
                "--framework",
                "jest",
                "--format",
                "none",
                "--pass-policy",
                policy,
                "--json",
            ])
            .arg(&path)
            .run(Duration::from_secs(60));
        assert_eq!(run.code(), code, "{policy}: {}", run.stderr);
        let written = crate::result(&path);
        assert_eq!(written["errors"][0]["kind"], "not_started", "{policy}");
        assert!(written["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("jest is not installed"));
        assert_eq!(written["tests"], serde_json::json!([]));
        assert_eq!(written["run"]["exit_code"], code);
        assert_eq!(written["run"]["framework"], "jest");
    }
    std::fs::remove_dir_all(&empty).unwrap();
}
