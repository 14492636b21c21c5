//! A JSON report read one top-level member at a time, and the entries of
//! its list of results one at a time, each decoded from its own text.
//!
//! serde_json decodes from a reader a byte at a time, several times slower
//! than from a slice, and a whole report decoded at once holds it all in
//! memory. Here the text of one value is found by its brackets and quotes
//! alone (cheap: strings are skipped with `memchr`) and handed to serde_json
//! as a slice, which checks it; only the value being decoded is held.
use std::io::{BufRead, Read};

use serde::de::{DeserializeOwned, IgnoredAny};
use serde_json::error::Category;
use serde_json::value::RawValue;

use super::common::ReadError;
use super::json_scan::{self, Scanned};
use super::lenient;

/// [`read_entries_measured`] with every entry found by a scan of its
/// brackets.
#[cfg(test)]
pub(crate) fn read_entries<R: BufRead>(
    input: R,
    key: &str,
    each: impl FnMut(Entry<'_, R>) -> Result<(), ReadError>,
    other: impl FnMut(&str, &[u8]) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    read_entries_measured(input, key, |_| None, each, other)
}

/// Reads the top-level object of `input`. Each entry of the list under
/// `key` goes to `each` as soon as it is read; every other member goes to
/// `other` with its key and text, after its text was checked to be JSON.
/// `measure` may give the length of the entry at the start of the text it
/// is given (what was read from there on: at least a quarter of [`CHUNK`],
/// unless the file ends first) when it can tell more cheaply than a scan of
/// its brackets, because it decodes or walks the entry there anyway. `None`
/// leaves it to the scan, and so to what the scan makes of it.
pub(crate) fn read_entries_measured<R: BufRead>(
    input: R,
    key: &str,
    mut measure: impl FnMut(&[u8]) -> Option<usize>,
    mut each: impl FnMut(Entry<'_, R>) -> Result<(), ReadError>,
    mut other: impl FnMut(&str, &[u8]) -> Result<(), ReadError>,
) -> Result<(), ReadError> {
    let mut text = Text::new(input);
    text.expect(b'{', "expected a JSON object")?;
    if text.next_is(b'}')? {
        return text.end();
    }
    loop {
        let name = text.value()?;
        let name: String = text.decode(name)?;
        text.expect(b':', "expected `:`")?;
        if name == key && text.peek()? == Some(b'[') {
            text.skip(1);
            if !text.next_is(b']')? {
                loop {
                    let range = text.value_measured(&mut measure)?;
                    each(Entry { text: &text, range })?;
                    if !text.list_goes_on(b']')? {
                        break;
                    }
                }
            }
        } else {
            let value = text.value()?;
            text.decode::<IgnoredAny>(value.clone())?;
            other(&name, &text.buf[value])?;
        }
        if !text.list_goes_on(b'}')? {
            return text.end();
        }
    }
}

/// One entry of the list [`read_entries_measured`] reads, whole in memory.
pub(crate) struct Entry<'t, R> {
    text: &'t Text<R>,
    range: std::ops::Range<usize>,
}

impl<R: BufRead> Entry<'_, R> {
    /// The entry decoded as [`lenient::list`] decodes its items: text that
    /// is not JSON is an error, JSON of another shape is no entry.
    pub(crate) fn decode<T: DeserializeOwned>(&self) -> Result<Option<T>, ReadError> {
        let text = &self.text.buf[self.range.clone()];
        let start = self.range.start;
        match serde_json::from_slice(text) {
            Ok(item) => Ok(Some(item)),
            // Maybe JSON of another shape, or with a key written twice.
            Err(err) if err.classify() == Category::Data => {
                let raw: &RawValue =
                    serde_json::from_slice(text).map_err(|err| self.text.json_error(start, err))?;
                Ok(lenient::item(raw))
            }
            Err(err) => Err(self.text.json_error(start, err)),
        }
    }

    /// The entry's JSON text.
    pub(crate) fn text(&self) -> &[u8] {
        &self.text.buf[self.range.clone()]
    }

    pub(crate) fn is_object(&self) -> bool {
        self.text.buf[self.range.start] == b'{'
    }

    /// The text of the entry's member `key` (the last, if written twice),
    /// found without decoding the rest; `None` if the entry is not an
    /// object or has no such member. The text is not checked.
    pub(crate) fn member(&self, key: &str) -> Option<&[u8]> {
        members(&self.text.buf[self.range.clone()], key)?.0
    }
}

