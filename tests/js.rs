//! The real binary on real jest (29, 30) and vitest (3, 4, and 5 on node 22)
//! against the fixture projects in tests/fixtures/{jest,vitest}, installed
//! under target/node by scripts/setup-node.sh. Expected outcomes are written
//! once per fixture in expected.json; every stream is checked with
//! `tcrunner check`, and verdicts are compared with the framework's own JSON.
mod util;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use util::{
    assert_clean, assert_matches_model, messages, output, path, tcrunner, tests_by_path, Project,
};

/// The `out` of every `kind` message (`testStdOut`, `testStdErr`), in order.
fn outputs(stream: &[u8], kind: &str) -> Vec<String> {
    messages(stream)
        .iter()
        .filter(|m| m.name == kind)
        .filter_map(|m| m.get("out").map(str::to_owned))
        .collect()
}

/// A fixture install under target/node (scripts/setup-node.sh).
fn node_project(name: &str) -> PathBuf {
    let modules = util::node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"));
    modules.parent().unwrap().to_path_buf()
}

/// Runs tcrunner in the install `name`; returns (exit code, stdout).
fn run(name: &str, args: &[&str]) -> (i32, Vec<u8>) {
    run_in(&node_project(name), name, args)
}

/// Runs tcrunner in `project` with the framework of the install `name`.
fn run_in(project: &Path, name: &str, args: &[&str]) -> (i32, Vec<u8>) {
    let out = output(&mut command_in(project, name, args));
    (out.status.code().unwrap_or(-1), out.stdout)
}

