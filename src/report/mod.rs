//! Outputs: what a run's events become. [`Pipeline`] takes every source's
//! events through the tree to each output (the service-message stream,
//! and files beside it); [`output`] is the contract between them;
//! [`transport`] sends the stream's messages to stdout or to the IDE's
//! socket.
mod events_file;
mod file;
mod intellij;
mod messages;
mod output;
mod outputs;
mod passthrough;
mod pipeline;
mod stream;
mod summary;
mod teamcity;
mod transport;

pub(crate) use events_file::RunLine;
pub(crate) use file::FileError;
pub(crate) use output::{Opened, Output, TreeEvent};
pub(crate) use pipeline::{open_files, Pipeline};
pub(crate) use summary::Summary;
pub(crate) use transport::{Socket, SocketError, Transport};
