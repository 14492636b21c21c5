//! The `teamcity` dialect: suites and tests by name, as a TeamCity build step
//! reads them (pycharm-and-teamcity-protocol §3).
//!
//! - Each file is one flow (`flowId`) so files run by parallel workers never
//!   mix. Its suite is named by the file's relative path (directory nodes fold
//!   into that name), classes and describe blocks nest inside it, and tests
//!   keep the framework's own name: stable across builds and free of absolute
//!   paths, so history and muting work.
//! - A test or suite that starts while a test of the same flow is running
//!   (parallel tests in one file, subtests) gets a flow of its own, since
//!   "starting another test finishes the currently started test in the same
//!   flow". That flow opens the node's whole suite chain itself (the file,
//!   classes, describes) and closes it before `flowFinished`, so the test's
//!   full name is the same whichever flow runs it; a subtest is named after
//!   its test (`test_x (i=1)`), as TeamCity nests nothing inside a test.
//! - Flow ids start with the process id, so two runs reporting into one
//!   build never share a flow.
//! - TeamCity takes two tests with the same full name (suites and name) for
//!   two runs of one test: it shows one test, and under `testRetrySupport`
//!   a later pass mutes an earlier failure. Each node of the tree is a test
//!   of its own (a framework's retries are folded into one node), so a test
//!   whose full name was already taken in this run (a title used twice in a
//!   describe block, subtests with the same parameters, a path given twice)
//!   is named `name #2`, `name #3`, in the order they start.
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hasher};
use std::io::{self, Write};

use tcrunner_protocol::{Message, Value};

use super::grading::Groups;
use super::messages::{duration, failure, failure_message, log_message, MessageWriter, STOPPED};
use super::output::{Opened, Output, TreeEvent};
use crate::event::{NodeKind, Stream, Verdict};
use crate::hash::FastMap;

pub(crate) struct Teamcity<W: Write> {
    out: MessageWriter<W>,
    /// Whether the tests' own output comes as plain text between their
    /// start and end ([`crate::event::TestEvent::LiveOutput`]): then TeamCity is told to
    /// take that text as the test's output.
    live_output: bool,
    /// Open nodes: name as TeamCity knows it, and the flow it was started in.
    nodes: FastMap<u64, Named>,
    /// Running tests per flow (a flow id string → how many tests run in it).
    busy: FastMap<String, u32>,
    /// The suites TeamCity has open in each flow, outermost first. TeamCity
    /// nests by order, so a suite whose source has not said it is done (a
    /// jest describe block) is closed here as soon as a sibling starts.
    stacks: FastMap<String, Vec<u64>>,
    /// Scratch list of [`Teamcity::arrange`], kept for its allocation.
    chain: Vec<u64>,
    /// What every flow id starts with: this process's id.
    run: String,
    /// The full names of the tests started so far, hashed ([`scoped`]).
    taken: HashSet<u64>,
}

struct Named {
    name: String,
    parent: u64,
    /// Open in TeamCity's view (a suite closed early for a sibling is not).
    open: bool,
    is_test: bool,
    flow: String,
    /// Directory nodes are not reported; they only prefix file names.
    silent: bool,
    /// The suite names this node's own flow opened around it (outermost
    /// first), to close before `flowFinished`; `None` in a shared flow.
    own_flow: Option<Vec<String>>,
    /// The suite path a child's full name is under, hashed: a suite's own,
    /// a test's suite's (its subtests sit beside it), a folded directory's
    /// parent's.
    scope: u64,
}

impl<W: Write> Teamcity<W> {
    /// Writes the run's opening messages.
    pub(super) fn start(out: MessageWriter<W>, retry_support: bool) -> io::Result<Self> {
        let mut stream = Teamcity {
            out,
            live_output: false,
            nodes: FastMap::default(),
            busy: FastMap::default(),
            stacks: FastMap::default(),
            chain: Vec::new(),
            run: std::process::id().to_string(),
            taken: HashSet::new(),
        };
        if retry_support {
            stream
                .out
                .send(Message::new("testRetrySupport").with("enabled", "true"))?;
        }
        Ok(stream)
    }

