//! The frameworks tcrunner runs, behind one small trait and a closed enum.
//!
//! Each module turns the validated what-to-run request into a command line
//! for the project's own framework, with our reporter from `runners/` loaded
//! into it, and answers what the run loop needs to know of the framework
//! (what its exit codes and its reporter's first events mean). Nothing here
//! formats service messages: the reporters send events over the side channel
//! and the tree does the rest.
mod environment;
mod js;
mod pytest;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::process::Spec;
use crate::runners::Runner;

pub(crate) use environment::apply as apply_environment;
pub(crate) use js::{
    find_package, install_hint, node_version, too_old, upgrade_hint, Jest, Vitest,
};
pub(crate) use pytest::{
    broken_venv, detect as has_pytest, ini_value as pytest_ini_value, pip_install, python_for,
    Pytest,
};

/// The per-test limit (`--timeout`) for our reporters, in seconds as the
/// user typed them (`1`, `0.5`). pytest's plugin enforces it with an alarm
/// (`_Alarm` in `runners/_tcrunner_pytest_timeout.py`) and echoes it in `timed out
/// after N s`; vitest's runner then sends each test's start before its body
/// runs (`runners/tcrunner-vitest-runner.mjs`).
const TEST_TIMEOUT_VAR: &str = "TCRUNNER_TEST_TIMEOUT";

/// The environment entry that hands `--timeout` to our reporter, if given.
fn test_timeout_env(request: &Request) -> Option<(OsString, OsString)> {
    request
        .test_timeout
        .map(|secs| (TEST_TIMEOUT_VAR.into(), secs.to_string().into()))
}

/// What the user asked to run, validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// The project root (working directory of the framework).
    pub project: PathBuf,
    /// Folders or files (`--path`).
    pub paths: Vec<PathBuf>,
    /// Targets (`--target`), in the forms documented per framework.
    pub targets: Vec<String>,
    /// The targets name tests, never a describe block (`--lf` puts the
    /// recorded failures there): jest and vitest match their names whole,
    /// with nothing under them.
    pub targets_are_tests: bool,
    /// Raw framework arguments (after `--`).
    pub raw: Vec<String>,
    /// Only collect.
    pub collect_only: bool,
    /// Per-test timeout in seconds, for frameworks that enforce one themselves.
    pub test_timeout: Option<f64>,
    /// A JSON file of the tests to run first and to leave out, from the
    /// test history (`--ff`, `--sw`), for frameworks that order and
    /// deselect tests themselves (pytest's plugin reads it); for those
    /// that order files (jest, vitest), the files to run first
    /// (`runners/tcrunner-file-order.cjs`).
    pub order_file: Option<PathBuf>,
    /// `--python`.
    pub python: Option<PathBuf>,
    /// `--node`.
    pub node: Option<PathBuf>,
    /// `--env`, in order.
    pub env: Vec<(OsString, OsString)>,
    /// `--env-clear`.
    pub env_clear: bool,
    /// `--ci`.
    pub ci: bool,
    /// `--jobs`, resolved to a number of workers.
    pub jobs: Option<u32>,
}

/// A command ready to start, and how to describe it to the user.
#[derive(Debug)]
pub(crate) struct Launch {
    pub spec: Spec,
    /// The framework arguments as a user would type them (no reporter plumbing).
    pub shown_args: Vec<String>,
}

