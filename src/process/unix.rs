//! Unix process control (process groups, inherited event pipe, signals).
use std::ffi::OsString;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::thread;
use std::time::{Duration, Instant};

use super::reader;

/// The environment variable naming the event pipe's file descriptor.
const EVENT_FD_VAR: &str = "TCRUNNER_EVENT_FD";

/// Inputs that may wait for the run loop. The readers block once it is
/// full, so a framework that writes faster than our consumer reads is slowed
/// down by its own pipe instead of growing our memory: at most this many
/// chunks of [`reader::CHUNK`] bytes (plus event lines, whatever their size) wait.
const QUEUE: usize = 64;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    pub env: Vec<(OsString, OsString)>,
    pub cwd: PathBuf,
}

/// Something the framework process did.
#[derive(Debug)]
pub(crate) enum Input {
    /// Bytes on its stdout.
    Stdout(Vec<u8>),
    /// Bytes on its stderr.
    Stderr(Vec<u8>),
    /// One line from the event side channel (without the newline).
    Event(Vec<u8>),
    /// The side channel, stdout or stderr reached end of file.
    Closed,
    /// The framework's main process exited.
    Exited(ExitStatus),
    /// tcrunner received this signal.
    Signal(i32),
}

/// A running framework process group.
pub(crate) struct Child {
    pgid: i32,
    rx: Receiver<Input>,
    /// Readers still open (stdout, stderr, events).
    open_streams: u8,
    /// The main process exited (its status was handed out).
    exited: bool,
}

impl Child {
    /// Starts `spec` in a new process group, with an event pipe at
    /// `$TCRUNNER_EVENT_FD`.
    pub(crate) fn spawn(spec: &Spec) -> io::Result<Child> {
        let (events_read, events_write) = io::pipe()?;
        let events_write: OwnedFd = events_write.into();
        let event_fd = events_write.as_raw_fd();
        let mut command = Command::new(&spec.program);
        command
            .args(&spec.args)
            .current_dir(&spec.cwd)
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .env(EVENT_FD_VAR, event_fd.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // SAFETY: the closure only calls fcntl, which is async-signal-safe,
        // on a descriptor that stays open until after spawn returns.
        unsafe {
            command.pre_exec(move || {
                if libc::fcntl(event_fd, libc::F_SETFD, 0) == -1 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn()?;
        // Our copy of the write end must go, or the reader never sees EOF.
        drop(events_write);
        let pgid = child.id() as i32;
        let (tx, rx) = mpsc::sync_channel(QUEUE);
        let stdout: OwnedFd = child.stdout.take().expect("piped").into();
        let stderr: OwnedFd = child.stderr.take().expect("piped").into();
        if let Err(e) = reader::spawn(stdout, stderr, events_read.into(), tx.clone()) {
            // SAFETY: kill has no memory effects; the pid is our new child's group.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            let _ = child.wait();
            return Err(e);
        }
        listen_for_signals(tx.clone());
        thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = tx.send(Input::Exited(status));
            }
        });
        Ok(Child {
            pgid,
            rx,
            open_streams: 3,
            exited: false,
        })
    }

    /// The next input, or `None` after `timeout`.
    pub(crate) fn next(&mut self, timeout: Option<Duration>) -> Option<Input> {
        let input = match timeout {
            Some(t) => match self.rx.recv_timeout(t) {
                Ok(input) => input,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => {
                    // Nothing can arrive any more: wait as asked, so callers never spin.
                    thread::sleep(t);
                    return None;
                }
            },
            None => self.rx.recv().ok()?,
        };
        match input {
            Input::Closed => self.open_streams -= 1,
            Input::Exited(_) => self.exited = true,
            _ => {}
        }
        Some(input)
    }

    /// Whether stdout, stderr and the side channel have all closed.
    pub(crate) fn streams_closed(&self) -> bool {
        self.open_streams == 0
    }

    /// Sends `signal` to every process in the group.
    pub(crate) fn signal(&self, signal: i32) {
        // SAFETY: kill has no memory effects; a negative pid names our group.
        unsafe {
            libc::kill(-self.pgid, signal);
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
            self.signal(libc::SIGKILL);
            return None;
        }
        self.signal(if grace.is_zero() {
            libc::SIGKILL
        } else {
            libc::SIGTERM
        });
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
        self.signal(libc::SIGKILL);
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
        self.signal(libc::SIGKILL);
    }
}

/// The write end of the self-pipe the signal handler writes to.
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(signal: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    if fd >= 0 {
        let byte = signal as u8;
        // SAFETY: write is async-signal-safe; the buffer is a local byte.
        unsafe {
            libc::write(fd, (&byte as *const u8).cast(), 1);
        }
    }
}

/// Turns SIGINT, SIGTERM and SIGHUP into [`Input::Signal`]s.
fn listen_for_signals(tx: SyncSender<Input>) {
    let Ok((read, write)) = io::pipe() else {
        return;
    };
    let write: OwnedFd = write.into();
    SIGNAL_PIPE.store(write.as_raw_fd(), Ordering::Relaxed);
    std::mem::forget(write); // lives as long as the handler may run
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
    thread::spawn(move || {
        let mut read = read;
        let mut byte = [0u8; 1];
        while let Ok(1) = read.read(&mut byte) {
            if tx.send(Input::Signal(i32::from(byte[0]))).is_err() {
                return;
            }
        }
    });
}

/// Whether the reader of our stdout went away: a pipe whose read end is
/// closed (`POLLERR`) or a hung-up terminal (`POLLHUP`). Writing would fail
/// with EPIPE, but a run whose tests are quiet writes nothing for a long
/// time; this lets it notice anyway. Files and `/dev/null` never report it.
pub(crate) fn stdout_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: one initialised pollfd and a count of one; a zero timeout never blocks.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready == 1 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
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
