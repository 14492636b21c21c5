//! The tree builder: turns source-keyed events into a tree of numbered nodes
//! that opens and closes the way IntelliJ's id-based converter requires.
//!
//! Rules (docs/tree-rules.md):
//! - ids are decimal, from `offset + 1`, never reused; top-level nodes have
//!   parent `offset` (`0` is IntelliJ's hidden root);
//! - a node is opened only when something under it runs, after its parent;
//! - a suite closes when its source says it is done *and* every child has
//!   closed, so interleaved parallel workers cannot close a suite early;
//! - a test that finishes after its id was already finished is a new node
//!   (duplicate titles), never a second verdict on the first;
//! - at the end every open node closes, children first, unfinished tests as
//!   stopped.
use std::collections::{HashMap, HashSet};
use std::hash::Hasher;

use crate::hash::{FastMap, FastSet};

/// Declarations by source id, keyed by the node's own `id` (no second copy
/// of the id as a key).
#[derive(Debug, Default)]
struct Declarations(FastSet<Declared>);

/// A declaration, hashed and compared by its id.
#[derive(Debug)]
struct Declared(Node);

impl std::hash::Hash for Declared {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.id.hash(state);
    }
}

impl PartialEq for Declared {
    fn eq(&self, other: &Self) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for Declared {}

impl std::borrow::Borrow<str> for Declared {
    fn borrow(&self) -> &str {
        &self.0.id
    }
}

impl Declarations {
    fn get(&self, id: &str) -> Option<&Node> {
        self.0.get(id).map(|d| &d.0)
    }

    fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    /// Declares `node`, replacing an earlier declaration of its id.
    fn insert(&mut self, node: Node) {
        self.0.replace(Declared(node));
    }

    fn remove(&mut self, id: &str) -> Option<Node> {
        // Most report files declare nothing ahead: no hashing then.
        if self.0.is_empty() {
            return None;
        }
        self.0.take(id).map(|d| d.0)
    }
}

impl std::ops::Index<&str> for Declarations {
    type Output = Node;

    fn index(&self, id: &str) -> &Node {
        self.get(id).expect("declared")
    }
}

use crate::event::{Node, NodeKind, Stream, TestEvent, TestResult};
use crate::report::{Opened, Output, TreeEvent};

/// The flow of `node`, opening as `id` under a parent in flow
/// `parent_flow` (`None`: the top level): a file starts its own, as does a
/// top-level node; the rest take their parent's.
fn flow_of(node: &Node, id: u64, parent_flow: Option<u64>) -> u64 {
    match parent_flow {
        Some(flow) if node.kind != NodeKind::File => flow,
        _ => id,
    }
}

/// Where a node was opened: an [`Opened`] without its declaration.
#[derive(Debug, Clone, Copy)]
struct Place {
    id: u64,
    parent: u64,
    flow: u64,
    is_test: bool,
}

impl Place {
    fn of(self, node: &Node) -> Opened<'_> {
        Opened {
            id: self.id,
            parent: self.parent,
            flow: self.flow,
            is_test: self.is_test,
            node,
        }
    }
}

/// An open node; the source id it was opened for is `node.id`.
#[derive(Debug)]
struct Live {
    place: Place,
    /// The declaration.
    node: Node,
    /// Open children, in opening order.
    children: Vec<u64>,
    /// The source said no more children will come.
    done: bool,
}

impl Live {
    fn opened(&self) -> Opened<'_> {
        self.place.of(&self.node)
    }
}

/// Ids, states and the open/close discipline.
#[derive(Debug)]
pub(crate) struct Tree {
    offset: u64,
    next_id: u64,
    /// Declarations by source id.
    declared: Declarations,
    /// The open node of each source id.
    open_by_source: FastMap<String, u64>,
    /// Every open node.
    live: FastMap<u64, Live>,
    /// Collect-only runs: declaration order, to report the declared tree.
    collected: Option<Vec<String>>,
    /// Collect-only runs: source ids that were opened as live nodes.
    opened_live: FastSet<String>,
    /// Set by [`Tree::forget_done_suites`].
    forget_done_suites: bool,
    /// The parent of the last test [`Tree::test`] reported.
    last_parent: Option<u64>,
}

impl Tree {
    pub(crate) fn new(offset: u64) -> Self {
        Tree {
            offset,
            next_id: offset + 1,
            declared: Declarations::default(),
            open_by_source: FastMap::default(),
            live: FastMap::default(),
            collected: None,
            opened_live: FastSet::default(),
            forget_done_suites: false,
            last_parent: None,
        }
    }

    /// For report files, where a suite its source said is done gets
    /// nothing more: its declaration goes when it closes, so memory stays
    /// flat in the number of suites. A live source may still send output to
    /// a done suite, which then reopens from its declaration.
    pub(crate) fn forget_done_suites(&mut self, forget: bool) {
        self.forget_done_suites = forget;
    }

    /// A tree for `--collect-only`: declared nodes that never run are
    /// reported at the end as IntelliJ's pre-declared tree.
    pub(crate) fn collect_only(offset: u64) -> Self {
        Tree {
            collected: Some(Vec::new()),
            ..Tree::new(offset)
        }
    }

