//! The history file of one framework in one project: each test's last
//! verdict, duration and first sighting, plus the stepwise position.
//!
//! One JSON file per framework (`<cache dir>/history-<framework>.json`),
//! versioned, replaced whole through a temporary file and a rename: a crash
//! or a second run writing at the same time never leaves half a file, and
//! the later writer wins whole. A file that cannot be read as this version
//! of the format is reported in one line and taken as empty.
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The format's version; a file of another version is ignored (and
/// replaced by the next run).
pub(crate) const VERSION: u32 = 1;

/// The cache folder's default name, at the project root.
pub(crate) const DEFAULT_DIR: &str = ".tcrunner";

/// What a test did the last time it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    Passed,
    Failed,
    Skipped,
}

/// One test's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// The test file, relative to the project (`/` between folders).
    pub file: String,
    pub verdict: Verdict,
    /// The last run's duration.
    pub duration_ms: u64,
    /// When the test was first seen (seconds since the Unix epoch).
    pub first_seen: u64,
    /// When it last ran.
    pub last_run: u64,
    /// Not a test but its file's failure to load or collect (pytest's
    /// `<collection error>`, jest's `Test suite failed to run`, a hook's
    /// error): rerunning it means rerunning the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_file: bool,
}

/// Where `--sw` resumes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Stepwise {
    /// The test the last `--sw` run stopped at.
    pub failed: Option<String>,
    /// The tests that passed since the stepwise sequence began: a resumed
    /// run leaves them out.
    pub passed: Vec<String>,
    /// How many tests the history knew when the state was written: a
    /// different number means the suite changed shape, and the state is
    /// dropped rather than skipping the wrong tests.
    pub test_count: usize,
}

/// The shards of `--shard K/N` run one after another on one history: what
/// the first of them split by, so that the others split the same way
/// although each one's run has updated the durations since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ShardRound {
    /// N.
    pub count: usize,
    /// The shards of the round that have run (K - 1).
    pub ran: Vec<usize>,
    /// The tests as the round's first shard read them.
    pub tests: BTreeMap<String, Entry>,
}

/// The whole file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct History {
    pub version: u32,
    pub framework: String,
    /// By stable test id: what `--target` accepts.
    pub tests: BTreeMap<String, Entry>,
    #[serde(default)]
    pub stepwise: Stepwise,
    /// The round of shards under way, if one is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard_round: Option<ShardRound>,
}

impl History {
    pub(crate) fn empty(framework: &str) -> History {
        History {
            version: VERSION,
            framework: framework.to_owned(),
            tests: BTreeMap::new(),
            stepwise: Stepwise::default(),
            shard_round: None,
        }
    }

    /// The round of shards under way that shard `index` of `count`
    /// continues, whose tests it splits by. A round goes on while its
    /// shards come each once with the same count; a shard of another
    /// count, or one that has run in it, starts a new round from the
    /// history as it is.
    pub(crate) fn shard_round_under_way(&self, index: usize, count: usize) -> Option<&ShardRound> {
        self.shard_round
            .as_ref()
            .filter(|round| round.count == count && !round.ran.contains(&index))
    }

    /// The round of shards as it stands once shard `index` of `count` has
    /// run: `None` once its last shard has.
    pub(crate) fn shard_round_after(&self, index: usize, count: usize) -> Option<ShardRound> {
        let under_way = self.shard_round_under_way(index, count);
        let mut round = under_way.cloned().unwrap_or_else(|| ShardRound {
            count,
            ran: Vec::new(),
            tests: self.tests.clone(),
        });
        round.ran.push(index);
        (round.ran.len() < count).then_some(round)
    }

    /// The stable ids of the tests that failed last time, in id order.
    pub(crate) fn failed(&self) -> impl Iterator<Item = (&String, &Entry)> {
        self.tests
            .iter()
            .filter(|(_, entry)| entry.verdict == Verdict::Failed)
    }
}

/// The history file of `framework` in the cache folder `dir`.
pub(crate) fn path(dir: &Path, framework: &str) -> PathBuf {
    dir.join(format!("history-{framework}.json"))
}

/// Which file a history was read from. Every write replaces the file
/// through a rename, so the same stamp at the end of a run means no other
/// run has written it since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }

    /// The stamp of the file now at `file`, if there is one.
    pub(crate) fn now(file: &Path) -> Option<Stamp> {
        std::fs::metadata(file).ok().map(|meta| Stamp::of(&meta))
    }
}

/// Reads the history; a missing file is an empty history, and so is one
/// that cannot be read, after a one-line warning from `warn`.
pub(crate) fn load(file: &Path, framework: &str, warn: impl FnOnce(String)) -> History {
    load_stamped(file, framework, warn).0
}

/// [`load`], with the stamp of the file it read (none when there was no
/// file to read).
pub(crate) fn load_stamped(
    file: &Path,
    framework: &str,
    warn: impl FnOnce(String),
) -> (History, Option<Stamp>) {
    let read = std::fs::File::open(file).and_then(|mut opened| {
        let mut text = Vec::new();
        io::Read::read_to_end(&mut opened, &mut text)?;
        Ok((text, Stamp::of(&opened.metadata()?)))
    });
    let (text, stamp) = match read {
        Ok(read) => read,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return (History::empty(framework), None),
        Err(e) => {
            warn(format!("ignoring the test history {}: {e}", file.display()));
            return (History::empty(framework), None);
        }
    };
    (parse(file, &text, framework, warn), Some(stamp))
}

