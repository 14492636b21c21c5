//! Reads the framework's stdout, stderr and event pipe and hands what it
//! reads on in the order the framework wrote it, as far as that order can be
//! known. It runs on the run loop's own thread, so a burst of input costs
//! one wake-up.
//!
//! Two pipes have no common clock, but a write to a pipe is complete when
//! `write` returns: everything the framework wrote to stdout before it wrote
//! an event line is already in the stdout pipe when we read that line. So
//! before an event is passed on, the bytes stdout and stderr hold at that
//! moment (`FIONREAD`) are passed on first, and a test's printed output lands
//! before its `testFinished`, even a 10 MB line. `started` lines are passed
//! on at once: what a test prints comes after its start, and draining
//! first would pull it in front.
//!
//! That order is only as good as tcrunner is quick: text a test writes
//! straight to stdout (pytest's `-s`) just after the event before it can
//! be in the pipe by the time that event is read. So where tests write
//! there, the pytest reporter writes its event lines into stdout itself, in
//! frames: escape sequences `ESC _tcrunner;KEY;bytes ESC \` (an APC, which
//! terminals ignore) of at most `PIPE_BUF` bytes each, so that no other
//! writer to the pipe can land inside one. `KEY` is this run's
//! [`inband_key`]: a test printing such a sequence (or the stream of
//! another run) is only text. The frames' bytes, joined, are the event
//! lines; the one pipe keeps the exact order, and they are taken out of
//! the text here.
//!
//! A `written` line in the event pipe, `{"ev":"written","stdout":N,
//! "stderr":M}`, is such a point for the lines after it: the JS reporters
//! send one ahead of their next lines whenever their process wrote text
//! since their last send, counting its bytes (Node's `bytesWritten`). Those
//! bytes are in the pipes when the line is read, so the first N bytes of
//! stdout and M of stderr are passed on before the lines, also where the
//! lines are read late, after text written after them ([`Reader::catch_up`]).
//! Their first send carries one whatever the counts, and from then on the
//! counts place that process's text. What else the pipes hold is a process's
//! that writes to them straight (a child a test spawns with `stdio:
//! 'inherit'`): it is drained before a line that ends something (a test's
//! end), as above, but not before a test's start or declaration, and not
//! where a test's start was read after the line. There the lines were read
//! late, and the text is likelier the new test's: draining would pull it in
//! front of the lines, before the start of the test that wrote it.
//!
//! The converse, events before the text written after them, needs a point
//! that both orders share. A frame with no bytes is one: our reporters
//! write it into stdout after their last event line, before the framework
//! prints its closing text (pytest's summary, a coverage table). Every
//! event line written before the frame is in the event pipe when the frame
//! is read, so there the stdout after it waits, the event pipe is read
//! until it is empty, and only then does that text follow. Draining text
//! before an event line cannot pull it in front, however late the two
//! pipes are read: the drain stops at the frame.
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;

use super::input::Input;

/// Size of one read.
pub(super) const CHUNK: usize = 64 * 1024;

/// A read at least this big means the framework writes in bulk, not line by
/// line: see [`Reader::take_light_round`].
const BULK: usize = 16 * 1024;

/// What a frame of event bytes written into stdout starts with (then the
/// run's key and `;`) and ends with.
const INBAND_OPEN: &[u8] = b"\x1b_tcrunner;";
const INBAND_CLOSE: &[u8] = b"\x1b\\";

/// The environment variable that gives the reporter the run's key.
pub(crate) const INBAND_KEY_VAR: &str = "TCRUNNER_INBAND_KEY";

/// The longest stdout text kept waiting for the end of a frame: a frame is
/// one write of at most `PIPE_BUF` bytes, so an opening without an end
/// this far on is not one.
const INBAND_LIMIT: usize = 64 * 1024;

/// A key no test can know in advance: 16 hex digits from the standard
/// library's per-process random hash keys and the time.
pub(crate) fn inband_key() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdout,
    Stderr,
    Events,
}

struct Source {
    fd: Option<OwnedFd>,
    kind: Kind,
}