/// The text of member `key` of the object at the start of `text`, as
/// [`Entry::member`] finds it, and the object's length, when the walk of
/// its members found its end where a scan of its brackets would: `None`
/// for anything else (the length to a scan, the member to
/// [`Entry::member`]).
pub(crate) fn object_member<'t>(text: &'t [u8], key: &str) -> Option<(Option<&'t [u8]>, usize)> {
    let (found, len) = members(text, key)?;
    Some((found, len?))
}

/// Walks the members of the object at the start of `text`: the text of
/// member `key`, and the object's length if the walk ended at its closing
/// brace having met only what a scan of brackets and quotes reads alike
/// (strings, lists and objects, and scalars with none of `"{[\`).
fn members<'t>(text: &'t [u8], key: &str) -> Option<(Option<&'t [u8]>, Option<usize>)> {
    // Where what follows `byte` begins, if `byte` comes next.
    let past = |at: usize, byte: u8| {
        let at = at + skip_space(&text[at..]);
        (text.get(at) == Some(&byte)).then(|| at + 1 + skip_space(&text[at + 1..]))
    };
    let mut at = past(0, b'{')?;
    let mut found = None;
    let mut plain = true;
    while text.get(at) == Some(&b'"') {
        let name_len = string_len(&text[at..])?;
        let name = &text[at + 1..at + name_len - 1];
        let value = past(at + name_len, b':')?;
        let len = value_len(&text[value..])?;
        if name == key.as_bytes() {
            found = Some(&text[value..value + len]);
        }
        plain &= matches!(text[value], b'"' | b'{' | b'[')
            || !text[value..value + len]
                .iter()
                .any(|b| matches!(b, b'"' | b'{' | b'[' | b'\\'));
        at = value + len;
        match past(at, b',') {
            Some(next) => at = next,
            None => break,
        }
    }
    let close = at + skip_space(&text[at..]);
    let len = (plain && text.get(close) == Some(&b'}')).then_some(close + 1);
    Some((found, len))
}

/// The number of whitespace bytes at the start of `text`.
fn skip_space(text: &[u8]) -> usize {
    text.iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(text.len())
}

/// The text read so far and the position of its first byte in the file.
struct Text<R> {
    input: R,
    buf: Vec<u8>,
    /// The next byte to look at, in `buf`.
    at: usize,
    /// Lines before `buf` (1-based line of its first byte, minus one).
    lines: u64,
    /// Bytes of `buf`'s first line that were dropped before it.
    column: u64,
    eof: bool,
}

/// Bytes read at a time; a value longer than that is read in longer reads.
/// A value cut by the end of what was read is scanned again from its start
/// once more is read: at 64 KiB, most of jest's 39 KB entries were, and
/// scanned twice (61 M of the report's 2.69 G instructions).
const CHUNK: usize = 256 * 1024;

impl<R: BufRead> Text<R> {
    fn new(input: R) -> Self {
        Text {
            input,
            buf: Vec::with_capacity(CHUNK),
            at: 0,
            lines: 0,
            column: 0,
            eof: false,
        }
    }

    /// Reads `want` more bytes, or to the end; false at the end.
    /// What was looked at before `at` is dropped first.
    fn fill(&mut self, want: usize) -> Result<bool, ReadError> {
        if self.eof {
            return Ok(false);
        }
        let dropped = &self.buf[..self.at];
        match memchr::memrchr(b'\n', dropped) {
            Some(last) => {
                self.lines += memchr::memchr_iter(b'\n', dropped).count() as u64;
                self.column = (dropped.len() - last - 1) as u64;
            }
            None => self.column += dropped.len() as u64,
        }
        self.buf.drain(..self.at);
        self.at = 0;
        // Read straight into `buf`: a read at least as long as the
        // reader's buffer passes it by, where taking the reader's chunks
        // copied the whole report once more (jest's report 1.73 → 1.67 G
        // instructions).
        let before = self.buf.len();
        self.buf.reserve(want);
        let read = (&mut self.input)
            .take(want as u64)
            .read_to_end(&mut self.buf)
            .map_err(ReadError::Io)?;
        self.eof = read < want;
        Ok(self.buf.len() > before)
    }