    /// Applies one event, reporting what it opens and closes.
    pub(crate) fn apply(&mut self, event: TestEvent, out: &mut impl Output) -> std::io::Result<()> {
        match event {
            // For the run loop, which tells whether the reporter loaded.
            TestEvent::Hello { runner, version } => out.event(TreeEvent::Hello {
                runner: &runner,
                version: version.as_deref(),
            }),
            TestEvent::LiveOutput => out.event(TreeEvent::LiveOutput),
            // The run's own course, for the run loop alone.
            TestEvent::SessionStarted | TestEvent::SessionEnded => Ok(()),
            TestEvent::Suite(node) | TestEvent::Test(node) => {
                if let Some(order) = &mut self.collected {
                    if !self.declared.contains(&node.id) {
                        order.push(node.id.clone());
                    }
                }
                self.declared.insert(node);
                Ok(())
            }
            TestEvent::Collected { count } => out.event(TreeEvent::Count(count)),
            TestEvent::Started { id } => {
                if self.open_by_source.contains_key(&id) {
                    return Ok(()); // a repeated start of a running test changes nothing
                }
                self.open(&id, true, out).map(drop)
            }
            TestEvent::Output { id, stream, text } => {
                let target = match id {
                    Some(id) => self.output_target(&id, out)?,
                    None => None,
                };
                let node = target.and_then(|id| self.live.get(&id)).map(Live::opened);
                out.event(TreeEvent::Output {
                    node: node.as_ref(),
                    stream,
                    text: &text,
                })
            }
            TestEvent::Finished(result) => self.finish_test(result, out),
            TestEvent::SuiteDone { id } => match self.open_by_source.get(&id) {
                Some(&node) => {
                    self.mark_done(node);
                    self.close_if_done(node, out)
                }
                None => Ok(()),
            },
            TestEvent::Log { level, text } => out.event(TreeEvent::Log { level, text: &text }),
        }
    }

    /// The events of one test whose id is new ([`test_events`]: declared,
    /// maybe started and fed `output`, finished with `result`, whose `id`
    /// is not read), reported from the caller's buffers in one step. Its
    /// source numbers its nodes and never sent this id before, so it is
    /// neither open nor declared, and there is nothing to look up under it
    /// (two hash lookups of every test of a report file). A collect-only
    /// tree, which lists declarations, takes the events one by one.
    pub(crate) fn test(
        &mut self,
        node: &Node,
        output: &[(Stream, String)],
        result: &TestResult,
        out: &mut impl Output,
    ) -> std::io::Result<()> {
        if self.collected.is_none() && node.kind == NodeKind::Test {
            debug_assert!(!self.open_by_source.contains_key(&node.id));
            debug_assert!(!self.declared.contains(&node.id));
            return self.test_at_once(node, output, result, out);
        }
        for event in test_events(node, output, result) {
            self.apply(event, out)?;
        }
        Ok(())
    }

    /// Reports a test that is not open and not declared (any declaration
    /// of its id taken out) as started, fed `output` and finished, in one
    /// step.
    #[inline(always)]
    fn test_at_once(
        &mut self,
        node: &Node,
        output: &[(Stream, String)],
        result: &TestResult,
        out: &mut impl Output,
    ) -> std::io::Result<()> {
        let parent = match self.last_parent_of(node) {
            Some(parent) => Some(parent),
            None => self
                .open_ancestors(node, out)?
                .map(|parent| self.live[&parent].place),
        };
        self.last_parent = parent.map(|parent| parent.id);
        // Started and finished in one step, the test is never one of its
        // parent's open children: they stay as they were, and so does
        // whether the parent closes (an open suite that is done has open
        // children, or it would have closed).
        let place = self.place_in(node, parent);
        out.test(&place.of(node), output, result)
    }

    /// The parent of the last test [`Tree::test`] reported, when it
    /// is `node`'s parent too and still open: a report file's tests come in
    /// runs of one class, and this finds it without hashing its source id
    /// (the live node of an id is the one open for it). `node` is not open,
    /// so it is not its own parent here.
    fn last_parent_of(&self, node: &Node) -> Option<Place> {
        let id = self.last_parent?;
        let parent = node.parent.as_deref()?;
        let live = self.live.get(&id)?;
        debug_assert!(!self.open_by_source.contains_key(&node.id));
        (parent == live.node.id).then_some(live.place)
    }

    /// Closes everything still open: running tests as stopped, then suites,
    /// always children before parents.
    pub(crate) fn close_all(&mut self, out: &mut impl Output) -> std::io::Result<()> {
        // Collect-only: the declared tree first, so that its nodes can sit in
        // the suites still open live (the folders of a collection error)
        // instead of repeating them.
        self.report_declared(out)?;
        let mut ids: Vec<u64> = self.live.keys().copied().collect();
        // A child is always opened after its parent, so it has a larger id.
        ids.sort_unstable_by(|a, b| b.cmp(a));
        for id in ids {
            let live = self.live.remove(&id).expect("listed above");
            self.open_by_source.remove(&live.node.id);
            if live.place.is_test {
                out.event(TreeEvent::Stopped(&live.opened()))?;
            } else {
                out.event(TreeEvent::SuiteFinished(&live.opened()))?;
            }
        }
        Ok(())
    }