/// Why a run cannot start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SetupError {
    /// The request cannot be expressed for this framework.
    #[error("{argument}: {problem}")]
    Unsupported { argument: String, problem: String },
    /// The framework or its runtime is missing or too old.
    #[error("{0}")]
    Unavailable(String),
    /// A cache folder the framework writes in the sandbox cannot be made.
    #[error("cannot make {path}, which the framework writes in the sandbox")]
    Cache {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Writing our reporter out failed.
    #[error("cannot write the reporter to {path}")]
    Runner {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl SetupError {
    fn unsupported(argument: impl Into<String>, problem: impl Into<String>) -> Self {
        SetupError::Unsupported {
            argument: argument.into(),
            problem: problem.into(),
        }
    }
}

/// One framework. The defaults are what the JavaScript frameworks share.
pub(crate) trait Framework {
    /// The name users know it by.
    fn name(&self) -> &'static str;
    /// The reporter of ours it loads, with the files that one loads from
    /// its own folder; [`launch`](Self::launch) writes it out.
    fn runner(&self) -> Runner;
    /// Builds the command line.
    fn launch(&self, request: &Request) -> Result<Launch, SetupError>;
    /// The arguments that run tests in `jobs` parallel workers (`--jobs`).
    /// By default jest's and vitest's `--maxWorkers`.
    fn jobs_args(&self, jobs: u32, _request: &Request) -> Result<Vec<String>, SetupError> {
        Ok(vec![format!("--maxWorkers={jobs}")])
    }
    /// What the framework itself writes in a run (its caches), made if
    /// missing, for `--sandbox` to leave writable. By default nothing.
    fn sandbox_writable(&self, _request: &Request) -> Result<Vec<PathBuf>, SetupError> {
        Ok(Vec::new())
    }
    /// What `--ci` sets. By default what a JavaScript CI sets: `CI=true` and
    /// `NODE_ENV=test` (which only fills a gap).
    fn ci_env(&self) -> &'static [(&'static str, &'static str)] {
        &[("CI", "true"), ("NODE_ENV", "test")]
    }
    /// When the framework exited without reporting because it is not
    /// installed for `program` (its stderr says so), one line saying how to
    /// install it. By default nothing is recognised.
    fn missing_hint(&self, _stderr: &str, _program: &Path) -> Option<String> {
        None
    }
    /// How the framework's own per-test time limit begins its failure
    /// message (after `Error: ` / `Failed: ` / `thrown: "` prefixes).
    fn timeout_prefix(&self) -> &'static str;
    /// Whether a failure message is the framework's own per-test time limit
    /// ([`timeout_prefix`](Self::timeout_prefix)), which the framework may
    /// wrap as `Failed: …`, `Error: …` or `Error: thrown: "…"`.
    fn is_timeout_message(&self, message: &str) -> bool {
        let message = message.strip_prefix("Failed: ").unwrap_or(message);
        let message = message.strip_prefix("Error: ").unwrap_or(message);
        let message = message.strip_prefix("thrown: \"").unwrap_or(message);
        message.starts_with(self.timeout_prefix())
    }
    /// The line in which the framework said it found no tests, when it
    /// exits that way before loading reporters.
    fn no_tests_line(&self, _stdout: &str) -> Option<String> {
        None
    }
    /// Whether the framework's own arguments (after `--`) ask it to collect
    /// without running, as `--collect-only` does.
    fn collects_only(&self, _raw: &[String]) -> bool {
        false
    }
    /// Whether the framework's own arguments allow a run that selects no
    /// test (jest's and vitest's `--passWithNoTests`).
    fn allows_no_tests(&self, _raw: &[String]) -> bool {
        false
    }
    /// Whether the framework's own arguments ask only for information (its
    /// help, its version, its configuration): it runs no tests on purpose,
    /// and may exit before our reporter loads.
    fn informational(&self, _raw: &[String]) -> bool {
        false
    }
    /// Whether our reporter sends its first events (`hello`, `live_output`)
    /// as soon as the framework imports it, before the framework has parsed
    /// its arguments (so that a usage error still finds it loaded): then
    /// only the events after them show that it runs tests. By default the
    /// reporter speaks once the framework has built it to run tests.
    fn reports_on_import(&self) -> bool {
        false
    }
    /// Whether a run-level log line of our reporter says the framework
    /// stopped the run on purpose, outside any test or with a code of 0
    /// inside one (whose tests are then stopped); its exit code stands. By
    /// default no line says so.
    fn stopped_on_purpose(&self, _log: &str) -> bool {
        false
    }
    /// Whether exit code `code` is the framework's own word that the run as
    /// a whole failed (not its tests): passed through as tcrunner's exit
    /// code where no test ran. By default no code is.
    fn run_failure_code(&self, _code: i32) -> bool {
        false
    }
    /// Whether exit code `code` is the framework's word that it collected
    /// no tests (pytest's 5, also where every module skipped itself as it
    /// was imported). By default no code is.
    fn no_tests_code(&self, _code: i32) -> bool {
        false
    }
    /// Whether exit code `code` says the framework was interrupted and wound
    /// down by itself: tests it left running are stopped, not crashed
    /// under. By default no code says so.
    fn interrupted(&self, _code: i32) -> bool {
        false
    }
    /// Why the framework, after loading our reporter, ran nothing because
    /// it refused to (rather than finding no tests), from its exit `code`
    /// and `stderr`. By default: a nonzero code with an error on stderr
    /// (an exception thrown by a global setup), and that error's own line
    /// (`Error: boom`, `TypeError: …`) where there is one.
    fn refusal(&self, code: i32, stderr: &str) -> Option<Refusal> {
        if code == 0 || !stderr.contains("Error") {
            return None;
        }
        Some(
            thrown_error_line(stderr)
                .map_or(Refusal::OnStderr, |line| Refusal::Threw(line.to_owned())),
        )
    }
    /// When `id` is our reporter's test standing for a file that could not
    /// be collected or loaded (failed, it is a run-level problem as well as
    /// a test), that file. By default no id is.
    fn load_failure(&self, _id: &str) -> Option<String> {
        None
    }
    /// Whether the command line `args` runs tests in parallel workers. By
    /// default none does: jest's and vitest's workers report through one
    /// process, and their IDE runners say nothing of it.
    fn runs_in_parallel(&self, _args: &[std::ffi::OsString]) -> bool {
        false
    }
    /// An option that keeps our reporter from loading, to name as an example
    /// when the framework exited 0 without it. By default none is named.
    fn disabling_option(&self) -> Option<&'static str> {
        None
    }
    /// Whether the framework can run whole files and named tests in one
    /// run (pytest); otherwise a file that failed to load makes `--lf`
    /// rerun whole files. By default it cannot.
    fn mixes_files_and_tests(&self) -> bool {
        false
    }
    /// Whether our reporter orders and deselects the framework's tests as
    /// the test history asks (`Request::order_file`: `--ff`, `--nf`, a
    /// resumed `--sw`). By default it cannot: the framework orders them.
    fn follows_order_file(&self) -> bool {
        false
    }
    /// Whether our sequencer orders the framework's test files as the test
    /// history asks (`Request::order_file`: `--ff`, `--nf`), leaving the
    /// order inside a file to the framework (jest, vitest). By default it
    /// does not.
    fn orders_files(&self) -> bool {
        false
    }
    /// The test files a run of `request` would run, absolute, asked of the
    /// framework itself beforehand (`--shard` splits them), or `None` when
    /// the framework's reporter splits the tests itself (pytest). By
    /// default the framework has no way to list them: `None`.
    fn test_files(&self, _request: &Request) -> Option<Result<Vec<PathBuf>, SetupError>> {
        None
    }
    /// Whether our reporter declares each test file as the framework starts
    /// it, and ends it once its results are in (jest): a file still open
    /// when the framework exits by itself means it ended the run inside
    /// that file (a `process.exit` in a hook or at the top of the file).
    /// By default files are declared as collected, and one may be left
    /// unrun by a stop the framework was asked for.
    fn opens_files_as_they_run(&self) -> bool {
        false
    }
    /// Whether the ids our reporter gives tests are names the framework's
    /// users know, to be shown as they are where tcrunner names a test. By
    /// default they are the reporter's own, and a test is named by its path
    /// in the tree instead.
    fn users_know_ids(&self) -> bool {
        false
    }
    /// Whether what the framework's own process writes to stderr while one
    /// test runs is that test's (a test run in the process, in band). Not
    /// where tests run elsewhere, and their text comes as events (vitest's
    /// workers): the process's stderr is then its own.
    fn tests_write_its_stderr(&self) -> bool {
        true
    }
}