    /// The next byte that is not whitespace, not consumed; `None` at the end.
    fn peek(&mut self) -> Result<Option<u8>, ReadError> {
        loop {
            let rest = &self.buf[self.at..];
            match rest.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(n) => {
                    self.at += n;
                    return Ok(Some(self.buf[self.at]));
                }
                None => {
                    self.at = self.buf.len();
                    if !self.fill(CHUNK)? {
                        return Ok(None);
                    }
                }
            }
        }
    }

    fn skip(&mut self, n: usize) {
        self.at += n;
    }

    /// Whether the next byte is `byte`, consuming it if so.
    fn next_is(&mut self, byte: u8) -> Result<bool, ReadError> {
        let found = self.peek()? == Some(byte);
        if found {
            self.skip(1);
        }
        Ok(found)
    }

    fn expect(&mut self, byte: u8, problem: &str) -> Result<(), ReadError> {
        match self.peek()? {
            Some(b) if b == byte => {
                self.skip(1);
                Ok(())
            }
            Some(_) => Err(self.malformed(self.at, problem)),
            None => Err(self.malformed(self.at, "EOF while parsing an object")),
        }
    }

    /// After an item of a list or object: true on `,`, false on `close`.
    fn list_goes_on(&mut self, close: u8) -> Result<bool, ReadError> {
        match self.peek()? {
            Some(b',') => {
                self.skip(1);
                Ok(true)
            }
            Some(b) if b == close => {
                self.skip(1);
                Ok(false)
            }
            Some(_) if close == b']' => Err(self.malformed(self.at, "expected `,` or `]`")),
            Some(_) => Err(self.malformed(self.at, "expected `,` or `}`")),
            None => Err(self.malformed(self.at, "EOF while parsing a list")),
        }
    }

    /// Nothing but whitespace is left.
    fn end(&mut self) -> Result<(), ReadError> {
        match self.peek()? {
            None => Ok(()),
            Some(_) => Err(self.malformed(self.at, "trailing characters")),
        }
    }

    /// The next value's text, whole in `buf`, consumed.
    fn value(&mut self) -> Result<std::ops::Range<usize>, ReadError> {
        if self.peek()?.is_none() {
            return Err(self.malformed(self.at, "EOF while parsing a value"));
        }
        loop {
            if let Some(len) = value_len(&self.buf[self.at..]) {
                let start = self.at;
                self.at += len;
                return Ok(start..self.at);
            }
            // Longer reads as the value grows: each rescan is of twice the text.
            let want = (self.buf.len() - self.at).max(CHUNK);
            if !self.fill(want)? {
                return Err(self.malformed(self.buf.len(), "EOF while parsing a value"));
            }
        }
    }

    /// The next value's text as `measure` finds it in what was read ahead
    /// ([`read_entries_measured`]), or else as [`Text::value`] does.
    fn value_measured(
        &mut self,
        measure: &mut impl FnMut(&[u8]) -> Option<usize>,
    ) -> Result<std::ops::Range<usize>, ReadError> {
        if self.peek()?.is_some() {
            // Enough read ahead that the usual value is whole in it (a
            // quarter read, so that a read's text is not moved for every
            // value: that cost 66 M of jest's report's instructions).
            if self.buf.len() - self.at < CHUNK / 4 {
                self.fill(CHUNK)?;
            }
            if let Some(len) = measure(&self.buf[self.at..]) {
                debug_assert!(self.at + len <= self.buf.len());
                let start = self.at;
                self.at += len;
                return Ok(start..self.at);
            }
        }
        self.value()
    }

    /// `range` of `buf` decoded; a problem is placed in the file.
    fn decode<T: DeserializeOwned>(&self, range: std::ops::Range<usize>) -> Result<T, ReadError> {
        let start = range.start;
        serde_json::from_slice(&self.buf[range]).map_err(|err| self.json_error(start, err))
    }

    /// A serde_json error in the text that starts at `start` in `buf`.
    fn json_error(&self, start: usize, err: serde_json::Error) -> ReadError {
        // The text is a whole value by its brackets and quotes, so an end
        // inside it is a scalar cut short by what follows (`tru}`).
        let cut = err.classify() == Category::Eof;
        let ReadError::Malformed {
            line,
            column,
            mut problem,
        } = ReadError::from_json(err)
        else {
            unreachable!("a slice is not read, so no error is of reading");
        };
        if cut {
            problem = "invalid value".to_string();
        }
        let (base_line, base_column) = self.position(start);
        ReadError::Malformed {
            line: base_line + line - 1,
            column: if line == 1 {
                base_column + column - 1
            } else {
                column
            },
            problem,
        }
    }

    fn malformed(&self, at: usize, problem: &str) -> ReadError {
        let (line, column) = self.position(at);
        ReadError::Malformed {
            line,
            column,
            problem: problem.to_string(),
        }
    }

    /// The 1-based line and column in the file of `buf[at]`.
    fn position(&self, at: usize) -> (u64, u64) {
        let before = &self.buf[..at.min(self.buf.len())];
        let newlines = memchr::memchr_iter(b'\n', before).count() as u64;
        match memchr::memrchr(b'\n', before) {
            Some(last) => (self.lines + newlines + 1, (before.len() - last) as u64),
            None => (self.lines + 1, self.column + before.len() as u64 + 1),
        }
    }
}

