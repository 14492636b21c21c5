//! jest and vitest: the project's own `node_modules` copy, run with node and
//! our reporter (`runners/tcrunner-jest.cjs`, `runners/tcrunner-vitest.mjs`)
//! passed by absolute path; jest through our launcher
//! (`runners/tcrunner-jest-launch.cjs`), so that tests it runs in band see
//! only the user's arguments in `process.argv`.
//!
//! Checked against jest 29 and 30, vitest 3, 4 and 5. Targets accepted:
//! `FILE` and `FILE::outer > inner > test name`; the names become an
//! anchored, regex-escaped `-t` pattern joined the way the version expects
//! (jest and vitest ≤4 match space-joined names, vitest 5 matches ` > `; the
//! vitest pattern accepts both).
use std::path::{Path, PathBuf};

use super::{
    os_args, test_timeout_env, write_runner, Framework, FrameworkName, Launch, Request, SetupError,
};
use crate::process::Spec;
use crate::runners::{runner, Runner};

pub(crate) struct Jest;
pub(crate) struct Vitest;

/// What the jest and vitest reporters share, loaded from their folder.
const COMMON: Runner = runner!("tcrunner-common.cjs");

/// What starts jest with the jest reporter, written beside it.
const JEST_LAUNCH: Runner = runner!("tcrunner-jest-launch.cjs");

/// The test history's order of files (`--ff`, `--nf`), which the jest
/// sequencer and the vitest reporter apply.
const FILE_ORDER: Runner = runner!("tcrunner-file-order.cjs");

/// The variable that names the file of the test history's order of files.
const FILE_ORDER_VAR: &str = "TCRUNNER_FILE_ORDER";

/// The reporter jest loads with `--reporters`, the launcher that starts
/// jest with it, and the sequencer the launcher puts in place of jest's
/// when the test history orders the files.
const JEST_REPORTER: Runner = runner!(
    "tcrunner-jest.cjs",
    [
        COMMON,
        JEST_LAUNCH,
        FILE_ORDER,
        runner!("tcrunner-jest-sequencer.cjs")
    ]
);

/// The reporter vitest loads with `--reporter`, and the test runner it
/// gives vitest's workers.
const VITEST_REPORTER: Runner = Runner {
    // vitest loads a reporter, and its workers their runner, through vite's
    // transform unless the file is under a node_modules folder; there they
    // are imported natively, as vitest itself is: no transform of the
    // reporter in the main process (a tenth of a second of CPU) nor of the
    // runner in every worker, and one copy of vitest's modules.
    folder: "node_modules",
    ..runner!(
        "tcrunner-vitest.mjs",
        [COMMON, FILE_ORDER, runner!("tcrunner-vitest-runner.mjs")]
    )
};

/// Whether the folder `path` of the project holds JS test files
/// (`*.test.*`, `*.spec.*`) within three levels.
pub(crate) fn has_test_files(project: &Path, path: &Path) -> bool {
    super::holds_file(vec![project.join(path)], |name| {
        super::is_js_file(name) && (name.contains(".test.") || name.contains(".spec."))
    })
}

/// jest or vitest, from the project's package.json and config files.
pub(crate) fn detect(project: &Path) -> Option<FrameworkName> {
    let has_config = |stem: &str| {
        ["js", "ts", "mjs", "cjs", "mts", "cts", "json"]
            .iter()
            .any(|ext| project.join(format!("{stem}.{ext}")).is_file())
    };
    if has_config("vitest.config") || has_config("vitest.workspace") {
        return Some(FrameworkName::Vitest);
    }
    let jest_config = has_config("jest.config");
    let manifest = std::fs::read_to_string(project.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok());
    let Some(manifest) = manifest else {
        return jest_config.then_some(FrameworkName::Jest);
    };
    let mentions = |name: &str| {
        ["dependencies", "devDependencies"]
            .iter()
            .any(|k| manifest[k].get(name).is_some())
            || manifest.get(name).is_some()
            || manifest["scripts"].as_object().is_some_and(|s| {
                s.values()
                    .any(|v| v.as_str().is_some_and(|v| v.contains(name)))
            })
    };
    // A jest config left behind by a project that moved to vitest (its
    // package.json names vitest and not jest) is not the project's.
    if jest_config && (mentions("jest") || !mentions("vitest")) {
        Some(FrameworkName::Jest)
    } else if mentions("vitest") {
        Some(FrameworkName::Vitest)
    } else if mentions("jest") {
        Some(FrameworkName::Jest)
    } else {
        None
    }
}

/// The oldest major version of `package` tcrunner's reporters work with,
/// when `version` is older than that. vitest 1 and 2, and jest 25 and
/// older (no `onTestFileResult`), never call the reporter hooks ours uses:
/// their runs would show no tests at all and exit 5, hiding failures.
pub(crate) fn too_old(package: &str, version: &str) -> Option<u32> {
    let oldest = match package {
        "vitest" => 3,
        "jest" => 26,
        _ => return None,
    };
    (major(version) < oldest).then_some(oldest)
}

/// An installed package found by walking up from the project.
pub(crate) struct Package {
    pub(crate) dir: PathBuf,
    pub(crate) version: String,
    /// The lowest node major.minor its `engines.node` asks for.
    pub(crate) node_floor: Option<(u32, u32)>,
}