/// Why a framework ran nothing on purpose: [`Framework::refusal`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its stderr says why: the line naming the error is shown.
    OnStderr,
    /// An error thrown while it set up: this line of its stderr.
    Threw(String),
}

/// A JavaScript error's own line in `stderr` (`Error: boom`,
/// `TypeError: …`), not the code frame vitest prints under it.
fn thrown_error_line(stderr: &str) -> Option<&str> {
    stderr.lines().map(str::trim).find(|line| {
        line.split_once("Error: ")
            .is_some_and(|(kind, _)| kind.chars().all(char::is_alphanumeric))
    })
}

/// A supported framework: one variant per module, as `--framework` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum FrameworkName {
    /// pytest (Python).
    Pytest,
    /// jest (JavaScript/TypeScript).
    Jest,
    /// vitest (JavaScript/TypeScript).
    Vitest,
}

impl FrameworkName {
    /// The framework itself. Every other question about a framework goes
    /// through [`Framework`].
    pub(crate) fn framework(self) -> &'static dyn Framework {
        match self {
            FrameworkName::Pytest => &Pytest,
            FrameworkName::Jest => &Jest,
            FrameworkName::Vitest => &Vitest,
        }
    }
}

/// `path` as a POSIX shell reads it, for the commands a fix line gives.
pub(crate) fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    shlex::try_quote(&text).map_or_else(|_| text.to_string(), |q| q.into_owned())
}

