//! The human view (`--format human`, `tcrunner view`): for a person at a
//! terminal, not a program. While tests run, a line per finished file (per
//! test with `-v`) above one status line redrawn in place; at the end every
//! failure, the run-level errors and a summary line. Off a terminal (a file,
//! a pipe, `TERM=dumb`) the same without the status line or any cursor
//! movement, so the log reads cleanly.
//!
//! What it keeps is bounded by the failures it must show at the end and the
//! nodes open now, never by the number of tests: a finished test that
//! passed leaves nothing behind.
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::failures::{Captured, Failure};
use super::grading::Groups;
use super::output::{Opened, Output, ProblemKind, TreeEvent};
use super::style::{self, Paint, Style};
use super::summary::Summary;
use crate::cli::{HumanConfig, Verbosity};
use crate::event::{LogLevel, NodeKind, Outcome, TestResult};
use crate::hash::FastMap;

/// The least time between two redraws of the status line (20 a second).
const REDRAW: Duration = Duration::from_millis(50);

/// A test that takes this long is flagged slow.
const SLOW_MS: u64 = 2_000;

/// Erases the terminal's current line and returns to its start.
const ERASE_LINE: &str = "\r\x1b[2K";

/// An open node: what its descendants need to name themselves.
#[derive(Debug)]
struct Known {
    name: String,
    parent: u64,
    kind: NodeKind,
    file: Option<String>,
}

/// The verdicts counted under one file (a top-level node), for its line.
#[derive(Debug)]
struct Tally {
    counts: Summary,
    /// The sum of its tests' durations: as a replayed stream has them.
    ms: u64,
}

/// Something the run itself said went wrong, shown in its own section.
#[derive(Debug)]
enum RunError {
    /// A note of the run (a time limit ran out, a crash between tests).
    Log(LogLevel, String),
    /// A node that failed as a whole: a file that did not import or load.
    Node(Failure),
}

/// The human view, writing to `out`.
pub(crate) struct Human<W: Write> {
    out: W,
    style: Style,
    live: bool,
    verbosity: Verbosity,
    /// Paths are shown relative to it.
    cwd: Option<PathBuf>,
    started: Instant,
    /// How many tests are expected, when the source said.
    total: Option<u64>,
    /// Tests that ended, their subtests left out: what `total` counts.
    progress: u64,
    counts: Summary,
    nodes: FastMap<u64, Known>,
    tallies: FastMap<u64, Tally>,
    captured: FastMap<u64, Captured>,
    failures: Vec<Failure>,
    errors: Vec<RunError>,
    /// Tests of a collect-only tree.
    collected: u64,
    /// The run's end says it collected no tests (pytest's exit 5 where
    /// every module skipped itself).
    no_tests: bool,
    /// The file whose test started last, for the status line.
    current: Option<String>,
    /// The status line is on the screen, this many columns wide.
    status_shown: Option<usize>,
    last_draw: Option<Instant>,
    /// Plain text was written without its line end.
    line_open: bool,
    buf: String,
    /// The tally by group of a graded run, told at its end.
    groups: Option<Groups>,
    /// What the tests to run took last time ([`HumanConfig::expected_ms`]),
    /// and what those that finished took this time, for the time left.
    expected_ms: Option<u64>,
    done_ms: u64,
}

impl<W: Write> Human<W> {
    pub(crate) fn new(config: HumanConfig, out: W) -> Self {
        Human {
            out,
            style: Style {
                color: config.color,
            },
            live: config.live,
            verbosity: config.verbosity,
            cwd: std::env::current_dir().ok(),
            started: Instant::now(),
            groups: None,
            expected_ms: config.expected_ms.filter(|&ms| ms > 0),
            done_ms: 0,
            total: None,
            progress: 0,
            counts: Summary::default(),
            nodes: FastMap::default(),
            tallies: FastMap::default(),
            captured: FastMap::default(),
            failures: Vec::new(),
            errors: Vec::new(),
            collected: 0,
            no_tests: false,
            current: None,
            status_shown: None,
            last_draw: None,
            line_open: false,
            buf: String::new(),
        }
    }

