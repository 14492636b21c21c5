//! Entry points for the fuzz targets in `fuzz/` (docs/fuzzing.md).
//!
//! Each function takes arbitrary bytes, drives one parser the way tcrunner
//! does, and panics only when a promise breaks: a parser that panics, a result
//! that depends on how the input was cut, a value that does not survive the
//! round trip, or a stream of ours that `tcrunner check` rejects. The fuzz
//! targets are one-line wrappers around them, and `cargo test` replays the
//! committed corpus through them too (the tests at the bottom).
//!
//! Report files and streams go through the commands' own entry points
//! (`convert::run`, `check::run`), which read files, so inputs are written
//! to scratch files under the temporary folder first.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use tcrunner_protocol::{escape, unescape, Message, ParseEvent, Parser, ServiceMessage, Writer};

use crate::cli::{CheckConfig, ConvertConfig, Dialect, InputFormat, OutputConfig, ReportInput};
use crate::event::TestEvent;
use crate::exit;
use crate::frameworks::{Framework, FrameworkName, Jest, Pytest, Request, Vitest};
use crate::report::{Pipeline, Transport};

/// The push parser: the same events whatever the chunking, positions that
/// point at what they describe, and every message written back parses to itself.
///
/// The first byte picks a cut position (scaled to the length) and a chunk size.
pub fn protocol_parser(data: &[u8]) {
    let Some(&first) = data.first() else {
        return;
    };
    let whole = parse(&[data]);
    let cut = data.len() * usize::from(first) / 255;
    let (head, tail) = data.split_at(cut);
    assert_eq!(
        parse(&[head, tail]),
        whole,
        "fed in two pieces cut at {cut}"
    );
    let size = 1 + usize::from(first % 8);
    let chunks: Vec<&[u8]> = data.chunks(size).collect();
    assert_eq!(parse(&chunks), whole, "fed in chunks of {size}");

    let newlines: Vec<usize> = (0..data.len()).filter(|&i| data[i] == b'\n').collect();
    for event in &whole {
        let (offset, line) = match event {
            ParseEvent::Text { bytes, position } => {
                let at = position.offset as usize;
                assert!(
                    data.get(at..).is_some_and(|rest| rest.starts_with(bytes)),
                    "text {bytes:?} is not the input at {at}"
                );
                (at, position.line)
            }
            ParseEvent::Message {
                message, position, ..
            } => {
                let at = position.offset as usize;
                assert!(
                    data.get(at..)
                        .is_some_and(|rest| rest.starts_with(b"##teamcity[")),
                    "message {message:?} does not start at {at}"
                );
                round_trip(message);
                (at, position.line)
            }
            ParseEvent::Error(error) => (error.position.offset as usize, error.position.line),
        };
        let expected_line = 1 + newlines.partition_point(|&at| at < offset) as u64;
        assert_eq!(line, expected_line, "line number of {event:?}");
    }
}

/// Parses `chunks` as one stream.
fn parse(chunks: &[&[u8]]) -> Vec<ParseEvent> {
    let mut parser = Parser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, |event| events.push(event));
    }
    parser.finish(|event| events.push(event));
    events
}

/// A parsed message written by our writer parses back to itself, and its
/// typed form survives a trip through the untyped one.
fn round_trip(message: &Message) {
    let mut written = Vec::new();
    Writer::new(&mut written)
        .message(message)
        .expect("a parsed message has identifier names and keys");
    match parse(&[&written]).as_slice() {
        [ParseEvent::Message {
            message: again,
            mid_line: false,
            ..
        }] => assert_eq!(again, message, "written as {:?}", lossy(&written)),
        other => panic!(
            "{message:?} written as {:?} parses as {other:?}",
            lossy(&written)
        ),
    }
    if let Ok(typed) = ServiceMessage::from_message(message) {
        let untyped = Message::from(&typed);
        assert_eq!(
            ServiceMessage::from_message(&untyped).as_ref(),
            Ok(&typed),
            "typed {typed:?} as {untyped:?}"
        );
    }
}

