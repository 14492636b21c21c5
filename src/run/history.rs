//! The test history around a run: read before it to choose what runs,
//! merged with what ran after it (`src/history/`).
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::cli::{NoFailures, RawHistory};
use crate::frameworks::{Framework, Request};
use crate::history::{self, Entry, History, Options, Plan, RanTest, Shard, ShardRound, Verdict};
use crate::report::{HistoryFile, Ran};

use super::{note, RunError};

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
    /// What the tests about to run took last time, when the history knows.
    expected_ms: Option<u64>,
    /// The history as read before the run, and the file it came from:
    /// unless another run has replaced that file since, the end of the run
    /// merges into it rather than reading it again (a 5,000-test history
    /// is about 28 M instructions to read, a seventh of tcrunner's own
    /// work on such a run).
    read: Option<(History, history::Stamp)>,
    /// A shard's run: the round of shards as it stands after it.
    shard_round: Option<Option<ShardRound>>,
}

/// Reads the history and turns `request` into what the options ask for.
pub(super) fn prepare(
    raw: &RawHistory,
    project: &Path,
    framework: &'static dyn Framework,
    request: &mut Request,
) -> Result<Session, RunError> {
    let dir = match &raw.cache_dir {
        Some(dir) => std::path::absolute(dir).unwrap_or_else(|_| dir.clone()),
        None => project.join(history::DEFAULT_DIR),
    };
    let name = framework.name();
    let file = history::path(&dir, name);
    if raw.cache_clear {
        clear(&dir);
    }
    let (history, stamp) =
        history::load_stamped(&file, name, |warning| note(&format!("warning: {warning}")));
    // `--lf -- one` on jest and vitest: the failures become paths, which the
    // framework ORs with the user's `one`, so the user's filters choose the
    // files first (one more listing of the framework's, only where there
    // are failures to rerun).
    let narrowed = raw.last_failed
        && !request.raw.is_empty()
        && request.paths.is_empty()
        && request.targets.is_empty()
        && history.failed().next().is_some();
    let selected_files = narrowed
        .then(|| framework.test_files(request))
        .flatten()
        .transpose()?
        .map(|files| relative_files(&files, project));
    let files_as_paths = !framework.mixes_files_and_tests();
    let removed_files = match files_as_paths && (raw.last_failed || raw.failed_first) {
        true => (history.failed())
            .map(|(_, entry)| &entry.file)
            .filter(|file| !project.join(file).exists())
            .cloned()
            .collect(),
        false => Vec::new(),
    };
    let options = Options {
        last_failed: raw.last_failed,
        failed_first: raw.failed_first,
        none_without_failures: raw.last_failed_no_failures == NoFailures::None,
        stepwise: raw.stepwise,
        stepwise_skip: raw.stepwise_skip,
        stepwise_reset: raw.stepwise_reset,
        selected_files,
        removed_files,
    };
    // Collecting runs no test: it must not drop every test from the history.
    let full_before = request.paths.is_empty()
        && request.targets.is_empty()
        && request.raw.is_empty()
        && !request.collect_only;
    let mut plan = history::plan(&options, &history, request, files_as_paths);
    let shard = raw
        .shard
        .as_deref()
        .map(Shard::parse)
        .transpose()
        .map_err(RunError::Usage)?;
    // A resumed `--sw` on a framework that cannot leave single tests out:
    // the files whose recorded tests have all passed are left out.
    if !framework.follows_order_file() && !plan.skip.is_empty() {
        match framework.test_files(request) {
            Some(files) if request.targets.is_empty() => {
                let done: std::collections::BTreeSet<&str> =
                    plan.skip.iter().map(String::as_str).collect();
                let files = files?;
                let left: Vec<PathBuf> = relative_files(&files, project)
                    .into_iter()
                    .filter(|file| {
                        let mut tests = history.tests.iter().filter(|(_, e)| &e.file == file);
                        let mut any = false;
                        let all_done = tests.all(|(id, _)| {
                            any = true;
                            done.contains(id.as_str())
                        });
                        !(any && all_done)
                    })
                    .map(PathBuf::from)
                    .collect();
                run_files(
                    left,
                    files.len(),
                    ("--sw", "stepwise: ", " left to run"),
                    &mut plan,
                    request,
                );
            }
            _ => {}
        }
        plan.skip.clear();
    }
    let mut shard_round = None;
    let mut shard_order = serde_json::Value::Null;
    if let Some(shard) = shard {
        // Shards run one after another on this history split as its first
        // one did: each one's run updates the durations they split by.
        let mut split_by = &history.tests;
        if let Some(going_on) = history.shard_round_under_way(shard.index, shard.count) {
            split_by = &going_on.tests;
            plan.notes.push(format!(
                "shard {}/{}: split by the durations the history had for shard {}/{}, as every shard of one round must be",
                shard.index + 1,
                shard.count,
                going_on.ran[0] + 1,
                shard.count
            ));
        }
        shard_round = Some(history.shard_round_after(shard.index, shard.count));
        match framework.test_files(request) {
            // The reporter's own split (pytest's plugin), by test.
            None => {
                let durations: serde_json::Map<String, serde_json::Value> = split_by
                    .iter()
                    .filter(|(_, e)| !e.whole_file)
                    .map(|(id, e)| (id.clone(), e.duration_ms.into()))
                    .collect();
                shard_order = serde_json::json!({
                    "index": shard.index,
                    "count": shard.count,
                    "durations": durations,
                });
            }
            Some(_) if !request.targets.is_empty() => {
                return Err(RunError::Usage(format!(
                    "--shard: {} splits test files, which cannot be combined with --target or a --lf that names tests",
                    framework.name()
                )));
            }
            Some(files) => shard_files(shard, files?, project, split_by, request, &mut plan),
        }
    }
    let mut batch_only: Vec<String> = Vec::new();
    let batch = match std::env::var_os("TEAMCITY_BUILD_PROPERTIES_FILE") {
        Some(properties) => history::teamcity::batch(Path::new(&properties), |warning| {
            note(&format!("warning: {warning}"))
        })
        .map_err(RunError::NoInput)?,
        None => None,
    };
    if let Some(batch) = &batch {
        let which = match (batch.current, batch.total) {
            (Some(current), Some(total)) => format!("batch {current} of {total}"),
            _ => "this batch".to_owned(),
        };
        match framework.test_files(request) {
            // pytest: the plugin keeps or leaves out the files.
            None => {
                let files: Vec<String> = batch.files().map(str::to_owned).collect();
                plan.notes.push(format!(
                    "TeamCity parallel tests: {which}, {} {} test files",
                    if batch.include {
                        "running"
                    } else {
                        "leaving out"
                    },
                    files.len()
                ));
                if batch.include {
                    plan.run_nothing |= files.is_empty();
                    batch_only = files;
                } else {
                    plan.skip.extend(files);
                }
            }
            Some(files) => {
                let files = files?;
                let relative = relative_files(&files, project);
                let mine: Vec<PathBuf> = relative
                    .iter()
                    .filter(|f| batch.runs(f))
                    .map(PathBuf::from)
                    .collect();
                let head = format!("TeamCity parallel tests: {which}, ");
                let said = (TEAMCITY_BATCH, head.as_str(), "");
                run_files(mine, files.len(), said, &mut plan, request);
            }
        }
    }
    // --ff, --nf on jest and vitest: our sequencer puts files first; a
    // selection by file: it keeps those files only.
    if framework.orders_files() && (raw.new_first || !plan.first.is_empty() || plan.files.is_some())
    {
        order_files(&dir, project, &history, raw.new_first, &mut plan, request)?;
    }
    // --nf: the plugin puts the tests the history does not know first.
    let ordered = framework.follows_order_file();
    let known: Vec<&String> = if raw.new_first && ordered {
        plan.notes.push(format!(
            "new-first: {} tests known to the history",
            history.tests.len()
        ));
        history.tests.keys().collect()
    } else {
        Vec::new()
    };
    let mut order_file = request.order_file.clone();
    let ordering = raw.new_first
        || !plan.first.is_empty()
        || !plan.skip.is_empty()
        || !shard_order.is_null()
        || !plan.only.is_empty()
        || !batch_only.is_empty();
    if ordered && ordering {
        let order = serde_json::json!({
            "first": plan.first,
            "skip": plan.skip,
            "shard": shard_order,
            "only": plan.only,
            "batch": batch_only,
            "new_first": raw.new_first,
            "known": known,
        });
        // What the file selects, if anything, beyond an order.
        let selects = if !shard_order.is_null() {
            Some("--shard")
        } else if !batch_only.is_empty() {
            Some(TEAMCITY_BATCH)
        } else if !plan.only.is_empty() {
            Some("--lf")
        } else if !plan.skip.is_empty() {
            Some("--sw")
        } else {
            None
        };
        if let Some(path) = write_order(&dir, &order, selects)? {
            request.order_file = Some(path.clone());
            order_file = Some(path);
        }
    }
    // What the tests about to run took last time, for the human view's time
    // left: the whole suite, the failures `--lf` reruns, less what a resumed
    // `--sw` leaves out; unknown for a selection, a shard or a batch.
    let whole = full_before && shard.is_none() && batch.is_none();
    let expected_ms = (whole && !history.tests.is_empty()).then(|| {
        (history.tests.iter())
            .filter(|(id, entry)| {
                let kept = plan.only.is_empty()
                    || (plan.only.iter()).any(|only| only == *id || *only == entry.file);
                kept && !plan.skip.contains(id)
            })
            .map(|(_, entry)| entry.duration_ms)
            .sum()
    });
    Ok(Session {
        expected_ms,
        file,
        framework: name,
        full: full_before
            && request.paths.is_empty()
            && request.targets.is_empty()
            && plan.skip.is_empty()
            && plan.only.is_empty()
            && shard.is_none()
            && batch.is_none(),
        stepwise: options.stepwise || options.stepwise_skip || options.stepwise_reset,
        plan,
        ran: Ran::default(),
        order_file,
        shard_round,
        read: stamp.map(|stamp| (history, stamp)),
    })
}