/// The tcrunner command [`run_in`] runs.
fn command_in(project: &Path, name: &str, args: &[&str]) -> std::process::Command {
    let mut all: Vec<String> = vec!["--project".into(), project.to_string_lossy().into_owned()];
    if name == "vitest5" {
        all.extend(["--node".into(), node22().to_string_lossy().into_owned()]);
    }
    all.extend(args.iter().map(|a| (*a).to_owned()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    tcrunner(&all)
}

fn node22() -> PathBuf {
    util::node22().expect("target/node/node22 missing: run scripts/setup-node.sh")
}

fn fixture_of(name: &str) -> &'static str {
    if name.starts_with("jest") {
        "tests/fixtures/jest"
    } else {
        "tests/fixtures/vitest"
    }
}

/// The model for one install, with its version overrides applied.
fn model(name: &str) -> BTreeMap<String, serde_json::Value> {
    let model = util::json(&path(&format!("{}/expected.json", fixture_of(name))));
    let mut tests: BTreeMap<String, serde_json::Value> = model["tests"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if let Some(overrides) = model["versions"][name].as_object() {
        for (key, value) in overrides {
            if value.is_null() {
                tests.remove(key);
            } else {
                tests.insert(key.clone(), value.clone());
            }
        }
    }
    tests
}

fn outcomes_match_the_model(name: &str) {
    let (code, stream) = run(name, &[]);
    assert_eq!(code, 1, "{name}: the fixture fails on purpose");
    assert_clean(&stream);
    assert_matches_model(name, &tests_by_path(&stream), &model(name));

    let (code, stream) = run(name, &["--format", "teamcity"]);
    assert_eq!(code, 1);
    assert_clean(&stream);
    let msgs = messages(&stream);
    assert_eq!(
        msgs.iter().filter(|m| m.name == "testStarted").count(),
        model(name).len(),
        "{name}: teamcity tests"
    );
    // Durations are whole milliseconds everywhere.
    assert!(msgs
        .iter()
        .filter_map(|m| m.get("duration"))
        .all(|d| d.parse::<u64>().is_ok()));
}

#[test]
fn jest30_outcomes_match_the_model() {
    outcomes_match_the_model("jest30");
}

#[test]
fn jest29_outcomes_match_the_model() {
    outcomes_match_the_model("jest29");
}

#[test]
fn vitest3_outcomes_match_the_model() {
    outcomes_match_the_model("vitest3");
}

#[test]
fn vitest4_outcomes_match_the_model() {
    outcomes_match_the_model("vitest4");
}

#[test]
fn vitest5_outcomes_match_the_model() {
    outcomes_match_the_model("vitest5");
}

#[test]
fn vitest5_on_an_old_node_is_a_one_line_error() {
    let project = node_project("vitest5");
    let out = output(&mut tcrunner(&[
        "--project",
        project.to_str().unwrap(),
        "--node",
        "node",
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(69), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("needs node >= 22.12"), "{stderr}");
}

/// The framework's own JSON verdicts agree with ours for every test it lists.
fn agrees_with_framework_json(name: &str) {
    let project = node_project(name);
    let json = std::env::temp_dir().join(format!("tcrunner-{name}-{}.json", std::process::id()));
    let mut command = std::process::Command::new("node");
    if name.starts_with("jest") {
        command
            .arg(project.join("node_modules/jest/bin/jest.js"))
            .arg("--json");
    } else {
        command
            .arg(project.join("node_modules/vitest/vitest.mjs"))
            .args(["run", "--reporter=json"]);
    }
    command
        .arg(format!("--outputFile={}", json.display()))
        .current_dir(&project)
        .output()
        .unwrap();
    let report = util::json(&json);
    // Converted in its project, the report names its tests as a live run
    // does (file suites relative to the project), so TeamCity's history
    // carries over between the two.
    let converted = output(tcrunner(&["convert", json.to_str().unwrap()]).current_dir(&project));
    std::fs::remove_file(&json).unwrap();
    let converted = tests_by_path(&converted.stdout);

    let (_, stream) = run(name, &[]);
    let ours = tests_by_path(&stream);
    let mut compared = 0;
    let mut seen: BTreeMap<String, u32> = BTreeMap::new();
    for file in report["testResults"].as_array().unwrap() {
        let file_name = file["name"].as_str().unwrap();
        let relative = file_name
            .strip_prefix(&format!("{}/", project.display()))
            .unwrap_or(file_name);
        for case in file["assertionResults"].as_array().unwrap() {
            let mut parts = vec![relative.to_owned()];
            parts.extend(
                case["ancestorTitles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t.as_str().unwrap().to_owned()),
            );
            parts.push(case["title"].as_str().unwrap().to_owned());
            let base = parts.join(" > ");
            let n = seen
                .entry(base.clone())
                .and_modify(|n| *n += 1)
                .or_insert(1);
            let key = if *n > 1 { format!("{base} #{n}") } else { base };
            let theirs = match case["status"].as_str().unwrap() {
                "passed" => "passed",
                "failed" => "failed",
                _ => "ignored",
            };
            let mine = ours
                .get(&key)
                .unwrap_or_else(|| panic!("{name}: {key} reported by the framework only"));
            assert!(
                converted.contains_key(&key),
                "{name}: {key} not named so when converted: {:?}",
                converted.keys()
            );
            let mine = if mine.verdict == "error" {
                "failed"
            } else {
                mine.verdict.as_str()
            };
            // vitest's JSON marks tests under a failed beforeAll as skipped and
            // loses the error; we report them failed with the hook's error.
            if !(theirs == "ignored" && mine == "failed" && name.starts_with("vitest")) {
                assert_eq!(mine, theirs, "{name}: {key}");
            }
            compared += 1;
        }
    }
    assert!(compared >= 20, "{name}: only {compared} compared");
}

#[test]
fn jest30_agrees_with_its_json_report() {
    agrees_with_framework_json("jest30");
}

#[test]
fn vitest4_agrees_with_its_json_report() {
    agrees_with_framework_json("vitest4");
}

#[test]
fn targets_select_one_test_and_drop_filtered_ones() {
    for (name, file) in [
        ("jest30", "outcomes.test.js"),
        ("vitest4", "outcomes.test.ts"),
        ("vitest5", "outcomes.test.ts"),
    ] {
        let target = format!("{file}::passes");
        let (code, stream) = run(name, &["--target", &target]);
        assert_clean(&stream);
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(
            found,
            [format!("{file} > passes")],
            "{name}: --target {target}"
        );
        assert_eq!(code, 0, "{name}");
    }
}

/// A target's file that the user's own arguments name too runs once: jest
/// runs a file once for each time it is named under `--runTestsByPath`.
#[test]
fn a_target_file_the_arguments_name_too_runs_once() {
    let args = [
        "--target",
        "outcomes.test.js::passes",
        "--",
        "./outcomes.test.js",
    ];
    let (code, stream) = run("jest30", &args);
    assert_clean(&stream);
    let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
    assert_eq!(found, ["outcomes.test.js > passes"]);
    assert_eq!(code, 0);
}

/// A node the reporters add for a failure outside any test, rerun by its
/// name (from the IDE, or the history's id): its file or block runs again,
/// and so the failure is seen again. No test has that name, so it selected
/// nothing and the run passed.
#[test]
fn a_target_of_a_failure_outside_tests_reruns_where_it_happened() {
    for (name, target, error) in [
        (
            "jest30",
            "after-all.test.js::afterAll hook",
            "after-all.test.js > afterAll hook",
        ),
        (
            "jest30",
            "import-error.test.js::Test suite failed to run",
            "import-error.test.js > Test suite failed to run",
        ),
        (
            "vitest4",
            "after-all.test.ts::afterAll fails > afterAll hook",
            "after-all.test.ts > afterAll fails > afterAll hook",
        ),
        (
            "vitest4",
            "import-error.test.ts::Error",
            "import-error.test.ts > Error",
        ),
    ] {
        let (code, stream) = run(name, &["--target", target]);
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        assert_eq!(
            found.get(error).map(|t| t.verdict.as_str()),
            Some("error"),
            "{name} {target}: {found:?}"
        );
        assert_eq!(code, 1, "{name} {target}");
    }
}

#[test]
fn a_whole_file_target_beside_test_targets_is_refused() {
    let project = node_project("vitest4");
    let out = output(&mut tcrunner(&[
        "--project",
        project.to_str().unwrap(),
        "--target",
        "outcomes.test.ts",
        "--target",
        "nested.test.ts::outer > inner > passes",
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--target outcomes.test.ts"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing runs");
    // Nor does a name pattern of the user's own beside them.
    for raw in ["-t", "--testNamePattern=x"] {
        let out = output(&mut tcrunner(&[
            "--project",
            project.to_str().unwrap(),
            "--target",
            "nested.test.ts::outer > inner > passes",
            "--",
            raw,
            "x",
        ]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{raw}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(raw), "{stderr}");
        assert!(out.stdout.is_empty(), "nothing runs");
    }
}

#[test]
fn targets_in_one_file_name_it_once() {
    let (code, stream) = run(
        "vitest4",
        &[
            "--target",
            "outcomes.test.ts::passes",
            "--target",
            "outcomes.test.ts::fails toBe with numbers",
        ],
    );
    assert_eq!(code, 1, "one of the two fails");
    assert_clean(&stream);
    let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
    assert_eq!(
        found,
        [
            "outcomes.test.ts > fails toBe with numbers",
            "outcomes.test.ts > passes"
        ]
    );
    let text = String::from_utf8_lossy(&stream);
    let launch = text
        .lines()
        .find(|l| l.starts_with("Launching vitest"))
        .unwrap();
    assert_eq!(launch.matches("outcomes.test.ts").count(), 1, "{launch}");
}

/// A temporary copy of `tests/fixtures/js-cases/<case>` that uses the install `name`.
fn case_project(case: &str, name: &str) -> Project {
    let modules = util::node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"));
    Project::copy(&format!("js-cases/{case}")).link_node_modules(&modules)
}

/// The stream cannot take back a test it finished, so a failure jest 30
/// charges to a test after it passed is a second node there; the result
/// files count the test once, failed, as jest's own report does.
#[test]
fn a_failure_jest_adds_after_a_test_passed_is_reported() {
    let late = serde_json::json!({ "outcome": "error", "message": "Error: late failure" });
    let passed = serde_json::json!({ "outcome": "passed" });
    let (leaves, running) = ("leaves a failing timer behind", "is running when it fires");
    for (name, expected, files) in [
        // jest 29 fails the test running when the timer fires.
        (
            "jest29",
            vec![
                ("late.test.js > leaves a failing timer behind", &passed),
                ("late.test.js > is running when it fires", &late),
            ],
            [(leaves, "passed"), (running, "error")],
        ),
        // jest 30 fails the test that set the timer, after reporting it passed.
        (
            "jest30",
            vec![
                ("late.test.js > leaves a failing timer behind", &passed),
                ("late.test.js > leaves a failing timer behind #2", &late),
                ("late.test.js > is running when it fires", &passed),
            ],
            [(leaves, "error"), (running, "passed")],
        ),
    ] {
        let project = case_project("jest-late", name);
        let json = project.path().join("result.json");
        let ctrf = project.path().join("ctrf.json");
        let junit = project.path().join("junit.xml");
        let files_args = [
            "--json",
            json.to_str().unwrap(),
            "--ctrf",
            ctrf.to_str().unwrap(),
            "--junit-xml",
            junit.to_str().unwrap(),
        ];
        let (code, stream) = run_in(project.path(), name, &files_args);
        assert_eq!(code, 1, "{name}: jest fails the run");
        assert_clean(&stream);
        let model = expected
            .into_iter()
            .map(|(key, spec)| (key.to_owned(), spec.clone()))
            .collect();
        assert_matches_model(name, &tests_by_path(&stream), &model);

        let tests = util::result_tests(&json, ["status", "details"]);
        let found: Vec<(&str, &str)> = tests
            .iter()
            .map(|(n, s, _)| (n.as_str(), s.as_str()))
            .collect();
        assert_eq!(found, files, "{name}: --json");
        let late_details = &tests.iter().find(|(_, s, _)| s == "error").unwrap().2;
        let told = late_details.starts_with("Reported after the test had finished.");
        assert_eq!(told, name == "jest30", "{name}: {late_details}");
        let ctrf = util::json(&ctrf);
        let ctrf_tests: Vec<(&str, &str)> = ctrf["results"]["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| (t["name"].as_str().unwrap(), t["status"].as_str().unwrap()))
            .collect();
        let want: Vec<(&str, &str)> = files
            .iter()
            .map(|(n, s)| (*n, if *s == "error" { "failed" } else { *s }))
            .collect();
        assert_eq!(ctrf_tests, want, "{name}: --ctrf");
        let xml = std::fs::read_to_string(&junit).unwrap();
        assert_eq!(xml.matches("<testcase ").count(), 2, "{name}: {xml}");
        assert!(
            xml.contains(r#"tests="2" failures="0" errors="1""#),
            "{name}: {xml}"
        );
    }
}

#[test]
fn jest_projects_running_one_file_at_once_report_each_test_once() {
    let project = case_project("jest-projects", "jest30");
    // A fresh cache has no timings, so jest runs the two copies in two workers.
    let cache = format!(
        "--cacheDirectory={}",
        project.path().join(".cache").display()
    );
    let (code, stream) = run_in(project.path(), "jest30", &["--", "--maxWorkers=2", &cache]);
    assert_eq!(code, 1);
    assert_clean(&stream);
    let found = verdicts(&stream);
    let want: Vec<(String, String)> = [
        ("[one] a/shared.test.js > fails", "failed"),
        ("[one] a/shared.test.js > passes", "passed"),
        ("[two] a/shared.test.js > fails", "failed"),
        ("[two] a/shared.test.js > passes", "passed"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect();
    assert_eq!(found, want);
}

/// jest names files below the folder it runs in, whatever its `rootDir`
/// (here a config's subfolder, above none of the tests); so does the tree.
#[test]
fn jest_files_are_named_below_the_folder_jest_runs_in() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-config-folder", name);
        let args = ["--", "--config", "config/jest.config.js"];
        let (code, stream) = run_in(project.path(), name, &args);
        assert_eq!(code, 1, "{name}");
        assert_clean(&stream);
        let want: Vec<(String, String)> = [
            ("src/a.test.js > outer > fails", "failed"),
            ("src/a.test.js > outer > passes", "passed"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
        assert_eq!(verdicts(&stream), want, "{name}");
    }
}

#[test]
fn vitest_shows_thrown_values_that_are_no_errors() {
    for name in ["vitest3", "vitest4"] {
        let (_project, stream) = failing_run("vitest-values", name);
        let found = tests_by_path(&stream);
        let thrown = &found["values.test.ts > throws a plain object"];
        assert_eq!(thrown.verdict, "error", "{name}");
        assert_eq!(thrown.message.as_deref(), Some("{ code: 42 }"), "{name}");
        // No `Error: ` in front of what was no error.
        for (test, message) in [
            ("throws a string", "a plain string"),
            ("throws null", "null"),
        ] {
            let thrown = &found[&format!("values.test.ts > {test}")];
            assert_eq!(thrown.message.as_deref(), Some(message), "{name}");
        }
        // Unhandled, without the fields vitest adds to say where it came from.
        let unhandled = &found["Unhandled error"];
        assert_eq!(unhandled.verdict, "error", "{name}");
        let message = unhandled.message.as_deref().unwrap_or_default();
        assert!(message.contains("code: 7"), "{name}: {message}");
        assert!(!message.contains("VITEST_"), "{name}: {message}");
    }
}

#[test]
fn vitests_own_checks_and_custom_matchers_are_failures_not_errors() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        assert_eq!(
            failing_case_verdicts("vitest-assertions", name),
            [
                ("assertions.test.ts > expects a resolution", "failed"),
                ("assertions.test.ts > fails a custom matcher", "failed"),
                ("assertions.test.ts > fails as it should", "passed"),
                ("assertions.test.ts > makes none", "failed"),
                ("assertions.test.ts > makes too few assertions", "failed"),
                (
                    "assertions.test.ts > passes although it should fail",
                    "failed"
                ),
                ("assertions.test.ts > throws a TypeError", "error"),
            ]
            .map(|(key, verdict)| (key.to_owned(), verdict.to_owned())),
            "{name}"
        );
    }
}

/// A project whose config names a test runner of its own keeps it: tcrunner
/// gives its runner only to projects without one.
#[test]
fn a_projects_own_vitest_runner_is_kept() {
    for name in ["vitest3", "vitest4"] {
        let (_project, stream) = failing_run("vitest-own-runner", name);
        assert_eq!(
            verdicts(&stream),
            [
                ("own.test.mjs > fails as usual", "failed"),
                ("own.test.mjs > runs under the project's runner", "passed"),
            ]
            .map(|(key, verdict)| (key.to_owned(), verdict.to_owned())),
            "{name}"
        );
        // What the runner wrote on import belongs to no test, and is kept.
        let text = String::from_utf8_lossy(&stream);
        assert_eq!(
            text.lines().filter(|l| *l == "own runner loaded").count(),
            1,
            "{name}: {text}"
        );
    }
}

/// vitest imports tcrunner's reporter and worker runner natively, as it
/// imports itself: the project's vite plugins see its own modules only, and
/// nothing of ours is transformed. (vitest 5 keeps transforms in a cache
/// across runs, so its plugins may see nothing at all.)
#[test]
fn a_projects_vite_plugins_see_none_of_tcrunners_modules() {
    for name in ["vitest3", "vitest4"] {
        let (project, stream) = failing_run("vitest-plugins", name);
        assert_eq!(tests_by_path(&stream).len(), 2, "{name}");
        let seen = std::fs::read_to_string(project.path().join("transformed.txt")).unwrap();
        assert!(
            seen.lines().any(|id| id.ends_with("plugins.test.mjs")),
            "{name}: the plugin saw no test file: {seen}"
        );
        let ours: Vec<&str> = seen.lines().filter(|id| id.contains("tcrunner")).collect();
        assert!(ours.is_empty(), "{name}: transformed {ours:?}");
    }
}

/// Runs a case whose run fails; its tests' paths and verdicts, in path order.
fn failing_case_verdicts(case: &str, name: &str) -> Vec<(String, String)> {
    verdicts(&failing_run(case, name).1)
}

/// A stream's tests' paths and verdicts, in path order.
fn verdicts(stream: &[u8]) -> Vec<(String, String)> {
    util::verdicts_by_path(stream)
}

/// Runs a case whose run fails, checking the code and the stream; the
/// project (kept for its files) and the stream.
fn failing_run(case: &str, name: &str) -> (Project, Vec<u8>) {
    let project = case_project(case, name);
    let (code, stream) = run_in(project.path(), name, &[]);
    assert_eq!(code, 1, "{name}");
    assert_clean(&stream);
    (project, stream)
}

/// vitest's `--bail` cancels the run while tests of another worker run:
/// those it left without a result were stopped, not crashed (exit 71). The
/// cancel races the tests, and loses most often on a busy machine: three
/// runs side by side, twice, give it its chances.
#[test]
fn tests_vitests_bail_leaves_running_are_stopped_not_crashed() {
    for round in 0..2 {
        let runs: Vec<_> = (0..3)
            .map(|_| {
                std::thread::spawn(|| {
                    let project = case_project("vitest-bail", "vitest4");
                    let json = project.path().join("result.json");
                    let args = [
                        "--json",
                        json.to_str().unwrap(),
                        "--",
                        "--bail=1",
                        "--maxWorkers=2",
                    ];
                    let (code, stream) = run_in(project.path(), "vitest4", &args);
                    (code, stream, util::json(&json))
                })
            })
            .collect();
        for run in runs {
            let (code, stream, result) = run.join().unwrap();
            assert_clean(&stream);
            assert_eq!(result["errors"], serde_json::json!([]), "round {round}");
            assert_eq!(code, 1, "round {round}");
            let tests = result["tests"].as_array().unwrap();
            assert!(
                tests.iter().any(|t| t["status"] == "failed"),
                "round {round}: {tests:?}"
            );
            assert!(
                tests.iter().all(|t| t["status"] != "error"),
                "round {round}: {tests:?}"
            );
            for test in tests.iter().filter(|t| t["status"] == "skipped") {
                let message = test["message"].as_str().unwrap_or_default();
                assert!(
                    message.is_empty()
                        || message == "The test run was aborted by the user."
                        || message == "vitest stopped the run (--bail) before this test finished",
                    "round {round}: {test}"
                );
            }
        }
    }
}

#[test]
fn vitest_console_output_carries_no_colour_codes() {
    let project = case_project("vitest-values", "vitest4");
    let (_, stream) = run_in(project.path(), "vitest4", &[]);
    let printed = outputs(&stream, "testStdOut");
    assert_eq!(printed, ["answer 42\n"]);
}

/// Asserts that each test of `keys` failed with no expected/actual pair: a
/// snapshot never written has nothing to compare against.
fn assert_failed_with_nothing_to_compare(
    found: &std::collections::BTreeMap<String, util::TestOutcome>,
    name: &str,
    keys: &[&str],
) {
    for key in keys {
        let test = &found[*key];
        assert_eq!(test.verdict, "failed", "{name}: {key}");
        let compared = (&test.expected, &test.actual);
        assert_eq!(compared, (&None, &None), "{name}: {key}");
    }
}

#[test]
fn a_snapshot_jest_did_not_write_has_no_expected_value() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-snapshots", name);
        // --ci, as on a CI server: jest writes no new snapshots.
        let (code, stream) = run_in(project.path(), name, &["--", "--ci"]);
        assert_eq!(code, 1, "{name}");
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        let unwritten = [
            "missing.test.js > has no stored snapshot",
            "missing.test.js > has no inline snapshot",
        ];
        assert_failed_with_nothing_to_compare(&found, name, &unwritten);
        // An expected `undefined` that a matcher compared against stays.
        let compared = &found["missing.test.js > compares with undefined"];
        assert_eq!(compared.expected.as_deref(), Some("undefined"), "{name}");
        assert_eq!(compared.actual.as_deref(), Some("5"), "{name}");
    }
}

#[test]
fn jests_own_and_node_assertion_errors_are_failures_not_errors() {
    for name in ["jest29", "jest30"] {
        assert_eq!(
            failing_case_verdicts("jest-assertions", name),
            [
                ("assertions.test.js > expects a rejection", "failed"),
                ("assertions.test.js > expects a resolution", "failed"),
                ("assertions.test.js > fails a bare node assert", "failed"),
                ("assertions.test.js > fails a node assert", "failed"),
                ("assertions.test.js > fails as it should", "passed"),
                ("assertions.test.js > makes none", "failed"),
                ("assertions.test.js > makes too few assertions", "failed"),
                (
                    "assertions.test.js > passes although it should fail",
                    "failed"
                ),
                ("assertions.test.js > throws a TypeError", "error"),
            ]
            .map(|(key, verdict)| (key.to_owned(), verdict.to_owned())),
            "{name}"
        );
    }
}

/// `--cacheDirectory` in the project: a fresh cache has no timings, so jest
/// runs the files in two workers instead of in band.
fn fresh_cache(project: &Path) -> String {
    format!("--cacheDirectory={}", project.join(".cache").display())
}

/// A test in jest's own process that mocks `fs.writeSync`, a mock jest
/// keeps after the test, took the reporter's writes with it: a mock that
/// returns 0 left the run waiting for ever. A test patching the JSON
/// encoder of jest's realm (`process.constructor.constructor('return
/// JSON')()`) turned the failed test after it into a pass. The reporter
/// writes and encodes with node's own, taken as it loads.
#[test]
fn a_test_mocking_fs_write_sync_leaves_the_events_alone() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-mocked-writes", name);
        let (code, stream) = run_in(project.path(), name, &["--session-timeout", "60"]);
        assert_clean(&stream);
        assert_eq!(
            verdicts(&stream),
            [
                ("mocked.test.js > fails after the patch", "failed"),
                ("mocked.test.js > mocks fs.writeSync", "passed"),
                (
                    "mocked.test.js > patches the outer JSON.stringify",
                    "passed"
                ),
                ("mocked.test.js > runs after the mock", "passed"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned())),
            "{name}"
        );
        assert_eq!(code, 1, "{name}");
    }
}

/// A worker that dies in a test (`process.exit`) makes jest run its file
/// again, up to three times: each test is shown once, the one the worker
/// died in with the file's error.
#[test]
fn tests_a_dead_jest_worker_left_running_fail_with_the_files_error() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-worker-exit", name);
        let cache = fresh_cache(project.path());
        let json = project.path().join("result.json");
        let json_arg = json.to_string_lossy();
        let args = ["--json", &json_arg, "--", "--maxWorkers=2", &cache];
        let (code, stream) = run_in(project.path(), name, &args);
        assert_eq!(code, 1, "{name}: a failed test, not a crash of jest");
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        let keys: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "exit.test.js > before exit",
                "exit.test.js > calls process.exit",
                "exit.test.js > twice",
                "exit.test.js > twice #2",
                "other.test.js > in another file"
            ],
            "{name}: each test once, whatever jest's attempts"
        );
        assert_eq!(found["exit.test.js > before exit"].verdict, "passed");
        let exit = &found["exit.test.js > calls process.exit"];
        assert_eq!(exit.verdict, "error", "{name}");
        let message = exit.message.as_deref().unwrap_or_default();
        assert!(
            message.contains("child process exceptions"),
            "{name}: {message}"
        );
        assert_eq!(found["other.test.js > in another file"].verdict, "passed");
        let statuses: Vec<(String, String)> = util::json(&json)["tests"]
            .as_array()
            .expect("tests")
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_owned(),
                    t["status"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        let mut statuses = statuses;
        statuses.sort();
        assert_eq!(
            statuses,
            [
                ("before exit", "passed"),
                ("calls process.exit", "error"),
                ("in another file", "passed"),
                ("twice", "passed"),
                ("twice", "passed")
            ]
            .map(|(n, s)| (n.to_owned(), s.to_owned())),
            "{name}: the result file as the stream"
        );
    }
}

#[test]
fn a_test_running_when_bail_stops_jest_is_stopped_not_crashed() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-bail", name);
        let cache = fresh_cache(project.path());
        let args = ["--", "--bail", "--maxWorkers=2", &cache];
        let (code, stream) = run_in(project.path(), name, &args);
        assert_eq!(code, 1, "{name}: a failed test, not a crash of jest");
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        assert_eq!(found["a.test.js > fails after a pause"].verdict, "failed");
        let slow = &found["b.test.js > is slow"];
        assert_eq!(slow.verdict, "ignored", "{name}");
        assert_eq!(
            slow.message.as_deref(),
            Some("jest stopped the run (--bail) before this test finished"),
            "{name}"
        );
    }
}

#[test]
fn obsolete_snapshots_that_fail_jests_run_are_said() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-snapshots", name);
        let target = "obsolete.test.js";
        let json = project.path().join("result.json");
        let ctrf = project.path().join("ctrf.json");
        let (json_arg, ctrf_arg) = (json.to_string_lossy(), ctrf.to_string_lossy());
        let args = ["--path", target, "--json", &json_arg, "--ctrf", &ctrf_arg];
        let (code, stream) = run_in(project.path(), name, &args);
        assert_eq!(code, 1, "{name}: jest fails the run");
        // The result files tell it once: the run's failure quotes it.
        let errors: Vec<String> = util::json(&json)["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["message"].as_str().unwrap().to_owned())
            .collect();
        let ctrf_errors = &util::json(&ctrf)["results"]["extra"]["errors"];
        assert_eq!(errors.len(), 1, "{name}: {errors:?}");
        assert!(
            errors[0].contains("obsolete.test.js: `removed test 1`"),
            "{name}: {errors:?}"
        );
        assert_eq!(ctrf_errors, &serde_json::json!(errors), "{name}");
        assert_clean(&stream);
        assert_eq!(
            tests_by_path(&stream)["obsolete.test.js > kept"].verdict,
            "passed"
        );
        let said: Vec<String> = messages(&stream)
            .iter()
            .filter(|m| m.name == "message" && m.get("status") == Some("ERROR"))
            .filter_map(|m| m.get("text").map(str::to_owned))
            .collect();
        assert_eq!(
            said,
            ["jest fails the run for obsolete snapshots (remove them with `jest -u`): obsolete.test.js: `removed test 1`"],
            "{name}"
        );
    }
}

