//! `tcrunner doctor`: what a run of the project would use (the framework,
//! the interpreter or node, their versions), which plugins tcrunner
//! switches off, and what is missing, each with the command that fixes it.
//! It looks the way a run would ([`crate::frameworks`]) and runs nothing
//! but the interpreter's or node's own version query.
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cli::RawDoctor;
use crate::exit;
use crate::frameworks::{
    self, broken_venv, find_package, install_hint, node_version, pip_install, pytest_ini_value,
    python_for, upgrade_hint, FrameworkName,
};

/// Why the doctor could not look.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DoctorError {
    #[error("--project {}: no such directory", .0.display())]
    NoProject(PathBuf),
    #[error("writing the output failed")]
    Output(#[source] io::Error),
}

impl DoctorError {
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            DoctorError::NoProject(_) => exit::NO_INPUT,
            DoctorError::Output(_) => exit::IO_ERROR,
        }
    }
}

/// What the doctor found: lines to show, and problems with their fixes.
#[derive(Default)]
struct Findings {
    lines: Vec<String>,
    /// What is missing, and the command (or step) that fixes it.
    missing: Vec<(String, String)>,
}

impl Findings {
    fn say(&mut self, key: &str, value: impl Into<String>) {
        self.lines.push(format!("{key}: {}", value.into()));
    }

    fn lack(&mut self, what: impl Into<String>, fix: impl Into<String>) {
        self.missing.push((what.into(), fix.into()));
    }
}

/// Looks at the project; exit 0 when nothing is missing.
pub(crate) fn run(config: &RawDoctor, mut out: impl Write) -> Result<i32, DoctorError> {
    let project = match &config.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
    };
    if !project.is_dir() {
        return Err(DoctorError::NoProject(project));
    }
    let project = std::path::absolute(&project).unwrap_or(project);
    // A program given as a path is the caller's, relative to where they are.
    let absolute = |program: &Path| {
        if program.components().count() > 1 {
            std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf())
        } else {
            program.to_path_buf()
        }
    };
    let python = config.python.as_deref().map(absolute);
    let node = config.node.as_deref().map(absolute);
    let mut found = Findings::default();
    found.say("project", project.display().to_string());
    match config
        .framework
        .map(|f| (f, "as asked"))
        .or_else(|| frameworks::detect(&project, &[], &[]).map(|f| (f, "detected")))
    {
        None => found.lack(
            format!(
                "a framework: cannot tell which one the project uses ({})",
                frameworks::not_detected(&project)
            ),
            "pass --framework pytest|jest|vitest",
        ),
        Some((FrameworkName::Pytest, how)) => {
            found.say("framework", format!("pytest ({how})"));
            pytest(&project, python.as_deref(), &mut found);
        }
        Some((name @ (FrameworkName::Jest | FrameworkName::Vitest), how)) => {
            let package = name.framework().name();
            // A project with both: a run takes pytest where it is asked
            // for Python tests, so both are looked at.
            let also_pytest = how == "detected" && frameworks::has_pytest(&project);
            if also_pytest {
                found.say(
                    "framework",
                    format!("{package} ({how}), and pytest for `.py` paths and targets"),
                );
            } else {
                found.say("framework", format!("{package} ({how})"));
            }
            javascript(&project, package, node.as_deref(), &mut found);
            if also_pytest {
                pytest(&project, python.as_deref(), &mut found);
            }
        }
    }
    let write = |out: &mut dyn Write| -> io::Result<()> {
        for line in &found.lines {
            writeln!(out, "{line}")?;
        }
        if found.missing.is_empty() {
            writeln!(out, "ok: nothing is missing")?;
        }
        for (what, fix) in &found.missing {
            writeln!(out, "missing: {what}")?;
            writeln!(out, "  fix: {fix}")?;
        }
        out.flush()
    };
    write(&mut out).map_err(DoctorError::Output)?;
    Ok(if found.missing.is_empty() {
        exit::SUCCESS
    } else {
        exit::FRAMEWORK_UNAVAILABLE
    })
}

