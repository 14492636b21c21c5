//! What a run reported, counted by outcome.
use crate::event::Outcome;

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

    /// Whether any test failed, errored or was stopped.
    pub(crate) fn any_failed(&self) -> bool {
        self.failed + self.errors + self.stopped > 0
    }
}