/// A test file's own snapshot file that holds no snapshot is obsolete to
/// jest, which fails the run for it and lists it nowhere: the run's error
/// names it.
#[test]
fn an_empty_snapshot_file_that_fails_jests_run_is_named() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-snapshots", name);
        let json = project.path().join("result.json");
        let json_arg = json.to_string_lossy();
        let args = ["--path", "empty.test.js", "--json", &json_arg];
        let (code, stream) = run_in(project.path(), name, &args);
        assert_eq!(code, 1, "{name}: jest fails the run");
        assert_clean(&stream);
        let errors = &util::json(&json)["errors"];
        assert_eq!(
            errors[0]["message"].as_str(),
            Some("jest exited with code 1 though no test failed: jest fails the run for obsolete snapshots (remove them with `jest -u`): the snapshot file of empty.test.js (it holds none)"),
            "{name}: {errors}"
        );
    }
}

#[test]
fn jest_console_output_keeps_its_stream() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-console", name);
        let (code, stream) = run_in(project.path(), name, &[]);
        assert_eq!(code, 0, "{name}");
        assert_clean(&stream);
        let outputs: Vec<(String, String)> = messages(&stream)
            .iter()
            .filter(|m| m.name == "testStdOut" || m.name == "testStdErr")
            .map(|m| (m.name.clone(), m.get("out").unwrap_or_default().to_owned()))
            .collect();
        assert_eq!(
            outputs,
            [
                ("testStdOut".to_owned(), "to stdout\n".to_owned()),
                ("testStdErr".to_owned(), "a warning\n".to_owned()),
                (
                    "testStdErr".to_owned(),
                    "AssertionError [ERR_ASSERTION]: an assertion\n".to_owned()
                ),
            ],
            "{name}"
        );
    }
}

