//! The push parser: exact events on a corpus, chunking independence, and
//! robustness against arbitrary bytes.
use proptest::prelude::*;
use tcrunner_protocol::{Message, ParseError, ParseEvent, Parser, Position, ServiceMessage};

/// Parses `chunks` fed one after another, then `finish`.
fn parse_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Vec<ParseEvent> {
    let mut parser = Parser::new();
    let mut events = Vec::new();
    for chunk in chunks {
        parser.feed(chunk, |e| events.push(e));
    }
    parser.finish(|e| events.push(e));
    events
}

fn parse(bytes: &[u8]) -> Vec<ParseEvent> {
    parse_chunks([bytes])
}

/// Asserts that two-piece splits at `splits` and one-byte chunks give `parse(bytes)`.
fn assert_chunking_invariant(bytes: &[u8], splits: impl IntoIterator<Item = usize>) {
    let whole = parse(bytes);
    for split in splits {
        let (a, b) = bytes.split_at(split);
        assert_eq!(parse_chunks([a, b]), whole, "split at byte {split}");
    }
    assert_eq!(parse_chunks(bytes.chunks(1)), whole, "one-byte chunks");
}

fn text(bytes: &[u8], offset: u64, line: u64) -> ParseEvent {
    ParseEvent::Text {
        bytes: bytes.to_vec(),
        position: Position { offset, line },
    }
}

fn message(message: Message, offset: u64, line: u64, mid_line: bool) -> ParseEvent {
    ParseEvent::Message {
        message,
        position: Position { offset, line },
        mid_line,
    }
}

fn error(problem: &str, offset: u64, line: u64) -> ParseEvent {
    ParseEvent::Error(ParseError {
        position: Position { offset, line },
        problem: problem.to_owned(),
    })
}

/// One line of each kind the parser distinguishes.
const CORPUS_LINES: &[&[u8]] = &[
    b"plain text\n",
    b"##teamcity[testStarted name='a' nodeId='1']\n",
    b"PASSED [100%]##teamcity[testFinished name='a']\r\n",
    b"  ##teamcity[progressMessage 'x y' ]\t\n",
    b"##teamcity[a]##teamcity[b\tk = 'v|]'] tail\n",
    b"before ##teamcity[testFailed name='a' message=oops]\n",
    b"bad utf8 \xff\xfe and nul \0 here\n",
    b"##teamcity[message text='\xff']\n",
    b"\r\n",
    b"##teamcity[testIgnored name='|0xD83D|0xDE00' stopped='true']",
];

fn corpus() -> Vec<u8> {
    CORPUS_LINES.concat()
}

/// Offset of the start of 1-based line `n` of the corpus.
fn line_start(n: usize) -> u64 {
    CORPUS_LINES[..n - 1].iter().map(|l| l.len() as u64).sum()
}

#[test]
fn corpus_gives_exactly_these_events() {
    let at = |line: usize, col: u64| (line_start(line) + col, line as u64);
    let t = |bytes: &[u8], (offset, line)| text(bytes, offset, line);
    let m = |msg, (offset, line), mid| message(msg, offset, line, mid);
    let e = |problem, (offset, line)| error(problem, offset, line);
    let expected = vec![
        t(b"plain text\n", at(1, 0)),
        m(
            Message::new("testStarted")
                .with("name", "a")
                .with("nodeId", "1"),
            at(2, 0),
            false,
        ),
        t(b"PASSED [100%]", at(3, 0)),
        m(
            Message::new("testFinished").with("name", "a"),
            at(3, 13),
            true,
        ),
        m(Message::single("progressMessage", "x y"), at(4, 2), false),
        m(Message::new("a"), at(5, 0), false),
        m(Message::new("b").with("k", "v]"), at(5, 13), true),
        t(b" tail\n", at(5, 36)),
        e("expected `'` to open the value of `message`", at(6, 46)),
        t(
            b"before ##teamcity[testFailed name='a' message=oops]\n",
            at(6, 0),
        ),
        t(b"bad utf8 \xff\xfe and nul \0 here\n", at(7, 0)),
        e("value is not valid utf-8", at(8, 25)),
        t(b"##teamcity[message text='\xff']\n", at(8, 0)),
        t(b"\r\n", at(9, 0)),
        m(
            Message::new("testIgnored")
                .with("name", "😀")
                .with("stopped", "true"),
            at(10, 0),
            false,
        ),
    ];
    assert_eq!(parse(&corpus()), expected);
}

