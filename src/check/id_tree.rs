//! Id mode: the rules of IntelliJ's `GeneralIdBasedToSMTRunnerEventsConvertor`.
//!
//! Every node has a state; the converter allows `NOT_RUNNING → RUNNING |
//! IGNORED`, `RUNNING → FINISHED | FAILED | IGNORED`, `FINISHED ↔ FAILED` and
//! `IGNORED → FINISHED`, and like it the state only ever moves forward in that
//! enum order (so `testFailed` then `testFinished` stays failed). A parent must
//! be the root `0` or a node that is still not-running or running. On top of
//! the converter, this checker also rejects a second `testFinished`, a node
//! ending while its children run, output to a node that is not running, and
//! anything still running at the end.
//!
//! Declared nodes (`suiteTreeStarted`/`suiteTreeNode`) are only queued by
//! the IDE's `GeneralTestEventsProcessor`: it creates them at `treeEnded` (or
//! at a `suiteTreeEnded` once more than 100 wait), so a message naming one
//! before that finds no node, and declarations never followed by
//! `treeEnded` never show.
use std::collections::HashMap;
use std::fmt;

use tcrunner_protocol::Message;

use super::report::{Rule, TestCounts, Violations};
use super::tree_msg::TreeMsg;

/// IntelliJ's node states, in its enum order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    NotRunning,
    Running,
    Finished,
    Failed,
    Ignored,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::NotRunning => "NOT_RUNNING",
            State::Running => "RUNNING",
            State::Finished => "FINISHED",
            State::Failed => "FAILED",
            State::Ignored => "IGNORED",
        })
    }
}

impl State {
    /// The converter's `setState` table.
    fn allows(self, to: State) -> bool {
        use State::*;
        matches!(
            (self, to),
            (NotRunning, Running | Ignored)
                | (Running, Finished | Failed | Ignored)
                | (Finished, Failed)
                | (Failed, Finished)
                | (Ignored, Finished)
        )
    }
}

#[derive(Debug)]
struct Node {
    id: Box<str>,
    name: Box<str>,
    /// `None` is the root `0`.
    parent: Option<usize>,
    suite: bool,
    state: State,
    /// Ever moved to RUNNING (suites count only then).
    started: bool,
    /// A testFinished/testSuiteFinished was seen.
    finish_seen: bool,
    /// Declared, and not yet created by the IDE (no `treeEnded` since).
    pending: bool,
    running_children: u32,
    registered_line: u64,
    started_line: u64,
    ended_line: u64,
}

/// All nodes by id; linear in the stream, one hash lookup per message.
#[derive(Debug, Default)]
pub(super) struct IdTree {
    nodes: Vec<Node>,
    by_id: HashMap<Box<str>, usize>,
    /// Declared nodes the IDE has queued but not created yet.
    pending: Vec<usize>,
    /// The id the tree hangs from, when not `0`: the node a stream written
    /// with `--offset` is embedded under.
    root: Option<Box<str>>,
}

/// Queued declarations the IDE creates at a `suiteTreeEnded` rather than
/// waiting for `treeEnded` (`GeneralTestEventsProcessor`).
const DECLARATION_BATCH: usize = 100;

impl IdTree {
    /// A tree that hangs from node `root` rather than `0`.
    pub(super) fn under(root: &str) -> IdTree {
        IdTree {
            root: (root != "0").then(|| root.into()),
            ..IdTree::default()
        }
    }

    fn root(&self) -> &str {
        self.root.as_deref().unwrap_or("0")
    }

    pub(super) fn message(&mut self, kind: TreeMsg, msg: &Message, line: u64, v: &mut Violations) {
        match kind {
            TreeMsg::SuiteStarted => self.start(msg, line, true, v),
            TreeMsg::TestStarted => self.start(msg, line, false, v),
            TreeMsg::TreeSuiteStarted => self.declare(msg, line, true, v),
            TreeMsg::TreeNode => self.declare(msg, line, false, v),
            TreeMsg::SuiteFinished => self.end(msg, line, State::Finished, Some(true), v),
            TreeMsg::TestFinished => self.end(msg, line, State::Finished, Some(false), v),
            TreeMsg::TestFailed => self.end(msg, line, State::Failed, None, v),
            TreeMsg::TestIgnored => self.end(msg, line, State::Ignored, None, v),
            TreeMsg::StdOut | TreeMsg::StdErr => self.output(msg, line, v),
            // Handled by the checker, by name, before the mode split.
            TreeMsg::TreeSuiteEnded => {}
        }
    }