/// `9.0.2` as `[9, 0, 2]`, for comparing versions; a part's digits only
/// (`0rc1` is 0).
fn version_parts(version: &str) -> Vec<u64> {
    let mut parts: Vec<u64> = version
        .trim()
        .split('.')
        .map(|part| {
            let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().unwrap_or(0)
        })
        .collect();
    // `9.0` is `9.0.0`.
    while parts.last() == Some(&0) {
        parts.pop();
    }
    parts
}

/// What the interpreter says of itself, pytest and its plugins, as one
/// JSON line (Python 3.8 and later, standard library only).
const PYTHON_QUERY: &str = r#"
import json, sys
info = {"python": sys.version.split()[0], "pytest": None, "plugins": []}
try:
    import importlib.util
    info["pip"] = importlib.util.find_spec("pip") is not None
except Exception:
    info["pip"] = False
try:
    import pytest
    info["pytest"] = pytest.__version__
except Exception as exc:
    info["error"] = "%s: %s" % (type(exc).__name__, exc)
try:
    from importlib import metadata
    for dist in metadata.distributions():
        for ep in dist.entry_points:
            if ep.group == "pytest11":
                info["plugins"].append([ep.name, dist.metadata["Name"], dist.version])
except Exception:
    pass
print(json.dumps(info))
"#;

/// The pytest plugins tcrunner turns off, by entry-point name, and why.
const SWITCHED_OFF: &[(&str, &str)] = &[(
    "pytest-teamcity",
    "it would report every test a second time; tcrunner reports them",
)];

fn pytest(project: &Path, python: Option<&Path>, found: &mut Findings) {
    let given = python.is_some();
    let python = python_for(project, python);
    let shown = python.display().to_string();
    let answer = Command::new(&python)
        .args(["-c", PYTHON_QUERY])
        .current_dir(project)
        .output();
    let info: serde_json::Value = match answer {
        Err(e) => {
            match broken_venv(&python) {
                Some([venv, gone, fix]) => found.lack(
                    format!("a working interpreter in the virtual environment {venv} ({gone})"),
                    fix,
                ),
                None if given => found.lack(
                    format!("the Python interpreter {shown}: {e}"),
                    "give --python the path of a Python 3 interpreter that exists",
                ),
                None => found.lack(
                    format!("the Python interpreter {shown}: {e}"),
                    "install Python 3 or a virtual environment in .venv, or pass --python",
                ),
            }
            return;
        }
        Ok(out) => match serde_json::from_slice(&out.stdout) {
            Ok(info) => info,
            Err(_) => {
                found.lack(
                    format!(
                        "a working Python interpreter: {shown} {}",
                        crate::process::describe(out.status)
                    ),
                    "pass --python with a Python 3.8 or later",
                );
                return;
            }
        },
    };
    found.say(
        "interpreter",
        format!(
            "{shown} (Python {})",
            info["python"].as_str().unwrap_or("?")
        ),
    );
    let has_pip = info["pip"].as_bool().unwrap_or(true);
    match info["pytest"].as_str() {
        Some(version) => {
            found.say("pytest", version);
            let major = version
                .split('.')
                .next()
                .and_then(|m| m.parse::<u32>().ok());
            if major.is_some_and(|m| m < 8) {
                found.lack(
                    format!("pytest 8 or later (this is {version})"),
                    pip_install(&python, has_pip, "-U pytest"),
                );
            } else if let Some((file, min)) = pytest_ini_value(project, "minversion") {
                if version_parts(version) < version_parts(&min) {
                    found.lack(
                        format!("pytest {min} or later, which {file} asks for with `minversion` (this is {version})"),
                        pip_install(&python, has_pip, &format!("-U 'pytest>={min}'")),
                    );
                }
            }
        }
        None => found.lack(
            format!(
                "pytest, for {shown} ({})",
                info["error"].as_str().unwrap_or("not importable")
            ),
            pip_install(&python, has_pip, "pytest"),
        ),
    }
    let plugins: Vec<(String, String, String)> = info["plugins"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let field = |i: usize| p.get(i).and_then(|v| v.as_str()).map(str::to_owned);
            Some((field(0)?, field(1)?, field(2)?))
        })
        .collect();
    let mut listed: Vec<String> = plugins
        .iter()
        .map(|(_, dist, version)| format!("{dist} {version}"))
        .collect();
    listed.sort();
    listed.dedup();
    found.say(
        "plugins",
        if listed.is_empty() {
            "none installed".to_owned()
        } else {
            listed.join(", ")
        },
    );
    let off: Vec<String> = plugins
        .iter()
        .filter_map(|(entry, dist, version)| {
            SWITCHED_OFF
                .iter()
                .find(|(name, _)| name == entry)
                .map(|(_, why)| format!("{dist} {version} ({why})"))
        })
        .collect();
    found.say(
        "switched off",
        if off.is_empty() {
            "nothing".to_owned()
        } else {
            off.join(", ")
        },
    );
}

