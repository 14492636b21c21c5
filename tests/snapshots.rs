//! Snapshots of the redacted stream, byte for byte: the real binary on
//! the pytest fixture and the bundled example project (pytest 9), and on the
//! jest 30 and vitest 4 installs of scripts/setup-node.sh, in both dialects.
//!
//! What varies from run to run or machine to machine is redacted first:
//! durations, timestamps, absolute paths (the repository, the interpreter,
//! the folder our runners are written to), memory addresses, pytest's
//! `in 0.77s`, Python's version, line numbers inside its standard library,
//! and its 3.11+ `^^^^` traceback markers.
//!
//! The framework's own text (pytest's progress dots, its summary line, a
//! service message a test prints, neutralised) comes on its stdout, which
//! tcrunner reads alongside the event pipe, so where it lands between two
//! messages is a race. A snapshot therefore lists the service messages in
//! order, then the text in its own order without blank lines, with the
//! progress line that the messages cut into pieces put back together.
//! Console output that comes over the event pipe as plain text (jest's and
//! vitest's, in the teamcity dialect) races with the stdout a test wrote, so
//! the printed service messages, neutralised, are listed on their own.
//!
//! The frameworks run with `CI=true` whether or not the tests do, so that a
//! snapshot taken on a laptop holds on CI.
//!
//! jest and vitest run their files one at a time and without their timing
//! caches (`--runInBand --no-cache`, `--no-file-parallelism --no-cache`), so
//! files run in one order (largest first) and their events do not interleave.
//! When a framework says a file is done can still race with the next file's
//! start, so messages are grouped by file (see [`Messages`]).
//!
//! Update with `INSTA_UPDATE=always cargo test --test snapshots` (or
//! `cargo insta review`); CI (`CI=true`) never writes snapshots.
mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use regex::Regex;
use util::{attr, output, path, repo, tcrunner};

/// One snapshot: a project and what to add to the command line. Every
/// fixture fails on purpose, so every run exits 1.
struct Case<'a> {
    name: &'a str,
    project: PathBuf,
    /// Run with the pytest 9 interpreter.
    pytest: bool,
    args: &'a [&'a str],
}

/// A pytest project in the repository, run with pytest 9.
fn pytest_case<'a>(name: &'a str, project: &str) -> Case<'a> {
    Case {
        name,
        project: path(project),
        pytest: true,
        args: &[],
    }
}

/// A jest or vitest install under target/node.
fn node_case<'a>(install: &'a str, args: &'a [&'a str]) -> Case<'a> {
    let modules = util::node_modules(install)
        .unwrap_or_else(|| panic!("target/node/{install} missing: run scripts/setup-node.sh"));
    Case {
        name: install,
        project: modules.parent().expect("an install folder").to_path_buf(),
        pytest: false,
        args,
    }
}

/// Runs the case and snapshots its redacted stream.
fn snapshot(case: Case, dialect: &str) {
    let python = util::pytest9();
    let project = case.project.to_str().expect("a UTF-8 path");
    let mut args = vec!["--project", project, "--format", dialect];
    if case.pytest {
        args.extend(["--python", python.to_str().expect("a UTF-8 path")]);
    }
    args.extend(case.args);
    // CI or not, the same stream: pytest does not cut long assertion
    // explanations under CI, and jest and vitest never write snapshots then.
    let out = output(
        tcrunner(&args)
            .env("CI", "true")
            .env_remove("BUILD_NUMBER")
            .env_remove("FORCE_COLOR"),
    );
    let stream = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}: exit code\n{stream}\n--- stderr\n{}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    util::assert_clean(&out.stdout);
    let redacted = Redactor::new(&case.project, &python).redact(&stream);
    let snapshot = format!("exit code: 1\n{}", layout(&redacted));
    insta::assert_snapshot!(format!("{}_{dialect}", case.name), snapshot);
}

