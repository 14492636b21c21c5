//! An output written from a thread of its own: stdout, the IDE's socket,
//! stderr. A reader that stops reading (an IDE that hangs, a harness that
//! reads stdout only after the run) then holds that thread in its write,
//! never the run loop, which goes on enforcing the time limits and
//! answering signals. What the reader has not taken yet waits in memory;
//! past [`Outlet::FULL`] of it the run loop stops reading the framework,
//! whose own pipes then slow it down, as a blocking write did.
use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The writing end: every clone appends to the same queue.
#[derive(Clone)]
pub(crate) struct Outlet {
    shared: Arc<Shared>,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Told when the queue gets bytes (the thread waits on it).
    filled: Condvar,
    /// Told when the queue is empty again, or the write failed.
    emptied: Condvar,
}

#[derive(Default)]
struct Queue {
    /// Written to the outlet, not yet taken by its thread.
    pending: Vec<u8>,
    /// Taken by the thread and being written.
    in_flight: usize,
    /// The write that failed: every write after it fails the same way,
    /// and what was queued is dropped (its reader is gone).
    failed: Option<(io::ErrorKind, String)>,
}

impl Outlet {
    /// How much may wait for a reader before the run loop stops reading
    /// the framework: enough for a burst of messages a busy IDE takes a
    /// moment over, little beside a test run's memory.
    pub(crate) const FULL: usize = 8 << 20;

