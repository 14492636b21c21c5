//! The pipeline every source feeds: events go through the [`Tree`], which
//! assigns ids and decides what opens and closes, then to every output.
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::ctrf_file::CtrfFile;
use super::events_file::{EventsFile, RunLine};
use super::file::{AtomicFile, FileError};
use super::grading::{Grader, Groups, Status};
use super::human::Human;
use super::json_file::JsonFile;
use super::junit_file::JunitFile;
use super::output::{Opened, Output, RunEnd, RunStart, TreeEvent};
use super::outputs::{FileOutput, Outputs, Primary};
use super::stream::{ServiceMessages, SkipPassedOutput};
use super::summary::Summary;
use super::transport::Transport;
use crate::cli::{Dialect, OutputConfig};
use crate::event::{Node, Stream, TestEvent, TestResult};
use crate::tree::Tree;

/// Counts verdicts on their way to the outputs: the exit code is made from
/// them.
struct Counted<O> {
    inner: O,
    summary: Summary,
    /// A graded run's tally by group (a pass policy decides from it).
    graded: Option<(Grader, Groups)>,
}

impl<O> Counted<O> {
    #[inline]
    fn grade(&mut self, node: &Node, status: Status) {
        if let Some((grader, groups)) = &mut self.graded {
            groups.count(grader.group(node.file.as_deref(), &node.tags), status);
        }
    }
}

impl<O: Output> Output for Counted<O> {
    #[inline]
    fn source(&mut self, event: &TestEvent) -> io::Result<()> {
        self.inner.source(event)
    }

    #[inline]
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::Finished { result, node } => {
                self.summary.count(result.outcome);
                self.grade(node.node, Status::of(result.outcome));
            }
            TreeEvent::Stopped(node) => {
                self.summary.stopped += 1;
                self.grade(node.node, Status::Error);
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
            | TreeEvent::RunEnded(_) => {}
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
        self.grade(node.node, Status::of(result.outcome));
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

/// Two file outputs `config` names one file with, as `--json x.json: --ctrf
/// names it too`: each would write over the other.
pub(crate) fn shared_output_path(config: &OutputConfig) -> Option<String> {
    let named = [
        ("--events-out", &config.events_out),
        ("--ctrf", &config.ctrf),
        ("--junit-xml", &config.junit_xml),
        ("--json", &config.grading.json),
    ];
    let mut seen: Vec<(&str, PathBuf)> = Vec::new();
    for (option, path) in named {
        let Some(path) = path else { continue };
        let same = same_file_key(path);
        if let Some((first, _)) = seen.iter().find(|(_, key)| *key == same) {
            return Some(format!("{option} {}: {first} names it too", path.display()));
        }
        seen.push((option, same));
    }
    None
}

/// What two paths naming one file have in common: the canonical folder
/// (links resolved) and the file's name.
fn same_file_key(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    match (absolute.parent(), absolute.file_name()) {
        (Some(folder), Some(name)) => std::fs::canonicalize(folder)
            .map(|folder| folder.join(name))
            .unwrap_or(absolute),
        _ => absolute,
    }
}

/// Opens the file outputs `config` asks for, before anything runs: a path
/// that cannot be written stops the run before it starts.
pub(crate) fn open_files(config: &OutputConfig) -> Result<Vec<FileOutput>, FileError> {
    let mut files = Vec::new();
    if let Some(path) = &config.events_out {
        let run = RunLine {
            collect_only: config.collect_only,
            block_service_messages: config.block_service_messages,
        };
        let events = open_file("--events-out", path, |file| EventsFile::create(file, run))?;
        files.push(FileOutput::Events(events));
    }
    if let Some(path) = &config.ctrf {
        let grader = config.grading.grader.clone();
        let ctrf = open_file("--ctrf", path, |file| CtrfFile::create(file, grader))?;
        files.push(FileOutput::Ctrf(Box::new(ctrf)));
    }
    if let Some(path) = &config.junit_xml {
        files.push(FileOutput::Junit(Box::new(open_file(
            "--junit-xml",
            path,
            JunitFile::create,
        )?)));
    }
    if let Some(path) = &config.grading.json {
        let grader = config.grading.grader.clone();
        let json = open_file("--json", path, |file| JsonFile::create(file, grader))?;
        files.push(FileOutput::Json(Box::new(json)));
    }
    Ok(files)
}

/// Creates the file an output option names and the output writing it; a
/// failure to do either names the option and the path.
fn open_file<T>(
    option: &'static str,
    path: &Path,
    create: impl FnOnce(AtomicFile) -> io::Result<T>,
) -> Result<T, FileError> {
    let file = AtomicFile::create(option, path)?;
    create(file).map_err(|source| FileError {
        option,
        path: path.to_path_buf(),
        source,
    })
}

/// Events in, every output out.
pub(crate) struct Pipeline<W: Write> {
    tree: Tree,
    outputs: Counted<Outputs<W>>,
}

impl<W: Write> Pipeline<W> {
    /// Starts the outputs: the stream's opening messages are written.
    pub(crate) fn new(
        config: &OutputConfig,
        out: Transport<W>,
        files: Vec<FileOutput>,
    ) -> io::Result<Self> {
        let primary = if config.dialect == Dialect::Human {
            Primary::Human(Human::new(config.human, out.into_text()))
        } else {
            match ServiceMessages::start(config, out)? {
                Some(stream) => {
                    Primary::Messages(SkipPassedOutput::new(stream, config.skip_passed_output))
                }
                None => Primary::None,
            }
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
                graded: config
                    .grading
                    .graded
                    .then(|| (config.grading.grader.clone(), Groups::default())),
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

    /// The run begins: every output is told what runs, before anything
    /// else.
    pub(crate) fn start_run(&mut self, start: &RunStart) -> io::Result<()> {
        self.outputs.event(TreeEvent::RunStarted(start))
    }

    /// Ends the outputs: closes every open node (unfinished tests as
    /// stopped), tells every output how the run ended (`end` makes that
    /// from what was reported and its tally by group, when graded), writes
    /// each output's end. Returns what was reported and the end; every
    /// output gets its end even when one of these steps failed.
    pub(crate) fn finish(
        mut self,
        end: impl FnOnce(&Summary, Option<&Groups>) -> RunEnd,
    ) -> io::Result<(Summary, RunEnd)> {
        let closed = self.tree.close_all(&mut self.outputs);
        if closed.is_err() {
            // The stream failed on one node; the files still get the rest
            // (the stream is left out from now on).
            let _ = self.tree.close_all(&mut self.outputs);
        }
        let groups = self.outputs.graded.as_ref().map(|(_, groups)| groups);
        let mut end = end(&self.outputs.summary, groups);
        end.groups = groups.cloned();
        let ended = self.outputs.event(TreeEvent::RunEnded(&end));
        let finished = self.outputs.finish();
        closed.and(ended).and(finished)?;
        Ok((self.outputs.summary, end))
    }
}
