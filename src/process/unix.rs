//! Unix process control (process groups, inherited event pipe, signals).
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{getpgid, kill_process, kill_process_group, Pid, Signal};

use super::input::Input;
use super::reader::{set_nonblocking, Reader};

/// The environment variable naming the event pipe's file descriptor.
const EVENT_FD_VAR: &str = "TCRUNNER_EVENT_FD";

/// How long a wait after a light round leaves event lines to gather before
/// it reads them (see [`Child::next`]).
///
/// Each round costs a wake-up, which on a VM costs more than the lines it
/// reads. 5 ms rather than 1 ms cut tcrunner's own CPU for 5,000 tests by
/// a third (jest 0.64 → 0.41 s, pytest 0.26 → 0.19 s, wake-ups 3.7× and
/// 4.5× fewer), and left the median latency of tests that take 5 ms or more
/// where it was (1.9 ms). Quicker tests' events come up to 5 ms later;
/// vitest's runner gathers its own for 5 ms already.
const GATHER: Duration = Duration::from_millis(5);

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
    /// Start from an empty environment: `env` is all the program gets.
    pub env_clear: bool,
    /// Run it in a sandbox (`--sandbox`).
    pub sandbox: Option<super::Sandbox>,
}

/// A running framework process group.
///
/// Nothing reads its pipes in the background: [`Child::next`] polls them,
/// so a framework that writes faster than our consumer reads is slowed down
/// by its own pipes instead of growing our memory.
pub(crate) struct Child {
    pgid: Pid,
    reader: Reader,
    /// Read but not yet handed out.
    queue: VecDeque<Input>,
    /// The read end of the pipe tcrunner's signal handler writes to.
    signals: Option<OwnedFd>,
    /// Reaches end of file when the main process has exited and its status
    /// is in `status`.
    exit_watch: Option<OwnedFd>,
    status: Arc<Mutex<Option<ExitStatus>>>,
    /// Streams still open (stdout, stderr, events).
    open_streams: u8,
    /// The main process exited (its status was handed out).
    exited: bool,
    /// The last round read event lines in small pieces: the next wait
    /// pauses before it reads more.
    gather: bool,
    /// Leave the framework's pipes unread ([`Child::hold`]).
    held: bool,
}

