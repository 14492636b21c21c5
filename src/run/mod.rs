//! Running a framework live: launch, read its three channels, feed the
//! pipeline, enforce time limits, and turn how it ended into an exit code.
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cli::{Dialect, OutputConfig, RunConfig};
use crate::exit;
use crate::frameworks::{self, Request, SetupError};
use crate::process::{Child, Sandbox};

use crate::report::{
    self, Outlet, PassPolicy, Pipeline, Problem, ProblemKind, RunEnd, RunStart, StderrText,
    Transport,
};

mod diagnose;
mod history;
mod state;

use diagnose::did_not_start;
use state::{Limits, State};

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
/// the run itself. The framework enforces the limit first, in-process (as
/// each framework's launch asks it to), which fails only that test and lets
/// the run go on; this is the backstop for a test nothing can interrupt (a
/// busy loop, a blocked signal, a call into C).
const BACKSTOP: Duration = Duration::from_secs(2);

/// The longest the run loop sleeps, so it notices a vanished consumer even
/// while the tests print nothing.
const TICK: Duration = Duration::from_millis(250);

/// How often the run loop looks again at a reader that is far behind.
const HELD_LOOK: Duration = Duration::from_millis(10);

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
    #[error(transparent)]
    OutputFile(report::FileError),
    #[error(transparent)]
    Socket(#[from] report::SocketError),
    #[error("{0}")]
    Sandbox(String),
}