fn parse(file: &Path, text: &[u8], framework: &str, warn: impl FnOnce(String)) -> History {
    match serde_json::from_slice::<History>(text) {
        Ok(history) if history.version == VERSION && history.framework == framework => history,
        Ok(history) => {
            warn(format!(
                "ignoring the test history {}: version {} of {}, not version {VERSION} of {framework}",
                file.display(),
                history.version,
                history.framework
            ));
            History::empty(framework)
        }
        Err(e) => {
            warn(format!(
                "ignoring the test history {}: not a tcrunner history ({e})",
                file.display()
            ));
            History::empty(framework)
        }
    }
}

/// The folder of the history `file`, made on first use with a
/// `.gitignore` so that it stays out of version control.
fn folder(file: &Path) -> io::Result<&Path> {
    let dir = file.parent().unwrap_or(Path::new("."));
    if !dir.is_dir() {
        std::fs::create_dir_all(dir)?;
        let _ = std::fs::write(dir.join(".gitignore"), "# made by tcrunner\n*\n");
    }
    Ok(dir)
}

/// Locks the folder of the history `file` for this process until the
/// handle returned is dropped (`flock`): runs that end at once merge into
/// the file in turn, each reading what the one before it wrote, so none
/// loses another's results. `None` where the folder cannot be made or
/// locked: the run then merges unlocked, as before.
pub(crate) fn lock(file: &Path) -> Option<std::fs::File> {
    let folder = std::fs::File::open(folder(file).ok()?).ok()?;
    rustix::fs::flock(&folder, rustix::fs::FlockOperation::LockExclusive).ok()?;
    Some(folder)
}

/// Writes the history whole: into a temporary file beside it, then renamed
/// over the old one, so a reader sees the old file or the new one, never a
/// part. Not synced to the disk: it is a cache, and the file a power cut
/// might leave empty is read as a corrupt one (a warning, then empty), for
/// the 2–13 ms an fsync of a 5,000-test history took at the end of every run.
/// The cache folder is made on first use, with a `.gitignore` so it stays
/// out of version control.
pub(crate) fn save(file: &Path, history: &History) -> io::Result<()> {
    let dir = folder(file)?;
    let name = file
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut temporary = std::ffi::OsString::from(".");
    temporary.push(name);
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = dir.join(temporary);
    let write = || -> io::Result<()> {
        let mut out = io::BufWriter::new(std::fs::File::create(&temporary)?);
        serde_json::to_writer_pretty(&mut out, history)?;
        out.write_all(b"\n")?;
        out.flush()
    };
    match write().and_then(|()| std::fs::rename(&temporary, file)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&temporary);
            Err(e)
        }
    }
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(label: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("tcrunner-history-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_saved_history_reads_back_and_the_folder_is_ignored_by_git() {
        let dir = scratch("round");
        let file = path(&dir, "jest");
        let mut history = History::empty("jest");
        history.tests.insert(
            "a.test.js::adds".into(),
            Entry {
                file: "a.test.js".into(),
                verdict: Verdict::Failed,
                duration_ms: 12,
                first_seen: 1,
                last_run: 2,
                whole_file: false,
            },
        );
        history.stepwise.failed = Some("a.test.js::adds".into());
        save(&file, &history).unwrap();
        let mut warned = Vec::new();
        assert_eq!(load(&file, "jest", |w| warned.push(w)), history);
        assert!(warned.is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.join(".gitignore")).unwrap(),
            "# made by tcrunner\n*\n"
        );
        // No temporary file is left beside it.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_corrupt_foreign_or_other_version_file_is_ignored_with_one_warning() {
        let dir = scratch("corrupt");
        std::fs::create_dir_all(&dir).unwrap();
        let file = path(&dir, "pytest");
        for (text, says) in [
            ("{\"version\": 1, \"framew", "not a tcrunner history"),
            ("[1, 2, 3]", "not a tcrunner history"),
            (
                "{\"version\": 7, \"framework\": \"pytest\", \"tests\": {}}",
                "version 7 of pytest",
            ),
            (
                "{\"version\": 1, \"framework\": \"jest\", \"tests\": {}}",
                "version 1 of jest",
            ),
        ] {
            std::fs::write(&file, text).unwrap();
            let mut warned = Vec::new();
            let history = load(&file, "pytest", |w| warned.push(w));
            assert_eq!(history, History::empty("pytest"));
            assert_eq!(warned.len(), 1, "{text}");
            assert!(warned[0].contains(says), "{warned:?}");
            assert!(!warned[0].contains('\n'), "{warned:?}");
        }
        let mut warned = Vec::new();
        let missing = load(&dir.join("nope.json"), "pytest", |w| warned.push(w));
        assert_eq!(missing, History::empty("pytest"));
        assert!(warned.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