    /// `path` relative to the working folder when it is under it.
    fn relative<'p>(&self, path: &'p str) -> &'p str {
        self.cwd
            .as_ref()
            .and_then(|cwd| std::path::Path::new(path).strip_prefix(cwd).ok())
            .and_then(|rel| rel.to_str())
            .unwrap_or(path)
    }

    /// `dir/file.py > Class > test`: the path of folders and the file, then
    /// the names inside it.
    fn full_name(&self, node: &Opened<'_>) -> String {
        let mut path: Vec<&str> = Vec::new();
        let mut inner: Vec<&str> = Vec::new();
        let n = node.node;
        let mut step = Some((n.name.as_str(), n.kind, n.file.as_deref(), node.parent));
        while let Some((name, kind, file, parent)) = step {
            match (kind, file) {
                // Above a file, every node is a folder of its path.
                _ if !path.is_empty() => path.push(name),
                (NodeKind::File, Some(file)) => {
                    path.push(self.relative(file));
                    break;
                }
                (NodeKind::File | NodeKind::Dir, _) => path.push(name),
                (NodeKind::Suite | NodeKind::Test, _) => inner.push(name),
            }
            step = self
                .nodes
                .get(&parent)
                .map(|k| (k.name.as_str(), k.kind, k.file.as_deref(), k.parent));
        }
        path.reverse();
        inner.reverse();
        let path = path.join("/");
        let name = match (path.is_empty(), inner.is_empty()) {
            (true, _) => inner.join(" > "),
            (false, true) => path,
            (false, false) => format!("{path} > {}", inner.join(" > ")),
        };
        style::printable(&name).into_owned()
    }

    /// `path:line` of a node, when its file is known.
    fn location(&self, node: &Opened<'_>) -> Option<String> {
        let file = node.node.file.as_deref()?;
        let file = style::printable(self.relative(file));
        Some(match node.node.line {
            Some(line) => format!("{file}:{line}"),
            None => file.into_owned(),
        })
    }

    /// Takes the status line off the screen. A window made narrower since
    /// it was drawn has wrapped it onto more rows (terminals reflow their
    /// lines on resize): those rows go too.
    fn erase_status(&mut self) -> io::Result<()> {
        let Some(drawn) = self.status_shown.take() else {
            return Ok(());
        };
        let columns = style::width().max(1);
        let rows = drawn.div_ceil(columns).max(1);
        if rows > 1 {
            write!(self.out, "\r\x1b[{}A\x1b[J", rows - 1)
        } else {
            self.out.write_all(ERASE_LINE.as_bytes())
        }
    }

    /// Writes `self.buf` as lines that stay, above the status line.
    fn emit(&mut self) -> io::Result<()> {
        self.erase_status()?;
        if self.line_open {
            self.out.write_all(b"\n")?;
            self.line_open = false;
        }
        self.out.write_all(self.buf.as_bytes())?;
        self.buf.clear();
        Ok(())
    }

    fn label(&self, outcome: Outcome) -> (Paint, &'static str) {
        match outcome {
            Outcome::Passed => (Paint::Green, "PASS "),
            Outcome::Failed => (Paint::Red, "FAIL "),
            Outcome::Error => (Paint::Red, "ERROR"),
            Outcome::Skipped => (Paint::Yellow, "SKIP "),
            Outcome::Xfail => (Paint::Yellow, "XFAIL"),
            Outcome::Xpass => (Paint::Yellow, "XPASS"),
            Outcome::Todo => (Paint::Cyan, "TODO "),
        }
    }

    fn finished(&mut self, node: &Opened<'_>, result: &TestResult) -> io::Result<()> {
        self.counts.count(result.outcome);
        self.progress += u64::from(!self.is_subtest(node));
        let ms = result.duration_ms.unwrap_or(0);
        self.done_ms = self.done_ms.saturating_add(ms);
        if let Some(tally) = self.tallies.get_mut(&node.flow) {
            tally.counts.count(result.outcome);
            tally.ms = tally.ms.saturating_add(ms);
        }
        let slow = ms >= SLOW_MS;
        let verbose = self.verbosity == Verbosity::Verbose;
        if verbose || (slow && self.verbosity == Verbosity::Normal) {
            let (paint, label) = if verbose {
                self.label(result.outcome)
            } else {
                (Paint::Yellow, "SLOW ")
            };
            let name = self.full_name(node);
            let mut line = String::from("  ");
            self.style.push(&mut line, paint, label);
            let time = format!(" [{:>7}] ", style::seconds(ms));
            self.style.push(
                &mut line,
                if slow { Paint::Yellow } else { Paint::Dim },
                &time,
            );
            line.push_str(&name);
            if slow && verbose {
                self.style.push(&mut line, Paint::Yellow, " (slow)");
            }
            line.push('\n');
            self.buf = line;
            self.emit()?;
        }
        let captured = self.captured.remove(&node.id).unwrap_or_default();
        if result.outcome.verdict() == crate::event::Verdict::Failed {
            let failure = Failure::new(
                self.full_name(node),
                self.location(node),
                Some(result),
                captured,
            );
            // A failure of no test in particular (a file that did not import
            // or load, a hook) is the run's error, not a test's.
            if result.outcome == Outcome::Error && node.node.line.is_none() {
                self.errors.push(RunError::Node(failure));
            } else {
                self.failures.push(failure);
            }
        }
        if node.id == node.flow {
            self.file_line(node)?;
        }
        self.nodes.remove(&node.id);
        Ok(())
    }

    /// The line of a file (a top-level node) that ended.
    fn file_line(&mut self, node: &Opened<'_>) -> io::Result<()> {
        let Some(tally) = self.tallies.remove(&node.id) else {
            return Ok(());
        };
        if self.verbosity != Verbosity::Normal || tally.counts.total() == 0 {
            return Ok(());
        }
        let c = &tally.counts;
        let (paint, label) = if c.any_failed() {
            (Paint::Red, "FAIL ")
        } else if c.passed + c.xpassed == 0 {
            (Paint::Yellow, "SKIP ")
        } else {
            (Paint::Green, "PASS ")
        };
        let mut line = String::from("  ");
        self.style.push(&mut line, paint, label);
        let time = format!(" [{:>7}] ", style::seconds(tally.ms));
        self.style.push(&mut line, Paint::Dim, &time);
        line.push_str(&self.full_name(node));
        line.push_str("  ");
        let counts = self.counts_text(c);
        self.style
            .push(&mut line, Paint::Dim, &format!("({counts})"));
        line.push('\n');
        self.buf = line;
        self.emit()
    }

    /// `3 passed, 1 failed`: the counts that are not zero.
    fn counts_text(&self, c: &Summary) -> String {
        let parts = [
            (c.passed, "passed"),
            (c.failed, "failed"),
            (c.errors, if c.errors == 1 { "error" } else { "errors" }),
            (c.skipped, "skipped"),
            (c.xfailed, "xfailed"),
            (c.xpassed, "xpassed"),
            (c.todo, "todo"),
            (c.stopped, "stopped"),
        ];
        let text: Vec<String> = parts
            .iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        text.join(", ")
    }

    /// The counts, painted, for the status and summary lines.
    fn painted_counts(&self, out: &mut String) {
        let c = &self.counts;
        let parts = [
            (c.passed, "passed", Paint::Green),
            (c.failed, "failed", Paint::Red),
            (
                c.errors,
                if c.errors == 1 { "error" } else { "errors" },
                Paint::Red,
            ),
            (c.skipped, "skipped", Paint::Yellow),
            (c.xfailed, "xfailed", Paint::Yellow),
            (c.xpassed, "xpassed", Paint::Yellow),
            (c.todo, "todo", Paint::Cyan),
            (c.stopped, "stopped", Paint::Red),
        ];
        let mut first = true;
        for (n, what, paint) in parts {
            if n == 0 {
                continue;
            }
            if !first {
                out.push_str(", ");
            }
            first = false;
            self.style.push(out, paint, &format!("{n} {what}"));
        }
        if first {
            out.push_str("no tests ran");
        }
    }

    /// Whether `node` is a test's subtest, which the framework's count of
    /// tests leaves out.
    fn is_subtest(&self, node: &Opened<'_>) -> bool {
        self.nodes
            .get(&node.parent)
            .is_some_and(|parent| parent.kind == NodeKind::Test)
    }

    /// Draws the status line in place, at most every [`REDRAW`].
    fn draw_status(&mut self) -> io::Result<()> {
        if !self.live || self.line_open {
            return Ok(());
        }
        let now = Instant::now();
        if self.last_draw.is_some_and(|last| now < last + REDRAW) {
            return Ok(());
        }
        self.last_draw = Some(now);
        let done = self.counts.total();
        let mut line = String::new();
        self.style.push(&mut line, Paint::Bold, " RUNNING ");
        match self.total.filter(|&t| t > 0) {
            Some(total) => {
                const BAR: u64 = 20;
                let done = self.progress;
                let filled = (done.min(total) * BAR / total) as usize;
                line.push_str(&format!(
                    "[{}{}] {done}/{total} ",
                    "=".repeat(filled),
                    " ".repeat(BAR as usize - filled)
                ));
            }
            None => line.push_str(&format!("{done} ")),
        }
        let mut counts = String::new();
        self.painted_counts(&mut counts);
        line.push_str(&counts);
        let elapsed_ms = self.started.elapsed().as_millis() as u64;
        line.push_str(&format!("  {}", style::seconds(elapsed_ms)));
        if let Some(left) = self.time_left(elapsed_ms) {
            line.push_str(&format!(" (~{} left)", style::seconds(left)));
        }
        if let Some(current) = &self.current {
            line.push_str("  ");
            self.style.push(&mut line, Paint::Dim, current);
        }
        // Room at the end for the `^C` a terminal echoes there.
        let line = style::fit(&line, style::width().saturating_sub(3));
        self.erase_status()?;
        self.out.write_all(ERASE_LINE.as_bytes())?;
        self.out.write_all(line.as_bytes())?;
        self.status_shown = Some(style::visible_len(&line));
        Ok(())
    }

    /// The time left, from how far the run is through what its tests took
    /// last time (so parallel workers count as they ran then): none until
    /// a test has taken time, or once the run is past the estimate.
    fn time_left(&self, elapsed_ms: u64) -> Option<u64> {
        let expected = self.expected_ms?;
        if self.done_ms == 0 || self.done_ms >= expected {
            return None;
        }
        let left =
            elapsed_ms as u128 * u128::from(expected - self.done_ms) / u128::from(self.done_ms);
        Some(u64::try_from(left).unwrap_or(u64::MAX))
    }

    /// The failures, the run's errors and the summary line.
    fn write_end(&mut self) -> io::Result<()> {
        let mut out = String::new();
        let style = self.style;
        if !self.failures.is_empty() {
            out.push('\n');
            style.push(
                &mut out,
                Paint::Alarm,
                &format!("──── FAILURES ({}) ────", self.failures.len()),
            );
            out.push_str("\n\n");
            for failure in &self.failures {
                failure.render(style, &mut out);
            }
        }
        if !self.errors.is_empty() {
            out.push('\n');
            style.push(
                &mut out,
                Paint::Alarm,
                &format!("──── ERRORS ({}) ────", self.errors.len()),
            );
            out.push_str("\n\n");
            for error in &self.errors {
                match error {
                    RunError::Log(level, text) => {
                        let (paint, label) = match level {
                            LogLevel::Error => (Paint::Alarm, "ERROR"),
                            LogLevel::Warning | LogLevel::Info => (Paint::Yellow, "WARNING"),
                        };
                        style.push(&mut out, paint, label);
                        out.push(' ');
                        out.push_str(text.trim_end());
                        out.push_str("\n\n");
                    }
                    RunError::Node(failure) => failure.render(style, &mut out),
                }
            }
        }
        if self.failures.is_empty() && self.errors.is_empty() {
            out.push('\n');
        }
        let (paint, label) = if self.counts.any_failed() {
            (Paint::Alarm, "FAILED")
        } else if self
            .errors
            .iter()
            .any(|e| matches!(e, RunError::Log(LogLevel::Error, _)))
        {
            (Paint::Alarm, "ERROR ")
        } else if self.counts.total() == 0 && self.collected == 0
            || self.no_tests && self.counts.passed == 0
        {
            // Nothing passed either: the run exits 5, as pytest's does.
            (Paint::Yellow, "NO TESTS")
        } else {
            (Paint::Green, "PASSED")
        };
        style.push(&mut out, paint, label);
        out.push(' ');
        if label == "NO TESTS" {
            out.push_str("ran");
        } else if self.collected > 0 {
            // A collect-only tree; its files' errors are counted beside it.
            let what = if self.collected == 1 { "test" } else { "tests" };
            out.push_str(&format!("{} {what} collected", self.collected));
            if self.counts.total() > 0 {
                out.push_str(", ");
                self.painted_counts(&mut out);
            }
        } else {
            self.painted_counts(&mut out);
        }
        out.push_str(&format!(
            " in {}\n",
            style::seconds(self.started.elapsed().as_millis() as u64)
        ));
        if let Some(groups) = &self.groups {
            // A graded run: each group's passed/total, as the pass policy
            // reads them.
            let shown: Vec<String> = (groups.iter())
                .map(|(name, count)| format!("{name} {}/{}", count.passed, count.total))
                .collect();
            out.push_str(&format!("groups: {}\n", shown.join(", ")));
        }
        self.buf = out;
        self.emit()
    }
}