#[test]
fn a_single_jest_file_prints_its_console_once_inside_the_test() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-console", name);
        // One file: jest turns its verbose console on and prints live.
        let (code, stream) = run_in(project.path(), name, &["--path", "console.test.js"]);
        assert_eq!(code, 0, "{name}");
        assert_clean(&stream);
        // jest's own framing (`  console.log`, the call site, a code frame
        // for warnings) stays; the logged line is printed once, in the test.
        let text = String::from_utf8_lossy(&stream);
        let lines: Vec<&str> = text.lines().collect();
        let printed: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].trim() == "to stdout" || lines[i].contains("out='to stdout"))
            .collect();
        assert_eq!(printed.len(), 1, "{name}: {text}");
        let at = |needle: &str| lines.iter().position(|l| l.contains(needle)).unwrap();
        let (start, end) = (at("##teamcity[testStarted"), at("##teamcity[testFinished"));
        let printed = printed[0];
        assert!(start < printed && printed < end, "{name}: {text}");
    }
}

/// What a test in jest's own process writes to stderr, and jest's console
/// where jest prints it on stderr (`--useStderr`, `--json`), went to
/// tcrunner's stderr as it was: in no result file, and in the IDE beside
/// the test's messages rather than inside them. While one test runs it is
/// that test's stderr.
#[test]
fn a_single_jest_files_stderr_is_its_tests_output() {
    for name in ["jest29", "jest30"] {
        for jest_args in [&[][..], &["--useStderr"]] {
            let project = case_project("jest-stderr", name);
            let json = project.path().join("result.json");
            let json_arg = json.to_string_lossy();
            let mut args = vec!["--json", &json_arg, "--"];
            args.extend(jest_args);
            let (code, stream) = run_in(project.path(), name, &args);
            assert_eq!(code, 0, "{name} {jest_args:?}");
            assert_clean(&stream);
            let text = String::from_utf8_lossy(&stream);
            let tests = util::json(&json)["tests"].clone();
            for (test, who) in [("writes first", "FIRST"), ("writes next", "NEXT")] {
                let record = tests
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|t| t["name"] == test)
                    .unwrap_or_else(|| panic!("{name}: no {test} in {tests}"));
                let stderr = record["stderr"].as_str().unwrap_or_default();
                assert!(
                    stderr.contains(&format!("RAW-ERR-OF-{who}")),
                    "{name} {jest_args:?}: {record}"
                );
                let logged_on = if jest_args.is_empty() {
                    "stdout"
                } else {
                    "stderr"
                };
                let logged = record[logged_on].as_str().unwrap_or_default();
                assert!(
                    logged.contains(&format!("LOGGED-BY-{who}")),
                    "{name} {jest_args:?}: {record}"
                );
                // In the stream, inside the test's messages.
                let started = text.find(&format!("name='{test}'")).expect("started");
                let finished = started + text[started..].find("testFinished").expect("finished");
                assert!(
                    text[started..finished].contains(&format!("RAW-ERR-OF-{who}")),
                    "{name} {jest_args:?}:\n{text}"
                );
            }
        }
    }
}

/// Node queues what a full pipe does not take, so a test's console write
/// larger than a pipe holds came out after the events sent behind it: in
/// part in its test, cut inside a character, the rest (and the next
/// test's output) after the file's end.
#[test]
fn a_single_jest_files_console_larger_than_a_pipe_stays_whole_in_its_test() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-big-console", name);
        let json = project.path().join("result.json");
        let mut command = command_in(project.path(), name, &["--json"]);
        let out = output(command.arg(&json));
        assert_eq!(out.status.code(), Some(0), "{name}");
        assert!(
            std::str::from_utf8(&out.stdout).is_ok(),
            "{name}: the stream is not UTF-8"
        );
        let got = util::result_tests(&json, ["stdout", "stderr"]);
        let big = format!("a{}", "é".repeat(100_000));
        let lines = |text: &str| text.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(got.len(), 2, "{name}");
        assert!(got[0].1.contains(&big), "{name}: {} bytes", got[0].1.len());
        assert!(
            got[1].1.contains("hello from logs after"),
            "{name}: {:?}",
            got[1]
        );
        // jest's framing (`console.log`, the call site) and the text, no more.
        assert_eq!((lines(&got[0].1), lines(&got[1].1)), (3, 3), "{name}");
    }
}

#[test]
fn a_snapshot_vitest_did_not_write_is_a_failure_with_no_expected_value() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let project = case_project("vitest-snapshots", name);
        // CI=true, as on a CI server: vitest writes no new snapshots.
        let out = output(command_in(project.path(), name, &[]).env("CI", "true"));
        assert_eq!(out.status.code(), Some(1), "{name}");
        let stream = out.stdout;
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        let unwritten = [
            "snapshots.test.ts > has no stored snapshot",
            "snapshots.test.ts > has no inline snapshot",
        ];
        assert_failed_with_nothing_to_compare(&found, name, &unwritten);
        // A stored snapshot that differs is compared, a stored `undefined` too.
        for (key, expected, actual) in [
            (
                "snapshots.test.ts > differs from its snapshot",
                "{\n  \"a\": 2,\n}",
                "{\n  \"a\": 1,\n}",
            ),
            (
                "snapshots.test.ts > differs from a stored undefined",
                "undefined",
                "5",
            ),
        ] {
            let test = &found[key];
            assert_eq!(test.verdict, "failed", "{name}: {key}");
            assert_eq!(test.expected.as_deref(), Some(expected), "{name}: {key}");
            assert_eq!(test.actual.as_deref(), Some(actual), "{name}: {key}");
        }
    }
}