    /// `treeEnded`: the IDE creates every queued declaration.
    pub(super) fn tree_ended(&mut self) {
        for idx in self.pending.drain(..) {
            self.nodes[idx].pending = false;
        }
    }

    /// `suiteTreeEnded`: the IDE creates the queued declarations once more
    /// than a batch waits.
    pub(super) fn declaration_ended(&mut self) {
        if self.pending.len() > DECLARATION_BATCH {
            self.tree_ended();
        }
    }

    /// Reports a message naming a declared node the IDE has not created yet.
    fn not_created(&self, idx: usize, msg: &Message, line: u64, v: &mut Violations) {
        let node = &self.nodes[idx];
        if node.pending {
            v.push(
                line,
                Rule::UnknownNode,
                format!(
                    "{} names {}, declared on line {} but not created before treeEnded",
                    msg.name,
                    describe(node),
                    node.registered_line
                ),
            );
        }
    }

    /// Reports nodes still running and counts tests by final state.
    pub(super) fn finish(&self, v: &mut Violations) -> (TestCounts, u64) {
        if let Some(&first) = self.pending.first() {
            v.push(
                self.nodes[first].registered_line,
                Rule::LeftOpen,
                format!(
                    "{} declarations from line {} on are never followed by treeEnded; the IDE never shows them",
                    self.pending.len(),
                    self.nodes[first].registered_line
                ),
            );
        }
        let mut counts = TestCounts::default();
        let mut suites = 0;
        for node in &self.nodes {
            if node.state == State::Running {
                v.push(
                    node.started_line,
                    Rule::LeftOpen,
                    format!(
                        "{} started on line {} never ended",
                        describe(node),
                        node.started_line
                    ),
                );
            }
            if node.suite {
                suites += u64::from(node.started);
                continue;
            }
            match node.state {
                State::NotRunning => {}
                State::Running => counts.unfinished += 1,
                State::Finished => counts.passed += 1,
                State::Failed => counts.failed += 1,
                State::Ignored => counts.ignored += 1,
            }
        }
        (counts, suites)
    }

    /// testSuiteStarted / testStarted: registers a node, starts it, or both.
    fn start(&mut self, msg: &Message, line: u64, suite: bool, v: &mut Violations) {
        let Some(id) = node_id(msg, self.root(), line, v) else {
            return;
        };
        let running = msg.get("running") != Some("false");
        if let Some(&idx) = self.by_id.get(id) {
            self.not_created(idx, msg, line, v);
            self.restart(idx, msg, line, suite, running, v);
            return;
        }
        if msg.get("name").is_none() {
            v.push(
                line,
                Rule::MissingName,
                format!("{} for nodeId '{id}' without a name", msg.name),
            );
        }
        let parent = self.parent(msg, id, line, v);
        let idx = self.register(id, msg, parent, suite, line);
        if running {
            self.set_running(idx, line);
        }
    }

    /// A start message for an id already registered: only a registered,
    /// not-yet-running node may be started this way (`running='false'` first).
    fn restart(
        &mut self,
        idx: usize,
        msg: &Message,
        line: u64,
        suite: bool,
        running: bool,
        v: &mut Violations,
    ) {
        let node = &self.nodes[idx];
        if node.suite != suite {
            v.push(
                line,
                Rule::NodeKind,
                format!("{} for {}", msg.name, describe(node)),
            );
        }
        if node.state != State::NotRunning || !running {
            let what = if node.state == State::NotRunning {
                "registered"
            } else {
                "started"
            };
            let at = if node.started {
                node.started_line
            } else {
                node.registered_line
            };
            v.push(
                line,
                Rule::DuplicateNode,
                format!(
                    "{} for nodeId '{}', already {what} on line {at}",
                    msg.name, node.id
                ),
            );
            return;
        }
        let registered_parent = node.parent.map_or(self.root(), |p| &*self.nodes[p].id);
        if let Some(given) = msg.get("parentNodeId") {
            if given != registered_parent {
                v.push(
                    line,
                    Rule::ParentId,
                    format!(
                        "{} for nodeId '{}' gives parentNodeId '{given}', but it was registered under '{registered_parent}' on line {}",
                        msg.name, node.id, node.registered_line
                    ),
                );
            }
        }
        if let Some(p) = self.ended_ancestor(node.parent) {
            let parent = &self.nodes[p];
            v.push(
                line,
                Rule::ParentFinished,
                format!(
                    "{} for nodeId '{}' under {}, which ended on line {}",
                    msg.name,
                    node.id,
                    describe(parent),
                    parent.ended_line
                ),
            );
        }
        self.set_running(idx, line);
    }

