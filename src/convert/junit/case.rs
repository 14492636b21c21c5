//! One `<testcase>`: its attributes, and the verdict its child elements give.
//!
//! - `<testcase classname name time file line>`; gtest's `status="notrun"`
//!   (a `DISABLED_` test) and `result="skipped"`/`"suppressed"` mark a
//!   case skipped that has no `<skipped>`.
//! - `<failure message type>` → failed (message = `message`, else `type`,
//!   else the text's first line; details = the text). `<error>` → error
//!   (pytest's `failed on setup with …` included). A case with both is
//!   failed once, the error appended to the details. `<skipped
//!   type="pytest.xfail">` → xfail, other `<skipped>` → skipped with
//!   `message` (or the text).
//! - `<system-out>`/`<system-err>` in a case → output of that test.
use super::fast::{local_name, RawValue, Slot};
use super::time::seconds;
use crate::convert::common::{add_paragraph, non_empty};
use crate::event::{Outcome, Stream, TestResult};

/// The `type` pytest gives the `<skipped>` of an expected failure.
const PYTEST_XFAIL: &str = "pytest.xfail";

/// A problem element (`failure`, `error`, `skipped`) of a case.
#[derive(Debug, Default)]
pub(super) struct Problem {
    pub(super) message: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) text: String,
}

#[derive(Debug, Default)]
pub(super) struct Case {
    pub(super) name: String,
    pub(super) classname: String,
    pub(super) duration_ms: Option<u64>,
    pub(super) file: Option<String>,
    pub(super) line: Option<f64>,
    /// gtest's `status="notrun"` (a `DISABLED_` test) or
    /// `result="suppressed"`/`"skipped"`: skipped with no `<skipped>`.
    pub(super) not_run: bool,
    // Boxed: most cases have none, and a case is moved a few times.
    pub(super) failure: Option<Box<Problem>>,
    pub(super) error: Option<Box<Problem>>,
    pub(super) skipped: Option<Box<Problem>>,
    pub(super) output: Vec<(Stream, String)>,
    /// A tcrunner file's `titles` property: the suites' titles below the
    /// `<testsuite>` and the test's name, as a JSON array, written when
    /// one of them holds ` > ` itself.
    pub(super) titles: Option<String>,
    /// A tcrunner file's `status` property where the elements do not tell
    /// it: an unexpected pass (`xpass`) or a placeholder (`todo`).
    pub(super) status: Option<Outcome>,
    /// How many earlier attempts of this test pytest-rerunfailures reran
    /// (each written as a case of its own before this one).
    pub(super) reruns: u32,
}

impl Case {
    /// Makes this a case with no attributes, keeping its name buffers. The
    /// problems and output that only elements inside a case add are taken
    /// when it is sent.
    pub(super) fn reset(&mut self) {
        self.name.clear();
        self.classname.clear();
        self.duration_ms = None;
        self.file = None;
        self.line = None;
        self.not_run = false;
        self.titles = None;
        self.status = None;
        self.reruns = 0;
    }

    /// Takes one `<testcase>` attribute, by qualified name and raw value.
    pub(super) fn set(&mut self, key: &[u8], raw: RawValue<'_>) {
        // A name without a prefix, the usual one, is its own local name:
        // no need to look for a `:` in it (none of these names has one).
        if let Some(slot) = Slot::of(key).or_else(|| Slot::of(local_name(key))) {
            self.set_slot(slot, raw);
        }
    }

    /// Takes one `<testcase>` attribute, by what it is and its raw value.
    pub(super) fn set_slot(&mut self, slot: Slot, raw: RawValue<'_>) {
        let value = raw.decode();
        match slot {
            Slot::Name => {
                self.name.clear();
                self.name.push_str(&value);
            }
            Slot::Classname => {
                self.classname.clear();
                self.classname.push_str(&value);
            }
            Slot::Time => self.duration_ms = seconds(&value),
            Slot::File => self.file = Some(value.into_owned()).filter(|f| !f.is_empty()),
            Slot::Line => self.line = value.trim().parse().ok(),
            Slot::Status => {
                let value = value.trim();
                self.not_run |= ["notrun", "suppressed", "skipped", "disabled"]
                    .iter()
                    .any(|v| value.eq_ignore_ascii_case(v));
            }
        }
    }