impl Child {
    /// Starts `spec` in a new process group, with an event pipe at
    /// `$TCRUNNER_EVENT_FD`.
    pub(crate) fn spawn(spec: &Spec) -> io::Result<Child> {
        let (events_read, events_write) = io::pipe()?;
        let key = super::reader::inband_key();
        let events_write: OwnedFd = events_write.into();
        let event_fd = events_write.as_raw_fd();
        let sandbox = match &spec.sandbox {
            Some(sandbox) => Some(sandbox.prepare(&spec.cwd)?),
            None => None,
        };
        let mut command = Command::new(&spec.program);
        if spec.env_clear {
            command.env_clear();
        }
        command
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env(EVENT_FD_VAR, event_fd.to_string())
            .env(super::reader::INBAND_KEY_VAR, &key)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: the closure runs in the forked child, where only
        // async-signal-safe calls are allowed: it makes fcntl (a plain
        // system call through rustix), signal, prctl, and in a sandbox the raw
        // system calls of `sandbox::enter_for_exec` on memory prepared
        // before the fork. `event_fd` names the
        // pipe's write end, which `events_write` keeps open until after
        // spawn returns, so borrowing it for the call is sound.
        unsafe {
            command.pre_exec(move || {
                // Inherited across exec, where the framework's reporter finds it.
                rustix::io::fcntl_setfd(
                    BorrowedFd::borrow_raw(event_fd),
                    rustix::io::FdFlags::empty(),
                )?;
                // The signals tcrunner passes on must reach the framework
                // even when tcrunner was started with them ignored (a
                // shell's `&`, nohup): an ignored signal stays ignored
                // across exec, and Python then never raises
                // KeyboardInterrupt.
                for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
                    libc::signal(signal, libc::SIG_DFL);
                }
                // tcrunner killed outright (SIGKILL, an OOM kill) takes the
                // framework with it rather than leave it running unread;
                // its workers follow when their channel to it closes.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                // Last: in the sandbox, only the framework's process comes
                // back from this to exec.
                if let Some(sandbox) = &sandbox {
                    super::sandbox::enter_for_exec(sandbox)?;
                }
                Ok(())
            });
        }
        let mut child = command.spawn()?;
        // Our copy of the write end must go, or the reader never sees EOF.
        drop(events_write);
        let pgid = Pid::from_child(&child);
        let stdout: OwnedFd = child.stdout.take().expect("piped").into();
        let stderr: OwnedFd = child.stderr.take().expect("piped").into();
        let set_up = Reader::new(stdout, stderr, events_read.into(), &key)
            .and_then(|reader| Ok((reader, io::pipe()?)));
        let (reader, (watch_read, watch_write)) = match set_up {
            Ok(parts) => parts,
            Err(e) => {
                let _ = kill_process_group(pgid, Signal::KILL);
                let _ = child.wait();
                return Err(e);
            }
        };
        let status = Arc::new(Mutex::new(None));
        let waited = Arc::clone(&status);
        thread::spawn(move || {
            if let Ok(exit) = child.wait() {
                *waited.lock().unwrap_or_else(|e| e.into_inner()) = Some(exit);
            }
            drop(watch_write);
        });
        Ok(Child {
            pgid,
            reader,
            queue: VecDeque::new(),
            signals: listen_for_signals(),
            exit_watch: Some(watch_read.into()),
            status,
            open_streams: 3,
            exited: false,
            gather: false,
            held: false,
        })
    }

    /// The next input, or `None` after `timeout`.
    ///
    /// A framework reports test by test, a line or two per test, often
    /// thousands of times a second. Waking for each line costs the
    /// framework's process too: its write has to wake us on the other CPU,
    /// which measured some 3% of a fast pytest run. So after a round that
    /// read event lines in small pieces, the wait first watches only the
    /// text pipes, for [`GATHER`], and lets the event pipe fill: lines then
    /// come several at a time, at most that much later. Text arriving in that
    /// pause ends it; the event lines waiting then were written before the
    /// text, and are passed on first, but for those the framework wrote in
    /// the moment it takes us to wake. Our JS reporters mark those: a
    /// `written` line ahead of them says how much text their process had
    /// written, and that much goes first (see `reader`). Without it, on a
    /// loaded machine a jest test's raw `process.stdout.write` came after
    /// the end of its file in 5 runs out of 30.
    pub(crate) fn next(&mut self, timeout: Option<Duration>) -> Option<Input> {
        let deadline = timeout.map(|t| Instant::now() + t);
        while self.queue.is_empty() {
            let wait = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            if self.gather && !wait.is_some_and(|w| w.is_zero()) {
                let pause = wait.map_or(GATHER, |w| w.min(GATHER));
                if !self.poll(Some(pause), true) {
                    self.gather = false; // the pause is over: wait for everything
                }
                continue;
            }
            if !self.poll(wait, false) && wait.is_some_and(|w| w.is_zero()) {
                return None;
            }
        }
        let input = self.queue.pop_front()?;
        match input {
            Input::Closed => self.open_streams -= 1,
            Input::Exited(_) => self.exited = true,
            _ => {}
        }
        Some(input)
    }

    /// While `held`, the waits watch only for signals and the main
    /// process's exit, and the framework's pipes fill up until it waits on
    /// them: for a reader of ours that is behind (see `report::Outlet`).
    /// What was read before is still handed out.
    pub(crate) fn hold(&mut self, held: bool) {
        self.held = held;
    }

    /// A signal tcrunner received since the last look, without waiting and
    /// without reading anything else.
    pub(crate) fn take_signal(&mut self) -> Option<i32> {
        self.read_signals_ready();
        let at = self
            .queue
            .iter()
            .position(|input| matches!(input, Input::Signal(_)))?;
        match self.queue.remove(at) {
            Some(Input::Signal(signal)) => Some(signal),
            _ => None,
        }
    }

    /// Queues the signals whose bytes wait in the signal pipe.
    fn read_signals_ready(&mut self) {
        let Some(fd) = &self.signals else { return };
        let mut fds = [PollFd::new(fd, PollFlags::IN)];
        // A zero timeout never blocks.
        if rustix::event::poll(&mut fds, Some(&Timespec::default())) == Ok(1) {
            self.read_signals();
        }
    }

    /// Whether input already read is waiting to be handed out.
    pub(crate) fn has_input(&self) -> bool {
        !self.queue.is_empty()
    }

    /// Waits up to `wait` (for ever without one) for the pipes, a signal or
    /// the main process's exit, and queues what it finds. Returns whether
    /// anything was ready. `gathering` leaves the event pipe out of the
    /// wait (see [`Child::next`]).
    fn poll(&mut self, wait: Option<Duration>, gathering: bool) -> bool {
        const STREAMS: usize = 3;
        const SIGNALS: usize = STREAMS;
        const EXIT_WATCH: usize = STREAMS + 1;
        // Rounded up to whole milliseconds, so a short wait is not a busy loop.
        let timeout = wait.map(|w| {
            let millis = w.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i64;
            Timespec {
                tv_sec: millis / 1000,
                tv_nsec: millis % 1000 * 1_000_000,
            }
        });
        // What is ready, by index: the streams, the signal pipe, the exit watch.
        let mut ready = [false; STREAMS + 2];
        {
            let mut polled = [0; STREAMS + 2];
            let mut fds = Vec::with_capacity(STREAMS + 2);
            let others = [(SIGNALS, &self.signals), (EXIT_WATCH, &self.exit_watch)];
            let open = self.reader.open_fds();
            let held = self.held;
            let open = open.filter(|&(i, _)| !(held || gathering && i == Reader::EVENTS));
            let others = others
                .into_iter()
                .filter_map(|(i, fd)| fd.as_ref().map(|fd| (i, fd.as_fd())));
            for (i, fd) in open.chain(others) {
                polled[fds.len()] = i;
                fds.push(PollFd::from_borrowed_fd(fd, PollFlags::IN));
            }
            match rustix::event::poll(&mut fds, timeout.as_ref()) {
                Ok(n) if n > 0 => {}
                // A signal's handler interrupted the wait: its byte is read next time.
                _ => return false,
            }
            for (fd, &i) in fds.iter().zip(&polled) {
                ready[i] = !fd.revents().is_empty();
            }
        }
        if gathering && ready[..STREAMS].contains(&true) {
            self.reader.read_gathered_events(&mut self.queue);
        }
        // The event pipe first: an event line that is not a `started` takes
        // the text written before it along (see `reader`), and text that is
        // ready beside a `started` was most likely written by the test that
        // just started.
        for i in [Reader::EVENTS, 0, 1] {
            if ready[i] {
                self.reader.read_ready(i, &mut self.queue);
            }
        }
        self.gather = self.reader.take_light_round();
        if ready[SIGNALS] {
            self.read_signals();
        }
        if ready[EXIT_WATCH] {
            // The waiter closed its end: the status is in.
            self.exit_watch = None;
            let status = *self.status.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(status) = status {
                self.queue.push_back(Input::Exited(status));
            }
        }
        true
    }

    fn read_signals(&mut self) {
        let Some(fd) = &self.signals else { return };
        let mut bytes = [0u8; 16];
        let n = rustix::io::read(fd, &mut bytes).unwrap_or(0);
        if n == 0 {
            self.signals = None;
        }
        for &byte in &bytes[..n] {
            self.queue.push_back(Input::Signal(i32::from(byte)));
        }
    }

    /// Whether stdout, stderr and the side channel have all closed.
    pub(crate) fn streams_closed(&self) -> bool {
        self.open_streams == 0
    }

    /// Sends the signal numbered `signal` (one tcrunner received, passed
    /// on, or SIGKILL) to every process in the group.
    pub(crate) fn signal(&self, signal: i32) {
        if let Some(signal) = Signal::from_named_raw(signal) {
            self.kill(signal);
        }
    }

    /// Sends `signal` to every process in the group, and to the main
    /// process itself when a test moved it out of its group (`setpgid`).
    /// A group that is gone has nothing left to stop.
    fn kill(&self, signal: Signal) {
        let _ = kill_process_group(self.pgid, signal);
        // Only when it left: in the group it has the signal already, and a
        // second SIGINT would interrupt pytest's handling of the first.
        let reaped = self
            .status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some();
        if !reaped && getpgid(Some(self.pgid)).is_ok_and(|group| group != self.pgid) {
            let _ = kill_process(self.pgid, signal);
        }
    }

    /// SIGTERM to the group, then SIGKILL once `grace` passes without the
    /// main process exiting (at once for a zero grace). Inputs read
    /// meanwhile are handed to `keep`. Returns the main process's status
    /// when it exits here.
    pub(crate) fn stop(
        &mut self,
        grace: Duration,
        mut keep: impl FnMut(Input),
    ) -> Option<ExitStatus> {
        if self.exited {
            // Only what it left behind is still around.
            self.kill(Signal::KILL);
            return None;
        }
        if grace.is_zero() {
            self.kill(Signal::KILL);
        } else {
            self.kill(Signal::TERM);
            // A stopped process (a test's SIGSTOP to its group) acts on
            // SIGTERM only once it runs again: its handlers then send what
            // it holds, rather than the grace period passing unused.
            self.kill(Signal::CONT);
        }
        let deadline = Instant::now() + grace;
        let mut status = None;
        while status.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.next(Some(left)) {
                Some(Input::Exited(s)) => status = Some(s),
                Some(Input::Signal(_)) => break, // a second signal: no more grace
                Some(other) => keep(other),
                None => {}
            }
        }
        self.kill(Signal::KILL);
        // SIGKILL cannot be refused; the waiter reports the death promptly.
        let deadline = Instant::now() + Duration::from_secs(5);
        while status.is_none() {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next(Some(left)) {
                Some(Input::Exited(s)) => status = Some(s),
                Some(other) => keep(other),
                None if left.is_zero() => break,
                None => {}
            }
        }
        status
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        // Whatever happened, nothing of the run outlives tcrunner.
        self.kill(Signal::KILL);
    }
}