pub(super) struct Reader {
    /// stdout, stderr, events: in this order.
    sources: [Source; 3],
    buf: Vec<u8>,
    /// Holds a chunk of the event pipe while its lines are handled: passing
    /// on stdout and stderr first reads them into `buf`.
    events_buf: Vec<u8>,
    /// An event line read in part.
    line: Vec<u8>,
    /// Stdout read but not passed on: a frame there read in part.
    inband: Vec<u8>,
    /// `ESC _tcrunner;KEY;`: how this run's frames start.
    inband_open: Vec<u8>,
    /// Event bytes from frames, up to the end of a line.
    inband_line: Vec<u8>,
    /// An empty frame was read: the stdout after it (in `inband`) waits
    /// until the event pipe has been read dry ([`Reader::settle`]).
    synced: bool,
    /// Since the last [`Reader::take_light_round`]: whether event bytes were
    /// read, and the largest single read from any pipe.
    read_events: bool,
    largest_read: usize,
    /// Bytes read from stdout and stderr so far: what a `written` line's
    /// counts are measured against ([`Reader::catch_up`]).
    text_read: [u64; 2],
    /// A `written` line was read: the writer of the event lines counts the
    /// text its process writes, and that text goes before them by those
    /// counts; see [`Reader::drains_before`] for the rest.
    counted: bool,
    /// The start of a character the last read of stderr cut in two.
    stderr_cut: Vec<u8>,
}

impl Reader {
    /// The index of stderr among [`Reader::open_fds`].
    const STDERR: usize = 1;
    /// The index of the event pipe among [`Reader::open_fds`].
    pub(super) const EVENTS: usize = 2;

    /// A reader of the three pipes; it yields [`Input::Closed`] once for
    /// each. Frames in stdout carry `key`.
    pub(super) fn new(
        stdout: OwnedFd,
        stderr: OwnedFd,
        events: OwnedFd,
        key: &str,
    ) -> io::Result<Reader> {
        for fd in [&stdout, &stderr, &events] {
            set_nonblocking(fd)?;
        }
        let source = |fd, kind| Source { fd: Some(fd), kind };
        Ok(Reader {
            sources: [
                source(stdout, Kind::Stdout),
                source(stderr, Kind::Stderr),
                source(events, Kind::Events),
            ],
            buf: vec![0u8; CHUNK],
            events_buf: vec![0u8; CHUNK],
            line: Vec::new(),
            inband: Vec::new(),
            inband_open: [INBAND_OPEN, key.as_bytes(), b";"].concat(),
            inband_line: Vec::new(),
            synced: false,
            read_events: false,
            largest_read: 0,
            text_read: [0; 2],
            counted: false,
            stderr_cut: Vec::new(),
        })
    }

    /// The pipes still open, by index, for `poll`.
    pub(super) fn open_fds(&self) -> impl Iterator<Item = (usize, BorrowedFd<'_>)> + '_ {
        self.sources
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.fd.as_ref().map(|fd| (i, fd.as_fd())))
    }

    /// Reads one chunk from pipe `i`, which `poll` said is ready, into `out`.
    /// One chunk per ready pipe per round, so no pipe starves another.
    pub(super) fn read_ready(&mut self, i: usize, out: &mut VecDeque<Input>) {
        match self.sources[i].kind {
            Kind::Stdout | Kind::Stderr => {
                self.read_text(i, CHUNK, out);
            }
            Kind::Events => {
                self.read_events(out, true);
            }
        }
        self.settle(out);
    }

    /// After an empty frame in stdout: the event lines written before it,
    /// all in the event pipe by now, are passed on, then the stdout that
    /// followed it. Text is not drained before those lines: what stdout
    /// holds now was written after them.
    fn settle(&mut self, out: &mut VecDeque<Input>) {
        while self.synced {
            self.synced = false;
            while self.read_events(out, false) {}
            self.split_stdout(0, out);
        }
    }

    /// Reads what the event pipe holds, before text that arrived while its
    /// lines were left to gather: they were written before that text, but
    /// for the few written while we woke (see [`Child`](super::Child)'s
    /// pause), which a `written` line puts after it.
    pub(super) fn read_gathered_events(&mut self, out: &mut VecDeque<Input>) {
        self.read_events(out, false);
        self.settle(out);
    }

    /// Whether the reads since the last call took event lines in small
    /// pieces, as a framework writes them test by test: then the next wait
    /// may leave them a moment to gather. A bulk read (a burst of
    /// declarations, a flood of output) says the writer would fill the pipe
    /// in that moment and block.
    pub(super) fn take_light_round(&mut self) -> bool {
        let light = self.read_events && self.largest_read < BULK;
        self.read_events = false;
        self.largest_read = 0;
        light
    }

