//! Grading: each test's group and scenario id, the per-group tally, and the
//! pass policy that turns a tally into a verdict (docs/results.md, "Groups"
//! and "Pass policies").
//!
//! The groups and their priority follow SCBench's `PytestRunner`: a test
//! from a file outside the current checkpoint (`--current`) is a
//! regression whatever its tags; then the tag `error`, `regression`, the
//! user's `--group TAG=GROUP` rules in order, `functionality`; else core.
use regex::Regex;

use crate::event::Outcome;

/// The default groups' names.
pub(crate) const CORE: &str = "CORE";
pub(crate) const FUNCTIONALITY: &str = "FUNCTIONALITY";
pub(crate) const ERROR: &str = "ERROR";
pub(crate) const REGRESSION: &str = "REGRESSION";

/// What decides the exit code of a run (`--pass-policy`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PassPolicy {
    /// The framework's own verdict: today's exit codes.
    #[default]
    Framework,
    /// Every test passed (and there was one).
    All,
    /// The core group is not empty and every core test passed.
    Core,
    /// Every non-empty group other than ERROR fully passed.
    AllButError,
    /// At least one test passed.
    Any,
}

impl PassPolicy {
    /// The name the command line takes.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PassPolicy::Framework => "framework",
            PassPolicy::All => "all",
            PassPolicy::Core => "core",
            PassPolicy::AllButError => "all-but-error",
            PassPolicy::Any => "any",
        }
    }

    /// Whether the tally meets this policy; `None` for `framework`, which
    /// leaves the verdict to the framework's exit code.
    pub(crate) fn met(self, groups: &Groups) -> Option<bool> {
        let fully = |count: &GroupCount| count.total > 0 && count.passed == count.total;
        Some(match self {
            PassPolicy::Framework => return None,
            PassPolicy::All => {
                let all = groups.overall();
                fully(&all)
            }
            PassPolicy::Core => groups.get(CORE).is_some_and(fully),
            PassPolicy::AllButError => {
                let mut others = groups.iter().filter(|(name, _)| *name != ERROR).peekable();
                others.peek().is_some() && others.all(|(_, count)| fully(count))
            }
            PassPolicy::Any => groups.overall().passed > 0,
        })
    }
}

/// How tests are grouped and given scenario ids.
#[derive(Debug, Clone, Default)]
pub(crate) struct Grader {
    /// `--current`: a test whose file matches none is a regression.
    current: Vec<Regex>,
    /// `--group TAG=GROUP`, in order.
    rules: Vec<(String, String)>,
    /// `--scenario-id`: one capture group, applied to the test id.
    scenario: Option<Regex>,
    /// The project's folder as it starts an absolute path in a JSON id
    /// (`"/abs/project/`): jest's and vitest's ids name their file so, and
    /// the scenario is looked for in the path from the project on, not in
    /// the folders of the checkout above it.
    root: Option<String>,
}

impl Grader {
    pub(crate) fn new(
        current: &[String],
        rules: &[(String, String)],
        scenario: Option<Regex>,
    ) -> Grader {
        Grader {
            current: current.iter().map(|glob| glob_regex(glob)).collect(),
            rules: rules.to_vec(),
            scenario,
            root: None,
        }
    }

    /// The folder the run's tests' ids name their files below.
    pub(crate) fn set_root(&mut self, project: &std::path::Path) {
        let folder = format!("{}/", project.to_string_lossy().trim_end_matches('/'));
        let quoted = serde_json::to_string(&folder).expect("a string");
        self.root = Some(quoted[..quoted.len() - 1].to_owned());
    }

    /// The group of a test in `file` with `tags`.
    pub(crate) fn group<'a>(&'a self, file: Option<&str>, tags: &[String]) -> &'a str {
        if !self.current.is_empty() {
            let file = file.unwrap_or("");
            if !self.current.iter().any(|glob| glob.is_match(file)) {
                return REGRESSION;
            }
        }
        let has = |wanted: &str| tags.iter().any(|tag| tag_name(tag) == wanted);
        if has("error") {
            return ERROR;
        }
        if has("regression") {
            return REGRESSION;
        }
        if let Some((_, group)) = self.rules.iter().find(|(tag, _)| has(tag)) {
            return group;
        }
        if has("functionality") {
            return FUNCTIONALITY;
        }
        CORE
    }

    /// The scenario a test belongs to: its `scenario(ID)` tag, else what
    /// `--scenario-id` captures from its id.
    pub(crate) fn scenario<'a>(&self, id: &'a str, tags: &'a [String]) -> Option<&'a str> {
        // The nearest tag that names one (tags come nearest first); a
        // keyword argument's value (`scenario(id=s1)`) is the id.
        let tagged = tags.iter().find_map(|tag| {
            let args = tag.strip_prefix("scenario(")?.strip_suffix(')')?;
            let args = match args.split_once('=') {
                Some((key, value))
                    if key.trim().chars().all(|c| c.is_alphanumeric() || c == '_') =>
                {
                    value
                }
                _ => args,
            };
            Some(args.trim().trim_matches(['"', '\''])).filter(|id| !id.is_empty())
        });
        if tagged.is_some() {
            return tagged;
        }
        let from = match &self.root {
            Some(root) if id.starts_with('[') => {
                id.find(root.as_str()).map_or(0, |at| at + root.len())
            }
            _ => 0,
        };
        let captured = self.scenario.as_ref()?.captures(&id[from..])?.get(1)?;
        Some(captured.as_str())
    }
}

