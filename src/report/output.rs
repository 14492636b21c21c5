//! The contract between the tree and the outputs: the events the tree
//! sends ([`TreeEvent`], about nodes it has [`Opened`]) and what every
//! output takes ([`Output`]).
use std::io;

use super::grading::{Groups, PassPolicy};
use crate::event::{LogLevel, Node, Stream, TestEvent, TestResult};
use crate::exit;

/// A node that has been opened, as outputs see it: its place in the
/// tree and its declaration, borrowed (a report file's test is reported
/// from the reader's own buffers, never moved or copied on the way).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opened<'a> {
    /// The node's id.
    pub id: u64,
    /// The parent's id (`offset` for top-level nodes).
    pub parent: u64,
    /// The id of the file (or top-level) node this node lives under: one
    /// concurrent flow of a run.
    pub flow: u64,
    /// A test rather than a suite.
    pub is_test: bool,
    /// The declaration.
    pub node: &'a Node,
}

/// A run begins: what runs, and how.
#[derive(Debug, Clone)]
pub(crate) struct RunStart {
    /// `pytest`, `jest`, `vitest`; `None` for `convert`.
    pub framework: Option<String>,
    /// The command: the framework's, as launched, or tcrunner's own for
    /// `convert`.
    pub command: Vec<String>,
    /// When it started.
    pub started: std::time::SystemTime,
}

/// What went wrong with a run as a whole, not with one test: each is an
/// infrastructure failure, so no pass policy passes the run.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct Problem {
    pub kind: ProblemKind,
    pub message: String,
}

/// The kinds of [`Problem`] (docs/results.md, "errors").
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ProblemKind {
    /// A test file could not be collected.
    Collection,
    /// The framework never ran our reporter: not installed, refused its
    /// arguments or configuration, failed to start.
    NotStarted,
    /// No test was collected or selected.
    NoTests,
    /// The framework died (a signal, `os._exit`) during or between tests.
    Crash,
    /// tcrunner stopped the run: a test outlived `--timeout` beyond what
    /// the framework could enforce, or `--session-timeout` ran out.
    Timeout,
    /// The run was interrupted: tcrunner was signalled, or the framework
    /// ended the run itself (pytest's exit codes 2 to 4).
    Interrupted,
    /// The reader of tcrunner's stdout went away mid-run.
    OutputGone,
    /// A report file `convert` read was missing or malformed.
    Input,
    /// The framework exited with a failure code though no test failed:
    /// an error outside any test (a global setup or teardown, an uncaught
    /// error after the last test, a coverage or snapshot check).
    RunFailed,
}

/// A run ends: its exit code and what went wrong with it as a whole.
#[derive(Debug, Clone)]
pub(crate) struct RunEnd {
    /// The exit code tcrunner returns.
    pub exit_code: i32,
    /// Run-level problems, in the order they were found.
    pub errors: Vec<Problem>,
    /// The pass policy, and whether the run met it (`None` under
    /// `framework`, whose verdict is the exit code).
    pub policy: PassPolicy,
    pub policy_met: Option<bool>,
    /// The tally by group, when the run is graded (a grading option was
    /// given): the `teamcity` dialect reports it as statistics.
    pub groups: Option<Groups>,
}

impl RunEnd {
    /// The end of a run whose framework verdict is `framework_code`, with
    /// `errors` found, judged by `policy` on `groups` (present when the run
    /// is graded): under `framework` the code stands; otherwise a run-level
    /// error is an infrastructure failure, and the policy decides between
    /// success and tests failed.
    pub(crate) fn graded(
        policy: PassPolicy,
        framework_code: i32,
        errors: Vec<Problem>,
        groups: Option<&Groups>,
    ) -> RunEnd {
        // A run-level error is an infrastructure failure, which no policy
        // passes, whatever the tests that did run say.
        let policy_met = groups
            .and_then(|groups| policy.met(groups))
            .map(|met| met && errors.is_empty());
        let exit_code = match (policy, policy_met) {
            (PassPolicy::Framework, _) => framework_code,
            _ if !errors.is_empty() => exit::INFRASTRUCTURE,
            (_, Some(true)) => exit::SUCCESS,
            (_, _) => exit::TESTS_FAILED,
        };
        RunEnd {
            exit_code,
            errors,
            policy,
            policy_met,
            groups: None,
        }
    }
}

impl RunEnd {
    /// Whether one of the run-level errors holds `text` whole (as `jest
    /// exited with code 1 though no test failed: <what it logged>` does): a
    /// file that lists the run's errors from its logs (CTRF's
    /// `extra.errors`, JUnit's properties) and then adds these, the crash,
    /// the time limit and the run that never started too, drops such a log,
    /// so that each is told once, as in the JSON result's `errors`.
    pub(crate) fn quotes(&self, text: &str) -> bool {
        (self.errors.iter()).any(|problem| problem.message.contains(text))
    }
}