#[test]
fn corpus_at_every_chunk_split() {
    let corpus = corpus();
    assert_chunking_invariant(&corpus, 0..=corpus.len());
}

#[test]
fn real_streams_at_many_chunk_splits() {
    for sample in [
        &include_bytes!("data/pytest-teamcity-messages.stdout.txt")[..],
        &include_bytes!("data/jest-teamcity-reporter.stdout.txt")[..],
    ] {
        // Every byte of the first 2 KiB (glued messages, long lines), then a
        // prime stride: every byte of both files takes half a minute unoptimised.
        let head = sample.len().min(2048);
        let splits = (0..head).chain((head..=sample.len()).step_by(61));
        assert_chunking_invariant(sample, splits);
    }
}

#[test]
fn real_pytest_stream_has_every_message_and_finds_glued_ones() {
    let sample = include_bytes!("data/pytest-teamcity-messages.stdout.txt");
    let events = parse(sample);
    let mut messages = 0;
    let mut glued = 0;
    for event in &events {
        match event {
            ParseEvent::Message {
                message, mid_line, ..
            } => {
                messages += 1;
                glued += usize::from(*mid_line);
                assert!(message.get("timestamp").is_some(), "{message:?}");
                let typed = ServiceMessage::from_message(message).unwrap();
                assert_eq!(Message::from(&typed).attrs().len(), message.attrs().len());
            }
            ParseEvent::Text { .. } => {}
            ParseEvent::Error(e) => panic!("{e}"),
        }
    }
    let markers = sample.windows(11).filter(|w| w == b"##teamcity[").count();
    assert_eq!(messages, markers);
    assert!(
        glued >= 10,
        "pytest glues messages to its progress output; found {glued}"
    );
}

#[test]
fn message_glued_after_text_is_found_mid_line() {
    let events = parse(b"PASSED [100%]##teamcity[testFinished name='a']\n");
    assert_eq!(
        events,
        vec![
            text(b"PASSED [100%]", 0, 1),
            message(Message::new("testFinished").with("name", "a"), 13, 1, true),
        ]
    );
}

#[test]
fn malformed_messages_are_errors_and_parsing_continues() {
    let cases: &[(&[u8], &str, u64)] = &[
        (
            b"##teamcity[]",
            "expected a message name after `##teamcity[`",
            11,
        ),
        (
            b"##teamcity[ x]",
            "expected a message name after `##teamcity[`",
            11,
        ),
        (b"##teamcity[x", "unterminated message: expected `]`", 12),
        (b"##teamcity[x a='1'b='2']", "expected a space or `]`", 18),
        (b"##teamcity[x'v']", "expected a space or `]`", 12),
        (b"##teamcity[x a]", "expected `=` after attribute `a`", 14),
        (
            b"##teamcity[x a=1]",
            "expected `'` to open the value of `a`",
            15,
        ),
        (
            b"##teamcity[x a='1]",
            "unterminated value: no closing `'`",
            15,
        ),
        (
            b"##teamcity[x a='1|']",
            "unterminated value: no closing `'`",
            15,
        ),
        (
            b"##teamcity[x a='ab|q']",
            "unknown escape `|q` at character 2",
            18,
        ),
        (
            b"##teamcity[x a='\xc3\xa9|q']",
            "unknown escape `|q` at character 1",
            18,
        ),
        // A `|` escapes the next byte, so a dangling `|` reads as an open value.
        (
            b"##teamcity[x a='\xc3\xa9|']",
            "unterminated value: no closing `'`",
            15,
        ),
        (
            b"##teamcity[x a='|0xDE00']",
            "bad `|0x` escape at character 0",
            16,
        ),
        (
            b"##teamcity[x 'v' k='w']",
            "expected `]` after the value",
            17,
        ),
        (b"##teamcity[x 'v'", "expected `]` after the value", 16),
        (
            b"##teamcity[x 1='v']",
            "expected an attribute name or `]`",
            13,
        ),
    ];
    for &(line, problem, offset) in cases {
        let mut input = b"ok\n".to_vec();
        input.extend_from_slice(line);
        input.extend_from_slice(b"\n##teamcity[next]\n");
        let events = parse(&input);
        let mut with_newline = line.to_vec();
        with_newline.push(b'\n');
        assert_eq!(
            events,
            vec![
                text(b"ok\n", 0, 1),
                error(problem, 3 + offset, 2),
                text(&with_newline, 3, 2),
                message(Message::new("next"), 4 + line.len() as u64, 3, false),
            ],
            "{}",
            String::from_utf8_lossy(line)
        );
    }
}