/// Service messages in order, grouped by file, then the framework's text in
/// its own order, then the service messages tests printed, neutralised.
fn layout(stream: &str) -> String {
    let mut messages = Messages::default();
    let mut text: Vec<String> = Vec::new();
    let mut printed: Vec<&str> = Vec::new();
    // A piece of pytest's progress line: outcome letters, then maybe the
    // `[100%]` that ends it.
    let progress = Regex::new(r"^[.A-Za-z]*( +\[ *\d+%\])?$").expect("a valid regex");
    let mut open_progress = false;
    for line in stream.lines() {
        // A service message a test printed comes on the framework's
        // stdout, neutralised.
        if line.starts_with("##teamcity[message text='##teamcity|[") {
            printed.push(line);
            continue;
        }
        if line.starts_with("##teamcity[") {
            messages.push(line);
            continue;
        }
        if line.is_empty() {
            // Also what is left of a line a message cut just before its
            // newline: tcrunner started the message on a line of its own.
            continue;
        }
        let piece = progress.is_match(line);
        match text.last_mut() {
            Some(last) if piece && open_progress => last.push_str(line),
            _ => text.push(line.to_owned()),
        }
        open_progress = piece && !line.ends_with("%]");
    }
    format!(
        "--- service messages\n{}--- framework text\n{}\n--- service messages a test printed\n{}\n",
        messages.finish(),
        text.join("\n"),
        printed.join("\n")
    )
}

/// Messages grouped by the top-level suite they belong to (its node id in
/// the intellij dialect, the `flowId` in the teamcity one), the groups in
/// the order they first appear. When a framework tells that a file is done
/// is a race with the next file's start (vitest, on a loaded machine);
/// within a file the order is the stream's.
#[derive(Default)]
struct Messages {
    /// Top-level suite of each node id seen.
    top: std::collections::HashMap<String, String>,
    /// Groups in first-seen order; `None` keys hold one run-level message.
    groups: Vec<(Option<String>, Vec<String>)>,
}

impl Messages {
    fn push(&mut self, line: &str) {
        let key = match (attr(line, "flowId"), attr(line, "nodeId")) {
            (Some(flow), _) => Some(flow),
            (None, Some(id)) => {
                let top = match attr(line, "parentNodeId") {
                    Some(parent) if parent != "0" => {
                        self.top.get(&parent).cloned().unwrap_or(parent)
                    }
                    _ => self.top.get(&id).cloned().unwrap_or_else(|| id.clone()),
                };
                self.top.insert(id, top.clone());
                Some(top)
            }
            (None, None) => None,
        };
        match self
            .groups
            .iter_mut()
            .find(|(k, _)| key.is_some() && *k == key)
        {
            Some((_, lines)) => lines.push(line.to_owned()),
            None => self.groups.push((key, vec![line.to_owned()])),
        }
    }

    fn finish(self) -> String {
        let mut all = String::new();
        for line in self.groups.into_iter().flat_map(|(_, lines)| lines) {
            all.push_str(&line);
            all.push('\n');
        }
        all
    }
}

/// Stands for "drop the marker line" among the replacements.
const MARKER_LINE: &str = "<marker line>";