/// The package `name` in the project's `node_modules` or a parent folder's.
pub(crate) fn find_package(project: &Path, name: &str) -> Option<Package> {
    let start = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    for dir in start.ancestors() {
        let dir = dir.join("node_modules").join(name);
        let Ok(manifest) = std::fs::read_to_string(dir.join("package.json")) else {
            continue;
        };
        let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap_or_default();
        let version = manifest["version"].as_str().unwrap_or("?").to_owned();
        let node_floor = manifest["engines"]["node"].as_str().and_then(engine_floor);
        return Some(Package {
            dir,
            version,
            node_floor,
        });
    }
    None
}

/// The command that installs `package` where it is missing: the project's
/// own install when a package.json of it or a parent folder declares the
/// package already (from that folder when it is not the project), else one
/// that adds it; with the package manager whose lockfile the project has.
/// A command to paste into a shell.
pub(crate) fn install_hint(project: &Path, package: &str) -> String {
    let start = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let declares = |dir: &Path| {
        let Ok(text) = std::fs::read_to_string(dir.join("package.json")) else {
            return false;
        };
        let manifest: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        ["dependencies", "devDependencies"]
            .iter()
            .any(|key| manifest[key].get(package).is_some())
    };
    let manager = manager(&start);
    match start.ancestors().find(|dir| declares(dir)) {
        Some(dir) if dir == start => format!("{manager} install"),
        Some(dir) => format!("cd {} && {manager} install", super::shell_word(dir)),
        None => add_command(manager, package),
    }
}

/// The command that adds `spec` (`vitest`, `vitest@latest`) to the
/// development dependencies of the project in `project`, with its package
/// manager.
pub(crate) fn upgrade_hint(project: &Path, spec: &str) -> String {
    let start = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    add_command(manager(&start), spec)
}

fn add_command(manager: &str, spec: &str) -> String {
    match manager {
        "npm" => format!("npm install --save-dev {spec}"),
        "bun" => format!("bun add --dev {spec}"),
        _ => format!("{manager} add --save-dev {spec}"),
    }
}

/// The package manager whose lockfile is in `dir` or the nearest parent
/// folder that has one; npm without any.
fn manager(dir: &Path) -> &'static str {
    dir.ancestors()
        .find_map(|dir| {
            [
                ("pnpm-lock.yaml", "pnpm"),
                ("yarn.lock", "yarn"),
                ("bun.lock", "bun"),
                ("bun.lockb", "bun"),
                ("package-lock.json", "npm"),
            ]
            .into_iter()
            .find(|(lockfile, _)| dir.join(lockfile).is_file())
            .map(|(_, manager)| manager)
        })
        .unwrap_or("npm")
}

/// The smallest version an `engines.node` range allows, e.g. `^22.12 || >=24` → 22.12.
fn engine_floor(range: &str) -> Option<(u32, u32)> {
    range
        .split("||")
        .filter_map(|alt| {
            let v = alt
                .trim()
                .trim_start_matches(['^', '>', '=', '~', 'v', ' ']);
            let mut parts = v.split('.').map(|p| p.trim().parse::<u32>().ok());
            Some((parts.next()??, parts.next().flatten().unwrap_or(0)))
        })
        .min()
}

/// The node version (`v22.12.0` → (22, 12)).
pub(crate) fn node_version(node: &Path) -> Option<(u32, u32)> {
    let out = std::process::Command::new(node)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().trim_start_matches('v').split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// Escapes regex metacharacters (jest and vitest use JavaScript regexes).
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A title as a pattern. A title the reporters took a lone UTF-16
/// surrogate out of (`'\ud800'`, which no UTF-8 text can hold) names it
/// U+FFFD: that matches any one UTF-16 unit, as the pattern runs in
/// JavaScript without the `u` flag, so the test is still selected.
fn title_pattern(title: &str) -> String {
    regex_escape(title).replace('\u{fffd}', "[\\s\\S]")
}

/// Splits `FILE::a > b > test` into the file and the names. A file whose
/// name holds `::` (`a::b.test.js`) is the longest part before a `::` that
/// is a file in `project`; failing that, the part before the first `::`.
fn split_target(project: &Path, target: &str) -> Result<(String, Vec<String>), SetupError> {
    let bad = |problem: &str| SetupError::unsupported(format!("--target {target}"), problem);
    let cut = target
        .rmatch_indices("::")
        .map(|(at, _)| at)
        .find(|&at| project.join(&target[..at]).is_file())
        .or_else(|| target.find("::"));
    let (file, names) = match cut {
        Some(at) => (&target[..at], &target[at + 2..]),
        None => (target, ""),
    };
    if file.trim().is_empty() {
        return Err(bad("expected `FILE` or `FILE::describe > test`"));
    }
    let names: Vec<String> = if names.trim().is_empty() {
        Vec::new()
    } else {
        // Untrimmed: a title may start or end with a space (`test.each`
        // rows such as `parses %s` with an empty value).
        names.split(" > ").map(str::to_owned).collect()
    };
    // A node the reporters add for a failure outside any test, rerun from
    // the IDE or the history by its name: no test has that name, so it is
    // the file or block it is in that runs again (a test that does have
    // the name runs with it).
    let mut names = names;
    if names.last().is_some_and(|name| is_error_node(name)) {
        names.pop();
    }
    Ok((file.to_owned(), names))
}

/// The names of the nodes jest's and vitest's reporters add to a file for
/// a failure no test carries: `Test suite failed to run`, `afterAll hook`,
/// `No test found`, `Unhandled error`, and the error's name (`SyntaxError`)
/// for a vitest file that did not load.
fn is_error_node(name: &str) -> bool {
    const NAMES: [&str; 4] = [
        "Test suite failed to run",
        "afterAll hook",
        "No test found",
        "Unhandled error",
    ];
    NAMES.contains(&name)
        || name
            .strip_suffix("Error")
            .is_some_and(|kind| kind.chars().all(|c| c.is_ascii_alphabetic()))
}

/// The `-t` pattern for the targets that name tests, if any. The framework
/// matches it against the titles joined by `joiner`; where that is a space,
/// a ` > ` of the target may also be part of a title (`'a > b'`), so the
/// pieces are joined by either. vitest (`type_files`) puts the path of a
/// type-check test's file (`a.test-d.ts`) before its titles.
fn name_pattern(
    targets: &[(String, Vec<String>)],
    joiner: &str,
    tests_only: bool,
    type_files: bool,
) -> Option<String> {
    let between = if joiner == " " { "(?: | > )" } else { joiner };
    let alternatives: Vec<String> = targets
        .iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(file, names)| {
            let titles = names
                .iter()
                .map(|n| title_pattern(n))
                .collect::<Vec<_>>()
                .join(between);
            let file = file.trim_start_matches("./");
            if type_files && is_type_test_file(file) {
                format!("(?:{}{joiner})?{titles}", regex_escape(file))
            } else {
                titles
            }
        })
        .collect();
    if alternatives.is_empty() {
        return None;
    }
    // A named describe selects everything under it: allow a suffix after a
    // separator, unless the targets are known to be tests. `[\s\S]`, not
    // `.`: a title may hold a newline, which `.` does not match in a
    // JavaScript pattern.
    let under = if tests_only {
        String::new()
    } else {
        format!("(?:{joiner}[\\s\\S]*)?")
    };
    Some(format!("^(?:{}){under}$", alternatives.join("|")))
}