/// The write end of the self-pipe the signal handler writes to.
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        // SAFETY: `fd` is the write end `listen_for_signals` leaked, open for
        // the rest of the process, and write is async-signal-safe (on Linux
        // rustix makes the system call itself and leaves errno, which the
        // interrupted code may be about to read, as it was). A full pipe
        // drops the byte.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let _ = rustix::io::write(fd, &[signal as u8]);
    }
}

/// Turns SIGINT, SIGTERM and SIGHUP into bytes on a pipe; returns its read
/// end (none if no pipe could be made: the signals then keep their default
/// action).
pub(crate) fn listen_for_signals() -> Option<OwnedFd> {
    let (read, write) = io::pipe().ok()?;
    let (read, write): (OwnedFd, OwnedFd) = (read.into(), write.into());
    // The handler must never block on a full pipe, nor the loop on an empty one.
    for fd in [&read, &write] {
        set_nonblocking(fd).ok()?;
    }
    let old = SIGNAL_PIPE.swap(write.as_raw_fd(), Ordering::Relaxed);
    std::mem::forget(write); // lives as long as the handler may run
    if old < 0 {
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: on_signal only performs an async-signal-safe write; the
            // sigaction struct is fully initialised before the call.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as *const () as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }
    Some(read)
}

/// Whether the reader of our stdout went away: a pipe whose read end is
/// closed (`POLLERR`) or a hung-up terminal (`POLLHUP`). Writing would fail
/// with EPIPE, but a run whose tests are quiet writes nothing for a long
/// time; this lets it notice anyway. Files and `/dev/null` never report it.
pub(crate) fn stdout_gone() -> bool {
    let stdout = io::stdout();
    let mut fds = [PollFd::new(&stdout, PollFlags::empty())];
    // A zero timeout never blocks.
    let ready = rustix::event::poll(&mut fds, Some(&Timespec::default()));
    ready == Ok(1) && fds[0].revents().intersects(PollFlags::ERR | PollFlags::HUP)
}

/// `SIGKILL` for 9, and so on.
pub(crate) fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    format!("signal {signal} ({name})")
}

