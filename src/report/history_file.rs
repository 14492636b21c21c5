//! The test history as an output: every finished test's stable id, file,
//! verdict and duration, handed to the run, which merges them into the
//! history file once the run has ended (`src/history/`).
//!
//! A test's stable id is the one `--target` accepts: pytest's node id, and
//! for jest and vitest the file relative to the project, `::`, then the
//! describe titles and the test's title joined by ` > `.
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::output::{Opened, Output, TreeEvent};
use crate::event::{NodeKind, Verdict};
use crate::hash::FastMap;
use crate::history::{RanTest, Verdict as Recorded};

/// The tests a run finished, shared with the run that merges them.
pub(crate) type Ran = Arc<Mutex<Vec<RanTest>>>;

/// What is known of an open suite, to name the tests under it.
struct Suite {
    parent: u64,
    name: String,
    kind: NodeKind,
    file: Option<String>,
}

pub(crate) struct HistoryFile {
    ran: Ran,
    project: PathBuf,
    /// The framework's own ids are the stable ids (pytest's node ids).
    own_ids: bool,
    suites: FastMap<u64, Suite>,
    /// Tests that are open: a test under one is a subtest, which its
    /// test's verdict already carries and which cannot be run alone.
    tests: crate::hash::FastSet<u64>,
}

impl HistoryFile {
    pub(crate) fn new(ran: Ran, project: PathBuf, own_ids: bool) -> HistoryFile {
        HistoryFile {
            ran,
            project,
            own_ids,
            suites: FastMap::default(),
            tests: Default::default(),
        }
    }

    /// `file` relative to the project, with `/` between folders.
    fn relative(&self, file: &str) -> String {
        let path = std::path::Path::new(file);
        path.strip_prefix(&self.project)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }

    /// The stable id, file and whether it stands for its whole file; none
    /// for a node no file of the suite holds (tcrunner's own `pytest did
    /// not start`, pytest's `<internal error>`), which no run can select.
    fn name(&self, node: &Opened<'_>) -> Option<(String, String, bool)> {
        let source = node.node.id.as_str();
        let mut titles = vec![node.node.name.as_str()];
        let mut file = node.node.file.as_deref();
        let mut parent = node.parent;
        while let Some(suite) = self.suites.get(&parent) {
            if suite.kind == NodeKind::File || suite.kind == NodeKind::Dir {
                file = suite.file.as_deref().or(file);
                break;
            }
            titles.push(&suite.name);
            parent = suite.parent;
        }
        let file = self.relative(file?);
        if self.own_ids {
            let file = source.split("::").next().unwrap_or(source).to_owned();
            return Some((source.to_owned(), file, source.ends_with("::<collection>")));
        }
        // jest's and vitest's reporters end a test's JSON id with its index
        // among same-titled tests, -1 for a failure no test carries.
        let whole_file = source.ends_with(",-1]");
        titles.reverse();
        Some((format!("{file}::{}", titles.join(" > ")), file, whole_file))
    }
}

impl Output for HistoryFile {
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::Started(opened) if !opened.is_test => {
                self.suites.insert(
                    opened.id,
                    Suite {
                        parent: opened.parent,
                        name: opened.node.name.clone(),
                        kind: opened.node.kind,
                        file: opened.node.file.clone(),
                    },
                );
            }
            TreeEvent::Started(opened) => {
                self.tests.insert(opened.id);
            }
            TreeEvent::Finished { node, .. } if self.tests.contains(&node.parent) => {
                self.tests.remove(&node.id);
            }
            TreeEvent::Finished { node, result } => {
                self.tests.remove(&node.id);
                let Some((id, file, whole_file)) = self.name(node) else {
                    return Ok(());
                };
                let verdict = match result.outcome.verdict() {
                    Verdict::Passed => Recorded::Passed,
                    Verdict::Failed => Recorded::Failed,
                    Verdict::Ignored => Recorded::Skipped,
                };
                let test = RanTest {
                    id,
                    file,
                    verdict,
                    duration_ms: result.duration_ms.unwrap_or(0),
                    whole_file,
                };
                self.ran
                    .lock()
                    .map_err(|_| io::Error::other("poisoned"))?
                    .push(test);
            }
            TreeEvent::SuiteFinished(opened) => {
                self.suites.remove(&opened.id);
            }
            // A stopped test keeps the verdict it had.
            TreeEvent::Stopped(_)
            | TreeEvent::RunStarted(_)
            | TreeEvent::Hello { .. }
            | TreeEvent::RunEnded(_)
            | TreeEvent::LiveOutput
            | TreeEvent::Count(_)
            | TreeEvent::Output { .. }
            | TreeEvent::Log { .. }
            | TreeEvent::TreeSuite(_)
            | TreeEvent::TreeTest(_)
            | TreeEvent::TreeSuiteEnd(_)
            | TreeEvent::TreeEnded => {}
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}