/// Whether vitest takes `file` for a type-check test file by default
/// (`*.test-d.ts`, `*.spec-d.mts`…).
fn is_type_test_file(file: &str) -> bool {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.contains(".test-d.") || name.contains(".spec-d.")
}

/// `path` without `.` parts (`.`, `./src` → ``, `src`).
fn without_cur_dir(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect()
}

/// jest's pattern for a `--path`: jest searches the absolute path of every
/// test file for it, so a folder ends in `/` and a file at the path's end,
/// or `src/a` would also run `src/ab/` and `src/abc.test.js`. jest knows
/// its files by their real paths: `..` and symbolic links are resolved.
fn jest_path_pattern(project: &Path, path: &Path) -> String {
    let joined = project.join(path);
    let absolute = std::fs::canonicalize(&joined).unwrap_or_else(|_| without_cur_dir(&joined));
    let text = absolute.to_string_lossy();
    let text = regex_escape(text.trim_end_matches('/'));
    if absolute.is_dir() {
        format!("{text}/")
    } else if absolute.is_file() {
        format!("{text}$")
    } else {
        text
    }
}

/// vitest's filter for a `--path`: vitest keeps every test file whose path
/// relative to its project's root contains it, or contains the filter made
/// relative to that root. A folder goes without a final `/`: `pb/` made
/// relative to a project rooted at `pb` is `/`, which none of its files
/// holds. `src/a` then also takes `src/ab/`: the reporter narrows vitest's
/// choice to the paths asked for ([`vitest_exact_paths`]).
fn vitest_path_filter(path: &Path) -> String {
    let relative = without_cur_dir(path);
    let text = relative.to_string_lossy();
    if text.is_empty() {
        ".".into() // the project itself: every path has a `.`
    } else {
        text.trim_end_matches('/').to_owned()
    }
}

/// The files and folders a vitest run was asked for, for the reporter to
/// narrow vitest's choice to (`TCRUNNER_VITEST_PATHS`: JSON, the `filters`
/// tcrunner passed and the absolute `paths` they stand for, a folder's
/// ending in `/`): vitest's filters are substrings of a file's path, so
/// `src/a/` also takes `lib/src/a/` and `in.test.ts` also `bin.test.ts`.
/// Each path is given as written (`..` resolved) and as resolved through
/// symbolic links, since vitest may know a file by either. `None` when
/// nothing is to be narrowed: no paths, or the project itself (which
/// vitest's `.` gives whole). `files` are the target files, which lead
/// `filters`.
fn vitest_exact_paths(request: &Request, files: &[String], filters: &[String]) -> Option<String> {
    let asked = files
        .iter()
        .map(Path::new)
        .chain(request.paths.iter().map(PathBuf::as_path));
    let asked: Vec<&Path> = asked.collect();
    if asked.is_empty() {
        return None;
    }
    let project = lexical(&std::path::absolute(&request.project).ok()?);
    let mut paths: Vec<String> = Vec::new();
    for path in asked {
        let lexical = lexical(&project.join(path));
        if lexical == project {
            return None;
        }
        let real = std::fs::canonicalize(&lexical).ok();
        let folder = lexical.is_dir();
        for form in std::iter::once(lexical).chain(real) {
            let mut text = form.to_string_lossy().trim_end_matches('/').to_owned();
            if folder {
                text.push('/');
            }
            if !paths.contains(&text) {
                paths.push(text);
            }
        }
    }
    let exact = serde_json::json!({ "filters": filters, "paths": paths });
    Some(exact.to_string())
}

/// `path` with `.` dropped and `..` taking off the part before it, without
/// looking at the file system.
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other),
        }
    }
    out
}

struct Plan {
    node: PathBuf,
    package: Package,
    targets: Vec<(String, Vec<String>)>,
}