    /// Takes a `<failure>` of the case.
    pub(super) fn add_failure(&mut self, problem: Problem) {
        add_problem(&mut self.failure, problem);
    }

    /// Takes an `<error>` of the case.
    pub(super) fn add_error(&mut self, problem: Problem) {
        add_problem(&mut self.error, problem);
    }

    /// Takes a `<skipped>` of the case.
    pub(super) fn add_skipped(&mut self, problem: Problem) {
        add_problem(&mut self.skipped, problem);
    }

    /// Fills `result` in with the case's duration and verdict, taking its
    /// problems.
    pub(super) fn take_result(&mut self, result: &mut TestResult) {
        *result = TestResult {
            duration_ms: self.duration_ms,
            ..TestResult::default()
        };
        // All three taken, whichever is the verdict: none is left for the
        // next case (a skip in the body, then an error in the teardown).
        let (failure, error, skipped) =
            (self.failure.take(), self.error.take(), self.skipped.take());
        if let Some(failure) = failure {
            result.outcome = Outcome::Failed;
            let (message, mut details) = describe(*failure);
            if let Some(error) = error {
                // Never two verdicts: a teardown error after a failure is context.
                let (error_message, error_details) = describe(*error);
                for part in [error_message, error_details].into_iter().flatten() {
                    add_paragraph(&mut details, &part);
                }
            }
            (result.message, result.details) = (message, details);
        } else if let Some(error) = error {
            result.outcome = Outcome::Error;
            (result.message, result.details) = describe(*error);
        } else if let Some(skipped) = skipped {
            let xfail = skipped.kind.as_deref() == Some(PYTEST_XFAIL);
            result.outcome = if xfail {
                Outcome::Xfail
            } else {
                Outcome::Skipped
            };
            let text = non_empty(Some(&skipped.text));
            result.message = non_empty(skipped.message.as_deref()).or_else(|| text.clone());
            result.details = text.filter(|t| Some(t) != result.message.as_ref());
        } else if self.not_run {
            result.outcome = Outcome::Skipped;
        }
        result.outcome = match (result.outcome, self.status.take()) {
            (Outcome::Passed, Some(Outcome::Xpass)) => Outcome::Xpass,
            (Outcome::Skipped, Some(Outcome::Todo)) => Outcome::Todo,
            (outcome, _) => outcome,
        };
    }
}

fn add_problem(slot: &mut Option<Box<Problem>>, problem: Problem) {
    match slot {
        None => *slot = Some(Box::new(problem)),
        Some(first) => {
            // A second <failure> in one case (some aggregators) adds to the first.
            let extra = [problem.message, non_empty(Some(&problem.text))];
            for part in extra.into_iter().flatten() {
                first.text.push_str("\n\n");
                first.text.push_str(&part);
            }
        }
    }
}

/// Message and details of a problem element.
pub(super) fn describe(problem: Problem) -> (Option<String>, Option<String>) {
    let details = trim_block(&problem.text);
    let message = non_empty(problem.message.as_deref())
        .or_else(|| non_empty(problem.kind.as_deref()))
        .or_else(|| details.as_deref().and_then(|d| non_empty(d.lines().next())));
    (message, details)
}

/// Text without leading blank lines and trailing whitespace; `None` if blank.
fn trim_block(text: &str) -> Option<String> {
    let start = text.find(|c: char| !c.is_whitespace())?;
    let start = text[..start].rfind('\n').map_or(0, |nl| nl + 1);
    Some(text[start..].trim_end().to_string())
}