/// How a process ended, in words.
pub(crate) fn describe(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("killed by {}", signal_name(signal)),
        _ => "ended".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Starts `script` under `sh` in a new process group.
    fn sh(script: &str) -> Child {
        Child::spawn(&Spec {
            program: "sh".into(),
            args: vec!["-c".into(), script.into()],
            env: Vec::new(),
            cwd: std::env::temp_dir(),
            env_clear: false,
            sandbox: None,
        })
        .expect("start sh")
    }

    /// What a script writes after its first event line, `started`, as
    /// [`Child::next`] hands it on when it is all waiting by the time the
    /// wait after that light round begins (a plain round would read the
    /// text first).
    fn after_a_light_round(script: &str) -> Vec<String> {
        let mut child = sh(&format!(
            r#"
            printf '{{"ev":"started","id":"a"}}\n' >"/dev/fd/$TCRUNNER_EVENT_FD"
            sleep 0.2
            {script}
            "#
        ));
        let limit = Some(Duration::from_secs(10));
        loop {
            match child.next(limit) {
                Some(Input::Event(line)) => {
                    assert_eq!(line, br#"{"ev":"started","id":"a"}"#);
                    break;
                }
                Some(Input::Stdout(text)) | Some(Input::Stderr(text)) => {
                    panic!("text first: {}", String::from_utf8_lossy(&text))
                }
                Some(_) => {}
                None => panic!("no event within the limit"),
            }
        }
        // Both the event line and the text are waiting after this.
        thread::sleep(Duration::from_millis(1500));
        let mut order = Vec::new();
        while !(child.streams_closed() && child.exited) {
            match child.next(limit).expect("input within the limit") {
                Input::Event(line) => order.push(String::from_utf8(line).unwrap()),
                Input::Stdout(text) => order.push(String::from_utf8(text).unwrap()),
                _ => {}
            }
        }
        order
    }

    /// Event lines left to gather come before text written after them.
    #[test]
    fn gathered_event_lines_come_before_text_written_after_them() {
        let order = after_a_light_round(
            r#"
            printf '{"ev":"finished","id":"a"}\n' >"/dev/fd/$TCRUNNER_EVENT_FD"
            printf 'printed after\n'
            "#,
        );
        assert_eq!(order, [r#"{"ev":"finished","id":"a"}"#, "printed after\n"]);
    }

    /// Text written before a gathered event line comes before it when a
    /// `written` line says so, though the pause read the event pipe first;
    /// the `written` line itself is not passed on.
    #[test]
    fn a_written_line_puts_the_text_before_it_first() {
        let order = after_a_light_round(
            r#"
            printf 'printed first\n'
            printf '{"ev":"written","stdout":14,"stderr":0}\n{"ev":"finished","id":"a"}\n' \
                >"/dev/fd/$TCRUNNER_EVENT_FD"
            printf 'printed after\n'
            "#,
        );
        assert_eq!(
            order.concat(),
            "printed first\n{\"ev\":\"finished\",\"id\":\"a\"}printed after\n"
        );
    }
}
