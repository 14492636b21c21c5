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
    match file {
        Some(path) => {
            let input = File::open(path).map_err(|source| StreamError::Open {
                path: path.to_path_buf(),
                source,
            })?;
            chunks(input, &path.display().to_string(), take)
        }
        None => chunks(io::stdin().lock(), "standard input", take),
    }
}

/// Hands each chunk of `input` (called `name` in errors) to `take`.
pub(crate) fn chunks(
    mut input: impl Read,
    name: &str,
    mut take: impl FnMut(&[u8]) -> Result<(), StreamError>,
) -> Result<(), StreamError> {
    let mut buf = vec![0; CHUNK];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(StreamError::Read {
                    name: name.to_owned(),
                    source,
                })
            }
        };
        take(&buf[..n])?;
    }
}