impl RunError {
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            RunError::Usage(_) | RunError::Setup(SetupError::Unsupported { .. }) => exit::USAGE,
            RunError::NoInput(_) => exit::NO_INPUT,
            RunError::Setup(SetupError::Unavailable(_)) | RunError::Spawn { .. } => {
                exit::FRAMEWORK_UNAVAILABLE
            }
            RunError::Setup(SetupError::Runner { .. } | SetupError::Cache { .. })
            | RunError::Output(_)
            | RunError::OutputFile(_) => exit::IO_ERROR,
            RunError::Socket(_) => exit::SOCKET_UNREACHABLE,
            RunError::Sandbox(_) => exit::SANDBOX_UNAVAILABLE,
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
    /// Our stdout, or the IDE's socket, closed.
    OutputGone,
    /// `--sw`: a test failed (a second one with `--sw-skip`), and the run
    /// stops there.
    Stepwise,
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
                "cannot tell which framework {} uses ({}): pass --framework",
                project.display(),
                frameworks::not_detected(&project)
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
    let framework = framework.framework();
    let collect_only = raw.collect_only || framework.collects_only(&raw.raw);
    let informational = framework.informational(&raw.raw);
    let mut request = Request {
        project: project.clone(),
        paths: raw.paths.clone(),
        targets: raw.targets.clone(),
        targets_are_tests: false,
        raw: raw.raw.clone(),
        collect_only,
        test_timeout: raw.timeout,
        python: raw.python.as_deref().map(absolute_program),
        node: raw.node.as_deref().map(absolute_program),
        order_file: None,
        env: raw.env.iter().map(|(k, v)| (k.into(), v.into())).collect(),
        env_clear: raw.env_clear,
        ci: raw.ci,
        jobs: raw.jobs.map(|jobs| jobs.count()),
    };
    let session = history::prepare(&raw.history, &project, framework, &mut request)?;
    // The command line, the environment asked for, and the sandbox.
    let prepare = |request: &Request| -> Result<frameworks::Launch, RunError> {
        let mut launch = framework.launch(request)?;
        frameworks::apply_environment(&mut launch.spec, request, framework);
        if raw.sandbox {
            launch.spec.sandbox = Some(sandbox(&raw, request, framework, &launch.spec)?);
            // The private one: the host's may be read-only in there.
            launch.spec.env.push(("TMPDIR".into(), "/tmp".into()));
        }
        Ok(launch)
    };
    if raw.print_command {
        let launch = prepare(&request)?;
        return print_command(&launch.spec, out).map_err(RunError::Output);
    }
    let mut output = OutputConfig {
        collect_only,
        ..config.output
    };
    output.human.expected_ms = session.expected_ms();
    output.grading.grader.set_root(&project);
    let live_view = output.dialect == Dialect::Human && output.human.live;
    NOTES.store(!live_view, std::sync::atomic::Ordering::Relaxed);
    // Information-only runs and collect-only trees have no verdict to grade.
    let policy = if collect_only || informational {
        PassPolicy::Framework
    } else {
        output.grading.policy
    };
    if let Some(clash) = report::shared_output_path(&output) {
        return Err(RunError::Usage(clash));
    }
    let mut files = report::open_files(&output).map_err(RunError::OutputFile)?;
    files.push(report::FileOutput::History(
        session.output(&project, framework),
    ));
    let launch = match prepare(&request) {
        Ok(launch) => launch,
        Err(error) => {
            let unavailable = matches!(error, RunError::Setup(SetupError::Unavailable(_)));
            let code = if unavailable && policy != PassPolicy::Framework {
                exit::INFRASTRUCTURE
            } else {
                error.exit_code()
            };
            let start = RunStart {
                framework: Some(framework.name().to_owned()),
                command: Vec::new(),
                started: std::time::SystemTime::now(),
            };
            let problem = Problem {
                kind: ProblemKind::NotStarted,
                message: error.to_string(),
            };
            let _ = record_unstarted(&output, files, &start, problem, policy, code);
            if code == exit::INFRASTRUCTURE {
                note(&error.to_string());
                return Ok(code);
            }
            return Err(error);
        }
    };
    // Connected before the framework starts: an IDE that asked for its
    // socket reads nothing from stdout, so no socket, no run.
    let output = OutputConfig {
        parallel: framework.runs_in_parallel(&launch.spec.args),
        ..output
    };
    // The stream is written by outlets' threads from here on.
    drop(out);
    let stdout = stdout_outlet().map_err(RunError::Output)?;
    let stderr = report::stderr().map_err(RunError::Output)?;
    let out = Transport::from_env(
        io::BufWriter::with_capacity(1 << 16, stdout.clone()),
        output.dialect.writes_messages(),
    )?;
    let socket = out.socket().map_err(RunError::Output)?;
    let mut delivery = Delivery {
        stream: std::iter::once(stdout)
            .chain(out.messages_apart().cloned())
            .collect(),
        stderr: stderr.clone(),
        done: false,
    };
    let mut pipeline = match Pipeline::new(&output, out, files) {
        Ok(pipeline) => pipeline,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(quiet_exit()),
        Err(e) => return Err(RunError::Output(e)),
    };
    let start = RunStart {
        framework: Some(framework.name().to_owned()),
        command: std::iter::once(launch.spec.program.as_os_str())
            .chain(launch.spec.args.iter().map(|arg| arg.as_os_str()))
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect(),
        started: std::time::SystemTime::now(),
    };
    match pipeline.start_run(&start) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(quiet_exit()),
        Err(e) => return Err(RunError::Output(e)),
    }
    let mut banner = String::new();
    for line in session.notes() {
        banner.push_str(line);
        banner.push('\n');
    }
    if session.runs_nothing() {
        // As pytest's `--lf --lfnf none` with nothing recorded: no tests.
        let finished = pipeline.text(banner.as_bytes()).and_then(|()| {
            let end = |_: &_, groups: Option<&_>| {
                RunEnd::graded(policy, exit::NO_TESTS, Vec::new(), groups)
            };
            pipeline.finish(end)
        });
        return match finished {
            Ok(_) => Ok(exit::NO_TESTS),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(quiet_exit()),
            Err(e) => Err(RunError::Output(e)),
        };
    }
    banner.push_str(&format!(
        "Launching {} with arguments {} in {}\n\n",
        framework.name(),
        launch.shown_args.join(" "),
        project.display()
    ));
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
            let problem = Problem {
                kind: ProblemKind::NotStarted,
                message: why.clone(),
            };
            let code = error.exit_code();
            let _ = did_not_start(&mut pipeline, framework.name(), why, None).and_then(|()| {
                pipeline
                    .finish(|_, groups| RunEnd::graded(policy, code, vec![problem], groups))
                    .map(drop)
            });
            if policy != PassPolicy::Framework {
                note(&format!(
                    "{error}: {}",
                    std::error::Error::source(&error).map_or(String::new(), |s| s.to_string())
                ));
                return Ok(exit::INFRASTRUCTURE);
            }
            return Err(error);
        }
    };

    let limits = Limits {
        collect_only,
        informational,
        test: raw.timeout.map(Duration::from_secs_f64),
        session: raw
            .session_timeout
            .map(|s| Instant::now() + Duration::from_secs_f64(s)),
        session_secs: raw.session_timeout.unwrap_or(0.0),
        grace: Duration::from_secs_f64(raw.grace_period),
        stop_after_failures: session.stop_after_failures(),
        reruns_failures: session.reruns_failures(),
        targeted: !raw.targets.is_empty() && !framework.allows_no_tests(&raw.raw),
    };
    let mut state = State::new(
        framework,
        socket,
        StderrText::new(stderr, &output),
        delivery.all(),
    );
    let ending = match state.pump(&mut child, &mut pipeline, &limits) {
        Ok(ending) => ending,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ending::OutputGone,
        Err(e) => {
            child.stop(limits.grace, drop);
            return Err(RunError::Output(e));
        }
    };
    let concluded = state.conclude(
        ending,
        &mut child,
        &mut pipeline,
        &limits,
        &launch.spec.program,
    );
    state.end_stderr();
    // Finished whatever happened to the stream: the files get their end.
    let finished = pipeline.finish(|summary, groups| {
        let code = match ending {
            Ending::OutputGone => quiet_exit(),
            _ => state.exit_code(ending, summary, &limits),
        };
        RunEnd::graded(policy, code, state.problems(code), groups)
    });
    let finished = concluded.and(finished);
    session.finish(
        ending == Ending::Exited && state.ended_by_itself(),
        ending == Ending::Stepwise,
    );
    let delivered = match ending {
        Ending::OutputGone => Ok(None),
        _ => delivery.deliver(&mut child, state.drain_until(ending, &limits)),
    };
    drop(child); // kills whatever is left of the group
    if let Ok(Some(signal)) = delivered {
        return Ok(exit::SIGNAL_BASE + signal);
    }
    let end = match delivered.and(finished) {
        Ok((_, end)) => end,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(quiet_exit()),
        Err(e) => return Err(RunError::Output(e)),
    };
    if ending == Ending::OutputGone {
        return Ok(quiet_exit());
    }
    Ok(end.exit_code)
}

