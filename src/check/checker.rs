//! The checker: takes parse events one at a time, applies the rules every
//! message shares, decides the addressing mode and hands tree messages to the
//! id-mode or name-mode tree.
use tcrunner_protocol::{Message, ParseError, ParseEvent, Parser, Position};

use super::id_tree::IdTree;
use super::name_tree::NameTree;
use super::report::{Mode, Report, Rule, Violations};
use super::tree_msg::TreeMsg;

/// What the current line held so far, for IntelliJ's one-message-per-line
/// rule: `ServiceMessageUtil.parse(line.trim())` reads a line only when,
/// trimmed of every char up to U+0020, it is exactly one message.
#[derive(Debug, Default)]
struct LineState {
    line: u64,
    /// Something other than blank text (or a message) came on this line.
    busy: bool,
    /// The line's first message, alone so far: it is lost if anything follows.
    alone: Option<String>,
}

/// Validates one stream. Feed it every parse event in order, then `finish`.
#[derive(Debug)]
pub(crate) struct Checker {
    violations: Violations,
    messages: u64,
    current: LineState,
    /// The mode and the line of the tree message that decided it.
    mode: Option<(Mode, u64)>,
    ids: IdTree,
    names: NameTree,
    /// Open `suiteTreeStarted` declarations: name and line.
    declaring: Vec<(String, u64)>,
    declared_tests: u64,
    /// Line of `testingFinished`: the IDE stops listening there.
    testing_finished: Option<u64>,
}

impl Default for Checker {
    fn default() -> Self {
        Checker::new()
    }
}

impl Checker {
    pub(crate) fn new() -> Self {
        Checker {
            violations: Violations::default(),
            messages: 0,
            current: LineState::default(),
            mode: None,
            ids: IdTree::default(),
            names: NameTree::default(),
            declaring: Vec::new(),
            declared_tests: 0,
            testing_finished: None,
        }
    }

    /// A checker of a stream whose tree hangs from node `root` rather than
    /// `0`: one written with `--offset`, to be embedded under that node.
    pub(crate) fn under(root: u64) -> Self {
        Checker {
            ids: IdTree::under(&root.to_string()),
            ..Checker::new()
        }
    }

    /// Takes one event from [`Parser`]. Besides checking the message, this
    /// applies the IDE's line rule: a message not alone on its line (other
    /// text or another message before or after it) is a `mid-line message`.
    /// The parser's own `mid_line` flag is not used: it counts only spaces and
    /// tabs as blank, while the IDE trims every control character too.
    pub(crate) fn event(&mut self, event: &ParseEvent) {
        match event {
            ParseEvent::Text { bytes, position } => self.text(bytes, *position),
            ParseEvent::Message {
                message, position, ..
            } => {
                let line = position.line;
                self.enter_line(line);
                let preceded = self.current.busy;
                self.line_content(line);
                if preceded {
                    self.violations.push(
                        line,
                        Rule::MidLine,
                        format!(
                            "{} follows other text on its line; IntelliJ before about 2019 reads only a line that is one message",
                            message.name
                        ),
                    );
                } else {
                    self.current.alone = Some(message.name.clone());
                }
                self.message(message, *position);
            }
            ParseEvent::Error(error) => self.parse_error(error),
        }
    }

    /// Plain text is always allowed on its own lines; next to a message on
    /// the same line it makes that message unreadable for the IDE.
    pub(crate) fn text(&mut self, bytes: &[u8], position: Position) {
        self.enter_line(position.line);
        // Java's `String.trim()` drops every char up to U+0020.
        if !bytes.iter().all(|&b| b <= b' ') {
            self.line_content(position.line);
        }
    }

    /// Something that starts like a message but is not one.
    pub(crate) fn parse_error(&mut self, error: &ParseError) {
        self.enter_line(error.position.line);
        self.line_content(error.position.line);
        self.violations
            .push(error.position.line, Rule::Syntax, error.problem.clone());
    }

    fn enter_line(&mut self, line: u64) {
        if self.current.line != line {
            self.current = LineState {
                line,
                busy: false,
                alone: None,
            };
        }
    }

    /// Non-blank content on the current line: a message that stood alone on
    /// it so far no longer does.
    fn line_content(&mut self, line: u64) {
        if let Some(name) = self.current.alone.take() {
            self.violations.push(
                line,
                Rule::MidLine,
                format!("{name} is followed by other text on its line; the IDE reads a message only when nothing but whitespace follows it"),
            );
        }
        self.current.busy = true;
    }