fn javascript(project: &Path, package: &str, node: Option<&Path>, found: &mut Findings) {
    let node = node.map_or_else(|| PathBuf::from("node"), Path::to_path_buf);
    let shown = node.display().to_string();
    let version = node_version(&node);
    match version {
        Some((major, minor)) => found.say("node", format!("{shown} ({major}.{minor})")),
        None => found.lack(
            format!("node: {shown} does not run"),
            "install Node.js (https://nodejs.org), or pass --node",
        ),
    }
    match find_package(project, package) {
        Some(installed) => {
            found.say(
                package,
                format!("{} ({})", installed.version, installed.dir.display()),
            );
            if let Some(oldest) = frameworks::too_old(package, &installed.version) {
                found.lack(
                    format!(
                        "{package} {oldest} or later (this is {})",
                        installed.version
                    ),
                    upgrade_hint(project, &format!("{package}@latest")),
                );
            }
            if let (Some(floor), Some(have)) = (installed.node_floor, version) {
                if have < floor {
                    found.lack(
                        format!(
                            "node {}.{} or later for {package} {} (this is {}.{})",
                            floor.0, floor.1, installed.version, have.0, have.1
                        ),
                        "install a newer Node.js, or pass --node",
                    );
                }
            }
        }
        None => match project
            .ancestors()
            .map(|dir| dir.join(".pnp.cjs"))
            .find(|file| file.is_file())
        {
            Some(pnp) => found.lack(
                format!(
                    "{package} in a node_modules folder ({} installs with Yarn Plug'n'Play)",
                    pnp.parent().unwrap_or(project).display()
                ),
                "set `nodeLinker: node-modules` in .yarnrc.yml, then `yarn install`",
            ),
            None => found.lack(
                format!(
                    "{package}, in {}'s or a parent folder's node_modules",
                    project.display()
                ),
                install_hint(project, package),
            ),
        },
    }
    found.say(
        "switched off",
        format!(
            "the reporters your {package} configuration names, for tcrunner's runs (tcrunner's reporter takes their place)"
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minversion_is_read_from_the_file_pytest_reads() {
        let dir = std::env::temp_dir().join(format!("tcrunner-minversion-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(pytest_ini_value(&dir, "minversion"), None);
        std::fs::write(dir.join("setup.cfg"), "[tool:pytest]\nminversion = 7.1\n").unwrap();
        assert_eq!(
            pytest_ini_value(&dir, "minversion"),
            Some(("setup.cfg".into(), "7.1".into()))
        );
        std::fs::write(
            dir.join("pyproject.toml"),
            "[project]\nname = 'x'\n[tool.pytest.ini_options]\nminversion = \"8.2\"\n",
        )
        .unwrap();
        assert_eq!(
            pytest_ini_value(&dir, "minversion"),
            Some(("pyproject.toml".into(), "8.2".into()))
        );
        // A pytest.ini comes first, and one without minversion has none.
        std::fs::write(dir.join("pytest.ini"), "[pytest]\naddopts = -q\n").unwrap();
        assert_eq!(pytest_ini_value(&dir, "minversion"), None);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(version_parts("8.4.2") < version_parts("9.0"));
        assert_eq!(version_parts("9.0"), version_parts("9"));
        assert!(version_parts("9.0.1") > version_parts("9.0rc1"));
    }
}