    /// Starts the thread that writes to `sink`.
    pub(crate) fn spawn(name: &str, sink: impl Write + Send + 'static) -> io::Result<Outlet> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            filled: Condvar::new(),
            emptied: Condvar::new(),
        });
        let writer = Arc::clone(&shared);
        // Never joined: one blocked for good ends with the process.
        std::thread::Builder::new()
            .name(name.to_owned())
            .spawn(move || writer.write_out(sink))?;
        Ok(Outlet { shared })
    }

    /// Bytes written to the outlet that its reader has not taken yet.
    pub(crate) fn backlog(&self) -> usize {
        let queue = self.shared.lock();
        queue.pending.len() + queue.in_flight
    }

    /// Waits until everything written so far has been taken by the reader,
    /// or the writing failed (true), or until `until` (false).
    pub(crate) fn drain(&self, until: Instant) -> bool {
        let mut queue = self.shared.lock();
        loop {
            if queue.failed.is_some() || queue.pending.is_empty() && queue.in_flight == 0 {
                return true;
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            queue = match self.shared.emptied.wait_timeout(queue, left) {
                Ok((queue, _)) => queue,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }

    /// Waits until the reader has taken everything; the error of a write
    /// that failed, if one did.
    pub(crate) fn finish(&self) -> io::Result<()> {
        while !self.drain(Instant::now() + Duration::from_secs(3600)) {}
        self.error()
    }

    /// The error of a write that failed, if one did.
    pub(crate) fn error(&self) -> io::Result<()> {
        Outlet::failure(&self.shared.lock())
    }

    fn failure(queue: &Queue) -> io::Result<()> {
        match &queue.failed {
            Some((kind, text)) => Err(io::Error::new(*kind, text.clone())),
            None => Ok(()),
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The thread: takes the whole queue, writes it, and again, until a
    /// write fails.
    fn write_out(&self, mut sink: impl Write) {
        let mut taken = Vec::new();
        loop {
            {
                let mut queue = self.lock();
                while queue.pending.is_empty() {
                    queue = self.filled.wait(queue).unwrap_or_else(|e| e.into_inner());
                }
                std::mem::swap(&mut queue.pending, &mut taken);
                queue.in_flight = taken.len();
            }
            let written = sink.write_all(&taken).and_then(|()| sink.flush());
            taken.clear();
            let mut queue = self.lock();
            queue.in_flight = 0;
            if let Err(error) = written {
                queue.failed = Some((error.kind(), error.to_string()));
                queue.pending = Vec::new();
                self.emptied.notify_all();
                return;
            }
            if queue.pending.is_empty() {
                self.emptied.notify_all();
            }
        }
    }
}

/// Never blocks: the bytes are queued for the thread. A failed write of
/// the thread's is this write's error, or the next one's.
impl Write for Outlet {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut queue = self.shared.lock();
        Outlet::failure(&queue)?;
        let was_empty = queue.pending.is_empty();
        queue.pending.extend_from_slice(buf);
        drop(queue);
        // Otherwise the thread is writing, and takes the rest when done.
        if was_empty {
            self.shared.filled.notify_one();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Outlet::failure(&self.shared.lock())
    }
}

/// tcrunner's stderr through an outlet, started by the first call: the
/// framework's stderr and tcrunner's own lines then go the same way, in
/// their order.
pub(crate) fn stderr() -> io::Result<Outlet> {
    STDERR
        .get_or_init(|| Outlet::spawn("stderr", io::stderr()).ok())
        .clone()
        .ok_or_else(|| io::Error::other("cannot start the thread that writes stderr"))
}

static STDERR: std::sync::OnceLock<Option<Outlet>> = std::sync::OnceLock::new();

/// Writes a line of tcrunner's own to stderr: after what [`stderr`] was
/// given, if it was started. A closed stderr is no reason to fail.
pub(crate) fn stderr_line(line: &str) {
    match STDERR.get().and_then(Option::as_ref) {
        Some(outlet) => {
            let _ = outlet.clone().write_all(format!("{line}\n").as_bytes());
        }
        None => {
            let _ = writeln!(io::stderr().lock(), "{line}");
        }
    }
}

/// Gives stderr's outlet, if started, up to `wait` to write out what it
/// holds: before tcrunner exits, which ends its thread.
pub(crate) fn flush_stderr(wait: Duration) {
    if let Some(outlet) = STDERR.get().and_then(Option::as_ref) {
        outlet.drain(Instant::now() + wait);
    }
}

/// How long [`drain_all`] waits between looks at `stop`.
const LOOK: Duration = Duration::from_millis(50);

/// Waits until every outlet's reader has taken what it was given, until
/// `until`, or until `stop` says to. Returns the bytes left untaken.
pub(crate) fn drain_all(
    outlets: &[Outlet],
    until: Option<Instant>,
    mut stop: impl FnMut() -> bool,
) -> usize {
    for outlet in outlets {
        loop {
            let now = Instant::now();
            let look = until.map_or(now + LOOK, |until| until.min(now + LOOK));
            if outlet.drain(look) || until.is_some_and(|until| look >= until) || stop() {
                break;
            }
        }
    }
    outlets.iter().map(|outlet| outlet.backlog()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;

    #[test]
    fn writes_never_wait_for_the_reader_and_reach_it_in_order() {
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        let mut outlet = Outlet::spawn("test", ours).unwrap();
        // Far more than a socket buffer holds: the reader reads nothing yet.
        let line = [b'x'; 1023];
        let started = Instant::now();
        for _ in 0..4096 {
            outlet.write_all(&line).unwrap();
            outlet.write_all(b"\n").unwrap();
        }
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(outlet.backlog() > 1 << 20, "{}", outlet.backlog());
        assert!(!outlet.drain(Instant::now() + Duration::from_millis(50)));
        let reader = std::thread::spawn(move || {
            let mut got = vec![0; 4096 * 1024];
            theirs.read_exact(&mut got).unwrap();
            got
        });
        assert!(outlet.drain(Instant::now() + Duration::from_secs(30)));
        assert_eq!(outlet.backlog(), 0);
        let got = reader.join().unwrap();
        assert!(got
            .chunks(1024)
            .all(|chunk| chunk[..1023] == line[..] && chunk[1023] == b'\n'));
    }

    #[test]
    fn a_reader_gone_is_a_closed_pipe_on_a_later_write() {
        let (ours, theirs) = UnixStream::pair().unwrap();
        let mut outlet = Outlet::spawn("test", super::super::Socket::Unix(ours)).unwrap();
        drop(theirs);
        let error = (0..100)
            .find_map(|_| {
                std::thread::sleep(Duration::from_millis(10));
                outlet.write_all(b"x\n").and_then(|()| outlet.flush()).err()
            })
            .expect("the write fails");
        assert_eq!(error.kind(), io::ErrorKind::BrokenPipe);
        assert!(outlet.drain(Instant::now()));
    }

    #[test]
    fn draining_all_stops_at_the_deadline_or_when_told() {
        let (ours, _theirs) = UnixStream::pair().unwrap();
        let mut outlet = Outlet::spawn("test", ours).unwrap();
        outlet.write_all(&vec![b'x'; 4 << 20]).unwrap();
        let started = Instant::now();
        let left = drain_all(
            std::slice::from_ref(&outlet),
            Some(started + Duration::from_millis(120)),
            || false,
        );
        assert!(left > 0);
        assert!(started.elapsed() >= Duration::from_millis(120));
        let mut looks = 0;
        let left = drain_all(std::slice::from_ref(&outlet), None, || {
            looks += 1;
            looks == 3
        });
        assert!(left > 0);
        assert_eq!(looks, 3);
    }
}