    fn started(&mut self, node: &Opened<'_>) -> io::Result<()> {
        let parent = self.nodes.get(&node.parent);
        let parent_scope = parent.map_or(0, |p| p.scope);
        if node.node.kind == NodeKind::Dir {
            let name = match parent {
                Some(p) if p.silent => format!("{}/{}", p.name, node.node.name),
                _ => node.node.name.clone(),
            };
            self.nodes.insert(
                node.id,
                Named {
                    name,
                    parent: node.parent,
                    open: false,
                    is_test: false,
                    flow: self.flow_id(node.flow),
                    silent: true,
                    own_flow: None,
                    scope: parent_scope,
                },
            );
            return Ok(());
        }
        // A file suite carries the folded directory path in its name; a
        // subtest its test's name, as TeamCity nests nothing inside a test.
        let mut name = match parent {
            Some(p) if p.silent => format!("{}/{}", p.name, node.node.name),
            Some(p) if p.is_test => format!("{} {}", p.name, node.node.name),
            _ => node.node.name.clone(),
        };
        let scope = if node.is_test {
            let mut full = scoped(parent_scope, &name);
            let mut seen = 1;
            let first = name.len();
            while !self.taken.insert(full) {
                seen += 1;
                name.truncate(first);
                name.push_str(&format!(" #{seen}"));
                full = scoped(parent_scope, &name);
            }
            parent_scope
        } else {
            scoped(parent_scope, &name)
        };
        let mut flow = match parent {
            Some(p) if !p.silent => p.flow.clone(),
            _ => self.flow_id(node.flow),
        };
        // TeamCity runs one test at a time per flow: a node under a test
        // (subtests), or a node that starts while a test runs in its flow
        // (parallel tests in one file), gets a flow of its own, which opens
        // the node's suite chain itself.
        let under_test = parent.is_some_and(|p| p.is_test);
        let flow_busy = self.busy.get(&flow).is_some_and(|&n| n > 0);
        let own_flow = if under_test || flow_busy {
            flow = format!("{}.{}", self.run, node.id);
            self.out
                .send(Message::new("flowStarted").with("flowId", flow.as_str()))?;
            let suites = self.suite_names(node.parent);
            for suite in &suites {
                let attrs = [
                    ("name", suite.as_str().into()),
                    ("flowId", flow.as_str().into()),
                ];
                self.out.send_parts("testSuiteStarted", &attrs)?;
            }
            Some(suites)
        } else {
            if node.is_test {
                match self.busy.get_mut(&flow) {
                    Some(running) => *running += 1,
                    None => drop(self.busy.insert(flow.clone(), 1)),
                }
            }
            self.arrange(&flow, node.parent)?;
            None
        };
        let kind = if node.is_test {
            "testStarted"
        } else {
            "testSuiteStarted"
        };
        let attrs = [
            ("name", name.as_str().into()),
            ("flowId", flow.as_str().into()),
            (
                "captureStandardOutput",
                if self.live_output { "true" } else { "false" }.into(),
            ),
        ];
        let n = if node.is_test { 3 } else { 2 };
        self.out.send_parts(kind, &attrs[..n])?;
        if !node.is_test {
            self.stacks.entry(flow.clone()).or_default().push(node.id);
        }
        let open = !node.is_test;
        self.nodes.insert(
            node.id,
            Named {
                name,
                parent: node.parent,
                open,
                is_test: node.is_test,
                flow,
                silent: false,
                own_flow,
                scope,
            },
        );
        Ok(())
    }

    /// The flow id of a tree flow: the process id, then the flow's node id.
    fn flow_id(&self, flow: u64) -> String {
        format!("{}-{flow}", self.run)
    }

    /// The names of the reported suites from the outermost down to `parent`
    /// (tests and folded directories left out).
    fn suite_names(&self, parent: u64) -> Vec<String> {
        let mut names: Vec<String> = self
            .suites_up(parent)
            .map(|(_, named)| named.name.clone())
            .collect();
        names.reverse();
        names
    }

    /// The reported suites from `parent` outwards (tests and folded
    /// directories left out), with their ids.
    fn suites_up(&self, parent: u64) -> impl Iterator<Item = (u64, &Named)> {
        let first = self.nodes.get(&parent).map(|named| (parent, named));
        std::iter::successors(first, |(_, named)| {
            self.nodes.get(&named.parent).map(|up| (named.parent, up))
        })
        .filter(|(_, named)| !named.silent && !named.is_test)
    }