/// What the tree tells every output, in output order.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TreeEvent<'a> {
    /// The run begins (before anything else a live run sends).
    RunStarted(&'a RunStart),
    /// Our reporter inside the framework is loaded: the framework and its
    /// version.
    Hello {
        runner: &'a str,
        version: Option<&'a str>,
    },
    /// The tests' own output goes straight to the framework's stdout, in
    /// order with the events (pytest `-s`): plain text between a test's
    /// start and finish is that test's.
    LiveOutput,
    /// The number of tests expected.
    Count(u64),
    /// A suite or test opens.
    Started(&'a Opened<'a>),
    /// Output of an open node, or of the run.
    Output {
        node: Option<&'a Opened<'a>>,
        stream: Stream,
        text: &'a str,
    },
    /// A test ends with a verdict (its id is `node.node.id`; `result.id`
    /// may be empty).
    Finished {
        node: &'a Opened<'a>,
        result: &'a TestResult,
    },
    /// A test never finished: the run ended under it.
    Stopped(&'a Opened<'a>),
    /// A suite closes.
    SuiteFinished(&'a Opened<'a>),
    /// A run-level note.
    Log { level: LogLevel, text: &'a str },
    /// Collect-only: a suite of the pre-declared tree opens.
    TreeSuite(&'a Opened<'a>),
    /// Collect-only: a test of the pre-declared tree.
    TreeTest(&'a Opened<'a>),
    /// Collect-only: a suite of the pre-declared tree ends.
    TreeSuiteEnd(&'a Opened<'a>),
    /// Collect-only: the pre-declared tree is complete.
    TreeEnded,
    /// The run is over and every node closed: the last event.
    RunEnded(&'a RunEnd),
}

/// One output of a run: the service-message stream, a result file, a
/// recording. [`Outputs`](super::outputs::Outputs) hands every event to each; an output
/// owns its formatting and its own handling of plain text.
pub(crate) trait Output {
    /// What a source sent, before the tree saw it: for outputs that record
    /// the run itself rather than its tree (`--events-out`); the others
    /// take nothing here, the default.
    fn source(&mut self, _event: &TestEvent) -> io::Result<()> {
        Ok(())
    }

    /// One event of the tree.
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()>;

    /// A test that starts, writes each non-empty text of `output` and
    /// finishes with `result` at once: those events, which an output may
    /// take in one step (a report file's every test comes this way).
    fn test(
        &mut self,
        node: &Opened<'_>,
        output: &[(Stream, String)],
        result: &TestResult,
    ) -> io::Result<()>
    where
        Self: Sized,
    {
        test_as_events(self, node, output, result)
    }

    /// Plain text the framework printed, as it arrived (tcrunner's own
    /// `Launching …` line too). By default it is the stream's alone: a
    /// result file has no place for it.
    fn text(&mut self, _bytes: &[u8]) -> io::Result<()> {
        Ok(())
    }

    /// Hands what was written so far on to the reader (the loop calls it
    /// whenever no input is waiting). By default nothing: a file written
    /// whole at the end is read after the run.
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// The tree is closed: writes the end of the run and flushes.
    fn finish(&mut self) -> io::Result<()>;
}

/// `Output` for an enum whose variants each hold one output: every method
/// goes to the variant's own (closed dispatch, no trait objects); the
/// variants after `none:` hold nothing and take everything as done.
macro_rules! forward_output {
    (impl<$($g:ident: $bound:path),*> for $ty:ty { $($variant:path),+ $(; none: $empty:path)? }) => {
        impl<$($g: $bound),*> $crate::report::Output for $ty {
            #[inline]
            fn source(&mut self, event: &$crate::event::TestEvent) -> std::io::Result<()> {
                match self {
                    $($variant(inner) => inner.source(event),)+
                    $($empty => Ok(()),)?
                }
            }

            #[inline]
            fn event(&mut self, event: $crate::report::TreeEvent<'_>) -> std::io::Result<()> {
                match self {
                    $($variant(inner) => inner.event(event),)+
                    $($empty => Ok(()),)?
                }
            }

            #[inline]
            fn test(
                &mut self,
                node: &$crate::report::Opened<'_>,
                output: &[($crate::event::Stream, String)],
                result: &$crate::event::TestResult,
            ) -> std::io::Result<()> {
                match self {
                    $($variant(inner) => inner.test(node, output, result),)+
                    $($empty => Ok(()),)?
                }
            }

            fn text(&mut self, bytes: &[u8]) -> std::io::Result<()> {
                match self {
                    $($variant(inner) => inner.text(bytes),)+
                    $($empty => Ok(()),)?
                }
            }

            fn flush(&mut self) -> std::io::Result<()> {
                match self {
                    $($variant(inner) => inner.flush(),)+
                    $($empty => Ok(()),)?
                }
            }

            fn finish(&mut self) -> std::io::Result<()> {
                match self {
                    $($variant(inner) => inner.finish(),)+
                    $($empty => Ok(()),)?
                }
            }
        }
    };
}
pub(crate) use forward_output;

/// [`Output::test`] as the events it stands for, one by one.
pub(crate) fn test_as_events(
    out: &mut impl Output,
    node: &Opened<'_>,
    output: &[(Stream, String)],
    result: &TestResult,
) -> io::Result<()> {
    out.event(TreeEvent::Started(node))?;
    for (stream, text) in output.iter().filter(|(_, text)| !text.is_empty()) {
        out.event(TreeEvent::Output {
            node: Some(node),
            stream: *stream,
            text,
        })?;
    }
    out.event(TreeEvent::Finished { node, result })
}