/// `-- bench` runs vitest's benchmarks, once, and not the tests: each
/// benchmark is a test of the tree. One that throws fails its file under
/// vitest 3 and 4, as their own report has it, and its test under vitest 5,
/// where a benchmark is a test that runs the `bench` fixture. vitest 3 and 4
/// end a file whose benchmark outside any describe block throws with that
/// benchmark still running: it fails, named.
#[test]
fn vitest_bench_runs_the_benchmarks_once() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let project = case_project("vitest-bench", name);
        if name == "vitest5" {
            let v5 = project.path().join("v5/sum.bench.mjs");
            std::fs::copy(v5, project.path().join("sum.bench.mjs")).unwrap();
            std::fs::remove_file(project.path().join("top.bench.mjs")).unwrap();
        } else {
            let found = tests_by_path(&run_in(project.path(), name, &["--", "bench"]).1);
            let verdict = |key: &str| {
                found
                    .get(key)
                    .map(|t| (t.verdict.as_str(), t.message.as_deref()))
            };
            assert_eq!(
                verdict("top.bench.mjs > alone"),
                Some(("passed", None)),
                "{name}: {found:?}"
            );
            assert_eq!(
                verdict("top.bench.mjs > alone, throwing"),
                Some((
                    "error",
                    Some("vitest ended top.bench.mjs without a result for this test")
                )),
                "{name}: {found:?}"
            );
            std::fs::remove_file(project.path().join("top.bench.mjs")).unwrap();
        }
        let (code, stream) = run_in(project.path(), name, &["--", "bench"]);
        assert_eq!(code, 1, "{name}");
        assert_clean(&stream);
        let text = String::from_utf8_lossy(&stream);
        assert!(
            text.contains("Launching vitest with arguments bench --run in "),
            "{name}: {text}"
        );
        let found = tests_by_path(&stream);
        // vitest 5 runs the benchmarks as a project of their own, `bench`.
        let file = if name == "vitest5" {
            "[bench] sum.bench.mjs"
        } else {
            "sum.bench.mjs"
        };
        let adds = found.get(&format!("{file} > sum > adds"));
        assert_eq!(
            adds.map(|t| t.verdict.as_str()),
            Some("passed"),
            "{name}: {found:?}"
        );
        assert!(
            !found.keys().any(|k| k.contains("sum.test.mjs")),
            "{name}: {found:?}"
        );
        let failures: Vec<&String> = found
            .iter()
            .filter(|(_, t)| t.verdict != "passed")
            .filter_map(|(_, t)| t.message.as_ref())
            .collect();
        assert_eq!(failures, ["Error: broken benchmark"], "{name}: {text}");
    }
}

#[test]
fn a_vitest_type_check_failure_says_where_it_is() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let project = case_project("vitest-typecheck", name);
        let (code, stream) = run_in(project.path(), name, &["--", "--typecheck"]);
        assert_eq!(code, 1, "{name}");
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        let test = &found["types.test-d.ts > types > are checked"];
        assert_eq!(test.verdict, "error", "{name}");
        let failed: Vec<String> = messages(&stream)
            .iter()
            .filter(|m| m.name == "testFailed")
            .filter_map(|m| m.get("details").map(str::to_owned))
            .collect();
        assert_eq!(failed.len(), 1, "{name}: {failed:?}");
        let details = &failed[0];
        let place = format!(
            "    at {}:7:37",
            project.path().join("types.test-d.ts").display()
        );
        assert!(details.ends_with(&place), "{name}: {details}");
        // A target selects it: vitest matches its file's path before its titles.
        let target = [
            "--target",
            "types.test-d.ts::types > are checked",
            "--",
            "--typecheck",
        ];
        let (code, stream) = run_in(project.path(), name, &target);
        assert_eq!(code, 1, "{name}");
        let found = tests_by_path(&stream);
        let verdicts: Vec<&str> = found.values().map(|t| t.verdict.as_str()).collect();
        assert_eq!(verdicts, ["error"], "{name}: {found:?}");
    }
}

#[test]
fn half_of_a_surrogate_pair_does_not_lose_the_event_that_carries_it() {
    for name in ["jest29", "jest30", "vitest3", "vitest4", "vitest5"] {
        let case = if name.starts_with("jest") {
            "jest-surrogates"
        } else {
            "vitest-surrogates"
        };
        let project = case_project(case, name);
        let (code, stream) = run_in(project.path(), name, &[]);
        assert_eq!(code, 1, "{name}: a failed test, not a crash");
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        let keys: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "surrogates.test.js > compares a string cut in half",
                "surrogates.test.js > is named after 🎉\u{fffd}",
            ],
            "{name}"
        );
        let cut = &found["surrogates.test.js > compares a string cut in half"];
        assert_eq!(cut.verdict, "failed", "{name}");
        assert_eq!(cut.expected.as_deref(), Some("🎉🎉"), "{name}");
        assert_eq!(cut.actual.as_deref(), Some("🎉\u{fffd}"), "{name}");
    }
}

/// A JSON report converted in its project names its file suites as a live
/// run does, relative to the project: they were named below the folder all
/// test files share (`a/in.test.js` for `src/a/in.test.js`), so TeamCity's
/// history did not carry over between a live run and a converted report.
#[test]
fn a_json_report_converted_in_its_project_names_tests_as_a_live_run() {
    for name in ["jest30", "vitest4"] {
        let project = case_project("path-prefix", name);
        let framework = if name.starts_with("jest") {
            "jest"
        } else {
            "vitest"
        };
        let (_, live) = run_in(project.path(), name, &["--framework", framework]);
        let live: Vec<String> = tests_by_path(&live).into_keys().collect();
        assert!(
            live.contains(&"src/a/in.test.js > is in src/a".to_owned()),
            "{name}: {live:?}"
        );
        let json = project.path().join("report.json");
        let mut command = std::process::Command::new("node");
        if framework == "jest" {
            command.arg("node_modules/jest/bin/jest.js").arg("--json");
        } else {
            command.args(["node_modules/vitest/vitest.mjs", "run", "--reporter=json"]);
        }
        let status = command
            .arg(format!("--outputFile={}", json.display()))
            .current_dir(project.path())
            .output()
            .unwrap()
            .status;
        assert!(status.success(), "{name}: {status}");
        let out = output(tcrunner(&["convert", "report.json"]).current_dir(project.path()));
        assert_eq!(out.status.code(), Some(0), "{name}");
        let converted: Vec<String> = tests_by_path(&out.stdout).into_keys().collect();
        assert_eq!(converted, live, "{name}");
    }
}

#[test]
fn a_folder_path_runs_that_folder_not_its_namesakes() {
    for name in ["jest29", "jest30", "vitest3", "vitest4", "vitest5"] {
        let project = case_project("path-prefix", name);
        let framework = if name.starts_with("jest") {
            "jest"
        } else {
            "vitest"
        };
        let run_path = |path: &str| {
            let (code, stream) = run_in(
                project.path(),
                name,
                &["--framework", framework, "--path", path],
            );
            assert_eq!(code, 0, "{name}: --path {path}");
            assert_clean(&stream);
            tests_by_path(&stream).into_keys().collect::<Vec<_>>()
        };
        for path in ["src/a", "./src/a/", "src/../src/a"] {
            assert_eq!(run_path(path), ["src/a/in.test.js > is in src/a"], "{name}");
        }
        // vitest's own filters are substrings of a file's path: these would
        // also take `lib/src/a/`, `bin.test.js` and `src/a/in.test.js`.
        let root_file = project.path().join("in.test.js");
        for path in ["in.test.js", root_file.to_str().unwrap()] {
            assert_eq!(run_path(path), ["in.test.js > is in the root"], "{name}");
        }
        let (code, stream) = run_in(
            project.path(),
            name,
            &[
                "--framework",
                framework,
                "--target",
                "in.test.js::is in the root",
            ],
        );
        assert_eq!(code, 0, "{name}");
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(found, ["in.test.js > is in the root"], "{name}: target");
        // The project itself, written `.`, runs everything.
        assert_eq!(run_path(".").len(), 6, "{name}");
        // A raw option that takes a list of values does not take the path.
        let raw = if framework == "jest" {
            ["--testPathIgnorePatterns", "no-such-folder"]
        } else {
            ["--exclude", "no-such-folder/**"]
        };
        let (code, stream) = run_in(
            project.path(),
            name,
            &[
                &["--framework", framework, "--path", "src/a", "--"][..],
                &raw[..],
            ]
            .concat(),
        );
        assert_eq!(code, 0, "{name}: {raw:?}");
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(found, ["src/a/in.test.js > is in src/a"], "{name}: {raw:?}");
        // A project reached through a symbolic link.
        let link = project.path().with_extension("link");
        std::os::unix::fs::symlink(project.path(), &link).unwrap();
        let (code, stream) = run_in(&link, name, &["--framework", framework, "--path", "src/a"]);
        std::fs::remove_file(&link).unwrap();
        assert_eq!(code, 0, "{name}: through {}", link.display());
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(found, ["src/a/in.test.js > is in src/a"], "{name}: link");
    }
}

#[test]
fn a_jest_describe_with_an_empty_title_holds_only_its_own_tests() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-titles", name);
        let (code, stream) = run_in(project.path(), name, &[]);
        assert_eq!(code, 0, "{name}");
        assert_clean(&stream);
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(
            found,
            [
                "titles.test.js >  > is in a describe",
                "titles.test.js > is at the top",
                "titles.test.js > x > is in a describe",
            ],
            "{name}"
        );
    }
}

/// `--help`, jest's `--version` and `--listTests` answer and exit 0 without
/// loading reporters: the answer passes through, the tree stays empty, and
/// the exit code is the framework's.
#[test]
fn information_switches_pass_the_frameworks_answer_through() {
    for (name, switches) in [
        ("jest30", &["--version", "--listTests", "--help"][..]),
        ("vitest4", &["--help"][..]),
    ] {
        for switch in switches {
            let (code, stdout) = run(name, &["--", switch]);
            let text = String::from_utf8_lossy(&stdout);
            assert_eq!(code, 0, "{name} {switch}:\n{text}");
            assert_clean(&stdout);
            assert!(
                !text.contains("##teamcity[testStarted"),
                "{name} {switch}:\n{text}"
            );
            let answer: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with("##teamcity[") && !l.starts_with("Launching "))
                .filter(|l| !l.trim().is_empty())
                .collect();
            assert!(!answer.is_empty(), "{name} {switch}:\n{text}");
            if *switch == "--listTests" {
                assert!(answer.iter().any(|l| l.ends_with(".test.js")), "{text}");
            }
        }
    }
}

