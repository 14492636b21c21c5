//! Reporters: turn tree events into an output stream, one per dialect.
//!
//! [`Pipeline`] is what every source feeds: events go through the
//! [`Tree`](crate::tree::Tree), which assigns ids and decides what opens and
//! closes, then to the reporter of the configured dialect.
use std::io::{self, Write};

use crate::cli::OutputConfig;
use crate::event::{Outcome, TestEvent};

/// Counts of what a run reported, by outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
    pub xfailed: u64,
    pub xpassed: u64,
    pub todo: u64,
    /// Tests that started but never finished (closed as stopped).
    pub stopped: u64,
}

impl Summary {
    pub(crate) fn count(&mut self, outcome: Outcome) {
        let slot = match outcome {
            Outcome::Passed => &mut self.passed,
            Outcome::Failed => &mut self.failed,
            Outcome::Error => &mut self.errors,
            Outcome::Skipped => &mut self.skipped,
            Outcome::Xfail => &mut self.xfailed,
            Outcome::Xpass => &mut self.xpassed,
            Outcome::Todo => &mut self.todo,
        };
        *slot += 1;
    }

    /// Every test reported, whatever its outcome.
    pub(crate) fn total(&self) -> u64 {
        self.passed
            + self.failed
            + self.errors
            + self.skipped
            + self.xfailed
            + self.xpassed
            + self.todo
            + self.stopped
    }
}

/// Events in, service messages out: the tree plus the dialect's reporter.
pub(crate) struct Pipeline<W: Write> {
    out: W,
    config: OutputConfig,
    summary: Summary,
}

impl<W: Write> Pipeline<W> {
    /// Starts a stream: writes the run's opening messages.
    pub(crate) fn new(config: &OutputConfig, out: W) -> io::Result<Self> {
        Ok(Pipeline { out, config: config.clone(), summary: Summary::default() })
    }

    /// One event from a source.
    pub(crate) fn event(&mut self, event: TestEvent) -> io::Result<()> {
        let _ = (event, &mut self.out, &self.config);
        todo!()
    }

    /// Plain framework output, passed through as text lines.
    pub(crate) fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        let _ = bytes;
        todo!()
    }

    /// Ends the stream: closes every open node (unfinished tests as stopped)
    /// and returns what was reported.
    pub(crate) fn finish(self) -> io::Result<Summary> {
        Ok(self.summary)
    }
}