/// `--group TAG=GROUP`.
pub(crate) fn parse_rule(rule: &str) -> Result<(String, String), String> {
    match rule.split_once('=') {
        Some((tag, group)) if !tag.is_empty() && !group.is_empty() => {
            Ok((tag.to_owned(), group.to_owned()))
        }
        _ => Err("expected TAG=GROUP".to_owned()),
    }
}

/// `--scenario-id REGEX`: a regex with one capture group.
pub(crate) fn parse_scenario(pattern: &str) -> Result<Regex, String> {
    let regex = Regex::new(pattern).map_err(|e| e.to_string())?;
    if regex.captures_len() != 2 {
        return Err("needs exactly one capture group".to_owned());
    }
    Ok(regex)
}

/// A tag's name: `error` of `error`, `error("x")` and CTRF's `error::x`.
fn tag_name(tag: &str) -> &str {
    let end = tag.find(['(', ':']).unwrap_or(tag.len());
    tag[..end].trim()
}

/// A file glob as a regex over a path: `*` and `?` stay within one folder,
/// `**` crosses folders. A glob with no `/` matches a file name anywhere
/// (`test_checkpoint_3.py`); any other matches the end of the path, so a
/// relative glob matches the absolute paths tests report.
fn glob_regex(glob: &str) -> Regex {
    let mut pattern = String::from(if glob.starts_with('/') { "^" } else { "(^|/)" });
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                    pattern.push_str("(.*/)?");
                } else {
                    pattern.push_str(".*");
                }
            }
            '*' => pattern.push_str("[^/]*"),
            '?' => pattern.push_str("[^/]"),
            c => pattern.push_str(&regex::escape(c.encode_utf8(&mut [0; 4]))),
        }
    }
    pattern.push('$');
    Regex::new(&pattern).expect("escaped glob")
}

/// How a test counts in a tally.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Passed,
    Failed,
    Error,
    Skipped,
}

impl Status {
    /// The four states of the result file: an expected failure or a todo
    /// is skipped, an unexpected pass passed.
    pub(crate) fn of(outcome: Outcome) -> Status {
        match outcome {
            Outcome::Passed | Outcome::Xpass => Status::Passed,
            Outcome::Failed => Status::Failed,
            Outcome::Error => Status::Error,
            Outcome::Skipped | Outcome::Xfail | Outcome::Todo => Status::Skipped,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::Passed => "passed",
            Status::Failed => "failed",
            Status::Error => "error",
            Status::Skipped => "skipped",
        }
    }
}

/// One group's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub(crate) struct GroupCount {
    pub total: u64,
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
}

impl GroupCount {
    pub(crate) fn count(&mut self, status: Status) {
        self.total += 1;
        let slot = match status {
            Status::Passed => &mut self.passed,
            Status::Failed => &mut self.failed,
            Status::Error => &mut self.errors,
            Status::Skipped => &mut self.skipped,
        };
        *slot += 1;
    }

    fn add(&mut self, other: &GroupCount) {
        self.total += other.total;
        self.passed += other.passed;
        self.failed += other.failed;
        self.errors += other.errors;
        self.skipped += other.skipped;
    }
}

/// The tally by group, in the order groups were first seen (a handful).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Groups {
    groups: Vec<(String, GroupCount)>,
}

impl Groups {
    pub(crate) fn count(&mut self, group: &str, status: Status) {
        match self.groups.iter_mut().find(|(name, _)| name == group) {
            Some((_, count)) => count.count(status),
            None => {
                let mut count = GroupCount::default();
                count.count(status);
                self.groups.push((group.to_owned(), count));
            }
        }
    }

    pub(crate) fn get(&self, group: &str) -> Option<&GroupCount> {
        self.groups
            .iter()
            .find(|(name, _)| name == group)
            .map(|(_, count)| count)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &GroupCount)> {
        self.groups
            .iter()
            .map(|(name, count)| (name.as_str(), count))
    }

    /// Every group together.
    pub(crate) fn overall(&self) -> GroupCount {
        let mut all = GroupCount::default();
        for (_, count) in &self.groups {
            all.add(count);
        }
        all
    }
}

/// As a JSON object: each group's counts by its name, in order.
impl serde::Serialize for Groups {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Node;

    fn node(file: &str, tags: &[&str]) -> Node {
        Node {
            id: format!("{file}::t"),
            name: "t".into(),
            file: Some(file.into()),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..Node::default()
        }
    }

