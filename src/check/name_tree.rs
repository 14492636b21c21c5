//! Name mode: the TeamCity rules, per `flowId` (an absent flowId is the
//! default flow).
//!
//! In each flow, suites nest by name and end in reverse order; one test at a
//! time runs ("starting another test finishes the currently started test in
//! the same flow"); testFailed, testIgnored and output name the running test,
//! except that testIgnored may stand alone outside a test; only one testFailed
//! counts per test. flowStarted/flowFinished must balance.
use std::collections::HashMap;

use tcrunner_protocol::Message;

use super::report::{Rule, TestCounts, Violations};
use super::tree_msg::TreeMsg;

#[derive(Debug)]
struct OpenTest {
    name: String,
    line: u64,
    failed: bool,
    ignored: bool,
}

#[derive(Debug, Default)]
struct Flow {
    /// First-seen order, so that end-of-stream reports are deterministic.
    seq: u64,
    /// Open suites, outermost first: name and line.
    suites: Vec<(String, u64)>,
    test: Option<OpenTest>,
    /// Line of an explicit flowStarted not yet finished.
    started: Option<u64>,
}

impl Flow {
    fn is_idle(&self) -> bool {
        self.suites.is_empty() && self.test.is_none() && self.started.is_none()
    }
}

/// Every flow with something open; idle flows are dropped, so a stream that
/// gives each test its own flowId (teamcity-messages) stays small.
#[derive(Debug, Default)]
pub(super) struct NameTree {
    default: Flow,
    flows: HashMap<String, Flow>,
    next_seq: u64,
    counts: TestCounts,
    suites: u64,
}

/// What the messages in one flow change; split from the flow map so both can
/// be borrowed at once.
struct Tally<'a> {
    counts: &'a mut TestCounts,
    suites: &'a mut u64,
    /// `" in flow 'x'"` or empty for the default flow.
    flow: String,
}

impl NameTree {
    pub(super) fn message(&mut self, kind: TreeMsg, msg: &Message, line: u64, v: &mut Violations) {
        let Some(name) = msg.get("name") else {
            v.push(
                line,
                Rule::MissingName,
                format!("{} without a name", msg.name),
            );
            return;
        };
        let key = msg.get("flowId");
        let NameTree {
            default,
            flows,
            next_seq,
            counts,
            suites,
        } = self;
        let flow = match key {
            None => default,
            Some(k) => {
                if !flows.contains_key(k) {
                    *next_seq += 1;
                    flows.insert(
                        k.to_string(),
                        Flow {
                            seq: *next_seq,
                            ..Flow::default()
                        },
                    );
                }
                flows.get_mut(k).expect("inserted above")
            }
        };
        let mut tally = Tally {
            counts,
            suites,
            flow: flow_label(key),
        };
        match kind {
            TreeMsg::SuiteStarted => suite_started(flow, &mut tally, name, line, v),
            TreeMsg::SuiteFinished => suite_finished(flow, &mut tally, name, line, v),
            TreeMsg::TestStarted => test_started(flow, &mut tally, name, line, v),
            TreeMsg::TestFinished => test_finished(flow, &mut tally, name, line, v),
            TreeMsg::TestFailed => test_failed(flow, &tally, name, line, v),
            TreeMsg::TestIgnored => test_ignored(flow, &mut tally, name, line, v),
            TreeMsg::StdOut | TreeMsg::StdErr => output(flow, &tally, &msg.name, name, line, v),
            // A declared tree (collect-only) changes nothing that runs; its
            // suiteTreeStarted/Ended balance is the checker's.
            TreeMsg::TreeSuiteStarted | TreeMsg::TreeNode | TreeMsg::TreeSuiteEnded => {}
        }
        self.drop_if_idle(key);
    }

    pub(super) fn flow_started(&mut self, msg: &Message, line: u64, v: &mut Violations) {
        let Some(key) = msg.get("flowId") else {
            v.push(line, Rule::Flow, "flowStarted without a flowId");
            return;
        };
        if !self.flows.contains_key(key) {
            self.next_seq += 1;
            self.flows.insert(
                key.to_string(),
                Flow {
                    seq: self.next_seq,
                    ..Flow::default()
                },
            );
        }
        let flow = self.flows.get_mut(key).expect("inserted above");
        match flow.started {
            Some(at) => v.push(
                line,
                Rule::Flow,
                format!("flowStarted '{key}' again; it started on line {at}"),
            ),
            None => flow.started = Some(line),
        }
    }