    /// Collect-only: reports every declared node that was not opened live,
    /// depth first, as the pre-declared tree; a node whose parent is still
    /// open live goes under that live node.
    fn report_declared(&mut self, out: &mut impl Output) -> std::io::Result<()> {
        let Some(order) = self.collected.take() else {
            return Ok(());
        };
        // Tests that ran live (collection errors) already have their
        // verdict; a suite is declared when some test under it is.
        let open_live = |id: &str| self.open_by_source.get(id).copied();
        let mut children: HashMap<Option<&str>, Vec<&str>> = HashMap::new();
        let mut wanted: HashSet<&str> = HashSet::new();
        for id in &order {
            let node = &self.declared[id.as_str()];
            if node.kind == NodeKind::Test && !self.opened_live.contains(id) {
                let mut at = Some(id.as_str());
                while let Some(current) = at.filter(|c| open_live(c).is_none() && wanted.insert(c))
                {
                    at = self.declared.get(current).and_then(|n| n.parent.as_deref());
                }
            }
        }
        for id in order.iter().filter(|id| wanted.contains(id.as_str())) {
            let parent = self.declared[id.as_str()]
                .parent
                .as_deref()
                .filter(|p| wanted.contains(p));
            children.entry(parent).or_default().push(id);
        }
        let mut next_id = self.next_id;
        // (node, its parent's id and flow, whether it is closing); flows as
        // a live run places them ([`flow_of`]).
        let mut stack: Vec<(&str, u64, Option<u64>, bool)> = children
            .get(&None)
            .into_iter()
            .flatten()
            .rev()
            .map(|id| {
                let live_parent = self.declared[*id].parent.as_deref().and_then(open_live);
                let flow = live_parent
                    .and_then(|p| self.live.get(&p))
                    .map(|l| l.place.flow);
                (*id, live_parent.unwrap_or(self.offset), flow, false)
            })
            .collect();
        let mut opened: HashMap<&str, Opened<'_>> = HashMap::new();
        while let Some((id, parent, parent_flow, closing)) = stack.pop() {
            if closing {
                out.event(TreeEvent::TreeSuiteEnd(&opened[id]))?;
                continue;
            }
            let node = &self.declared[id];
            let kids = children.get(&Some(id));
            let is_test = node.kind == NodeKind::Test && kids.is_none();
            let flow = flow_of(node, next_id, parent_flow);
            let me = Opened {
                id: next_id,
                parent,
                flow,
                is_test,
                node,
            };
            next_id += 1;
            if is_test {
                out.event(TreeEvent::TreeTest(&me))?;
                continue;
            }
            out.event(TreeEvent::TreeSuite(&me))?;
            stack.push((id, parent, parent_flow, true));
            stack.extend(
                kids.into_iter()
                    .flatten()
                    .rev()
                    .map(|kid| (*kid, me.id, Some(me.flow), false)),
            );
            opened.insert(id, me);
        }
        self.next_id = next_id;
        out.event(TreeEvent::TreeEnded)
    }

    /// Source ids of the tests running now, oldest first.
    pub(crate) fn running_tests(&self) -> Vec<String> {
        let mut running: Vec<(&u64, &Live)> =
            self.live.iter().filter(|(_, l)| l.place.is_test).collect();
        running.sort_unstable_by_key(|(id, _)| **id);
        running
            .into_iter()
            .map(|(_, l)| l.node.id.clone())
            .collect()
    }

    /// The names of an open node and of its open ancestors, outermost
    /// first, joined by ` > `: where the IDE's tree shows it.
    pub(crate) fn path_of(&self, source: &str) -> Option<String> {
        let mut id = *self.open_by_source.get(source)?;
        let mut names = Vec::new();
        while let Some(live) = self.live.get(&id) {
            names.push(live.node.name.as_str());
            id = live.place.parent;
        }
        names.reverse();
        Some(names.join(" > "))
    }

    /// Opens `source` (and its ancestors), returning its id.
    fn open(&mut self, source: &str, as_test: bool, out: &mut impl Output) -> std::io::Result<u64> {
        if let Some(&id) = self.open_by_source.get(source) {
            return Ok(id);
        }
        let (place, node) = self.start(source, as_test, out)?;
        Ok(self.register(place, node))
    }

    /// Registers a started node as open; returns its id.
    fn register(&mut self, place: Place, node: Node) -> u64 {
        let id = place.id;
        self.open_by_source.insert(node.id.clone(), id);
        let live = Live {
            place,
            node,
            children: Vec::new(),
            done: false,
        };
        self.live.insert(id, live);
        id
    }

    /// Reports `source` (not open yet) as started, opening its ancestors,
    /// and counts it as a child of its parent; the caller registers it as
    /// open, or finishes it at once.
    fn start(
        &mut self,
        source: &str,
        as_test: bool,
        out: &mut impl Output,
    ) -> std::io::Result<(Place, Node)> {
        let node = self.take_declaration(source, as_test);
        let place = self.start_node(&node, out)?;
        Ok((place, node))
    }

    /// The declaration of `source`, to open it.
    fn take_declaration(&mut self, source: &str, as_test: bool) -> Node {
        match self.declared.get(source) {
            // A test's declaration is dropped when it finishes: move it.
            Some(node) if node.kind == NodeKind::Test && self.collected.is_none() => {
                self.declared.remove(source).expect("just found")
            }
            Some(node) => node.clone(),
            // Never lose a result: an undeclared id becomes a top-level node.
            None => Node {
                id: source.to_owned(),
                name: source.to_owned(),
                kind: if as_test {
                    NodeKind::Test
                } else {
                    NodeKind::Suite
                },
                ..Node::default()
            },
        }
    }

    /// [`Tree::start`] for a node already taken from (or never in) `declared`.
    fn start_node(&mut self, node: &Node, out: &mut impl Output) -> std::io::Result<Place> {
        let parent = self.open_ancestors(node, out)?;
        self.start_under(node, parent, out)
    }

    /// Opens the ancestors of `node` that are not open yet, farthest first,
    /// and gives its parent's id (`None` at the top level). A loop rather
    /// than a recursion: a report file may nest suites thousands deep. A
    /// parent chain that comes back to the node or to one of the ancestors
    /// is a cycle (a source's mistake): the ancestor where it closes goes to
    /// the top level.
    fn open_ancestors(
        &mut self,
        node: &Node,
        out: &mut impl Output,
    ) -> std::io::Result<Option<u64>> {
        let mut next = match node.parent.as_deref() {
            Some(parent) if parent != node.id => match self.open_by_source.get(parent) {
                // The usual case: the parent is open already.
                Some(&id) => return Ok(Some(id)),
                None => Some(parent.to_owned()),
            },
            _ => return Ok(None),
        };
        // Not open yet, nearest first.
        let mut chain: Vec<String> = Vec::new();
        let mut on_chain: FastSet<String> = FastSet::default();
        on_chain.insert(node.id.clone());
        let mut parent = None;
        while let Some(source) = next.take() {
            if let Some(&id) = self.open_by_source.get(&source) {
                parent = Some(id);
                break;
            }
            if !on_chain.insert(source.clone()) {
                break;
            }
            next = self.declared.get(&source).and_then(|n| n.parent.clone());
            chain.push(source);
        }
        for source in chain.iter().rev() {
            let node = self.take_declaration(source, false);
            let place = self.start_under(&node, parent, out)?;
            parent = Some(self.register(place, node));
        }
        Ok(parent)
    }

