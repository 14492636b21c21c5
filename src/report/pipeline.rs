//! The pipeline every source feeds: events go through the [`Tree`], which
//! assigns ids and decides what opens and closes, then to every output.
use std::io::{self, Write};

use super::ctrf_file::CtrfFile;
use super::events_file::{EventsFile, RunLine};
use super::file::{AtomicFile, FileError};
use super::junit_file::JunitFile;
use super::output::{Opened, Output, TreeEvent};
use super::outputs::{FileOutput, Outputs, Primary};
use super::stream::{ServiceMessages, SkipPassedOutput};
use super::summary::Summary;
use crate::cli::OutputConfig;
use crate::event::{Node, Stream, TestEvent, TestResult};
use crate::tree::Tree;

/// Counts verdicts on their way to the outputs: the exit code is made from
/// them.
struct Counted<O> {
    inner: O,
    summary: Summary,
}

impl<O: Output> Output for Counted<O> {
    #[inline]
    fn source(&mut self, event: &TestEvent) -> io::Result<()> {
        self.inner.source(event)
    }

    #[inline]
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::Finished { result, .. } => self.summary.count(result.outcome),
            TreeEvent::Stopped(_) => self.summary.stopped += 1,
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
            | TreeEvent::TreeEnded => {}
        }
        self.inner.event(event)
    }

    #[inline]
    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        self.summary.count(result.outcome);
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

/// Opens the file outputs `config` asks for, before anything runs: a path
/// that cannot be written stops the run before it starts.
pub(crate) fn open_files(config: &OutputConfig) -> Result<Vec<FileOutput>, FileError> {
    let mut files = Vec::new();
    if let Some(path) = &config.events_out {
        let file = AtomicFile::create("--events-out", path)?;
        let run = RunLine {
            collect_only: config.collect_only,
            block_service_messages: config.block_service_messages,
        };
        let events = EventsFile::create(file, run).map_err(|source| FileError {
            option: "--events-out",
            path: path.clone(),
            source,
        })?;
        files.push(FileOutput::Events(events));
    }
    if let Some(path) = &config.ctrf {
        let file = AtomicFile::create("--ctrf", path)?;
        let ctrf = CtrfFile::create(file).map_err(|source| FileError {
            option: "--ctrf",
            path: path.clone(),
            source,
        })?;
        files.push(FileOutput::Ctrf(ctrf));
    }
    if let Some(path) = &config.junit_xml {
        let file = AtomicFile::create("--junit-xml", path)?;
        let junit = JunitFile::create(file).map_err(|source| FileError {
            option: "--junit-xml",
            path: path.clone(),
            source,
        })?;
        files.push(FileOutput::Junit(junit));
    }
    Ok(files)
}

/// Events in, every output out.
pub(crate) struct Pipeline<W: Write> {
    tree: Tree,
    outputs: Counted<Outputs<W>>,
}

impl<W: Write> Pipeline<W> {
    /// Starts the outputs: the stream's opening messages are written.
    pub(crate) fn new(config: &OutputConfig, out: W, files: Vec<FileOutput>) -> io::Result<Self> {
        let primary = match ServiceMessages::start(config, out)? {
            Some(stream) => {
                Primary::Messages(SkipPassedOutput::new(stream, config.skip_passed_output))
            }
            None => Primary::None,
        };
        Ok(Pipeline {
            tree: if config.collect_only {
                Tree::collect_only(config.offset)
            } else {
                Tree::new(config.offset)
            },
            outputs: Counted {
                inner: Outputs::new(primary, files),
                summary: Summary::default(),
            },
        })
    }

    /// For report files, whose suites get nothing after they are done
    /// ([`Tree::forget_done_suites`]).
    pub(crate) fn forget_done_suites(&mut self, forget: bool) {
        self.tree.forget_done_suites(forget);
    }

    /// One event from a source.
    pub(crate) fn event(&mut self, event: TestEvent) -> io::Result<()> {
        self.outputs.source(&event)?;
        self.tree.apply(event, &mut self.outputs)
    }

    /// The events of one test whose id is new, in one step
    /// ([`Tree::test`]), from the caller's buffers.
    pub(crate) fn test(
        &mut self,
        node: &Node,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()> {
        if self.outputs.inner.records_sources() {
            for event in crate::tree::test_events(node, output, result) {
                self.outputs.source(&event)?;
            }
        }
        self.tree.test(node, output, result, &mut self.outputs)
    }

    /// Plain framework output, passed through (tree-changing service
    /// messages in it are neutralised).
    pub(crate) fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.outputs.text(bytes)
    }

    /// Pushes what was written so far to the outputs' readers.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.outputs.flush()
    }

    /// Source ids of the tests running now, oldest first.
    pub(crate) fn running_tests(&self) -> Vec<String> {
        self.tree.running_tests()
    }

    /// Where an open node sits in the tree, by names (`a.test.js > block >
    /// test`), for telling the user of it: jest's and vitest's source ids
    /// are JSON.
    pub(crate) fn path_of(&self, source: &str) -> Option<String> {
        self.tree.path_of(source)
    }

    /// What has been reported so far.
    pub(crate) fn summary(&self) -> &Summary {
        &self.outputs.summary
    }

    /// Ends the outputs: closes every open node (unfinished tests as
    /// stopped), writes each output's end, and returns what was reported.
    pub(crate) fn finish(mut self) -> io::Result<Summary> {
        let closed = self.tree.close_all(&mut self.outputs);
        let finished = self.outputs.finish();
        closed.and(finished)?;
        Ok(self.outputs.summary)
    }
}