    fn group_of<'a>(grader: &'a Grader, node: &Node) -> &'a str {
        grader.group(node.file.as_deref(), &node.tags)
    }

    #[test]
    fn groups_follow_scbench_priority() {
        let rules = [
            parse_rule("slow=SLOW").unwrap(),
            parse_rule("error=NOPE").unwrap(),
        ];
        let grader = Grader::new(&["tests/test_checkpoint_2.py".into()], &rules, None);
        let current = "/p/tests/test_checkpoint_2.py";
        assert_eq!(
            group_of(&grader, &node("/p/tests/test_checkpoint_1.py", &["error"])),
            REGRESSION
        );
        assert_eq!(
            group_of(&grader, &node(current, &["functionality", "error(\"x\")"])),
            ERROR
        );
        assert_eq!(
            group_of(&grader, &node(current, &["functionality", "regression"])),
            REGRESSION
        );
        assert_eq!(
            group_of(&grader, &node(current, &["functionality", "slow"])),
            "SLOW"
        );
        assert_eq!(
            group_of(&grader, &node(current, &["functionality::x"])),
            FUNCTIONALITY
        );
        assert_eq!(group_of(&grader, &node(current, &["parametrize"])), CORE);
        // No --current: every file is current.
        let plain = Grader::default();
        assert_eq!(
            group_of(&plain, &node("/p/tests/test_checkpoint_1.py", &[])),
            CORE
        );
    }

    #[test]
    fn globs_match_path_ends() {
        let glob = |g: &str, path: &str| glob_regex(g).is_match(path);
        assert!(glob("test_cp_2.py", "/p/tests/test_cp_2.py"));
        assert!(!glob("test_cp_2.py", "/p/tests/xtest_cp_2.py"));
        assert!(glob("tests/*_2.py", "/p/tests/test_cp_2.py"));
        assert!(!glob("tests/*_2.py", "/p/tests/sub/test_cp_2.py"));
        assert!(glob("tests/**/*_2.py", "/p/tests/sub/test_cp_2.py"));
        assert!(glob("tests/**/*_2.py", "/p/tests/test_cp_2.py"));
        assert!(!glob("/tests/*.py", "/p/tests/a.py"));
    }

    #[test]
    fn scenarios_from_tags_then_ids() {
        let grader = Grader::new(&[], &[], Some(parse_scenario(r"test_(s\d+)_").unwrap()));
        let mut n = node("/p/t.py", &["scenario(\"abc\")"]);
        assert_eq!(grader.scenario(&n.id, &n.tags), Some("abc"));
        n.tags.clear();
        n.id = "t.py::test_s12_works".into();
        assert_eq!(grader.scenario(&n.id, &n.tags), Some("s12"));
        n.id = "t.py::other".into();
        assert_eq!(grader.scenario(&n.id, &n.tags), None);
        let tags = |t: &[&str]| t.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let nearest = tags(&["scenario(inner)", "scenario(outer)"]);
        assert_eq!(grader.scenario("x", &nearest), Some("inner"));
        assert_eq!(
            grader.scenario("x", &tags(&["scenario(id=kw1)"])),
            Some("kw1")
        );
        assert_eq!(
            grader.scenario("x", &tags(&["scenario()", "scenario(s2)"])),
            Some("s2")
        );
        assert_eq!(grader.scenario("x", &tags(&["scenario()"])), None);
        // A JSON id's absolute path: from the project on.
        let mut grader = Grader::new(&[], &[], Some(parse_scenario(r"(s\d+)").unwrap()));
        grader.set_root(std::path::Path::new("/work/grader-s7/"));
        let id = r#"["/work/grader-s7/a.test.js","scenario s42 works",0]"#;
        assert_eq!(grader.scenario(id, &[]), Some("s42"));
        let id = r#"["/work/grader-s7/s3/a.test.js","works",0]"#;
        assert_eq!(grader.scenario(id, &[]), Some("s3"));
        assert_eq!(grader.scenario("grader-s7/t.py::test_x", &[]), Some("s7"));
        assert!(parse_scenario("no group").is_err());
        assert!(parse_scenario("(a)(b)").is_err());
        assert!(parse_rule("tag").is_err());
        assert!(parse_rule("=G").is_err());
    }

    #[test]
    fn policies() {
        let mut groups = Groups::default();
        groups.count(CORE, Status::Passed);
        groups.count(ERROR, Status::Failed);
        assert_eq!(PassPolicy::Framework.met(&groups), None);
        assert_eq!(PassPolicy::All.met(&groups), Some(false));
        assert_eq!(PassPolicy::Core.met(&groups), Some(true));
        assert_eq!(PassPolicy::AllButError.met(&groups), Some(true));
        assert_eq!(PassPolicy::Any.met(&groups), Some(true));
        groups.count(FUNCTIONALITY, Status::Skipped);
        assert_eq!(PassPolicy::AllButError.met(&groups), Some(false));
        let empty = Groups::default();
        for policy in [
            PassPolicy::All,
            PassPolicy::Core,
            PassPolicy::AllButError,
            PassPolicy::Any,
        ] {
            assert_eq!(policy.met(&empty), Some(false), "{policy:?}");
        }
    }
}