#[test]
fn the_reporters_writes_survive_a_full_non_blocking_pipe() {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;

    // 50 events of 100 KB of multi-byte text, into a pipe that holds 64 KB
    // and whose write end does not block: writes come back cut short or
    // refused, and each event must still arrive whole.
    let (mut read, write) = std::io::pipe().unwrap();
    let fd = write.as_raw_fd();
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        assert_ne!(libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK), -1);
    }
    let script = "const { openSink } = require(process.argv[1]); const sink = openSink();\
                  for (let i = 0; i < 50; i++) sink.send({ ev: 'log', level: 'info', text: `${i} ` + 'é€😀x'.repeat(10000) });";
    let mut child = std::process::Command::new("node");
    child
        .args([
            "-e",
            script,
            &path("runners/tcrunner-common.cjs").to_string_lossy(),
        ])
        .env("TCRUNNER_EVENT_FD", "3")
        .env_remove("TCRUNNER_EVENT_FILE");
    // SAFETY: dup2 is async-signal-safe; it leaves the copy open across exec.
    unsafe {
        child.pre_exec(move || match libc::dup2(fd, 3) {
            -1 => Err(std::io::Error::last_os_error()),
            _ => Ok(()),
        });
    }
    let mut child = child.spawn().unwrap();
    drop(write);
    std::thread::sleep(std::time::Duration::from_millis(300)); // let the pipe fill
    let mut received = Vec::new();
    let mut chunk = vec![0u8; 7000];
    loop {
        match read.read(&mut chunk).unwrap() {
            0 => break,
            n => received.extend_from_slice(&chunk[..n]),
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    assert!(child.wait().unwrap().success());
    let text = String::from_utf8(received).expect("whole UTF-8 characters");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 50);
    for (i, line) in lines.iter().enumerate() {
        let event: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            event["text"],
            format!("{i} {}", "é€😀x".repeat(10000)),
            "event {i}"
        );
    }
}

/// `jest.retryTimes`: jest runs a failed test again after the others of its
/// block, and counts it by its last attempt. A first failure was reported
/// as the verdict, with the retry as a second node: a run jest passed failed.
#[test]
fn a_jest_test_that_passes_on_a_retry_is_one_passed_test() {
    for name in ["jest29", "jest30"] {
        let (_project, stream) = failing_run("jest-retry", name);
        let want: Vec<(String, String)> = [
            ("retry.test.js > fails every attempt", "failed"),
            ("retry.test.js > passes at once", "passed"),
            ("retry.test.js > passes on its second attempt", "passed"),
        ]
        .map(|(path, verdict)| (path.to_owned(), verdict.to_owned()))
        .into();
        assert_eq!(verdicts(&stream), want, "{name}");
        // The failed attempt is told in the test's output.
        let attempts = outputs(&stream, "testStdErr");
        assert_eq!(attempts.len(), 3, "{name}: {attempts:?}");
        assert!(
            attempts.iter().all(|a| a.starts_with("Attempt ")),
            "{name}: {attempts:?}"
        );

        // Only the test that passed on its retry: jest's run passes, and so does ours.
        let project = case_project("jest-retry", name);
        let target = "retry.test.js::passes on its second attempt";
        let (code, stream) = run_in(project.path(), name, &["--target", target]);
        assert_eq!(code, 0, "{name}: {}", String::from_utf8_lossy(&stream));
        assert_clean(&stream);
    }
}

/// Tests of one name in one block are each their own test, as jest counts
/// them: a skipped one was the verdict of the one that ran, a second test
/// was taken for a retry of a first that jest ran again, two concurrent
/// ones that ended in the other order were three, and the retries of two
/// that both failed once all went to the first.
#[test]
fn jest_tests_of_one_name_are_counted_as_jest_counts_them() {
    for name in ["jest29", "jest30"] {
        let (project, stream) = failing_run("jest-same-names", name);
        let report = project.path().join("jest.json");
        let bare = std::process::Command::new("node")
            .current_dir(project.path())
            .args(["node_modules/jest/bin/jest.js", "--json", "--outputFile"])
            .arg(&report)
            .output()
            .unwrap();
        assert_eq!(bare.status.code(), Some(1), "{name}");
        let report: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
        let mut want = Vec::new();
        for file in report["testResults"].as_array().unwrap() {
            let path = Path::new(file["name"].as_str().unwrap());
            let file_name = path.file_name().unwrap().to_string_lossy();
            for test in file["assertionResults"].as_array().unwrap() {
                let mut parts = vec![file_name.to_string()];
                for title in test["ancestorTitles"].as_array().unwrap() {
                    parts.push(title.as_str().unwrap().to_owned());
                }
                parts.push(test["title"].as_str().unwrap().to_owned());
                let verdict = match test["status"].as_str().unwrap() {
                    "passed" => "passed",
                    "failed" => "failed",
                    _ => "ignored",
                };
                want.push((parts.join(" > "), verdict.to_owned()));
            }
        }
        want.sort();
        assert_eq!(want.len(), 10, "{name}: {want:?}");
        // ` #2` tells a second test of one name apart.
        let found = tests_by_path(&stream);
        let mut got: Vec<(String, String)> = found
            .iter()
            .map(|(key, test)| (key.trim_end_matches(" #2").to_owned(), test.verdict.clone()))
            .collect();
        got.sort();
        assert_eq!(got, want, "{name}: {}", String::from_utf8_lossy(&stream));
        // The test that failed is the one that always fails.
        let again = [
            "retry-both.test.js > again",
            "retry-both.test.js > again #2",
        ];
        let failed: Vec<_> = again
            .iter()
            .filter(|k| found[**k].verdict == "failed")
            .collect();
        assert_eq!(failed.len(), 1, "{name}");
        let expected = found[*failed[0]].expected.as_deref();
        assert_eq!(
            expected,
            Some("never"),
            "{name}: {}",
            String::from_utf8_lossy(&stream)
        );
    }
}

/// An `afterEach` that waits and then fails the test or writes: vitest
/// marks a test passed when its body returns, before the hook runs. A start
/// our runner sent while the hook waited carried that verdict: the test
/// was finished passed, the hook's failure lost and its output given to
/// the block.
#[test]
fn a_vitest_after_each_that_waits_still_fails_its_test_and_writes_in_it() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let project = case_project("vitest-after-each", name);
        let (code, stream) = run_in(project.path(), name, &[]);
        assert_eq!(code, 1, "{name}");
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        assert_eq!(found.len(), 6, "{name}: {found:?}");
        for (path, test) in &found {
            let test_name = path.rsplit(" > ").next().unwrap();
            let want = if test_name.ends_with("fails") {
                Some(format!("Error: afterEach broke {test_name}"))
            } else {
                None
            };
            assert_eq!(test.message, want, "{name}: {path}");
        }
        let names: std::collections::HashMap<String, String> = messages(&stream)
            .iter()
            .filter(|m| m.name == "testStarted")
            .map(|m| {
                (
                    m.get("nodeId").unwrap().to_owned(),
                    m.get("name").unwrap().to_owned(),
                )
            })
            .collect();
        let mut written: Vec<String> = messages(&stream)
            .iter()
            .filter(|m| m.name == "testStdOut")
            .map(|m| {
                let test = names
                    .get(m.get("nodeId").unwrap())
                    .map_or("(not a test)", |n| n);
                format!("{test}: {}", m.get("out").unwrap().trim_end())
            })
            .collect();
        written.sort();
        let mut want: Vec<String> = names.values().map(|n| format!("{n}: after {n}")).collect();
        want.sort();
        assert_eq!(written, want, "{name}");
    }
}

/// `--path` of a folder that is a vitest project's root: vitest takes a
/// folder filter relative to each project's root, where `pb/` is `/` and
/// matches none of its files, so the run found no tests.
#[test]
fn a_vitest_projects_root_folder_runs_its_tests() {
    for name in ["vitest3", "vitest4"] {
        let project = case_project("vitest-retry", name);
        std::fs::remove_file(project.path().join("retry.test.js")).unwrap();
        project.write(
            "vitest.config.mjs",
            "export default { test: { projects: [\n  \
             { test: { name: 'alpha', root: './pa' } },\n  \
             { test: { name: 'beta', root: './pb' } },\n] } };\n",
        );
        let test = "import { test } from 'vitest';\n\ntest('runs', () => {});\n";
        project.write("pa/one.test.js", test);
        project.write("pb/one.test.js", test);
        project.write("pb/inner/two.test.js", test);
        project.write("pbx/three.test.js", test);
        for (path, want) in [
            (
                "pb",
                vec![
                    "[beta] pb/inner/two.test.js > runs",
                    "[beta] pb/one.test.js > runs",
                ],
            ),
            (
                "pb/",
                vec![
                    "[beta] pb/inner/two.test.js > runs",
                    "[beta] pb/one.test.js > runs",
                ],
            ),
            ("pb/inner", vec!["[beta] pb/inner/two.test.js > runs"]),
        ] {
            let (code, stream) = run_in(project.path(), name, &["--path", path]);
            assert_eq!(
                code,
                0,
                "{name} {path}: {}",
                String::from_utf8_lossy(&stream)
            );
            let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
            assert_eq!(found, want, "{name} {path}");
        }
    }
}