/// Escaping: `unescape(escape(s)) == s` for any text, and a value written in
/// a message (attribute or single value) reads back unchanged.
pub fn escape_roundtrip(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let escaped = escape(&text);
    assert_eq!(
        unescape(&escaped).as_deref(),
        Ok(&*text),
        "escaped {escaped:?}"
    );
    round_trip(&Message::new("m").with("v", &*text));
    round_trip(&Message::single("m", &*text));
}

/// JUnit XML through `tcrunner convert --input-format junit`.
pub fn convert_junit(data: &[u8]) {
    convert(Some(InputFormat::Junit), data, 1);
}

/// jest `--json` through `tcrunner convert --input-format jest-json`.
pub fn convert_jest_json(data: &[u8]) {
    convert(Some(InputFormat::JestJson), data, 1);
}

/// vitest `--reporter=json` through `tcrunner convert --input-format vitest-json`.
pub fn convert_vitest_json(data: &[u8]) {
    convert(Some(InputFormat::VitestJson), data, 1);
}

/// pytest-json-report through `tcrunner convert --input-format pytest-json`.
pub fn convert_pytest_json(data: &[u8]) {
    convert(Some(InputFormat::PytestJson), data, 1);
}

/// CTRF through `tcrunner convert --input-format ctrf`.
pub fn convert_ctrf(data: &[u8]) {
    convert(Some(InputFormat::Ctrf), data, 1);
}

/// Any report through `tcrunner convert` with the format detected, given
/// twice (`convert a a`), so two files' trees share one stream.
pub fn convert_detect(data: &[u8]) {
    convert(None, data, 2);
}

/// Converts `data` (as `copies` files) into both dialects; the exit code is
/// one `convert` documents and the stream is clean, whatever the input.
fn convert(input_format: Option<InputFormat>, data: &[u8], copies: usize) {
    let file = Scratch::new(data);
    for dialect in [Dialect::Intellij, Dialect::Teamcity] {
        let config = ConvertConfig {
            files: vec![ReportInput::File(file.path.clone()); copies],
            input_format,
            output: output(dialect),
        };
        let mut stream = Vec::new();
        let code = crate::convert::run(&config, &mut stream).expect("writing to memory");
        assert!(
            [
                exit::SUCCESS,
                exit::TESTS_FAILED,
                exit::NO_TESTS,
                exit::DATA_ERROR
            ]
            .contains(&code),
            "convert exited {code}"
        );
        assert_clean(&stream, &format!("convert ({dialect:?})"));
    }
}

/// Side-channel events into the tree and every dialect, the way the run loop
/// feeds them; the stream written is clean, whatever arrives.
///
/// Each line of `data` is one thing from the framework: a line starting with
/// `{` is an event (decoded as the run loop decodes the side channel; one
/// that does not decode is dropped), any other line is framework stdout, and
/// a stdout line starting with `~` is sent without the `~` and its newline,
/// so the next event arrives mid-line.
pub fn events(data: &[u8]) {
    let input: Vec<Input<'_>> = data
        .split_inclusive(|&b| b == b'\n')
        .filter_map(|line| match line {
            [b'{', ..] => serde_json::from_slice(line).ok().map(Input::Event),
            [b'~', rest @ ..] => Some(Input::Text(rest.strip_suffix(b"\n").unwrap_or(rest))),
            _ => Some(Input::Text(line)),
        })
        .collect();
    for (name, config) in event_configs() {
        let mut stream = Vec::new();
        let mut pipeline = Pipeline::new(&config, Transport::Stdout(&mut stream), Vec::new())
            .expect("writing to memory");
        // A run's stream starts as tcrunner starts it, with its launch line:
        // never with what the framework printed.
        pipeline
            .text(b"Launching the fuzzed framework\n\n")
            .expect("writing to memory");
        for item in &input {
            match item {
                Input::Event(event) => pipeline.event(event.clone()),
                Input::Text(text) => pipeline.text(text),
            }
            .expect("writing to memory");
        }
        pipeline
            .finish(|_, groups| {
                crate::report::RunEnd::graded(Default::default(), 0, Vec::new(), groups)
            })
            .expect("writing to memory");
        // Top-level nodes name the offset as their parent, a node of the
        // earlier run this one is appended to; the checker sees one run
        // alone, so they are put under the root. Escaping keeps `'` out of
        // values, so only the attribute itself can match.
        if config.offset > 0 {
            let from = format!("parentNodeId='{}'", config.offset);
            stream = replace(&stream, from.as_bytes(), b"parentNodeId='0'");
        }
        assert_clean(&stream, name);
    }
}

