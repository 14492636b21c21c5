//! `tcrunner ide install` (the runner scripts PyCharm starts, run for real
//! with arguments that quoting or encoding could change) and `tcrunner
//! doctor` on healthy and broken projects of each framework.
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use util::{assert_clean, node22, node_modules, output, python, repo, tcrunner, unique, Project};

/// A fresh folder under target/tmp, as an IDE's helpers folder.
fn helpers() -> PathBuf {
    let dir = repo().join("target/tmp").join(unique("helpers"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn install(dir: &Path) -> String {
    let out = output(&mut tcrunner(&["ide", "install", dir.to_str().unwrap()]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a written script as PyCharm would: `python <script> <args>`.
fn start(script: &Path, args: &[&str]) -> std::process::Output {
    Command::new(python(9))
        .arg(script)
        .args(args)
        .env_remove("TEAMCITY_VERSION")
        .env_remove("VIRTUAL_ENV")
        .output()
        .unwrap()
}

#[test]
fn install_writes_pycharms_runner_scripts_and_keeps_the_ides_own() {
    let dir = helpers();
    std::fs::write(dir.join("_jb_pytest_runner.py"), "# the IDE's own\n").unwrap();
    let said = install(&dir);
    assert!(said.contains("_jb_pytest_runner.py.orig"), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.join("_jb_pytest_runner.py.orig")).unwrap(),
        "# the IDE's own\n"
    );
    for name in ["_jb_pytest_runner.py", "_jb_unittest_runner.py"] {
        let script = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(script.contains("os.execv"), "{name}: {script}");
    }
    // Again: ours are rewritten, the backup stays the IDE's.
    let said = install(&dir);
    assert!(!said.contains(".orig"), "{said}");
    assert_eq!(
        std::fs::read_to_string(dir.join("_jb_pytest_runner.py.orig")).unwrap(),
        "# the IDE's own\n"
    );
    // A second script of the IDE's own would lose the first backup: refused.
    std::fs::write(dir.join("_jb_pytest_runner.py"), "# the IDE's, updated\n").unwrap();
    let out = output(&mut tcrunner(&["ide", "install", dir.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(74));
    assert!(String::from_utf8_lossy(&out.stderr).contains("move one of them away first"));
    assert_eq!(
        std::fs::read_to_string(dir.join("_jb_pytest_runner.py")).unwrap(),
        "# the IDE's, updated\n"
    );
}

/// A refusal or a failure writes nothing: a missing or wrong folder is
/// refused (exit 66) rather than made; a backup that would be lost is
/// refused before the other script is replaced; a script that cannot be
/// written in full (no room: `ulimit -f 0`) leaves the IDE's as it was,
/// with no backup, so that the command can simply run again.
#[test]
fn install_writes_all_or_nothing() {
    let dir = helpers();
    let missing = dir.join("no/such/folder");
    let out = output(&mut tcrunner(&[
        "ide",
        "install",
        missing.to_str().unwrap(),
    ]));
    assert_eq!(out.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such folder"));
    assert!(!dir.join("no").exists());
    let file = dir.join("a-file");
    std::fs::write(&file, "").unwrap();
    let out = output(&mut tcrunner(&["ide", "install", file.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(66));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a folder"));

    let ides = "# the IDE's own\n";
    for name in ["_jb_pytest_runner.py", "_jb_unittest_runner.py"] {
        std::fs::write(dir.join(name), ides).unwrap();
    }
    std::fs::write(dir.join("_jb_unittest_runner.py.orig"), "# older\n").unwrap();
    let out = output(&mut tcrunner(&["ide", "install", dir.to_str().unwrap()]));
    assert_eq!(out.status.code(), Some(74));
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(read("_jb_pytest_runner.py"), ides);
    assert!(!dir.join("_jb_pytest_runner.py.orig").exists());
    std::fs::remove_file(dir.join("_jb_unittest_runner.py.orig")).unwrap();

    let exe = util::bin();
    let full = Command::new("bash")
        .arg("-c")
        .arg(r#"trap "" XFSZ; ulimit -f 0; exec "$0" ide install "$1""#)
        .arg(&exe)
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(full.status.code(), Some(74), "{full:?}");
    for name in ["_jb_pytest_runner.py", "_jb_unittest_runner.py"] {
        assert_eq!(read(name), ides, "{name}");
        assert!(!dir.join(format!("{name}.orig")).exists(), "{name}");
    }
    let said = install(&dir);
    assert!(said.contains("_jb_unittest_runner.py.orig"), "{said}");
    assert_eq!(read("_jb_unittest_runner.py.orig"), ides);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "left behind: {names:?}");
}

#[test]
fn the_script_passes_every_argument_through_unchanged() {
    let dir = helpers();
    install(&dir);
    let project = Project::copy("pycharm");
    let target = "test_ide.py::test_grüße";
    let hostile = "naïve 'single' \"double\" $HOME `x` \\ *";
    let out = start(
        &dir.join("_jb_pytest_runner.py"),
        &[
            "--print-command",
            "--project",
            project.path().to_str().unwrap(),
            "--target",
            target,
            "--",
            "-k",
            hostile,
            "",
        ],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words = shlex::split(text.lines().nth(1).unwrap()).unwrap();
    // pytest runs under the interpreter PyCharm started the script with.
    let program = words.iter().position(|w| w == "-m").unwrap() - 1;
    assert_eq!(words[program], python(9).to_str().unwrap());
    // The raw arguments, in order, byte for byte, then the target.
    let k = words.iter().position(|w| w == "-k").unwrap();
    assert_eq!(words[k + 1], hostile);
    assert_eq!(words[k + 2], "");
    assert_eq!(words.last().unwrap(), target);
}

#[test]
fn the_script_runs_the_tests_pycharm_asks_for() {
    let dir = helpers();
    install(&dir);
    let project = Project::copy("pycharm");
    for script in ["_jb_pytest_runner.py", "_jb_unittest_runner.py"] {
        let out = start(
            &dir.join(script),
            &[
                "--project",
                project.path().to_str().unwrap(),
                "--target",
                "test_ide.py::test_grüße",
            ],
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{script}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_clean(&out.stdout);
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("name='test_grüße'"), "{script}: {text}");
        assert!(text.contains("out='grüße|n'"), "{script}: {text}");
        assert_eq!(text.matches("##teamcity[testStarted").count(), 1, "{text}");
    }
}

// --- doctor ------------------------------------------------------------------------------

/// `tcrunner doctor` with `args`: exit code and what it said.
fn doctor(args: &[&str]) -> (i32, String) {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    let out = output(&mut tcrunner(&all));
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[track_caller]
fn says(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l.starts_with(line)),
        "no line starting {line:?} in:\n{text}"
    );
}

#[track_caller]
fn says_exactly(text: &str, line: &str) {
    assert!(
        text.lines().any(|l| l == line),
        "no line {line:?} in:\n{text}"
    );
}

#[test]
fn doctor_on_a_healthy_and_a_broken_pytest_project() {
    let project = Project::copy("pycharm");
    let dir = project.path().to_str().unwrap();
    let py9 = python(9);
    let (code, text) = doctor(&["--project", dir, "--python", py9.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    says(&text, "framework: pytest (detected)");
    says(&text, &format!("interpreter: {} (Python 3.", py9.display()));
    says(&text, "pytest: 9.");
    // teamcity-messages is installed beside pytest 9 (scripts/setup-python.sh).
    says(&text, "switched off: teamcity-messages");
    says(&text, "ok: nothing is missing");
    let py8 = python(8);
    let (code, text) = doctor(&["--project", dir, "--python", py8.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    says(&text, "pytest: 8.");
    says(&text, "switched off: nothing");
    // A `minversion` the interpreter's pytest is older than: pytest would
    // refuse to start, and doctor says so.
    project.write("pytest.ini", "[pytest]\nminversion = 9.0\n");
    let (code, text) = doctor(&["--project", dir, "--python", py8.to_str().unwrap()]);
    assert_eq!(code, 69, "{text}");
    says(
        &text,
        "missing: pytest 9.0 or later, which pytest.ini asks for with `minversion` (this is 8.",
    );
    says(&text, "  fix: ");
    let (code, text) = doctor(&["--project", dir, "--python", py9.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    std::fs::remove_file(project.path().join("pytest.ini")).unwrap();

    // An interpreter without pytest: what is missing, and the command.
    let bare = repo().join("target/tmp").join(unique("bare-venv"));
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&bare)
        .status()
        .unwrap();
    assert!(made.success());
    let bare_python = bare.join("bin/python");
    let (code, text) = doctor(&["--project", dir, "--python", bare_python.to_str().unwrap()]);
    assert_eq!(code, 69, "{text}");
    // It was made without pip (as `uv venv` makes them): the fix gives it
    // one first, or installs through uv where uv is on PATH.
    says(&text, "missing: pytest, for ");
    let py = bare_python.display();
    let through_pip = format!("  fix: {py} -m ensurepip && {py} -m pip install pytest");
    let through_uv = format!("  fix: uv pip install --python {py} pytest");
    assert!(
        text.lines().any(|l| l == through_pip || l == through_uv),
        "{text}"
    );
    // Given pip, pip.
    let pip = Command::new(&bare_python)
        .args(["-m", "ensurepip"])
        .output()
        .unwrap();
    assert!(pip.status.success(), "{pip:?}");
    let (_, text) = doctor(&["--project", dir, "--python", bare_python.to_str().unwrap()]);
    says_exactly(&text, &format!("  fix: {py} -m pip install pytest"));
    // No interpreter at all.
    let (code, text) = doctor(&["--project", dir, "--python", "/nonexistent/python"]);
    assert_eq!(code, 69, "{text}");
    says(&text, "missing: the Python interpreter /nonexistent/python");
    says_exactly(
        &text,
        "  fix: give --python the path of a Python 3 interpreter that exists",
    );
    let _ = std::fs::remove_dir_all(bare);
}

/// A project's `.venv` whose `python` links to an interpreter since
/// removed is still the project's interpreter: doctor and the run name the
/// environment and how to recreate it (exit 69), rather than run the tests
/// with whatever `python3` is on PATH.
#[test]
fn a_virtual_environment_whose_python_is_gone_is_named() {
    let project = Project::copy("pycharm");
    let venv = project.path().join(".venv");
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    std::fs::write(venv.join("pyvenv.cfg"), "home = /gone/bin\n").unwrap();
    std::os::unix::fs::symlink("/gone/bin/python3.11", venv.join("bin/python")).unwrap();
    let dir = project.path().to_str().unwrap();
    let (code, text) = doctor(&["--project", dir]);
    assert_eq!(code, 69, "{text}");
    says(
        &text,
        &format!(
            "missing: a working interpreter in the virtual environment {} ({}/bin/python links to /gone/bin/python3.11, which is gone)",
            venv.display(),
            venv.display()
        ),
    );
    says(
        &text,
        &format!(
            "  fix: recreate it (`python3 -m venv --clear {}`",
            venv.display()
        ),
    );
    let out = output(&mut tcrunner(&["--project", dir]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(69), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "tcrunner: the virtual environment {} has no working interpreter",
            venv.display()
        )),
        "{stderr}"
    );
}

/// vitest 1 and 2 run the tests but never call the reporter hooks ours
/// uses: a run is refused with the version (exit 69), and doctor says what
/// to install, rather than a run that shows no tests. Only the installed
/// package's manifest is read before that.
#[test]
fn a_vitest_or_jest_older_than_tcrunner_supports_is_refused() {
    for (package, version, oldest) in [
        ("vitest", "1.6.1", 3),
        ("vitest", "2.1.9", 3),
        ("jest", "22.4.4", 26),
        ("jest", "25.5.4", 26),
    ] {
        let project = Project::copy(package);
        project.write(
            &format!("node_modules/{package}/package.json"),
            &format!(r#"{{"name": "{package}", "version": "{version}"}}"#),
        );
        let dir = project.path().to_str().unwrap();
        let out = output(&mut tcrunner(&["--project", dir]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(69), "{stderr}");
        assert_eq!(
            stderr.trim(),
            format!(
                "tcrunner: {package} {version} is older than tcrunner supports ({package} {oldest} or later): \
                 run `npm install --save-dev {package}@latest`"
            )
        );
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        let (code, text) = doctor(&["--project", dir]);
        assert_eq!(code, 69, "{text}");
        says(
            &text,
            &format!("missing: {package} {oldest} or later (this is {version})"),
        );
        says(
            &text,
            &format!("  fix: npm install --save-dev {package}@latest"),
        );
    }
}

#[test]
fn doctor_on_healthy_and_broken_jest_and_vitest_projects() {
    for (name, package) in [("jest30", "jest"), ("vitest4", "vitest")] {
        let modules = node_modules(name).expect("scripts/setup-node.sh");
        let fixture = if package == "jest" { "jest" } else { "vitest" };
        let healthy = Project::copy(fixture).link_node_modules(&modules);
        let (code, text) = doctor(&["--project", healthy.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{text}");
        says(&text, &format!("framework: {package} (detected)"));
        says(&text, "node: node (");
        says(&text, &format!("{package}: "));
        says(&text, "ok: nothing is missing");
        // A project with pytest beside it: both are looked at.
        healthy.write("pytest.ini", "[pytest]\n");
        let dir = healthy.path().to_str().unwrap();
        let python = util::pytest9();
        let (code, text) = doctor(&["--project", dir, "--python", python.to_str().unwrap()]);
        assert_eq!(code, 0, "{text}");
        says(
            &text,
            &format!("framework: {package} (detected), and pytest for `.py` paths and targets"),
        );
        says(&text, &format!("{package}: "));
        says(&text, "pytest: 9.");
        let (code, text) = doctor(&["--project", dir, "--python", "/nonexistent/python"]);
        assert_eq!(code, 69, "{text}");
        says(&text, "missing: ");
        std::fs::remove_file(healthy.path().join("pytest.ini")).unwrap();
        // Not installed: the command that installs it, with the project's
        // package manager; the project's own install where it declares the
        // framework, from the folder that declares it.
        let broken = Project::copy(fixture);
        let dir = broken.path().to_str().unwrap();
        let (code, text) = doctor(&["--project", dir]);
        assert_eq!(code, 69, "{text}");
        says(&text, &format!("missing: {package}, in "));
        says_exactly(&text, "  fix: npm install");
        let out = output(&mut tcrunner(&["--project", dir]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(69), "{stderr}");
        assert!(stderr.trim_end().ends_with("run `npm install`"), "{stderr}");
        broken.write("pnpm-lock.yaml", "");
        let (_, text) = doctor(&["--project", dir]);
        says_exactly(&text, "  fix: pnpm install");
        broken.write("packages/a/package.json", r#"{"name": "a"}"#);
        let member = broken.path().join("packages/a");
        let (_, text) = doctor(&[
            "--project",
            member.to_str().unwrap(),
            "--framework",
            package,
        ]);
        says_exactly(&text, &format!("  fix: cd {dir} && pnpm install"));
        broken.write("package.json", r#"{"name": "undeclared"}"#);
        std::fs::remove_file(broken.path().join("pnpm-lock.yaml")).unwrap();
        let (_, text) = doctor(&["--project", dir, "--framework", package]);
        says_exactly(&text, &format!("  fix: npm install --save-dev {package}"));
        // Yarn Plug'n'Play: the setting that gives it a node_modules.
        broken.write(".pnp.cjs", "");
        let (code, text) = doctor(&["--project", broken.path().to_str().unwrap()]);
        assert_eq!(code, 69, "{text}");
        says(
            &text,
            "  fix: set `nodeLinker: node-modules` in .yarnrc.yml",
        );
        // No node.
        let (code, text) = doctor(&[
            "--project",
            healthy.path().to_str().unwrap(),
            "--node",
            "/nonexistent/node",
        ]);
        assert_eq!(code, 69, "{text}");
        says(&text, "missing: node: /nonexistent/node does not run");
    }
    // vitest 5 on a node that is too old, then on node 22.
    let modules = node_modules("vitest5").expect("scripts/setup-node.sh");
    let project = Project::copy("vitest").link_node_modules(&modules);
    let dir = project.path().to_str().unwrap();
    let old_node = Command::new("node").arg("--version").output().unwrap();
    if String::from_utf8_lossy(&old_node.stdout).starts_with("v20.") {
        let (code, text) = doctor(&["--project", dir]);
        assert_eq!(code, 69, "{text}");
        says(&text, "missing: node 22.12 or later for vitest 5");
    }
    let node = node22().expect("scripts/setup-node.sh");
    let (code, text) = doctor(&["--project", dir, "--node", node.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
}

#[test]
fn doctor_without_a_framework_or_a_project() {
    // A folder with nothing to run, outside any repository's JS setup.
    let outside = std::env::temp_dir().join(unique("tcrunner-doctor-empty"));
    std::fs::create_dir_all(&outside).unwrap();
    let (code, text) = doctor(&["--project", outside.to_str().unwrap()]);
    assert_eq!(code, 69, "{text}");
    says(&text, "missing: a framework");
    says(&text, "  fix: pass --framework");
    // A package.json that does not parse is named, with where, by doctor
    // and by the run (exit 64).
    std::fs::write(
        outside.join("package.json"),
        r#"{"devDependencies": {"vitest": "#,
    )
    .unwrap();
    let (code, text) = doctor(&["--project", outside.to_str().unwrap()]);
    assert_eq!(code, 69, "{text}");
    assert!(
        text.contains("package.json is not valid JSON: EOF while parsing a value at line 1"),
        "{text}"
    );
    let out = output(&mut tcrunner(&["--project", outside.to_str().unwrap()]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert!(
        stderr.contains("package.json is not valid JSON"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&outside);
    let (code, text) = doctor(&["--project", "/nonexistent/project"]);
    assert_eq!(code, 66, "{text}");
}
