//! The run loop's state: what the framework said so far, the limits it
//! runs under, and how the run's end becomes verdicts and an exit code.
use std::io::{self, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::event::{LogLevel, Stream, TestEvent};
use crate::exit;
use crate::frameworks::{Framework, Refusal};
use crate::process::{describe, signal_name, stdout_gone, Child, Input};

use crate::hash::FastMap;
use crate::history::failed_tests;
use crate::report::{Outlet, Pipeline, Problem, ProblemKind, Socket, StderrText, Summary};

use super::diagnose::{
    did_not_start, fail_all, framework_hint, keep_tail, plain_text, run_failure_reason,
};
use super::{note, secs, Ending, Expired, BACKSTOP, HELD_LOOK, LEAK_CAP, LEAK_TIMEOUT, TICK};

pub(super) struct Limits {
    pub(super) collect_only: bool,
    /// The framework was asked for information only (its help, its version):
    /// no tests and no word from our reporter are expected.
    pub(super) informational: bool,
    pub(super) test: Option<Duration>,
    pub(super) session: Option<Instant>,
    pub(super) session_secs: f64,
    pub(super) grace: Duration,
    /// `--sw`: stop once this many tests have failed.
    pub(super) stop_after_failures: Option<u32>,
    /// `--lf` named this many recorded failures to the framework.
    pub(super) reruns_failures: Option<usize>,
    /// `--target` named what runs, and no `--passWithNoTests` allows it to
    /// select nothing: jest and vitest exit 0 when a target's name pattern
    /// matches no test (they count the tests it leaves out as skipped).
    pub(super) targeted: bool,
}

impl Limits {
    /// The run collects or answers only: no test runs on purpose.
    pub(super) fn runs_no_tests(&self) -> bool {
        self.collect_only || self.informational
    }
}

pub(super) struct State {
    /// What the framework's exit codes and events mean.
    framework: &'static dyn Framework,
    /// The framework's name, for messages.
    name: &'static str,
    status: Option<std::process::ExitStatus>,
    /// Our reporter is known to run: it sent an event (beyond those it sends
    /// on import, [`Framework::reports_on_import`]).
    reported: bool,
    /// Start times of running tests, by source id.
    running: FastMap<String, Instant>,
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
    /// It never loaded because it is not installed.
    unavailable: bool,
    /// The framework stopped the run on purpose, outside any test or
    /// cleanly inside one ([`Framework::stopped_on_purpose`]): its exit
    /// code stands.
    stopped_on_purpose: bool,
    /// Where the framework's session is, as our reporter said it (pytest's
    /// says both ends; the others neither).
    session: Session,
    /// Test files the framework started and has not ended, by id, with
    /// their names (jest: [`Framework::opens_files_as_they_run`]).
    open_files: FastMap<String, String>,
    /// The first run-level error our reporter said (jest's obsolete
    /// snapshots, its `runExecError`): why the run failed, if it did.
    reporter_error: Option<String>,
    /// What went wrong with the run as a whole, as found.
    problems: Vec<Problem>,
    /// The IDE's socket the messages go to, if they do: watched, as stdout
    /// is, for its reader going away.
    socket: Option<Socket>,
    /// Tests that failed so far, for `--sw`.
    failures: u32,
    /// Where the framework's stderr goes.
    stderr_out: StderrText<Outlet>,
    /// What writes stdout, stderr and the IDE's socket: watched for a
    /// reader that falls behind.
    outlets: Vec<Outlet>,
}

impl State {
    pub(super) fn new(
        framework: &'static dyn Framework,
        socket: Option<Socket>,
        stderr_out: StderrText<Outlet>,
        outlets: Vec<Outlet>,
    ) -> State {
        State {
            framework,
            name: framework.name(),
            status: None,
            reported: false,
            running: FastMap::default(),
            stderr_tail: Vec::new(),
            stdout_tail: Vec::new(),
            no_tests: false,
            bad_events: 0,
            expired: None,
            signalled: None,
            crashed: false,
            framework_timeouts: 0,
            setup_failure: None,
            unavailable: false,
            stopped_on_purpose: false,
            reporter_error: None,
            session: Session::NotBegun,
            open_files: FastMap::default(),
            problems: Vec::new(),
            socket,
            failures: 0,
            stderr_out,
            outlets,
        }
    }

    /// The framework ran to its end by itself: no signal, no crash, no
    /// failure to start.
    pub(super) fn ended_by_itself(&self) -> bool {
        self.signalled.is_none() && !self.crashed && self.setup_failure.is_none()
    }

    /// Reads everything the framework says until it is done, a limit runs
    /// out, tcrunner is signalled, or the consumer goes away.
    pub(super) fn pump<W: Write>(
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
        let mut gone_checked = last_input;
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
                        let text = format!(
                            "a process that left {}'s process group (setsid) still holds its output open: it was left running (--sandbox ends every process the tests start)",
                            self.name
                        );
                        note(&format!("warning: {text}"));
                        pipeline.event(TestEvent::Log {
                            level: LogLevel::Warning,
                            text,
                        })?;
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
            let input = if child.has_input() {
                child.next(Some(Duration::ZERO))
            } else {
                // Nothing in hand: push out what was written, then wait.
                pipeline.flush()?;
                // A reader of ours far behind: the framework waits on its
                // pipes until it catches up.
                let behind = self.outlets.iter().any(|o| o.backlog() > Outlet::FULL);
                child.hold(behind);
                // A write to a vanished consumer fails by itself; this is for
                // quiet tests, so once per tick is enough.
                if now >= gone_checked + TICK {
                    if stdout_gone() || self.socket.as_ref().is_some_and(Socket::gone) {
                        return Ok(Ending::OutputGone);
                    }
                    gone_checked = now;
                }
                let tick = if behind { HELD_LOOK } else { TICK };
                let wait = self
                    .next_deadline(limits)
                    .map_or(tick, |d| d.saturating_duration_since(now).min(tick));
                let input = child.next(Some(wait));
                if behind {
                    // That wait is not the framework's silence, nor part of
                    // the time its leaked processes get.
                    let held = now.elapsed();
                    last_input = Instant::now();
                    for at in [&mut exited_at, &mut leak_killed_at].into_iter().flatten() {
                        *at += held;
                    }
                }
                input
            };
            let Some(input) = input else {
                continue;
            };
            match input {
                Input::Stdout(bytes) => {
                    keep_tail(&mut self.stdout_tail, &bytes);
                    pipeline.text(&bytes)?
                }
                Input::Stderr(bytes) => self.stderr(&bytes, pipeline)?,
                Input::Event(line) => {
                    self.event(&line, pipeline, limits)?;
                    if limits
                        .stop_after_failures
                        .is_some_and(|n| self.failures >= n)
                        && self.status.is_none()
                    {
                        return Ok(Ending::Stepwise);
                    }
                }
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
                    tell(pipeline, LogLevel::Warning, text)?;
                }
            }
            last_input = Instant::now();
        }
    }

    /// The framework's stderr. While one test runs it is that test's, as
    /// its stdout is (a test's `process.stderr.write` in jest's process,
    /// jest's console under `--useStderr` or `--json`, pytest's `-s`): it
    /// goes to the test, in order with its events, and into the result
    /// files; not in the human view ([`StderrText::goes_to_tests`]).
    /// Otherwise it goes to tcrunner's stderr as it is.
    fn stderr<W: Write>(&mut self, bytes: &[u8], pipeline: &mut Pipeline<W>) -> io::Result<()> {
        let mut running = self.running.keys();
        match (running.next(), running.next()) {
            (Some(id), None)
                if self.framework.tests_write_its_stderr() && self.stderr_out.goes_to_tests() =>
            {
                keep_tail(&mut self.stderr_tail, bytes);
                pipeline.event(TestEvent::Output {
                    id: Some(id.clone()),
                    stream: Stream::Stderr,
                    text: String::from_utf8_lossy(bytes).into_owned(),
                })
            }
            _ => {
                self.stderr_raw(bytes);
                Ok(())
            }
        }
    }

    fn stderr_raw(&mut self, bytes: &[u8]) {
        let _ = self.stderr_out.write(bytes);
        keep_tail(&mut self.stderr_tail, bytes);
    }

    /// Until when the readers of the run's output may take what it wrote,
    /// once the run has ended: a run that ended by itself waits for them
    /// (within `--session-timeout`); a run stopped by a limit or a signal
    /// gives them the grace period.
    pub(super) fn drain_until(&self, ending: Ending, limits: &Limits) -> Option<Instant> {
        match ending {
            Ending::Exited | Ending::Stepwise if self.signalled.is_none() => limits.session,
            _ => Some(Instant::now() + limits.grace),
        }
    }

    /// Writes out the framework's unfinished last line of stderr, if any.
    pub(super) fn end_stderr(&mut self) {
        let _ = self.stderr_out.finish();
    }

    fn problem(&mut self, kind: ProblemKind, message: &str) {
        self.problems.push(Problem {
            kind,
            message: message.to_owned(),
        });
    }

    fn event<W: Write>(
        &mut self,
        line: &[u8],
        pipeline: &mut Pipeline<W>,
        limits: &Limits,
    ) -> io::Result<()> {
        let event = match TestEvent::from_line(line) {
            Ok(event) => event,
            Err(e) => {
                self.bad_events += 1;
                // Bytes before an event (something else wrote into the
                // reporter's descriptor without a newline): the event is the
                // line's last `{"ev":"` on, since JSON escapes that inside
                // a string. The bytes are dropped, and the event kept.
                let start = memchr::memmem::rfind(line, br#"{"ev":""#).filter(|&at| at > 0);
                let kept = start.and_then(|at| TestEvent::from_line(&line[at..]).ok());
                if self.bad_events == 1 {
                    note(&match &kept {
                        Some(_) => format!(
                            "ignoring {} bytes before an event from the reporter: something else wrote into its descriptor",
                            start.unwrap_or(0)
                        ),
                        None => format!("ignoring a malformed event from the reporter: {e}"),
                    });
                }
                match kept {
                    Some(event) => event,
                    None => return Ok(()),
                }
            }
        };
        let on_import = matches!(event, TestEvent::Hello { .. } | TestEvent::LiveOutput)
            && self.framework.reports_on_import();
        self.reported |= !on_import;
        match &event {
            TestEvent::Hello { .. } | TestEvent::LiveOutput => {}
            TestEvent::Log { text, .. } if self.framework.stopped_on_purpose(text) => {
                self.stopped_on_purpose = true;
            }
            TestEvent::Log {
                level: LogLevel::Error,
                text,
            } if self.reporter_error.is_none() => {
                self.reporter_error = Some(text.clone());
            }
            TestEvent::SessionStarted => self.session = Session::Begun,
            TestEvent::SessionEnded => self.session = Session::Ended,
            TestEvent::Started { id } => {
                self.running.entry(id.clone()).or_insert_with(Instant::now);
            }
            TestEvent::Suite(node)
                if node.kind == crate::event::NodeKind::File
                    && self.framework.opens_files_as_they_run() =>
            {
                self.open_files.insert(node.id.clone(), node.name.clone());
            }
            TestEvent::SuiteDone { id } => {
                self.open_files.remove(id);
            }
            TestEvent::Finished(result) => {
                self.running.remove(&result.id);
                let failed_file = (result.outcome.verdict() == crate::event::Verdict::Failed)
                    .then(|| self.framework.load_failure(&result.id))
                    .flatten();
                if let Some(file) = failed_file {
                    let why = result.message.as_deref().unwrap_or("collection failed");
                    self.problem(
                        ProblemKind::Collection,
                        &format!("cannot collect {file}: {why}"),
                    );
                }
                let failed = result.outcome.verdict() == crate::event::Verdict::Failed;
                self.failures += u32::from(failed);
                if limits.test.is_some()
                    && failed
                    && result
                        .message
                        .as_deref()
                        .is_some_and(|m| self.framework.is_timeout_message(m))
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
    pub(super) fn conclude<W: Write>(
        &mut self,
        ending: Ending,
        child: &mut Child,
        pipeline: &mut Pipeline<W>,
        limits: &Limits,
        program: &Path,
    ) -> io::Result<()> {
        let (framework, name) = (self.framework, self.name);
        let mut grace = limits.grace;
        // What the framework says as it stops is wanted, however far
        // behind the readers are: the files get it.
        child.hold(false);
        // Tests that ran out of time, and why: failed once the framework has stopped.
        let mut timed_out = None;
        match ending {
            Ending::OutputGone => {
                self.problem(
                    ProblemKind::OutputGone,
                    "the reader of tcrunner's output went away: the run was stopped",
                );
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
                        "the session time limit of {} s ran out{}: stopping {name}",
                        secs(limits.session_secs),
                        self.outside_tests(&ids)
                    ),
                    _ => format!("a test {why} (--timeout): stopping {name}"),
                };
                self.problem(ProblemKind::Timeout, &text);
                tell(pipeline, LogLevel::Error, text)?;
                timed_out = Some((ids, why));
            }
            Ending::Killed => grace = Duration::ZERO,
            Ending::Stepwise => {
                let text = format!(
                    "stepwise: stopping {name} after the failure; the next --sw run continues from that test"
                );
                tell(pipeline, LogLevel::Info, text)?;
            }
            Ending::Exited if self.signalled.is_some() => {}
            Ending::Exited => {
                self.crash_verdicts(pipeline)?;
                self.ended_before_its_session_did(pipeline)?;
                self.ended_inside_a_file(pipeline)?;
                self.failed_outside_tests(pipeline)?;
                if self.reported
                    && !self.crashed
                    && !self.stopped_on_purpose
                    && pipeline.summary().total() == 0
                    && !limits.runs_no_tests()
                {
                    // A node says why, as for a framework that failed to start.
                    match self.refusal() {
                        Some(hint) => self.did_not_start(pipeline, hint)?,
                        // What failed is gone under its name: not a pass.
                        None if let Some(n) = limits.reruns_failures => {
                            let which = match n {
                                1 => "the failed test did not run".to_owned(),
                                n => format!("none of the {} ran", failed_tests(n)),
                            };
                            let text = format!(
                                "run-last-failure: {which}: renamed since the last run? Run without --lf to run every test"
                            );
                            self.problem(ProblemKind::NoTests, &text);
                            self.no_tests = true;
                            tell(pipeline, LogLevel::Warning, text)?;
                        }
                        None if limits.targeted => {
                            let text = format!(
                                "{name} ran no tests: the target selects none (renamed since, or spelt otherwise?)"
                            );
                            self.problem(ProblemKind::NoTests, &text);
                            self.no_tests = true;
                            tell(pipeline, LogLevel::Warning, text)?;
                        }
                        None => {
                            let text =
                                format!("{name} ran no tests: none were collected or selected");
                            self.problem(ProblemKind::NoTests, &text);
                            tell(pipeline, LogLevel::Warning, text)?;
                        }
                    }
                }
            }
        }
        if ending != Ending::Exited {
            // Text still arriving is kept, and so is the output the running
            // tests send as they are stopped (what the framework's capture held);
            // other events are not: the tests that were running get the
            // verdict below, or are closed as stopped.
            let mut text = Vec::new();
            let mut output = Vec::new();
            let status = child.stop(grace, |input| match input {
                Input::Stdout(bytes) => text.extend_from_slice(&bytes),
                Input::Stderr(bytes) => self.stderr_raw(&bytes),
                Input::Event(line) => {
                    if let Ok(event @ TestEvent::Output { id: Some(_), .. }) =
                        TestEvent::from_line(&line)
                    {
                        output.push(event);
                    }
                }
                _ => {}
            });
            self.status = status.or(self.status);
            for event in output {
                pipeline.event(event)?;
            }
            pipeline.text(&text)?;
        }
        if let Some((ids, why)) = timed_out {
            for id in &ids {
                self.running.remove(id);
            }
            fail_all(pipeline, ids, &why, None)?;
        }
        let answered = limits.informational && self.status.is_some_and(|s| s.code() == Some(0));
        if !self.reported && self.signalled.is_none() && !answered {
            if let Some(line) = framework
                .no_tests_line(&plain_text(&self.stdout_tail))
                .filter(|_| self.status.is_some_and(|s| s.code().is_some()))
            {
                let text = format!("{name} ran no tests: {line}");
                self.problem(ProblemKind::NoTests, &text);
                tell(pipeline, LogLevel::Warning, text)?;
                self.no_tests = true;
                return Ok(());
            }
            let stderr = plain_text(&self.stderr_tail);
            let missing = framework.missing_hint(&stderr, program);
            self.unavailable = missing.is_some();
            let hint = missing
                .unwrap_or_else(|| framework_hint(framework, &self.stderr_tail, self.status));
            self.did_not_start(pipeline, hint)?;
        }
        Ok(())
    }

    /// Why the framework refused to run anything after our reporter loaded,
    /// if it did, rather than finding no tests ([`Framework::refusal`]).
    fn refusal(&self) -> Option<String> {
        let code = self.status.and_then(|s| s.code())?;
        let stderr = plain_text(&self.stderr_tail);
        Some(match self.framework.refusal(code, &stderr)? {
            Refusal::Threw(line) => format!("{} failed before running any test: {line}", self.name),
            Refusal::OnStderr => framework_hint(self.framework, &self.stderr_tail, self.status),
        })
    }

    /// Says `hint` on stderr and on a failed `<framework> did not start`
    /// node, with the framework's stderr as details; the run's exit code
    /// then says it did not run.
    fn did_not_start<W: Write>(
        &mut self,
        pipeline: &mut Pipeline<W>,
        hint: String,
    ) -> io::Result<()> {
        note(&hint);
        let details = plain_text(&self.stderr_tail);
        did_not_start(pipeline, self.name, hint.clone(), Some(details))?;
        self.problem(ProblemKind::NotStarted, &hint);
        self.setup_failure = Some(hint);
        Ok(())
    }

    /// The framework exited by itself, no test running, after its session
    /// began and before it ended (pytest: `os._exit` while a test module
    /// was imported, or from a thread between tests): the tests after that
    /// point never ran. It is a crash, not a run whose reporter never
    /// loaded, nor a whole run: the code may well be 0.
    fn ended_before_its_session_did<W: Write>(
        &mut self,
        pipeline: &mut Pipeline<W>,
    ) -> io::Result<()> {
        let Some(status) = self.status else {
            return Ok(());
        };
        if self.session != Session::Begun || self.crashed || self.stopped_on_purpose {
            return Ok(());
        }
        self.crashed = true;
        let when = if pipeline.summary().total() == 0 {
            "while collecting tests"
        } else {
            "between tests"
        };
        let text = format!(
            "{} {} {when}, before its session ended: the tests after that point did not run",
            self.name,
            describe(status)
        );
        self.problem(ProblemKind::Crash, &text);
        tell(pipeline, LogLevel::Error, text)
    }

    /// Where the framework was when no test of `running` was: ` outside any
    /// test while running a.test.js` (a `beforeAll` or `afterAll` hook, a
    /// module's top level), or nothing.
    fn outside_tests(&self, running: &[String]) -> String {
        if !running.is_empty() || self.open_files.is_empty() {
            return String::new();
        }
        format!(" outside any test while running {}", self.open_file_names())
    }

    /// The files the framework started and did not end, by name, sorted.
    fn open_file_names(&self) -> String {
        let mut files: Vec<&str> = self.open_files.values().map(String::as_str).collect();
        files.sort_unstable();
        files.join(", ")
    }

    /// The framework exited by itself, no test running, inside a file it
    /// had started (jest: `process.exit` in a `beforeAll` or `afterAll`
    /// hook, or at the top of the file): the run ended there, whatever its
    /// code, and the files after it never ran. It is a crash: a run that
    /// looked whole (or empty) would hide them.
    fn ended_inside_a_file<W: Write>(&mut self, pipeline: &mut Pipeline<W>) -> io::Result<()> {
        let Some(status) = self.status else {
            return Ok(());
        };
        if self.crashed || self.stopped_on_purpose || self.open_files.is_empty() {
            return Ok(());
        }
        self.crashed = true;
        let text = format!(
            "{} {} outside any test while running {}: the files after it did not run",
            self.name,
            describe(status),
            self.open_file_names()
        );
        self.problem(ProblemKind::Crash, &text);
        tell(pipeline, LogLevel::Error, text)
    }

    /// The framework exited by itself with a failure code of its own though
    /// every test it reported passed or was skipped: something outside any
    /// test failed the run (a global setup or teardown, an uncaught error
    /// after the last test, a coverage threshold, obsolete snapshots).
    /// Without a run-level error a green tree would hide it, and a pass
    /// policy would pass the run.
    fn failed_outside_tests<W: Write>(&mut self, pipeline: &mut Pipeline<W>) -> io::Result<()> {
        let Some(code) = self.status.and_then(|s| s.code()) else {
            return Ok(());
        };
        let summary = pipeline.summary();
        if code == 0
            || !self.reported
            || self.crashed
            || self.stopped_on_purpose
            || self.framework.run_failure_code(code)
            || summary.total() == 0
            || summary.any_failed()
        {
            return Ok(());
        }
        if self.framework.no_tests_code(code) {
            // Only skipped modules (pytest's `importorskip` in every one):
            // the run collected no tests, as it says.
            let text = format!(
                "{} ran no tests: none were collected or selected",
                self.name
            );
            self.problem(ProblemKind::NoTests, &text);
            return tell(pipeline, LogLevel::Warning, text);
        }
        // Our reporter's own error (jest's obsolete snapshots) is in the
        // stream already: it becomes the run's error without being said twice.
        let said = self.reporter_error.is_some();
        let why = self.reporter_error.clone().or_else(|| {
            let (stderr, stdout) = (&self.stderr_tail, &self.stdout_tail);
            run_failure_reason(&plain_text(stderr), &plain_text(stdout))
        });
        let mut text = format!(
            "{} exited with code {code} though no test failed",
            self.name
        );
        if let Some(why) = why {
            text = format!("{text}: {why}");
        }
        self.problem(ProblemKind::RunFailed, &text);
        if said {
            return Ok(());
        }
        tell(pipeline, LogLevel::Error, text)
    }

    /// The framework exited by itself: a test still running means it died
    /// under that test; a death by signal between tests is said in the log.
    fn crash_verdicts<W: Write>(&mut self, pipeline: &mut Pipeline<W>) -> io::Result<()> {
        let Some(status) = self.status else {
            return Ok(());
        };
        let name = self.name;
        let running = pipeline.running_tests();
        // stderr may hold the crash's traceback; stdout what a plugin said
        // before it ended the framework (a timeout plugin that dumps the
        // stacks there, then exits at once).
        let said: Vec<String> = [("stderr", &self.stderr_tail), ("stdout", &self.stdout_tail)]
            .into_iter()
            .filter_map(|(stream, tail)| {
                let text = plain_text(tail).trim().to_owned();
                (!text.is_empty()).then(|| format!("{name}'s last output on {stream}:\n{text}"))
            })
            .collect();
        let details = (!said.is_empty()).then(|| said.join("\n\n"));
        if !running.is_empty() && self.stopped_on_purpose {
            // A clean stop inside a test (pytest.exit with code 0), said in
            // the log already: the tests it left are stopped.
        } else if !running.is_empty()
            && status.code().is_some_and(|c| self.framework.interrupted(c))
        {
            // The framework's own "interrupted": it wound down and said so;
            // the tests it left are stopped, not crashed under.
            let text = format!("{name} was interrupted during {}", running.join(", "));
            self.problem(ProblemKind::Interrupted, &text);
            tell(pipeline, LogLevel::Warning, text)?;
        } else if !running.is_empty() {
            self.crashed = true;
            let why = format!("{name} {} during this test", describe(status));
            let known = self.framework.users_know_ids();
            let shown: Vec<String> = running
                .iter()
                .map(|id| match pipeline.path_of(id) {
                    Some(path) if !known => path,
                    _ => id.clone(),
                })
                .collect();
            let text = format!("{why}: {}", shown.join(", "));
            self.problem(ProblemKind::Crash, &text);
            note(&text);
            fail_all(pipeline, running, &why, details.as_deref())?;
        } else if status.code().is_none() && self.reported {
            self.crashed = true;
            let text = format!("{name} {} between tests", describe(status));
            self.problem(ProblemKind::Crash, &text);
            tell(pipeline, LogLevel::Error, text)?;
        }
        Ok(())
    }

    pub(super) fn exit_code(&self, ending: Ending, summary: &Summary, limits: &Limits) -> i32 {
        if let Some((signal, _)) = self.signalled {
            return exit::SIGNAL_BASE + signal;
        }
        if ending == Ending::TimedOut {
            return exit::TIMEOUT;
        }
        if ending == Ending::Stepwise {
            return exit::TESTS_FAILED;
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
        // No tests, and the framework was told that is fine
        // (`--passWithNoTests`, `--changed` with nothing changed, a config
        // saying so): its 0 stands. Otherwise no tests is a failure of its own.
        if self.no_tests {
            let passes = code == 0 && limits.reruns_failures.is_none() && !limits.targeted;
            return if passes { 0 } else { exit::NO_TESTS };
        }
        if self.stopped_on_purpose {
            // pytest.exit(returncode=0) inside a test: a run whose tests did
            // not all finish never succeeds, or code under test could end a
            // grading run early with a pass.
            return if summary.any_failed() && code == 0 {
                exit::TESTS_FAILED
            } else {
                code
            };
        }
        // The framework's own "the run itself failed" codes.
        let own = self.framework.run_failure_code(code);
        if self.setup_failure.is_some() {
            if self.unavailable {
                return exit::FRAMEWORK_UNAVAILABLE;
            }
            // The framework refused to start (bad arguments, broken config)
            // and said why in its own code, or it ran without our reporter.
            return if own { code } else { exit::REPORTER_FAILED };
        }
        if summary.total() == 0 && !limits.runs_no_tests() {
            return if own || code == 0 {
                code
            } else {
                exit::NO_TESTS
            };
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

impl State {
    /// The run-level problems, once the run is over and `exit_code` is its
    /// code under the framework's own policy: those found on the way, and
    /// what only the end tells (a signal, pytest's own failure codes).
    pub(super) fn problems(&self, exit_code: i32) -> Vec<Problem> {
        let mut problems = self.problems.clone();
        let add = |problems: &mut Vec<Problem>, kind, message: String| {
            problems.push(Problem { kind, message })
        };
        if let Some((signal, _)) = self.signalled {
            add(
                &mut problems,
                ProblemKind::Interrupted,
                format!(
                    "tcrunner received {}: the run was stopped",
                    signal_name(signal)
                ),
            );
        }
        let code = self.status.and_then(|s| s.code());
        let name = self.name;
        if let Some(code) =
            code.filter(|&c| problems.is_empty() && self.framework.run_failure_code(c))
        {
            add(
                &mut problems,
                ProblemKind::Interrupted,
                format!("{name} exited with code {code}, its own word that the run failed"),
            );
        }
        if problems.is_empty() && self.stopped_on_purpose && code != Some(0) {
            add(
                &mut problems,
                ProblemKind::Interrupted,
                format!("{name} was stopped on purpose outside any test, with code {exit_code}"),
            );
        }
        if problems.is_empty() && exit_code == exit::INTERNAL {
            add(
                &mut problems,
                ProblemKind::Interrupted,
                "the framework's end was never seen".to_owned(),
            );
        }
        problems
    }
}

/// Says `text` on both channels: a `tcrunner:` line on stderr, for a person
/// at a terminal, and a message in the stream, for the IDE or server.
fn tell<W: Write>(pipeline: &mut Pipeline<W>, level: LogLevel, text: String) -> io::Result<()> {
    note(&text);
    pipeline.event(TestEvent::Log { level, text })
}

/// Where the framework's session is, as our reporter says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Session {
    /// Not begun, or the reporter does not say.
    NotBegun,
    Begun,
    Ended,
}