/// jest runs a single file with a verbose console, which prints each
/// `console.log` live, inside its test; pytest's `-s` prints the same way.
/// That text is the test's stdout in the result files too, where it was
/// in none of them.
#[test]
fn text_printed_inside_the_one_running_test_is_its_output_in_the_result_files() {
    let project = case_project("jest-retry", "jest30");
    project.write(
        "retry.test.js",
        "test('logs', () => {\n  console.log('said by logs');\n});\n\ntest('quiet', () => {});\n",
    );
    let json = project.path().join("result.json");
    let junit = project.path().join("result.xml");
    let mut command = command_in(project.path(), "jest30", &["--json"]);
    command.arg(&json).arg("--junit-xml").arg(&junit);
    let out = output(&mut command);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let stdout = |name: &str| {
        result["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .map(|t| t["stdout"].as_str().unwrap_or("").to_owned())
            .unwrap()
    };
    assert!(stdout("logs").contains("said by logs"), "{result}");
    assert!(!stdout("quiet").contains("said by logs"), "{result}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(xml.matches("said by logs").count(), 1, "{xml}");
}

/// What a vitest test writes straight to `process.stdout` and
/// `process.stderr` is its output, like what it logs, though its start
/// leaves the worker after the writes.
#[test]
fn what_a_vitest_test_writes_to_the_streams_is_its_output() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let project = case_project("vitest-raw-writes", name);
        let json = project.path().join("result.json");
        let mut command = command_in(project.path(), name, &["--json"]);
        let out = output(command.arg(&json));
        assert_eq!(out.status.code(), Some(0), "{name}");
        let got = util::result_tests(&json, ["stdout", "stderr"]);
        let mut want: Vec<(String, String, String)> = ["one", "two", "three", "four"]
            .map(|n| {
                (
                    n.to_owned(),
                    format!("out of {n}\n"),
                    format!("err of {n}\n"),
                )
            })
            .to_vec();
        want.push(("quiet".into(), String::new(), String::new()));
        let mixed = "logged by mixed\nbytes of mixed\n";
        want.push(("mixed".into(), mixed.into(), String::new()));
        want.extend(["five", "six", "seven"].map(|n| {
            (
                n.to_owned(),
                format!("fd out of {n}\n"),
                format!("fd err of {n}\n"),
            )
        }));
        want.push(("runs a quiet child".into(), String::new(), String::new()));
        assert_eq!(got, want, "{name}");
    }
}

/// A block's hooks run after its last test and before the next block: the
/// stream tells them in that order, though the tests' ends wait in the
/// worker to go together and the hooks' console output does not.
#[test]
fn vitest_hooks_output_comes_between_the_blocks_tests() {
    for name in ["vitest4", "vitest5"] {
        let project = case_project("vitest-hook-order", name);
        let (code, stream) = run_in(project.path(), name, &[]);
        assert_eq!(code, 0, "{name}");
        assert_clean(&stream);
        let shown: Vec<String> = messages(&stream)
            .iter()
            .filter_map(|m| match m.name.as_str() {
                "testStarted" | "testSuiteStarted" => Some(format!("start {}", m.get("name")?)),
                "testStdOut" => Some(m.get("out")?.trim_end().to_owned()),
                _ => None,
            })
            .collect();
        let want = [
            "start hooks.test.js",
            "start A",
            "start a1",
            "start a2",
            "A afterAll",
            "start B",
            "B beforeAll",
            "start b1",
        ];
        assert_eq!(shown, want, "{name}");
    }
}

/// vitest's `retry`: a test is one node with its last attempt's verdict.
/// A test failed on every attempt took its message from the first, and its
/// details from all; one that
/// passed on a retry showed no trace of the attempts that failed, nor one
/// that never passed (jest's tell them in the test's stderr, which the
/// result files count as `retries`).
#[test]
fn a_vitest_test_run_again_tells_its_attempts() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let (_project, stream) = failing_run("vitest-retry", name);
        let found = tests_by_path(&stream);
        let verdicts: Vec<(&str, &str)> = found
            .iter()
            .map(|(k, t)| (k.as_str(), t.verdict.as_str()))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("retry.test.js > fails every attempt", "error"),
                ("retry.test.js > passes at once", "passed"),
                ("retry.test.js > passes on its second attempt", "passed"),
            ],
            "{name}"
        );
        let failed = &found["retry.test.js > fails every attempt"];
        assert_eq!(
            failed.message.as_deref(),
            Some("Error: attempt 3"),
            "{name}"
        );
        // Its details are the last attempt's too (they held every attempt's,
        // the first one's first, under the last one's message).
        let details: Vec<String> = messages(&stream)
            .iter()
            .filter(|m| m.name == "testFailed" && m.get("message") == Some("Error: attempt 3"))
            .map(|m| m.get("details").unwrap_or_default().to_owned())
            .collect();
        assert_eq!(details.len(), 1, "{name}");
        assert!(
            details[0].contains("attempt 3") && !details[0].contains("attempt 1"),
            "{name}: {details:?}"
        );
        // Every failed attempt before the last, as jest tells them, in the
        // file's order: the flaky test's one, and the two before the failed
        // test's verdict.
        let attempts = outputs(&stream, "testStdErr");
        let firsts: Vec<&str> = attempts
            .iter()
            .map(|a| a.lines().next().unwrap_or_default())
            .collect();
        assert_eq!(
            firsts,
            [
                "Attempt 1 failed: expected 1 to be 2 // Object.is equality",
                "Attempt 1 failed: Error: attempt 1",
                "Attempt 2 failed: Error: attempt 2",
            ],
            "{name}: {attempts:?}"
        );
    }
}

/// vitest fails a describe block or a file with no tests in it. The error
/// is no hook's: a block's was reported as a test named `afterAll hook`, and
/// a file's as one named `Error`, as for a file that failed to load.
#[test]
fn a_vitest_block_or_file_without_tests_is_told_as_such() {
    for name in ["vitest3", "vitest4", "vitest5"] {
        let (_project, stream) = failing_run("vitest-no-tests", name);
        let found = tests_by_path(&stream);
        let keys: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "empty.test.js > nothing here > No test found",
                "empty.test.js > runs",
                "no-tests.test.js > No test found",
            ],
            "{name}"
        );
        for (node, says) in [
            (
                "empty.test.js > nothing here > No test found",
                "No test found in suite nothing here",
            ),
            (
                "no-tests.test.js > No test found",
                "No test suite found in file",
            ),
        ] {
            assert_eq!(found[node].verdict, "error", "{name}");
            let message = found[node].message.as_deref().unwrap_or_default();
            assert!(message.contains(says), "{name}: {message}");
        }
    }
}

