//! The service-message stream: the dialect the run writes, and the output
//! it holds back for `--skip-passed-output`.
use std::io::{self, Write};

use super::intellij::Intellij;
use super::messages::MessageWriter;
use super::output::{forward_output, test_as_events, Opened, Output, TreeEvent};
use super::teamcity::Teamcity;
use super::transport::Transport;
use crate::cli::{Dialect, OutputConfig};
use crate::event::{Stream, TestEvent, TestResult, Verdict};
use crate::hash::FastMap;

/// The service messages of the configured dialect.
pub(crate) enum ServiceMessages<W: Write> {
    Intellij(Intellij<W>),
    Teamcity(Teamcity<W>),
}

impl<W: Write> ServiceMessages<W> {
    /// Starts the stream: writes and hands on the run's opening messages;
    /// `None` for a run with no stream.
    pub(crate) fn start(config: &OutputConfig, out: Transport<W>) -> io::Result<Option<Self>> {
        let writer = |out| MessageWriter::new(out, config);
        let mut stream = match config.dialect {
            Dialect::Intellij => ServiceMessages::Intellij(Intellij::start(
                writer(out),
                config.offset > 0,
                std::env::var_os("_jb_do_not_call_enter_matrix").is_some(),
                config.parallel,
            )?),
            Dialect::Teamcity => {
                ServiceMessages::Teamcity(Teamcity::start(writer(out), config.retry_support)?)
            }
            Dialect::Human | Dialect::None => return Ok(None),
        };
        stream.flush()?;
        Ok(Some(stream))
    }
}

// The stream's own source events are none: every message comes from the tree.
forward_output!(impl<W: Write> for ServiceMessages<W> { ServiceMessages::Intellij, ServiceMessages::Teamcity });

/// An output whose tests' captured output waits for their verdict and is
/// dropped when they pass (`--skip-passed-output`); without that option
/// it passes everything straight on.
pub(crate) struct SkipPassedOutput<O> {
    inner: O,
    /// Output held per running test, when passed tests' output is dropped.
    held: Option<FastMap<u64, Vec<(Stream, String)>>>,
}

impl<O: Output> SkipPassedOutput<O> {
    pub(crate) fn new(inner: O, skip: bool) -> Self {
        SkipPassedOutput {
            inner,
            held: skip.then(FastMap::default),
        }
    }

    /// Reports the output held for a test that ended, unless it passed.
    #[inline]
    fn release(&mut self, node: &Opened<'_>, passed: bool) -> io::Result<()> {
        match &mut self.held {
            // Nothing is held unless passed tests' output is dropped.
            None => Ok(()),
            Some(held) => match held.remove(&node.id) {
                Some(output) if !passed => self.report_held(node, output),
                _ => Ok(()),
            },
        }
    }

    #[cold]
    fn report_held(&mut self, node: &Opened<'_>, output: Vec<(Stream, String)>) -> io::Result<()> {
        for (stream, text) in output {
            self.inner.event(TreeEvent::Output {
                node: Some(node),
                stream,
                text: &text,
            })?;
        }
        Ok(())
    }
}

impl<O: Output> Output for SkipPassedOutput<O> {
    fn source(&mut self, event: &TestEvent) -> io::Result<()> {
        self.inner.source(event)
    }

    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::Output {
                node: Some(node),
                stream,
                text,
            } if node.is_test => {
                if let Some(held) = &mut self.held {
                    held.entry(node.id)
                        .or_default()
                        .push((stream, text.to_owned()));
                    return Ok(());
                }
                self.inner.event(event)
            }
            TreeEvent::Finished { node, result } => {
                self.release(node, result.outcome.verdict() == Verdict::Passed)?;
                self.inner.event(event)
            }
            TreeEvent::Stopped(node) => {
                self.release(node, false)?;
                self.inner.event(event)
            }
            // Listed, not `_`, so a new event is a compile error here too.
            TreeEvent::LiveOutput
            | TreeEvent::Count(_)
            | TreeEvent::Started(_)
            | TreeEvent::Output { .. }
            | TreeEvent::SuiteFinished(_)
            | TreeEvent::Log { .. }
            | TreeEvent::TreeSuite(_)
            | TreeEvent::TreeTest(_)
            | TreeEvent::TreeSuiteEnd(_)
            | TreeEvent::TreeEnded
            | TreeEvent::RunStarted(_)
            | TreeEvent::Hello { .. }
            | TreeEvent::RunEnded(_) => self.inner.event(event),
        }
    }

    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        if self.held.is_some() {
            // The test's output waits for its verdict: event by event.
            return test_as_events(self, node, output, result);
        }
        self.inner.test(node, output, result)
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.text(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.inner.finish()
    }
}