    /// Reads up to `limit` bytes from a text pipe; returns how many.
    fn read_text(&mut self, i: usize, limit: usize, out: &mut VecDeque<Input>) -> usize {
        let want = limit.min(CHUNK);
        match self.read(i, want, out) {
            Some(n) if n > 0 => {
                match self.sources[i].kind {
                    Kind::Stdout => self.split_stdout(n, out),
                    _ => {
                        // Whole characters, as on stdout: a test's stderr
                        // may become a message of its own.
                        let mut text = std::mem::take(&mut self.stderr_cut);
                        text.extend_from_slice(&self.buf[..n]);
                        let whole = text.len() - cut_char_len(&text);
                        self.stderr_cut = text.split_off(whole);
                        if !text.is_empty() {
                            out.push_back(Input::Stderr(text));
                        }
                    }
                }
                n
            }
            Some(_) if self.sources[i].kind == Kind::Stderr && !self.stderr_cut.is_empty() => {
                // The end of stderr: a character cut short is what it is.
                let closed = out.pop_back();
                out.push_back(Input::Stderr(std::mem::take(&mut self.stderr_cut)));
                out.extend(closed);
                0
            }
            Some(_)
                if self.sources[i].kind == Kind::Stdout
                    && !(self.inband.is_empty() && self.inband_line.is_empty()) =>
            {
                // The end of stdout: what waited for the rest of a frame is
                // text, and a last line without its newline still counts.
                let closed = out.pop_back();
                push_text(out, &std::mem::take(&mut self.inband));
                if !self.inband_line.is_empty() {
                    out.push_back(Input::Event(std::mem::take(&mut self.inband_line)));
                }
                out.extend(closed);
                0
            }
            _ => 0,
        }
    }

    /// Passes on the `n` bytes of stdout in `buf`: text, and the event lines
    /// framed in it. A frame read in part waits for the rest, a line in
    /// part for its next frames, and the text after an empty frame for
    /// [`Reader::settle`].
    fn split_stdout(&mut self, n: usize, out: &mut VecDeque<Input>) {
        let fresh = &self.buf[..n];
        if self.synced {
            self.inband.extend_from_slice(fresh);
            return;
        }
        if self.inband.is_empty() && memchr::memchr(0x1b, fresh).is_none() {
            // A character the read cut in two waits for its rest, so that
            // every piece of text is whole characters, whatever comes
            // between two pieces (an event, a line break before it).
            let whole = n - cut_char_len(fresh);
            push_text(out, &fresh[..whole]);
            self.inband = fresh[whole..].to_vec();
            return;
        }
        let mut bytes = std::mem::take(&mut self.inband);
        bytes.extend_from_slice(fresh);
        let opening = std::mem::take(&mut self.inband_open);
        let mut start = 0;
        loop {
            let rest = &bytes[start..];
            let Some(open) = memchr::memmem::find(rest, &opening) else {
                // The start of an opening at the end waits for the rest of
                // it, and so does a character cut in two.
                let keep = (1..opening.len())
                    .rev()
                    .find(|&k| rest.ends_with(&opening[..k]))
                    .unwrap_or(0)
                    .max(cut_char_len(rest));
                push_text(out, &rest[..rest.len() - keep]);
                self.inband = rest[rest.len() - keep..].to_vec();
                break;
            };
            push_text(out, &rest[..open]);
            let body = &rest[open + opening.len()..];
            match memchr::memmem::find(body, INBAND_CLOSE) {
                Some(0) => {
                    // A sync point: what follows waits for the event pipe.
                    self.inband = body[INBAND_CLOSE.len()..].to_vec();
                    self.synced = true;
                    break;
                }
                Some(end) => {
                    self.take_frame(&body[..end], out);
                    start += open + opening.len() + end + INBAND_CLOSE.len();
                }
                None if rest.len() - open > INBAND_LIMIT => {
                    // No end in sight: not one of ours.
                    push_text(out, &rest[open..]);
                    break;
                }
                None => {
                    self.inband = rest[open..].to_vec();
                    break;
                }
            }
        }
        self.inband_open = opening;
    }

