//! Running a framework live: launch, read its three channels, feed the
//! pipeline, enforce time limits, and turn how it ended into an exit code.
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::RunConfig;
use crate::event::{LogLevel, Outcome, TestEvent, TestResult};
use crate::exit;
use crate::frameworks::{self, Any, Framework, Request, SetupError};
use crate::process::{describe, signal_name, Child, Input};

use crate::report::{Pipeline, Summary};

/// How long the output pipes may stay open after the framework exits
/// (something it started still holds them) before we stop waiting.
const LEAK_TIMEOUT: Duration = Duration::from_millis(500);

/// Why a run could not start or finish.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    NoInput(String),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error("cannot start {program}")]
    Spawn {
        program: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing the output failed")]
    Output(#[source] io::Error),
}

impl RunError {
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            RunError::Usage(_) | RunError::Setup(SetupError::Unsupported { .. }) => exit::USAGE,
            RunError::NoInput(_) => exit::NO_INPUT,
            RunError::Setup(SetupError::Unavailable(_)) | RunError::Spawn { .. } => {
                exit::FRAMEWORK_UNAVAILABLE
            }
            RunError::Setup(SetupError::Runner { .. }) | RunError::Output(_) => exit::IO_ERROR,
        }
    }
}

/// How the run ended, before it becomes an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// The framework exited by itself.
    Exited,
    /// A test or the session ran out of time.
    TimedOut,
    /// tcrunner got this signal.
    Signalled(i32),
    /// Our stdout closed.
    OutputGone,
}

/// Runs the configured framework; returns the exit code.
pub(crate) fn run(config: RunConfig, out: impl Write) -> Result<i32, RunError> {
    let raw = config.raw;
    let project = match &raw.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().map_err(|e| RunError::NoInput(format!("current directory: {e}")))?,
    };
    if !project.is_dir() {
        return Err(RunError::NoInput(format!("--project {}: no such directory", project.display())));
    }
    let project = std::path::absolute(&project).unwrap_or(project);
    for path in &raw.paths {
        if !project.join(path).exists() {
            return Err(RunError::NoInput(format!("--path {}: no such file or directory", path.display())));
        }
    }
    let framework = match raw.framework {
        Some(name) => name,
        None => frameworks::detect(&project, &raw.paths, &raw.targets).ok_or_else(|| {
            RunError::Usage(format!(
                "cannot tell which framework {} uses (no pytest configuration, no jest or vitest in package.json): pass --framework",
                project.display()
            ))
        })?,
    };
    for (name, value) in [("--timeout", raw.timeout), ("--session-timeout", raw.session_timeout)] {
        if value.is_some_and(|v| !(v > 0.0 && v.is_finite())) {
            return Err(RunError::Usage(format!("{name}: must be a positive number of seconds")));
        }
    }
    let framework = Any::new(framework);
    let framework = framework.get();
    let request = Request {
        project: project.clone(),
        paths: raw.paths.clone(),
        targets: raw.targets.clone(),
        raw: raw.raw.clone(),
        collect_only: raw.collect_only,
        test_timeout: raw.timeout,
        python: raw.python.as_deref().map(absolute_program),
        node: raw.node.as_deref().map(absolute_program),
    };
    let launch = framework.launch(&request)?;
    let mut pipeline = Pipeline::new(&config.output, out).map_err(RunError::Output)?;
    let banner = format!(
        "Launching {} with arguments {} in {}\n\n",
        framework.name(),
        launch.shown_args.join(" "),
        project.display()
    );
    pipeline.text(banner.as_bytes()).map_err(RunError::Output)?;
    let mut child = Child::spawn(&launch.spec)
        .map_err(|source| RunError::Spawn { program: launch.spec.program.clone(), source })?;

    let limits = Limits {
        test: raw.timeout.map(Duration::from_secs_f64),
        session: raw.session_timeout.map(|s| Instant::now() + Duration::from_secs_f64(s)),
        session_secs: raw.session_timeout.unwrap_or(0.0),
        grace: Duration::from_secs_f64(raw.grace_period.max(0.0)),
    };
    let mut state = State::default();
    let ending = match state.pump(&mut child, &mut pipeline, &limits) {
        Ok(ending) => ending,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ending::OutputGone,
        Err(e) => return Err(RunError::Output(e)),
    };
    let finished = state
        .conclude(ending, &mut child, framework.name(), &mut pipeline, &limits)
        .and_then(|()| pipeline.finish());
    drop(child); // kills whatever is left of the group
    let summary = match finished {
        Ok(summary) => summary,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(quiet_exit()),
        Err(e) => return Err(RunError::Output(e)),
    };
    if ending == Ending::OutputGone {
        return Ok(quiet_exit());
    }
    Ok(state.exit_code(ending, &summary, framework, raw.collect_only))
}