/// What [`detect`] looked for in `project`, where it found no framework;
/// a package.json it could not read or parse is named with why.
pub(crate) fn not_detected(project: &Path) -> String {
    const LOOKED_FOR: &str =
        "no pytest configuration or test_*.py files, no jest or vitest in package.json";
    let manifest = project.join("package.json");
    let why = match std::fs::read_to_string(&manifest) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return LOOKED_FOR.to_string(),
        Err(e) => format!("cannot be read: {e}"),
        Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(_) => return LOOKED_FOR.to_string(),
            Err(e) => format!("is not valid JSON: {e}"),
        },
    };
    format!(
        "no pytest configuration or test_*.py files, and {} {why}",
        manifest.display()
    )
}

/// Picks the framework from the project: JS dependencies and config files,
/// then Python test configuration, then the kind of files asked for, then
/// Python test files in the project.
pub(crate) fn detect(
    project: &Path,
    paths: &[PathBuf],
    targets: &[String],
) -> Option<FrameworkName> {
    let asked: Vec<String> = paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .chain(
            targets
                .iter()
                .map(|t| t.split("::").next().unwrap_or(t).to_owned()),
        )
        .collect();
    // A dotted target (`pkg.tests.test_a.test_x`) is a Python name, and a
    // folder asked for holding Python tests but no JS tests is Python's.
    let dotted = targets
        .iter()
        .any(|t| !t.contains("::") && !t.contains('/') && !is_js_file(t) && t.contains('.'));
    // The folders are walked only where the answer matters.
    let python_asked = || {
        asked.iter().any(|a| a.ends_with(".py"))
            || dotted
            || paths.iter().any(|p| {
                project.join(p).is_dir()
                    && pytest::has_test_files(project, std::slice::from_ref(p))
                    && !js::has_test_files(project, p)
            })
    };
    let js_asked = asked.iter().any(|a| is_js_file(a));
    let js = js::detect(project);
    let python = pytest::detect(project);
    match (js, python) {
        (Some(js), true) if js_asked || !python_asked() => Some(js),
        (Some(_), true) => Some(FrameworkName::Pytest),
        (Some(js), false) => Some(js),
        (None, true) => Some(FrameworkName::Pytest),
        // A path that holds no Python test file of a project that has some
        // (a conftest collecting other files, as pygments' golden files are)
        // is pytest's too, as the whole project would be.
        (None, false)
            if python_asked()
                || pytest::has_test_files(project, paths)
                || (!paths.is_empty() && pytest::has_test_files(project, &[])) =>
        {
            Some(FrameworkName::Pytest)
        }
        // A package of a monorepo whose framework is set up at its root:
        // the nearest folder above that names one, within the repository.
        (None, false) => project
            .ancestors()
            .skip(1)
            .scan(false, |left_repo, dir| {
                let was_out = *left_repo;
                *left_repo |= dir.join(".git").exists();
                (!was_out).then_some(dir)
            })
            .find_map(js::detect),
    }
}

/// Whether a file whose name `matches` lies within three levels of the
/// `roots`. The walk skips hidden folders, virtual environments and
/// `node_modules`, and stops after a few thousand entries.
fn holds_file(roots: Vec<PathBuf>, matches: impl Fn(&str) -> bool) -> bool {
    const MAX_ENTRIES: usize = 5_000;
    let mut seen = 0;
    let mut stack: Vec<(PathBuf, usize)> = roots.into_iter().map(|r| (r, 0)).collect();
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return false;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                let skip = name.starts_with('.')
                    || matches!(
                        name.as_ref(),
                        "node_modules" | "venv" | "__pycache__" | "site-packages"
                    );
                if depth < 3 && !skip {
                    stack.push((entry.path(), depth + 1));
                }
            } else if matches(&name) {
                return true;
            }
        }
    }
    false
}