/// Replaces what differs between runs and machines with placeholders.
struct Redactor {
    /// Literal paths and their placeholders, longest first.
    paths: Vec<(String, String)>,
    /// Patterns and their replacements, applied in order after the paths.
    patterns: Vec<(Regex, &'static str)>,
}

impl Redactor {
    fn new(project: &Path, python: &Path) -> Redactor {
        let root = repo();
        let relative = |p: &Path| {
            p.strip_prefix(&root)
                .map(|rel| format!("<ROOT>/{}", rel.display()))
                .unwrap_or_else(|_| "<PROJECT>".to_owned())
        };
        let mut paths: Vec<(PathBuf, String)> = vec![(root.clone(), "<ROOT>".into())];
        // Installs may be links (node resolves them; Python may not).
        for dir in [
            project.to_path_buf(),
            root.join("target/venv"),
            root.join("target/node"),
        ] {
            paths.push((dir.clone(), relative(&dir)));
        }
        let mut canonical: Vec<(PathBuf, String)> = paths
            .iter()
            .filter_map(|(p, label)| Some((p.canonicalize().ok()?, label.clone())))
            .collect();
        paths.append(&mut canonical);
        // The interpreter the venv was made from (tracebacks into the stdlib).
        let base = Command::new(python)
            .args(["-c", "import sys; print(sys.base_prefix)"])
            .output()
            .expect("run the pytest 9 interpreter");
        let base = String::from_utf8_lossy(&base.stdout).trim().to_owned();
        if !base.is_empty() {
            paths.push((PathBuf::from(base), "<PYTHON>".into()));
        }
        let mut paths: Vec<(String, String)> = paths
            .into_iter()
            .flat_map(|(p, label)| {
                let p = p.to_string_lossy().into_owned();
                // jest and vitest hints escape the dots of a file path.
                [(p.replace('.', r"\."), label.clone()), (p, label)]
            })
            .collect();
        paths.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        paths.dedup();
        let re = |pattern: &str| Regex::new(pattern).expect("a valid regex");
        let patterns = vec![
            (re(r"duration='\d+'"), "duration='<ms>'"),
            (re(r"timestamp='[^']*'"), "timestamp='<time>'"),
            // teamcity flow ids start with tcrunner's process id.
            (re(r"flowId='\d+([-.])"), "flowId='<pid>$1"),
            // The folder the embedded runners are written to (a content hash).
            (
                re(r"(?:/[^\s'|<>]*)?/tcrunner-\d+/[0-9a-f]{16}/"),
                "<RUNNERS>/",
            ),
            (re(r"0x[0-9a-fA-F]+"), "0x…"),
            // pytest's summary line: `3 failed, 5 passed in 0.77s`.
            (re(r"\bin \d+\.\d+s\b"), "in <secs>"),
            (re(r"\bPython 3\.\d+\.\d+\w*"), "Python 3.X"),
            (re(r"\bpython3\.\d+\b"), "python3.X"),
            // Installed packages (teamcity-messages patches unittest's
            // assertEqual, so its frame shows): pytest prints the path
            // relative or absolute depending on where the checkout is.
            (
                re(r"(?:<ROOT>/|(?:\.\./)+)target/venv/pytest\d/lib/python3\.X/site-packages/"),
                "<SITE-PACKAGES>/",
            ),
            // Line numbers inside the standard library differ by version.
            (re(r"(<PYTHON>/[^\s:|']+\.py):\d+"), "$1:<line>"),
            // Python 3.11+ marks the failing expression with a line of `^`
            // (and `~`) under it; older and newer versions differ.
            (re(r"\|n *[\^~][\^~ ]*(?:\|n|')"), MARKER_LINE),
        ];
        Redactor { paths, patterns }
    }

    fn redact(&self, stream: &str) -> String {
        let mut text = stream.to_owned();
        for (path, label) in &self.paths {
            text = text.replace(path.as_str(), label);
        }
        for (pattern, replacement) in &self.patterns {
            text = if *replacement == MARKER_LINE {
                // Keep what ended the marker line (the next `|n`, or the
                // quote), and go again for marker lines one after another.
                let mut text = text;
                loop {
                    let next = pattern.replace_all(&text, |c: &regex::Captures| {
                        if c[0].ends_with('\'') { "'" } else { "|n" }.to_owned()
                    });
                    if next == text {
                        break text;
                    }
                    text = next.into_owned();
                }
            } else {
                pattern.replace_all(&text, *replacement).into_owned()
            };
        }
        text
    }
}

#[test]
fn pytest_fixture_intellij() {
    snapshot(
        pytest_case("pytest_fixture", "tests/fixtures/pytest"),
        "intellij",
    );
}

#[test]
fn pytest_fixture_teamcity() {
    snapshot(
        pytest_case("pytest_fixture", "tests/fixtures/pytest"),
        "teamcity",
    );
}

#[test]
fn example_intellij() {
    snapshot(pytest_case("example", "example"), "intellij");
}

#[test]
fn example_teamcity() {
    snapshot(pytest_case("example", "example"), "teamcity");
}

const JEST_ARGS: &[&str] = &["--", "--runInBand", "--no-cache"];
const VITEST_ARGS: &[&str] = &["--", "--no-file-parallelism", "--no-cache"];

#[test]
fn jest30_intellij() {
    snapshot(node_case("jest30", JEST_ARGS), "intellij");
}

#[test]
fn jest30_teamcity() {
    snapshot(node_case("jest30", JEST_ARGS), "teamcity");
}

#[test]
fn vitest4_intellij() {
    snapshot(node_case("vitest4", VITEST_ARGS), "intellij");
}

#[test]
fn vitest4_teamcity() {
    snapshot(node_case("vitest4", VITEST_ARGS), "teamcity");
}