/// A program given as a path is made absolute (the framework runs in the
/// project folder); a bare name is left for PATH lookup.
fn absolute_program(program: &std::path::Path) -> PathBuf {
    if program.components().count() > 1 {
        std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf())
    } else {
        program.to_path_buf()
    }
}

/// The consumer closed our stdout (an IDE stopping the run): no noise.
fn quiet_exit() -> i32 {
    exit::SIGNAL_BASE + libc::SIGPIPE
}

struct Limits {
    test: Option<Duration>,
    session: Option<Instant>,
    session_secs: f64,
    grace: Duration,
}

#[derive(Default)]
struct State {
    status: Option<std::process::ExitStatus>,
    said_hello: bool,
    /// Start times of running tests, by source id.
    running: HashMap<String, Instant>,
    /// The last few KB of the framework's stderr, for diagnosing early exits.
    stderr_tail: Vec<u8>,
    bad_events: u64,
    /// What timed out, for the message and the exit code.
    timed_out: Option<String>,
    /// A first signal was forwarded.
    signalled: Option<i32>,
    /// The framework died with tests running.
    crashed: bool,
    /// The framework never loaded our reporter; why, in one line.
    setup_failure: Option<String>,
}

impl State {
    /// Reads everything the framework says until it is done.
    fn pump<W: Write>(&mut self, child: &mut Child, pipeline: &mut Pipeline<W>, limits: &Limits) -> io::Result<Ending> {
        let mut exited_at: Option<Instant> = None;
        loop {
            if child.streams_closed() && self.status.is_some() {
                return Ok(Ending::Exited);
            }
            let now = Instant::now();
            if let Some(at) = exited_at {
                if now >= at + LEAK_TIMEOUT {
                    pipeline.event(TestEvent::Log {
                        level: LogLevel::Warning,
                        text: "a process started by the tests still holds the output open after the framework exited; stopped it".into(),
                    })?;
                    child.signal(libc::SIGKILL);
                    return Ok(Ending::Exited);
                }
            }
            if let Some(what) = self.expired(now, limits) {
                self.timed_out = Some(what);
                return Ok(Ending::TimedOut);
            }
            let wait = self.next_deadline(limits, exited_at).map(|d| d.saturating_duration_since(now));
            let Some(input) = child.next(wait) else { continue };
            match input {
                Input::Stdout(bytes) => pipeline.text(&bytes)?,
                Input::Stderr(bytes) => self.stderr(&bytes),
                Input::Event(line) => self.event(&line, pipeline)?,
                Input::Closed => {}
                Input::Exited(status) => {
                    self.status = Some(status);
                    exited_at = Some(Instant::now());
                }
                Input::Signal(signal) => {
                    if self.signalled.is_some() {
                        child.signal(libc::SIGKILL);
                        return Ok(Ending::Signalled(signal));
                    }
                    self.signalled = Some(signal);
                    child.signal(signal);
                }
            }
        }
    }

    fn stderr(&mut self, bytes: &[u8]) {
        let mut err = io::stderr().lock();
        let _ = err.write_all(bytes);
        let _ = err.flush();
        self.stderr_tail.extend_from_slice(bytes);
        let excess = self.stderr_tail.len().saturating_sub(8192);
        self.stderr_tail.drain(..excess);
    }

    fn event<W: Write>(&mut self, line: &[u8], pipeline: &mut Pipeline<W>) -> io::Result<()> {
        let event: TestEvent = match serde_json::from_slice(line) {
            Ok(event) => event,
            Err(e) => {
                self.bad_events += 1;
                if self.bad_events == 1 {
                    eprintln!("tcrunner: ignoring a malformed event from the reporter: {e}");
                }
                return Ok(());
            }
        };
        match &event {
            TestEvent::Hello { .. } => self.said_hello = true,
            TestEvent::Started { id } => {
                self.running.entry(id.clone()).or_insert_with(Instant::now);
            }
            TestEvent::Finished(result) => {
                self.running.remove(&result.id);
            }
            _ => {}
        }
        pipeline.event(event)
    }

    fn expired(&self, now: Instant, limits: &Limits) -> Option<String> {
        if limits.session.is_some_and(|at| now >= at) {
            return Some(SESSION.into());
        }
        let limit = limits.test?;
        self.running
            .iter()
            .filter(|(_, started)| now >= **started + limit)
            .min_by_key(|(_, started)| **started)
            .map(|(id, _)| id.clone())
    }

    fn next_deadline(&self, limits: &Limits, exited_at: Option<Instant>) -> Option<Instant> {
        let test = limits.test.and_then(|limit| self.running.values().min().map(|s| *s + limit));
        [test, limits.session, exited_at.map(|at| at + LEAK_TIMEOUT)].into_iter().flatten().min()
    }