    /// The bytes of one frame: the end of a line passes it on as an event.
    /// What stderr holds goes first, as for a line of the event pipe: the
    /// framework wrote it before the frame (a test's stderr under `-s`).
    fn take_frame(&mut self, bytes: &[u8], out: &mut VecDeque<Input>) {
        let mut rest = bytes;
        while let Some(end) = memchr::memchr(b'\n', rest) {
            self.inband_line.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.inband_line);
            if self.drains_before(&line, false) {
                self.drain(Self::STDERR, out);
            }
            out.push_back(Input::Event(line));
            rest = &rest[end + 1..];
        }
        self.inband_line.extend_from_slice(rest);
    }

    /// Passes on what stdout and stderr hold right now.
    fn drain_text(&mut self, out: &mut VecDeque<Input>) {
        for i in 0..2 {
            self.drain(i, out);
        }
    }

    /// Passes on what text pipe `i` holds right now.
    fn drain(&mut self, i: usize, out: &mut VecDeque<Input>) {
        if let Some(fd) = &self.sources[i].fd {
            let pending = pending_bytes(fd);
            self.pass_text(i, pending, out);
        }
    }

    /// Passes on up to `limit` bytes of text pipe `i`: fewer when it holds
    /// fewer, or when an empty frame leaves the rest of stdout waiting.
    fn pass_text(&mut self, i: usize, mut limit: usize, out: &mut VecDeque<Input>) {
        while limit > 0 && !self.synced {
            let n = self.read_text(i, limit, out);
            if n == 0 {
                break;
            }
            limit -= n.min(limit);
        }
    }

    /// Reads a chunk of event lines; returns whether there was one. With
    /// `drain`, text the other pipes hold is passed on before the first
    /// line that [`Reader::drains_before`].
    fn read_events(&mut self, out: &mut VecDeque<Input>, drain: bool) -> bool {
        let Some(n) = self.read(Self::EVENTS, CHUNK, out) else {
            return false;
        };
        if n == 0 {
            // End of the pipe: a last line without a newline still counts.
            if !self.line.is_empty() {
                let line = std::mem::take(&mut self.line);
                // It goes before the `Closed` that `read` just queued.
                let closed = out.pop_back();
                if drain && self.drains_before(&line, false) {
                    self.drain_text(out);
                }
                out.push_back(Input::Event(line));
                out.extend(closed);
            }
            return false;
        }
        // The chunk moves out of `buf`, which `drain_text` reads into.
        std::mem::swap(&mut self.buf, &mut self.events_buf);
        self.split_events(n, out, drain);
        std::mem::swap(&mut self.buf, &mut self.events_buf);
        true
    }

    /// Passes on the lines of the `n` bytes in `events_buf`, keeping an
    /// unfinished last line for the next chunk.
    ///
    /// Text is drained once, before the chunk's first line that
    /// [`Reader::drains_before`]: whatever reaches the text pipes after that
    /// was written after the chunk's lines, so draining again before a
    /// later line would only pull newer text in front of it.
    fn split_events(&mut self, n: usize, out: &mut VecDeque<Input>, drain: bool) {
        let mut start = 0;
        let mut drained = !drain;
        // Where the chunk's last test start is, found once: whether one
        // follows a line is then one comparison.
        let last_start = memchr::memmem::rfind(&self.events_buf[..n], STARTED_TAG);
        while let Some(end) = memchr::memchr(b'\n', &self.events_buf[start..n]) {
            self.line
                .extend_from_slice(&self.events_buf[start..start + end]);
            let line = std::mem::take(&mut self.line);
            start += end + 1;
            if let Some(written) = written_counts(&line) {
                self.counted = true;
                self.catch_up(written, out);
                continue;
            }
            let start_follows = last_start.is_some_and(|at| at >= start);
            if !drained && self.drains_before(&line, start_follows) {
                self.drain_text(out);
                drained = true;
            }
            out.push_back(Input::Event(line));
        }
        self.line.extend_from_slice(&self.events_buf[start..n]);
    }

    /// Whether the text the pipes hold goes before event `line`, read with
    /// a test's start after it or not. Not before a test's start: what a test prints comes
    /// after it. Where the writer counts its text (`counted`), its own text
    /// is placed by the counts, and the rest is drained only before a line
    /// that ends something with no test's start read after it: a start
    /// after it says the lines were read late, and a test spawned by the
    /// new test likelier wrote the text.
    fn drains_before(&self, line: &[u8], start_follows: bool) -> bool {
        if !self.counted {
            return !is_started(line);
        }
        const OPENING: [&[u8]; 3] = [STARTED_TAG, b"\"ev\":\"test\"", b"\"ev\":\"suite\""];
        let head = &line[..line.len().min(32)];
        let opens = OPENING
            .iter()
            .any(|tag| memchr::memmem::find(head, tag).is_some());
        !opens && !start_follows
    }

    /// Passes on stdout and stderr up to what the writer of a `written`
    /// line had written to them when it sent the lines after it: those
    /// bytes are in the pipes already (Node writes to a pipe before
    /// `write` returns), so they come before those lines even when the
    /// lines were read late, after text written later (see
    /// [`Child`](super::Child)'s pause). Counts that run ahead of the pipe
    /// (a write still queued) take what is there; bytes other processes
    /// wrote only make the count fall short, so nothing written after the
    /// line is pulled in front of it.
    fn catch_up(&mut self, written: [u64; 2], out: &mut VecDeque<Input>) {
        for (i, &count) in written.iter().enumerate() {
            let behind = count.saturating_sub(self.text_read[i]);
            self.pass_text(i, usize::try_from(behind).unwrap_or(usize::MAX), out);
        }
    }

    /// One read into `buf`: `Some(n)` bytes (0 at end of file, when the
    /// source is closed and [`Input::Closed`] queued), `None` when nothing
    /// is there now.
    fn read(&mut self, i: usize, want: usize, out: &mut VecDeque<Input>) -> Option<usize> {
        let fd = self.sources[i].fd.as_ref()?;
        loop {
            match rustix::io::read(fd, &mut self.buf[..want]) {
                Ok(0) => {}
                Ok(n) => {
                    self.largest_read = self.largest_read.max(n);
                    self.read_events |= i == Self::EVENTS;
                    if let Some(read) = self.text_read.get_mut(i) {
                        *read += n as u64;
                    }
                    return Some(n);
                }
                Err(Errno::INTR) => continue,
                Err(Errno::WOULDBLOCK) => return None,
                Err(_) => {}
            }
            // End of file, or an error that will not go away.
            self.sources[i].fd = None;
            out.push_back(Input::Closed);
            return Some(0);
        }
    }
}