    /// Closes the suites a node's own flow opened, innermost first, and the flow.
    fn finish_own_flow(&mut self, flow: &str, suites: &[String]) -> io::Result<()> {
        for suite in suites.iter().rev() {
            let attrs = [("name", suite.as_str().into()), ("flowId", flow.into())];
            self.out.send_parts("testSuiteFinished", &attrs)?;
        }
        self.out
            .send(Message::new("flowFinished").with("flowId", flow))
    }

    /// Makes `parent` the innermost open suite of `flow`: closes suites that
    /// are not its ancestors, reopens ancestors closed early.
    fn arrange(&mut self, flow: &str, parent: u64) -> io::Result<()> {
        // The usual case, and the only cheap one in a deep tree: the stack
        // is the chain of its innermost suite, and that is `parent`.
        if self.stacks.get(flow).and_then(|stack| stack.last()) == Some(&parent) {
            return Ok(());
        }
        let mut chain = std::mem::take(&mut self.chain);
        chain.clear();
        let in_flow = self
            .suites_up(parent)
            .filter(|(_, named)| named.flow == flow);
        chain.extend(in_flow.map(|(id, _)| id));
        chain.reverse();
        if !self.stacks.contains_key(flow) {
            self.stacks.insert(flow.to_owned(), Vec::new());
        }
        let stack = self.stacks.get_mut(flow).expect("inserted above");
        let keep = stack.iter().zip(&chain).take_while(|(a, b)| a == b).count();
        let closing: Vec<u64> = stack.drain(keep..).rev().collect();
        for id in closing {
            let named = self.nodes.get_mut(&id).expect("stacked suites are known");
            named.open = false;
            let msg = Message::new("testSuiteFinished")
                .with("name", named.name.as_str())
                .with("flowId", flow);
            self.out.send(msg)?;
        }
        for &id in &chain[keep..] {
            let named = self.nodes.get_mut(&id).expect("ancestors are known");
            named.open = true;
            let msg = Message::new("testSuiteStarted")
                .with("name", named.name.as_str())
                .with("flowId", flow);
            self.out.send(msg)?;
            self.stacks.get_mut(flow).expect("created above").push(id);
        }
        self.chain = chain;
        Ok(())
    }

    fn test_done(&mut self, node: &Opened<'_>) -> io::Result<Named> {
        let named = self
            .nodes
            .remove(&node.id)
            .expect("reported nodes were started");
        if let Some(suites) = &named.own_flow {
            self.finish_own_flow(&named.flow, suites)?;
        } else if let Some(running) = self.busy.get_mut(&named.flow) {
            *running = running.saturating_sub(1);
        }
        Ok(named)
    }
}

impl<W: Write> Teamcity<W> {
    /// A graded run's tally, for TeamCity to chart: per group,
    /// `tcrunner.group.<GROUP>.passed` and `.total`.
    fn group_statistics(&mut self, groups: &Groups) -> io::Result<()> {
        for (group, count) in groups.iter() {
            for (what, value) in [("passed", count.passed), ("total", count.total)] {
                self.out.send(
                    Message::new("buildStatisticValue")
                        .with("key", format!("tcrunner.group.{group}.{what}"))
                        .with("value", value.to_string()),
                )?;
            }
        }
        Ok(())
    }
}

/// `name` under the suite path `scope`, hashed: what tells full names apart.
fn scoped(scope: u64, name: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    hasher.write_u64(scope);
    hasher.write(name.as_bytes());
    hasher.finish()
}