    /// One well-formed message (whether or not it started its line).
    pub(crate) fn message(&mut self, msg: &Message, position: Position) {
        let line = position.line;
        self.messages += 1;
        self.attribute_rules(msg, line);

        let Some(kind) = TreeMsg::from_name(&msg.name) else {
            self.other_message(msg, line);
            return;
        };
        if let Some(at) = self.testing_finished {
            self.violations.push(
                line,
                Rule::AfterFinish,
                format!(
                    "{} after testingFinished on line {at}; the IDE no longer reads it",
                    msg.name
                ),
            );
            return;
        }
        if kind == TreeMsg::TreeSuiteEnded {
            // IntelliJ closes a declared suite by name in both modes.
            self.end_declaration(msg, line);
            self.ids.declaration_ended();
            return;
        }
        let Some(mode) = self.mode_of(msg, line) else {
            return;
        };
        match kind {
            TreeMsg::TreeSuiteStarted => {
                let name = msg.get("name").unwrap_or_default();
                self.declaring.push((name.to_string(), line));
            }
            TreeMsg::TreeNode => self.declared_tests += 1,
            _ => {}
        }
        match mode {
            Mode::Id => self.ids.message(kind, msg, line, &mut self.violations),
            Mode::Name => self.names.message(kind, msg, line, &mut self.violations),
        }
    }

    /// Ends the stream and reports what is still open.
    pub(crate) fn finish(mut self) -> Report {
        let mut open = Violations::default();
        for (name, line) in self.declaring.drain(..).rev() {
            open.push(
                line,
                Rule::LeftOpen,
                format!("suiteTreeStarted '{name}' never got its suiteTreeEnded"),
            );
        }
        let (tests, suites) = match self.mode {
            Some((Mode::Id, _)) => {
                let counts = self.ids.finish(&mut open);
                self.names.finish(&mut open);
                counts
            }
            _ => self.names.finish(&mut open),
        };
        // Things left open are reported by the line that opened them.
        open.0.sort_by_key(|v| v.line);
        self.violations.0.append(&mut open.0);
        Report {
            violations: self.violations.0,
            messages: self.messages,
            tests,
            suites,
            declared_tests: self.declared_tests,
            mode: self.mode.map(|(mode, _)| mode),
        }
    }

    /// Decides the mode from the first tree message, then holds every later
    /// one to it. `None` means the message is in the wrong mode and is skipped.
    fn mode_of(&mut self, msg: &Message, line: u64) -> Option<Mode> {
        let has_id = msg.get("nodeId").is_some();
        let this = if has_id { Mode::Id } else { Mode::Name };
        match self.mode {
            None => {
                self.mode = Some((this, line));
                Some(this)
            }
            Some((mode, _)) if mode == this => Some(mode),
            Some((Mode::Id, at)) => {
                self.violations.push(
                    line,
                    Rule::MixedMode,
                    format!(
                        "{} without nodeId in an id-mode stream (decided by line {at})",
                        msg.name
                    ),
                );
                None
            }
            Some((Mode::Name, at)) => {
                self.violations.push(
                    line,
                    Rule::MixedMode,
                    format!(
                        "{} with nodeId in a name-mode stream (decided by line {at})",
                        msg.name
                    ),
                );
                None
            }
        }
    }

    fn end_declaration(&mut self, msg: &Message, line: u64) {
        let Some(name) = msg.get("name") else {
            self.violations
                .push(line, Rule::MissingName, "suiteTreeEnded without a name");
            return;
        };
        match self.declaring.last() {
            None => self.violations.push(
                line,
                Rule::Unbalanced,
                format!("suiteTreeEnded '{name}' but no suiteTreeStarted is open"),
            ),
            Some((open, at)) if open != name => self.violations.push(
                line,
                Rule::SuiteMismatch,
                format!("suiteTreeEnded '{name}' does not match the open suiteTreeStarted '{open}' (line {at})"),
            ),
            Some(_) => {}
        }
        self.declaring.pop();
    }