    /// suiteTreeStarted / suiteTreeNode: declares a node that is not running.
    fn declare(&mut self, msg: &Message, line: u64, suite: bool, v: &mut Violations) {
        let Some(id) = node_id(msg, self.root(), line, v) else {
            return;
        };
        if let Some(&idx) = self.by_id.get(id) {
            let node = &self.nodes[idx];
            v.push(
                line,
                Rule::DuplicateNode,
                format!(
                    "{} for nodeId '{id}', already used on line {}",
                    msg.name, node.registered_line
                ),
            );
            return;
        }
        if msg.get("name").is_none() {
            v.push(
                line,
                Rule::MissingName,
                format!("{} for nodeId '{id}' without a name", msg.name),
            );
        }
        let parent = self.parent(msg, id, line, v);
        let idx = self.register(id, msg, parent, suite, line);
        self.nodes[idx].pending = true;
        self.pending.push(idx);
    }

    /// Resolves `parentNodeId` for a new node. A bad parent is reported and
    /// the node is still registered (under the root) so that one mistake
    /// gives one violation, not one per later message.
    fn parent(&self, msg: &Message, id: &str, line: u64, v: &mut Violations) -> Option<usize> {
        let Some(parent_id) = msg.get("parentNodeId") else {
            v.push(
                line,
                Rule::ParentId,
                format!("{} for nodeId '{id}' without a parentNodeId", msg.name),
            );
            return None;
        };
        if parent_id == self.root() {
            return None;
        }
        let Some(&p) = self.by_id.get(parent_id) else {
            v.push(
                line,
                Rule::UnknownParent,
                format!("{} for nodeId '{id}' names parentNodeId '{parent_id}', which is not registered", msg.name),
            );
            return None;
        };
        // A declaration may sit under a queued one: both are created together.
        if !msg.name.starts_with("suiteTree") {
            self.not_created(p, msg, line, v);
        }
        if let Some(e) = self.ended_ancestor(Some(p)) {
            let ended = &self.nodes[e];
            v.push(
                line,
                Rule::ParentFinished,
                format!(
                    "{} for nodeId '{id}' under {}, which ended on line {}",
                    msg.name,
                    describe(ended),
                    ended.ended_line
                ),
            );
        }
        Some(p)
    }

    /// The node a start would attach under: the first ancestor from `from`
    /// up that is not merely registered, if that one already ended. (Starting
    /// a node starts its registered ancestors, so they do not count.)
    fn ended_ancestor(&self, from: Option<usize>) -> Option<usize> {
        let mut cur = from;
        while let Some(i) = cur {
            match self.nodes[i].state {
                State::NotRunning => cur = self.nodes[i].parent,
                State::Running => return None,
                _ => return Some(i),
            }
        }
        None
    }

    fn register(
        &mut self,
        id: &str,
        msg: &Message,
        parent: Option<usize>,
        suite: bool,
        line: u64,
    ) -> usize {
        let idx = self.nodes.len();
        self.nodes.push(Node {
            id: id.into(),
            name: msg.get("name").unwrap_or_default().into(),
            parent,
            suite,
            state: State::NotRunning,
            started: false,
            finish_seen: false,
            pending: false,
            running_children: 0,
            registered_line: line,
            started_line: 0,
            ended_line: 0,
        });
        self.by_id.insert(id.into(), idx);
        idx
    }

