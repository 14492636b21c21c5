//! What PyCharm sets, and what projects set up for JetBrains' own pytest
//! plugin carry, under the real binary and real pytest: `--jb-swapdiff`
//! and the ini keys `swapdiff` and `skippassedoutput` (with and without
//! teamcity-messages installed, also under `--strict-config`),
//! `JB_DISABLE_BUFFERING` and `PYCHARM_HOSTED`.
mod util;

use std::time::Duration;

use util::{assert_clean, attr, output, python, tcrunner, Project, Run, Tcrunner};

const LIMIT: Duration = Duration::from_secs(180);

/// pytest 8 has no teamcity-messages installed, pytest 9 has
/// (scripts/setup-python.sh): the options must work beside it too.
const PYTESTS: [u32; 2] = [8, 9];

fn run(project: &Project, major: u32, args: &[&str]) -> Run {
    let mut tcrunner = Tcrunner::new(project.path());
    tcrunner.arg("--python").arg(python(major)).args(args);
    tcrunner.run(LIMIT)
}

/// `expected` and `actual` of the failed `test_compares`.
fn comparison(run: &Run) -> (String, String) {
    let failed = run.message(&[
        "testFailed",
        &format!("nodeId='{}'", run.node_id("test_compares")),
    ]);
    (
        attr(&failed, "expected").unwrap_or_default(),
        attr(&failed, "actual").unwrap_or_default(),
    )
}

fn sound(run: &Run, major: u32) {
    assert_eq!(run.code(), 1, "pytest {major}: {}", run.describe());
    assert_clean(&run.stdout);
    assert!(
        !run.text().contains("PytestConfigWarning") && !run.stderr.contains("PytestConfigWarning"),
        "pytest {major}: {}",
        run.describe()
    );
}

#[test]
fn jb_swapdiff_swaps_expected_and_actual() {
    let project = Project::copy("pycharm");
    for major in PYTESTS {
        let plain = run(&project, major, &[]);
        sound(&plain, major);
        assert_eq!(
            comparison(&plain),
            ("3".into(), "2".into()),
            "pytest {major}"
        );
        let swapped = run(&project, major, &["--", "--jb-swapdiff"]);
        sound(&swapped, major);
        assert_eq!(
            comparison(&swapped),
            ("2".into(), "3".into()),
            "pytest {major}"
        );
    }
}

#[test]
fn the_ide_plugins_ini_keys_hold_under_strict_config() {
    let project = Project::copy("pycharm");
    project.write(
        "pytest.ini",
        "[pytest]\naddopts = --strict-config\nswapdiff = true\nskippassedoutput = true\n",
    );
    for major in PYTESTS {
        let run = run(&project, major, &[]);
        sound(&run, major);
        assert_eq!(comparison(&run), ("2".into(), "3".into()), "pytest {major}");
        let text = run.text();
        // A passed test's output is dropped, a failed test's kept.
        assert!(
            !text.contains("printed by a passing test"),
            "pytest {major}: {text}"
        );
        assert!(
            text.contains("printed by a failing test"),
            "pytest {major}: {text}"
        );
        assert!(run.passed("test_passes_and_prints"), "pytest {major}");
    }
    // Without the keys, passed tests' output stays.
    project.write("pytest.ini", "[pytest]\naddopts = --strict-config\n");
    let run = run(&project, 8, &[]);
    sound(&run, 8);
    assert!(run.text().contains("printed by a passing test"));
}

#[test]
fn jb_disable_buffering_adds_dash_s_as_pycharm_does() {
    let project = Project::copy("pycharm");
    let command = |extra: &[&str], disable: bool| {
        let mut args = vec![
            "--project",
            project.path().to_str().unwrap(),
            "--print-command",
        ];
        args.extend_from_slice(extra);
        let mut command = tcrunner(&args);
        command.env_remove("JB_DISABLE_BUFFERING");
        if disable {
            command.env("JB_DISABLE_BUFFERING", "1");
        }
        let out = output(&mut command);
        assert_eq!(out.status.code(), Some(0));
        String::from_utf8(out.stdout).unwrap()
    };
    let words = |text: &str| -> Vec<String> {
        let line = text.lines().nth(1).unwrap();
        shlex::split(line).unwrap()
    };
    let count = |words: &[String], word: &str| words.iter().filter(|w| *w == word).count();
    assert_eq!(count(&words(&command(&[], true)), "-s"), 1);
    assert_eq!(count(&words(&command(&[], false)), "-s"), 0);
    // Already there: not twice.
    assert_eq!(count(&words(&command(&["--", "-s"], true)), "-s"), 1);
    assert!(!words(&command(&["--", "-vs"], true)).contains(&"-s".to_owned()));

    // The run: tests print live, between their messages.
    let mut tcrunner = Tcrunner::new(project.path());
    tcrunner
        .arg("--python")
        .arg(python(9))
        .env("JB_DISABLE_BUFFERING", "1");
    let run = tcrunner.run(LIMIT);
    sound(&run, 9);
    let text = run.text();
    let started = text.find("name='test_passes_and_prints'").unwrap();
    let printed = text.find("printed by a passing test\n").unwrap();
    assert!(printed > started, "{text}");
    assert!(
        !text.contains("testStdOut"),
        "output is not captured: {text}"
    );
}

#[test]
fn pycharm_hosted_reaches_the_tests() {
    let project = Project::copy("pycharm");
    let mut tcrunner = Tcrunner::new(project.path());
    tcrunner
        .arg("--python")
        .arg(python(9))
        .env("PYCHARM_HOSTED", "1");
    let run = tcrunner.run(LIMIT);
    sound(&run, 9);
    assert!(run.text().contains("PYCHARM_HOSTED=1"), "{}", run.text());
}
