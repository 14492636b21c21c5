//! jest (29, 30) and vitest (3, 4, 5) under tcrunner as under the bare
//! framework: the tests see the command line and the environment bare
//! jest or vitest gives them (tests/fixtures/js-cases/{jest,vitest}-bare
//! compare what they see with a bare run's answer), no colour codes reach
//! the stream, and tests a name pattern leaves out are not in the tree,
//! whoever set the pattern (js-cases/{jest,vitest}-names).
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use util::{assert_clean, output, tcrunner, tests_by_path, Project};

const INSTALLS: [&str; 5] = ["jest29", "jest30", "vitest3", "vitest4", "vitest5"];

/// The variables that decide colour, which the fixtures look at: removed
/// from every run here, so that only what a test sets is set.
const COLOUR_VARS: [&str; 8] = [
    "FORCE_COLOR",
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "NODE_DISABLE_COLORS",
    "COLORTERM",
    "TERM",
    "CI",
];

fn is_jest(name: &str) -> bool {
    name.starts_with("jest")
}

fn framework_of(name: &str) -> &'static str {
    if is_jest(name) {
        "jest"
    } else {
        "vitest"
    }
}

/// A temporary copy of `js-cases/<framework>-<case>` using the install `name`.
fn case_project(case: &str, name: &str) -> Project {
    let modules = util::node_modules(name)
        .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"));
    let framework = framework_of(name);
    Project::copy(&format!("js-cases/{framework}-{case}")).link_node_modules(&modules)
}

/// The node that runs the install `name` (vitest 5 needs node 22).
fn node_for(name: &str) -> PathBuf {
    if name == "vitest5" {
        util::node22().expect("target/node/node22 missing: run scripts/setup-node.sh")
    } else {
        PathBuf::from("node")
    }
}

/// `command` with no colour variables but the user's `colour` ones, and
/// `USER_COLOUR_VARS` naming those for the fixtures.
fn with_colour(command: &mut Command, colour: &[(&str, &str)]) {
    for var in COLOUR_VARS {
        command.env_remove(var);
    }
    for (key, value) in colour {
        command.env(key, value);
    }
    let names: Vec<&str> = colour.iter().map(|(k, _)| *k).collect();
    command.env("USER_COLOUR_VARS", names.join(","));
}

/// tcrunner in `project` with the framework of `name`.
fn tcrunner_in(project: &Path, name: &str, args: &[&str], colour: &[(&str, &str)]) -> Command {
    let node = node_for(name);
    let mut all = vec![
        "--project",
        project.to_str().unwrap(),
        "--node",
        node.to_str().unwrap(),
    ];
    all.extend(args);
    let mut command = tcrunner(&all);
    with_colour(&mut command, colour);
    command
}