    /// Reports `node` as started under `parent` (open) and counts it as one
    /// of its children.
    #[inline(always)] // the hot path of every test
    fn start_under(
        &mut self,
        node: &Node,
        parent: Option<u64>,
        out: &mut impl Output,
    ) -> std::io::Result<Place> {
        let parent = parent.map(|parent| {
            let live = self.live.get_mut(&parent).expect("parent is open");
            live.children.push(self.next_id);
            live.place
        });
        let place = self.place_in(node, parent);
        out.event(TreeEvent::Started(&place.of(node)))?;
        if self.collected.is_some() {
            self.opened_live.insert(node.id.clone());
        }
        Ok(place)
    }

    /// The place of `node` opening under the open node placed at `parent`
    /// (`None`: the top level): the next id, and the parent's flow unless
    /// the node is a file.
    #[inline(always)]
    fn place_in(&mut self, node: &Node, parent: Option<Place>) -> Place {
        let id = self.next_id;
        self.next_id += 1;
        let flow = flow_of(node, id, parent.map(|parent| parent.flow));
        Place {
            id,
            parent: parent.map_or(self.offset, |parent| parent.id),
            flow,
            is_test: node.kind == NodeKind::Test,
        }
    }

    /// Where output for `source` goes: the node if open, an undeclared-yet
    /// suite opened for it, else its nearest open ancestor.
    fn output_target(
        &mut self,
        source: &str,
        out: &mut impl Output,
    ) -> std::io::Result<Option<u64>> {
        if let Some(&id) = self.open_by_source.get(source) {
            return Ok(Some(id));
        }
        let Some(node) = self.declared.get(source) else {
            return Ok(None);
        };
        if node.kind != NodeKind::Test {
            return self.open(source, false, out).map(Some);
        }
        let mut parent = node.parent.clone();
        let mut seen = HashSet::new();
        while let Some(p) = parent.filter(|p| seen.insert(p.clone())) {
            if let Some(&id) = self.open_by_source.get(&p) {
                return Ok(Some(id));
            }
            parent = self.declared.get(&p).and_then(|n| n.parent.clone());
        }
        Ok(None)
    }

    fn finish_test(
        &mut self,
        mut result: TestResult,
        out: &mut impl Output,
    ) -> std::io::Result<()> {
        if self.collected.is_none() && !self.open_by_source.contains_key(&result.id) {
            // The common case, a declared test that finishes unstarted, with
            // one lookup: the declaration is taken out at once.
            match self.declared.remove(&result.id) {
                Some(node) if node.kind == NodeKind::Test => {
                    let place = self.start_node(&node, out)?;
                    return self.finished(place, &node, &result, out);
                }
                Some(node) => self.declared.insert(node),
                None => {}
            }
        }
        if self.is_suite(&result.id) {
            // A verdict on a suite (a source's mistake, or a fixture-level
            // failure) is kept, as a test of that name inside the suite.
            let suite = result.id.clone();
            let name = self
                .declared
                .get(&suite)
                .map_or_else(|| suite.clone(), |n| n.name.clone());
            result.id = format!("{suite}\u{0}verdict");
            let node = Node {
                id: result.id.clone(),
                parent: Some(suite),
                name,
                kind: NodeKind::Test,
                ..Node::default()
            };
            self.declared.insert(node);
        }
        let (place, node) = match self.open_by_source.remove(&result.id) {
            Some(id) => {
                // Subtests still running under this test end with it.
                self.close_children(id, out)?;
                let live = self.live.remove(&id).expect("open");
                // A finished test's declaration is not needed again (a reused
                // id is declared anew), and keeping it would grow memory with
                // the run.
                if self.collected.is_none() {
                    self.declared.remove(&result.id);
                }
                (live.place, live.node)
            }
            // Started and finished at once, so never registered as open:
            // `start` already took its declaration out of `declared`.
            None => self.start(&result.id, true, out)?,
        };
        self.finished(place, &node, &result, out)
    }

    /// Reports a test's verdict (the test is no longer open) and detaches
    /// it from its parent.
    fn finished(
        &mut self,
        place: Place,
        node: &Node,
        result: &TestResult,
        out: &mut impl Output,
    ) -> std::io::Result<()> {
        out.event(TreeEvent::Finished {
            node: &place.of(node),
            result,
        })?;
        self.detach(place.parent, place.id, out)
    }

    /// Whether `source` names a suite (declared as one, or open as one).
    fn is_suite(&self, source: &str) -> bool {
        match self.open_by_source.get(source) {
            Some(id) => !self.live[id].place.is_test,
            None => self
                .declared
                .get(source)
                .is_some_and(|n| n.kind != NodeKind::Test),
        }
    }