/// One line of the `events` input.
enum Input<'a> {
    Event(TestEvent),
    Text(&'a [u8]),
}

/// The output settings the event target runs with: both dialects plain,
/// then with every option that changes what is written.
fn event_configs() -> [(&'static str, OutputConfig); 5] {
    let everything = |dialect| OutputConfig {
        offset: 41,
        timestamps: true,
        skip_passed_output: true,
        retry_support: true,
        block_service_messages: true,
        ..output(dialect)
    };
    [
        ("intellij", output(Dialect::Intellij)),
        ("teamcity", output(Dialect::Teamcity)),
        ("intellij, all options", everything(Dialect::Intellij)),
        ("teamcity, all options", everything(Dialect::Teamcity)),
        (
            "intellij, collect-only",
            OutputConfig {
                collect_only: true,
                ..output(Dialect::Intellij)
            },
        ),
    ]
}

/// Default output settings in `dialect`.
fn output(dialect: Dialect) -> OutputConfig {
    OutputConfig {
        dialect,
        parallel: false,
        offset: 0,
        timestamps: false,
        skip_passed_output: false,
        retry_support: false,
        block_service_messages: false,
        collect_only: false,
        events_out: None,
        ctrf: None,
        junit_xml: None,
        grading: Default::default(),
        human: crate::cli::HumanConfig::default(),
    }
}

/// Panics with the checker's report unless `tcrunner check` finds `stream` clean.
fn assert_clean(stream: &[u8], what: &str) {
    let file = Scratch::new(stream);
    let config = CheckConfig {
        file: Some(file.path.clone()),
        quiet: false,
        offset: 0,
    };
    let mut report = Vec::new();
    let code = crate::check::run(&config, &mut report).expect("checking a file just written");
    assert!(
        code == exit::SUCCESS,
        "{what}: `tcrunner check` rejects our own stream:\n{}--- stream ---\n{}",
        lossy(&report),
        lossy(stream)
    );
}

/// `tcrunner view` of any stream: an exit code `view` documents (0, 1, or
/// 65 for UTF-16), whatever the stream holds, and a summary line at the
/// end; where `tcrunner check` finds the stream clean, the view fails it
/// exactly when check counts a failed test.
pub fn view(data: &[u8]) {
    let file = Scratch::new(data);
    let config = crate::cli::ViewConfig {
        file: Some(file.path.clone()),
        output: output(Dialect::Human),
    };
    let mut shown = Vec::new();
    let code = match crate::view::run(&config, &mut shown) {
        Ok(code) => code,
        Err(error) => error.exit_code(),
    };
    assert!(
        [exit::SUCCESS, exit::TESTS_FAILED, exit::DATA_ERROR].contains(&code),
        "view exited {code}"
    );
    if code == exit::DATA_ERROR {
        return;
    }
    let last = lossy(&shown);
    let last = last.lines().last().unwrap_or_default();
    assert!(
        last.contains(" in "),
        "no summary line at the end: {last:?}"
    );
    let check = crate::cli::CheckConfig {
        file: Some(file.path.clone()),
        quiet: true,
        offset: 0,
    };
    let mut report = Vec::new();
    if crate::check::run(&check, &mut report).expect("checking a file just written")
        != exit::SUCCESS
    {
        return;
    }
    let report = lossy(&report);
    let failed = report
        .split(" failed")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or_else(|| panic!("check's summary: {report:?}"));
    assert_eq!(
        code == exit::TESTS_FAILED,
        failed > 0,
        "view exited {code}, check counts {failed} failed: {report}"
    );
}

/// `--target` parsing for every framework, as the launch builds its command
/// line (nothing is started): all lines of `data` as targets together, then
/// each alone. A pytest target that names a test translates to a node id
/// that translates to itself; a JS target's name pattern selects the test it
/// names and what is under it.
pub fn targets(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let targets: Vec<String> = text.split('\n').take(8).map(str::to_owned).collect();
    for (project, vitest_joiner) in target_projects() {
        let request = |targets: Vec<String>| Request {
            project: project.clone(),
            targets,
            ..Request::default()
        };
        for name in <FrameworkName as clap::ValueEnum>::value_variants() {
            let _ = name.framework().launch(&request(targets.clone()));
        }
        for target in &targets {
            let one = request(vec![target.clone()]);
            if let Ok(launch) = Pytest.launch(&one) {
                check_pytest_id(target, &launch.shown_args, &request);
            }
            for (framework, joiner) in [(&Jest as &dyn Framework, " "), (&Vitest, vitest_joiner)] {
                if let Ok(launch) = framework.launch(&one) {
                    check_js_pattern(target, &launch.shown_args, joiner);
                }
            }
        }
    }
}

/// The node id a one-target pytest launch ends with translates to itself.
/// (`file::` alone gives `file`, a path that reads as a dotted name when it
/// has no `/` and no `.py`: only test ids are fixed points.)
fn check_pytest_id(target: &str, shown: &[String], request: &dyn Fn(Vec<String>) -> Request) {
    let node_id = shown.last().expect("the target is shown");
    if !node_id.contains("::") {
        return;
    }
    let again = Pytest
        .launch(&request(vec![node_id.clone()]))
        .unwrap_or_else(|e| panic!("{target:?} gave {node_id:?}, refused: {e}"));
    assert_eq!(again.shown_args.last(), Some(node_id), "{target:?}");
}

/// The `--testNamePattern` of a one-target launch matches the named test
/// (`outer > inner > test`, joined by `joiner`) and anything under it. The
/// pattern is a JavaScript regex; everything in it but the anchors and the
/// groups is escaped, where Rust's regex syntax agrees.
fn check_js_pattern(target: &str, shown: &[String], joiner: &str) {
    let (file, names) = target.split_once("::").unwrap_or((target, ""));
    assert!(shown.iter().any(|a| a == file), "{target:?}: {shown:?}");
    let pattern = shown
        .iter()
        .find_map(|a| a.strip_prefix("--testNamePattern="));
    let Some(pattern) = pattern else {
        assert!(
            names.trim().is_empty(),
            "{target:?}: no pattern in {shown:?}"
        );
        return;
    };
    // Titles are taken exactly, spaces at either end included.
    let names: Vec<&str> = names.split(" > ").collect();
    let regex = match regex::RegexBuilder::new(pattern)
        .size_limit(1 << 26)
        .build()
    {
        Ok(regex) => regex,
        Err(regex::Error::CompiledTooBig(_)) => return,
        Err(e) => panic!("{target:?}: pattern {pattern:?} does not compile: {e}"),
    };
    let full = names.join(joiner);
    assert!(regex.is_match(&full), "{pattern:?} misses {full:?}");
    let child = format!("{full}{joiner}child");
    assert!(regex.is_match(&child), "{pattern:?} misses {child:?}");
}

/// Two fake projects with a few Python modules and jest/vitest installs (no
/// `engines`, so no node is asked for its version): vitest 5 joins names
/// with ` > `, vitest 3 with a space.
fn target_projects() -> &'static [(PathBuf, &'static str); 2] {
    static PROJECTS: OnceLock<[(PathBuf, &'static str); 2]> = OnceLock::new();
    PROJECTS.get_or_init(|| {
        let make = |name: &str, vitest: &str| {
            let dir = scratch_dir().join(name);
            let files = [
                ("tests/test_a.py", String::new()),
                ("pkg/__init__.py", String::new()),
                ("pkg/sub/mod.py", String::new()),
                (
                    "node_modules/jest/package.json",
                    r#"{"version":"30.0.0"}"#.into(),
                ),
                (
                    "node_modules/vitest/package.json",
                    format!(r#"{{"version":"{vitest}"}}"#),
                ),
            ];
            for (path, content) in files {
                write_once(&dir.join(path), content.as_bytes());
            }
            dir
        };
        [
            (make("project-vitest5", "5.0.0"), " > "),
            (make("project-vitest3", "3.2.4"), " "),
        ]
    })
}

/// Writes `content` to `path` unless it holds it already; write then rename,
/// so a concurrent fuzz job never reads half a file.
fn write_once(path: &Path, content: &[u8]) {
    if std::fs::read(path).is_ok_and(|old| old == content) {
        return;
    }
    let dir = path.parent().expect("a file in a folder");
    std::fs::create_dir_all(dir).expect("creating a scratch folder");
    let partial = path.with_extension(format!("partial-{}", std::process::id()));
    std::fs::write(&partial, content).expect("writing a scratch file");
    std::fs::rename(&partial, path).expect("renaming a scratch file");
}

/// `<temp>/tcrunner-fuzz-<uid>`, created once. A crash aborts without
/// dropping its [`Scratch`] files, so those of processes gone are removed.
fn scratch_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let uid = rustix::process::getuid().as_raw();
        let dir = std::env::temp_dir().join(format!("tcrunner-fuzz-{uid}"));
        std::fs::create_dir_all(&dir).expect("creating the scratch folder");
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let pid = name.to_str().and_then(|n| n.split_once('-'));
            let pid = pid.and_then(|(pid, _)| pid.parse().ok());
            if let Some(pid) = pid.and_then(rustix::process::Pid::from_raw) {
                // Signal 0 sends nothing; it only asks whether `pid` exists.
                let gone = rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH);
                if gone {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
        dir
    })
}

/// A file holding some bytes, removed when dropped.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn new(content: &[u8]) -> Scratch {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = scratch_dir().join(format!("{}-{n}", std::process::id()));
        std::fs::write(&path, content).expect("writing a scratch file");
        Scratch { path }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// `bytes` with every `from` replaced by `to`.
fn replace(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some(at) = rest.windows(from.len()).position(|w| w == from) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(to);
        rest = &rest[at + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

/// Bytes as text for messages, at most 64 KB of them.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]).into_owned()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::event::{LogLevel, Node, NodeKind, Outcome, Stream, TestResult};

    /// A fuzz target's entry point.
    type Target = fn(&[u8]);

    /// Every fuzz target by name: `fuzz/fuzz_targets/<name>.rs` calls the function.
    const TARGETS: [(&str, Target); 11] = [
        ("protocol_parser", protocol_parser),
        ("escape_roundtrip", escape_roundtrip),
        ("convert_junit", convert_junit),
        ("convert_jest_json", convert_jest_json),
        ("convert_vitest_json", convert_vitest_json),
        ("convert_pytest_json", convert_pytest_json),
        ("convert_ctrf", convert_ctrf),
        ("convert_detect", convert_detect),
        ("events", events),
        ("targets", targets),
        ("view", view),
    ];

    fn fuzz_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
    }

    /// The committed corpus (seeds and fixed crash reproducers) passes on a
    /// plain `cargo test`, without cargo-fuzz.
    #[test]
    fn corpus_replays() {
        for (name, target) in TARGETS {
            let dir = fuzz_dir().join("corpus").join(name);
            let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|entry| entry.expect("a corpus entry").path())
                .collect();
            paths.sort();
            assert!(!paths.is_empty(), "{name}: no corpus");
            for path in paths {
                // Shown only when the target panics on this input.
                eprintln!("{name}: {}", path.display());
                target(&std::fs::read(&path).expect("a corpus file"));
            }
        }
    }

    /// The table above, the fuzz crate's targets and the corpus folders agree.
    #[test]
    fn every_target_is_listed() {
        let mut files: Vec<String> = std::fs::read_dir(fuzz_dir().join("fuzz_targets"))
            .expect("fuzz/fuzz_targets")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        files.sort();
        let mut listed: Vec<String> = TARGETS.iter().map(|(n, _)| format!("{n}.rs")).collect();
        listed.sort();
        assert_eq!(files, listed);
        let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("manifest");
        for (name, _) in TARGETS {
            assert!(manifest.contains(&format!("name = \"{name}\"")), "{name}");
        }
    }

    fn id() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a", "b", "c", "a/b", "a/b/c", ""]).prop_map(String::from)
    }

    /// Plain names, names that look like service messages or need escaping,
    /// and anything printable.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z ]{0,6}",
            Just("##teamcity[testStarted name='x' nodeId='1']\n".to_string()),
            Just("|'[]\r\n\u{85}\u{2028}".to_string()),
            "\\PC{0,12}",
        ]
    }

    fn node() -> impl Strategy<Value = Node> {
        let kind = prop::sample::select(vec![
            NodeKind::Dir,
            NodeKind::File,
            NodeKind::Suite,
            NodeKind::Test,
        ]);
        (
            id(),
            prop::option::of(id()),
            text(),
            kind,
            prop::option::of(text()),
            prop::option::of(any::<u32>()),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of(id()),
        )
            .prop_map(
                |(id, parent, name, kind, file, line, hint, meta, late)| Node {
                    id,
                    parent,
                    name,
                    kind,
                    file,
                    line,
                    hint,
                    meta,
                    tags: Vec::new(),
                    late,
                },
            )
    }

    fn result() -> impl Strategy<Value = TestResult> {
        (
            id(),
            prop::sample::select(Outcome::ALL.to_vec()),
            prop::option::of(any::<u64>()),
            prop::option::of(text()),
            prop::option::of(text()),
            prop::option::of((text(), text())),
        )
            .prop_map(|(id, outcome, duration_ms, message, details, compared)| {
                TestResult {
                    id,
                    outcome,
                    duration_ms,
                    message,
                    details,
                    expected: compared.as_ref().map(|c| c.0.clone()),
                    actual: compared.map(|c| c.1),
                }
            })
    }

    fn event() -> impl Strategy<Value = TestEvent> {
        let stream = prop::sample::select(vec![Stream::Stdout, Stream::Stderr]);
        let level = prop::sample::select(vec![LogLevel::Info, LogLevel::Warning, LogLevel::Error]);
        prop_oneof![
            2 => node().prop_map(TestEvent::Suite),
            4 => node().prop_map(TestEvent::Test),
            3 => id().prop_map(|id| TestEvent::Started { id }),
            4 => result().prop_map(TestEvent::Finished),
            2 => id().prop_map(|id| TestEvent::SuiteDone { id }),
            2 => (prop::option::of(id()), stream, text())
                .prop_map(|(id, stream, text)| TestEvent::Output { id, stream, text }),
            1 => any::<u64>().prop_map(|count| TestEvent::Collected { count }),
            1 => (level, text()).prop_map(|(level, text)| TestEvent::Log { level, text }),
        ]
    }

    /// One line of the `events` input: an event, or framework stdout (maybe
    /// without its newline).
    fn line() -> impl Strategy<Value = String> {
        prop_oneof![
            6 => event().prop_map(|e| serde_json::to_string(&e).expect("events serialize") + "\n"),
            1 => text().prop_map(|t| t.replace('\n', " ") + "\n"),
            1 => text().prop_map(|t| format!("~{}\n", t.replace('\n', " "))),
        ]
    }

    proptest! {
        // Failures are reported, not written into the source tree.
        #![proptest_config(ProptestConfig {
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        /// Any sequence of well-formed events, in any order, with output
        /// between them, gives a clean stream in every dialect.
        #[test]
        fn any_event_sequence_gives_a_clean_stream(lines in prop::collection::vec(line(), 0..40)) {
            events(lines.concat().as_bytes());
        }
    }
}