    /// Messages outside the tree: counted, mostly free-form.
    fn other_message(&mut self, msg: &Message, line: u64) {
        match msg.name.as_str() {
            "testingFinished" => {
                self.testing_finished.get_or_insert(line);
            }
            "treeEnded" => {
                self.ids.tree_ended();
                if let Some((open, at)) = self.declaring.last() {
                    self.violations.push(
                        line,
                        Rule::Unbalanced,
                        format!(
                            "treeEnded while suiteTreeStarted '{open}' (line {at}) is still open"
                        ),
                    );
                }
            }
            "flowStarted" => self.names.flow_started(msg, line, &mut self.violations),
            "flowFinished" => self.names.flow_finished(msg, line, &mut self.violations),
            _ => {}
        }
    }

    /// Attribute formats the consumers parse strictly, whatever the mode.
    fn attribute_rules(&mut self, msg: &Message, line: u64) {
        let v = &mut self.violations;
        if let Some(ts) = msg.get("timestamp") {
            if !is_timestamp(ts) {
                v.push(
                    line,
                    Rule::Timestamp,
                    format!("timestamp='{ts}' on {} is not yyyy-MM-dd'T'HH:mm:ss.SSS with an optional +hhmm", msg.name),
                );
            }
        }
        match msg.name.as_str() {
            "testCount" => match msg.get("count") {
                Some(c) if is_uint::<i32>(c) => {}
                Some(c) => v.push(
                    line,
                    Rule::Count,
                    format!("testCount count='{c}' is not a non-negative integer"),
                ),
                None => v.push(line, Rule::Count, "testCount without a count"),
            },
            // IntelliJ's handler calls `status.equals(…)` on a message with
            // text, with no null check.
            "message"
                if msg.get("status").is_none() && !msg.get("text").unwrap_or("").is_empty() =>
            {
                v.push(
                    line,
                    Rule::MissingStatus,
                    "message without a status attribute (IntelliJ throws a NullPointerException)",
                );
            }
            "testFailed" => {
                if msg.get("message").is_none() {
                    v.push(
                        line,
                        Rule::MissingMessage,
                        "testFailed without a message attribute",
                    );
                }
                match (msg.get("expected"), msg.get("actual")) {
                    (Some(_), None) => v.push(
                        line,
                        Rule::Comparison,
                        "testFailed has expected but no actual; the IDE wants both or neither",
                    ),
                    (None, Some(_)) => v.push(
                        line,
                        Rule::Comparison,
                        "testFailed has actual but no expected; the IDE wants both or neither",
                    ),
                    _ => {}
                }
            }
            _ => {}
        }
        if TreeMsg::from_name(&msg.name).is_some() {
            if let Some(d) = msg.get("duration") {
                if !is_uint::<i64>(d) {
                    v.push(
                        line,
                        Rule::Duration,
                        format!(
                            "duration='{d}' on {} is not a non-negative integer of milliseconds",
                            msg.name
                        ),
                    );
                }
            }
        }
    }
}

/// Checks a whole stream held in memory.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn check_bytes(bytes: &[u8]) -> Report {
    let mut checker = Checker::new();
    let mut parser = Parser::new();
    parser.feed(bytes, |event| checker.event(&event));
    parser.finish(|event| checker.event(&event));
    checker.finish()
}

/// ASCII digits only (no sign, no spaces) that fit the consumer's integer type.
fn is_uint<T: std::str::FromStr>(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && s.parse::<T>().is_ok()
}

/// `yyyy-MM-dd'T'HH:mm:ss.SSS`, optionally followed by an RFC 822 zone
/// (`+0400`), the two forms the TeamCity spec accepts.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let shape = b"dddd-dd-ddTdd:dd:dd.ddd";
    if b.len() < shape.len() {
        return false;
    }
    let (main, zone) = b.split_at(shape.len());
    let shaped = main.iter().zip(shape).all(|(c, s)| match s {
        b'd' => c.is_ascii_digit(),
        _ => c == s,
    });
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(u32::MAX);
    let zone_ok = match zone {
        [] => true,
        [sign, digits @ ..] => {
            matches!(sign, b'+' | b'-')
                && digits.len() == 4
                && digits.iter().all(u8::is_ascii_digit)
        }
    };
    shaped
        && zone_ok
        && (1..=12).contains(&num(5..7))
        && (1..=31).contains(&num(8..10))
        && num(11..13) <= 23
        && num(14..16) <= 59
        && num(17..19) <= 60
}
