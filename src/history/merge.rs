//! A finished run folded into the history: what ran is updated, what did
//! not run keeps its record, and a full run drops the tests it no longer
//! saw.
use super::store::{now, Entry, History, Verdict};

/// One test as a run finished it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RanTest {
    /// The stable id (what `--target` accepts).
    pub id: String,
    /// Its file, relative to the project.
    pub file: String,
    pub verdict: Verdict,
    pub duration_ms: u64,
    /// A file's failure to load or collect, not a test.
    pub whole_file: bool,
}

/// Folds `ran` into `history`. With `full` (the run asked for the whole
/// suite and ended by itself) tests it did not see are dropped; a file's
/// load failure is dropped whenever that file ran again.
pub(crate) fn merge(history: &mut History, ran: &[RanTest], full: bool) {
    use std::collections::BTreeSet;
    let time = now();
    let files: BTreeSet<&str> = ran.iter().map(|t| t.file.as_str()).collect();
    let seen: BTreeSet<&str> = ran.iter().map(|t| t.id.as_str()).collect();
    // A file that ran again and loaded: its old load failure is gone. One
    // that failed to load again keeps its entry (and when it was first
    // seen), updated below.
    history.tests.retain(|id, entry| {
        !(entry.whole_file && files.contains(entry.file.as_str()) && !seen.contains(id.as_str()))
    });
    if full {
        // What a full run did not see is gone, but for the tests of a file
        // that failed to load: hidden, not gone, they keep their durations
        // (which shards split by) until it loads again.
        let unloaded: BTreeSet<&str> = (ran.iter())
            .filter(|t| t.whole_file)
            .map(|t| t.file.as_str())
            .collect();
        history.tests.retain(|id, entry| {
            seen.contains(id.as_str()) || unloaded.contains(entry.file.as_str())
        });
    }
    // Tests that share an id (same titles in one file, one file in two
    // projects) are one entry: any failure fails it, and their times add
    // up, as `--target` with that id runs them all.
    let mut this_run: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for test in ran {
        let mut entry = Entry {
            file: test.file.clone(),
            verdict: test.verdict,
            duration_ms: test.duration_ms,
            first_seen: history.tests.get(&test.id).map_or(time, |e| e.first_seen),
            last_run: time,
            whole_file: test.whole_file,
        };
        if !this_run.insert(&test.id) {
            let earlier = &history.tests[&test.id];
            entry.duration_ms = entry.duration_ms.saturating_add(earlier.duration_ms);
            entry.verdict = match (earlier.verdict, test.verdict) {
                (Verdict::Failed, _) | (_, Verdict::Failed) => Verdict::Failed,
                (Verdict::Passed, _) | (_, Verdict::Passed) => Verdict::Passed,
                _ => Verdict::Skipped,
            };
        }
        history.tests.insert(test.id.clone(), entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(id: &str, verdict: Verdict) -> RanTest {
        RanTest {
            id: id.into(),
            file: id.split("::").next().unwrap().into(),
            verdict,
            duration_ms: 5,
            whole_file: id.ends_with("<collection>"),
        }
    }

    #[test]
    fn a_partial_run_updates_what_ran_and_a_full_run_drops_what_is_gone() {
        let mut history = History::empty("pytest");
        merge(
            &mut history,
            &[
                ran("a.py::one", Verdict::Failed),
                ran("a.py::two", Verdict::Passed),
                ran("b.py::<collection>", Verdict::Failed),
            ],
            true,
        );
        let first = history.tests["a.py::one"].first_seen;
        // Partial: only a.py::one ran; the rest is kept.
        merge(&mut history, &[ran("a.py::one", Verdict::Passed)], false);
        assert_eq!(history.tests["a.py::one"].verdict, Verdict::Passed);
        assert_eq!(history.tests["a.py::one"].first_seen, first);
        assert_eq!(history.tests.len(), 3);
        // b.py loads now: its collection failure is replaced by its tests.
        merge(&mut history, &[ran("b.py::t", Verdict::Passed)], false);
        assert!(!history.tests.contains_key("b.py::<collection>"));
        // A full run that no longer sees a.py::two drops it.
        merge(
            &mut history,
            &[
                ran("a.py::one", Verdict::Passed),
                ran("b.py::t", Verdict::Passed),
            ],
            true,
        );
        let ids: Vec<&str> = history.tests.keys().map(String::as_str).collect();
        assert_eq!(ids, ["a.py::one", "b.py::t"]);
    }

    #[test]
    fn a_file_that_fails_to_load_keeps_its_tests_until_it_loads_again() {
        let mut history = History::empty("pytest");
        let broken = || ran("b.py::<collection>", Verdict::Failed);
        merge(
            &mut history,
            &[
                ran("a.py::one", Verdict::Passed),
                ran("b.py::t", Verdict::Passed),
            ],
            true,
        );
        let first = history.tests["b.py::t"].first_seen;
        merge(
            &mut history,
            &[ran("a.py::one", Verdict::Passed), broken()],
            true,
        );
        assert_eq!(history.tests["b.py::t"].first_seen, first);
        assert_eq!(history.tests["b.py::t"].duration_ms, 5);
        let failure_seen = history.tests["b.py::<collection>"].first_seen;
        // Broken again: the failure's entry stays the same one.
        merge(
            &mut history,
            &[ran("a.py::one", Verdict::Passed), broken()],
            true,
        );
        assert_eq!(history.tests["b.py::<collection>"].first_seen, failure_seen);
        assert!(history.tests.contains_key("b.py::t"));
        // Loaded, without `t`: the failure and `t` are gone.
        merge(
            &mut history,
            &[
                ran("a.py::one", Verdict::Passed),
                ran("b.py::u", Verdict::Passed),
            ],
            true,
        );
        let ids: Vec<&str> = history.tests.keys().map(String::as_str).collect();
        assert_eq!(ids, ["a.py::one", "b.py::u"]);
    }

    #[test]
    fn tests_sharing_an_id_keep_any_failure_and_their_summed_time() {
        let mut history = History::empty("vitest");
        let same = |verdict| ran("d.test.js::same", verdict);
        merge(
            &mut history,
            &[same(Verdict::Failed), same(Verdict::Passed)],
            true,
        );
        assert_eq!(history.tests["d.test.js::same"].verdict, Verdict::Failed);
        assert_eq!(history.tests["d.test.js::same"].duration_ms, 10);
        merge(
            &mut history,
            &[same(Verdict::Skipped), same(Verdict::Passed)],
            true,
        );
        assert_eq!(history.tests["d.test.js::same"].verdict, Verdict::Passed);
        // A later run's first record replaces the earlier run's.
        merge(&mut history, &[same(Verdict::Skipped)], true);
        assert_eq!(history.tests["d.test.js::same"].verdict, Verdict::Skipped);
        assert_eq!(history.tests["d.test.js::same"].duration_ms, 5);
    }
}