fn is_js_file(path: &str) -> bool {
    [".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".cts"]
        .iter()
        .any(|e| path.ends_with(e))
}

/// Writes an embedded runner, and the files it loads from its own folder,
/// into a per-user cache folder (one per content) and returns the runner's
/// absolute path.
pub(crate) fn write_runner(runner: Runner) -> Result<PathBuf, SetupError> {
    use std::hash::{Hash, Hasher};
    let files: Vec<Runner> = std::iter::once(runner)
        .chain(runner.companions.iter().copied())
        .collect();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for file in &files {
        file.source.hash(&mut hasher);
    }
    // SAFETY: getuid cannot fail and has no memory effects.
    let uid = unsafe { libc::getuid() };
    let dir = std::env::temp_dir()
        .join(format!("tcrunner-{uid}"))
        .join(format!("{:016x}", hasher.finish()))
        .join(runner.folder);
    for file in files {
        write_file(&dir, file.file_name, file.source)?;
    }
    Ok(dir.join(runner.file_name))
}

/// Writes `content` to `dir/file_name`, making `dir`, unless it is there already.
pub(crate) fn write_file(dir: &Path, file_name: &str, content: &str) -> Result<(), SetupError> {
    let path = dir.join(file_name);
    if std::fs::read_to_string(&path).is_ok_and(|existing| existing == content) {
        return Ok(());
    }
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        // Write then rename, so a concurrent run never loads half a file.
        let partial = dir.join(format!("{file_name}.{}", std::process::id()));
        std::fs::write(&partial, content)?;
        std::fs::rename(&partial, &path)
    };
    write().map_err(|source| SetupError::Runner { path, source })
}

