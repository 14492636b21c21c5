//! pytest: PyCharm's what-to-run arguments turned into a pytest command line
//! (pycharm-and-teamcity-protocol §1.1-1.3), run with the project's own
//! interpreter and our plugin loaded with `-p tcrunner_pytest`
//! (`runners/tcrunner_pytest.py`, which imports the reporter
//! `runners/_tcrunner_pytest.py` and its parts, `_tcrunner_pytest_*.py`).
//!
//! Checked against pytest 8.4 and 9.x. Targets accepted:
//! - `tests/test_a.py::TestX.test_one` (PyCharm's form: dots after `::`
//!   become `::`; a `[params]` suffix is kept verbatim);
//! - `tests/test_a.py::test_eval[6*9-42]`, `tests/test_a.py`;
//! - doctests and items of other files, pytest's own node ids
//!   (`src/calc/ops.py::calc.ops.add`, `docs/guide.txt::guide.txt`), as they are;
//! - dotted `pkg.mod.Class.test` and bare modules `tests.test_a`, resolved
//!   against the project's files (the longest prefix naming a `.py` file).
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{
    holds_file, os_args, test_timeout_env, write_file, write_runner, Framework, Launch, Refusal,
    Request, SetupError,
};
use crate::process::Spec;
use crate::runners::{runner, Runner};

pub(crate) struct Pytest;

/// The module pytest loads with `-p`: a few lines that import the reporter
/// beside it, whose bytecode is then cached (see the module's docstring).
const PLUGIN: Runner = runner!(
    "tcrunner_pytest.py",
    [
        runner!("_tcrunner_pytest.py"),
        runner!("_tcrunner_pytest_channel.py"),
        runner!("_tcrunner_pytest_common.py"),
        runner!("_tcrunner_pytest_nodes.py"),
        runner!("_tcrunner_pytest_order.py"),
        runner!("_tcrunner_pytest_probe.py"),
        runner!("_tcrunner_pytest_reporter.py"),
        runner!("_tcrunner_pytest_timeout.py"),
    ]
);

/// How the plugin's log line for a `pytest.exit()` outside any test begins
/// (`_PYTEST_EXIT` in `runners/_tcrunner_pytest_reporter.py`).
const PYTEST_EXIT: &str = "pytest.exit: ";

/// Set when tcrunner added `--continue-on-collection-errors`, which the
/// plugin turns off again when the project's `addopts` stop early.
const ADDED_CONTINUE_VAR: &str = "TCRUNNER_ADDED_CONTINUE";

/// The test history's order for the plugin (`--ff`, `--sw`): a JSON file
/// read by `runners/_tcrunner_pytest_order.py`.
const ORDER_FILE_VAR: &str = "TCRUNNER_ORDER_FILE";

/// Whether the project looks like a pytest project.
pub(crate) fn detect(project: &Path) -> bool {
    let has = |name: &str| project.join(name).is_file();
    let file_mentions = |name: &str, needle: &str| {
        std::fs::read_to_string(project.join(name)).is_ok_and(|s| s.contains(needle))
    };
    has("pytest.ini")
        || has("pytest.toml")
        || has(".pytest.ini")
        || has(".pytest.toml")
        || has("conftest.py")
        || file_mentions("pyproject.toml", "[tool.pytest")
        || file_mentions("setup.cfg", "[tool:pytest]")
        || file_mentions("tox.ini", "[pytest]")
}

/// Whether the project (or the folders asked for) holds pytest-style test
/// files, `test_*.py` or `*_test.py`, within three levels: a project without
/// any configuration still runs with pytest, as PyCharm runs it.
pub(crate) fn has_test_files(project: &Path, paths: &[PathBuf]) -> bool {
    let roots = if paths.is_empty() {
        vec![project.to_path_buf()]
    } else {
        paths.iter().map(|p| project.join(p)).collect()
    };
    holds_file(roots, |name| {
        name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py"))
    })
}

/// The interpreter: `--python`, else `$VIRTUAL_ENV`, else `.venv`/`venv` in
/// the project, else `python3` on PATH.
fn interpreter(request: &Request) -> PathBuf {
    python_for(&request.project, request.python.as_deref())
}

/// The interpreter a run of `project` uses: `python` when given, else the
/// active or the project's virtual environment's, else `python3`. A virtual
/// environment (a folder with `pyvenv.cfg`) whose `python` is gone, a link
/// to an interpreter since removed, is still the one: the run then says so,
/// rather than run the tests with another Python.
pub(crate) fn python_for(project: &Path, python: Option<&Path>) -> PathBuf {
    if let Some(python) = python {
        return python.to_path_buf();
    }
    let venvs = std::env::var_os("VIRTUAL_ENV")
        .map(PathBuf::from)
        .into_iter()
        .chain([project.join(".venv"), project.join("venv")]);
    for venv in venvs {
        let python = venv.join("bin").join("python");
        if python.is_file() || venv.join("pyvenv.cfg").is_file() {
            return python;
        }
    }
    PathBuf::from("python3")
}