    pub(super) fn flow_finished(&mut self, msg: &Message, line: u64, v: &mut Violations) {
        let Some(key) = msg.get("flowId") else {
            v.push(line, Rule::Flow, "flowFinished without a flowId");
            return;
        };
        let Some(flow) = self.flows.get_mut(key).filter(|f| f.started.is_some()) else {
            v.push(
                line,
                Rule::Flow,
                format!("flowFinished '{key}', which was never started"),
            );
            return;
        };
        flow.started = None;
        let at = format!(" when flow '{key}' finished on line {line}");
        if let Some(test) = flow.test.take() {
            v.push(
                test.line,
                Rule::LeftOpen,
                format!("test '{}' still running{at}", test.name),
            );
            self.counts.unfinished += 1;
        }
        for (suite, opened) in flow.suites.drain(..).rev() {
            v.push(
                opened,
                Rule::LeftOpen,
                format!("suite '{suite}' still open{at}"),
            );
        }
        self.drop_if_idle(Some(key));
    }

    /// Reports everything still open and returns the counts.
    pub(super) fn finish(&mut self, v: &mut Violations) -> (TestCounts, u64) {
        let mut flows: Vec<(Option<String>, Flow)> =
            self.flows.drain().map(|(k, f)| (Some(k), f)).collect();
        flows.push((None, std::mem::take(&mut self.default)));
        flows.sort_by_key(|(_, f)| f.seq);
        for (key, flow) in flows {
            let label = flow_label(key.as_deref());
            if let Some(test) = flow.test {
                v.push(
                    test.line,
                    Rule::LeftOpen,
                    format!("test '{}'{label} never finished", test.name),
                );
                self.counts.unfinished += 1;
            }
            for (suite, opened) in flow.suites.into_iter().rev() {
                v.push(
                    opened,
                    Rule::LeftOpen,
                    format!("suite '{suite}'{label} never finished"),
                );
            }
            if let (Some(key), Some(at)) = (key, flow.started) {
                v.push(
                    at,
                    Rule::LeftOpen,
                    format!("flow '{key}' never got its flowFinished"),
                );
            }
        }
        (self.counts, self.suites)
    }

    fn drop_if_idle(&mut self, key: Option<&str>) {
        if let Some(k) = key {
            if self.flows.get(k).is_some_and(Flow::is_idle) {
                self.flows.remove(k);
            }
        }
    }
}

fn flow_label(key: Option<&str>) -> String {
    key.map(|k| format!(" in flow '{k}'")).unwrap_or_default()
}

/// Counts a test by its verdict as it leaves the flow.
fn close(test: OpenTest, tally: &mut Tally<'_>) {
    let c = &mut *tally.counts;
    if test.failed {
        c.failed += 1;
    } else if test.ignored {
        c.ignored += 1;
    } else {
        c.passed += 1;
    }
}

fn suite_started(
    flow: &mut Flow,
    tally: &mut Tally<'_>,
    name: &str,
    line: u64,
    v: &mut Violations,
) {
    if let Some(test) = &flow.test {
        v.push(
            line,
            Rule::Unbalanced,
            format!(
                "testSuiteStarted '{name}' inside test '{}' (line {}){}",
                test.name, test.line, tally.flow
            ),
        );
    }
    flow.suites.push((name.to_string(), line));
    *tally.suites += 1;
}