fn plan(request: &Request, package: &str, framework: &str) -> Result<Plan, SetupError> {
    let Some(found) = find_package(&request.project, package) else {
        if let Some(pnp) = request
            .project
            .ancestors()
            .map(|dir| dir.join(".pnp.cjs"))
            .find(|file| file.is_file())
        {
            return Err(SetupError::Unavailable(format!(
                "{} installs packages with Yarn Plug'n'Play, which tcrunner cannot load {framework} from: set `nodeLinker: node-modules` in .yarnrc.yml and run `yarn install`",
                pnp.parent().unwrap_or(&request.project).display()
            )));
        }
        return Err(SetupError::Unavailable(format!(
            "{framework} is not installed in {} or any parent folder's node_modules: run `{}`",
            request.project.display(),
            install_hint(&request.project, package)
        )));
    };
    if let Some(oldest) = too_old(package, &found.version) {
        return Err(SetupError::Unavailable(format!(
            "{package} {} is older than tcrunner supports ({package} {oldest} or later): run `{}`",
            found.version,
            upgrade_hint(&request.project, &format!("{package}@latest"))
        )));
    }
    let node = request
        .node
        .clone()
        .unwrap_or_else(|| PathBuf::from("node"));
    if let Some((major, minor)) = found.node_floor.filter(|&(major, _)| major > 20) {
        match node_version(&node) {
            Some(have) if have < (major, minor) => {
                return Err(SetupError::Unavailable(format!(
                    "{framework} {} needs node >= {major}.{minor} but {} is {}.{}: install a newer node or pass --node",
                    found.version,
                    node.display(),
                    have.0,
                    have.1
                )))
            }
            None => {
                return Err(SetupError::Unavailable(format!(
                    "cannot run {} to check its version: install node or pass --node",
                    node.display()
                )))
            }
            Some(_) => {}
        }
    }
    if request.collect_only {
        return Err(SetupError::unsupported(
            "--collect-only",
            format!("is supported for pytest only, not {framework}"),
        ));
    }
    let targets = request
        .targets
        .iter()
        .map(|t| split_target(&request.project, t))
        .collect::<Result<Vec<_>, _>>()?;
    // One name pattern applies to every file, so a whole-file target cannot
    // sit beside targets that name tests: say so rather than run less.
    let whole = targets.iter().find(|(_, names)| names.is_empty());
    if let (Some((file, _)), true) = (whole, targets.iter().any(|(_, n)| !n.is_empty())) {
        return Err(SetupError::unsupported(
            format!("--target {file}"),
            "a whole file cannot be combined with targets naming tests in one run (pass it as --path in a separate run)",
        ));
    }
    // A name pattern of the user's own would replace ours, or (jest) be
    // combined with it so that nothing matches.
    let own_pattern = option_in(
        &request.raw,
        &["-t", "--testNamePattern", "--test-name-pattern"],
    );
    if let (Some(flag), true) = (own_pattern, targets.iter().any(|(_, n)| !n.is_empty())) {
        return Err(SetupError::unsupported(
            flag.clone(),
            "a name pattern of its own cannot be combined with targets naming tests (the targets become one)",
        ));
    }
    Ok(Plan {
        node,
        package: found,
        targets,
    })
}

/// The first of the framework's own arguments that is one of `options`,
/// alone or with its value after `=`.
fn option_in<'a>(raw: &'a [String], options: &[&str]) -> Option<&'a String> {
    raw.iter().find(|a| {
        options.iter().any(|option| {
            a.strip_prefix(option)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
        })
    })
}

/// jest's and vitest's own allowance for a run that selects no test.
const PASS_WITH_NO_TESTS: [&str; 2] = ["--passWithNoTests", "--pass-with-no-tests"];

/// The files of the targets, each once, in order.
fn target_files(targets: &[(String, Vec<String>)]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for (file, _) in targets {
        if !files.contains(file) {
            files.push(file.clone());
        }
    }
    files
}