/// The command that installs `spec` (`pytest`, `-U pytest`) for `python`:
/// through its pip, or, in an environment made without pip (`uv venv`,
/// `python -m venv --without-pip`), through uv where it is on PATH, else
/// after `ensurepip` gives it one.
pub(crate) fn pip_install(python: &Path, has_pip: bool, spec: &str) -> String {
    let py = super::shell_word(python);
    if has_pip {
        return format!("{py} -m pip install {spec}");
    }
    let uv = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("uv").is_file()));
    if uv {
        format!("uv pip install --python {py} {spec}")
    } else {
        format!("{py} -m ensurepip && {py} -m pip install {spec}")
    }
}

/// Whether `python` can import pip.
fn has_pip(python: &Path) -> bool {
    std::process::Command::new(python)
        .args(["-c", "import pip"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// When `python` is the interpreter of a virtual environment and is gone
/// (a link to a Python since removed or upgraded): the environment, what
/// is wrong with its interpreter, and the fix.
pub(crate) fn broken_venv(python: &Path) -> Option<[String; 3]> {
    let venv = python.parent()?.parent()?;
    if python.is_file() || !venv.join("pyvenv.cfg").is_file() {
        return None;
    }
    let gone = match std::fs::read_link(python) {
        Ok(target) => format!(
            "{} links to {}, which is gone",
            python.display(),
            target.display()
        ),
        Err(_) => format!("{} is missing", python.display()),
    };
    Some([
        venv.display().to_string(),
        gone,
        format!(
            "recreate it (`python3 -m venv --clear {}`, then install the project's test requirements), or pass --python",
            super::shell_word(venv)
        ),
    ])
}

/// Turns one PyCharm target into a pytest node id.
pub(crate) fn translate_target(project: &Path, target: &str) -> Result<String, SetupError> {
    let bad = |problem: &str| SetupError::unsupported(format!("--target {target}"), problem);
    if target.trim().is_empty() {
        return Err(bad("empty target"));
    }
    if let Some((file, python)) = split_file(target) {
        if file.is_empty() {
            return Err(bad("no file before `::`"));
        }
        if let Some(file) = below_project(project, file) {
            return translate_target(project, &format!("{file}::{python}"));
        }
        if python.is_empty() {
            return Ok(file.to_owned());
        }
        // Items of other files (text doctests, a conftest's YAML cases) and
        // doctests are named by pytest, dots and all: already node ids. So
        // is a target with `::` between its names (pytest's own form, as
        // tcrunner's results give ids): a dot in it is part of a name, as
        // in a custom collector's `test_data.py::test_loader::case.data`.
        if !file.ends_with(".py")
            || python
                .split('[')
                .next()
                .is_some_and(|names| names.contains("::"))
            || names_a_doctest(file, python) && !defines(project, file, python)
        {
            return Ok(target.to_owned());
        }
        // Dots separate classes and functions, except inside `[params]`.
        let (names, params) = match python.find('[') {
            Some(i) => python.split_at(i),
            None => (python, ""),
        };
        if names.is_empty() || names.split(['.', ':']).any(str::is_empty) && !names.contains("::") {
            return Err(bad(
                "expected `file.py::Class.test` or `file.py::test[params]`",
            ));
        }
        return Ok(format!(
            "{file}::{}{params}",
            names.replace("::", ".").replace('.', "::")
        ));
    }
    // Parameters may hold anything, `/` and `::` too.
    let (names, params) = match target.find('[') {
        Some(i) => target.split_at(i),
        None => (target, ""),
    };
    // A file of the project's top folder is a path, whatever its suffix
    // (a text doctest, a conftest's YAML cases), not a dotted name.
    if names.ends_with(".py") || names.contains('/') || project.join(names).is_file() {
        if let Some(file) = below_project(project, names) {
            return Ok(format!("{file}{params}"));
        }
        return Ok(target.to_owned());
    }
    // Dotted: the longest prefix that names a module file.
    let parts: Vec<&str> = names.split('.').collect();
    if parts.iter().any(|p| p.is_empty() || p.contains(':')) {
        return Err(bad(
            "expected a dotted name such as `pkg.module.Class.test`",
        ));
    }
    for split in (1..=parts.len()).rev() {
        let module = parts[..split].join("/");
        let mut file = format!("{module}.py");
        if let Some(below) = below_project(project, &file) {
            file = below;
        }
        if project.join(&file).is_file() {
            let rest = &parts[split..];
            return Ok(if rest.is_empty() {
                file
            } else {
                format!("{file}::{}{params}", rest.join("::"))
            });
        }
        if split == parts.len() && project.join(&module).is_dir() && params.is_empty() {
            return Ok(module);
        }
    }
    if let Some((path, taken)) = dotted_path(project, &parts, params.is_empty()) {
        let rest = &parts[taken..];
        return Ok(if rest.is_empty() {
            path
        } else {
            format!("{path}::{}{params}", rest.join("::"))
        });
    }
    Err(bad(&format!(
        "no module file for it under {}",
        project.display()
    )))
}

/// The file (or, with `folders`, the folder) that the most leading parts of
/// a dotted name name, where folder and file names hold dots of their own
/// (`v1.2.test_a.TestC` is `v1.2/test_a.py::TestC`), and how many parts it
/// takes: the dots of the name are the separators of the path or not.
fn dotted_path(project: &Path, parts: &[&str], folders: bool) -> Option<(String, usize)> {
    fn walk(
        dir: &Path,
        at: &str,
        parts: &[&str],
        from: usize,
        folders: bool,
        best: &mut Option<(String, usize)>,
    ) {
        for end in from + 1..=parts.len() {
            let name = parts[from..end].join(".");
            let path = if at.is_empty() {
                name.clone()
            } else {
                format!("{at}/{name}")
            };
            let longer = best.as_ref().is_none_or(|(_, taken)| end > *taken);
            let folder = dir.join(&name);
            if longer && dir.join(format!("{name}.py")).is_file() {
                *best = Some((format!("{path}.py"), end));
            } else if longer && end == parts.len() && folders && folder.is_dir() {
                *best = Some((path.clone(), end));
            }
            if end < parts.len() && folder.is_dir() {
                walk(&folder, &path, parts, end, folders, best);
            }
        }
    }
    let mut best = None;
    walk(project, "", parts, 0, folders, &mut best);
    best
}

/// `file` (relative) as the project's, when it names nothing there but
/// does from a folder above the project, inside the project: pytest names
/// files below its rootdir, which may be such a folder (an ini at a
/// repository's root), so a run from `sub` reports `sub/tests/test_x.py`,
/// which is `tests/test_x.py` here.
fn below_project(project: &Path, file: &str) -> Option<String> {
    if file.is_empty() || Path::new(file).is_absolute() || project.join(file).exists() {
        return None;
    }
    let found = project
        .ancestors()
        .skip(1)
        .map(|up| up.join(file))
        .find(|p| p.exists())?;
    let inside = found.strip_prefix(project).ok()?;
    Some(inside.to_string_lossy().into_owned())
}

/// PyCharm's doctest form: with `--doctest-modules` its runner names the
/// object after `::` by its module's dotted name, found by walking up the
/// folders that hold an `__init__.py`, so a doctest of `src/calc/ops.py` is
/// run as `src/calc/ops.py::mul` or `::Calc.div` and reaches pytest as
/// `src/calc/ops.py::calc.ops.mul`. A target already in pytest's form,
/// naming no object, or naming a test ([`names_a_test`]) is left as it is:
/// PyCharm's runner qualifies those too, and pytest then finds nothing.
fn doctest_target(project: &Path, target: &str) -> String {
    let Some((file, names)) = split_file(target) else {
        return target.to_owned();
    };
    if !file.ends_with(".py")
        || names.is_empty()
        || names_a_doctest(file, names)
        || names_a_test(project, file, names)
    {
        return target.to_owned();
    }
    let path = project.join(file);
    let mut module: Vec<String> = Vec::new();
    if let Some(stem) = path.file_stem().filter(|s| *s != "__init__") {
        module.push(stem.to_string_lossy().into_owned());
    }
    let mut dir = path.parent();
    while let Some(folder) = dir.filter(|d| d.join("__init__.py").is_file()) {
        match folder.file_name() {
            Some(name) => module.insert(0, name.to_string_lossy().into_owned()),
            None => break,
        }
        dir = folder.parent();
    }
    format!("{file}::{}.{}", module.join("."), names.replace("::", "."))
}

/// Whether `--doctest-modules` is among the options pytest adds by itself:
/// `PYTEST_ADDOPTS`, or the `addopts` of the configuration files in the
/// project or a folder above it (read as text: the option named anywhere in
/// the first such file found counts).
fn doctests_in_addopts(project: &Path) -> bool {
    const OPTION: &str = "--doctest-modules";
    const FILES: [&str; 6] = [
        "pytest.toml",
        "pytest.ini",
        ".pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
    ];
    if std::env::var("PYTEST_ADDOPTS").is_ok_and(|a| a.contains(OPTION)) {
        return true;
    }
    project.ancestors().any(|folder| {
        FILES
            .iter()
            .filter_map(|name| std::fs::read_to_string(folder.join(name)).ok())
            .any(|text| text.contains(OPTION))
    })
}

/// `FILE::names` split at the first `::`, as pytest splits a node id,
/// unless that one sits inside the `[params]` of a dotted target
/// (`pkg.mod.test[a::b]`: a `[` before it, in no path and no `.py` file).
fn split_file(target: &str) -> Option<(&str, &str)> {
    let (file, names) = target.split_once("::")?;
    let in_params = file.contains('[') && !file.contains('/') && !file.ends_with(".py");
    (!in_params).then_some((file, names))
}

/// The single-letter flags among pytest arguments, combined ones included
/// (`-xvs` is `-x -v -s`). A letter that takes a value (`-k expr`, `-rA`,
/// `-n 4`) ends its group, and the argument after a lone one is its value.
fn short_flags(args: &[String]) -> Vec<char> {
    const TAKE_VALUES: &str = "kmpcorWn";
    let mut flags = Vec::new();
    let mut value_next = false;
    for arg in args {
        if std::mem::take(&mut value_next) {
            continue;
        }
        let Some(letters) = arg.strip_prefix('-') else {
            continue;
        };
        if letters.starts_with('-') || !letters.chars().all(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        for (i, c) in letters.char_indices() {
            if TAKE_VALUES.contains(c) {
                value_next = i + 1 == letters.len();
                break;
            }
            flags.push(c);
        }
    }
    flags
}

/// Whether the module `file` defines a top-level class or function named by
/// the first part of `name` (`TestCalculator` of `TestCalculator.test_add`):
/// then a name that also starts like a doctest's, in a module named after
/// its class, is PyCharm's `Class.test` form.
fn defines(project: &Path, file: &str, name: &str) -> bool {
    let first = name.split(['.', '[']).next().unwrap_or(name);
    let Ok(source) = std::fs::read_to_string(project.join(file)) else {
        return false;
    };
    // Only a class holds tests: a function of the module's name beside a
    // doctest's dotted name (`pkg/__init__.py::pkg.add`) is no `Class.test`.
    let keywords: &[&str] = if name[first.len()..].starts_with('.') {
        &["class "]
    } else {
        &["class ", "def ", "async def "]
    };
    source.lines().any(|line| {
        keywords.iter().any(|keyword| {
            line.strip_prefix(keyword)
                .and_then(|rest| rest.strip_prefix(first))
                .is_some_and(|rest| rest.starts_with(['(', ':', ' ']))
        })
    })
}

/// Whether `names` in `file` name a test rather than an object with a
/// doctest: the file is a test module by the project's `python_files`
/// (pytest's default `test_*.py`, `*_test.py`), and the first name is a test by the default
/// `python_functions` and `python_classes` (`test…`, `Test…`) or a class
/// the file derives from another (a `unittest.TestCase`).
fn names_a_test(project: &Path, file: &str, names: &str) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    if !is_test_module(project, base) {
        return false;
    }
    let first = names.split(['.', ':', '[']).next().unwrap_or(names);
    if first.starts_with("test") || first.starts_with("Test") {
        return true;
    }
    let Ok(source) = std::fs::read_to_string(project.join(file)) else {
        return false;
    };
    source.lines().any(|line| {
        line.strip_prefix("class ")
            .and_then(|rest| rest.strip_prefix(first))
            .and_then(|rest| rest.strip_prefix('('))
            .is_some_and(|bases| !bases.trim_start().starts_with(')'))
    })
}

/// The value of `key` in the file pytest takes its configuration from, in
/// pytest's order of them, with the file's name (`minversion`, one line of
/// `python_files`; a TOML list as written).
pub(crate) fn ini_value(project: &Path, key: &str) -> Option<(String, String)> {
    const FILES: &[(&str, &[&str])] = &[
        ("pytest.toml", &["[pytest]"]),
        (".pytest.toml", &["[pytest]"]),
        ("pytest.ini", &["[pytest]"]),
        (".pytest.ini", &["[pytest]"]),
        (
            "pyproject.toml",
            &["[tool.pytest.ini_options]", "[tool.pytest]"],
        ),
        ("tox.ini", &["[pytest]"]),
        ("setup.cfg", &["[tool:pytest]"]),
    ];
    for (name, sections) in FILES {
        let Ok(text) = std::fs::read_to_string(project.join(name)) else {
            continue;
        };
        let mut inside = false;
        let mut found_section = name.starts_with("pytest") || name.starts_with(".pytest");
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                inside = sections.contains(&line);
                found_section |= inside;
                continue;
            }
            let value = line
                .strip_prefix(key)
                .map(str::trim_start)
                .and_then(|rest| rest.strip_prefix(['=', ':']));
            if let (true, Some(value)) = (inside, value) {
                let value = value.trim().trim_matches(['"', '\'']);
                return Some(((*name).to_owned(), value.to_owned()));
            }
        }
        // The first file that configures pytest is the one it reads.
        if found_section {
            return None;
        }
    }
    None
}

/// Whether the file name `base` matches one of the project's
/// `python_files` patterns (pytest's default `test_*.py *_test.py`).
fn is_test_module(project: &Path, base: &str) -> bool {
    let configured = ini_value(project, "python_files").map(|(_, value)| value);
    let patterns = configured.as_deref().unwrap_or("test_*.py *_test.py");
    patterns
        .split(|c: char| c.is_whitespace() || c == ',')
        .map(|p| p.trim_matches(|c| matches!(c, '"' | '\'' | '[' | ']')))
        .any(|pattern| !pattern.is_empty() && glob_matches(pattern.as_bytes(), base.as_bytes()))
}

/// fnmatch's `*` and `?` (no character classes).
fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|skip| glob_matches(rest, &name[skip..])),
        Some((b'?', rest)) => !name.is_empty() && glob_matches(rest, &name[1..]),
        Some((c, rest)) => name.first() == Some(c) && glob_matches(rest, &name[1..]),
    }
}