impl<W: Write> Output for Human<W> {
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::Count(count) => self.total = Some(count),
            TreeEvent::Started(node) | TreeEvent::TreeSuite(node) => {
                if node.id == node.flow && !node.is_test {
                    self.current = Some(self.full_name(node));
                }
                if node.id == node.flow {
                    self.tallies.insert(
                        node.id,
                        Tally {
                            counts: Summary::default(),
                            ms: 0,
                        },
                    );
                }
                self.nodes.insert(
                    node.id,
                    Known {
                        name: node.node.name.clone(),
                        parent: node.parent,
                        kind: node.node.kind,
                        file: node.node.file.clone(),
                    },
                );
            }
            TreeEvent::Output { node, text, stream } => match node {
                Some(node) if node.is_test => {
                    self.captured.entry(node.id).or_default().push(stream, text);
                }
                // A file's or the run's own output: jest's console of a
                // whole file, say, is shown only with -v.
                Some(_) if self.verbosity != Verbosity::Verbose => {}
                None if self.verbosity == Verbosity::Quiet => {}
                Some(_) | None => self.text(text.as_bytes())?,
            },
            TreeEvent::Finished { node, result } => self.finished(node, result)?,
            TreeEvent::Stopped(node) => {
                self.counts.stopped += 1;
                self.progress += u64::from(!self.is_subtest(node));
                if let Some(tally) = self.tallies.get_mut(&node.flow) {
                    tally.counts.stopped += 1;
                }
                let captured = self.captured.remove(&node.id).unwrap_or_default();
                let failure =
                    Failure::new(self.full_name(node), self.location(node), None, captured);
                // The run ended under it: not the test's own failure.
                self.errors.push(RunError::Node(failure));
                if node.id == node.flow {
                    self.file_line(node)?;
                }
                self.nodes.remove(&node.id);
            }
            TreeEvent::SuiteFinished(node) | TreeEvent::TreeSuiteEnd(node) => {
                self.file_line(node)?;
                self.nodes.remove(&node.id);
            }
            TreeEvent::Log { level, text } => match level {
                LogLevel::Info => {
                    if self.verbosity != Verbosity::Quiet {
                        self.buf = self.style.paint(Paint::Dim, text.trim_end());
                        self.buf.push('\n');
                        self.emit()?;
                    }
                }
                LogLevel::Warning | LogLevel::Error => {
                    self.errors.push(RunError::Log(level, text.to_owned()));
                }
            },
            TreeEvent::TreeTest(node) => {
                self.collected += 1;
                // The framework lists them itself: again with -v only.
                if self.verbosity == Verbosity::Verbose {
                    self.buf = self.full_name(node);
                    self.buf.push('\n');
                    self.emit()?;
                }
            }
            TreeEvent::RunEnded(end) => {
                self.groups.clone_from(&end.groups);
                self.no_tests = end.errors.iter().any(|e| e.kind == ProblemKind::NoTests);
            }
            TreeEvent::LiveOutput
            | TreeEvent::TreeEnded
            | TreeEvent::RunStarted(_)
            | TreeEvent::Hello { .. } => {}
        }
        Ok(())
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.verbosity == Verbosity::Quiet || bytes.is_empty() {
            return Ok(());
        }
        self.erase_status()?;
        self.out.write_all(bytes)?;
        self.line_open = !bytes.ends_with(b"\n");
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.draw_status()?;
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.write_end()?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Node;

    fn config(live: bool) -> HumanConfig {
        HumanConfig {
            color: false,
            live,
            verbosity: Verbosity::Normal,
            expected_ms: None,
        }
    }

    #[test]
    fn the_time_left_follows_what_the_tests_took_last_time() {
        let mut view = Human::new(
            HumanConfig {
                expected_ms: Some(10_000),
                ..config(true)
            },
            Vec::new(),
        );
        assert_eq!(view.time_left(1_000), None, "no test has taken time yet");
        view.done_ms = 2_500;
        // A quarter through in 2 s: three quarters left take 6 s.
        assert_eq!(view.time_left(2_000), Some(6_000));
        view.done_ms = 12_000;
        assert_eq!(view.time_left(9_000), None, "past the estimate");
        // Without a history, none is shown.
        let mut plain = Human::new(config(true), Vec::new());
        plain.done_ms = 2_500;
        assert_eq!(plain.time_left(2_000), None);
        // The status line shows it.
        let mut drawn = Human::new(
            HumanConfig {
                expected_ms: Some(1_000_000),
                ..config(true)
            },
            Vec::new(),
        );
        run(&mut drawn, 1, 3, 1_000_000);
        drawn.done_ms = 1;
        drawn.last_draw = None;
        drawn.draw_status().unwrap();
        let shown = String::from_utf8(drawn.out.clone()).unwrap();
        assert!(shown.contains(" left)"), "{shown}");
    }

    /// The declarations of a file `t.py` and of a test in it.
    fn file_and_test() -> (Node, Node) {
        let file = Node {
            name: "t.py".into(),
            kind: NodeKind::File,
            ..Node::default()
        };
        let test = Node {
            name: "test".into(),
            kind: NodeKind::Test,
            ..Node::default()
        };
        (file, test)
    }

    /// Runs `files` files of `per_file` tests each through the view, every
    /// `fail_every`th failing with some output; flushes after each test.
    fn run(view: &mut Human<Vec<u8>>, files: u64, per_file: u64, fail_every: u64) {
        let (file_node, test_node) = file_and_test();
        let mut id = 0;
        for _ in 0..files {
            id += 1;
            let file = Opened {
                id,
                parent: 0,
                flow: id,
                is_test: false,
                node: &file_node,
            };
            view.event(TreeEvent::Started(&file)).unwrap();
            for n in 0..per_file {
                id += 1;
                let test = Opened {
                    id,
                    parent: file.id,
                    flow: file.id,
                    is_test: true,
                    node: &test_node,
                };
                let failed = n % fail_every == 0;
                let output = [(crate::event::Stream::Stdout, "x".repeat(100))];
                let result = TestResult {
                    outcome: if failed {
                        Outcome::Failed
                    } else {
                        Outcome::Passed
                    },
                    ..TestResult::default()
                };
                view.test(&test, &output, &result).unwrap();
                view.flush().unwrap();
            }
            view.event(TreeEvent::SuiteFinished(&file)).unwrap();
        }
    }

    /// Subtests end as tests do, but the framework's count leaves them out:
    /// the progress counts the tests it counted.
    #[test]
    fn the_progress_leaves_subtests_out() {
        let mut view = Human::new(config(true), Vec::new());
        view.event(TreeEvent::Count(2)).unwrap();
        let (file_node, test_node) = file_and_test();
        let opened = |id, parent, node| Opened {
            id,
            parent,
            flow: 1,
            is_test: id > 1,
            node,
        };
        let file = opened(1, 0, &file_node);
        let test = opened(2, 1, &test_node);
        view.event(TreeEvent::Started(&file)).unwrap();
        view.event(TreeEvent::Started(&test)).unwrap();
        for id in [3, 4, 5] {
            let subtest = opened(id, 2, &test_node);
            view.test(&subtest, &[], &TestResult::default()).unwrap();
        }
        let result = TestResult::default();
        view.event(TreeEvent::Finished {
            node: &test,
            result: &result,
        })
        .unwrap();
        view.last_draw = None;
        view.draw_status().unwrap();
        let shown = String::from_utf8(view.out.clone()).unwrap();
        assert!(shown.contains("] 1/2 "), "{shown}");
        assert_eq!(view.counts.passed, 4);
    }

    #[test]
    fn memory_follows_the_failures_not_the_tests() {
        let mut view = Human::new(config(false), Vec::new());
        run(&mut view, 20, 500, 100);
        assert_eq!(view.counts.passed, 9_900);
        assert_eq!(view.failures.len(), 100);
        assert!(view.nodes.is_empty() && view.captured.is_empty() && view.tallies.is_empty());
        let lines = String::from_utf8(view.out.clone()).unwrap();
        assert_eq!(lines.lines().count(), 20, "a line per file:\n{lines}");
    }

    #[test]
    fn the_status_line_is_drawn_at_most_twenty_times_a_second() {
        let mut view = Human::new(config(true), Vec::new());
        let start = Instant::now();
        run(&mut view, 4, 2_500, 1_000_000);
        let took = start.elapsed();
        let shown = String::from_utf8(view.out.clone()).unwrap();
        let draws = shown.matches(" RUNNING ").count() as u128;
        assert!(draws >= 1, "{shown}");
        assert!(
            draws <= took.as_millis() / REDRAW.as_millis() + 1 + 4,
            "{draws} draws in {took:?}"
        );
        // Off a terminal: never.
        let mut plain = Human::new(config(false), Vec::new());
        run(&mut plain, 1, 10, 1_000_000);
        assert!(!String::from_utf8(plain.out).unwrap().contains("RUNNING"));
    }
}
