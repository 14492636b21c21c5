//! The test history around a run: read before it to choose what runs,
//! merged with what ran after it (`src/history/`).
use std::path::{Path, PathBuf};

use crate::cli::{NoFailures, RawHistory};
use crate::frameworks::{Framework, Request};
use crate::history::{self, History, Options, Plan, RanTest, Verdict};
use crate::report::{HistoryFile, Ran};

use super::note;

/// One run's use of the history.
pub(super) struct Session {
    file: PathBuf,
    framework: &'static str,
    plan: Plan,
    ran: Ran,
    /// The run asks for the whole suite: tests it no longer sees are
    /// dropped, if it ends by itself.
    full: bool,
    stepwise: bool,
    order_file: Option<PathBuf>,
}

/// Reads the history and turns `request` into what the options ask for.
pub(super) fn prepare(
    raw: &RawHistory,
    project: &Path,
    framework: &'static dyn Framework,
    request: &mut Request,
) -> Session {
    let dir = match &raw.cache_dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
        None => project.join(history::DEFAULT_DIR),
    };
    let name = framework.name();
    let file = history::path(&dir, name);
    if raw.cache_clear {
        clear(&dir);
    }
    let history = history::load(&file, name, |warning| note(&format!("warning: {warning}")));
    let options = Options {
        last_failed: raw.last_failed,
        failed_first: raw.failed_first,
        none_without_failures: raw.last_failed_no_failures == NoFailures::None,
        stepwise: raw.stepwise,
        stepwise_skip: raw.stepwise_skip,
        stepwise_reset: raw.stepwise_reset,
    };
    let full_before =
        request.paths.is_empty() && request.targets.is_empty() && request.raw.is_empty();
    let plan = history::plan(
        &options,
        &history,
        request,
        !framework.mixes_files_and_tests(),
    );
    let mut order_file = None;
    if !plan.first.is_empty() || !plan.skip.is_empty() {
        let path = dir.join(format!("order-{}.json", std::process::id()));
        let order = serde_json::json!({ "first": plan.first, "skip": plan.skip });
        let written =
            std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, order.to_string()));
        match written {
            Ok(()) => {
                request.order_file = Some(path.clone());
                order_file = Some(path);
            }
            Err(e) => note(&format!(
                "warning: cannot write {}: {e}; running in the framework's order",
                path.display()
            )),
        }
    }
    Session {
        file,
        framework: name,
        full: full_before
            && request.paths.is_empty()
            && request.targets.is_empty()
            && plan.skip.is_empty(),
        stepwise: options.stepwise || options.stepwise_skip || options.stepwise_reset,
        plan,
        ran: Ran::default(),
        order_file,
    }
}

/// Removes the history files in `dir` (`--cache-clear`).
fn clear(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("history-") && name.ends_with(".json") {
            if let Err(e) = std::fs::remove_file(entry.path()) {
                note(&format!(
                    "warning: cannot remove {}: {e}",
                    entry.path().display()
                ));
            }
        }
    }
}

impl Session {
    /// The notes to show before the run, one line each.
    pub(super) fn notes(&self) -> &[String] {
        &self.plan.notes
    }

    /// `--lf --lfnf none` with nothing recorded: nothing is to run.
    pub(super) fn runs_nothing(&self) -> bool {
        self.plan.run_nothing
    }

    /// How many failures stop the run (`--sw`).
    pub(super) fn stop_after_failures(&self) -> Option<u32> {
        self.plan.stop_after_failures
    }

    /// The output that records what ran.
    pub(super) fn output(&self, project: &Path, framework: &dyn Framework) -> HistoryFile {
        HistoryFile::new(
            self.ran.clone(),
            project.to_path_buf(),
            framework.users_know_ids(),
        )
    }

    /// Merges what ran into the history file, read again now so that
    /// another run's update since is kept; `ended` says the run ended by
    /// itself (not stopped, timed out or killed), `stepwise_stop` that
    /// `--sw` stopped it at its last failure.
    pub(super) fn finish(self, ended: bool, stepwise_stop: bool) {
        if let Some(order) = &self.order_file {
            let _ = std::fs::remove_file(order);
        }
        let ran: Vec<RanTest> = match self.ran.lock() {
            Ok(ran) => ran.clone(),
            Err(_) => return,
        };
        let mut history: History = history::load(&self.file, self.framework, drop);
        history::merge(&mut history, &ran, self.full && ended);
        if self.stepwise {
            let state = &mut history.stepwise;
            if self.plan.reset_stepwise {
                *state = Default::default();
            }
            // The failure the run stopped at; one `--sw-skip` let pass is
            // not where the next run resumes (as in pytest).
            let failed = ran
                .iter()
                .rev()
                .find(|t| t.verdict == Verdict::Failed)
                .filter(|_| stepwise_stop);
            match failed {
                Some(test) => {
                    state.failed = Some(test.id.clone());
                    // Everything before the stop is done, a failure that
                    // `--sw-skip` let pass included.
                    for test in ran.iter().filter(|t| t.id != test.id) {
                        if !state.passed.contains(&test.id) {
                            state.passed.push(test.id.clone());
                        }
                    }
                }
                // Through to the end without a failure: the next run starts over.
                None if ended => *state = Default::default(),
                None => {}
            }
            state.test_count = history.tests.len();
            if state.failed.is_none() {
                state.test_count = 0;
                state.passed.clear();
            }
        }
        if let Err(e) = history::save(&self.file, &history) {
            note(&format!(
                "warning: cannot write the test history {}: {e}",
                self.file.display()
            ));
        }
    }
}
