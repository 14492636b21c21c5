//! Outputs: what a run's events become. [`Pipeline`] takes every source's
//! events through the tree to each output (the service-message stream,
//! the human view, and files beside them); [`output`] is the contract
//! between them.
mod events_file;
mod failures;
mod file;
mod human;
mod intellij;
mod messages;
mod output;
mod outputs;
mod passthrough;
mod pipeline;
mod stream;
mod style;
mod summary;
mod teamcity;

pub(crate) use events_file::RunLine;
pub(crate) use file::FileError;
pub(crate) use output::{Opened, Output, TreeEvent};
pub(crate) use pipeline::{open_files, Pipeline};
pub(crate) use summary::Summary;
