//! Shell conveniences: completions, the man page, `--version` and
//! `--print-command`, from the real binary.
mod util;

use std::process::Command;

use util::{output, tcrunner, Project};

fn stdout_of(args: &[&str]) -> String {
    let run = output(&mut tcrunner(args));
    assert_eq!(
        run.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8(run.stdout).unwrap()
}

#[test]
fn completions_cover_every_subcommand_and_option() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = stdout_of(&["completions", shell]);
        for word in ["convert", "check", "events-out", "print-command", "target"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    // The bash script is valid bash and defines its completion function.
    let script = stdout_of(&["completions", "bash"]);
    let checked = Command::new("bash")
        .args(["-c", &format!("{script}\ncomplete -p tcrunner")])
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    assert!(String::from_utf8_lossy(&checked.stdout).contains("_tcrunner"));
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let run = output(&mut tcrunner(&["completions", "tcsh"]));
    assert_eq!(run.status.code(), Some(64));
}

/// A negative number of seconds is refused by its own rule, in one line,
/// not taken for an unknown option.
#[test]
fn negative_seconds_are_refused_in_one_line() {
    for (option, rule) in [
        ("--timeout", "must be a positive number of seconds"),
        ("--session-timeout", "must be a positive number of seconds"),
        (
            "--grace-period",
            "must be zero or a positive number of seconds",
        ),
    ] {
        let run = output(&mut tcrunner(&[option, "-1"]));
        assert_eq!(run.status.code(), Some(64), "{option}");
        assert_eq!(
            String::from_utf8_lossy(&run.stderr),
            format!("tcrunner: {option}: {rule}\n")
        );
    }
}

#[test]
fn the_man_page_is_made_from_the_same_options() {
    let page = stdout_of(&["man"]);
    assert!(
        page.starts_with(".ie \\n(.g"),
        "roff: {}",
        &page[..40.min(page.len())]
    );
    for option in [
        "\\-\\-path",
        "\\-\\-target",
        "\\-\\-events\\-out",
        "\\-\\-print\\-command",
    ] {
        assert!(page.contains(option), "no {option}");
    }
    assert!(page.contains(".SH NAME"));
}

#[test]
fn the_long_version_names_the_reporters_and_supported_frameworks() {
    let short = stdout_of(&["-V"]);
    assert_eq!(
        short.trim(),
        concat!("tcrunner ", env!("CARGO_PKG_VERSION"))
    );
    let long = stdout_of(&["--version"]);
    assert!(long.contains("reporters: embedded"), "{long}");
    for framework in ["pytest 8 and 9", "jest 29 and 30", "vitest 3, 4 and 5"] {
        assert!(long.contains(framework), "{long}");
    }
}

/// `--print-command` prints the command tcrunner would run, for each
/// framework and what-to-run form, and runs nothing.
#[test]
fn print_command_shows_the_framework_command_and_runs_nothing() {
    let project = Project::copy("pytest");
    let dir = project.path().to_str().unwrap().to_owned();
    let python = util::pytest9();
    let python = python.to_str().unwrap();
    let cases: [(&[&str], &[&str]); 3] = [
        (&[], &["-m pytest -p tcrunner_pytest", "--no-header"]),
        (
            &["--target", "tests/test_basic.py::test_add"],
            &["tests/test_basic.py::test_add"],
        ),
        (
            &["--path", "tests/unit", "--", "-k", "it's"],
            &["-k \"it's\"", "tests/unit"],
        ),
    ];
    for (args, wanted) in cases {
        let mut all = vec!["--project", &dir, "--python", python, "--print-command"];
        all.extend_from_slice(args);
        let text = stdout_of(&all);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("cd {dir}"), "{text}");
        assert!(lines[1].starts_with("env "), "{text}");
        assert!(lines[1].contains(python), "{text}");
        for piece in wanted {
            assert!(lines[1].contains(piece), "{args:?}: no {piece} in {text}");
        }
    }
    assert!(!project.path().join(".pytest_cache").exists(), "pytest ran");
    // The printed command runs pytest as tcrunner would.
    let text = stdout_of(&[
        "--project",
        &dir,
        "--python",
        python,
        "--print-command",
        "--target",
        "tests/test_basic.py::test_add",
    ]);
    let script: Vec<&str> = text.lines().take(2).collect();
    let ran = Command::new("sh")
        .args(["-c", &script.join(" && ")])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("1 passed"),
        "{}{}",
        String::from_utf8_lossy(&ran.stdout),
        String::from_utf8_lossy(&ran.stderr)
    );
}

#[test]
fn print_command_for_jest_and_vitest() {
    for (name, program) in [("jest30", "jest"), ("vitest4", "vitest")] {
        let modules = util::node_modules(name)
            .unwrap_or_else(|| panic!("target/node/{name} missing: run scripts/setup-node.sh"));
        let dir = modules.parent().unwrap().to_str().unwrap().to_owned();
        let text = stdout_of(&[
            "--project",
            &dir,
            "--print-command",
            "--target",
            if name.starts_with("jest") {
                "outcomes.test.js::passes"
            } else {
                "outcomes.test.ts::passes"
            },
        ]);
        assert!(text.contains(program), "{name}: {text}");
        assert!(text.contains("passes"), "{name}: {text}");
    }
}
