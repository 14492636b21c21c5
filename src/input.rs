//! The stream `check` and `view` read: the FILE a command names, or
//! standard input for `-` or none, handed on in chunks as it arrives.
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::exit;

/// How much is read at a time.
const CHUNK: usize = 64 * 1024;

/// Why a command could not read its stream, or write what it made of it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StreamError {
    /// The input does not exist or cannot be opened.
    #[error("cannot open {}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// Reading the input failed part way (or it is a directory).
    #[error("cannot read {name}")]
    Read {
        name: String,
        #[source]
        source: io::Error,
    },
    /// The input is UTF-16 text.
    #[error("{name}: UTF-16 text: convert it to UTF-8 first (e.g. `iconv -f UTF-16 -t UTF-8`)")]
    Utf16 { name: String },
    /// Writing failed for a reason other than a closed pipe; `what` says
    /// what was being written.
    #[error("{what}")]
    Write {
        what: &'static str,
        #[source]
        source: io::Error,
    },
}

impl StreamError {
    /// The process exit code for this error.
    pub(crate) fn exit_code(&self) -> i32 {
        match self {
            StreamError::Open { .. } | StreamError::Read { .. } => exit::NO_INPUT,
            StreamError::Utf16 { .. } => exit::DATA_ERROR,
            StreamError::Write { .. } => exit::IO_ERROR,
        }
    }
}

/// Hands each chunk of the stream `file` names (standard input when
/// `None`) to `take`, as it arrives.
pub(crate) fn each_chunk(
    file: Option<&Path>,
    take: impl FnMut(&[u8]) -> Result<(), StreamError>,
) -> Result<(), StreamError> {
    let (input, name) = open(file)?;
    chunks(input, &name, take)
}

/// The stream `file` names, or standard input, and its name for errors.
fn open(file: Option<&Path>) -> Result<(Source, String), StreamError> {
    match file {
        Some(path) => {
            let input = File::open(path).map_err(|source| StreamError::Open {
                path: path.to_path_buf(),
                source,
            })?;
            Ok((Source::File(input), path.display().to_string()))
        }
        None => Ok((Source::Stdin(io::stdin()), "standard input".to_owned())),
    }
}

/// A stream being read: a file, or standard input.
enum Source {
    File(File),
    Stdin(io::Stdin),
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(file) => file.read(buf),
            Source::Stdin(stdin) => stdin.read(buf),
        }
    }
}

impl std::os::fd::AsFd for Source {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        match self {
            Source::File(file) => file.as_fd(),
            Source::Stdin(stdin) => stdin.as_fd(),
        }
    }
}

/// What [`each_chunk_watching`] does between chunks.
pub(crate) struct Watch<'a> {
    /// The read end of tcrunner's signal pipe ([`crate::process::listen_for_signals`]).
    pub signals: Option<std::os::fd::BorrowedFd<'a>>,
    /// How long to wait for input before `take` is told none came.
    pub tick: std::time::Duration,
}