/// `--ff` and `--nf` on a framework that orders files (jest, vitest): the
/// files of the recorded failures, and with `--nf` the files the history
/// knows with when their tests last ran, for our sequencer to put first
/// (`runners/tcrunner-file-order.cjs`), and the files a selection by file
/// runs ([`run_files`]), for it to keep; written to a file the request
/// names.
fn order_files(
    dir: &Path,
    project: &Path,
    history: &History,
    new_first: bool,
    plan: &mut Plan,
    request: &mut Request,
) -> Result<(), RunError> {
    let absolute = |file: &str| project.join(file).to_string_lossy().into_owned();
    let mut first: Vec<String> = Vec::new();
    for id in &plan.first {
        // An id, or the file of a load failure.
        let file = history
            .tests
            .get(id)
            .map_or(id.as_str(), |e| e.file.as_str());
        let file = absolute(file);
        if !first.contains(&file) {
            first.push(file);
        }
    }
    let mut known: std::collections::BTreeMap<String, u64> = Default::default();
    if new_first {
        for entry in history.tests.values() {
            let last = known.entry(absolute(&entry.file)).or_default();
            *last = (*last).max(entry.last_run);
        }
        plan.notes.push(format!(
            "new-first: {} tests in {} test files known to the history",
            history.tests.len(),
            known.len()
        ));
    }
    let mut order = serde_json::json!({ "first": first, "new_first": new_first, "known": known });
    // An order alone is never an error; a selection is.
    let selects = plan.files.as_ref().map(|(option, files)| {
        let files: Vec<String> = files
            .iter()
            .map(|f| absolute(&f.to_string_lossy()))
            .collect();
        order["files"] = files.into();
        *option
    });
    request.order_file = write_order(dir, &order, selects)?;
    Ok(())
}

