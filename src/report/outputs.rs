//! The fan-out: every event of a run goes to the primary stream and to each
//! file output, each of which owns its formatting (as cargo-nextest's
//! reporter hands each event to its display and structured reporters).
//! Dispatch is static: a closed enum per kind, no trait objects on the hot
//! path.
use std::io::{self, Write};

use super::ctrf_file::CtrfFile;
use super::events_file::EventsFile;
use super::history_file::HistoryFile;
use super::human::Human;
use super::json_file::JsonFile;
use super::junit_file::JunitFile;
use super::output::{forward_output, Opened, Output, TreeEvent};
use super::stream::{ServiceMessages, SkipPassedOutput};
use crate::event::{Stream, TestEvent, TestResult};

/// What goes to stdout. One value per run, used by every event: kept
/// inline, not boxed, so the hot path reaches the stream directly.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Primary<W: Write> {
    /// Service messages, in the configured dialect.
    Messages(SkipPassedOutput<ServiceMessages<W>>),
    /// The human view (`--format human`).
    Human(Human<W>),
    /// Nothing: the run writes only its files (`--format none`).
    None,
}

/// An output written to a file beside the stream.
pub(crate) enum FileOutput {
    /// `--events-out`.
    Events(EventsFile),
    /// `--ctrf` (boxed: it holds its grader and records).
    Ctrf(Box<CtrfFile>),
    /// `--junit-xml` (boxed: it holds its records and suites).
    Junit(Box<JunitFile>),
    /// `--json` (boxed: it holds its grader and tallies).
    Json(Box<JsonFile>),
    /// The test history (`.tcrunner/`), merged in after the run.
    History(HistoryFile),
}

/// The primary stream plus the file outputs.
pub(crate) struct Outputs<W: Write> {
    primary: Primary<W>,
    files: Vec<FileOutput>,
    /// The primary stream failed (its reader went away, say): the error
    /// was returned once, so the run stops; from then on the stream is
    /// left out and the files still get everything until the end.
    stream_failed: Option<io::Error>,
}

impl<W: Write> Outputs<W> {
    pub(crate) fn new(primary: Primary<W>, files: Vec<FileOutput>) -> Self {
        Outputs {
            primary,
            files,
            stream_failed: None,
        }
    }

    /// Whether an output records what the sources send, not only the tree.
    pub(crate) fn records_sources(&self) -> bool {
        self.files
            .iter()
            .any(|file| matches!(file, FileOutput::Events(_)))
    }

    /// Runs `write` on the primary stream unless it failed before; a first
    /// failure is kept and returned.
    #[inline]
    fn primary(&mut self, write: impl FnOnce(&mut Primary<W>) -> io::Result<()>) -> io::Result<()> {
        match &mut self.primary {
            Primary::None => Ok(()),
            _ if self.stream_failed.is_some() => Ok(()),
            primary => write(primary).inspect_err(|e| {
                self.stream_failed = Some(io::Error::new(e.kind(), e.to_string()));
            }),
        }
    }

    /// Runs `write` on every file output; the first error is returned after
    /// all of them had their turn.
    #[inline]
    fn files(
        &mut self,
        mut write: impl FnMut(&mut FileOutput) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut result = Ok(());
        for file in &mut self.files {
            let written = write(file);
            if result.is_ok() {
                result = written;
            }
        }
        result
    }
}

impl<W: Write> Output for Outputs<W> {
    fn source(&mut self, event: &TestEvent) -> io::Result<()> {
        if self.files.is_empty() {
            return Ok(());
        }
        self.files(|file| file.source(event))
    }

    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        let primary = self.primary(|stream| stream.event(event));
        let files = self.files(|file| file.event(event));
        primary.and(files)
    }

    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        let primary = self.primary(|stream| stream.test(node, output, result));
        let files = self.files(|file| file.test(node, output, result));
        primary.and(files)
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        let primary = self.primary(|stream| stream.text(bytes));
        let files = self.files(|file| file.text(bytes));
        primary.and(files)
    }

    fn flush(&mut self) -> io::Result<()> {
        let primary = self.primary(Output::flush);
        let files = self.files(Output::flush);
        primary.and(files)
    }

    /// Finishes the stream and every file, whatever happened to the stream
    /// before; the stream's failure, if any, is the result.
    fn finish(&mut self) -> io::Result<()> {
        let primary = self.primary(Output::finish);
        let files = self.files(Output::finish);
        match self.stream_failed.take() {
            Some(failed) => Err(failed),
            None => primary.and(files),
        }
    }
}

forward_output!(impl<W: Write> for Primary<W> { Primary::Messages, Primary::Human; none: Primary::None });

forward_output!(impl<> for FileOutput {
    FileOutput::Events,
    FileOutput::Ctrf,
    FileOutput::Junit,
    FileOutput::Json,
    FileOutput::History
});