fn suite_finished(
    flow: &mut Flow,
    tally: &mut Tally<'_>,
    name: &str,
    line: u64,
    v: &mut Violations,
) {
    if let Some(test) = flow.test.take() {
        v.push(
            line,
            Rule::Unbalanced,
            format!(
                "testSuiteFinished '{name}' while test '{}' (line {}) is still running{}",
                test.name, test.line, tally.flow
            ),
        );
        close(test, tally);
    }
    match flow.suites.iter().rposition(|(open, _)| open == name) {
        Some(pos) => {
            for (inner, opened) in flow.suites.drain(pos + 1..).rev() {
                v.push(
                    line,
                    Rule::SuiteMismatch,
                    format!("testSuiteFinished '{name}' while inner suite '{inner}' (line {opened}) is still open{}", tally.flow),
                );
            }
            flow.suites.pop();
        }
        None => match flow.suites.pop() {
            None => v.push(
                line,
                Rule::Unbalanced,
                format!("testSuiteFinished '{name}' but no suite is open{}", tally.flow),
            ),
            Some((open, opened)) => v.push(
                line,
                Rule::SuiteMismatch,
                format!(
                    "testSuiteFinished '{name}' does not match the open suite '{open}' (line {opened}){}",
                    tally.flow
                ),
            ),
        },
    }
}

fn test_started(flow: &mut Flow, tally: &mut Tally<'_>, name: &str, line: u64, v: &mut Violations) {
    if let Some(test) = flow.test.take() {
        v.push(
            line,
            Rule::TestOverlap,
            format!(
                "testStarted '{name}' while '{}' (line {}) is still running{}; TeamCity finishes '{}' here",
                test.name, test.line, tally.flow, test.name
            ),
        );
        close(test, tally);
    }
    flow.test = Some(OpenTest {
        name: name.to_string(),
        line,
        failed: false,
        ignored: false,
    });
}

fn test_finished(
    flow: &mut Flow,
    tally: &mut Tally<'_>,
    name: &str,
    line: u64,
    v: &mut Violations,
) {
    match flow.test.take() {
        None => v.push(
            line,
            Rule::Unbalanced,
            format!("testFinished '{name}' but no test is running{}", tally.flow),
        ),
        Some(test) => {
            if test.name != name {
                v.push(
                    line,
                    Rule::WrongTest,
                    format!(
                        "testFinished '{name}' but the running test is '{}' (line {}){}",
                        test.name, test.line, tally.flow
                    ),
                );
            }
            close(test, tally);
        }
    }
}

fn test_failed(flow: &mut Flow, tally: &Tally<'_>, name: &str, line: u64, v: &mut Violations) {
    match &mut flow.test {
        Some(test) if test.name == name => {
            if test.failed {
                v.push(
                    line,
                    Rule::DuplicateFailure,
                    format!(
                        "second testFailed for '{name}'{}; TeamCity keeps only the first",
                        tally.flow
                    ),
                );
            } else if test.ignored {
                v.push(
                    line,
                    Rule::StateChange,
                    format!("testFailed for '{name}' after testIgnored{}", tally.flow),
                );
            }
            test.failed = true;
        }
        other => v.push(
            line,
            Rule::WrongTest,
            not_running("testFailed", name, other.as_ref(), &tally.flow),
        ),
    }
}

fn test_ignored(flow: &mut Flow, tally: &mut Tally<'_>, name: &str, line: u64, v: &mut Violations) {
    match &mut flow.test {
        // TeamCity lets testIgnored stand alone, outside any test.
        None => tally.counts.ignored += 1,
        Some(test) if test.name == name => {
            if test.ignored {
                v.push(
                    line,
                    Rule::StateChange,
                    format!("second testIgnored for '{name}'{}", tally.flow),
                );
            } else if test.failed {
                v.push(
                    line,
                    Rule::StateChange,
                    format!("testIgnored for '{name}' after testFailed{}", tally.flow),
                );
            }
            test.ignored = true;
        }
        Some(test) => v.push(
            line,
            Rule::WrongTest,
            not_running("testIgnored", name, Some(test), &tally.flow),
        ),
    }
}

fn output(flow: &Flow, tally: &Tally<'_>, what: &str, name: &str, line: u64, v: &mut Violations) {
    match &flow.test {
        Some(test) if test.name == name => {}
        other => v.push(
            line,
            Rule::OutputTarget,
            not_running(what, name, other.as_ref(), &tally.flow),
        ),
    }
}

fn not_running(what: &str, name: &str, running: Option<&OpenTest>, flow: &str) -> String {
    match running {
        None => format!("{what} for '{name}' but no test is running{flow}"),
        Some(t) => format!(
            "{what} for '{name}' but the running test is '{}' (line {}){flow}",
            t.name, t.line
        ),
    }
}