/// `OsString`s from strings.
fn os_args<'a>(args: impl IntoIterator<Item = &'a String>) -> Vec<OsString> {
    args.into_iter().map(OsString::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch project with the given files (empty contents unless given).
    fn project(label: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tcrunner-detect-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, text) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn in_framework_timeouts_are_recognised() {
        let (pytest, jest, vitest) = (&Pytest as &dyn Framework, &Jest, &Vitest);
        for (message, framework) in [
            ("timed out after 2 s", pytest),
            ("Failed: timed out after 0.5 s", pytest),
            (
                "Exceeded timeout of 2000 ms for a test.\nAdd a timeout value to this test",
                jest,
            ),
            (
                "Error: thrown: \"Exceeded timeout of 1000 ms for a test.\nAdd a timeout value\"",
                jest,
            ),
            ("Error: Test timed out in 2000ms.", vitest),
        ] {
            assert!(framework.is_timeout_message(message), "{message}");
        }
        for (message, framework) in [
            ("assert 1 == 2", pytest),
            ("Error: boom", jest),
            ("a test that timed out after all", pytest),
            ("timed out after 2 s", vitest),
        ] {
            assert!(!framework.is_timeout_message(message), "{message}");
        }
    }

    /// What the run loop learns of each framework's exit codes and events:
    /// pytest's own codes and plugin, the JavaScript frameworks' defaults.
    #[test]
    fn each_framework_says_what_its_codes_and_events_mean() {
        use clap::ValueEnum as _;
        for name in FrameworkName::value_variants() {
            let framework = name.framework();
            let pytest = *name == FrameworkName::Pytest;
            assert_eq!(framework.name(), format!("{name:?}").to_lowercase());
            assert_eq!(framework.reports_on_import(), pytest, "{name:?}");
            assert_eq!(framework.users_know_ids(), pytest, "{name:?}");
            assert_eq!(
                framework.opens_files_as_they_run(),
                *name == FrameworkName::Jest,
                "{name:?}"
            );
            assert_eq!(
                framework.stopped_on_purpose("pytest.exit: giving up"),
                pytest,
                "{name:?}"
            );
            assert!(!framework.stopped_on_purpose("a warning"), "{name:?}");
            for code in [0, 1, 5, 130] {
                assert!(!framework.run_failure_code(code), "{name:?} {code}");
                assert!(!framework.interrupted(code), "{name:?} {code}");
            }
            for code in 2..=4 {
                assert_eq!(framework.run_failure_code(code), pytest, "{name:?} {code}");
            }
            assert_eq!(framework.interrupted(2), pytest, "{name:?}");
            assert!(!framework.interrupted(3), "{name:?}");
            assert_eq!(
                framework.disabling_option(),
                pytest.then_some("-p no:tcrunner_pytest")
            );
            let thrown = "\n  Error: boom\n   at setup.ts:3\n";
            let usage = "ERROR: not found: tests/test_a.py::nope\n";
            if pytest {
                assert_eq!(framework.refusal(4, usage), Some(Refusal::OnStderr));
                assert_eq!(framework.refusal(1, thrown), None);
            } else {
                assert_eq!(
                    framework.refusal(1, thrown),
                    Some(Refusal::Threw("Error: boom".into()))
                );
                assert_eq!(
                    framework.refusal(1, "Error\n  at setup.ts:3\n"),
                    Some(Refusal::OnStderr)
                );
                assert_eq!(framework.refusal(0, thrown), None);
                assert_eq!(framework.refusal(4, usage), None);
            }
        }
    }

    #[test]
    fn python_test_files_alone_mean_pytest() {
        let bare = project("bare", &[("tests/unit/test_math.py", ""), ("src/m.py", "")]);
        assert_eq!(detect(&bare, &[], &[]), Some(FrameworkName::Pytest));
        let suffix = project("suffix", &[("math_test.py", "")]);
        assert_eq!(detect(&suffix, &[], &[]), Some(FrameworkName::Pytest));
        // Tests of installed packages and hidden folders do not count.
        let vendored = project(
            "vendored",
            &[
                ("node_modules/x/test_x.py", ""),
                (".tox/y/test_y.py", ""),
                ("app.py", ""),
            ],
        );
        assert_eq!(detect(&vendored, &[], &[]), None);
        // A JS project with a stray Python test stays a JS project.
        let js = project(
            "js",
            &[
                ("package.json", r#"{"devDependencies": {"jest": "30"}}"#),
                ("tools/test_gen.py", ""),
            ],
        );
        assert_eq!(detect(&js, &[], &[]), Some(FrameworkName::Jest));
        // A repo of both: what is asked for decides.
        let both = project(
            "both",
            &[
                ("package.json", r#"{"devDependencies": {"jest": "30"}}"#),
                ("pytest.toml", "[pytest]\n"),
                ("backend/tests/test_b.py", ""),
                ("frontend/a.test.js", ""),
            ],
        );
        let path = |p: &str| [PathBuf::from(p)];
        assert_eq!(
            detect(&both, &path("backend/tests"), &[]),
            Some(FrameworkName::Pytest)
        );
        assert_eq!(
            detect(&both, &path("frontend"), &[]),
            Some(FrameworkName::Jest)
        );
        assert_eq!(detect(&both, &[], &[]), Some(FrameworkName::Jest));
        let dotted = ["backend.tests.test_b.test_x".to_owned()];
        assert_eq!(detect(&both, &[], &dotted), Some(FrameworkName::Pytest));
        // A package of a monorepo with jest set up at the root.
        let mono = project(
            "mono",
            &[
                ("package.json", r#"{"devDependencies": {"jest": "30"}}"#),
                ("packages/a/package.json", r#"{"name": "a"}"#),
                ("packages/a/a.test.js", ""),
            ],
        );
        assert_eq!(
            detect(&mono.join("packages/a"), &[], &[]),
            Some(FrameworkName::Jest)
        );
        // pytest's own configuration files alone.
        let toml = project("toml", &[("pytest.toml", "[pytest]\n")]);
        assert_eq!(detect(&toml, &[], &[]), Some(FrameworkName::Pytest));
        // A folder of files a conftest collects, in a project of Python tests.
        let golden = project(
            "golden",
            &[
                ("tests/conftest.py", ""),
                ("tests/test_a.py", ""),
                ("tests/data/one.case", ""),
            ],
        );
        for asked in ["tests/data", "tests/data/one.case"] {
            assert_eq!(
                detect(&golden, &path(asked), &[]),
                Some(FrameworkName::Pytest),
                "{asked}"
            );
        }
        for dir in [bare, suffix, vendored, js, both, toml, mono, golden] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