/// Whether `a` and `b`, relative to `project` or absolute, are one file.
fn same_file(project: &Path, a: &str, b: &str) -> bool {
    match (
        project.join(a).canonicalize(),
        project.join(b).canonicalize(),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn major(version: &str) -> u32 {
    major_minor(version).0
}

/// `29.5.0` → (29, 5); a part that is no number is 0.
fn major_minor(version: &str) -> (u32, u32) {
    let mut parts = version.split('.').map(|p| p.parse().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// The environment entry that names the test history's order of files
/// (`Request::order_file`) to our sequencer, if there is one.
fn file_order_env(request: &Request) -> Option<(std::ffi::OsString, std::ffi::OsString)> {
    (request.order_file.as_ref()).map(|file| (FILE_ORDER_VAR.into(), file.clone().into_os_string()))
}

/// The node command running `args`. It sets no colour variables: tests see
/// the environment bare jest or vitest would give them (our reporters strip
/// the colour codes that reach the stream).
fn spec(plan: &Plan, args: &[String], request: &Request) -> Spec {
    Spec {
        program: plan.node.clone(),
        args: os_args(args),
        env: Vec::new(),
        cwd: request.project.clone(),
        env_clear: false,
        sandbox: None,
    }
}

/// Runs a listing command of the framework's (`jest --listTests`,
/// `vitest list --filesOnly --json`) and returns its stdout.
fn list(
    plan: &Plan,
    args: &[String],
    request: &Request,
    framework: &str,
) -> Result<String, SetupError> {
    let output = std::process::Command::new(&plan.node)
        .args(args)
        .current_dir(&request.project)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| SetupError::Unavailable(format!("cannot run {}: {e}", plan.node.display())))?;
    if !output.status.success() {
        return Err(SetupError::Unavailable(format!(
            "{framework} could not list its test files ({})",
            output.status
        )));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Whether `file` lies within the `--path`s of `request` (all, when none),
/// exactly: `src/a` holds `src/a/x.test.js`, not `src/ab.test.js`.
fn within_paths(request: &Request, file: &Path) -> bool {
    if request.paths.is_empty() {
        return true;
    }
    let file = lexical(file);
    request.paths.iter().any(|path| {
        let path = lexical(&request.project.join(path));
        file == path || file.starts_with(&path)
    })
}

/// Folders made if missing, for `--sandbox` to leave writable.
fn made(dirs: impl IntoIterator<Item = PathBuf>) -> Result<Vec<PathBuf>, SetupError> {
    dirs.into_iter()
        .map(|dir| match std::fs::create_dir_all(&dir) {
            Ok(()) => Ok(dir),
            Err(source) => Err(SetupError::Cache { path: dir, source }),
        })
        .collect()
}

impl Framework for Jest {
    /// `onTestFileStart` declares the file, its result ends it.
    fn opens_files_as_they_run(&self) -> bool {
        true
    }

    /// jest's default cache folder, `jest_<uid in base 36>` in the temporary
    /// folder (`getCacheDirectory` in jest-config), which is `/tmp` in the
    /// sandbox: the host's own is kept, so the cache stays warm.
    fn sandbox_writable(&self, _request: &Request) -> Result<Vec<PathBuf>, SetupError> {
        // SAFETY: getuid cannot fail and has no memory effects.
        let mut uid = unsafe { libc::getuid() };
        let mut digits = Vec::new();
        loop {
            digits.push(char::from_digit(uid % 36, 36).expect("a digit"));
            uid /= 36;
            if uid == 0 {
                break;
            }
        }
        let name: String = digits.iter().rev().collect();
        made([PathBuf::from(format!("/tmp/jest_{name}"))])
    }

    fn name(&self) -> &'static str {
        "jest"
    }

    fn runner(&self) -> Runner {
        JEST_REPORTER
    }

    fn launch(&self, request: &Request) -> Result<Launch, SetupError> {
        let plan = plan(request, "jest", "jest")?;
        let runner = write_runner(self.runner())?;
        // No --testLocationInResults: it costs jest about 12% CPU (a
        // source-mapped call site per test) and the reporter takes lines from
        // its own scan of the test file, as it must for a test it declares at
        // its start, before jest knows its location.
        // Files and path patterns first: after a raw option that takes a
        // list (`--reporters`, `--testPathIgnorePatterns`) they would be
        // read as more of its values.
        // A file the user's own arguments name too is left to them: under
        // `--runTestsByPath` jest runs a file once each time it is named.
        let mut shown: Vec<String> = target_files(&plan.targets);
        shown.retain(|file| {
            !request
                .raw
                .iter()
                .any(|arg| same_file(&request.project, arg, file))
        });
        shown.extend(
            request
                .paths
                .iter()
                .map(|p| jest_path_pattern(&request.project, p)),
        );
        if let Some(secs) = request.test_timeout {
            shown.push(format!("--testTimeout={}", (secs * 1000.0) as u64));
        }
        if let Some(jobs) = request.jobs {
            shown.extend(self.jobs_args(jobs, request)?);
        }
        let own_start = shown.len();
        shown.extend(request.raw.iter().cloned());
        let own_end = shown.len();
        if let Some(pattern) = name_pattern(&plan.targets, " ", request.targets_are_tests, false) {
            shown.push(format!("--testNamePattern={pattern}"));
        }
        if !plan.targets.is_empty() {
            shown.push("--runTestsByPath".into());
        }
        // Our launcher hands jest every argument but gives `process.argv`,
        // which tests run in band read, only the user's own.
        let launcher = runner.with_file_name(JEST_LAUNCH.file_name);
        let mut args: Vec<String> = vec![
            launcher.to_string_lossy().into_owned(),
            plan.package
                .dir
                .join("bin/jest.js")
                .to_string_lossy()
                .into_owned(),
            own_start.to_string(),
            own_end.to_string(),
        ];
        args.extend(shown.iter().cloned());
        args.push(format!("--reporters={}", runner.display()));
        // jest before 29.6 tells reporters of no test's start, only of its
        // end: the console jest prints live (a one-file run is verbose)
        // would come before its test's start, in no test. Held per file, it
        // is the file's output.
        let verbose = option_in(&request.raw, &["--verbose"]).is_some();
        if major_minor(&plan.package.version) < (29, 6) && !verbose {
            args.push("--verbose=false".into());
        }
        let mut spec = spec(&plan, &args, request);
        spec.env.extend(file_order_env(request));
        Ok(Launch {
            spec,
            shown_args: shown,
        })
    }

    fn timeout_prefix(&self) -> &'static str {
        // `thrown: "Exceeded timeout of 5000 ms for a test. …"`
        "Exceeded timeout of "
    }

    fn test_files(&self, request: &Request) -> Option<Result<Vec<PathBuf>, SetupError>> {
        let listed = || {
            let plan = plan(request, "jest", "jest")?;
            let mut args = vec![plan
                .package
                .dir
                .join("bin/jest.js")
                .to_string_lossy()
                .into_owned()];
            args.extend(
                request
                    .paths
                    .iter()
                    .map(|p| jest_path_pattern(&request.project, p)),
            );
            args.extend(request.raw.iter().cloned());
            args.push("--listTests".into());
            let text = list(&plan, &args, request, "jest")?;
            Ok(text
                .lines()
                .map(str::trim)
                .filter(|l| l.starts_with('/'))
                .map(PathBuf::from)
                .collect())
        };
        Some(listed())
    }

    fn no_tests_line(&self, stdout: &str) -> Option<String> {
        // jest exits before loading reporters: `No tests found, exiting with code 1`.
        stdout
            .lines()
            .find(|l| l.starts_with("No tests found"))
            .map(|l| l.trim().to_owned())
    }

    fn allows_no_tests(&self, raw: &[String]) -> bool {
        option_in(raw, &PASS_WITH_NO_TESTS).is_some()
    }

    fn informational(&self, raw: &[String]) -> bool {
        raw.iter().any(|a| {
            matches!(
                a.as_str(),
                "-h" | "--help" | "-v" | "--version" | "--showConfig" | "--listTests"
            )
        })
    }

    fn load_failure(&self, id: &str) -> Option<String> {
        js_load_failure(id)
    }

    fn orders_files(&self) -> bool {
        true
    }
}

impl Framework for Vitest {
    /// Tests run in workers, whose stderr comes through vitest's console
    /// capture as events: the main process's stderr is vitest's own.
    fn tests_write_its_stderr(&self) -> bool {
        false
    }

    /// Vite's cache folder (`node_modules/.vite`, where vitest keeps its
    /// results) and the folder Vite bundles a config file into
    /// (`node_modules/.vite-temp`): in the project's own `node_modules`
    /// (made if missing, as vitest makes it), in the nearest one above, and
    /// beside the nearest `package.json`, the places Vite's
    /// `resolveConfig` and `loadConfigFromBundledFile` pick among.
    fn sandbox_writable(&self, request: &Request) -> Result<Vec<PathBuf>, SetupError> {
        let own = request.project.join("node_modules");
        let mut dirs = vec![own.join(".vite"), own.join(".vite-temp")];
        let above = request.project.ancestors().skip(1);
        if let Some(nearest) = above.map(|d| d.join("node_modules")).find(|d| d.is_dir()) {
            dirs.extend([nearest.join(".vite"), nearest.join(".vite-temp")]);
        }
        let package = request
            .project
            .ancestors()
            .find(|dir| dir.join("package.json").is_file())
            .map(|dir| dir.join("node_modules"));
        if let Some(modules) = package.filter(|m| m.is_dir()) {
            dirs.push(modules.join(".vite"));
        }
        let mut dirs = made(dirs)?;
        dirs.sort();
        dirs.dedup();
        Ok(dirs)
    }

    fn name(&self) -> &'static str {
        "vitest"
    }

    fn runner(&self) -> Runner {
        VITEST_REPORTER
    }

    fn launch(&self, request: &Request) -> Result<Launch, SetupError> {
        let plan = plan(request, "vitest", "vitest")?;
        let runner = write_runner(self.runner())?;
        // No --includeTaskLocation: it costs vitest about 14% CPU; the
        // reporter scans the test files for lines instead.
        // Files and path filters first, as for jest.
        let files = target_files(&plan.targets);
        let mut filters: Vec<String> = files.clone();
        filters.extend(request.paths.iter().map(|p| vitest_path_filter(p)));
        // `-- bench` runs the benchmarks (`vitest bench`) instead of the
        // tests, once, as `run` does.
        let bench = request.raw.first().is_some_and(|a| a == "bench");
        let mut shown: Vec<String> = vec![if bench { "bench" } else { "run" }.into()];
        if bench && !request.raw.iter().any(|a| a == "--run" || a == "--watch") {
            shown.push("--run".into());
        }
        shown.extend(filters.iter().cloned());
        if let Some(secs) = request.test_timeout {
            shown.push(format!("--testTimeout={}", (secs * 1000.0) as u64));
        }
        if let Some(jobs) = request.jobs {
            shown.extend(self.jobs_args(jobs, request)?);
        }
        shown.extend(request.raw.iter().skip(usize::from(bench)).cloned());
        // vitest 5 joins names with " > ", earlier versions with a space.
        let joiner = if major(&plan.package.version) >= 5 {
            " > "
        } else {
            " "
        };
        if let Some(pattern) = name_pattern(&plan.targets, joiner, request.targets_are_tests, true)
        {
            shown.push(format!("--testNamePattern={pattern}"));
        }
        let entry = plan.package.dir.join("vitest.mjs");
        let mut args = vec![
            entry.to_string_lossy().into_owned(),
            shown[0].clone(),
            format!("--reporter={}", runner.display()),
        ];
        args.extend(shown[1..].iter().cloned());
        let mut spec = spec(&plan, &args, request);
        // Our runner then sends each test's start before its body runs.
        spec.env.extend(test_timeout_env(request));
        spec.env.extend(file_order_env(request));
        if let Some(exact) = vitest_exact_paths(request, &files, &filters) {
            spec.env
                .push(("TCRUNNER_VITEST_PATHS".into(), exact.into()));
        }
        Ok(Launch {
            spec,
            shown_args: shown,
        })
    }

    fn timeout_prefix(&self) -> &'static str {
        // `Test timed out in 5000ms.`
        "Test timed out in "
    }

    fn test_files(&self, request: &Request) -> Option<Result<Vec<PathBuf>, SetupError>> {
        let listed = || {
            let plan = plan(request, "vitest", "vitest")?;
            let mut args = vec![
                plan.package
                    .dir
                    .join("vitest.mjs")
                    .to_string_lossy()
                    .into_owned(),
                "list".into(),
                "--filesOnly".into(),
            ];
            args.extend(request.paths.iter().map(|p| vitest_path_filter(p)));
            args.extend(request.raw.iter().cloned());
            // Last: `--json` takes the argument after it, when there is
            // one, as the file to write the list to.
            args.push("--json".into());
            let text = list(&plan, &args, request, "vitest")?;
            // The JSON array, after whatever vitest printed before it.
            let json = text.find('[').map_or("[]", |at| &text[at..]);
            let files: Vec<serde_json::Value> = serde_json::from_str(json.trim()).map_err(|e| {
                SetupError::Unavailable(format!("vitest listed its test files unreadably: {e}"))
            })?;
            let mut files: Vec<PathBuf> = files
                .iter()
                .filter_map(|f| f["file"].as_str().map(PathBuf::from))
                .filter(|f| within_paths(request, f))
                .collect();
            // A file two projects run is one unit.
            files.sort();
            files.dedup();
            Ok(files)
        };
        Some(listed())
    }

    fn allows_no_tests(&self, raw: &[String]) -> bool {
        option_in(raw, &PASS_WITH_NO_TESTS).is_some()
    }

    fn informational(&self, raw: &[String]) -> bool {
        // After `run`, vitest's `--version` is no answer: the run goes on.
        raw.iter().any(|a| a == "-h" || a == "--help")
    }

    fn load_failure(&self, id: &str) -> Option<String> {
        js_load_failure(id)
    }

    fn orders_files(&self) -> bool {
        true
    }
}

/// A file that could not be loaded, from the id of the reporters' test for
/// it: `[file, name, n]` (`[project, file, name, n]` in a named project)
/// with n < 0, right under the file. jest names it `Test suite failed to
/// run`, vitest after the error (`SyntaxError`); `afterAll hook` (errors
/// after or around tests) and `Unhandled error` are not load failures.
fn js_load_failure(id: &str) -> Option<String> {
    let parts: Vec<serde_json::Value> = serde_json::from_str(id).ok()?;
    let [head @ .., name, n] = &parts[..] else {
        return None;
    };
    let name = name.as_str()?;
    if n.as_i64()? >= 0 || matches!(name, "afterAll hook" | "Unhandled error") {
        return None;
    }
    match head {
        [file] | [_, file] => file.as_str().map(str::to_owned),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jest_config_a_project_left_behind_for_vitest_is_not_its_framework() {
        let dir = std::env::temp_dir().join(format!("tcrunner-detect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
        write("jest.config.cjs", "module.exports = {};\n");
        assert_eq!(detect(&dir), Some(FrameworkName::Jest), "a config alone");
        write(
            "package.json",
            r#"{"scripts": {"test": "vitest"}, "devDependencies": {"vitest": "^3"}}"#,
        );
        assert_eq!(detect(&dir), Some(FrameworkName::Vitest), "vitest declared");
        write(
            "package.json",
            r#"{"devDependencies": {"vitest": "^3", "jest": "^29"}}"#,
        );
        assert_eq!(detect(&dir), Some(FrameworkName::Jest), "both declared");
        write("package.json", r#"{"devDependencies": {"ts-node": "^10"}}"#);
        assert_eq!(detect(&dir), Some(FrameworkName::Jest), "neither declared");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn vitest_paths_are_named_exactly_unless_one_is_the_project() {
        let dir = std::env::temp_dir().join(format!("tcrunner-exact-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src/a")).unwrap();
        let request = |paths: &[&str]| Request {
            project: dir.clone(),
            paths: paths.iter().map(PathBuf::from).collect(),
            ..Request::default()
        };
        let exact = |paths: &[&str], targets: &[&str]| {
            let request = request(paths);
            let files: Vec<String> = targets.iter().map(|t| (*t).to_owned()).collect();
            let mut filters = files.clone();
            filters.extend(paths.iter().map(|p| vitest_path_filter(Path::new(p))));
            vitest_exact_paths(&request, &files, &filters)
                .map(|json| serde_json::from_str::<serde_json::Value>(&json).unwrap())
        };
        let root = std::fs::canonicalize(&dir).unwrap();
        let got = exact(&["src/../src/a"], &["b.test.ts"]).unwrap();
        assert_eq!(
            got["filters"],
            serde_json::json!(["b.test.ts", "src/../src/a"])
        );
        let paths: Vec<&str> = got["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        // A file that does not exist has no real path; a folder under a
        // linked temporary folder has two spellings.
        let mut want = vec![
            dir.join("b.test.ts").display().to_string(),
            format!("{}/", dir.join("src/a").display()),
        ];
        if root != dir {
            want.push(format!("{}/", root.join("src/a").display()));
        }
        assert_eq!(paths, want);
        assert_eq!(exact(&["./src", "."], &[]), None);
        assert_eq!(exact(&[], &[]), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn targets_become_anchored_escaped_patterns() {
        let here = Path::new(".");
        let t = |s: &str| split_target(here, s).unwrap();
        let targets = vec![t("a.test.ts::outer > in.ner > adds (1+1)"), t("b.test.ts")];
        let pattern = name_pattern(&targets, " ", false, true).unwrap();
        assert_eq!(
            pattern,
            r"^(?:outer(?: | > )in\.ner(?: | > )adds \(1\+1\))(?: [\s\S]*)?$"
        );
        // A title holding ` > ` is found whichever way the target splits it.
        let re = regex::Regex::new(&pattern).unwrap();
        for name in [
            "outer in.ner adds (1+1)",
            "outer > in.ner adds (1+1)",
            "outer in.ner adds (1+1) x",
        ] {
            assert!(re.is_match(name), "{name}");
        }
        assert!(!re.is_match("outer in.ner adds (1+1)x"));
        assert_eq!(
            name_pattern(&targets, " > ", false, true).unwrap(),
            r"^(?:outer > in\.ner > adds \(1\+1\))(?: > [\s\S]*)?$"
        );
        assert_eq!(name_pattern(&[t("b.test.ts")], " ", false, true), None);
        assert!(split_target(here, "::x").is_err());
        // A node for a failure outside any test is its file's.
        for name in [
            "afterAll hook",
            "Test suite failed to run",
            "SyntaxError",
            "Error",
        ] {
            let target = format!("a.test.ts::{name}");
            assert_eq!(
                split_target(here, &target).unwrap(),
                ("a.test.ts".into(), vec![])
            );
        }
        let inner = split_target(here, "a.test.ts::block > afterAll hook").unwrap();
        assert_eq!(inner.1, ["block"]);
        assert_eq!(
            split_target(here, "a.test.ts::Errors").unwrap().1,
            ["Errors"]
        );
        // A block titled '' (jest's full name ` fails`) is a name too.
        assert_eq!(
            split_target(here, "a.ts::x >  > y").unwrap().1,
            ["x", "", "y"]
        );
        let untitled = name_pattern(&[t("a.ts:: > fails")], " ", true, true).unwrap();
        assert!(regex::Regex::new(&untitled).unwrap().is_match(" fails"));
        // A title's own spaces are part of it.
        let padded = name_pattern(&[t("a.ts::parses ")], " ", false, true).unwrap();
        let re = regex::Regex::new(&padded).unwrap();
        assert!(re.is_match("parses "));
        assert!(!re.is_match("parses x"));
        // Targets known to be tests (`--lf`'s failures) take nothing under
        // them: not a test whose title only starts the same.
        let tests = name_pattern(&targets, " ", true, true).unwrap();
        assert_eq!(tests, r"^(?:outer(?: | > )in\.ner(?: | > )adds \(1\+1\))$");
        let re = regex::Regex::new(&tests).unwrap();
        assert!(re.is_match("outer in.ner adds (1+1)"));
        assert!(!re.is_match("outer in.ner adds (1+1) x"));
        // vitest names a type-check test after its file first.
        let typed = [t("./test/types.test-d.ts::types > number")];
        for (joiner, name) in [
            (" ", "test/types.test-d.ts types number"),
            (" > ", "test/types.test-d.ts > types > number"),
        ] {
            let pattern = name_pattern(&typed, joiner, true, true).unwrap();
            let re = regex::Regex::new(&pattern).unwrap();
            assert!(re.is_match(name), "{pattern}");
            assert!(
                !re.is_match(&format!("other.test-d.ts{joiner}types{joiner}number")),
                "{pattern}"
            );
        }
    }

    #[test]
    fn jests_launcher_is_told_where_the_users_own_arguments_are() {
        let dir = std::env::temp_dir().join(format!("tcrunner-launch-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("node_modules/jest")).unwrap();
        std::fs::write(
            dir.join("node_modules/jest/package.json"),
            r#"{"version": "30.0.0"}"#,
        )
        .unwrap();
        let raw: Vec<String> = ["-i", "--ci"].map(String::from).to_vec();
        let request = Request {
            project: dir.clone(),
            targets: vec!["a.test.js::adds".into()],
            raw: raw.clone(),
            test_timeout: Some(2.0),
            ..Request::default()
        };
        let launch = Jest.launch(&request).unwrap();
        let args: Vec<String> = launch
            .spec
            .args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(args[0].ends_with("tcrunner-jest-launch.cjs"), "{args:?}");
        assert!(
            args[1].ends_with("node_modules/jest/bin/jest.js"),
            "{args:?}"
        );
        let (start, end): (usize, usize) = (args[2].parse().unwrap(), args[3].parse().unwrap());
        let jest_args = &args[4..];
        assert_eq!(jest_args[start..end], raw[..], "{args:?}");
        // Everything of tcrunner's is outside that range.
        assert!(jest_args.iter().any(|a| a.starts_with("--reporters=")));
        assert!(jest_args
            .iter()
            .any(|a| a.starts_with("--testNamePattern=")));
        assert!(jest_args.contains(&"--testTimeout=2000".to_owned()));
        assert!(launch.spec.env.is_empty(), "{:?}", launch.spec.env);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// jest before 29.6 calls no reporter at a test's start: its live
    /// console (a one-file run is verbose) is held per file instead, unless
    /// the user asks for `--verbose`.
    #[test]
    fn jest_before_test_starts_were_told_holds_its_console() {
        let dir = std::env::temp_dir().join(format!("tcrunner-verbose-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("node_modules/jest")).unwrap();
        for (version, raw, held) in [
            ("27.5.1", vec![], true),
            ("29.5.0", vec![], true),
            ("29.5.0", vec!["--verbose"], false),
            ("29.6.0", vec![], false),
            ("30.0.0", vec![], false),
        ] {
            std::fs::write(
                dir.join("node_modules/jest/package.json"),
                format!(r#"{{"version": "{version}"}}"#),
            )
            .unwrap();
            let request = Request {
                project: dir.clone(),
                raw: raw.iter().map(|a| a.to_string()).collect(),
                ..Request::default()
            };
            let launch = Jest.launch(&request).unwrap();
            let args: Vec<String> = (launch.spec.args.iter())
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            let quiet = args.iter().any(|a| a == "--verbose=false");
            assert_eq!(quiet, held, "{version} {raw:?}: {args:?}");
            assert!(!launch.shown_args.iter().any(|a| a == "--verbose=false"));
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn engine_ranges_give_their_floor() {
        assert_eq!(engine_floor("^22.12 || ^24 || >=26"), Some((22, 12)));
        assert_eq!(engine_floor(">=18"), Some((18, 0)));
        assert_eq!(engine_floor("*"), None);
    }
}
