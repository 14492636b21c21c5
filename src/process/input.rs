//! What the framework process did, as the run loop receives it: the one type
//! the pipe reader produces and [`Child`](super::Child) hands out.
use std::process::ExitStatus;

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