/// How many bytes at the end of `text` start a UTF-8 character whose rest
/// has not been read yet (0 to 3).
fn cut_char_len(text: &[u8]) -> usize {
    for back in 1..=text.len().min(3) {
        let byte = text[text.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: the lead is further back
        }
        let len = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if len > back { back } else { 0 };
    }
    0
}

/// Queues `text` as stdout, unless it is empty.
fn push_text(out: &mut VecDeque<Input>, text: &[u8]) {
    if !text.is_empty() {
        out.push_back(Input::Stdout(text.to_vec()));
    }
}

/// Whether an event line is a test's start: `{"ev":"started",...}` as our
/// reporters write it (compact JSON, `ev` first).
fn is_started(line: &[u8]) -> bool {
    let head = &line[..line.len().min(32)];
    head.windows(STARTED_TAG.len()).any(|w| w == STARTED_TAG)
}

/// What a test's start holds (JSON escapes the quotes of any string value
/// that holds these bytes, so only the `ev` key can).
const STARTED_TAG: &[u8] = b"\"ev\":\"started\"";

/// The counts of a `written` line, `{"ev":"written","stdout":N,"stderr":M}`:
/// the bytes our JS reporters' process had written to its stdout and
/// stderr when it sent the lines that follow (docs/event-protocol.md).
fn written_counts(line: &[u8]) -> Option<[u64; 2]> {
    #[derive(serde::Deserialize)]
    struct Written {
        stdout: u64,
        stderr: u64,
    }
    if !line.starts_with(b"{\"ev\":\"written\",") {
        return None;
    }
    let written: Written = serde_json::from_slice(line).ok()?;
    Some([written.stdout, written.stderr])
}