    /// Starts a node and every not-running ancestor, like the converter's
    /// `setNodeAndAncestorsRunning`.
    fn set_running(&mut self, idx: usize, line: u64) {
        let mut cur = Some(idx);
        while let Some(i) = cur {
            let node = &mut self.nodes[i];
            if node.state != State::NotRunning {
                break;
            }
            node.state = State::Running;
            node.started = true;
            node.started_line = line;
            cur = node.parent;
            if let Some(p) = cur {
                self.nodes[p].running_children += 1;
            }
        }
    }

    /// testFinished / testSuiteFinished / testFailed / testIgnored.
    /// `suite` says which kind a finish message is for (`None`: either).
    fn end(
        &mut self,
        msg: &Message,
        line: u64,
        to: State,
        suite: Option<bool>,
        v: &mut Violations,
    ) {
        let Some(id) = node_id(msg, self.root(), line, v) else {
            return;
        };
        let Some(&idx) = self.by_id.get(id) else {
            v.push(
                line,
                Rule::UnknownNode,
                format!("{} for nodeId '{id}', which was never registered", msg.name),
            );
            return;
        };
        self.not_created(idx, msg, line, v);
        let node = &self.nodes[idx];
        if suite.is_some_and(|s| s != node.suite) {
            v.push(
                line,
                Rule::NodeKind,
                format!("{} for {}", msg.name, describe(node)),
            );
        }
        let from = node.state;
        if to == State::Finished && node.finish_seen {
            v.push(
                line,
                Rule::StateChange,
                format!(
                    "second {} for {} (first on line {})",
                    msg.name,
                    describe(node),
                    node.ended_line
                ),
            );
        } else if !from.allows(to) {
            v.push(
                line,
                Rule::StateChange,
                format!("{}: [{from} -> {to}] for {}", msg.name, describe(node)),
            );
        }
        if from == State::Running && node.running_children > 0 {
            v.push(
                line,
                Rule::ChildrenRunning,
                format!(
                    "{} for {} while {} of its children are still running",
                    msg.name,
                    describe(node),
                    node.running_children
                ),
            );
        }
        let parent = node.parent;
        let node = &mut self.nodes[idx];
        node.state = node.state.max(to);
        node.finish_seen |= to == State::Finished;
        if node.ended_line == 0 {
            node.ended_line = line;
        }
        if from == State::Running {
            if let Some(p) = parent {
                let p = &mut self.nodes[p];
                p.running_children = p.running_children.saturating_sub(1);
            }
        }
    }

    /// testStdOut / testStdErr: only to a node that is running.
    fn output(&self, msg: &Message, line: u64, v: &mut Violations) {
        let Some(id) = node_id(msg, self.root(), line, v) else {
            return;
        };
        let Some(&idx) = self.by_id.get(id) else {
            v.push(
                line,
                Rule::UnknownNode,
                format!("{} for nodeId '{id}', which was never registered", msg.name),
            );
            return;
        };
        self.not_created(idx, msg, line, v);
        let node = &self.nodes[idx];
        match node.state {
            State::Running => {}
            State::NotRunning => v.push(
                line,
                Rule::OutputTarget,
                format!("{} for {}, which has not started", msg.name, describe(node)),
            ),
            _ => v.push(
                line,
                Rule::OutputTarget,
                format!(
                    "{} for {}, which ended on line {}",
                    msg.name,
                    describe(node),
                    node.ended_line
                ),
            ),
        }
    }
}

/// The node id of a tree message: present (the mode check saw to that),
/// non-empty and not the root.
fn node_id<'m>(msg: &'m Message, root: &str, line: u64, v: &mut Violations) -> Option<&'m str> {
    let id = msg.get("nodeId")?;
    if id.is_empty() {
        v.push(
            line,
            Rule::NodeId,
            format!("{} with an empty nodeId", msg.name),
        );
        return None;
    }
    if id == root {
        v.push(
            line,
            Rule::NodeId,
            format!("{} with nodeId '{root}', which is the root's", msg.name),
        );
        return None;
    }
    Some(id)
}

fn describe(node: &Node) -> String {
    let kind = if node.suite { "suite" } else { "test" };
    format!("{kind} '{}' (nodeId {})", node.name, node.id)
}