    /// Stops every open descendant of `id`: children before their parent,
    /// the last opened sibling first. Loops rather than recursions here and
    /// below: a report file may nest suites thousands deep.
    fn close_children(&mut self, id: u64, out: &mut impl Output) -> std::io::Result<()> {
        let children = std::mem::take(&mut self.live.get_mut(&id).expect("open").children);
        // Parents before children, siblings in opening order; stopped in
        // the reverse order.
        let mut order = Vec::new();
        let mut stack: Vec<u64> = children.into_iter().rev().collect();
        while let Some(node) = stack.pop() {
            order.push(node);
            let children = &self.live[&node].children;
            stack.extend(children.iter().rev());
        }
        for child in order.into_iter().rev() {
            let live = self.live.remove(&child).expect("children are open");
            self.open_by_source.remove(&live.node.id);
            if live.place.is_test {
                out.event(TreeEvent::Stopped(&live.opened()))?;
            } else {
                out.event(TreeEvent::SuiteFinished(&live.opened()))?;
            }
        }
        Ok(())
    }

    /// Removes `child` from `parent`'s open children; a parent that was told
    /// it is done closes when its last child does.
    fn detach(&mut self, parent: u64, child: u64, out: &mut impl Output) -> std::io::Result<()> {
        let Some(live) = self.live.get_mut(&parent) else {
            return Ok(());
        };
        live.children.retain(|&c| c != child);
        self.close_if_done(parent, out)
    }

    /// Marks `id` and the suites below it done.
    fn mark_done(&mut self, id: u64) {
        let mut stack = vec![id];
        while let Some(node) = stack.pop() {
            let Some(live) = self.live.get_mut(&node) else {
                continue;
            };
            live.done = true;
            let children = live.children.clone();
            let suites = children.into_iter().filter(|c| !self.live[c].place.is_test);
            stack.extend(suites);
        }
    }