/// stdout, written through an outlet. A closed stdout takes everything, as
/// Rust's own `stdout` does.
fn stdout_outlet() -> io::Result<Outlet> {
    use std::os::fd::AsFd;
    match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Outlet::spawn("stdout", std::fs::File::from(fd)),
        Err(e) if e.raw_os_error() == Some(libc::EBADF) => Outlet::spawn("stdout", io::sink()),
        Err(e) => Err(e),
    }
}

/// The outlets a run writes through: before tcrunner exits, their readers
/// get what they were given. The run's end says how long they may take
/// ([`Delivery::deliver`]); any other return waits for them, as a blocking
/// write would have.
struct Delivery {
    /// stdout, and the IDE's socket when the messages go there.
    stream: Vec<Outlet>,
    stderr: Outlet,
    done: bool,
}

impl Delivery {
    fn all(&self) -> Vec<Outlet> {
        self.stream.iter().chain([&self.stderr]).cloned().collect()
    }

    /// Waits until every reader has taken everything, until `until`, or
    /// until tcrunner is signalled, whose number it returns. What a reader
    /// did not take is said. The error is the stream's, whose last writes
    /// happen here (stderr's are let go, as they always are).
    fn deliver(&mut self, child: &mut Child, until: Option<Instant>) -> io::Result<Option<i32>> {
        self.done = true;
        let mut signal = None;
        let left = report::drain_all(&self.all(), until, || {
            signal = signal.or_else(|| child.take_signal());
            signal.is_some()
        });
        if left > 0 {
            note(&format!(
                "the reader of tcrunner's output stopped reading: the last {left} bytes were not delivered"
            ));
        }
        for outlet in &self.stream {
            outlet.error()?;
        }
        Ok(signal)
    }
}

impl Drop for Delivery {
    fn drop(&mut self) {
        if !self.done {
            report::drain_all(&self.all(), None, || false);
        }
    }
}

