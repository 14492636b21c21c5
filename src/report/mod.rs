//! Outputs: what a run's events become. [`Pipeline`] takes every source's
//! events through the tree to each output (the service-message stream,
//! and files beside it); [`output`] is the contract between them.
mod ctrf_file;
mod events_file;
mod file;
mod intellij;
mod junit_file;
mod messages;
mod output;
mod outputs;
mod passthrough;
mod pipeline;
mod record;
mod stream;
mod summary;
mod teamcity;

pub(crate) use events_file::RunLine;
pub(crate) use file::FileError;
pub(crate) use junit_file::TCRUNNER as JUNIT_ROOT;
pub(crate) use output::{Opened, Output, TreeEvent};
pub(crate) use pipeline::{open_files, Pipeline};
pub(crate) use summary::Summary;