/// What [`value_len`] looks for: nothing, a quote, an opening and a
/// closing bracket; and in a string, its end or an escape.
const PLAIN: u8 = 0;
const QUOTE: u8 = 1;
const OPEN: u8 = 2;
const CLOSE: u8 = 3;
const CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    class[b'"' as usize] = QUOTE;
    class[b'{' as usize] = OPEN;
    class[b'[' as usize] = OPEN;
    class[b'}' as usize] = CLOSE;
    class[b']' as usize] = CLOSE;
    class
};

/// The length of the JSON value at the start of `text`, found by its
/// quotes and brackets only; `None` if it does not end within `text`.
fn value_len(text: &[u8]) -> Option<usize> {
    match text.first()? {
        b'"' => string_len(text),
        // Found 64 bytes at a time: the scans of jest's 39 MB report (three
        // over each entry) took 1.28 G of its 3.91 G instructions, now 0.36 G.
        b'{' | b'[' => match json_scan::container_len(text) {
            Scanned::Len(len) => Some(len),
            Scanned::Open => None,
            Scanned::Unsure => container_len_by_bytes(text),
        },
        // A number, `true`, `false` or `null`: up to what may follow it.
        _ => text
            .iter()
            .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace()),
    }
}

/// [`json_scan::container_len`] a byte at a time, for text that is not JSON.
fn container_len_by_bytes(text: &[u8]) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        match CLASS[usize::from(b)] {
            PLAIN => {}
            QUOTE => {
                i += string_len(&text[i..])?;
                continue;
            }
            OPEN => depth += 1,
            _ => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
        }
        i += 1;
    }
    None
}

