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
use crate::process::{describe, signal_name, stdout_gone, Child, Input};

use crate::report::{Pipeline, Summary};

/// How long the output pipes may stay open and silent after the
/// framework's main process exits before we call it a leak: something the
/// tests started still holds them (cargo-nextest's leak timeout is 100 ms; a
/// loaded machine needs longer to let worker processes wind down). Silent:
/// output still draining to a slow consumer is not a leak.
const LEAK_TIMEOUT: Duration = Duration::from_secs(1);

/// After the main process exits, the most time a leaked process that keeps
/// writing gets before its group is killed, and the most time we then keep
/// reading what it (or something outside the group) still sends.
const LEAK_CAP: Duration = Duration::from_secs(10);

/// How much longer than `--timeout` a test may run before tcrunner stops
/// the run itself. The framework enforces the limit first, in-process (jest
/// and vitest `--testTimeout`, the pytest plugin's alarm from
/// [`TEST_TIMEOUT_VAR`]), which fails only that test and lets the run go on;
/// this is the backstop for a test nothing can interrupt (a busy loop, a
/// blocked signal, a call into C).
const BACKSTOP: Duration = Duration::from_secs(2);

/// The longest the run loop sleeps, so it notices a vanished consumer even
/// while the tests print nothing.
const TICK: Duration = Duration::from_millis(250);

/// Tells the framework's reporter the per-test limit in seconds (`--timeout`),
/// for frameworks whose limit our reporter enforces (pytest).
const TEST_TIMEOUT_VAR: &str = "TCRUNNER_TEST_TIMEOUT";

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
    /// The framework exited by itself (perhaps after a forwarded signal).
    Exited,
    /// A test or the session ran out of time.
    TimedOut,
    /// A second signal came, or the framework outlived the grace period after
    /// the first: the group is killed.
    Killed,
    /// Our stdout closed.
    OutputGone,
}

/// What ran out of time.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expired {
    /// `--session-timeout`.
    Session,
    /// `--timeout`, for these tests (source ids).
    Tests(Vec<String>),
}