/// The scan that gives started tests their line: titles that are literal
/// however they are called. A template with a `$` but no `${}` and vitest's
/// `test.skipIf(cond)('title')` got none; computed titles still get none.
#[test]
fn the_line_scan_reads_every_literal_title() {
    let project = Project::copy("js-cases/vitest-values");
    let file = project.path().join("scan.test.js");
    std::fs::write(
        &file,
        "test('plain', () => {});\n\
         test(`costs $5`, () => {});\n\
         test(`computed ${1 + 1}`, () => {});\n\
         test.skipIf(process.platform === 'win32')('not on windows', () => {});\n\
         test.runIf(true)(\"if so\", () => {});\n\
         describe.each([1, 2])('row %i', () => {});\n",
    )
    .unwrap();
    let script = "const { scanLines } = require(process.argv[1]);\
                  const { tests, suites } = scanLines(process.argv[2]);\
                  console.log(JSON.stringify([[...tests], [...suites]]));";
    let out = std::process::Command::new("node")
        .args([
            "-e",
            script,
            &path("runners/tcrunner-common.cjs").to_string_lossy(),
            &file.to_string_lossy(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        found,
        serde_json::json!([
            [
                ["plain", 1],
                ["costs $5", 2],
                ["not on windows", 4],
                ["if so", 5]
            ],
            []
        ])
    );
}

/// A target naming a describe runs every test in it, a title with a newline
/// too: the pattern's `.` stopped at the newline, and the test was left out.
#[test]
fn a_describe_target_runs_a_test_whose_title_spans_lines() {
    for (name, case, import) in [
        ("jest30", "jest-titles", ""),
        (
            "vitest4",
            "vitest-no-tests",
            "import { describe, test, expect } from 'vitest';\n",
        ),
    ] {
        let project = case_project(case, name);
        project.write(
            "lines.test.js",
            &format!(
                "{import}describe('block', () => {{\n\
                 \x20 test('plain', () => {{}});\n\
                 \x20 test('two\\nlines', () => {{ expect(1).toBe(2); }});\n\
                 }});\n"
            ),
        );
        let (code, stream) = run_in(project.path(), name, &["--target", "lines.test.js::block"]);
        assert_clean(&stream);
        assert_eq!(
            verdicts(&stream),
            [
                (
                    "lines.test.js > block > plain".to_owned(),
                    "passed".to_owned()
                ),
                (
                    "lines.test.js > block > two\nlines".to_owned(),
                    "failed".to_owned()
                ),
            ],
            "{name}"
        );
        assert_eq!(code, 1, "{name}");
    }
}

/// vitest's `--bail` skips the rest of a file: those tests are skipped, as
/// vitest counts them. Its own updates came after our runner had ended them,
/// and started them again, as tests of their own at the root that "crashed".
#[test]
fn tests_vitest_bail_skips_are_skipped_once() {
    for name in ["vitest3", "vitest4"] {
        let project = case_project("vitest-no-tests", name);
        project.write(
            "bail.test.js",
            "import { test, expect } from 'vitest';\n\
             test('first fails', () => { expect(1).toBe(2); });\n\
             test('second', () => {});\n\
             test('third', () => {});\n",
        );
        let (code, stream) = run_in(
            project.path(),
            name,
            &["--path", "bail.test.js", "--", "--bail=1"],
        );
        assert_clean(&stream);
        assert_eq!(
            verdicts(&stream),
            [
                ("bail.test.js > first fails", "failed"),
                ("bail.test.js > second", "ignored"),
                ("bail.test.js > third", "ignored"),
            ]
            .map(|(path, verdict)| (path.to_owned(), verdict.to_owned())),
            "{name}"
        );
        assert_eq!(code, 1, "{name}");
    }
}

/// A vitest `globalSetup` that throws stops vitest before any test, after
/// our reporter loaded: it was told as a run that found no tests (exit 5),
/// its error only on stderr. It is a failed node, as jest's is.
#[test]
fn a_vitest_global_setup_that_throws_is_a_failed_node() {
    for name in ["vitest3", "vitest4"] {
        let project = case_project("vitest-global-setup", name);
        let (code, stream) = run_in(project.path(), name, &[]);
        assert_clean(&stream);
        let found = tests_by_path(&stream);
        let keys: Vec<&str> = found.keys().map(String::as_str).collect();
        assert_eq!(keys, ["vitest did not start"], "{name}");
        let message = found["vitest did not start"]
            .message
            .as_deref()
            .unwrap_or_default();
        assert_eq!(
            message, "vitest failed before running any test: Error: no database at localhost:5432",
            "{name}"
        );
        assert_eq!(code, 73, "{name}");
    }
}

/// Under CI vitest fails a `.only` test as it collects it, and no update
/// says so: the test was declared and never finished, and the run failed
/// with no node saying why.
#[test]
fn a_vitest_only_test_failed_under_ci_is_a_failed_node() {
    for name in ["vitest3", "vitest4"] {
        let project = case_project("vitest-no-tests", name);
        project.write(
            "only.test.js",
            "import { describe, test } from 'vitest';\n\
             describe('block', () => {\n\
             \x20 test.only('focused', () => {});\n\
             \x20 test('other', () => {});\n\
             });\n",
        );
        let out =
            output(command_in(project.path(), name, &["--path", "only.test.js"]).env("CI", "true"));
        assert_clean(&out.stdout);
        let found = tests_by_path(&out.stdout);
        let focused = &found["only.test.js > block > focused"];
        assert_eq!(focused.verdict, "error", "{name}: {found:?}");
        let message = focused.message.as_deref().unwrap_or_default();
        assert!(
            message.contains("Unexpected .only modifier"),
            "{name}: {message}"
        );
        assert_eq!(
            found["only.test.js > block > other"].verdict, "ignored",
            "{name}"
        );
        assert_eq!(out.status.code(), Some(1), "{name}");
    }
}

/// A Yarn Plug'n'Play project has no `node_modules` to load the framework
/// from: one line says so and what to change, exit 69.
#[test]
fn a_yarn_plug_n_play_project_is_told_how_to_install() {
    let dir = util::repo().join("target/tmp").join(util::unique("pnp"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("package.json"),
        r#"{"devDependencies": {"jest": "30"}}"#,
    )
    .unwrap();
    std::fs::write(dir.join(".pnp.cjs"), "").unwrap();
    let out = output(&mut tcrunner(&["--project", dir.to_str().unwrap()]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(69), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("Plug'n'Play") && stderr.contains("nodeLinker: node-modules"),
        "{stderr}"
    );
}

/// A test's raw `process.stdout.write` comes after the test's start and
/// before its end though tcrunner reads all three late, after the end of
/// the test's file: the file stops tcrunner once it waits on every pipe
/// (the reporter's `written` lines place the text, and nothing drained
/// before the start pulls it in front).
#[test]
fn raw_stdout_keeps_its_place_when_tcrunner_reads_late() {
    assert_written_inside_the_test(
        "late-reader.test.js",
        "written while the reader is stopped\n",
    );
}

/// What a child process a test spawns with inherited stdio writes (past
/// the reporter's counts of its own text) comes before the test's end,
/// though tcrunner reads both late: the test stops tcrunner first.
#[test]
fn a_childs_output_keeps_its_place_when_tcrunner_reads_late() {
    assert_written_inside_the_test("child-output.test.js", "written by a child\n");
}

/// What tests write below `process.stdout` (`fs.writeSync` to 1, as pino
/// does) is theirs, though tcrunner reads it late, after the events of the
/// tests after them: the reporter's `written` counts take those bytes in.
#[test]
fn raw_descriptor_writes_keep_their_test_when_tcrunner_reads_late() {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-late-reader", name);
        let json = project.path().join("result.json");
        let json_arg = json.to_str().unwrap();
        let args = [
            "--path",
            "raw-fd.test.js",
            "--json",
            json_arg,
            "--",
            "--runInBand",
        ];
        let (code, stream) = run_in(project.path(), name, &args);
        assert_eq!(code, 0, "{name}: {}", String::from_utf8_lossy(&stream));
        let got = util::result_tests(&json, ["stdout", "stderr"]);
        let mut want: Vec<(String, String, String)> = ["one", "two", "three"]
            .map(|n| (n.into(), format!("fd out of {n}\n"), String::new()))
            .to_vec();
        want.push(("lets the reader go on".into(), String::new(), String::new()));
        assert_eq!(got, want, "{name}");
    }
}

/// Runs the one test of `file` in js-cases/jest-late-reader in band on
/// jest 29 and 30, and asserts that `text` comes between its start and its
/// end.
fn assert_written_inside_the_test(file: &str, text: &str) {
    for name in ["jest29", "jest30"] {
        let project = case_project("jest-late-reader", name);
        let args = ["--path", file, "--", "--runInBand"];
        let (code, stream) = run_in(project.path(), name, &args);
        assert_eq!(code, 0, "{name}: {}", String::from_utf8_lossy(&stream));
        assert_clean(&stream);
        let stream = String::from_utf8(stream).unwrap();
        let at = |needle: &str| {
            stream
                .find(needle)
                .unwrap_or_else(|| panic!("{name}: no {needle:?} in\n{stream}"))
        };
        let written = at(text);
        assert!(written > at("##teamcity[testStarted"), "{name}:\n{stream}");
        assert!(written < at("##teamcity[testFinished"), "{name}:\n{stream}");
    }
}

/// A target names a file whose name holds `::` (the longest part before a
/// `::` that is a file), and a target whose test is gone (renamed since,
/// spelt otherwise) fails the run with exit 5: jest and vitest exit 0
/// there, counting the tests its pattern leaves out as skipped, and
/// tcrunner leaves those out of the tree, which would be a green empty run.
#[test]
fn targets_name_files_with_colons_and_a_target_selecting_nothing_fails() {
    for (name, case, import) in [
        ("jest30", "jest-bare", ""),
        ("vitest4", "vitest-bare", "import { test } from 'vitest';\n"),
    ] {
        let project = case_project(case, name);
        std::fs::write(
            project.path().join("a::b.test.js"),
            format!("{import}test('first', () => {{}});\ntest('second', () => {{}});\n"),
        )
        .unwrap();
        let (code, stream) = run_in(project.path(), name, &["--target", "a::b.test.js::first"]);
        assert_clean(&stream);
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(found, ["a::b.test.js > first"], "{name}");
        assert_eq!(code, 0, "{name}");

        let (code, stream) = run_in(project.path(), name, &["--target", "a::b.test.js::firs"]);
        assert_clean(&stream);
        assert!(tests_by_path(&stream).is_empty(), "{name}");
        assert_eq!(code, 5, "{name}: {}", String::from_utf8_lossy(&stream));
        let told = String::from_utf8_lossy(&stream).contains("the target selects none");
        assert!(told, "{name}: {}", String::from_utf8_lossy(&stream));
        // The framework's own allowance stands.
        let args = ["--target", "a::b.test.js::firs", "--", "--passWithNoTests"];
        let (code, _) = run_in(project.path(), name, &args);
        assert_eq!(code, 0, "{name}");
    }
}

/// Tests a target's name pattern leaves out are not in the tree, also
/// those under a `describe.skip` whose mode vitest leaves as declared (a
/// `test.only`, a `test.todo`): they were shown as skipped.
#[test]
fn a_vitest_target_leaves_out_the_tests_of_skipped_blocks_it_does_not_name() {
    for name in ["vitest4", "vitest5"] {
        let project = case_project("vitest-no-tests", name);
        project.write(
            "modes.test.js",
            "import { describe, test } from 'vitest';\n\
             describe.skip('skipped block', () => {\n\
             \x20 test.only('only inside', () => {});\n\
             \x20 test.todo('todo inside');\n\
             \x20 test('plain inside', () => {});\n\
             });\n\
             test('named', () => {});\n\
             test('other', () => {});\n",
        );
        let out = output(
            command_in(project.path(), name, &["--target", "modes.test.js::named"])
                .env_remove("CI"),
        );
        assert_clean(&out.stdout);
        let found: Vec<String> = tests_by_path(&out.stdout).into_keys().collect();
        assert_eq!(found, ["modes.test.js > named"], "{name}");
    }
}

/// TeamCity takes plain text between a test's start and finish as its
/// output only when the start says `captureStandardOutput='true'`: jest
/// writes a verbose run's console (a one-file run's) as the tests run, so
/// its tests start so; a run of two files hands the console to the reporter
/// and its tests do not.
#[test]
fn a_verbose_jest_runs_tests_own_their_console_on_teamcity() {
    let project = case_project("jest-console", "jest30");
    for (args, live) in [
        (
            &["--format", "teamcity", "--path", "console.test.js"][..],
            "true",
        ),
        (&["--format", "teamcity"][..], "false"),
    ] {
        let (_, stream) = run_in(project.path(), "jest30", args);
        assert_clean(&stream);
        let starts: Vec<_> = messages(&stream)
            .into_iter()
            .filter(|m| m.name == "testStarted")
            .collect();
        assert!(!starts.is_empty(), "{args:?}");
        assert!(
            starts
                .iter()
                .all(|m| m.get("captureStandardOutput") == Some(live)),
            "{args:?}: {}",
            String::from_utf8_lossy(&stream)
        );
    }
}