/// The length of the string at the start of `text`, quotes included.
fn string_len(text: &[u8]) -> Option<usize> {
    let mut i = 1;
    loop {
        let at = i + json_scan::string_end(text.get(i..)?)?.0;
        if text[at] == b'"' {
            return Some(at + 1);
        }
        // A backslash: the byte after it is escaped.
        i = at + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    #[serde(default)]
    struct Number {
        n: u64,
    }

    /// The entries under `list` and the other members, or the error text.
    fn read(text: &str) -> Result<(Vec<u64>, Vec<String>), String> {
        let (mut entries, mut others) = (Vec::new(), Vec::new());
        read_entries(
            text.as_bytes(),
            "list",
            |entry| {
                entries.extend(entry.decode::<Number>()?.map(|e| e.n));
                Ok(())
            },
            |key, text| {
                others.push(format!("{key}={}", String::from_utf8_lossy(text)));
                Ok(())
            },
        )
        .map_err(|e| e.to_string())?;
        Ok((entries, others))
    }

    #[test]
    fn entries_come_one_by_one_and_members_whole() {
        let text =
            r#" {"a": {"x": [1, "]}\"["]}, "list": [{"n": 1}, "skip", {"n": 2}] ,"b":true} "#;
        let (entries, others) = read(text).unwrap();
        assert_eq!(entries, [1, 2]);
        assert_eq!(others, [r#"a={"x": [1, "]}\"["]}"#, "b=true"]);
        assert_eq!(read("{}").unwrap(), (vec![], vec![]));
        assert_eq!(read(r#"{"list":[]}"#).unwrap(), (vec![], vec![]));
        // A list of another shape is a member like the others.
        let (entries, others) = read(r#"{"list": {"n": 1}}"#).unwrap();
        assert_eq!((entries, others), (vec![], vec![r#"list={"n": 1}"#.into()]));
    }

    #[test]
    fn a_member_is_found_at_its_entrys_top_level_only() {
        let text = r#"{"list": [
            {"a": {"name": "inner"}, "name" : "x", "b": [1]},
            {"name": "first", "name": "last"},
            {"other": 1}, {}, 5, "name"
        ]}"#;
        let mut names = Vec::new();
        read_entries(
            text.as_bytes(),
            "list",
            |entry| {
                let name = entry
                    .member("name")
                    .map(|t| String::from_utf8_lossy(t).into_owned());
                names.push(name);
                Ok(())
            },
            |_, _| Ok(()),
        )
        .unwrap();
        let want = [Some(r#""x""#), Some(r#""last""#), None, None, None, None];
        assert_eq!(names, want.map(|n| n.map(str::to_owned)));
    }

    #[test]
    fn a_walk_of_members_ends_where_the_scan_does_or_says_nothing() {
        let walked = |text: &'static str| object_member(text.as_bytes(), "name");
        // Objects a scan and a walk read alike: the same length.
        for text in [
            r#"{}"#,
            r#"{"name": "a", "b": [1, {"c": "]}"}], "n": -1.5e3, "t": true} ,"#,
            "{ \"x\" : null ,\n \"name\" : \"\\\"q\" }]",
            r#"{"name": 1, "name": 2}"#,
        ] {
            let (_, len) = walked(text).expect(text);
            assert_eq!(Some(len), value_len(text.as_bytes()), "{text}");
        }
        assert_eq!(
            walked(r#"{"a": 1, "name": "x"}"#).unwrap().0,
            Some(&br#""x""#[..])
        );
        assert_eq!(walked(r#"{"a": 1}"#).unwrap().0, None);
        // Scalars that hold what a scan reads otherwise, and what is no
        // object or not whole: left to the scan.
        for text in [
            r#"{"a": x"}", "b": 1}"#,
            r#"{"a": x{, "b": 1}}"#,
            r#"{"a": x\"}"#,
            r#"{"a": 1 "b": 2}"#,
            r#"{"a": [1, 2}"#,
            r#"{"a": 1"#,
            r#"[1]"#,
        ] {
            assert_eq!(walked(text), None, "{text}");
        }
    }

    #[test]
    fn problems_are_placed_in_the_file() {
        let err = |text: &str| read(text).unwrap_err();
        assert_eq!(err("[1]"), "line 1, column 1: expected a JSON object");
        assert_eq!(
            err("{\"a\": 1} x"),
            "line 1, column 10: trailing characters"
        );
        assert_eq!(
            err("{\"list\": [\n  {\"n\": 1},\n  {\"n\" 2}]}"),
            "line 3, column 8: expected `:`"
        );
        assert_eq!(
            err("{\"a\": 1,\n \"b\": tru}"),
            "line 2, column 9: invalid value"
        );
        assert!(err("{\"list\": [{\"n\": 1}").contains("EOF while parsing"));
        assert!(err("{\"list\": [{\"n\": 1}, {\"n\": 2").contains("EOF while parsing"));
    }

    #[test]
    fn entries_measured_where_they_were_read_come_out_as_scanned_ones() {
        // Each entry's `n`, or the error, with `measure` finding entries
        // by decoding them as serde_json would, or never.
        let read = |text: &str, measured: bool| {
            let mut found = Vec::new();
            let result = read_entries_measured(
                text.as_bytes(),
                "list",
                |rest| {
                    let mut values =
                        serde_json::Deserializer::from_slice(rest).into_iter::<Number>();
                    values.next()?.ok()?;
                    measured.then(|| values.byte_offset())
                },
                |entry| {
                    found.extend(entry.decode::<Number>()?.map(|e| e.n));
                    Ok(())
                },
                |_, _| Ok(()),
            );
            (found, result.map_err(|e| e.to_string()))
        };
        let long = "y".repeat(2 * CHUNK);
        let texts = [
            r#"{"list": [{"n": 1}, {"n": 2, "s": "]}"}, 5, {"n": 3}]}"#.to_string(),
            format!(r#"{{"list": [{{"n": 1}}, {{"n": 2, "pad": "{long}"}}, {{"n": 3}}]}}"#),
            r#"{"list": [{"n": 1}, {"n": 2 "m": 3}, {"n": 3}]}"#.to_string(),
            r#"{"list": [{"n": 1}, {"n": tru}]}"#.to_string(),
            r#"{"list": [{"n": 1}, {"n": 2}"#.to_string(),
            r#"{"list": [{"n": 1}, {"n": 2, "n": 4}]}"#.to_string(),
        ];
        for text in &texts {
            assert_eq!(read(text, true), read(text, false), "{text}");
        }
        assert_eq!(read(&texts[1], true).0, [1, 2, 3]);
    }

    #[test]
    fn a_value_longer_than_a_read_is_read_whole() {
        let long = "y".repeat(3 * CHUNK);
        let text = format!(r#"{{"a": "{long}", "list": [{{"n": 7, "pad": "{long}"}}]}}"#);
        let (entries, others) = read(&text).unwrap();
        assert_eq!(entries, [7]);
        assert_eq!(others[0].len(), long.len() + 4);
    }
}