impl<W: Write> Output for Teamcity<W> {
    fn event(&mut self, event: TreeEvent<'_>) -> io::Result<()> {
        match event {
            TreeEvent::LiveOutput => {
                self.live_output = true;
                Ok(())
            }
            // TeamCity counts tests itself; testCount and pre-declared trees
            // (collect-only) are IntelliJ's.
            TreeEvent::Count(_)
            | TreeEvent::TreeSuite(_)
            | TreeEvent::TreeTest(_)
            | TreeEvent::TreeSuiteEnd(_)
            | TreeEvent::TreeEnded
            | TreeEvent::RunStarted(_)
            | TreeEvent::Hello { .. } => Ok(()),
            TreeEvent::RunEnded(end) => match &end.groups {
                Some(groups) => self.group_statistics(groups),
                None => Ok(()),
            },
            TreeEvent::Started(node) => self.started(node),
            TreeEvent::Output { node, stream, text } => {
                match node.and_then(|n| self.nodes.get(&n.id).filter(|_| n.is_test)) {
                    Some(named) => {
                        let kind = match stream {
                            Stream::Stdout => "testStdOut",
                            Stream::Stderr => "testStdErr",
                        };
                        let attrs = [
                            ("name", named.name.as_str().into()),
                            ("flowId", named.flow.as_str().into()),
                        ];
                        self.out.send_chunked(kind, &attrs, "out", text)
                    }
                    // Suite and run output has no test to belong to: build log text.
                    None => self.out.text(text),
                }
            }
            TreeEvent::Finished { node, result } => {
                let named = self
                    .nodes
                    .get(&node.id)
                    .expect("reported nodes were started");
                let name = Value::Text(&named.name);
                let flow = Value::Text(&named.flow);
                match result.outcome.verdict() {
                    Verdict::Passed => {}
                    Verdict::Failed => {
                        let mut attrs = [("", Value::Text("")); 8];
                        attrs[0] = ("name", name);
                        attrs[1] = ("flowId", flow);
                        let n = failure(&mut attrs, 2, result);
                        self.out.send_parts("testFailed", &attrs[..n])?;
                    }
                    Verdict::Ignored => self.out.send_parts(
                        "testIgnored",
                        &[
                            ("name", name),
                            ("flowId", flow),
                            ("message", failure_message(result).into()),
                        ],
                    )?,
                }
                let mut attrs = [("name", name), ("flowId", flow), ("", Value::Text(""))];
                let mut n = 2;
                if let Some(ms) = result.duration_ms {
                    attrs[2] = ("duration", duration(ms));
                    n = 3;
                }
                self.out.send_parts("testFinished", &attrs[..n])?;
                self.test_done(node).map(drop)
            }
            TreeEvent::Stopped(node) => {
                let named = self
                    .nodes
                    .get(&node.id)
                    .expect("reported nodes were started");
                let (name, flow) = (named.name.clone(), named.flow.clone());
                self.out.send(
                    Message::new("testIgnored")
                        .with("name", name.as_str())
                        .with("flowId", flow.as_str())
                        .with("message", STOPPED),
                )?;
                self.out.send(
                    Message::new("testFinished")
                        .with("name", name)
                        .with("flowId", flow),
                )?;
                self.test_done(node).map(drop)
            }
            TreeEvent::SuiteFinished(node) => {
                let named = self
                    .nodes
                    .remove(&node.id)
                    .expect("reported nodes were started");
                if named.silent {
                    return Ok(());
                }
                if node.id == node.flow {
                    self.busy.remove(&named.flow);
                }
                if !named.open {
                    return Ok(()); // closed already, when a sibling started
                }
                // Inner suites still open in TeamCity's view close first.
                let stack = self.stacks.entry(named.flow.clone()).or_default();
                let at = stack
                    .iter()
                    .rposition(|&id| id == node.id)
                    .unwrap_or(stack.len());
                let closing: Vec<u64> = stack.drain(at..).rev().collect();
                for id in closing.into_iter().filter(|&id| id != node.id) {
                    if let Some(inner) = self.nodes.get_mut(&id) {
                        inner.open = false;
                        let msg = Message::new("testSuiteFinished")
                            .with("name", inner.name.as_str())
                            .with("flowId", named.flow.as_str());
                        self.out.send(msg)?;
                    }
                }
                self.out.send(
                    Message::new("testSuiteFinished")
                        .with("name", named.name)
                        .with("flowId", named.flow.as_str()),
                )?;
                if let Some(suites) = &named.own_flow {
                    self.finish_own_flow(&named.flow, suites)?;
                }
                Ok(())
            }
            TreeEvent::Log { level, text } => self.out.send(log_message(level, text)),
        }
    }

    fn text(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.bytes(bytes)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.finish()
    }
}