    /// Stops what still runs and reports, for each test left running, why
    /// it did not finish.
    fn conclude<W: Write>(
        &mut self,
        ending: Ending,
        child: &mut Child,
        name: &str,
        pipeline: &mut Pipeline<W>,
        limits: &Limits,
    ) -> io::Result<()> {
        let why = match ending {
            Ending::OutputGone => {
                child.signal(libc::SIGTERM);
                return Ok(());
            }
            Ending::TimedOut => match (&self.timed_out, limits.test) {
                (Some(what), _) if what == SESSION => format!(
                    "timed out: the session time limit of {} s ran out",
                    limits.session_secs
                ),
                (_, Some(limit)) => format!("timed out after {} s", limit.as_secs_f64()),
                _ => "timed out".to_owned(),
            },
            Ending::Signalled(signal) => {
                format!("stopped: tcrunner received {}", signal_name(signal))
            }
            Ending::Exited => match self.status {
                Some(status) if !self.running.is_empty() => {
                    format!("{name} {} during this test", describe(status))
                }
                _ => String::new(),
            },
        };
        // Report first, so the verdict names the cause rather than the kill.
        if !why.is_empty() {
            for id in pipeline.running_tests() {
                pipeline.event(TestEvent::Finished(TestResult {
                    id,
                    outcome: Outcome::Error,
                    message: Some(why.clone()),
                    ..TestResult::default()
                }))?;
            }
            self.crashed = ending == Ending::Exited;
        }
        if ending != Ending::Exited {
            // Text still arriving is kept; events are not: every test that
            // was running already has its verdict.
            let mut text = Vec::new();
            let status = child.stop(limits.grace, |input| match input {
                Input::Stdout(bytes) => text.extend_from_slice(&bytes),
                Input::Stderr(bytes) => self.stderr(&bytes),
                _ => {}
            });
            self.status = status.or(self.status);
            pipeline.text(&text)?;
        }
        if !self.said_hello {
            let hint = framework_hint(name, &self.stderr_tail, self.status);
            eprintln!("tcrunner: {hint}");
            // An IDE user sees the tree, not stderr: put the reason in it.
            let id = format!("{name} did not start");
            pipeline.event(TestEvent::Test(crate::event::Node {
                id: id.clone(),
                name: id.clone(),
                kind: crate::event::NodeKind::Test,
                ..Default::default()
            }))?;
            pipeline.event(TestEvent::Finished(TestResult {
                id,
                outcome: Outcome::Error,
                message: Some(hint.clone()),
                details: Some(String::from_utf8_lossy(&self.stderr_tail).into_owned()),
                ..TestResult::default()
            }))?;
            self.setup_failure = Some(hint);
        }
        Ok(())
    }

    fn exit_code(&self, ending: Ending, summary: &Summary, framework: &dyn Framework, collect_only: bool) -> i32 {
        if let Ending::Signalled(signal) = ending {
            return exit::SIGNAL_BASE + signal;
        }
        if let Some(signal) = self.signalled {
            return exit::SIGNAL_BASE + signal;
        }
        if ending == Ending::TimedOut {
            return exit::TIMEOUT;
        }
        let code = self.status.and_then(|s| s.code());
        if self.crashed || code.is_none() {
            return exit::FRAMEWORK_CRASHED;
        }
        let code = code.unwrap_or(exit::INTERNAL);
        if self.setup_failure.is_some() {
            if framework.missing_hint(&String::from_utf8_lossy(&self.stderr_tail)).is_some() {
                return exit::FRAMEWORK_UNAVAILABLE;
            }
            // The framework refused to start (bad arguments, broken config):
            // its own code says why; a clean exit without us is our failure.
            return if code == 0 { exit::REPORTER_FAILED } else { code };
        }
        if summary.total() == 0 && !collect_only {
            return exit::NO_TESTS;
        }
        if summary.any_failed() && code == 0 {
            return exit::TESTS_FAILED;
        }
        code
    }
}

const SESSION: &str = "the session";

/// One line saying why the framework never reported.
fn framework_hint(name: &str, stderr_tail: &[u8], status: Option<std::process::ExitStatus>) -> String {
    let stderr = String::from_utf8_lossy(stderr_tail);
    if stderr.contains("No module named pytest") {
        return "pytest is not installed for this interpreter: install it with `python -m pip install pytest`, or pass --python".into();
    }
    let how = status.map_or_else(|| "stopped".to_owned(), describe);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    if last.is_empty() {
        format!("{name} {how} before reporting any test")
    } else {
        format!("{name} {how} before reporting any test: {last}")
    }
}