/// [`each_chunk`] for a reader that also keeps time: `take` gets `None`
/// whenever no input came for a tick, and a signal tcrunner receives ends
/// the reading. Returns the signal's number, if one ended it.
pub(crate) fn each_chunk_watching(
    file: Option<&Path>,
    watch: &Watch<'_>,
    mut take: impl FnMut(Option<&[u8]>) -> Result<(), StreamError>,
) -> Result<Option<i32>, StreamError> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    let (mut input, name) = open(file)?;
    let tick = Timespec {
        tv_sec: watch.tick.as_secs() as i64,
        tv_nsec: i64::from(watch.tick.subsec_nanos()),
    };
    let mut reader = ChunkReader::new(&name);
    loop {
        let mut fds = vec![PollFd::new(&input, PollFlags::IN)];
        if let Some(signals) = &watch.signals {
            fds.push(PollFd::new(signals, PollFlags::IN));
        }
        match rustix::event::poll(&mut fds, Some(&tick)) {
            Ok(0) => {
                take(None)?;
                continue;
            }
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                return Err(StreamError::Read {
                    name,
                    source: e.into(),
                })
            }
        }
        let (input_ready, signalled) = (
            !fds[0].revents().is_empty(),
            fds.get(1).is_some_and(|fd| !fd.revents().is_empty()),
        );
        if signalled {
            let mut byte = [0u8; 1];
            let signal = watch
                .signals
                .and_then(|fd| rustix::io::read(fd, &mut byte).ok())
                .filter(|&n| n == 1)
                .map(|_| i32::from(byte[0]));
            if signal.is_some() {
                return Ok(signal);
            }
        }
        if input_ready {
            // Standard input's own buffer is passed by: reads of a chunk
            // are longer than it, so nothing waits there unseen by `poll`.
            match reader.read(&mut input) {
                Ok(Some(chunk)) => take(Some(chunk))?,
                Ok(None) => return Ok(None),
                // A standard input left non-blocking: wait for it again.
                Err(StreamError::Read { source, .. })
                    if source.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Hands each chunk of `input` (called `name` in errors) to `take`.
pub(crate) fn chunks(
    mut input: impl Read,
    name: &str,
    mut take: impl FnMut(&[u8]) -> Result<(), StreamError>,
) -> Result<(), StreamError> {
    let mut reader = ChunkReader::new(name);
    while let Some(chunk) = reader.read(&mut input)? {
        take(chunk)?;
    }
    Ok(())
}

/// Reads a stream a chunk at a time, refusing UTF-16 at its start.
struct ChunkReader<'a> {
    name: &'a str,
    buf: Vec<u8>,
    first: bool,
}

impl<'a> ChunkReader<'a> {
    fn new(name: &'a str) -> Self {
        ChunkReader {
            name,
            buf: vec![0; CHUNK],
            first: true,
        }
    }

    /// The next chunk of `input`; `None` at its end.
    fn read(&mut self, input: &mut impl Read) -> Result<Option<&[u8]>, StreamError> {
        let n = loop {
            match input.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => {
                    return Err(StreamError::Read {
                        name: self.name.to_owned(),
                        source,
                    })
                }
            }
        };
        // Service messages are ASCII: UTF-16 would be read as text alone.
        if std::mem::take(&mut self.first) && is_utf16(&self.buf[..n]) {
            return Err(StreamError::Utf16 {
                name: self.name.to_owned(),
            });
        }
        Ok((n > 0).then_some(&self.buf[..n]))
    }
}

/// UTF-16 text (PowerShell's `>` writes it): ASCII with every other byte
/// zero at the start, after a byte-order mark or without one. A mark alone
/// is not enough: a stream may begin with the raw bytes a test printed.
pub(crate) fn is_utf16(prefix: &[u8]) -> bool {
    let (body, little, big, least) = match prefix {
        [0xFF, 0xFE, rest @ ..] => (rest, true, false, 2),
        [0xFE, 0xFF, rest @ ..] => (rest, false, true, 2),
        _ => (prefix, true, true, 4),
    };
    let head = &body[..body.len().min(8) & !1];
    head.len() >= least
        && (little && head.chunks(2).all(|p| p[0] != 0 && p[1] == 0)
            || big && head.chunks(2).all(|p| p[0] == 0 && p[1] != 0))
}

#[cfg(test)]
mod tests {
    use super::is_utf16;

    #[test]
    fn utf16_is_told_by_its_text_not_by_a_mark_alone() {
        let text = "##teamcity[testStarted name='t']\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert!(is_utf16(&[&[0xFF, 0xFE][..], &le].concat()));
        assert!(is_utf16(&[&[0xFE, 0xFF][..], &be].concat()));
        assert!(is_utf16(&le) && is_utf16(&be));
        // A mark that disagrees with the text after it, or raw bytes a test
        // printed first (what the fuzzer found): a stream of our own.
        assert!(!is_utf16(&[&[0xFE, 0xFF][..], &le].concat()));
        assert!(!is_utf16(b"\xFE\xFF\xFF\xFF\xFF\xFF\xFF\xFF\n##teamcity["));
        assert!(!is_utf16(text.as_bytes()));
    }
}