/// Runs the configured framework; returns the exit code.
pub(crate) fn run(config: RunConfig, out: impl Write) -> Result<i32, RunError> {
    let raw = config.raw;
    let project = match &raw.project {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| RunError::NoInput(format!("current directory: {e}")))?,
    };
    if !project.is_dir() {
        return Err(RunError::NoInput(format!(
            "--project {}: no such directory",
            project.display()
        )));
    }
    let project = std::path::absolute(&project).unwrap_or(project);
    for path in &raw.paths {
        if !project.join(path).exists() {
            return Err(RunError::NoInput(format!(
                "--path {}: no such file or directory",
                path.display()
            )));
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
    for (name, value) in [
        ("--timeout", raw.timeout),
        ("--session-timeout", raw.session_timeout),
    ] {
        if value.is_some_and(|v| !(v > 0.0 && v.is_finite())) {
            return Err(RunError::Usage(format!(
                "{name}: must be a positive number of seconds"
            )));
        }
    }
    if !(raw.grace_period >= 0.0 && raw.grace_period.is_finite()) {
        return Err(RunError::Usage(
            "--grace-period: must be zero or a positive number of seconds".into(),
        ));
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
    let mut launch = framework.launch(&request)?;
    if let Some(secs) = raw.timeout {
        launch
            .spec
            .env
            .push((TEST_TIMEOUT_VAR.into(), secs.to_string().into()));
    }
    let mut pipeline = match Pipeline::new(&config.output, out) {
        Ok(pipeline) => pipeline,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(quiet_exit()),
        Err(e) => return Err(RunError::Output(e)),
    };
    let banner = format!(
        "Launching {} with arguments {} in {}\n\n",
        framework.name(),
        launch.shown_args.join(" "),
        project.display()
    );
    match pipeline.text(banner.as_bytes()) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(quiet_exit()),
        Err(e) => return Err(RunError::Output(e)),
    }
    let mut child = match Child::spawn(&launch.spec) {
        Ok(child) => child,
        Err(source) => {
            let error = RunError::Spawn {
                program: launch.spec.program.clone(),
                source,
            };
            // The stream still ends whole, with the reason where an IDE user looks.
            let why = format!(
                "{error}: {}",
                std::error::Error::source(&error).map_or(String::new(), |s| s.to_string())
            );
            let _ = did_not_start(&mut pipeline, framework.name(), why, None)
                .and_then(|()| pipeline.finish());
            return Err(error);
        }
    };

    let limits = Limits {
        collect_only: raw.collect_only,
        test: raw.timeout.map(Duration::from_secs_f64),
        session: raw
            .session_timeout
            .map(|s| Instant::now() + Duration::from_secs_f64(s)),
        session_secs: raw.session_timeout.unwrap_or(0.0),
        grace: Duration::from_secs_f64(raw.grace_period),
    };
    let mut state = State::new(framework.name());
    let ending = match state.pump(&mut child, &mut pipeline, &limits) {
        Ok(ending) => ending,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ending::OutputGone,
        Err(e) => {
            child.stop(limits.grace, drop);
            return Err(RunError::Output(e));
        }
    };
    let finished = state
        .conclude(ending, &mut child, &mut pipeline, &limits)
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

/// One `tcrunner: …` line on stderr. Unlike `eprintln!`, a closed stderr
/// (an IDE that stopped the run) is no reason to panic.
fn note(text: &str) {
    let _ = writeln!(io::stderr().lock(), "tcrunner: {text}");
}

/// `2` for 2.0, `0.5` for 0.5: seconds as a user typed them.
fn secs(value: f64) -> String {
    format!("{value}")
}

/// Whether a failure message is a per-test time limit enforced inside the
/// framework: our pytest plugin's (`timed out after N s`, which pytest may
/// prefix with `Failed: `), jest's (`Exceeded timeout of N ms for a test`,
/// thrown as `Error: thrown: "…"`), vitest's (`Test timed out in Nms.`).
fn is_timeout_message(message: &str) -> bool {
    let message = message.strip_prefix("Failed: ").unwrap_or(message);
    let message = message.strip_prefix("Error: ").unwrap_or(message);
    let message = message.strip_prefix("thrown: \"").unwrap_or(message);
    message.starts_with("timed out after ")
        || message.starts_with("Exceeded timeout of ")
        || message.starts_with("Test timed out in ")
}

struct Limits {
    collect_only: bool,
    test: Option<Duration>,
    session: Option<Instant>,
    session_secs: f64,
    grace: Duration,
}

struct State {
    /// The framework's name, for messages.
    name: &'static str,
    status: Option<std::process::ExitStatus>,
    /// Our reporter is known to run: it sent an event (for pytest, one
    /// beyond `hello`, which the plugin sends on import).
    reported: bool,
    /// Start times of running tests, by source id.
    running: HashMap<String, Instant>,
    /// The last few KB of the framework's stderr and stdout, for
    /// diagnosing early exits.
    stderr_tail: Vec<u8>,
    stdout_tail: Vec<u8>,
    /// The framework said it found no tests before our reporter could.
    no_tests: bool,
    bad_events: u64,
    /// What timed out, for the message and the exit code.
    expired: Option<Expired>,
    /// The first signal tcrunner received (forwarded to the group), and when.
    signalled: Option<(i32, Instant)>,
    /// The framework died on its own: mid-test, or by a signal.
    crashed: bool,
    /// Tests the framework itself failed for running past `--timeout`.
    framework_timeouts: u64,
    /// The framework never loaded our reporter; why, in one line.
    setup_failure: Option<String>,
}

impl State {
    fn new(name: &'static str) -> State {
        State {
            name,
            status: None,
            reported: false,
            running: HashMap::new(),
            stderr_tail: Vec::new(),
            stdout_tail: Vec::new(),
            no_tests: false,
            bad_events: 0,
            expired: None,
            signalled: None,
            crashed: false,
            framework_timeouts: 0,
            setup_failure: None,
        }
    }

    /// Reads everything the framework says until it is done, a limit runs
    /// out, tcrunner is signalled, or the consumer goes away.
    fn pump<W: Write>(
        &mut self,
        child: &mut Child,
        pipeline: &mut Pipeline<W>,
        limits: &Limits,
    ) -> io::Result<Ending> {
        let mut exited_at: Option<Instant> = None;
        let mut leak_killed_at: Option<Instant> = None;
        // Set after each input is handled, so time spent writing to a slow
        // consumer never counts as silence.
        let mut last_input = Instant::now();
        loop {
            if child.streams_closed() && self.status.is_some() {
                return Ok(Ending::Exited);
            }
            let now = Instant::now();
            if let Some(exited) = exited_at {
                let silent = now >= last_input + LEAK_TIMEOUT;
                match leak_killed_at {
                    None if silent || now >= exited + LEAK_CAP => {
                        let text = format!(
                            "a process started by the tests still held {}'s output open {} s after it exited; killed its process group",
                            self.name,
                            secs(LEAK_TIMEOUT.as_secs_f64())
                        );
                        note(&format!("warning: {text}"));
                        pipeline.event(TestEvent::Log {
                            level: LogLevel::Warning,
                            text,
                        })?;
                        child.signal(libc::SIGKILL);
                        leak_killed_at = Some(now);
                    }
                    // What the killed processes wrote is still read; then,
                    // if something outside the group holds the pipes, we go.
                    Some(killed)
                        if silent && now >= killed + LEAK_TIMEOUT || now >= killed + LEAK_CAP =>
                    {
                        return Ok(Ending::Exited);
                    }
                    _ => {}
                }
            }
            if self.status.is_none() {
                if let Some(expired) = self.expired(now, limits) {
                    self.expired = Some(expired);
                    return Ok(Ending::TimedOut);
                }
                if self
                    .signalled
                    .is_some_and(|(_, at)| now >= at + limits.grace)
                {
                    return Ok(Ending::Killed);
                }
            }
            if stdout_gone() {
                return Ok(Ending::OutputGone);
            }
            let wait = self
                .next_deadline(limits)
                .map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
            let Some(input) = child.next(Some(wait)) else {
                continue;
            };
            match input {
                Input::Stdout(bytes) => {
                    keep_tail(&mut self.stdout_tail, &bytes);
                    pipeline.text(&bytes)?
                }
                Input::Stderr(bytes) => self.stderr(&bytes),
                Input::Event(line) => self.event(&line, pipeline, limits)?,
                Input::Closed => {}
                Input::Exited(status) => {
                    self.status = Some(status);
                    exited_at = Some(Instant::now());
                }
                Input::Signal(_) if self.signalled.is_some() => return Ok(Ending::Killed),
                Input::Signal(signal) => {
                    // As a terminal's Ctrl-C would: the whole group gets it,
                    // and the framework winds down and reports what it can.
                    self.signalled = Some((signal, Instant::now()));
                    child.signal(signal);
                    let text = format!(
                        "tcrunner received {}: stopping {} (a second signal kills it)",
                        signal_name(signal),
                        self.name
                    );
                    note(&text);
                    pipeline.event(TestEvent::Log {
                        level: LogLevel::Warning,
                        text,
                    })?;
                }
            }
            last_input = Instant::now();
        }
    }

    fn stderr(&mut self, bytes: &[u8]) {
        let mut err = io::stderr().lock();
        let _ = err.write_all(bytes);
        let _ = err.flush();
        keep_tail(&mut self.stderr_tail, bytes);
    }

    fn event<W: Write>(
        &mut self,
        line: &[u8],
        pipeline: &mut Pipeline<W>,
        limits: &Limits,
    ) -> io::Result<()> {
        let event: TestEvent = match serde_json::from_slice(line) {
            Ok(event) => event,
            Err(e) => {
                self.bad_events += 1;
                if self.bad_events == 1 {
                    note(&format!(
                        "ignoring a malformed event from the reporter: {e}"
                    ));
                }
                return Ok(());
            }
        };
        // pytest's plugin says hello on import, before pytest parses its
        // arguments (so a usage error still gets one); jest's and vitest's
        // reporters say it once the framework has built them to run tests.
        let hello_only = matches!(event, TestEvent::Hello { .. }) && self.name == "pytest";
        self.reported |= !hello_only;
        match &event {
            TestEvent::Hello { .. } => {}
            TestEvent::Started { id } => {
                self.running.entry(id.clone()).or_insert_with(Instant::now);
            }
            TestEvent::Finished(result) => {
                self.running.remove(&result.id);
                let failed = result.outcome.verdict() == crate::event::Verdict::Failed;
                if limits.test.is_some()
                    && failed
                    && result.message.as_deref().is_some_and(is_timeout_message)
                {
                    self.framework_timeouts += 1;
                }
            }
            _ => {}
        }
        pipeline.event(event)
    }

    fn expired(&self, now: Instant, limits: &Limits) -> Option<Expired> {
        if limits.session.is_some_and(|at| now >= at) {
            return Some(Expired::Session);
        }
        let limit = limits.test? + BACKSTOP;
        let mut late: Vec<(&String, &Instant)> = self
            .running
            .iter()
            .filter(|(_, started)| now >= **started + limit)
            .collect();
        late.sort_by_key(|(_, started)| **started);
        (!late.is_empty())
            .then(|| Expired::Tests(late.into_iter().map(|(id, _)| id.clone()).collect()))
    }

    /// The next time limit; leaks are watched at [`TICK`]s.
    fn next_deadline(&self, limits: &Limits) -> Option<Instant> {
        let running = self.status.is_none();
        let test = limits
            .test
            .filter(|_| running)
            .and_then(|limit| self.running.values().min().map(|s| *s + limit + BACKSTOP));
        let session = limits.session.filter(|_| running);
        let grace = self
            .signalled
            .filter(|_| running)
            .map(|(_, at)| at + limits.grace);
        [test, session, grace].into_iter().flatten().min()
    }

    /// Stops what still runs and reports, for each test left running, why
    /// it did not finish. Tests with no verdict of their own are closed as
    /// stopped when the pipeline finishes.
    fn conclude<W: Write>(
        &mut self,
        ending: Ending,
        child: &mut Child,
        pipeline: &mut Pipeline<W>,
        limits: &Limits,
    ) -> io::Result<()> {
        let name = self.name;
        let mut grace = limits.grace;
        match ending {
            Ending::OutputGone => {
                child.stop(grace, drop);
                return Ok(());
            }
            Ending::TimedOut => {
                let (ids, why) = match self.expired.clone() {
                    Some(Expired::Session) => (
                        pipeline.running_tests(),
                        format!(
                            "timed out after {} s (--session-timeout)",
                            secs(limits.session_secs)
                        ),
                    ),
                    Some(Expired::Tests(ids)) => {
                        let limit = limits.test.map_or(0.0, |t| t.as_secs_f64());
                        (ids, format!("timed out after {} s", secs(limit)))
                    }
                    None => (Vec::new(), "timed out".to_owned()),
                };
                let text = match &self.expired {
                    Some(Expired::Session) => format!(
                        "the session time limit of {} s ran out: stopping {name}",
                        secs(limits.session_secs)
                    ),
                    _ => format!("a test {why} (--timeout): stopping {name}"),
                };
                note(&text);
                pipeline.event(TestEvent::Log {
                    level: LogLevel::Error,
                    text,
                })?;
                for id in ids {
                    self.running.remove(&id);
                    fail(pipeline, id, why.clone(), None)?;
                }
            }
            Ending::Killed => grace = Duration::ZERO,
            Ending::Exited if self.signalled.is_some() => {}
            Ending::Exited => {
                self.crash_verdicts(pipeline)?;
                if self.reported
                    && !self.crashed
                    && pipeline.summary().total() == 0
                    && !limits.collect_only
                {
                    let text = format!("{name} ran no tests: none were collected or selected");
                    note(&text);
                    pipeline.event(TestEvent::Log {
                        level: LogLevel::Warning,
                        text,
                    })?;
                }
            }
        }
        if ending != Ending::Exited {
            // Text still arriving is kept; events are not: the tests that
            // were running keep the verdict given above, or are stopped.
            let mut text = Vec::new();
            let status = child.stop(grace, |input| match input {
                Input::Stdout(bytes) => text.extend_from_slice(&bytes),
                Input::Stderr(bytes) => self.stderr(&bytes),
                _ => {}
            });
            self.status = status.or(self.status);
            pipeline.text(&text)?;
        }
        if !self.reported && self.signalled.is_none() {
            if let Some(line) = no_tests_line(&self.stdout_tail)
                .filter(|_| self.status.is_some_and(|s| s.code().is_some()))
            {
                let text = format!("{name} ran no tests: {line}");
                note(&text);
                pipeline.event(TestEvent::Log {
                    level: LogLevel::Warning,
                    text,
                })?;
                self.no_tests = true;
                return Ok(());
            }
            let hint = framework_hint(name, &self.stderr_tail, self.status);
            note(&hint);
            let details = String::from_utf8_lossy(&self.stderr_tail).into_owned();
            did_not_start(pipeline, name, hint.clone(), Some(details))?;
            self.setup_failure = Some(hint);
        }
        Ok(())
    }

    /// The framework exited by itself: a test still running means it died
    /// under that test; a death by signal between tests is said in the log.
    fn crash_verdicts<W: Write>(&mut self, pipeline: &mut Pipeline<W>) -> io::Result<()> {
        let Some(status) = self.status else {
            return Ok(());
        };
        let name = self.name;
        let running = pipeline.running_tests();
        let stderr = String::from_utf8_lossy(&self.stderr_tail).trim().to_owned();
        let details =
            (!stderr.is_empty()).then(|| format!("{name}'s last output on stderr:\n{stderr}"));
        if !running.is_empty() {
            self.crashed = true;
            let why = format!("{name} {} during this test", describe(status));
            note(&format!("{why}: {}", running.join(", ")));
            for id in running {
                fail(pipeline, id, why.clone(), details.clone())?;
            }
        } else if status.code().is_none() && self.reported {
            self.crashed = true;
            let text = format!("{name} {} between tests", describe(status));
            note(&text);
            pipeline.event(TestEvent::Log {
                level: LogLevel::Error,
                text,
            })?;
        }
        Ok(())
    }

    fn exit_code(
        &self,
        ending: Ending,
        summary: &Summary,
        framework: &dyn Framework,
        collect_only: bool,
    ) -> i32 {
        if let Some((signal, _)) = self.signalled {
            return exit::SIGNAL_BASE + signal;
        }
        if ending == Ending::TimedOut {
            return exit::TIMEOUT;
        }
        let Some(code) = self.status.and_then(|s| s.code()) else {
            // Died by a signal; or its end was never seen, which every path
            // above rules out.
            return if self.status.is_some() {
                exit::FRAMEWORK_CRASHED
            } else {
                exit::INTERNAL
            };
        };
        if self.crashed {
            return exit::FRAMEWORK_CRASHED;
        }
        if self.no_tests {
            return exit::NO_TESTS;
        }
        // pytest's own "the run itself failed" codes: interrupted, internal
        // error, usage error.
        let pytest_own = framework.name() == "pytest" && matches!(code, 2..=4);
        if self.setup_failure.is_some() {
            if framework
                .missing_hint(&String::from_utf8_lossy(&self.stderr_tail))
                .is_some()
            {
                return exit::FRAMEWORK_UNAVAILABLE;
            }
            // The framework refused to start (bad arguments, broken config)
            // and said why in its own code, or it ran without our reporter.
            return if pytest_own {
                code
            } else {
                exit::REPORTER_FAILED
            };
        }
        if summary.total() == 0 && !collect_only {
            return if pytest_own { code } else { exit::NO_TESTS };
        }
        if self.framework_timeouts > 0 {
            return exit::TIMEOUT;
        }
        if summary.any_failed() && code == 0 {
            return exit::TESTS_FAILED;
        }
        code
    }
}

/// A failed test `<name> did not start` saying why: an IDE user sees the
/// tree, not stderr.
fn did_not_start<W: Write>(
    pipeline: &mut Pipeline<W>,
    name: &str,
    why: String,
    details: Option<String>,
) -> io::Result<()> {
    let id = format!("{name} did not start");
    pipeline.event(TestEvent::Test(crate::event::Node {
        id: id.clone(),
        name: id.clone(),
        kind: crate::event::NodeKind::Test,
        ..Default::default()
    }))?;
    fail(pipeline, id, why, details)
}

/// Gives the test `id` a failed (error) verdict.
fn fail<W: Write>(
    pipeline: &mut Pipeline<W>,
    id: String,
    message: String,
    details: Option<String>,
) -> io::Result<()> {
    pipeline.event(TestEvent::Finished(TestResult {
        id,
        outcome: Outcome::Error,
        message: Some(message),
        details,
        ..TestResult::default()
    }))
}

/// Keeps the last 8 KB of a stream.
fn keep_tail(tail: &mut Vec<u8>, bytes: &[u8]) {
    const KEEP: usize = 8192;
    if bytes.len() >= KEEP {
        tail.clear();
        tail.extend_from_slice(&bytes[bytes.len() - KEEP..]);
        return;
    }
    tail.extend_from_slice(bytes);
    let excess = tail.len().saturating_sub(KEEP);
    tail.drain(..excess);
}

/// The line in which the framework said it found no tests, when it exits
/// before loading reporters (jest: `No tests found, exiting with code 1`).
fn no_tests_line(stdout_tail: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(stdout_tail);
    text.lines()
        .find(|l| l.starts_with("No tests found"))
        .map(|l| l.trim().to_owned())
}

/// One line saying why the framework never reported.
fn framework_hint(
    name: &str,
    stderr_tail: &[u8],
    status: Option<std::process::ExitStatus>,
) -> String {
    let stderr = String::from_utf8_lossy(stderr_tail);
    if stderr.contains("No module named pytest") {
        return "pytest is not installed for this interpreter: install it with `python -m pip install pytest`, or pass --python".into();
    }
    if status.and_then(|s| s.code()) == Some(0) {
        let example = if name == "pytest" {
            " such as `-p no:tcrunner_pytest`"
        } else {
            ""
        };
        return format!(
            "{name} exited with code 0 but tcrunner's reporter inside it never reported: it was not loaded (disabled by an option{example}, or by a plugin)"
        );
    }
    let how = status.map_or_else(|| "stopped".to_owned(), describe);
    // The line that says what is wrong, else the last one.
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let at = lines
        .iter()
        .rposition(|l| l.to_lowercase().contains("error"))
        .or(lines.len().checked_sub(1));
    match at {
        // A heading such as jest's `● Validation Error:` needs its next line.
        Some(i) if lines[i].ends_with(':') && i + 1 < lines.len() => {
            format!(
                "{name} {how} before reporting any test: {} {}",
                lines[i],
                lines[i + 1]
            )
        }
        Some(i) => format!("{name} {how} before reporting any test: {}", lines[i]),
        None => format!("{name} {how} before reporting any test"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_framework_timeouts_are_recognised() {
        for message in [
            "timed out after 2 s",
            "Failed: timed out after 0.5 s",
            "Exceeded timeout of 2000 ms for a test.\nAdd a timeout value to this test",
            "Error: thrown: \"Exceeded timeout of 1000 ms for a test.\nAdd a timeout value\"",
            "Error: Test timed out in 2000ms.",
        ] {
            assert!(is_timeout_message(message), "{message}");
        }
        for message in [
            "assert 1 == 2",
            "Error: boom",
            "a test that timed out after all",
        ] {
            assert!(!is_timeout_message(message), "{message}");
        }
    }

    #[test]
    fn seconds_read_as_typed() {
        assert_eq!(secs(2.0), "2");
        assert_eq!(secs(0.5), "0.5");
    }
}