    /// Closes the done suites at and below `id` that have no open children,
    /// each after its children and siblings in opening order; when `id`
    /// closes, its parent may close in turn, and so on up.
    fn close_if_done(&mut self, id: u64, out: &mut impl Output) -> std::io::Result<()> {
        let mut next = Some(id);
        while let Some(top) = next.take() {
            let children = match self.live.get(&top) {
                Some(live) if live.done && !live.place.is_test => &live.children,
                // The usual case: a test finished in a suite still running.
                _ => return Ok(()),
            };
            if children.is_empty() {
                // Also usual: the suite's last child has finished.
                next = Some(self.close_suite(top, out)?);
                continue;
            }
            // The done suites at and below `top`, parents first and the
            // last sibling first: reversed, each comes after its children.
            let mut order = Vec::new();
            let mut stack = vec![top];
            while let Some(node) = stack.pop() {
                match self.live.get(&node) {
                    Some(live) if live.done && !live.place.is_test => {
                        order.push(node);
                        stack.extend(live.children.iter().copied());
                    }
                    _ => {}
                }
            }
            for node in order.into_iter().rev() {
                // A running test keeps its suites open.
                if self.live[&node].children.is_empty() {
                    let parent = self.close_suite(node, out)?;
                    // Every other suite closed here has its parent below `top`.
                    if node == top {
                        next = Some(parent);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reports the suite `id` (open, with no open children) finished and
    /// takes it from its parent's children; gives the parent's id.
    fn close_suite(&mut self, id: u64, out: &mut impl Output) -> std::io::Result<u64> {
        let live = self.live.remove(&id).expect("open");
        self.open_by_source.remove(&live.node.id);
        if self.forget_done_suites && live.done {
            self.declared.remove(&live.node.id);
        }
        out.event(TreeEvent::SuiteFinished(&live.opened()))?;
        let parent = live.place.parent;
        if let Some(open) = self.live.get_mut(&parent) {
            open.children.retain(|&c| c != id);
        }
        Ok(parent)
    }
}

/// The events of a test that a source sends whole: `Test(node)`, then
/// `Started`, each non-empty `output` and `Finished(result)` with the id of
/// `node`; without output, `Test` and `Finished` (a declared test that
/// finishes unstarted is started then).
pub(crate) fn test_events(
    node: &Node,
    output: &[(Stream, String)],
    result: &TestResult,
) -> Vec<TestEvent> {
    let id = &node.id;
    let mut events = vec![TestEvent::Test(node.clone())];
    let output = output.iter().filter(|(_, text)| !text.is_empty());
    if output.clone().next().is_some() {
        events.push(TestEvent::Started { id: id.clone() });
        events.extend(output.map(|(stream, text)| TestEvent::Output {
            id: Some(id.clone()),
            stream: *stream,
            text: text.clone(),
        }));
    }
    events.push(TestEvent::Finished(TestResult {
        id: id.clone(),
        ..result.clone()
    }));
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Outcome;

    /// Records events as compact strings.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Output for Log {
        fn source(&mut self, _: &TestEvent) -> std::io::Result<()> {
            Ok(())
        }

        fn event(&mut self, event: TreeEvent<'_>) -> std::io::Result<()> {
            let line = match event {
                TreeEvent::LiveOutput => "live output".to_owned(),
                TreeEvent::Count(n) => format!("count {n}"),
                TreeEvent::Started(n) => format!("start {} {}<{}", n.node.name, n.id, n.parent),
                TreeEvent::Output { node, text, .. } => {
                    format!("out {} {text}", node.map_or(0, |n| n.id))
                }
                TreeEvent::Finished { node, result } => {
                    format!("end {} {:?}", node.id, result.outcome)
                }
                TreeEvent::Stopped(n) => format!("stop {}", n.id),
                TreeEvent::SuiteFinished(n) => format!("close {}", n.id),
                TreeEvent::Log { text, .. } => format!("log {text}"),
                TreeEvent::TreeSuite(n) => format!("tree+ {} {}<{}", n.node.name, n.id, n.parent),
                TreeEvent::TreeTest(n) => format!("tree {} {}<{}", n.node.name, n.id, n.parent),
                TreeEvent::TreeSuiteEnd(n) => format!("tree- {}", n.id),
                TreeEvent::TreeEnded => "tree end".to_owned(),
                TreeEvent::RunStarted(_) => "run start".to_owned(),
                TreeEvent::Hello { runner, .. } => format!("hello {runner}"),
                TreeEvent::RunEnded(end) => format!("run end {}", end.exit_code),
            };
            self.0.push(line);
            Ok(())
        }

        fn text(&mut self, bytes: &[u8]) -> std::io::Result<()> {
            self.0
                .push(format!("text {}", String::from_utf8_lossy(bytes)));
            Ok(())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }

        fn finish(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn suite(id: &str, parent: Option<&str>, kind: NodeKind) -> TestEvent {
        TestEvent::Suite(Node {
            id: id.into(),
            parent: parent.map(Into::into),
            name: id.rsplit('/').next().unwrap().into(),
            kind,
            ..Node::default()
        })
    }

    fn test(id: &str, parent: &str) -> TestEvent {
        TestEvent::Test(Node {
            id: id.into(),
            parent: Some(parent.into()),
            name: id.rsplit('/').next().unwrap().into(),
            kind: NodeKind::Test,
            ..Node::default()
        })
    }

    fn started(id: &str) -> TestEvent {
        TestEvent::Started { id: id.into() }
    }

    fn finished(id: &str, outcome: Outcome) -> TestEvent {
        TestEvent::Finished(TestResult {
            id: id.into(),
            outcome,
            ..TestResult::default()
        })
    }

    fn run(offset: u64, events: Vec<TestEvent>) -> Vec<String> {
        let mut tree = Tree::new(offset);
        let mut log = Log::default();
        for event in events {
            tree.apply(event, &mut log).unwrap();
        }
        tree.close_all(&mut log).unwrap();
        log.0
    }

    #[test]
    fn report_files_forget_a_done_suite_once_it_closes() {
        for forget in [false, true] {
            let mut tree = Tree::new(0);
            if forget {
                tree.forget_done_suites(true);
            }
            let mut log = Log::default();
            for event in [
                suite("f", None, NodeKind::File),
                suite("f/open", Some("f"), NodeKind::Suite),
                test("f/open/a", "f/open"),
                finished("f/open/a", Outcome::Passed),
                suite("f/d", Some("f"), NodeKind::Suite),
                test("f/d/b", "f/d"),
                finished("f/d/b", Outcome::Passed),
                TestEvent::SuiteDone { id: "f/d".into() },
            ] {
                tree.apply(event, &mut log).unwrap();
            }
            assert!(log.0.contains(&"close 4".to_owned()), "{:?}", log.0);
            assert_eq!(tree.declared.contains("f/d"), !forget, "forget: {forget}");
            assert!(tree.declared.contains("f/open"), "not done: kept");
            assert!(tree.declared.contains("f"), "still open: kept");
        }
    }

    #[test]
    fn opens_ancestors_lazily_and_closes_when_done() {
        let log = run(
            0,
            vec![
                suite("d", None, NodeKind::Dir),
                suite("d/f", Some("d"), NodeKind::File),
                suite("d/unused", Some("d"), NodeKind::File),
                test("d/f/a", "d/f"),
                started("d/f/a"),
                finished("d/f/a", Outcome::Passed),
                TestEvent::SuiteDone { id: "d/f".into() },
            ],
        );
        assert_eq!(
            log,
            [
                "start d 1<0",
                "start f 2<1",
                "start a 3<2",
                "end 3 Passed",
                "close 2",
                "close 1"
            ]
        );
    }

    #[test]
    fn a_done_file_closes_its_finished_describe_blocks_first() {
        let log = run(
            0,
            vec![
                suite("f", None, NodeKind::File),
                suite("f/d", Some("f"), NodeKind::Suite),
                suite("f/d/e", Some("f/d"), NodeKind::Suite),
                test("f/d/e/t", "f/d/e"),
                test("f/d/u", "f/d"),
                finished("f/d/e/t", Outcome::Passed),
                finished("f/d/u", Outcome::Passed),
                TestEvent::SuiteDone { id: "f".into() },
                test("f/later", "f"),
                finished("f/later", Outcome::Passed),
            ],
        );
        assert_eq!(
            log,
            [
                "start f 1<0",
                "start d 2<1",
                "start e 3<2",
                "start t 4<3",
                "end 4 Passed",
                "start u 5<2",
                "end 5 Passed",
                "close 3",
                "close 2",
                "close 1",
                "start f 6<0",
                "start later 7<6",
                "end 7 Passed",
                "close 6"
            ]
        );
    }

    #[test]
    fn collect_only_reports_the_declared_tree_depth_first() {
        let mut tree = Tree::collect_only(0);
        let mut log = Log::default();
        for event in [
            suite("d", None, NodeKind::Dir),
            suite("d/f", Some("d"), NodeKind::File),
            test("d/f/a", "d/f"),
            suite("d/f/C", Some("d/f"), NodeKind::Suite),
            test("d/f/C/b", "d/f/C"),
            test("d/f/c", "d/f"),
            suite("d/broken", Some("d"), NodeKind::File),
            test("d/broken/err", "d/broken"),
            finished("d/broken/err", Outcome::Error),
        ] {
            tree.apply(event, &mut log).unwrap();
        }
        tree.close_all(&mut log).unwrap();
        assert_eq!(
            log.0,
            [
                "start d 1<0",
                "start broken 2<1",
                "start err 3<2",
                "end 3 Error",
                // The folder opened live for the collection error is not
                // declared a second time: the declared tree goes inside it.
                "tree+ f 4<1",
                "tree a 5<4",
                "tree+ C 6<4",
                "tree b 7<6",
                "tree- 6",
                "tree c 8<4",
                "tree- 4",
                "tree end",
                "close 2",
                "close 1",
            ]
        );
    }

    #[test]
    fn a_verdict_on_a_suite_becomes_a_test_inside_it() {
        let log = run(
            0,
            vec![
                suite("f", None, NodeKind::File),
                finished("f", Outcome::Error),
                TestEvent::SuiteDone { id: "f".into() },
            ],
        );
        assert_eq!(
            log,
            ["start f 1<0", "start f 2<1", "end 2 Error", "close 1"]
        );
    }

    #[test]
    fn a_parent_cycle_puts_the_node_at_the_top_level() {
        let log = run(
            0,
            vec![
                suite("a", Some("b"), NodeKind::Suite),
                suite("b", Some("a"), NodeKind::Suite),
                test("t", "a"),
                TestEvent::Output {
                    id: Some("t".into()),
                    stream: Stream::Stdout,
                    text: "x".into(),
                },
                finished("t", Outcome::Passed),
            ],
        );
        assert_eq!(
            log,
            [
                "out 0 x",
                "start b 1<0",
                "start a 2<1",
                "start t 3<2",
                "end 3 Passed",
                "close 2",
                "close 1"
            ]
        );
    }

    #[test]
    fn a_parent_cycle_through_a_chain_closes_at_its_farthest_link() {
        let log = run(
            0,
            vec![
                suite("a", Some("b"), NodeKind::Suite),
                suite("b", Some("c"), NodeKind::Suite),
                suite("c", Some("a"), NodeKind::Suite),
                test("t", "a"),
                finished("t", Outcome::Passed),
            ],
        );
        assert_eq!(
            log,
            [
                "start c 1<0",
                "start b 2<1",
                "start a 3<2",
                "start t 4<3",
                "end 4 Passed",
                "close 3",
                "close 2",
                "close 1"
            ]
        );
    }

    /// Suites nested `depth` deep (`s0` outermost), a test in the innermost.
    fn chain(depth: usize) -> Vec<TestEvent> {
        let mut events: Vec<TestEvent> = (0..depth)
            .map(|i| {
                let parent = i.checked_sub(1).map(|p| format!("s{p}"));
                suite(&format!("s{i}"), parent.as_deref(), NodeKind::Suite)
            })
            .collect();
        events.push(test("t", &format!("s{}", depth - 1)));
        events.push(started("t"));
        events
    }

    #[test]
    fn suites_nested_a_hundred_thousand_deep_open_and_close_in_order() {
        // Far deeper than a thread's stack would allow a recursion to go.
        const DEPTH: usize = 100_000;
        let closes = |log: &[String]| -> Vec<u64> {
            let closes = log.iter().filter_map(|l| l.strip_prefix("close "));
            closes.map(|id| id.parse().unwrap()).collect()
        };
        let innermost_first: Vec<u64> = (1..=DEPTH as u64).rev().collect();

        // Each suite said done from the inside out, as a JUnit file does.
        let mut events = chain(DEPTH);
        events.push(finished("t", Outcome::Passed));
        for i in (0..DEPTH).rev() {
            events.push(TestEvent::SuiteDone {
                id: format!("s{i}"),
            });
        }
        let log = run(0, events);
        assert_eq!(log.len(), 2 * DEPTH + 2);
        assert_eq!(log[0], "start s0 1<0");
        assert_eq!(
            log[DEPTH - 1],
            format!("start s{} {DEPTH}<{}", DEPTH - 1, DEPTH - 1)
        );
        assert_eq!(closes(&log), innermost_first);

        // Only the outermost said done: the whole chain closes with its test.
        let mut events = chain(DEPTH);
        events.push(TestEvent::SuiteDone { id: "s0".into() });
        events.push(finished("t", Outcome::Passed));
        assert_eq!(closes(&run(0, events)), innermost_first);

        // Nothing said done: the end of the run stops the test and closes all.
        let log = run(0, chain(DEPTH));
        assert_eq!(log[DEPTH + 1], format!("stop {}", DEPTH + 1));
        assert_eq!(closes(&log), innermost_first);
    }

    #[test]
    fn numbered_ids_rarely_need_a_second_comparison() {
        // hashbrown takes a bucket from a hash's low bits and filters the
        // bucket's neighbours by its top seven. A report file's ids are
        // numbered (`1:1`, `1:2`, …); with FxHash's product as the hash
        // they matched each other's bits so often that a report of 200,000
        // nested suites took seconds.
        use std::cell::Cell;
        thread_local!(static COMPARED: Cell<usize> = const { Cell::new(0) });
        struct Id(String);
        impl std::hash::Hash for Id {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.0.hash(state);
            }
        }
        impl PartialEq for Id {
            fn eq(&self, other: &Id) -> bool {
                COMPARED.with(|c| c.set(c.get() + 1));
                self.0 == other.0
            }
        }
        impl Eq for Id {}
        // Eight bytes each: hashed as one word, whose low bytes, `1:10`,
        // they all share.
        let ids = || (100_000..200_000).map(|n| Id(format!("1:{n}")));
        let set: FastSet<Id> = ids().collect();
        assert!(ids().all(|id| set.contains(&id)));
        // A comparison for each lookup that finds its id, and about as many
        // false matches over the inserts and lookups (3.7 million before).
        let compared = COMPARED.with(Cell::get);
        assert!(compared < 300_000, "{compared} comparisons");
    }

    #[test]
    fn ids_start_after_the_offset() {
        let log = run(100, vec![test("t", "s"), finished("t", Outcome::Skipped)]);
        assert_eq!(
            log,
            [
                "start s 101<100",
                "start t 102<101",
                "end 102 Skipped",
                "close 101"
            ]
        );
    }

    #[test]
    fn interleaved_workers_keep_a_done_suite_open_until_its_last_child_ends() {
        let log = run(
            0,
            vec![
                suite("f", None, NodeKind::File),
                test("f/a", "f"),
                test("f/b", "f"),
                started("f/a"),
                started("f/b"),
                finished("f/a", Outcome::Passed),
                TestEvent::SuiteDone { id: "f".into() },
                finished("f/b", Outcome::Failed),
            ],
        );
        assert_eq!(
            log,
            [
                "start f 1<0",
                "start a 2<1",
                "start b 3<1",
                "end 2 Passed",
                "end 3 Failed",
                "close 1"
            ]
        );
    }

    #[test]
    fn a_repeated_id_after_its_finish_is_a_new_node() {
        let log = run(
            0,
            vec![
                test("f/dup", "f"),
                finished("f/dup", Outcome::Passed),
                test("f/dup", "f"),
                finished("f/dup", Outcome::Failed),
            ],
        );
        assert_eq!(
            log,
            [
                "start f 1<0",
                "start dup 2<1",
                "end 2 Passed",
                "start dup 3<1",
                "end 3 Failed",
                "close 1"
            ]
        );
    }

    #[test]
    fn unfinished_tests_are_stopped_children_first() {
        let log = run(
            0,
            vec![
                suite("f", None, NodeKind::File),
                suite("f/C", Some("f"), NodeKind::Suite),
                test("f/C/t", "f/C"),
                started("f/C/t"),
            ],
        );
        assert_eq!(
            log,
            [
                "start f 1<0",
                "start C 2<1",
                "start t 3<2",
                "stop 3",
                "close 2",
                "close 1"
            ]
        );
    }

    #[test]
    fn subtests_nest_under_their_running_test() {
        let log = run(
            0,
            vec![
                test("f/t", "f"),
                test("f/t/sub1", "f/t"),
                test("f/t/sub2", "f/t"),
                started("f/t"),
                finished("f/t/sub1", Outcome::Failed),
                started("f/t/sub2"),
                finished("f/t", Outcome::Failed),
            ],
        );
        assert_eq!(
            log,
            [
                "start f 1<0",
                "start t 2<1",
                "start sub1 3<2",
                "end 3 Failed",
                "start sub2 4<2",
                "stop 4",
                "end 2 Failed",
                "close 1"
            ]
        );
    }

    #[test]
    fn output_goes_to_the_node_or_its_open_ancestor() {
        let log = run(
            0,
            vec![
                suite("f", None, NodeKind::File),
                test("f/a", "f"),
                TestEvent::Output {
                    id: Some("f".into()),
                    stream: Stream::Stdout,
                    text: "file".into(),
                },
                TestEvent::Output {
                    id: Some("f/a".into()),
                    stream: Stream::Stdout,
                    text: "early".into(),
                },
                TestEvent::Output {
                    id: None,
                    stream: Stream::Stderr,
                    text: "run".into(),
                },
                TestEvent::Output {
                    id: Some("nope".into()),
                    stream: Stream::Stderr,
                    text: "lost?".into(),
                },
            ],
        );
        assert_eq!(
            log,
            [
                "start f 1<0",
                "out 1 file",
                "out 1 early",
                "out 0 run",
                "out 0 lost?",
                "close 1"
            ]
        );
    }

    #[test]
    fn a_whole_test_is_its_events() {
        // Tests with new ids, in an open suite and in one that is done, at
        // the top level, and under a parent that was never declared; with
        // output and without.
        let tests = [("t1", Some("s")), ("t2", Some("s")), ("t3", None)];
        let tests = tests
            .into_iter()
            .chain([("t4", Some("gone")), ("t5", Some("s"))]);
        for collect_only in [false, true] {
            let new_tree = || {
                if collect_only {
                    Tree::collect_only(0)
                } else {
                    Tree::new(0)
                }
            };
            let (mut one, mut two) = (new_tree(), new_tree());
            let (mut log_one, mut log_two) = (Log::default(), Log::default());
            for event in [
                suite("s", None, NodeKind::File),
                test("run", "s"),
                started("run"),
            ] {
                one.apply(event.clone(), &mut log_one).unwrap();
                two.apply(event, &mut log_two).unwrap();
            }
            for (i, (id, parent)) in tests.clone().enumerate() {
                let node = Node {
                    id: id.into(),
                    parent: parent.map(Into::into),
                    name: id.into(),
                    kind: NodeKind::Test,
                    ..Node::default()
                };
                let output = match i % 2 {
                    0 => vec![],
                    _ => vec![(Stream::Stdout, format!("out {id}"))],
                };
                let result = TestResult {
                    outcome: Outcome::Failed,
                    ..TestResult::default()
                };
                for event in test_events(&node, &output, &result) {
                    one.apply(event, &mut log_one).unwrap();
                }
                two.test(&node, &output, &result, &mut log_two).unwrap();
                if i == 1 {
                    let done = TestEvent::SuiteDone { id: "s".into() };
                    one.apply(done.clone(), &mut log_one).unwrap();
                    two.apply(done, &mut log_two).unwrap();
                }
            }
            one.close_all(&mut log_one).unwrap();
            two.close_all(&mut log_two).unwrap();
            assert_eq!(log_one.0, log_two.0, "collect_only {collect_only}");
        }
    }

    #[test]
    fn running_tests_lists_open_tests_only() {
        let mut tree = Tree::new(0);
        let mut log = Log::default();
        for event in [
            test("f/a", "f"),
            test("f/b", "f"),
            started("f/a"),
            started("f/b"),
        ] {
            tree.apply(event, &mut log).unwrap();
        }
        tree.apply(finished("f/a", Outcome::Passed), &mut log)
            .unwrap();
        assert_eq!(tree.running_tests(), ["f/b"]);
    }
}
