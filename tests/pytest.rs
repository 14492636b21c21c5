//! The real binary on real pytest (8 and 9) against the fixture project in
//! tests/fixtures/pytest, whose expected outcomes are written once in
//! expected.json; every stream is checked with `tcrunner check`, and the
//! verdicts are compared with pytest's own JUnit report of the same run.
mod util;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use util::{
    assert_clean, assert_matches_model, messages, output, path, python, tcrunner, tests_by_path,
    verdict, Project, Tcrunner,
};

const FIXTURE: &str = "tests/fixtures/pytest";

/// Runs tcrunner on the fixture with pytest `version`.
fn run_full(version: u32, args: &[&str]) -> std::process::Output {
    let project = path(FIXTURE);
    let python = python(version);
    let mut all = vec![
        "--project",
        project.to_str().unwrap(),
        "--python",
        python.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    output(&mut tcrunner(&all))
}

/// Runs tcrunner on the fixture; returns (exit code, stdout).
fn run(version: u32, args: &[&str]) -> (i32, Vec<u8>) {
    let out = run_full(version, args);
    (out.status.code().unwrap_or(-1), out.stdout)
}

/// Splits a pytest node id on `::` outside brackets, and the file part on `/`.
fn id_to_path(id: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let bytes = id.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'[' => depth += 1,
            b']' => depth -= 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => {
                parts.push(id[start..i].to_owned());
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(id[start..].to_owned());
    let file = parts.remove(0);
    file.split('/').map(str::to_owned).chain(parts).collect()
}

/// The model's tests for this run, keyed like [`tests_by_path`].
fn model(version: u32, doctests: bool) -> BTreeMap<String, serde_json::Value> {
    let model = util::json(&path(&format!("{FIXTURE}/expected.json")));
    let mut tests = BTreeMap::new();
    for (id, spec) in model["tests"].as_object().unwrap() {
        let only: Vec<&str> = spec["only"]
            .as_array()
            .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
            .unwrap_or_default();
        if only.contains(&"pytest9") && version < 9
            || only.contains(&"doctest-modules") && !doctests
        {
            continue;
        }
        let mut spec = spec.clone();
        if version < 9 {
            if let Some(over) = spec.get("pytest8").cloned() {
                for (k, v) in over.as_object().unwrap() {
                    spec[k] = v.clone();
                }
            }
        }
        let mut components = id_to_path(id);
        if components.last().is_some_and(|c| c == "<collection>") {
            let word = if spec["outcome"] == "skipped" {
                "skipped"
            } else {
                "error"
            };
            *components.last_mut().unwrap() = format!("<collection {word}>");
        }
        tests.insert(components.join(" > "), spec);
    }
    tests
}

fn outcomes_match_the_model(version: u32) {
    let (code, stream) = run(version, &[]);
    assert_eq!(code, 1, "tests fail on purpose: pytest's exit code 1");
    assert_clean(&stream);
    assert_matches_model(
        &format!("pytest {version}"),
        &tests_by_path(&stream),
        &model(version, false),
    );
}

#[test]
fn pytest9_outcomes_match_the_model() {
    outcomes_match_the_model(9);
}

#[test]
fn pytest8_outcomes_match_the_model() {
    outcomes_match_the_model(8);
}

#[test]
fn doctests_run_with_doctest_modules() {
    let (code, stream) = run(9, &["--", "--doctest-modules"]);
    assert_eq!(code, 1);
    assert_clean(&stream);
    assert_matches_model(
        "pytest 9 --doctest-modules",
        &tests_by_path(&stream),
        &model(9, true),
    );
}

#[test]
fn xdist_workers_interleave_into_the_same_verdicts() {
    let (code, stream) = run(9, &["--", "-n", "2"]);
    assert_eq!(code, 1);
    assert_clean(&stream);
    // As PyCharm's runner in parallel mode: the IDE takes the reported
    // durations; a run in one process says nothing of it.
    let first = |stream: &[u8]| {
        String::from_utf8_lossy(stream)
            .lines()
            .next()
            .map(str::to_owned)
    };
    assert_eq!(
        first(&stream).as_deref(),
        Some("##teamcity[enteredTheMatrix durationStrategy='manual']")
    );
    let (_, sequential) = run(9, &["--", "-n", "0"]);
    assert_eq!(
        first(&sequential).as_deref(),
        Some("##teamcity[enteredTheMatrix]")
    );
    let found = tests_by_path(&stream);
    let model = model(9, false);
    // xdist reports collection problems per worker, and its controller sees
    // test ids only: compare every test the model has outside collectors.
    for (key, spec) in model.iter().filter(|(k, _)| !k.contains("<collection")) {
        let got = found
            .get(key)
            .unwrap_or_else(|| panic!("{key} missing under xdist"));
        assert_eq!(
            got.verdict,
            verdict(spec["outcome"].as_str().unwrap()),
            "{key}"
        );
    }
    // Each file's suite closes when its last test ends, not when the run
    // does: pytest's closing line (`… passed in 1.2s`) comes after them all,
    // at the root, not inside the output of the last file left open.
    let text = String::from_utf8_lossy(&stream);
    let last_suite_end = text.rfind("##teamcity[testSuiteFinished").unwrap();
    let summary = text.rfind(" passed").expect("pytest's summary line");
    assert!(last_suite_end < summary, "{text}");
}

#[test]
fn verdicts_agree_with_pytests_own_junit_report() {
    let dir = std::env::temp_dir().join(format!("tcrunner-junit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let xml = dir.join("junit.xml");
    let status = std::process::Command::new(python(9))
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
        ])
        .arg(format!("--junitxml={}", xml.display()))
        .current_dir(path(FIXTURE))
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    let junit = std::fs::read_to_string(&xml).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();

    let (_, stream) = run(9, &[]);
    // Our tests keyed as JUnit's classname.name: folders and the module
    // (without .py) and classes dotted, then the test name.
    let mut ours: BTreeMap<String, String> = BTreeMap::new();
    for (key, outcome) in tests_by_path(&stream) {
        let parts: Vec<&str> = key.split(" > ").collect();
        // The file is the first component with an extension (test_a.py, cases.yaml).
        let Some(file_at) = parts.iter().position(|p| p.contains('.')) else {
            continue;
        };
        if parts.len() - file_at < 2 || key.contains("<collection") {
            continue;
        }
        let mut dotted: Vec<String> = parts[..=file_at]
            .iter()
            .map(|p| p.trim_end_matches(".py").to_owned())
            .collect();
        dotted.extend(parts[file_at + 1..].iter().map(|p| (*p).to_owned()));
        let verdict = if outcome.verdict == "error" {
            "failed".to_owned()
        } else {
            outcome.verdict
        };
        ours.insert(dotted.join("."), verdict);
    }
    let case = regex::Regex::new(
        r#"(?s)<testcase classname="([^"]*)" name="([^"]*)"[^>]*?(/>|>(.*?)</testcase>)"#,
    )
    .unwrap();
    let mut compared = 0;
    for c in case.captures_iter(&junit) {
        let (classname, name) = (&c[1], unescape_xml(&c[2]));
        if classname.is_empty() {
            continue; // collection errors: named after the module, checked by the model test
        }
        let body = c.get(4).map_or("", |m| m.as_str());
        let theirs = if body.contains("<failure") || body.contains("<error") {
            "failed"
        } else if body.contains("<skipped") {
            "ignored"
        } else {
            "passed"
        };
        let key = format!("{classname}.{name}");
        let Some(mine) = ours.get(&key) else {
            panic!(
                "pytest reported {key}, tcrunner did not; ours: {:#?}",
                ours.keys().collect::<Vec<_>>()
            )
        };
        assert_eq!(mine, theirs, "{key}");
        compared += 1;
    }
    assert!(compared >= 40, "only {compared} JUnit test cases compared");
}

fn unescape_xml(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[test]
fn targets_of_every_form_select_exactly_their_tests() {
    let cases: &[(&str, &[&str])] = &[
        (
            "tests/test_basic.py::test_add",
            &["tests > test_basic.py > test_add"],
        ),
        (
            "tests/unit/test_classes.py::TestOuter.TestInner.test_inner",
            &["tests > unit > test_classes.py > TestOuter > TestInner > test_inner"],
        ),
        (
            "tests/unit/test_params.py::test_eval[6*9-42]",
            &["tests > unit > test_params.py > test_eval[6*9-42]"],
        ),
        (
            "tests.test_basic.test_add",
            &["tests > test_basic.py > test_add"],
        ),
    ];
    for (target, want) in cases {
        let (_, stream) = run(9, &["--target", target]);
        assert_clean(&stream);
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(&found, want, "--target {target}");
    }
}

/// A custom collector's items may hold dots in their names (pyyaml's
/// data-driven tests, `case.data`): their ids, as a run reports them, run
/// exactly those items again as targets.
#[test]
fn ids_with_dotted_item_names_run_again_as_targets() {
    let project = Project::copy("faults/pytest");
    project.write(
        "dotted/conftest.py",
        "import pytest\n\n\
         class DataItem(pytest.Item):\n\
         \x20   def runtest(self):\n\
         \x20       pass\n\n\
         class DataCollector(pytest.Collector):\n\
         \x20   def collect(self):\n\
         \x20       return [DataItem.from_parent(self, name=n) for n in ('case.data', 'other.data')]\n\n\
         @pytest.hookimpl(hookwrapper=True)\n\
         def pytest_pycollect_makeitem(collector, name, obj):\n\
         \x20   outcome = yield\n\
         \x20   if getattr(obj, 'data_driven', False):\n\
         \x20       outcome.force_result(DataCollector.from_parent(collector, name=name))\n",
    );
    project.write(
        "dotted/test_data.py",
        "def test_loader():\n    pass\n\ntest_loader.data_driven = True\n",
    );
    let python = python(9);
    let run = |target: &str| {
        let out = output(&mut tcrunner(&[
            "--project",
            project.path().to_str().unwrap(),
            "--python",
            python.to_str().unwrap(),
            "--target",
            target,
        ]));
        assert_clean(&out.stdout);
        let found: Vec<String> = tests_by_path(&out.stdout).into_keys().collect();
        (out.status.code(), found)
    };
    assert_eq!(
        run("dotted/test_data.py::test_loader::case.data"),
        (
            Some(0),
            vec!["dotted > test_data.py > test_loader > case.data".to_owned()]
        )
    );
    assert_eq!(run("dotted/test_data.py::test_loader").1.len(), 2);
}

#[test]
fn paths_select_a_file_or_a_folder() {
    let (_, stream) = run(9, &["--path", "tests/unit/test_classes.py"]);
    assert_clean(&stream);
    let found = tests_by_path(&stream);
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(found
        .keys()
        .all(|k| k.starts_with("tests > unit > test_classes.py > ")));

    let (_, stream) = run(9, &["--path", "tests/unit"]);
    assert_clean(&stream);
    let found = tests_by_path(&stream);
    assert!(
        found.len() > 10 && found.keys().all(|k| k.starts_with("tests > unit > ")),
        "{found:#?}"
    );
}

#[test]
fn offset_moves_every_id_and_raw_args_reach_pytest() {
    let (code, stream) = run(
        9,
        &[
            "--offset",
            "100",
            "--path",
            "tests/test_basic.py",
            "--",
            "-k",
            "add",
        ],
    );
    assert_eq!(code, 0, "only test_add is selected and it passes");
    // Embedded as an outer runner would embed it: node 100 is the outer's.
    let mut embedded =
        b"##teamcity[testSuiteStarted nodeId='100' parentNodeId='0' name='outer']\n".to_vec();
    embedded.extend_from_slice(&stream);
    embedded.extend_from_slice(b"##teamcity[testSuiteFinished nodeId='100']\n");
    assert_clean(&embedded);
    // `check --offset` checks the stream alone as embedded under node 100.
    let (alone, report) = util::check_with(&["--offset", "100"], &stream);
    assert_eq!(alone, Some(0), "{report}");
    let (unembedded, report) = util::check(&stream);
    assert_eq!(unembedded, Some(1), "{report}");
    assert!(report.contains("unknown parent"), "{report}");
    let msgs = messages(&stream);
    // The outer run owns the start and end of testing.
    assert!(!msgs
        .iter()
        .any(|m| m.name == "testingStarted" || m.name == "testingFinished"));
    let first = msgs.iter().find(|m| m.name == "testSuiteStarted").unwrap();
    assert_eq!(
        (first.get("nodeId"), first.get("parentNodeId")),
        (Some("101"), Some("100"))
    );
    let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
    assert_eq!(found, ["tests > test_basic.py > test_add"]);
}

#[test]
fn launch_line_names_the_arguments_and_folder() {
    let (_, stream) = run(
        9,
        &["--target", "tests/test_basic.py::test_add", "--", "-x"],
    );
    let text = String::from_utf8_lossy(&stream);
    let line = text
        .lines()
        .find(|l| l.starts_with("Launching pytest with arguments"))
        .expect("launch line");
    assert!(
        line.ends_with(&format!(
            "-x tests/test_basic.py::test_add in {}",
            path(FIXTURE).display()
        )),
        "{line}"
    );
}

/// `-xvs` is `-x -v -s`: pytest stops at the first failure (so no
/// `--continue-on-collection-errors`) and keeps its verbosity (no `-q`).
#[test]
fn combined_short_flags_are_understood() {
    let launch = |raw: &str| -> String {
        let (_, stream) = run(9, &["--target", "tests/test_basic.py::test_add", "--", raw]);
        String::from_utf8_lossy(&stream)
            .lines()
            .find(|l| l.starts_with("Launching pytest with arguments"))
            .expect("launch line")
            .to_owned()
    };
    let line = launch("-xvs");
    assert!(
        !line.contains("--continue-on-collection-errors") && !line.contains(" -q "),
        "{line}"
    );
    let line = launch("-s");
    assert!(
        line.contains("--continue-on-collection-errors") && line.contains(" -q "),
        "{line}"
    );
}

/// `--sw-skip` (`--stepwise-skip`) turns stepwise on, so it stops early as
/// `--sw` does: pytest keeps its own stop at a collection error instead of
/// running on past it with `--continue-on-collection-errors`.
#[test]
fn stepwise_skip_stops_early_as_stepwise_does() {
    let tested = |switch: &str| -> Vec<String> {
        // Stepwise keeps its place in pytest's cache: a fresh copy each time.
        let project = Project::copy("pytest");
        let run = Tcrunner::pytest(project.path())
            .args(["--", switch])
            .run(Duration::from_secs(120));
        run.assert_clean();
        let launch = run
            .text()
            .lines()
            .find(|l| l.starts_with("Launching pytest with arguments"))
            .expect("launch line")
            .to_owned();
        assert!(
            !launch.contains("--continue-on-collection-errors"),
            "{launch}"
        );
        tests_by_path(&run.stdout).into_keys().collect()
    };
    let stepwise = tested("--sw");
    assert!(
        stepwise.iter().all(|t| t.contains("<collection ")) && !stepwise.is_empty(),
        "--sw stops after collection: {stepwise:?}"
    );
    for switch in ["--sw-skip", "--stepwise-skip"] {
        assert_eq!(tested(switch), stepwise, "{switch}");
    }
}

/// `-x` in an ini file's `addopts` (or `PYTEST_ADDOPTS`), which tcrunner
/// does not read: pytest stops at the collection error before running a
/// test, as without tcrunner, instead of running on past it with the
/// `--continue-on-collection-errors` tcrunner added.
#[test]
fn stopping_early_in_addopts_stops_at_a_collection_error() {
    let project = Project::copy("pytest-subtests");
    project
        .write("pytest.ini", "[pytest]\naddopts = -x\n")
        .write("test_a_good.py", "def test_good():\n    pass\n")
        .write("test_b_broken.py", "import not_a_module_anywhere\n");
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_a_good.py", "--path", "test_b_broken.py"])
        .run(Duration::from_secs(120));
    run.assert_clean();
    run.assert_code(2);
    let tests: Vec<String> = tests_by_path(&run.stdout).into_keys().collect();
    assert_eq!(tests, ["test_b_broken.py > <collection error>"]);
}

/// Each test's full TeamCity name (its flow's open suites, then its own
/// name), counted: a flow inherits nothing, so what a test is called can
/// only come from the flow it is reported in.
fn teamcity_names(stream: &[u8]) -> BTreeMap<String, usize> {
    let mut open: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut names = BTreeMap::new();
    for m in messages(stream) {
        let flow = m.get("flowId").unwrap_or_default().to_owned();
        let name = m.get("name").unwrap_or_default().to_owned();
        match m.name.as_str() {
            "testSuiteStarted" => open.entry(flow).or_default().push(name),
            "testSuiteFinished" => {
                let stack = open.entry(flow).or_default();
                assert_eq!(stack.pop().as_deref(), Some(name.as_str()));
            }
            "testStarted" => {
                let mut full = open.get(&flow).cloned().unwrap_or_default();
                full.push(name);
                *names.entry(full.join(": ")).or_insert(0) += 1;
            }
            _ => {}
        }
    }
    names
}

/// Tests that run side by side in one file (xdist) get flows of their own,
/// which open their file and class suites themselves: every test has the
/// name it has in a sequential run, once, whichever worker ran it; subtests
/// carry their test's name.
#[test]
fn teamcity_names_do_not_depend_on_scheduling() {
    let (_, sequential) = run(9, &["--format", "teamcity"]);
    let expected = teamcity_names(&sequential);
    assert!(expected.values().all(|&n| n == 1), "{expected:?}");
    assert!(
        expected
            .keys()
            .any(|k| k.contains("test_fixture_subtests [check] (i=1)")),
        "{expected:?}"
    );
    for _ in 0..2 {
        let (_, parallel) = run(9, &["--format", "teamcity", "--", "-n", "2"]);
        assert_clean(&parallel);
        assert_eq!(teamcity_names(&parallel), expected);
    }
}

#[test]
fn the_teamcity_dialect_reports_the_same_verdicts_by_name() {
    let (code, stream) = run(9, &["--format", "teamcity"]);
    assert_eq!(code, 1);
    assert_clean(&stream);
    let msgs = messages(&stream);
    assert!(
        msgs.iter().all(|m| m.get("nodeId").is_none()),
        "no ids in the teamcity dialect"
    );
    let count = |name: &str| msgs.iter().filter(|m| m.name == name).count();
    let model = model(9, false);
    let failed = model
        .values()
        .filter(|s| matches!(verdict(s["outcome"].as_str().unwrap()), "failed" | "error"))
        .count();
    let ignored = model
        .values()
        .filter(|s| verdict(s["outcome"].as_str().unwrap()) == "ignored")
        .count();
    assert_eq!(count("testFailed"), failed);
    assert_eq!(count("testIgnored"), ignored);
    assert_eq!(count("testStarted"), model.len());
    assert!(msgs
        .iter()
        .filter(|m| m.name == "testSuiteStarted")
        .all(|m| !m.get("name").unwrap().starts_with('/')));
}

#[test]
fn what_to_run_errors_are_one_line_with_documented_codes() {
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &[
                "--path",
                "tests",
                "--target",
                "tests/test_basic.py::test_add",
            ],
            64,
            "--target",
        ),
        (
            &["--target", "nope.module.Class"],
            64,
            "--target nope.module.Class",
        ),
        (&["--path", "no/such/dir"], 66, "--path no/such/dir"),
        (&["--target", "::"], 64, "no file before `::`"),
        (&["--target", "::test_add"], 64, "no file before `::`"),
    ];
    for (args, code, mention) in cases {
        let out = run_full(9, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {stderr}");
        assert_eq!(
            stderr.trim().lines().count(),
            1,
            "{args:?}: one line: {stderr}"
        );
        assert!(
            stderr.starts_with("tcrunner: ") && stderr.contains(mention),
            "{args:?}: {stderr}"
        );
    }
}

/// An `--offset` whose ids could not stay exact (within 2^32 of 2^53,
/// where the first id, 2^53 + 1, reads as its parent's) or would wrap
/// around to the root's 0 is refused (exit 64), for a run and for `check`.
#[test]
fn an_offset_too_large_for_its_ids_is_refused() {
    for args in [
        &["--offset", "18446744073709551615"][..],
        &["check", "--offset", "9007199254740992", "/dev/null"],
        &["check", "--offset", "9007194959773697", "/dev/null"],
    ] {
        let out = util::output(&mut util::tcrunner(args));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{args:?}: {stderr}");
        assert!(stderr.contains("--offset"), "{args:?}: {stderr}");
    }
    let out = util::output(&mut util::tcrunner(&[
        "check",
        "--offset",
        "9007194959773696",
        "/dev/null",
    ]));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn collect_only_declares_the_tree_without_running_it() {
    let (_, stream) = run(9, &["--collect-only"]);
    assert_clean(&stream);
    let msgs = messages(&stream);
    let count: usize = msgs
        .iter()
        .find(|m| m.name == "testCount")
        .and_then(|m| m.get("count"))
        .expect("testCount")
        .parse()
        .unwrap();
    let declared = msgs.iter().filter(|m| m.name == "suiteTreeNode").count();
    // Only the collection problems run (they have verdicts already).
    let started: Vec<&str> = msgs
        .iter()
        .filter(|m| m.name == "testStarted")
        .map(|m| m.get("name").unwrap())
        .collect();
    assert_eq!(started, ["<collection error>", "<collection skipped>"]);
    assert_eq!(
        declared + started.len(),
        count,
        "every collected test is declared once, and the count has the collection problems"
    );
    assert_eq!(msgs.iter().filter(|m| m.name == "treeEnded").count(), 1);
    let opened = msgs.iter().filter(|m| m.name == "suiteTreeStarted").count();
    let closed = msgs.iter().filter(|m| m.name == "suiteTreeEnded").count();
    assert!(
        opened > 5 && opened == closed,
        "{opened} suites opened, {closed} closed"
    );
    // A folder opened live for a collection problem holds the declared tree
    // of its other files; it is not declared a second time.
    let hints = |name: &str| -> Vec<&str> {
        msgs.iter()
            .filter(|m| m.name == name)
            .filter_map(|m| m.get("locationHint"))
            .collect()
    };
    let live = hints("testSuiteStarted");
    assert!(!live.is_empty());
    let twice: Vec<&str> = hints("suiteTreeStarted")
        .into_iter()
        .filter(|h| live.contains(h))
        .collect();
    assert!(twice.is_empty(), "suites both live and declared: {twice:?}");
}

#[test]
fn pytests_own_collect_only_switch_declares_the_tree_too() {
    // `--co` among pytest's arguments runs nothing, as tcrunner's
    // `--collect-only` does: the same declared tree and exit code, not an
    // empty run that "ran no tests" (exit 5).
    let ours = run_full(9, &["--collect-only"]);
    for switch in ["--co", "--collect-only"] {
        let theirs = run_full(9, &["--", switch]);
        assert_clean(&theirs.stdout);
        assert_eq!(
            theirs.status.code(),
            ours.status.code(),
            "{switch}: {}",
            String::from_utf8_lossy(&theirs.stderr)
        );
        assert_eq!(
            messages(&theirs.stdout),
            messages(&ours.stdout),
            "{switch}: the stream differs from --collect-only's"
        );
    }
}

#[test]
fn tests_carry_their_file_and_one_based_definition_line() {
    let (_, stream) = run(9, &["--target", "tests/test_basic.py::test_add"]);
    let started = messages(&stream)
        .into_iter()
        .find(|m| m.name == "testStarted")
        .expect("a test");
    let file = path(&format!("{FIXTURE}/tests/test_basic.py"));
    let source = std::fs::read_to_string(&file).unwrap();
    let line = source
        .lines()
        .position(|l| l.starts_with("def test_add("))
        .unwrap()
        + 1;
    assert_eq!(started.get("path"), Some(file.to_str().unwrap()));
    assert_eq!(started.get("lineno"), Some(line.to_string().as_str()));
    let hint = started.get("locationHint").unwrap();
    assert_eq!(
        hint,
        format!(
            "python<{}>://tests.test_basic.test_add",
            path(FIXTURE).display()
        )
    );
}

#[test]
fn brackets_in_a_folder_name_are_not_parameters() {
    // pytest's parameters start after the file's path: `cases[v2]` is a
    // folder, with and without xdist (whose controller knows only node ids).
    let project = Project::copy("pytest");
    project.write(
        "tests/cases[v2]/test_bracket_folder.py",
        "import pytest\n\n\n@pytest.mark.parametrize('n', [1, 2])\ndef test_in_bracket_folder(n):\n    assert n\n",
    );
    for workers in [&[][..], &["-n", "2"][..]] {
        let run = Tcrunner::pytest(project.path())
            .args(["--", "-k", "in_bracket_folder"])
            .args(workers)
            .run(Duration::from_secs(120));
        // The fixture's broken module is collected (and fails) as well.
        run.assert_code(1).assert_clean();
        let found: Vec<String> = tests_by_path(&run.stdout)
            .into_keys()
            .filter(|k| !k.contains("<collection"))
            .collect();
        let file = "tests > cases[v2] > test_bracket_folder.py";
        assert_eq!(
            found,
            [
                format!("{file} > test_in_bracket_folder[1]"),
                format!("{file} > test_in_bracket_folder[2]"),
            ],
            "{workers:?}"
        );
        let started = messages(&run.stdout)
            .into_iter()
            .find(|m| m.name == "testStarted" && m.get("name") == Some("test_in_bracket_folder[1]"))
            .expect("a test");
        assert_eq!(
            started.get("locationHint"),
            Some(
                format!(
                    "python<{}>://tests.cases[v2].test_bracket_folder.test_in_bracket_folder",
                    project.path().display()
                )
                .as_str()
            ),
            "{workers:?}"
        );
    }
}

/// A configuration in another folder (`-c ci/ci.ini`) makes that folder
/// pytest's rootdir, but node ids stay relative to where pytest was asked
/// to look: every hint names the folder its dotted name resolves under,
/// and every file path is the real one, with and without xdist, for tests
/// and for a module that fails to import.
#[test]
fn hints_resolve_where_the_tests_are_when_the_rootdir_is_elsewhere() {
    let project = Project::copy("pytest-edges");
    project.write("ci/ci.ini", "[pytest]\nmarkers = slow\n");
    project.write(
        "suite/test_inside.py",
        "class TestIn:\n    def test_in(self):\n        pass\n\n\ndef test_out():\n    assert 0\n",
    );
    project.write("suite/test_broken.py", "import no_such_module\n");
    // Ids relative to the project (`.`), and to `suite` itself.
    for (args, base) in [
        (
            &[".", "-k", "inside or broken"][..],
            project.path().to_path_buf(),
        ),
        (&["suite"][..], project.path().join("suite")),
    ] {
        for workers in [&[][..], &["-n", "2"][..]] {
            let what = format!("{args:?} {workers:?}");
            let run = Tcrunner::pytest(project.path())
                .args(["--", "-c", "ci/ci.ini"])
                .args(args)
                .args(workers)
                .run(Duration::from_secs(120));
            run.assert_clean();
            let all = messages(&run.stdout);
            let want = format!("python<{}>://", base.display());
            let mut seen = Vec::new();
            for message in all
                .iter()
                .filter(|m| m.name == "testStarted" || m.name == "testSuiteStarted")
            {
                let hint = message.get("locationHint").unwrap_or_default();
                let dotted = hint
                    .strip_prefix(&want)
                    .unwrap_or_else(|| panic!("{what}: hint {hint} is not under {want}"));
                seen.push(dotted.to_string());
                if let Some(file) = message.get("path") {
                    assert!(Path::new(file).is_file(), "{what}: path {file}");
                }
            }
            for dotted in [
                "suite.test_inside.TestIn.test_in",
                "suite.test_inside.test_out",
                "suite.test_broken",
            ] {
                let dotted = if base.ends_with("suite") {
                    dotted.trim_start_matches("suite.")
                } else {
                    dotted
                };
                assert!(
                    seen.iter().any(|s| s == dotted),
                    "{what}: no {dotted} in {seen:?}"
                );
            }
        }
    }
}

#[test]
fn targets_naming_doctests_reach_pytest_as_they_are() {
    // Dots after `::` are PyCharm's class separators only in a test module's
    // own names: a doctest (`calc.ops.add`) and a text file's doctest
    // (`guide.txt`) are pytest's node ids already.
    let project = Project::copy("pytest");
    project.write("tests/guide.txt", ">>> 2 * 21\n42\n");
    project.write("guide.txt", ">>> 6 * 7\n42\n");
    project.write("src/calc/docstring.py", "\"\"\"\n>>> 1 + 1\n2\n\"\"\"\n");
    // A package with a function of its own name.
    project.write(
        "src/tally/__init__.py",
        "def tally():\n    \"\"\"\n    >>> tally()\n    1\n    \"\"\"\n    return 1\n\n\n\
         def add(a, b):\n    \"\"\"\n    >>> add(1, 2)\n    3\n    \"\"\"\n    return a + b\n",
    );
    // A test module by the project's `python_files`, as Django's `tests.py`.
    let config = std::fs::read_to_string(project.path().join("pyproject.toml")).unwrap();
    project.write(
        "pyproject.toml",
        &format!("{config}python_files = [\"test_*.py\", \"checks.py\"]\n"),
    );
    project.write(
        "tests/checks.py",
        "import unittest\n\n\nclass MathChecks(unittest.TestCase):\n    \
         def test_add(self):\n        self.assertEqual(1 + 1, 2)\n",
    );
    let cases = [
        (
            "src/calc/ops.py::calc.ops.add",
            "src > calc > ops.py > calc.ops.add",
        ),
        // A module docstring's doctest is named after the module alone.
        (
            "src/calc/docstring.py::calc.docstring",
            "src > calc > docstring.py > calc.docstring",
        ),
        // PyCharm's own form, which its runner qualifies with the module.
        ("src/calc/ops.py::add", "src > calc > ops.py > calc.ops.add"),
        (
            "tests/guide.txt::guide.txt",
            "tests > guide.txt > guide.txt",
        ),
        // A file of the top folder is a path, not a dotted name.
        ("guide.txt", "guide.txt > guide.txt"),
        // `tally.add` is the package's doctest, not a test `add` of `tally()`.
        (
            "src/tally/__init__.py::tally.add",
            "src > tally > __init__.py > tally.add",
        ),
        (
            "tests/checks.py::MathChecks.test_add",
            "tests > checks.py > MathChecks > test_add",
        ),
        // Tests of test modules are no doctests, plain or unittest.
        (
            "tests/test_basic.py::test_add",
            "tests > test_basic.py > test_add",
        ),
        (
            "tests/unit/test_classes.py::TestOuter.test_outer",
            "tests > unit > test_classes.py > TestOuter > test_outer",
        ),
        (
            "tests/unit/test_unittest.py::CalcTestCase.test_add",
            "tests > unit > test_unittest.py > CalcTestCase > test_add",
        ),
    ];
    for (target, want) in cases {
        let run = Tcrunner::pytest(project.path())
            .args(["--target", target, "--", "--doctest-modules"])
            .arg("--doctest-glob=*.txt")
            .run(Duration::from_secs(120));
        run.assert_code(0).assert_clean();
        let found: Vec<String> = tests_by_path(&run.stdout).into_keys().collect();
        assert_eq!(found, [want], "--target {target}");
    }
}

/// With its configuration in a folder of its own (`-c ci/pytest.ini`) the
/// rootdir is that folder, and pytest names a file it is given outside it
/// relative to the file itself (`::TestX::test_one`, the module `""`). A
/// run of that file, or of one test in it, still builds the whole run's
/// tree: the file is a node, and every hint is the one the whole run gives.
#[test]
fn a_file_outside_the_rootdir_keeps_its_place_in_the_tree() {
    let project = Project::copy("pytest-outside-rootdir");
    let nodes = |args: &[&str]| {
        let run = Tcrunner::pytest(project.path())
            .args(args)
            .args(["--", "-c", "ci/pytest.ini"])
            .run(Duration::from_secs(120));
        run.assert_code(0).assert_clean();
        let hints: Vec<(String, String)> = messages(&run.stdout)
            .iter()
            .filter(|m| m.name == "testStarted" || m.name == "testSuiteStarted")
            .map(|m| {
                let get = |key| m.get(key).unwrap_or_default().to_owned();
                (get("name"), get("locationHint"))
            })
            .collect();
        let tests: Vec<String> = tests_by_path(&run.stdout).into_keys().collect();
        (tests, hints)
    };
    let (all, whole) = nodes(&[]);
    assert_eq!(
        all,
        [
            "tests > test_a.py > TestX > test_one",
            "tests > test_a.py > test_two"
        ]
    );
    for selection in [
        ["--path", "tests/test_a.py"],
        ["--target", "tests/test_a.py::TestX.test_one"],
        ["--target", "tests.test_a.TestX.test_one"],
    ] {
        let (tests, hints) = nodes(&selection);
        let want = if selection[0] == "--path" {
            &all[..]
        } else {
            &all[..1]
        };
        assert_eq!(tests, want, "{selection:?}");
        for hint in &hints {
            assert!(
                whole.contains(hint),
                "{selection:?}: {hint:?} not in {whole:#?}"
            );
        }
    }
}

const EDGES: &str = "pytest-edges";

/// Under `--capture=sys`, or without pytest's capture plugin, what tests
/// write to fd 1 reaches pytest's stdout live, beside the events sent on a
/// pipe of their own: read late, a test's text landed in another test.
/// The events now go to stdout with it, as under `-s`.
#[test]
fn fd_writes_stay_in_their_tests_without_fd_capture() {
    for capture in [["--capture=sys"], ["-pno:capture"]] {
        let run = run_edge("test_late_reader.py", &[&["--"][..], &capture[..]].concat());
        run.assert_code(0);
        let mut running = None;
        let mut placed = Vec::new();
        for line in run.text().lines() {
            if line.starts_with("##teamcity[testStarted ") {
                running = line
                    .split("name='")
                    .nth(1)
                    .and_then(|r| r.split('\'').next());
            } else if line.starts_with("##teamcity[testFinished ") {
                running = None;
            } else if let Some(writer) = line.strip_prefix("written by ") {
                placed.push((writer.to_owned(), running.unwrap_or("(no test)").to_owned()));
            }
        }
        let want: Vec<(String, String)> = [
            ("a", "test_a_stops_the_reader"),
            ("b", "test_b"),
            ("c", "test_c"),
            ("d", "test_d_resumes_the_reader"),
        ]
        .map(|(w, t)| (w.to_owned(), t.to_owned()))
        .into();
        assert_eq!(placed, want, "{capture:?}: {}", run.describe());
    }
}

/// A run whose every module skips itself as it is imported
/// (`pytest.importorskip`) collected no tests: pytest exits 5, and the run
/// says it ran none, where it said pytest failed outside any test.
#[test]
fn a_run_of_modules_that_all_skip_themselves_ran_no_tests() {
    let project = Project::copy(EDGES);
    project.write(
        "test_optional.py",
        "import pytest\n\npytest.importorskip('no_such_module_for_tcrunner')\n\n\ndef test_never():\n    pass\n",
    );
    let json = project.path().join("result.json");
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_optional.py", "--format", "human", "--json"])
        .arg(&json)
        .run(Duration::from_secs(120));
    run.assert_code(5);
    let result: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let kinds: Vec<&str> = result["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["no_tests"], "{}", run.stderr);
    assert!(run.text().contains("NO TESTS ran in "), "{}", run.text());
}

/// A teardown that skips (a fixture's `pytest.skip`, unittest's `skipTest`
/// in `tearDown`), or an xfail test's teardown that raises, after the test
/// failed: pytest reports the failure and then a skip, and the run fails.
/// The skip was taken as the verdict: every failure shown skipped, and the
/// run's exit 1 blamed on pytest.
#[test]
fn a_teardown_that_skips_after_a_failure_keeps_the_failure() {
    let run = run_edge("test_teardown_skips.py", &[]);
    run.assert_code(1);
    let verdicts: Vec<(String, String)> = tests_by_path(&run.stdout)
        .into_iter()
        .map(|(key, outcome)| (key, outcome.verdict))
        .collect();
    let file = "test_teardown_skips.py";
    let want = [
        ("TestUnittest > test_fails_then_teardown_skips", "failed"),
        ("test_fails_then_teardown_skips", "failed"),
        ("test_passes_then_teardown_skips", "ignored"),
        ("test_setup_fails_then_cleanup_skips", "error"),
        ("test_strict_xfail_passes_then_teardown_breaks", "failed"),
    ]
    .map(|(test, verdict)| (format!("{file} > {test}"), verdict.to_owned()));
    assert_eq!(verdicts, want, "{}", run.describe());
    assert!(
        !run.stderr.contains("though no test failed"),
        "{}",
        run.describe()
    );
}

/// A plugin that runs the test protocol itself and logs only part of it
/// (tests/fixtures/pytest-protocol/conftest.py), or renames its reports:
/// every test still ends, once, under its own id, with the verdict of the
/// reports pytest logged, and its output is in it.
#[test]
fn tests_a_plugin_logs_only_in_part_still_end_with_their_verdicts() {
    let project = Project::copy("pytest-protocol");
    for mode in ["no-start", "call-only", "bare-call", "nothing", "renamed"] {
        let results = project.path().join(format!("{mode}.json"));
        let run = Tcrunner::pytest(project.path())
            .env("OWN_PROTOCOL", mode)
            .arg("--json")
            .arg(&results)
            .run(Duration::from_secs(120));
        run.assert_clean();
        let tests = util::result_tests(&results, ["status", "stdout"]);
        let with_output = |name: &str, status: &str| {
            (
                name.to_owned(),
                status.to_owned(),
                format!("output of {name}\n"),
            )
        };
        let want = if mode == "nothing" {
            // No report at all: pytest counts the tests nowhere.
            ["test_fails", "test_passes", "test_skips"]
                .map(|name| (name.to_owned(), "skipped".to_owned(), String::new()))
                .to_vec()
        } else {
            vec![
                with_output("test_fails", "failed"),
                with_output("test_passes", "passed"),
                ("test_skips".to_owned(), "skipped".to_owned(), String::new()),
            ]
        };
        assert_eq!(tests, want, "{mode}: {}", run.describe());
        run.assert_code(if mode == "nothing" { 0 } else { 1 });
    }
}

/// An ini's `-v` against tcrunner's `-q` leaves pytest at its normal
/// verbosity, where it writes each file's letters and then how far the run
/// is: the letters stay, so that the count moves (blanked, it said `[  0%]`
/// after every file).
#[test]
fn an_ini_verbosity_that_cancels_ours_keeps_pytests_progress() {
    let project = Project::copy("pytest-ini-verbose");
    let run = Tcrunner::pytest(project.path()).run(Duration::from_secs(120));
    run.assert_clean();
    run.assert_code(0);
    let text = run.text();
    let progress: Vec<&str> = text
        .lines()
        .filter(|line| !line.starts_with("##teamcity[") && line.trim_end().ends_with("%]"))
        .filter_map(|line| line.rsplit_once('[').map(|(_, count)| count.trim_end()))
        .collect();
    assert_eq!(progress, [" 50%]", "100%]"], "{text}");
}

/// Runs one file of tests/fixtures/pytest-edges with pytest 9; returns the
/// finished run after checking its stream is clean.
fn run_edge(file: &str, args: &[&str]) -> util::Run {
    let project = Project::copy(EDGES);
    let run = Tcrunner::pytest(project.path())
        .args(["--path", file])
        .args(args)
        .run(Duration::from_secs(120));
    run.assert_clean();
    run
}

/// TeamCity takes tests with the same full name for runs of one test, and
/// under `testRetrySupport` lets a later pass mute an earlier failure: in
/// the teamcity dialect a test whose full name is taken already (a test run
/// twice under one id, subtests with the same parameters) is numbered, so
/// each keeps its verdict.
#[test]
fn the_teamcity_dialect_never_gives_two_tests_one_name() {
    let run = run_edge(
        "test_duplicates.py",
        &[
            "--path",
            "test_same_subtests.py",
            "--path",
            "test_duplicates.py",
            "--format",
            "teamcity",
            "--retry-support",
            "--",
            "--keep-duplicates",
        ],
    );
    run.assert_code(1);
    let names = teamcity_names(&run.stdout);
    assert!(names.values().all(|&n| n == 1), "{names:?}");
    let failed: Vec<String> = messages(&run.stdout)
        .iter()
        .filter(|m| m.name == "testFailed")
        .map(|m| m.get("name").unwrap().to_owned())
        .collect();
    assert_eq!(
        failed,
        ["test_same [row] #2", "test_same", "test_runs_twice #2"],
        "{}",
        run.describe()
    );
    let subtests = names
        .keys()
        .filter(|k| k.contains("test_same [row]"))
        .count();
    assert_eq!(subtests, 3, "{names:?}");
}

/// A test inherited from a class in another file carries that file and the
/// line of its `def` there (pytest's location), not the collecting module's
/// path with the other file's line; with and without xdist alike.
#[test]
fn an_inherited_test_carries_the_file_it_is_defined_in() {
    let line_of = |file: &str, needle: &str| -> String {
        let source = std::fs::read_to_string(path(&format!("tests/fixtures/{EDGES}/{file}")))
            .expect("fixture file");
        let index = source.lines().position(|l| l.contains(needle));
        (index.expect("the def is in the file") + 1).to_string()
    };
    for workers in [&[][..], &["--", "-n", "2"][..]] {
        let run = run_edge("test_inherited.py", workers);
        run.assert_code(0);
        let started = |name: &str| -> (String, String) {
            let message = run.message(&["testStarted", &format!("name='{name}'")]);
            let attribute = |key| util::attr(&message, key).unwrap_or_default();
            (attribute("path"), attribute("lineno"))
        };
        for (test, file) in [
            ("test_from_base", "inherited_cases.py"),
            ("test_own", "test_inherited.py"),
        ] {
            let (path, line) = started(test);
            assert!(
                path.ends_with(&format!("/{file}")),
                "{workers:?} {test}: path {path}"
            );
            assert_eq!(
                line,
                line_of(file, &format!("def {test}(")),
                "{workers:?} {test}: line in {path}"
            );
        }
    }
}

/// pytest's captured log records are left out of a test's output, as
/// PyCharm's runner leaves them out, unless `TCRUNNER_PYTEST_LOGS=1` asks for
/// them on the test's stderr.
#[test]
fn captured_log_records_are_output_only_when_asked_for() {
    for (setting, logged) in [("0", 0), ("1", 1)] {
        let project = Project::copy(EDGES);
        let run = Tcrunner::pytest(project.path())
            .args(["--path", "test_logs.py"])
            .env("TCRUNNER_PYTEST_LOGS", setting)
            .run(Duration::from_secs(120));
        run.assert_clean();
        let printed = run.count(&["testStdOut", "a printed line"]);
        assert_eq!(
            printed,
            1,
            "TCRUNNER_PYTEST_LOGS={setting}\n{}",
            run.describe()
        );
        let warned = run.count(&["testStdErr", "a logged warning"]);
        assert_eq!(
            warned,
            logged,
            "TCRUNNER_PYTEST_LOGS={setting}\n{}",
            run.describe()
        );
    }
}

/// A comparison that failed inside `pytest.raises(AssertionError)` (or was
/// caught by the test) is not the diff of a later failure that compared
/// nothing, nor is one that held (`assert not (a == b)`, which pytest
/// explains all the same); a later failing comparison has its own values,
/// equal as they read (`assert 2 != 2`) or not. Telling whether it held
/// never compares the values again: that would run the test's `__eq__`
/// twice, or take from an iterator twice.
#[test]
fn a_caught_comparison_is_not_pinned_on_a_later_failure() {
    let run = run_edge("test_comparisons.py", &[]);
    let tests = tests_by_path(&run.stdout);
    let get = |name: &str| {
        tests
            .iter()
            .find(|(k, _)| k.ends_with(name))
            .unwrap_or_else(|| panic!("{name} missing: {tests:#?}"))
            .1
    };
    for name in [
        "test_caught_comparison_then_bare_assert",
        "test_caught_comparison_then_raised_message",
        "CaughtAssertEqual > test_caught_assert_equal_then_assert_true",
        "test_comparison_that_held",
        "test_ordering_that_held",
    ] {
        let test = get(name);
        assert_eq!(test.verdict, "failed", "{name}");
        assert_eq!((&test.expected, &test.actual), (&None, &None), "{name}");
    }
    let test = get("test_caught_comparison_then_another");
    assert_eq!(
        (test.expected.as_deref(), test.actual.as_deref()),
        (Some("4"), Some("3"))
    );
    for name in [
        "test_a_failed_comparison_runs_once",
        "test_in_takes_from_an_iterator_once",
    ] {
        assert_eq!(get(name).verdict, "passed", "{name}: {}", run.describe());
    }
}

/// A report whose text a plugin wrote (pytest-check's, in xdist's workers)
/// says what failed on its first line: its last `E` line is pytest's hint
/// (`Use -v to get more diff`). A fixture error's text starts with where it
/// is, and says what on its `E` line, in process and through xdist alike.
#[test]
fn a_plugins_report_text_gives_the_message_its_first_line() {
    for args in [&[][..], &["--", "-n", "2"]] {
        let run = run_edge("plugin_text", args);
        run.assert_code(1);
        let tests = tests_by_path(&run.stdout);
        let message = |name: &str| {
            tests
                .iter()
                .find(|(k, _)| k.ends_with(name))
                .and_then(|(_, test)| test.message.clone())
                .unwrap_or_else(|| panic!("{name}: {}", run.describe()))
        };
        assert_eq!(
            message("test_soft_then_hard"),
            "FAILURE: a soft check failed",
            "{args:?}"
        );
        assert_eq!(
            message("test_needs_a_missing_fixture"),
            "test setup failed: fixture 'missing' not found",
            "{args:?}"
        );
    }
}

/// A module that patches `os.write` for its tests (to return 0) took the
/// plugin's writes with it, and the run never ended. The plugin writes
/// with Python's own, taken as it loads.
#[test]
fn a_patched_os_write_leaves_the_events_alone() {
    let run = run_edge("test_patched_write.py", &["--session-timeout", "60"]);
    run.assert_code(1);
    let verdicts: Vec<(String, String)> = util::verdicts_by_path(&run.stdout);
    assert_eq!(
        verdicts,
        [
            ("test_fails", "failed"),
            ("test_passes_last", "passed"),
            ("test_writes_nothing", "passed"),
        ]
        .map(|(name, verdict)| (
            format!("test_patched_write.py > {name}"),
            verdict.to_owned()
        )),
        "{}",
        run.describe()
    );
}

/// A forked child that goes on running pytest reports nothing: every test
/// appears once, in its file, and no copy of a test lands at the root.
#[test]
fn a_forked_child_running_on_in_pytest_reports_nothing() {
    let run = run_edge("test_fork.py", &[]);
    run.assert_code(0);
    let found: Vec<String> = tests_by_path(&run.stdout).into_keys().collect();
    assert_eq!(
        found,
        [
            "test_fork.py > test_after_the_fork",
            "test_fork.py > test_before_the_fork",
            "test_fork.py > test_forks",
        ],
        "{}",
        run.describe()
    );
}

/// pytest's own line for a test (`-v`, or log_cli: `test_verbose.py::test_two `)
/// comes after our `started` for it. Before, it came while the previous test
/// was still running, and the IDE shows text under the test running when it
/// arrives. Checked on one stream, exactly: the plugin's events go to
/// pytest's own stdout here (tcrunner reads two pipes, whose order is exact
/// only for text written before an event, docs/faults.md).
#[test]
fn a_tests_verbose_line_follows_its_start() {
    let project = Project::copy(EDGES);
    let out = std::process::Command::new(python(9))
        .args([
            "-m",
            "pytest",
            "-p",
            "tcrunner_pytest",
            "-p",
            "no:cacheprovider",
        ])
        .args(["-v", "test_verbose.py"])
        .env("TCRUNNER_EVENT_FD", "1")
        .env("PYTHONPATH", path("runners"))
        .current_dir(project.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    for name in ["test_one", "test_two", "test_three"] {
        let id = format!("test_verbose.py::{name}");
        let started = text
            .find(&format!(r#"{{"ev":"started","id":"{id}"}}"#))
            .unwrap_or_else(|| panic!("no start of {name}: {text}"));
        let line = text
            .find(&format!("{id} "))
            .unwrap_or_else(|| panic!("no line of {name}: {text}"));
        assert!(started < line, "{name}: {text}");
    }
}

/// unittest's typed equality assertions called directly (assertDictEqual
/// and the like) carry their two values, as assertEqual does.
#[test]
fn unittest_typed_equality_assertions_carry_their_values() {
    let run = run_edge("test_comparisons.py", &["--", "-k", "DirectEquality"]);
    let found: BTreeMap<String, (Option<String>, Option<String>)> = tests_by_path(&run.stdout)
        .into_iter()
        .map(|(k, t)| {
            let name = k.rsplit(" > ").next().unwrap().to_owned();
            (name, (t.expected, t.actual))
        })
        .collect();
    let pair = |e: &str, a: &str| (Some(e.to_owned()), Some(a.to_owned()));
    let want = BTreeMap::from([
        (
            "test_assert_dict_equal".to_owned(),
            pair("{'a': 1}", "{'a': 2}"),
        ),
        (
            "test_assert_list_equal".to_owned(),
            pair("[1, 2, 3]", "[1, 2, 4]"),
        ),
        (
            "test_assert_multi_line_equal".to_owned(),
            pair("'a\\nb\\n'", "'a\\nc\\n'"),
        ),
        (
            "test_assert_sequence_equal".to_owned(),
            pair("(1, 2)", "(1, 3)"),
        ),
    ]);
    assert_eq!(found, want, "{}", run.describe());
}

/// A failure whose text starts with a line break (`ValueError("\nwhy")`)
/// has the exception's name and its first line of text as message, not the
/// name alone (`ValueError:`); a strict xfail that passed with no reason is
/// pytest's `[XPASS(strict)]`, without the space where the reason would go.
#[test]
fn a_message_after_a_line_break_is_kept() {
    let run = run_edge("test_messages.py", &[]);
    let found: BTreeMap<String, Option<String>> = tests_by_path(&run.stdout)
        .into_iter()
        .map(|(k, t)| (k.rsplit(" > ").next().unwrap().to_owned(), t.message))
        .collect();
    let want = BTreeMap::from([
        (
            "test_assertion_message_after_a_line_break".to_owned(),
            Some("AssertionError: expected a, got b".to_owned()),
        ),
        (
            "test_error_message_after_blank_lines".to_owned(),
            Some("ValueError: the reason is here".to_owned()),
        ),
        (
            "test_fail_message_after_a_line_break".to_owned(),
            Some("Failed: why it failed".to_owned()),
        ),
        (
            "test_strict_xpass_without_a_reason".to_owned(),
            Some("[XPASS(strict)]".to_owned()),
        ),
    ]);
    assert_eq!(found, want, "{}", run.describe());
}

/// A test pytest runs twice under one id (`--keep-duplicates` with its file
/// given twice) is two tests, each with its own verdict, as in pytest's JUnit
/// report; the second run's failure was dropped.
#[test]
fn a_test_run_twice_under_one_id_keeps_both_verdicts() {
    let run = run_edge(
        "test_duplicates.py",
        &["--path", "test_duplicates.py", "--", "--keep-duplicates"],
    );
    run.assert_code(1);
    let found: Vec<(String, String)> = tests_by_path(&run.stdout)
        .into_iter()
        .map(|(k, t)| (k, t.verdict))
        .collect();
    let test = "test_duplicates.py > test_runs_twice";
    assert_eq!(
        found,
        [
            (test.to_owned(), "passed".to_owned()),
            (format!("{test} #2"), "failed".to_owned()),
        ],
        "{}",
        run.describe()
    );
}

/// Under `PYTHONDONTWRITEBYTECODE` the project gets no bytecode, but the
/// reporter's is cached in tcrunner's own folder: pytest would otherwise
/// parse and compile the whole reporter again at every run.
#[test]
fn the_reporters_bytecode_is_cached_even_where_the_project_writes_none() {
    let project = Project::copy(EDGES);
    let temp = project.path().join("tcrunner-temp");
    std::fs::create_dir(&temp).unwrap();
    for _ in 0..2 {
        let run = Tcrunner::pytest(project.path())
            .args(["--path", "test_messages.py"])
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("TMPDIR", &temp)
            .run(Duration::from_secs(120));
        run.assert_clean();
        assert!(!tests_by_path(&run.stdout).is_empty(), "{}", run.text());
    }
    let mut cached = Vec::new();
    let mut project_bytecode = Vec::new();
    let mut pending = vec![project.path().to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "pyc") {
                if path.starts_with(&temp) {
                    cached.push(path.file_name().unwrap().to_string_lossy().into_owned());
                } else {
                    project_bytecode.push(path);
                }
            }
        }
    }
    // Every module of the reporter, each once: those `tcrunner_pytest.py` imports.
    let mut modules: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("runners"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|name| Some(name.strip_suffix(".py")?.to_owned()))
            .filter(|module| module.starts_with("_tcrunner_pytest"))
            .collect();
    modules.sort();
    cached.sort();
    let cached_modules: Vec<&str> = cached
        .iter()
        .map(|file| file.split('.').next().unwrap())
        .collect();
    assert!(modules.len() > 1, "{modules:?}");
    assert_eq!(cached_modules, modules, "{cached:?}");
    assert!(project_bytecode.is_empty(), "{project_bytecode:?}");
}

/// pytest's information switches print their answer and exit 0 without a
/// session (`--version` and `--help` even before our plugin loads): the
/// answer passes through, the tree stays empty, and pytest's code stands.
#[test]
fn information_switches_pass_pytests_answer_through() {
    for (switch, says) in [
        ("--version", "pytest 9."),
        ("--help", "usage:"),
        ("--markers", "@pytest.mark.skip"),
        ("--fixtures", "tmp_path"),
    ] {
        // `--fixtures` collects: a file that collects cleanly.
        let project = Project::copy(EDGES);
        let run = Tcrunner::pytest(project.path())
            .args(["--path", "test_messages.py", "--", switch])
            .run(Duration::from_secs(120));
        run.assert_code(0).assert_clean();
        let text = run.text();
        assert!(
            !text.contains("##teamcity[testStarted"),
            "{switch}:\n{text}"
        );
        assert!(text.contains(says), "{switch}:\n{text}");
    }
}

/// With `-s` tests print straight to pytest's stdout, a pipe apart from the
/// events: the next test's first words reached tcrunner before the
/// `finished` of the test before it, and were shown under that test (7 runs
/// in 8 of two such tests). The reporter then writes its events into
/// stdout, so one pipe keeps the order.
#[test]
fn what_tests_print_with_capture_off_stays_in_each_test() {
    for capture in ["-s", "--capture=tee-sys"] {
        for round in 0..3 {
            let run = run_edge("test_printing.py", &["--", capture]);
            run.assert_code(0);
            let text = run.text();
            assert_each_test_says(
                &run,
                &[
                    ("test_first", "FIRST-SAYS"),
                    ("test_second", "SECOND-ENDS-WITHOUT-A-LINE-BREAK"),
                    // A line that may still grow into a service message (it
                    // has a `#`) is not held past the end of its test.
                    ("test_third", "THIRD-PROGRESS #1 WITHOUT-A-LINE-BREAK"),
                    ("test_fourth", "FOURTH-SAYS"),
                ],
                &format!("{capture} #{round}"),
            );
            // The event after text with no line break still starts a line.
            assert!(
                text.contains("LINE-BREAK\n##teamcity[testFinished"),
                "{capture} #{round}:\n{text}"
            );
        }
    }
}

/// Asserts that each test's `words` come between its `testStarted` and
/// its `testFinished`, the tests in the order given.
fn assert_each_test_says(run: &util::Run, said: &[(&str, &str)], case: &str) {
    let text = run.text();
    let mut at = 0;
    for (name, words) in said {
        let id = run.node_id(name);
        let find = |needle: &str, from: usize| {
            text[from..]
                .find(needle)
                .map(|i| from + i)
                .unwrap_or_else(|| panic!("{case}: no {needle}:\n{text}"))
        };
        let started = find(&format!("testStarted nodeId='{id}'"), at);
        let said = find(words, started);
        let finished = find(&format!("testFinished nodeId='{id}'"), started);
        assert!(said < finished, "{case}: {name}:\n{text}");
        at = finished;
    }
}

/// pytest's own lines as tests run, `-v`'s verdicts and live log records
/// (`--log-cli-level`), go to its stdout, a pipe apart from the events: a
/// test's name and verdict were cut in two by the start of the test, and
/// read late they landed under the test before. The reporter then writes
/// its events into stdout too, so each line stays in its test.
#[test]
fn pytests_own_lines_as_tests_run_stay_in_each_test() {
    for (flag, says) in [("-v", "::{} PASSED"), ("--log-cli-level=INFO", "{}")] {
        for round in 0..3 {
            let run = run_edge("test_logging.py", &["--", flag]);
            run.assert_code(0);
            let said: Vec<(&str, String)> = [
                ("test_first_logs", "FIRST-LOGS"),
                ("test_second_logs", "SECOND-LOGS"),
                ("test_third_logs", "THIRD-LOGS"),
            ]
            .into_iter()
            .map(|(name, record)| {
                (
                    name,
                    says.replace("{}", if flag == "-v" { name } else { record }),
                )
            })
            .collect();
            let said: Vec<(&str, &str)> = said.iter().map(|(n, w)| (*n, w.as_str())).collect();
            assert_each_test_says(&run, &said, &format!("{flag} #{round}"));
        }
    }
}

/// TeamCity takes plain text between a test's start and finish as that
/// test's output only when the start says `captureStandardOutput='true'`.
/// With capture off, what a test prints is such text, in order with the
/// events (the reporter says so with `live_output`); with capture on it
/// travels in `testStdOut`, and plain text is the build log's.
#[test]
fn a_teamcity_test_owns_what_it_prints_with_capture_off() {
    for (capture, live) in [
        ("-s", true),
        ("--capture=tee-sys", true),
        ("--capture=fd", false),
    ] {
        let run = run_edge("test_printing.py", &["--format", "teamcity", "--", capture]);
        run.assert_code(0);
        let text = run.text();
        let starts: Vec<_> = messages(&run.stdout)
            .into_iter()
            .filter(|m| m.name == "testStarted")
            .collect();
        assert_eq!(starts.len(), 4, "{capture}:\n{text}");
        let wanted = if live { "true" } else { "false" };
        assert!(
            starts
                .iter()
                .all(|m| m.get("captureStandardOutput") == Some(wanted)),
            "{capture}:\n{text}"
        );
        for (name, words) in [("test_first", "FIRST-SAYS"), ("test_fourth", "FOURTH-SAYS")] {
            let started = text
                .find(&format!("testStarted name='{name}'"))
                .unwrap_or_else(|| panic!("{capture}: no {name}:\n{text}"));
            let finished = started + text[started..].find("testFinished").unwrap();
            let between = &text[started..finished];
            let plain = between.lines().any(|line| line == words);
            let message = between.contains(&format!("testStdOut name='{name}'"));
            assert_eq!(
                (plain, message),
                (live, !live),
                "{capture}: {name}:\n{text}"
            );
            assert!(between.contains(words), "{capture}: {name}:\n{text}");
        }
    }
}

/// With capture off the plugin's events travel in pytest's stdout. Text a
/// test prints there is never taken for one (a forged event, an opening
/// without an end), and no event is lost: not one of 2 MB, nor one written
/// while another process floods the same pipe.
#[test]
fn text_in_stdout_never_passes_for_an_event() {
    let run = run_edge("test_inband.py", &["--", "-s"]);
    run.assert_code(1);
    let verdicts: Vec<(String, String)> = util::verdicts_by_path(&run.stdout);
    let file = "test_inband.py";
    assert_eq!(
        verdicts,
        [
            (
                "test_fails_while_another_process_writes_to_stdout",
                "failed"
            ),
            ("test_fails_with_a_message_of_two_megabytes", "error"),
            ("test_passes_last", "passed"),
            ("test_prints_a_forged_event", "failed"),
            ("test_prints_an_opening_without_an_end", "passed"),
        ]
        .map(|(name, verdict)| (format!("{file} > {name}"), verdict.to_owned()))
    );
    let text = run.text();
    assert!(text.contains("FORGED-ABOVE"), "{text}");
    assert!(text.contains("log excerpt: \u{1b}_tcrunner;"), "{text}");
    assert!(text.contains("BACKGROUND-LINE"), "{text}");
    assert!(
        run.failure_of("test_fails_with_a_message_of_two_megabytes")
            .contains("ValueError: xxx"),
        "{text}"
    );
    assert!(!run.stderr.contains("malformed"), "{}", run.stderr);
}

/// Under xdist a worker wrote a letter per subtest (`u`) while the test
/// ran, into the output the test was reported with: `testStdOut out='uuu'`
/// on a test that printed nothing. The letters are blanked in the workers
/// too.
#[test]
fn subtests_under_xdist_leave_no_progress_letters_in_the_output() {
    let run = run_edge("test_subtests.py", &["--", "-n", "2"]);
    run.assert_code(1);
    assert_eq!(
        run.count(&["##teamcity[testStdOut"]),
        0,
        "{}",
        run.describe()
    );
    // The two passing subtests, the failing one, and the test that holds them.
    assert_eq!(
        run.count(&["##teamcity[testStarted"]),
        4,
        "{}",
        run.describe()
    );
    assert_eq!(
        run.count(&["##teamcity[testFailed"]),
        2,
        "{}",
        run.describe()
    );
}

/// pytest-rerunfailures runs a failed test again: one node with its last
/// attempt's verdict, and each failed attempt told in the test's stderr (a
/// test that passed on a rerun showed no trace of its failure).
#[test]
fn a_pytest_test_run_again_tells_its_failed_attempts() {
    let project = Project::copy("pytest-reruns");
    let rerun = |args: &[&str]| {
        Tcrunner::new(project.path())
            .args(["--framework", "pytest", "--python"])
            .arg(path("target/venv/pytest9-reruns/bin/python"))
            .args(args)
            .run(Duration::from_secs(120))
    };
    let run = rerun(&["--path", "test_reruns.py", "--", "--reruns", "2"]);
    run.assert_clean();
    run.assert_code(1);
    let found: Vec<(String, String)> = util::verdicts_by_path(&run.stdout);
    assert_eq!(
        found,
        [
            (
                "test_reruns.py > test_fails_every_attempt".to_owned(),
                "failed".to_owned()
            ),
            (
                "test_reruns.py > test_passes_on_a_rerun".to_owned(),
                "passed".to_owned()
            ),
        ],
        "{}",
        run.describe()
    );
    let told = |test: &str| -> Vec<String> {
        let id = run.node_id(test);
        messages(&run.stdout)
            .iter()
            .filter(|m| m.name == "testStdErr" && m.get("nodeId") == Some(id.as_str()))
            .map(|m| m.get("out").unwrap().lines().next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        told("test_passes_on_a_rerun"),
        ["Attempt 1 failed: AssertionError: first attempt"],
        "{}",
        run.describe()
    );
    assert_eq!(
        told("test_fails_every_attempt"),
        [
            "Attempt 1 failed: AssertionError: every attempt",
            "Attempt 2 failed: AssertionError: every attempt"
        ],
        "{}",
        run.describe()
    );
    // An attempt that failed by a subtest alone says so (it has no text),
    // with its subtests' failures; they are withdrawn, as pytest-rerunfailures
    // withdraws them from pytest's counts and exit code: the attempt that
    // passed is the one shown.
    let run = rerun(&["--path", "test_subtest_reruns.py", "--", "--reruns", "1"]);
    run.assert_clean();
    run.assert_code(0);
    let test = "test_subtest_reruns.py > test_a_subtest_fails_first";
    let found: Vec<(String, String)> = util::verdicts_by_path(&run.stdout);
    assert_eq!(
        found,
        [
            (test.to_owned(), "passed".to_owned()),
            (format!("{test} > (i=0)"), "passed".to_owned()),
            (format!("{test} > (i=1)"), "passed".to_owned()),
        ],
        "{}",
        run.describe()
    );
    assert!(
        !run.text().contains("##teamcity[testFailed"),
        "{}",
        run.describe()
    );
    let id = run.node_id("test_a_subtest_fails_first");
    let text = run.text();
    let told: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(&format!("##teamcity[testStdErr nodeId='{id}'")))
        .collect();
    assert_eq!(told.len(), 1, "{}", run.describe());
    assert!(
        told[0].contains("out='Attempt 1 failed: One or more subtests failed|n")
            && told[0].contains("(i=1) failed:|n")
            && told[0].contains("the first attempt"),
        "{}",
        run.describe()
    );
}

/// The `subtests` fixture of pytest 9 and of the pytest-subtests plugin
/// before it, whose report class is spelt `SubTestReport`: that one was not
/// known, so a skipped subtest marked its whole test skipped and the other
/// subtests' output was lost.
#[test]
fn the_subtests_fixture_gives_each_subtest_a_node_on_pytest_8_and_9() {
    let project = Project::copy("pytest-subtests");
    for venv in ["pytest8-subtests", "pytest9"] {
        let python = path(&format!("target/venv/{venv}/bin/python"));
        let run = Tcrunner::new(project.path())
            .args(["--framework", "pytest", "--python"])
            .arg(&python)
            .run(Duration::from_secs(120));
        run.assert_clean();
        run.assert_code(1);
        let test = "test_fixture_subtests.py > test_some_subtests";
        let found: Vec<(String, String)> = util::verdicts_by_path(&run.stdout);
        let want: Vec<(String, String)> = [
            ("", "failed"),
            (" > (i=0)", "ignored"),
            (" > (i=1)", "passed"),
            (" > (i=2)", "failed"),
        ]
        .map(|(sub, verdict)| (format!("{test}{sub}"), verdict.to_owned()))
        .into();
        assert_eq!(found, want, "{venv}");
        for i in 0..3 {
            assert_eq!(run.count(&[&format!("out='sub out {i}|n'")]), 1, "{venv}");
        }
    }
}

/// pytest's JUnit report writes a test whose call failed and whose teardown
/// failed too as two `<testcase>`s of one name; converted, it is one failed
/// test, as in the live run, with the teardown's error in its details.
#[test]
fn a_converted_junit_report_has_the_live_runs_tests() {
    let project = Project::copy(EDGES);
    let xml = project.path().join("report.xml");
    let live = Tcrunner::pytest(project.path())
        .args(["--path", "test_teardown_after_failure.py", "--"])
        .arg(format!("--junitxml={}", xml.display()))
        .run(Duration::from_secs(120));
    live.assert_clean().assert_code(1);
    let converted = output(tcrunner(&["convert"]).arg(&xml).current_dir(project.path()));
    assert_eq!(converted.status.code(), Some(1));
    assert_clean(&converted.stdout);

    let started = |stream: &[u8]| {
        messages(stream)
            .iter()
            .filter(|m| m.name == "testStarted")
            .count()
    };
    // JUnit says `<failure>` for any exception in a test's call, where a
    // live run tells an error from a failed assertion.
    let verdicts = |stream: &[u8]| -> BTreeMap<String, String> {
        tests_by_path(stream)
            .into_iter()
            .map(|(key, outcome)| (key, outcome.verdict.replace("error", "failed")))
            .collect()
    };
    assert_eq!(started(&live.stdout), 6, "{}", live.describe());
    assert_eq!(started(&converted.stdout), 6, "{}", live.text());
    assert_eq!(verdicts(&converted.stdout), verdicts(&live.stdout));
    let both = messages(&converted.stdout)
        .into_iter()
        .find(|m| m.name == "testFailed" && m.get("message") == Some("ValueError: call broke"))
        .expect("the class's failed call");
    assert!(
        both.get("details").unwrap().contains("teardown broke"),
        "{both:?}"
    );
}

/// Tests `-k` or `-m` deselects are not in the tree (pytest does not report
/// them), while a selected test the code skips is still ignored.
#[test]
fn tests_a_keyword_or_marker_deselects_are_not_in_the_tree() {
    for version in [8, 9] {
        let (code, stream) = run(
            version,
            &[
                "--path",
                "tests/test_skips.py",
                "--",
                "-k",
                "not xfail and not xpass",
            ],
        );
        assert_clean(&stream);
        let found: Vec<(String, String)> = tests_by_path(&stream)
            .into_iter()
            .map(|(key, test)| (key, test.verdict))
            .collect();
        let skipped = |name: &str| (format!("tests > test_skips.py > {name}"), "ignored".into());
        assert_eq!(
            found,
            [
                skipped("test_runtime_skip"),
                skipped("test_skip_mark"),
                skipped("test_skipif"),
            ],
            "pytest {version}"
        );
        assert_eq!(code, 0, "pytest {version}");

        let (code, stream) = run(
            version,
            &["--path", "tests/test_basic.py", "--", "-m", "slow"],
        );
        assert_clean(&stream);
        let found: Vec<String> = tests_by_path(&stream).into_keys().collect();
        assert_eq!(
            found,
            ["tests > test_basic.py > test_tagged"],
            "pytest {version}"
        );
        assert_eq!(code, 0, "pytest {version}");
    }
}

/// pytest names files below its rootdir, here a folder above the project
/// (an ini at a repository's root, the project a folder in it): the ids a
/// run reports, and its dotted location hints, run again as targets.
#[test]
fn ids_below_a_rootdir_above_the_project_run_again_as_targets() {
    let project = Project::copy("pytest-subtests");
    project.write("pytest.ini", "[pytest]\n");
    project.write(
        "sub/tests/test_x.py",
        "class TestK:\n    def test_a(self):\n        pass\n\n    def test_b(self):\n        assert False\n",
    );
    let sub = project.path().join("sub");
    let json = project.path().join("result.json");
    Tcrunner::pytest(&sub)
        .arg("--json")
        .arg(&json)
        .run(Duration::from_secs(120))
        .assert_code(1);
    let ids: Vec<String> = util::json(&json)["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        ids,
        [
            "sub/tests/test_x.py::TestK::test_a",
            "sub/tests/test_x.py::TestK::test_b"
        ]
    );
    for target in [
        "sub/tests/test_x.py::TestK::test_a",
        "sub.tests.test_x.TestK.test_a",
        "tests/test_x.py::TestK.test_a",
    ] {
        let run = Tcrunner::pytest(&sub)
            .args(["--target", target])
            .run(Duration::from_secs(120));
        run.assert_code(0).assert_clean();
        let found: Vec<String> = tests_by_path(&run.stdout).into_keys().collect();
        assert_eq!(found.len(), 1, "{target}: {found:?}");
        assert!(found[0].ends_with("TestK > test_a"), "{target}: {found:?}");
    }
}

/// With `-v`, a test's verdict line is pytest's text inside the test: the
/// stream ends it where the test's captured output begins, and pytest's
/// own line end that follows, which the stream's message gave already, is
/// no empty line (every test's text began with one). The result files'
/// stdout is the captured output alone, as pytest's own reports have it:
/// pytest's text was glued to it (`[ 25%]FIRST-SAYS`).
#[test]
fn a_verbose_verdict_line_is_pytests_text_not_the_tests_output() {
    let project = Project::copy(EDGES);
    let json = project.path().join("r.json");
    let run = Tcrunner::pytest(project.path())
        .args(["--path", "test_printing.py", "--json"])
        .arg(&json)
        .args(["--", "-v"])
        .run(Duration::from_secs(120));
    run.assert_clean();
    let result = util::json(&json);
    let tests = result["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 4, "{}", run.describe());
    for test in tests {
        let name = test["name"].as_str().unwrap();
        let stdout = test["stdout"].as_str().unwrap();
        let says = name.trim_start_matches("test_").to_uppercase() + "-SAYS\n";
        assert!(stdout.starts_with(&says), "{name}: {stdout:?}");
        assert!(!stdout.contains("PASSED"), "{name}: {stdout:?}");
    }
    // The stream's text has the empty lines pytest's own output has.
    let bare = std::process::Command::new(util::pytest9())
        .args([
            "-m",
            "pytest",
            "-v",
            "-p",
            "no:cacheprovider",
            "test_printing.py",
        ])
        .current_dir(project.path())
        .output()
        .unwrap();
    let empty = |text: &str| text.lines().filter(|line| line.trim().is_empty()).count();
    let text = run.text();
    let launch = 1; // tcrunner's `Launching pytest …` line is followed by one
    assert_eq!(
        empty(&text),
        empty(&String::from_utf8_lossy(&bare.stdout)) + launch,
        "{text}"
    );
}

/// PyCharm's short doctest form (`calc.py::add`) is qualified with the
/// module's name also when `--doctest-modules` comes from the project's
/// `addopts`, not after `--`: it reached pytest as it was, `not found`.
#[test]
fn a_short_doctest_target_works_with_doctests_from_the_ini() {
    let project = Project::copy(EDGES);
    project.write("pytest.ini", "[pytest]\naddopts = --doctest-modules\n");
    project.write(
        "calc.py",
        "def add(a, b):\n    \"\"\"\n    >>> add(1, 2)\n    3\n    \"\"\"\n    return a + b\n",
    );
    let run = Tcrunner::pytest(project.path())
        .args(["--target", "calc.py::add"])
        .run(Duration::from_secs(120));
    run.assert_clean();
    run.assert_code(0);
    let found: Vec<(String, String)> = util::verdicts_by_path(&run.stdout);
    assert_eq!(
        found,
        [("calc.py > calc.add".to_owned(), "passed".to_owned())],
        "{}",
        run.describe()
    );
}