/// Whether `name` (after the `::` of a `.py` file) is a doctest's: pytest
/// names a doctest after its module's dotted name and the object's
/// (`src/calc/ops.py::calc.ops.add`), so the name starts with the file's
/// module name, or its folders' and module name, and a dot. PyCharm's
/// `Class.test` form starts with a class or function name instead.
fn names_a_doctest(file: &str, name: &str) -> bool {
    let mut module: Vec<&str> = file.trim_end_matches(".py").split('/').collect();
    if module.last() == Some(&"__init__") {
        module.pop(); // a package's doctests are named after the package
    }
    // The module's own docstring is named after the module alone.
    (0..module.len()).any(|first| {
        name.strip_prefix(module[first..].join(".").as_str())
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

/// What pytest writes into a cache folder it makes (`CACHEDIR_FILES` in
/// `_pytest/cacheprovider.py`, pytest 8 and 9).
const CACHE_FILES: [(&str, &str); 3] = [
    (
        "README.md",
        "# pytest cache directory #\n\n\
         This directory contains data from the pytest's cache plugin,\n\
         which provides the `--lf` and `--ff` options, as well as the `cache` fixture.\n\n\
         **Do not** commit this to version control.\n\n\
         See [the docs](https://docs.pytest.org/en/stable/how-to/cache.html) for more information.\n",
    ),
    (".gitignore", "# Created by pytest automatically.\n*\n"),
    (
        "CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n\
         # This file is a cache directory tag created by pytest.\n\
         # For information about cache directory tags, see:\n\
         #\thttps://bford.info/cachedir/spec.html\n",
    ),
];

impl Framework for Pytest {
    fn name(&self) -> &'static str {
        "pytest"
    }

    fn runner(&self) -> Runner {
        PLUGIN
    }

    fn launch(&self, request: &Request) -> Result<Launch, SetupError> {
        if !request.paths.is_empty() && !request.targets.is_empty() {
            return Err(SetupError::unsupported(
                "--target",
                "cannot be combined with --path (pass the folders and files as --path, or the tests as --target)",
            ));
        }
        let runner = write_runner(self.runner())?;
        let runner_dir = runner
            .parent()
            .expect("written into a folder")
            .to_path_buf();

        // PyCharm's order: our additions, the raw arguments, then what to run.
        let mut shown: Vec<String> = Vec::new();
        let raw = &request.raw;
        let short = short_flags(raw);
        // `--sw-skip` turns stepwise on as well.
        let stops_early = short.contains(&'x')
            || raw.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "--exitfirst" | "--sw" | "--stepwise" | "--sw-skip" | "--stepwise-skip"
                ) || a.starts_with("--maxfail")
            });
        let add_continue =
            !stops_early && !raw.iter().any(|a| a == "--continue-on-collection-errors");
        if add_continue {
            shown.push("--continue-on-collection-errors".into());
        }
        if request.collect_only && !self.collects_only(raw) {
            shown.push("--collect-only".into());
        }
        // As PyCharm does on pytest >= 6: the tree carries every result, so
        // pytest's header, summary and verbose lines would only repeat it.
        // `--jb-show-summary` (PyCharm's switch) or any verbosity flag keeps them.
        let show_summary = raw.iter().any(|a| a == "--jb-show-summary");
        let chooses_verbosity = short.iter().any(|c| matches!(c, 'v' | 'q'))
            || raw.iter().any(|a| {
                matches!(a.as_str(), "--verbose" | "--quiet") || a.starts_with("--verbosity")
            });
        // The quiet flags are the terminal plugin's: without it pytest
        // refuses them as unknown.
        let no_terminal = raw
            .windows(2)
            .any(|pair| pair[0] == "-p" && pair[1] == "no:terminal")
            || raw.iter().any(|a| a == "-pno:terminal");
        if !show_summary && !chooses_verbosity && !no_terminal {
            shown.extend(["--no-header", "--no-summary", "-q"].map(String::from));
        }
        // As PyCharm's runner: the IDE asks for tests' output as it is
        // printed. A `--capture` of the raw arguments comes later and wins.
        if std::env::var_os("JB_DISABLE_BUFFERING").is_some() && !short.contains(&'s') {
            shown.push("-s".into());
        }
        if let Some(jobs) = request.jobs {
            shown.extend(self.jobs_args(jobs, request)?);
        }
        shown.extend(raw.iter().filter(|a| *a != "--jb-show-summary").cloned());
        for path in &request.paths {
            shown.push(path.to_string_lossy().into_owned());
        }
        let doctests = raw.iter().any(|a| a == "--doctest-modules")
            || (!request.targets.is_empty() && doctests_in_addopts(&request.project));
        for target in &request.targets {
            let target = if doctests {
                doctest_target(&request.project, target)
            } else {
                target.clone()
            };
            shown.push(translate_target(&request.project, &target)?);
        }

        let mut args: Vec<String> = vec![
            "-m".into(),
            "pytest".into(),
            "-p".into(),
            "tcrunner_pytest".into(),
        ];
        args.extend(shown.iter().cloned());
        let python_path = match request.var("PYTHONPATH") {
            Some(existing) if !existing.is_empty() => {
                let mut joined = runner_dir.into_os_string();
                joined.push(":");
                joined.push(existing);
                joined
            }
            _ => runner_dir.into_os_string(),
        };
        let mut env: Vec<(OsString, OsString)> = vec![
            ("PYTHONPATH".into(), python_path),
            // Live output with `-s`; pytest captures everything else anyway.
            ("PYTHONUNBUFFERED".into(), "1".into()),
            ("PYTEST_RUN_CONFIG".into(), "True".into()),
        ];
        if add_continue {
            // The plugin takes it back when the project's `addopts` stop early.
            env.push((ADDED_CONTINUE_VAR.into(), "1".into()));
        }
        // The plugin's per-test alarm fails only the test that ran too long.
        env.extend(test_timeout_env(request));
        if let Some(order) = &request.order_file {
            env.push((ORDER_FILE_VAR.into(), order.clone().into_os_string()));
        }
        let program = interpreter(request);
        if let Some([venv, gone, fix]) = broken_venv(&program) {
            return Err(SetupError::Unavailable(format!(
                "the virtual environment {venv} has no working interpreter ({gone}): {fix}"
            )));
        }
        let spec = Spec {
            program,
            args: os_args(&args),
            env,
            cwd: request.project.clone(),
            env_clear: false,
            sandbox: None,
        };
        Ok(Launch {
            spec,
            shown_args: shown,
        })
    }

    /// pytest-xdist's `-n`, when it is installed for the interpreter; one
    /// job needs no plugin.
    fn jobs_args(&self, jobs: u32, request: &Request) -> Result<Vec<String>, SetupError> {
        if jobs == 1 {
            return Ok(Vec::new());
        }
        let python = interpreter(request);
        let found = std::process::Command::new(&python)
            .args(["-c", "import xdist"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        match found {
            Ok(status) if status.success() => Ok(vec!["-n".into(), jobs.to_string()]),
            // A missing interpreter is told when the run starts.
            Err(_) => Ok(vec!["-n".into(), jobs.to_string()]),
            Ok(_) => Err(SetupError::Unavailable(format!(
                "--jobs {jobs} needs pytest-xdist, which {} does not have: install it with `{} -m pip install pytest-xdist`",
                python.display(),
                python.display()
            ))),
        }
    }

    fn ci_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("CI", "true")]
    }

    /// `.pytest_cache` in the project, where `--lf` and `--sw` keep their
    /// state. pytest makes it by renaming a folder it builds beside it,
    /// which a read-only project refuses, so a missing one is made here,
    /// with the files pytest puts in it.
    fn sandbox_writable(&self, request: &Request) -> Result<Vec<PathBuf>, SetupError> {
        let cache = request.project.join(".pytest_cache");
        if !cache.is_dir() {
            for (name, content) in CACHE_FILES {
                write_file(&cache, name, content).map_err(|e| match e {
                    SetupError::Runner { path, source } => SetupError::Cache { path, source },
                    other => other,
                })?;
            }
        }
        Ok(vec![cache])
    }

    fn collects_only(&self, raw: &[String]) -> bool {
        // pytest's own switch after `--`: the run reports the collected tree
        // as `--collect-only` does, and pytest's exit code 0 stands (nothing
        // ran on purpose, not "no tests").
        raw.iter().any(|a| a == "--collect-only" || a == "--co")
    }

    fn informational(&self, raw: &[String]) -> bool {
        let short = short_flags(raw);
        short.contains(&'h')
            || short.contains(&'V')
            || raw.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "--help"
                        | "--version"
                        | "--markers"
                        | "--fixtures"
                        | "--funcargs"
                        | "--fixtures-per-test"
                )
            })
    }

    fn timeout_prefix(&self) -> &'static str {
        // The plugin's alarm (runners/_tcrunner_pytest_timeout.py).
        "timed out after "
    }

    fn missing_hint(&self, stderr: &str, program: &Path) -> Option<String> {
        stderr.contains("No module named pytest").then(|| {
            format!(
                "pytest is not installed for {}: install it with `{}`, or pass --python",
                program.display(),
                pip_install(program, has_pip(program), "pytest")
            )
        })
    }

    /// The plugin says hello on import, before pytest parses its arguments,
    /// so a usage error still gets one; `live_output` follows at configure.
    fn reports_on_import(&self) -> bool {
        true
    }

    /// `pytest.exit()` outside any test (say in a conftest).
    fn stopped_on_purpose(&self, log: &str) -> bool {
        log.starts_with(PYTEST_EXIT)
    }

    /// Interrupted (2), internal error (3), usage error (4).
    fn run_failure_code(&self, code: i32) -> bool {
        matches!(code, 2..=4)
    }

    fn no_tests_code(&self, code: i32) -> bool {
        code == 5
    }

    /// A KeyboardInterrupt: a test raised it, or a Ctrl-C reached pytest
    /// alone.
    fn interrupted(&self, code: i32) -> bool {
        code == 2
    }

    /// A usage error: `ERROR: not found: …` for a target that names no test.
    fn refusal(&self, code: i32, _stderr: &str) -> Option<Refusal> {
        (code == 4).then_some(Refusal::OnStderr)
    }

    fn disabling_option(&self) -> Option<&'static str> {
        Some("-p no:tcrunner_pytest")
    }

    /// Node ids.
    fn mixes_files_and_tests(&self) -> bool {
        true
    }

    fn follows_order_file(&self) -> bool {
        true
    }

    fn users_know_ids(&self) -> bool {
        true
    }

    /// pytest-xdist's `-n N`, `-nN`, `--numprocesses N` or `=N`, with N
    /// other than 0 (`auto` and `logical` included).
    fn runs_in_parallel(&self, args: &[std::ffi::OsString]) -> bool {
        let args: Vec<&str> = args.iter().filter_map(|a| a.to_str()).collect();
        let workers = |n: &str| n != "0";
        args.iter().enumerate().any(|(i, arg)| {
            let next = || args.get(i + 1).copied().is_some_and(workers);
            match *arg {
                "-n" | "--numprocesses" => next(),
                _ => arg
                    .strip_prefix("--numprocesses=")
                    .or_else(|| arg.strip_prefix("-n").filter(|n| !n.is_empty()))
                    .is_some_and(workers),
            }
        })
    }

    /// The plugin's `<nodeid>::<collection>` test (`_COLLECTION` in
    /// `runners/_tcrunner_pytest_reporter.py`); a bare `<collection>` is
    /// the session's own collector (a root `conftest.py`).
    fn load_failure(&self, id: &str) -> Option<String> {
        let collector = id.strip_suffix("<collection>")?;
        Some(match collector.strip_suffix("::") {
            Some(path) => path.to_owned(),
            None if collector.is_empty() => "the test session".to_owned(),
            None => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frameworks::TEST_TIMEOUT_VAR;

    #[test]
    fn short_flags_are_read_combined() {
        let flags = |args: &[&str]| -> String {
            let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            short_flags(&args).into_iter().collect()
        };
        assert_eq!(flags(&["-xvs"]), "xvs");
        assert_eq!(flags(&["-vv", "--tb=short", "-q"]), "vvq");
        // Values are not flags: `-k xv`, `-rA`, `-kxv`, `-n 4`, `-p no:x`.
        assert_eq!(flags(&["-k", "xv", "-rA", "-kxv", "-n", "4", "-s"]), "s");
        assert_eq!(flags(&["-sk", "x", "-v"]), "sv");
        assert_eq!(flags(&["--verbose", "-", "-1", "tests/-x.py"]), "");
    }

    /// pytest refuses `--no-header --no-summary -q` without its terminal
    /// plugin, which defines them: `-p no:terminal` was a usage error.
    #[test]
    fn without_the_terminal_plugin_the_quiet_flags_are_left_out() {
        let shown = |raw: &[&str]| {
            let request = Request {
                project: std::env::temp_dir(),
                raw: raw.iter().map(|a| a.to_string()).collect(),
                ..Request::default()
            };
            Pytest.launch(&request).unwrap().shown_args.join(" ")
        };
        assert_eq!(
            shown(&[]),
            "--continue-on-collection-errors --no-header --no-summary -q"
        );
        for raw in [&["-p", "no:terminal"][..], &["-pno:terminal"]] {
            assert_eq!(
                shown(raw),
                format!("--continue-on-collection-errors {}", raw.join(" "))
            );
        }
    }

    #[test]
    fn the_test_timeout_reaches_the_plugin_as_typed() {
        let env_of = |test_timeout| {
            let request = Request {
                project: std::env::temp_dir(),
                test_timeout,
                ..Request::default()
            };
            let launch = Pytest.launch(&request).unwrap();
            launch
                .spec
                .env
                .iter()
                .find(|(key, _)| key == TEST_TIMEOUT_VAR)
                .map(|(_, value)| value.clone())
        };
        assert_eq!(env_of(Some(1.0)), Some("1".into()));
        assert_eq!(env_of(Some(0.5)), Some("0.5".into()));
        assert_eq!(env_of(None), None);
    }

    #[test]
    fn targets_translate_as_pycharm_sends_them() {
        let project =
            std::env::temp_dir().join(format!("tcrunner-pytest-targets-{}", std::process::id()));
        std::fs::create_dir_all(project.join("pkg/sub")).unwrap();
        std::fs::write(project.join("pkg/sub/mod.py"), "").unwrap();
        std::fs::write(project.join("test_guide.txt"), "").unwrap();
        std::fs::create_dir_all(project.join("v1.2/more")).unwrap();
        std::fs::write(project.join("v1.2/test_a.py"), "").unwrap();
        std::fs::write(project.join("v1.2/more/test_d.e.py"), "").unwrap();
        std::fs::create_dir_all(project.join("tests")).unwrap();
        std::fs::write(
            project.join("tests/TestCalc.py"),
            "import unittest\n\nclass TestCalc(unittest.TestCase):\n    def test_add(self):\n        pass\n",
        )
        .unwrap();
        for (target, node_id) in [
            (
                "tests/test_a.py::TestX.test_one",
                "tests/test_a.py::TestX::test_one",
            ),
            (
                "tests/test_a.py::test_eval[6*9-42]",
                "tests/test_a.py::test_eval[6*9-42]",
            ),
            ("t.py::T.test[a.b-c]", "t.py::T::test[a.b-c]"),
            ("t.py::A::B::test", "t.py::A::B::test"),
            // pytest's own form keeps the dots of its names.
            (
                "test_data.py::test_loader::case.data",
                "test_data.py::test_loader::case.data",
            ),
            ("t.py::A::test[a.b::c]", "t.py::A::test[a.b::c]"),
            // Doctests and items of other files are pytest's node ids as they are.
            (
                "src/calc/ops.py::calc.ops.add",
                "src/calc/ops.py::calc.ops.add",
            ),
            (
                "tests/test_a.py::test_a.helper",
                "tests/test_a.py::test_a.helper",
            ),
            (
                "src/calc/__init__.py::calc.add",
                "src/calc/__init__.py::calc.add",
            ),
            // A module docstring's doctest.
            ("src/calc/ops.py::calc.ops", "src/calc/ops.py::calc.ops"),
            ("src/calc/__init__.py::calc", "src/calc/__init__.py::calc"),
            ("docs/guide.txt::guide.txt", "docs/guide.txt::guide.txt"),
            ("tests/cases.yaml::a.b", "tests/cases.yaml::a.b"),
            (
                "tests/test_a.py::Test_a.test",
                "tests/test_a.py::Test_a::test",
            ),
            ("tests/test_a.py::", "tests/test_a.py"),
            ("tests/test_a.py", "tests/test_a.py"),
            ("pkg.sub.mod.Class.test", "pkg/sub/mod.py::Class::test"),
            ("pkg.sub.mod.test[1-2]", "pkg/sub/mod.py::test[1-2]"),
            // Parameters hold anything.
            ("pkg.sub.mod.test[a/b]", "pkg/sub/mod.py::test[a/b]"),
            ("pkg.sub.mod.test[a::b]", "pkg/sub/mod.py::test[a::b]"),
            // A class named after its module is a class, not a doctest.
            (
                "tests/TestCalc.py::TestCalc.test_add",
                "tests/TestCalc.py::TestCalc::test_add",
            ),
            ("pkg.sub.mod", "pkg/sub/mod.py"),
            ("pkg.sub", "pkg/sub"),
            // A top-level file of another kind is its path.
            ("test_guide.txt", "test_guide.txt"),
            // Folders and modules with dots of their own in their names.
            ("v1.2.test_a.TestC.test_y", "v1.2/test_a.py::TestC::test_y"),
            ("v1.2.test_a", "v1.2/test_a.py"),
            (
                "v1.2.more.test_d.e.test[x.y]",
                "v1.2/more/test_d.e.py::test[x.y]",
            ),
            ("v1.2.more", "v1.2/more"),
            ("v1.2", "v1.2"),
        ] {
            assert_eq!(
                translate_target(&project, target).unwrap(),
                node_id,
                "{target}"
            );
        }
        for bad in [
            "",
            "nope.module.Class",
            "pkg..mod",
            "t.py::.test",
            "pkg.sub.mod.test:x",
        ] {
            assert!(
                translate_target(&project, bad).is_err(),
                "{bad:?} should be rejected"
            );
        }
        // With --doctest-modules, PyCharm's short form names the module.
        std::fs::create_dir_all(project.join("tests")).unwrap();
        std::fs::write(project.join("tests/__init__.py"), "").unwrap();
        std::fs::write(
            project.join("tests/test_a.py"),
            "class CalcCase(unittest.TestCase):\nclass Plain():\n",
        )
        .unwrap();
        std::fs::create_dir_all(project.join("src/calc")).unwrap();
        std::fs::write(project.join("src/calc/__init__.py"), "").unwrap();
        std::fs::write(project.join("src/calc/ops.py"), "").unwrap();
        for (target, node_id) in [
            ("src/calc/ops.py::mul", "src/calc/ops.py::calc.ops.mul"),
            (
                "src/calc/ops.py::Calc.div",
                "src/calc/ops.py::calc.ops.Calc.div",
            ),
            (
                "src/calc/ops.py::calc.ops.mul",
                "src/calc/ops.py::calc.ops.mul",
            ),
            ("src/calc/ops.py::calc.ops", "src/calc/ops.py::calc.ops"),
            (
                "src/calc/__init__.py::add",
                "src/calc/__init__.py::calc.add",
            ),
            ("src/calc/ops.py", "src/calc/ops.py"),
            // Tests of a test module stay tests.
            ("tests/test_a.py::test_b", "tests/test_a.py::test_b"),
            (
                "tests/test_a.py::TestA.test_b[1]",
                "tests/test_a.py::TestA.test_b[1]",
            ),
            ("tests/a_test.py::test_b", "tests/a_test.py::test_b"),
            (
                "tests/test_a.py::CalcCase.test_b",
                "tests/test_a.py::CalcCase.test_b",
            ),
            // Other objects of a test module may hold doctests.
            (
                "tests/test_a.py::helper",
                "tests/test_a.py::tests.test_a.helper",
            ),
            (
                "tests/test_a.py::Plain.method",
                "tests/test_a.py::tests.test_a.Plain.method",
            ),
        ] {
            assert_eq!(doctest_target(&project, target), node_id, "{target}");
        }
        std::fs::remove_dir_all(&project).unwrap();
    }
}