/// What a TeamCity parallel batch is called in a failure to write its order.
const TEAMCITY_BATCH: &str = "TeamCity's parallel batch";

/// Writes the order file our reporters read (`order-<pid>.json` in the
/// history folder) and returns its path. When it cannot be written, an
/// order alone is dropped with a warning and the framework's order runs;
/// a selection (the option `selects` names) stops the run instead:
/// running every test would run a shard's tests on every machine, or
/// rerun what `--lf` and `--sw` leave out.
fn write_order(
    dir: &Path,
    order: &serde_json::Value,
    selects: Option<&'static str>,
) -> Result<Option<PathBuf>, RunError> {
    let path = dir.join(format!("order-{}.json", std::process::id()));
    let written =
        std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, order.to_string()));
    match (written, selects) {
        (Ok(()), _) => Ok(Some(path)),
        (Err(source), Some(option)) => Err(RunError::OutputFile(crate::report::FileError {
            option,
            path,
            source,
        })),
        (Err(e), None) => {
            note(&format!(
                "warning: cannot write {}: {e}; running in the framework's order",
                path.display()
            ));
            Ok(None)
        }
    }
}

/// The framework's files relative to the project, `/`-separated (as the
/// history records them). The framework may list them by their real paths.
fn relative_files(files: &[PathBuf], project: &Path) -> Vec<String> {
    let real = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
    files
        .iter()
        .map(|f| {
            f.strip_prefix(project)
                .or_else(|_| f.strip_prefix(&real))
                .unwrap_or(f)
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// `--shard` by test file (jest, vitest): the framework's own list of the
/// files it would run, split by the durations recorded for their tests;
/// this shard's files become the run's `--path`s.
fn shard_files(
    shard: Shard,
    files: Vec<PathBuf>,
    project: &Path,
    tests: &BTreeMap<String, Entry>,
    request: &mut Request,
    plan: &mut Plan,
) {
    let relative = relative_files(&files, project);
    let mut per_file: BTreeMap<&str, u64> = Default::default();
    for entry in tests.values() {
        *per_file.entry(entry.file.as_str()).or_default() += entry.duration_ms;
    }
    let units: Vec<(&str, Option<u64>)> = relative
        .iter()
        .map(|f| (f.as_str(), per_file.get(f.as_str()).copied()))
        .collect();
    let split = history::split(&units, shard.count);
    let mine: Vec<PathBuf> = relative
        .iter()
        .zip(&split.shard_of)
        .filter(|(_, s)| **s == shard.index)
        .map(|(f, _)| PathBuf::from(f))
        .collect();
    let timed = units.iter().any(|(_, d)| d.is_some());
    let total: u64 = split.loads.iter().sum();
    let load = split.loads.get(shard.index).copied().unwrap_or(0);
    let share = if timed {
        format!(
            "planned {:.1} s of {:.1} s ({:.0}%)",
            load as f64 / 1000.0,
            total as f64 / 1000.0,
            100.0 * load as f64 / total.max(1) as f64
        )
    } else {
        "split by count: no durations recorded".to_owned()
    };
    let head = format!("shard {}/{}: ", shard.index + 1, shard.count);
    run_files(
        mine,
        files.len(),
        ("--shard", &head, &format!(", {share}")),
        plan,
        request,
    );
}

/// Narrows a run of a framework that selects by file (jest, vitest) to
/// `files` of the `all` it would run, for `option`, saying so in a line
/// `head`, `N of M test files`, `tail`; none of them is a run of nothing.
/// The files become the run's paths, and the order file names them too:
/// the framework ORs paths with the user's own filters after `--`, which
/// would otherwise still match every file of the selection.
fn run_files(
    files: Vec<PathBuf>,
    all: usize,
    (option, head, tail): (&'static str, &str, &str),
    plan: &mut Plan,
    request: &mut Request,
) {
    plan.notes
        .push(format!("{head}{} of {all} test files{tail}", files.len()));
    plan.run_nothing |= files.is_empty();
    plan.files = Some((option, files.clone()));
    request.paths = files;
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

    /// What the tests about to run took last time, summed, when the history
    /// knows them.
    pub(super) fn expected_ms(&self) -> Option<u64> {
        self.expected_ms
    }

    /// How many failures stop the run (`--sw`).
    pub(super) fn stop_after_failures(&self) -> Option<u32> {
        self.plan.stop_after_failures
    }

    /// How many recorded failures `--lf` named to the framework by name.
    pub(super) fn reruns_failures(&self) -> Option<usize> {
        self.plan.reruns_failures
    }

    /// The output that records what ran.
    pub(super) fn output(&self, project: &Path, framework: &dyn Framework) -> HistoryFile {
        HistoryFile::new(
            self.ran.clone(),
            project.to_path_buf(),
            framework.users_know_ids(),
        )
    }

    /// Merges what ran into the history file, read again now when another
    /// run has written it since, so that its update is kept; `ended` says the run ended by
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
        // Held until the file is written: another run's merge waits.
        let _locked = history::lock(&self.file);
        let mut history: History = match self.read {
            Some((history, stamp)) if history::Stamp::now(&self.file) == Some(stamp) => history,
            _ => history::load(&self.file, self.framework, drop),
        };
        // A run that finished no test at all (the framework collected
        // nothing, or failed before its tests) drops nothing either.
        history::merge(&mut history, &ran, self.full && ended && !ran.is_empty());
        match self.shard_round {
            Some(round) => history.shard_round = round,
            // The whole suite ran: no round of shards is under way.
            None if self.full && ended => history.shard_round = None,
            None => {}
        }
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