/// The files of a run that could not be launched get its start and end,
/// with `problem` said: no stream, nothing ran.
fn record_unstarted(
    output: &OutputConfig,
    files: Vec<report::FileOutput>,
    start: &RunStart,
    problem: Problem,
    policy: PassPolicy,
    code: i32,
) -> io::Result<()> {
    if files.is_empty() {
        return Ok(());
    }
    let quiet = OutputConfig {
        dialect: crate::cli::Dialect::None,
        ..output.clone()
    };
    let mut pipeline = Pipeline::new(&quiet, Transport::Stdout(io::sink()), files)?;
    pipeline.start_run(start)?;
    pipeline
        .finish(|_, groups| {
            let mut end = RunEnd::graded(policy, code, vec![problem], groups);
            end.exit_code = code;
            end
        })
        .map(drop)
}

/// The sandbox for `--sandbox`, once the machine is known to give it:
/// `--writable` and the framework's caches writable.
fn sandbox(
    raw: &crate::cli::RawRun,
    request: &Request,
    framework: &dyn frameworks::Framework,
    spec: &crate::process::Spec,
) -> Result<Sandbox, RunError> {
    let mut writable = Vec::new();
    for path in &raw.writable {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        match absolute.canonicalize() {
            Ok(found) => writable.push(found),
            Err(e) => {
                return Err(RunError::NoInput(format!(
                    "--writable {}: {e}",
                    path.display()
                )))
            }
        }
    }
    let mut scratch = Vec::new();
    for path in framework.sandbox_writable(request)? {
        let path = path.canonicalize().unwrap_or(path);
        // A cache in the host's `/tmp` (jest's) is written through a
        // private layer: the next run must not read what this one's tests
        // put there. Named with `--writable`, it is written for real.
        if path.starts_with("/tmp") && !writable.contains(&path) {
            scratch.push(path);
        } else {
            writable.push(path);
        }
    }
    let mut sandbox = Sandbox::for_spec(spec, writable);
    sandbox.scratch = scratch;
    crate::process::probe_sandbox(&sandbox, &spec.cwd).map_err(RunError::Sandbox)?;
    Ok(sandbox)
}

/// `--print-command`: the folder, the environment tcrunner adds and the
/// command line, quoted for a POSIX shell, one per line; then exit 0.
fn print_command(spec: &crate::process::Spec, mut out: impl Write) -> io::Result<i32> {
    fn quoted(text: &std::ffi::OsStr) -> String {
        let text = text.to_string_lossy();
        shlex::try_quote(&text).map_or_else(|_| format!("{text:?}"), |q| q.into_owned())
    }
    writeln!(out, "cd {}", quoted(spec.cwd.as_os_str()))?;
    let mut line = String::from(if spec.env_clear { "env -i" } else { "env" });
    for (key, value) in &spec.env {
        let mut pair = key.clone();
        pair.push("=");
        pair.push(value);
        line.push(' ');
        line.push_str(&quoted(&pair));
    }
    line.push(' ');
    line.push_str(&quoted(spec.program.as_os_str()));
    for arg in &spec.args {
        line.push(' ');
        line.push_str(&quoted(arg));
    }
    writeln!(out, "{line}")?;
    writeln!(
        out,
        "# and, when it runs: TCRUNNER_EVENT_FD (the events pipe) and TCRUNNER_INBAND_KEY"
    )?;
    if let Some(sandbox) = &spec.sandbox {
        let writable: Vec<String> = sandbox
            .writable
            .iter()
            .map(|p| quoted(p.as_os_str()))
            .collect();
        writeln!(
            out,
            "# in a sandbox: no network but lo, a private /tmp, read-only but for: {}",
            writable.join(" ")
        )?;
    }
    out.flush()?;
    Ok(exit::SUCCESS)
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

/// The consumer closed our stdout or its socket (an IDE stopping the run):
/// no noise.
fn quiet_exit() -> i32 {
    exit::SIGNAL_BASE + libc::SIGPIPE
}

/// Whether [`note`] writes. Not while the human view redraws its status
/// line on the terminal: a line on stderr would break into it, and every
/// note also reaches the view (a test's failure, the run's errors).
static NOTES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// One `tcrunner: …` line on stderr, after the framework's stderr. Unlike
/// `eprintln!`, a closed stderr (an IDE that stopped the run) is no reason
/// to panic.
pub(super) fn note(text: &str) {
    if NOTES.load(std::sync::atomic::Ordering::Relaxed) {
        report::stderr_line(&format!("tcrunner: {text}"));
    }
}

/// `2` for 2.0, `0.5` for 0.5: seconds as a user typed them.
pub(super) fn secs(value: f64) -> String {
    format!("{value}")
}