/// Bytes waiting in a pipe.
fn pending_bytes(fd: &OwnedFd) -> usize {
    rustix::io::ioctl_fionread(fd).map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

pub(super) fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::event::{PollFd, PollFlags};
    use std::thread;

    /// Everything the reader hands out until all three pipes close.
    fn read_all(
        stdout: io::PipeReader,
        stderr: io::PipeReader,
        events: io::PipeReader,
    ) -> Vec<Input> {
        let mut reader = Reader::new(stdout.into(), stderr.into(), events.into(), "k3y").unwrap();
        let mut inputs = VecDeque::new();
        loop {
            let ready: Vec<usize> = {
                let open: Vec<(usize, BorrowedFd<'_>)> = reader.open_fds().collect();
                if open.is_empty() {
                    return inputs.into();
                }
                let mut fds: Vec<PollFd<'_>> = open
                    .iter()
                    .map(|(_, fd)| PollFd::new(fd, PollFlags::IN))
                    .collect();
                rustix::event::poll(&mut fds, None).unwrap();
                open.iter()
                    .zip(&fds)
                    .filter(|(_, fd)| !fd.revents().is_empty())
                    .map(|((i, _), _)| *i)
                    .collect()
            };
            for i in ready {
                reader.read_ready(i, &mut inputs);
            }
        }
    }

    /// What the reader makes of `stream` written into stdout a byte at a
    /// time (every cut a frame or a character can have), and the writer.
    fn read_stdout_byte_by_byte(stream: Vec<u8>) -> (Vec<Input>, thread::JoinHandle<()>) {
        use std::io::Write;
        let (out_r, mut out_w) = io::pipe().unwrap();
        let (err_r, err_w) = io::pipe().unwrap();
        let (ev_r, ev_w) = io::pipe().unwrap();
        let writer = thread::spawn(move || {
            for byte in stream {
                out_w.write_all(&[byte]).unwrap();
                thread::sleep(std::time::Duration::from_micros(50));
            }
            drop((out_w, err_w, ev_w));
        });
        (read_all(out_r, err_r, ev_r), writer)
    }

    /// Text comes out in whole characters however the reads cut it, beside
    /// frames or not; a character never completed still comes out at the
    /// end.
    #[test]
    fn stdout_text_comes_out_in_whole_characters() {
        let text = "aé€😀 é\u{1b}_tcrunner;k3y;{\"ev\":\"started\"}\n\u{1b}\\€😀";
        let (inputs, writer) = read_stdout_byte_by_byte([text.as_bytes(), b"\xC3"].concat());
        let mut pieces = Vec::new();
        let mut events = 0;
        for input in inputs {
            match input {
                Input::Stdout(bytes) => pieces.push(bytes),
                Input::Event(_) => events += 1,
                _ => {}
            }
        }
        writer.join().unwrap();
        let mut last = pieces.pop().unwrap();
        assert_eq!(last.pop(), Some(0xC3), "the cut character comes out last");
        pieces.push(last);
        let whole: Vec<String> = pieces
            .into_iter()
            .map(|p| String::from_utf8(p).expect("every piece is whole characters"))
            .collect();
        assert_eq!(whole.concat(), "aé€😀 é€😀");
        assert_eq!(events, 1);
    }

    /// Event lines framed in stdout come out in place, whole, however the
    /// reads cut them and however many frames a line takes, with text
    /// between frames passed on; frames without this run's key, and an
    /// opening without an end, are text after all.
    #[test]
    fn event_lines_in_stdout_keep_their_place() {
        let stream: Vec<u8> = [
            &b"before\x1b_tcrunner;k3y;{\"ev\":\"started\"}\n\x1b\\inside "[..],
            b"\x1b_tcrunner;k3y;{\"ev\":\"fini\x1b\\[other]\x1b_tcrunner;k3y;shed\"}\n\x1b\\",
            b"\x1b_tcrunner;{\"ev\":\"forged\"}\n\x1b\\",
            b"\x1b_tcrunner;other;{\"ev\":\"forged\"}\n\x1b\\",
            b"after \x1b_tcrunner;k3y;no end",
        ]
        .concat();
        let (inputs, writer) = read_stdout_byte_by_byte(stream);
        let mut seen = String::new();
        for input in inputs {
            match input {
                Input::Stdout(bytes) => seen.push_str(&String::from_utf8_lossy(&bytes)),
                Input::Event(line) => {
                    seen.push_str(&format!("<{}>", String::from_utf8_lossy(&line)))
                }
                _ => {}
            }
        }
        writer.join().unwrap();
        assert_eq!(
            seen,
            "before<{\"ev\":\"started\"}>inside [other]<{\"ev\":\"finished\"}>\
             \u{1b}_tcrunner;{\"ev\":\"forged\"}\n\u{1b}\\\
             \u{1b}_tcrunner;other;{\"ev\":\"forged\"}\n\u{1b}\\\
             after \u{1b}_tcrunner;k3y;no end"
        );
    }

    #[test]
    fn started_lines_are_told_apart() {
        assert!(is_started(br#"{"ev":"started","id":"t.py::a"}"#));
        assert!(!is_started(br#"{"ev":"finished","id":"t.py::started"}"#));
        assert!(!is_started(
            br#"{"ev":"output","id":"a","text":"\"ev\":\"started\""}"#
        ));
    }

    /// Several event lines in one chunk arrive whole even when text waiting
    /// on stdout is passed on between them (it is read into another buffer).
    #[test]
    fn event_lines_of_one_chunk_survive_draining_text_between_them() {
        use std::io::Write;
        let (out_r, mut out_w) = io::pipe().unwrap();
        let (err_r, err_w) = io::pipe().unwrap();
        let (ev_r, mut ev_w) = io::pipe().unwrap();
        // Room for all the text at once, so it is all waiting before the
        // reader starts: after its first chunk, more is left to drain.
        let grown = rustix::pipe::fcntl_setpipe_size(&out_w, 1 << 20).expect("F_SETPIPE_SZ");
        assert!(grown >= 1 << 20, "the pipe holds {grown} bytes");
        let text = vec![b'x'; 4 * CHUNK];
        out_w.write_all(&text).unwrap();
        let events = b"{\"ev\":\"finished\",\"id\":\"a\"}\n{\"ev\":\"suite_done\",\"id\":\"s\"}\n";
        ev_w.write_all(events).unwrap();
        drop((out_w, err_w, ev_w));
        let mut lines = Vec::new();
        let mut text_bytes = 0;
        for input in read_all(out_r, err_r, ev_r) {
            match input {
                Input::Stdout(bytes) => text_bytes += bytes.len(),
                Input::Event(line) => lines.push(String::from_utf8(line).unwrap()),
                _ => {}
            }
        }
        assert_eq!(text_bytes, text.len());
        assert_eq!(
            lines,
            [
                r#"{"ev":"finished","id":"a"}"#,
                r#"{"ev":"suite_done","id":"s"}"#
            ]
        );
    }

    /// Text written before an event line comes before it, however large;
    /// the event after text written later keeps its place.
    #[test]
    fn text_written_before_an_event_is_passed_on_first() {
        let (out_r, mut out_w) = io::pipe().unwrap();
        let (err_r, err_w) = io::pipe().unwrap();
        let (ev_r, mut ev_w) = io::pipe().unwrap();
        let writer = thread::spawn(move || {
            use std::io::Write;
            ev_w.write_all(b"{\"ev\":\"started\",\"id\":\"a\"}\n")
                .unwrap();
            out_w.write_all(&vec![b'x'; 1 << 20]).unwrap();
            ev_w.write_all(b"{\"ev\":\"finished\",\"id\":\"a\"}\n")
                .unwrap();
            drop((out_w, err_w, ev_w));
        });
        let mut text_before_finish = 0;
        let mut finished = false;
        for input in read_all(out_r, err_r, ev_r) {
            match input {
                Input::Stdout(bytes) => {
                    assert!(!finished, "text after the event");
                    text_before_finish += bytes.len();
                }
                Input::Event(line) if line.starts_with(b"{\"ev\":\"finished\"") => finished = true,
                _ => {}
            }
        }
        writer.join().unwrap();
        assert!(finished);
        assert_eq!(text_before_finish, 1 << 20);
    }

    /// Text after an empty frame comes after every event line written
    /// before the frame, though both wait when the reader comes (draining
    /// text before the first line would pull it in front); text before
    /// the frame still comes before those lines.
    #[test]
    fn text_after_an_empty_frame_waits_for_the_events_before_it() {
        use std::io::Write;
        let (out_r, mut out_w) = io::pipe().unwrap();
        let (err_r, err_w) = io::pipe().unwrap();
        let (ev_r, mut ev_w) = io::pipe().unwrap();
        out_w.write_all(b"printed first\n").unwrap();
        ev_w.write_all(b"{\"ev\":\"output\",\"id\":\"a\"}\n{\"ev\":\"finished\",\"id\":\"a\"}\n")
            .unwrap();
        out_w
            .write_all(b"\x1b_tcrunner;k3y;\x1b\\2 passed\n")
            .unwrap();
        drop((out_w, err_w, ev_w));
        let mut seen = Vec::new();
        for input in read_all(out_r, err_r, ev_r) {
            match input {
                Input::Stdout(bytes) => seen.push(String::from_utf8(bytes).unwrap()),
                Input::Event(line) => seen.push(format!("<{}>", String::from_utf8(line).unwrap())),
                _ => {}
            }
        }
        assert_eq!(
            seen.concat(),
            "printed first\n<{\"ev\":\"output\",\"id\":\"a\"}><{\"ev\":\"finished\",\"id\":\"a\"}>\
             2 passed\n"
        );
    }

    /// Once the writer counts its text, its lines read late keep their
    /// place before the text it wrote after them: the counts place the
    /// text, and nothing the pipes hold is drained in front of a test's
    /// start, or of a test's end read with the next test's start.
    #[test]
    fn counted_text_written_after_lines_read_late_stays_after_them() {
        use std::io::Write;
        let (out_r, mut out_w) = io::pipe().unwrap();
        let (err_r, err_w) = io::pipe().unwrap();
        let (ev_r, mut ev_w) = io::pipe().unwrap();
        let counts = |n: usize| format!("{{\"ev\":\"written\",\"stdout\":{n},\"stderr\":0}}\n");
        let test = "{\"ev\":\"test\"}\n{\"ev\":\"started\"}\n";
        ev_w.write_all(format!("{}{{\"ev\":\"hello\"}}\n", counts(0)).as_bytes())
            .unwrap();
        out_w.write_all(b"before\n").unwrap();
        ev_w.write_all(format!("{}{test}", counts(7)).as_bytes())
            .unwrap();
        out_w.write_all(b"inside\n").unwrap();
        ev_w.write_all(format!("{}{{\"ev\":\"finished\"}}\n{test}", counts(14)).as_bytes())
            .unwrap();
        out_w.write_all(b"next\n").unwrap();
        drop((out_w, err_w, ev_w));
        let mut reader = Reader::new(out_r.into(), err_r.into(), ev_r.into(), "k3y").unwrap();
        let mut inputs = VecDeque::new();
        // Both pipes wait: the event pipe is read first, as `Child` does.
        while reader.sources.iter().any(|s| s.fd.is_some()) {
            for i in [Reader::EVENTS, 0, 1] {
                if reader.sources[i].fd.is_some() {
                    reader.read_ready(i, &mut inputs);
                }
            }
        }
        assert_eq!(
            seen(inputs),
            "<{\"ev\":\"hello\"}>before\n<{\"ev\":\"test\"}><{\"ev\":\"started\"}>inside\n\
             <{\"ev\":\"finished\"}><{\"ev\":\"test\"}><{\"ev\":\"started\"}>next\n"
        );
    }

    /// Text the writer did not count (a child's it spawned with inherited
    /// stdio) still goes before a test's end read on its own.
    #[test]
    fn uncounted_text_goes_before_the_end_read_after_it() {
        use std::io::Write;
        let (out_r, mut out_w) = io::pipe().unwrap();
        let (err_r, err_w) = io::pipe().unwrap();
        let (ev_r, mut ev_w) = io::pipe().unwrap();
        let mut reader = Reader::new(out_r.into(), err_r.into(), ev_r.into(), "k3y").unwrap();
        let mut inputs = VecDeque::new();
        ev_w.write_all(b"{\"ev\":\"written\",\"stdout\":0,\"stderr\":0}\n{\"ev\":\"started\"}\n")
            .unwrap();
        reader.read_ready(Reader::EVENTS, &mut inputs);
        out_w.write_all(b"child\n").unwrap();
        ev_w.write_all(b"{\"ev\":\"finished\"}\n").unwrap();
        reader.read_ready(Reader::EVENTS, &mut inputs);
        drop((out_w, err_w, ev_w));
        assert_eq!(
            seen(inputs),
            "<{\"ev\":\"started\"}>child\n<{\"ev\":\"finished\"}>"
        );
    }

    /// Text and event lines as one string, each line in `<>`, stderr in `[]`.
    fn seen(inputs: VecDeque<Input>) -> String {
        inputs
            .into_iter()
            .filter_map(|input| match input {
                Input::Stdout(bytes) => Some(String::from_utf8(bytes).unwrap()),
                Input::Stderr(bytes) => Some(format!("[{}]", String::from_utf8(bytes).unwrap())),
                Input::Event(line) => Some(format!("<{}>", String::from_utf8(line).unwrap())),
                _ => None,
            })
            .collect()
    }

    /// What stderr holds when an event line framed in stdout is read goes
    /// before it, as before a line of the event pipe: a test under `-s`
    /// wrote it before its end, and reading stdout first must not put it
    /// after.
    #[test]
    fn stderr_goes_before_an_end_framed_in_stdout() {
        use std::io::Write;
        let (out_r, mut out_w) = io::pipe().unwrap();
        let (err_r, mut err_w) = io::pipe().unwrap();
        let (ev_r, ev_w) = io::pipe().unwrap();
        let mut reader = Reader::new(out_r.into(), err_r.into(), ev_r.into(), "k3y").unwrap();
        let mut inputs = VecDeque::new();
        out_w
            .write_all(b"\x1b_tcrunner;k3y;{\"ev\":\"started\"}\n\x1b\\")
            .unwrap();
        reader.read_ready(0, &mut inputs);
        err_w.write_all(b"said on stderr\n").unwrap();
        out_w
            .write_all(b"\x1b_tcrunner;k3y;{\"ev\":\"finished\"}\n\x1b\\")
            .unwrap();
        reader.read_ready(0, &mut inputs);
        drop((out_w, err_w, ev_w));
        assert_eq!(
            seen(inputs),
            "<{\"ev\":\"started\"}>[said on stderr\n]<{\"ev\":\"finished\"}>"
        );
    }

    /// A last event line without its newline still counts, and comes
    /// before the event pipe's `Closed` (after which the run may end).
    #[test]
    fn an_unfinished_last_line_comes_before_the_pipe_closes() {
        use std::io::Write;
        let (out_r, out_w) = io::pipe().unwrap();
        let (err_r, err_w) = io::pipe().unwrap();
        let (ev_r, mut ev_w) = io::pipe().unwrap();
        ev_w.write_all(b"{\"ev\":\"finished\",\"id\":\"a\"}")
            .unwrap();
        drop((out_w, err_w, ev_w));
        let inputs = read_all(out_r, err_r, ev_r);
        let event = inputs
            .iter()
            .position(
                |i| matches!(i, Input::Event(line) if line == br#"{"ev":"finished","id":"a"}"#),
            )
            .expect("the line is passed on");
        let closed = inputs.iter().filter(|i| matches!(i, Input::Closed)).count();
        assert_eq!(closed, 3);
        assert!(matches!(inputs.last(), Some(Input::Closed)));
        assert!(inputs[event + 1..]
            .iter()
            .all(|i| matches!(i, Input::Closed)));
    }
}