#[test]
fn whitespace_is_accepted_where_the_grammar_allows_it() {
    let events =
        parse(b"##teamcity[x\t a \t=\t 'v' \tb='w'\t ]\n##teamcity[y ]\n##teamcity[z\t'q'\t]\n");
    let messages: Vec<_> = events
        .into_iter()
        .map(|e| match e {
            ParseEvent::Message {
                message,
                mid_line: false,
                ..
            } => message,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        messages,
        vec![
            Message::new("x").with("a", "v").with("b", "w"),
            Message::new("y"),
            Message::single("z", "q")
        ]
    );
}

#[test]
fn raw_brackets_inside_values_and_duplicate_keys_are_kept() {
    let events = parse(b"##teamcity[x a='[1]' a='|[2|]']\n");
    let expected = Message::new("x").with("a", "[1]").with("a", "[2]");
    assert_eq!(events, vec![message(expected, 0, 1, false)]);
}

#[test]
fn crlf_lines_count_once_and_keep_their_terminator_in_text() {
    let events = parse(b"a\r\nb\r\n##teamcity[m]\r\nc\rd\n");
    assert_eq!(
        events,
        vec![
            text(b"a\r\n", 0, 1),
            text(b"b\r\n", 3, 2),
            message(Message::new("m"), 6, 3, false),
            text(b"c\rd\n", 21, 4),
        ]
    );
}

#[test]
fn finish_reports_the_unterminated_line_once_and_positions_continue() {
    let mut parser = Parser::default();
    let mut events = Vec::new();
    parser.feed(b"one\ntw", |e| events.push(e));
    assert_eq!(events, vec![text(b"one\n", 0, 1)]);
    parser.finish(|e| events.push(e));
    parser.finish(|e| events.push(e));
    assert_eq!(events[1..], [text(b"tw", 4, 2)]);
    parser.feed(b"o\n", |e| events.push(e));
    assert_eq!(events[2..], [text(b"o\n", 6, 2)]);
}

#[test]
fn empty_input_gives_nothing() {
    assert_eq!(parse(b""), vec![]);
    assert_eq!(
        parse_chunks([&b""[..], b"", b"x", b""]),
        vec![text(b"x", 0, 1)]
    );
}

/// Bytes that are likely to contain messages, fragments of them and garbage.
fn stream() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"##teamcity[".to_vec()),
        Just(b"##teamcity[testStarted name='a|'b' x=' ']\n".to_vec()),
        Just(b"'".to_vec()),
        Just(b"|".to_vec()),
        Just(b"]".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b" ".to_vec()),
        Just(b"=".to_vec()),
        Just(b"\0".to_vec()),
        Just(b"\xff".to_vec()),
        Just("é".as_bytes().to_vec()),
        prop::collection::vec(any::<u8>(), 0..8),
        "[a-z]{1,4}".prop_map(String::into_bytes),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn chunking_never_changes_events(bytes in stream(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
        let mut cuts: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
        cuts.sort_unstable();
        let mut chunks = Vec::new();
        let mut from = 0;
        for cut in cuts {
            chunks.push(&bytes[from..cut]);
            from = cut;
        }
        chunks.push(&bytes[from..]);
        prop_assert_eq!(parse_chunks(chunks), parse(&bytes));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_plain_text_is_kept_whole(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let events = parse(&bytes);
        if !bytes.windows(11).any(|w| w == b"##teamcity[") {
            let mut rebuilt = Vec::new();
            let mut next_offset = 0;
            for event in events {
                let ParseEvent::Text { bytes, position } = event else {
                    return Err(TestCaseError::fail("only text expected"));
                };
                prop_assert_eq!(position.offset, next_offset);
                next_offset += bytes.len() as u64;
                rebuilt.extend_from_slice(&bytes);
            }
            prop_assert_eq!(rebuilt, bytes);
        }
    }
}