/// What the fixture's observing test saw under the bare framework, run
/// with `args` (after vitest's `run`) in `project`.
fn bare_observation(project: &Path, name: &str, args: &[&str], colour: &[(&str, &str)]) -> String {
    let file = project.join("observation.json");
    let mut command = Command::new(node_for(name));
    if is_jest(name) {
        command.arg(project.join("node_modules/jest/bin/jest.js"));
    } else {
        command
            .arg(project.join("node_modules/vitest/vitest.mjs"))
            .arg("run");
    }
    command
        .args(args)
        .env("OBSERVATION_FILE", &file)
        .current_dir(project)
        .stdin(std::process::Stdio::null());
    with_colour(&mut command, colour);
    let out = command.output().unwrap();
    std::fs::read_to_string(&file).unwrap_or_else(|e| {
        panic!(
            "{name}: no observation from the bare run ({e}):\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The verdicts of a stream's tests, in path order.
fn verdicts(stream: &[u8]) -> Vec<(String, String)> {
    util::verdicts_by_path(stream)
}

fn passed(keys: &[&str]) -> Vec<(String, String)> {
    keys.iter()
        .map(|k| ((*k).to_owned(), "passed".to_owned()))
        .collect()
}

/// Mismatches gathered over every install, so that a failing run names
/// each version that differs, not only the first.
#[derive(Default)]
struct Mismatches(Vec<String>);

impl Mismatches {
    fn check<T: PartialEq + std::fmt::Debug>(&mut self, what: String, got: T, want: T) {
        if got != want {
            self.0
                .push(format!("{what}:\n  got  {got:?}\n  want {want:?}"));
        }
    }

    fn assert_none(self) {
        assert!(self.0.is_empty(), "{}", self.0.join("\n"));
    }
}

/// Colour the user set, and none: the tests see it as under the bare
/// framework either way.
const COLOURS: [&[(&str, &str)]; 2] = [&[], &[("FORCE_COLOR", "1")]];

#[test]
fn jest_tests_in_band_see_bare_jests_command_line_and_environment() {
    let mut mismatches = Mismatches::default();
    for name in ["jest29", "jest30"] {
        for colour in COLOURS {
            let project = case_project("bare", name);
            let args = ["-i", "argv.test.js"];
            let bare = bare_observation(project.path(), name, &args, colour);
            let mut all = vec!["--"];
            all.extend(args);
            let mut command = tcrunner_in(project.path(), name, &all, colour);
            let out = output(command.env("BARE_OBSERVATION", &bare));
            assert_clean(&out.stdout);
            mismatches.check(
                format!("{name} {colour:?}"),
                (verdicts(&out.stdout), out.status.code()),
                (
                    passed(&[
                        "argv.test.js > parses its command line strictly",
                        "argv.test.js > sees no colour variable the user did not set",
                        "argv.test.js > sees the command line and colour of bare jest",
                    ]),
                    Some(0),
                ),
            );
        }
    }
    mismatches.assert_none();
}

#[test]
fn jest_tests_in_workers_and_targets_see_only_the_users_arguments() {
    let mut mismatches = Mismatches::default();
    for name in ["jest29", "jest30"] {
        let project = case_project("bare", name);
        let argv_tests = [
            "argv.test.js > parses its command line strictly",
            "argv.test.js > sees no colour variable the user did not set",
            "argv.test.js > sees the command line and colour of bare jest",
        ];
        // Workers; both files, so that jest may start them.
        let out = output(&mut tcrunner_in(
            project.path(),
            name,
            &["--", "-w", "2"],
            &[],
        ));
        assert_clean(&out.stdout);
        let mut want = passed(&argv_tests);
        want.push(("colour.test.js > fails with a diff".into(), "failed".into()));
        want.push(("colour.test.js > logs values".into(), "passed".into()));
        mismatches.check(
            format!("{name} -w 2"),
            (verdicts(&out.stdout), out.status.code()),
            (want, Some(1)),
        );
        // A target and a --path: their patterns go to jest, not to argv.
        for args in [
            &[
                "--target",
                "argv.test.js::parses its command line strictly",
                "--",
                "-i",
            ][..],
            &["--path", "argv.test.js", "--timeout", "30", "--", "-i"][..],
        ] {
            let out = output(&mut tcrunner_in(project.path(), name, args, &[]));
            assert_clean(&out.stdout);
            let found = verdicts(&out.stdout);
            let all_passed = !found.is_empty() && found.iter().all(|(_, v)| v == "passed");
            mismatches.check(format!("{name} {args:?}: {found:?}"), all_passed, true);
        }
    }
    mismatches.assert_none();
}

#[test]
fn vitest_tests_see_bare_vitests_command_line_and_environment() {
    let mut mismatches = Mismatches::default();
    for name in ["vitest3", "vitest4", "vitest5"] {
        for colour in COLOURS {
            let project = case_project("bare", name);
            let bare = bare_observation(project.path(), name, &["observe.test.js"], colour);
            let args = ["--path", "observe.test.js"];
            let mut command = tcrunner_in(project.path(), name, &args, colour);
            let out = output(command.env("BARE_OBSERVATION", &bare));
            assert_clean(&out.stdout);
            mismatches.check(
                format!("{name} {colour:?}"),
                (verdicts(&out.stdout), out.status.code()),
                (
                    passed(&[
                        "observe.test.js > sees no colour variable the user did not set",
                        "observe.test.js > sees the command line and colour of bare vitest",
                    ]),
                    Some(0),
                ),
            );
        }
    }
    mismatches.assert_none();
}

/// With colour on for the framework (the user's `FORCE_COLOR`, or `CI`
/// for vitest), a diff, a failure message and console output of values
/// reach the stream without colour codes, and so does jest's own text.
#[test]
fn colour_the_user_turns_on_stays_out_of_the_stream() {
    for name in INSTALLS {
        let colours: &[&[(&str, &str)]] = if is_jest(name) {
            &[&[("FORCE_COLOR", "1")]]
        } else {
            &[&[("FORCE_COLOR", "1")], &[("CI", "1")]]
        };
        for colour in colours {
            let project = case_project("bare", name);
            // Both files, and the colour test alone (jest then prints its
            // console itself, verbose).
            for args in [&[][..], &["--path", "colour.test.js"][..]] {
                let out = output(&mut tcrunner_in(project.path(), name, args, colour));
                let text = String::from_utf8_lossy(&out.stdout);
                assert_clean(&out.stdout);
                assert!(
                    !text.contains('\u{1b}'),
                    "{name} {colour:?} {args:?}: {text}"
                );
                let found = tests_by_path(&out.stdout);
                let failed = &found["colour.test.js > fails with a diff"];
                assert_eq!(failed.verdict, "failed", "{name}: {text}");
                assert!(
                    text.contains("values 42 { a: |[ 1, |'two|' |] }")
                        || text.contains("values 42 { a: [ 1, 'two' ] }"),
                    "{name} {colour:?} {args:?}: {text}"
                );
            }
        }
    }
}

/// The tests a name pattern `alpha` leaves in `js-cases/*-names`: those it
/// selects, and those the code skips that it selects.
fn selected_by_alpha() -> Vec<(String, String)> {
    [
        ("names.test.js > alpha block > inner", "ignored"),
        ("names.test.js > alpha one", "passed"),
        ("names.test.js > alpha skipped", "ignored"),
        ("names.test.js > alpha todo", "ignored"),
        ("names.test.js > gamma > alpha in gamma", "passed"),
        ("only.test.js > alpha focused", "passed"),
        ("only.test.js > alpha unfocused", "ignored"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
    .collect()
}

#[test]
fn tests_the_users_name_pattern_leaves_out_are_not_in_the_tree() {
    let mut mismatches = Mismatches::default();
    for name in INSTALLS {
        let project = case_project("names", name);
        // The pattern after `--`, in both spellings, and in the config file.
        let runs: [(&[&str], Option<&str>); 3] = [
            (&["--", "-t", "alpha"], None),
            (&["--", "--testNamePattern=alpha"], None),
            (&[], Some("alpha")),
        ];
        for (args, config) in runs {
            let mut command = tcrunner_in(project.path(), name, args, &[]);
            if let Some(pattern) = config {
                command.env("CONFIG_NAME_PATTERN", pattern);
            }
            let out = output(&mut command);
            assert_clean(&out.stdout);
            mismatches.check(
                format!("{name} {args:?} config {config:?}"),
                (verdicts(&out.stdout), out.status.code()),
                (selected_by_alpha(), Some(0)),
            );
        }
        // Without a pattern every test is there, the skipped ones ignored.
        let out = output(&mut tcrunner_in(project.path(), name, &[], &[]));
        assert_eq!(tests_by_path(&out.stdout).len(), 13, "{name}");
    }
    mismatches.assert_none();
}

/// What the framework prints itself when it fails before running a test
/// reaches the stream plain: vitest 4 and 5 colour it even into a pipe, and
/// jest does under the user's `FORCE_COLOR`. Before the reporter loads (a
/// config that throws) and after (a vitest `globalSetup` that throws, a
/// jest config that fails validation).
#[test]
fn the_frameworks_own_errors_reach_the_stream_plain() {
    let mut mismatches = Mismatches::default();
    for name in INSTALLS {
        let mut projects = vec![];
        if is_jest(name) {
            let project = case_project("bare", name);
            project.write(
                "jest.config.js",
                "module.exports = { testEnvironment: 'node', transform: 'x' };\n",
            );
            projects.push(("a config jest refuses", project));
        } else {
            let project = case_project("bare", name);
            project.write("vitest.config.mjs", "throw new Error('bad config');\n");
            projects.push(("a config that throws", project));
            let modules = util::node_modules(name).unwrap();
            let setup = Project::copy("js-cases/vitest-global-setup").link_node_modules(&modules);
            projects.push(("a globalSetup that throws", setup));
        }
        for (what, project) in projects {
            let out = output(&mut tcrunner_in(
                project.path(),
                name,
                &[],
                &[("FORCE_COLOR", "1")],
            ));
            assert_clean(&out.stdout);
            let text = String::from_utf8_lossy(&out.stdout);
            let found: Vec<String> = tests_by_path(&out.stdout).into_keys().collect();
            mismatches.check(
                format!("{name}, {what}: {text}"),
                (found, text.contains('\u{1b}')),
                (vec![format!("{} did not start", framework_of(name))], false),
            );
        }
    }
    mismatches.assert_none();
}
