//! Outputs: what a run's events become. [`Pipeline`] takes every source's
//! events through the tree to each output (the service-message stream,
//! the human view, and files beside them); [`output`] is the contract
//! between them; [`transport`] sends the stream's messages to stdout or to
//! the IDE's socket, each written by an [`outlet`]'s thread, so that a
//! reader that stops reading never stops the run.
mod ctrf_file;
mod events_file;
mod failures;
mod file;
mod grading;
mod history_file;
mod human;
mod intellij;
mod json_file;
mod junit_file;
mod messages;
mod outlet;
mod output;
mod outputs;
mod passthrough;
mod pipeline;
mod record;
mod stream;
mod style;
mod summary;
mod teamcity;
mod transport;

pub(crate) use events_file::RunLine;
pub(crate) use file::FileError;
pub(crate) use grading::{parse_rule, parse_scenario, Grader, Groups, PassPolicy};
pub(crate) use history_file::{HistoryFile, Ran};
pub(crate) use junit_file::TCRUNNER as JUNIT_ROOT;
pub(crate) use outlet::{drain_all, flush_stderr, stderr, stderr_line, Outlet};
pub(crate) use output::{Opened, Output, Problem, ProblemKind, RunEnd, RunStart, TreeEvent};
pub(crate) use outputs::FileOutput;
pub(crate) use passthrough::StderrText;
pub(crate) use pipeline::{open_files, shared_output_path, Pipeline};
pub(crate) use style::printable;
pub(crate) use summary::Summary;
pub(crate) use transport::{Socket, SocketError, Transport};
