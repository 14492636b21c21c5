//! One `testResults` entry of a jest or vitest report: the shape read
//! ([`FileResult`], [`Assertion`]), and its decoding in one pass when it has
//! the shape both tools write, which gives what the derived decoding gives
//! without its detours.
//!
//! The derived decoding keeps each test as raw text and decodes it again
//! (so that a key written twice cannot drop it), builds a `Value` for each
//! string, and keeps `location` and `meta` as raw text too: a copy, an
//! allocation and a second parse for each. [`file_result`] decodes every
//! test where it stands, reading what both tools write itself
//! ([`Cursor`]) and handing serde_json the rarer parts. Anything it does
//! not expect (a key written twice, a test that is not an object, a field
//! of another type) gives `None`, and the caller decodes the entry the
//! derived way, which knows what to make of it; so the result is the same
//! whenever there is one.
use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::json_scan::string_end;
use super::lenient;

/// A test file's entry; its tests' strings may borrow its text
/// ([`Assertion`]).
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct FileEntry<'a> {
    #[serde(deserialize_with = "lenient::string")]
    pub name: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    pub status: Option<String>,
    #[serde(deserialize_with = "lenient::string")]
    pub message: Option<String>,
    #[serde(deserialize_with = "lenient::list")]
    pub assertion_results: Vec<Assertion<'a>>,
}

/// A test. Its short strings are borrowed from the entry's text when they
/// hold no escape (the one-pass decoding; the derived one owns them): four
/// allocations a test fewer (and a list's growth), jest's report 2.04 →
/// 1.87 G instructions.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(crate) struct Assertion<'a> {
    #[serde(deserialize_with = "owned_texts")]
    pub ancestor_titles: Vec<Cow<'a, str>>,
    #[serde(deserialize_with = "owned_text")]
    pub title: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "owned_text")]
    pub full_name: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "owned_text")]
    pub status: Option<Cow<'a, str>>,
    #[serde(deserialize_with = "lenient::f64")]
    pub duration: Option<f64>,
    #[serde(deserialize_with = "lenient::strings")]
    pub failure_messages: Vec<String>,
    #[serde(deserialize_with = "lenient::values")]
    pub failure_details: Vec<Value>,
    #[serde(deserialize_with = "lenient::or_default")]
    pub location: Option<Location>,
    /// vitest 4+.
    #[serde(deserialize_with = "lenient::strings")]
    pub tags: Vec<String>,
    /// vitest's task meta.
    #[serde(deserialize_with = "lenient::or_default")]
    pub meta: Meta,
}

/// A test file's entry that owns all its text.
pub(crate) type FileResult = FileEntry<'static>;

impl FileEntry<'_> {
    /// The entry owning all its text, to be kept after its text is gone.
    pub(crate) fn into_owned(self) -> FileResult {
        FileEntry {
            name: self.name,
            status: self.status,
            message: self.message,
            assertion_results: (self.assertion_results.into_iter())
                .map(Assertion::into_owned)
                .collect(),
        }
    }
}

impl Assertion<'_> {
    fn into_owned(self) -> Assertion<'static> {
        let owned = |text: Cow<'_, str>| Cow::Owned(text.into_owned());
        Assertion {
            ancestor_titles: self.ancestor_titles.into_iter().map(owned).collect(),
            title: self.title.map(owned),
            full_name: self.full_name.map(owned),
            status: self.status.map(owned),
            duration: self.duration,
            failure_messages: self.failure_messages,
            failure_details: self.failure_details,
            location: self.location,
            tags: self.tags,
            meta: self.meta,
        }
    }
}

/// [`lenient::string`] for a field that may borrow.
fn owned_text<'de, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'a, str>>, D::Error> {
    Ok(lenient::string(d)?.map(Cow::Owned))
}

/// [`lenient::strings`] for a field that may borrow.
fn owned_texts<'de, 'a, D: Deserializer<'de>>(d: D) -> Result<Vec<Cow<'a, str>>, D::Error> {
    Ok(lenient::strings(d)?.into_iter().map(Cow::Owned).collect())
}

/// The part of vitest's task `meta` read here.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Meta {
    /// The test was type-checked (`--typecheck`), not run.
    #[serde(deserialize_with = "lenient::or_default")]
    pub typecheck: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Location {
    #[serde(deserialize_with = "lenient::f64")]
    pub line: Option<f64>,
}

/// The entry whose JSON text is `text`, or `None` for the caller to
/// decode it the derived way.
pub(crate) fn file_result(text: &[u8]) -> Option<FileEntry<'_>> {
    let (file, len) = file_result_at(text)?;
    text[len..].iter().all(|&b| is_space(b)).then_some(file)
}

/// The entry at the start of `text` and its length, as [`file_result`]
/// decodes it; `None` also when it does not end within `text`.
pub(crate) fn file_result_at(text: &[u8]) -> Option<(FileEntry<'_>, usize)> {
    let mut at = Cursor { text, at: 0 };
    let file = at.file()?;
    Some((file, at.at))
}

/// JSON's whitespace.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// Whether `text` holds a raw control character, which a JSON string must not.
fn has_control(text: &[u8]) -> bool {
    text.iter().any(|&b| b < 0x20)
}

/// What [`Cursor::plain_string`] found.
enum Plain<'a> {
    /// The string's text, which holds no escape, and whether it is
    /// ASCII without a control character ([`string_end`]).
    Text(&'a [u8], bool),
    /// A backslash before the closing quote; the cursor is still at the
    /// opening one.
    Escaped,
}

/// A place in an entry's text, read forward.
///
/// What both tools write for every test (keys and strings without escapes,
/// short lists, numbers and empty objects) is read here byte by byte, and
/// the rest (an escaped string, `failureDetails`, an unknown member's
/// object) is handed to serde_json where it starts, so that each reads as
/// the derived decoding reads it. Through serde_json's visitors, jest's
/// 100,000-test report took 1.43 G instructions, vitest's 1.15 G.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
}

/// The number of fields an object's members are decoded into at most (a
/// bit each, to refuse one written twice).
type Seen = u32;

impl<'a> Cursor<'a> {
    /// The next byte that is not whitespace, which is not passed.
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.at) {
            if !is_space(b) {
                return Some(b);
            }
            self.at += 1;
        }
        None
    }

    /// Passes `byte`, if it comes next.
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    /// Passes `word` (`true`, `false`, `null`), if it comes next.
    fn word(&mut self, word: &[u8]) -> bool {
        let found = self.peek().is_some() && self.text[self.at..].starts_with(word);
        if found {
            self.at += word.len();
        }
        found
    }

    /// Passes an empty list or object (`open`, then `close`), if one comes
    /// next; stays where it is otherwise.
    fn empty(&mut self, open: u8, close: u8) -> bool {
        let start = self.at;
        let found = self.eat(open).and_then(|()| self.eat(close)).is_some();
        if !found {
            self.at = start;
        }
        found
    }

    /// The value that starts here, as serde_json decodes it into `T`.
    fn by_serde<T: Deserialize<'a>>(&mut self) -> Option<T> {
        let mut values = serde_json::Deserializer::from_slice(&self.text[self.at..]).into_iter();
        let value = values.next()?.ok()?;
        self.at += values.byte_offset();
        Some(value)
    }

    /// An object: each member whose key `index` numbers goes to `field`
    /// (once at most: the derived decoding refuses a key written twice),
    /// any other member is passed.
    fn object(
        &mut self,
        index: fn(&[u8]) -> Option<usize>,
        mut field: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        if self.eat(b'}').is_some() {
            return Some(());
        }
        let mut seen: Seen = 0;
        loop {
            let key = self.key()?;
            self.eat(b':')?;
            match index(&key) {
                Some(number) => {
                    if seen & (1 << number) != 0 {
                        return None;
                    }
                    seen |= 1 << number;
                    field(self, number)?;
                }
                // Printable ASCII is UTF-8 and has no raw control character,
                // which a string must not hold; any other key is left to a
                // decoding that checks it.
                None if key.iter().all(|b| (0x20..0x7f).contains(b)) => self.skip()?,
                None => return None,
            }
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A list of what `item` decodes.
    fn list<T>(&mut self, mut item: impl FnMut(&mut Self) -> Option<T>) -> Option<Vec<T>> {
        self.eat(b'[')?;
        let mut items = Vec::new();
        if self.eat(b']').is_some() {
            return Some(items);
        }
        loop {
            items.push(item(self)?);
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(items);
                }
                _ => return None,
            }
        }
    }

    /// The string that starts here, unless it holds an escape: its text
    /// between the quotes, and the cursor past it; `None` also when it does
    /// not end within the text.
    fn plain_string(&mut self) -> Option<Plain<'a>> {
        if self.peek()? != b'"' {
            return None;
        }
        let start = self.at + 1;
        let (len, ascii) = string_end(&self.text[start..])?;
        let end = start + len;
        if self.text[end] == b'\\' {
            return Some(Plain::Escaped);
        }
        self.at = end + 1;
        Some(Plain::Text(&self.text[start..end], ascii))
    }

    /// A key, unescaped; not checked as UTF-8 (see [`Cursor::object`]).
    fn key(&mut self) -> Option<Cow<'a, [u8]>> {
        match self.plain_string()? {
            Plain::Text(key, _) => Some(Cow::Borrowed(key)),
            Plain::Escaped => self
                .by_serde::<String>()
                .map(|key| Cow::Owned(key.into_bytes())),
        }
    }

    /// A string, borrowed unless it holds an escape.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        match self.plain_string()? {
            // SAFETY: ASCII is UTF-8. `from_utf8` on each title and status
            // took 59 M of vitest's report's 1.07 G instructions.
            Plain::Text(text, true) => Some(Cow::Borrowed(unsafe {
                std::str::from_utf8_unchecked(text)
            })),
            // serde_json refuses a raw control character in a string.
            Plain::Text(text, false) if has_control(text) => None,
            Plain::Text(text, false) => std::str::from_utf8(text).ok().map(Cow::Borrowed),
            Plain::Escaped => self.by_serde::<String>().map(Cow::Owned),
        }
    }

    /// A string or `null`.
    fn text(&mut self) -> Option<Option<Cow<'a, str>>> {
        if self.word(b"null") {
            return Some(None);
        }
        self.string().map(Some)
    }

    /// A number or `null`, as [`Number`] reads them.
    fn number(&mut self) -> Option<Option<f64>> {
        self.peek()?;
        if let Some(n) = self.short_number() {
            return Some(Some(n));
        }
        struct Decoded(Option<f64>);
        impl<'de> Deserialize<'de> for Decoded {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                d.deserialize_any(Number).map(Decoded)
            }
        }
        self.by_serde::<Decoded>().map(|Decoded(n)| n)
    }

    /// A number of 15 digits at most, with a fraction or without, and
    /// no sign or exponent (durations, lines), as serde_json computes it
    /// (without its `float_roundtrip`): the digits as an integer, divided
    /// by the power of ten of the fraction's digits, both exact in an
    /// `f64`. 46 M of vitest's report's instructions through serde_json.
    fn short_number(&mut self) -> Option<f64> {
        const POW10: [f64; 16] = [
            1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
        ];
        let text = &self.text[self.at..];
        let mut significand = 0u64;
        let mut digits = 0;
        let mut fraction = None;
        for &b in text {
            match b {
                b'0'..=b'9' => {
                    significand = significand * 10 + u64::from(b - b'0');
                    digits += 1;
                    if digits > 15 {
                        return None;
                    }
                }
                b'.' if fraction.is_none() && digits > 0 => fraction = Some(digits),
                b'e' | b'E' | b'+' | b'-' | b'.' => return None,
                _ => break,
            }
        }
        let whole = fraction.unwrap_or(digits);
        // A leading zero (a digit after it is not JSON), no digit, or none
        // after the point: left to serde_json, which refuses them.
        if digits == 0
            || whole == 0
            || digits == whole && fraction.is_some()
            || whole > 1 && text[0] == b'0'
        {
            return None;
        }
        self.at += digits + usize::from(fraction.is_some());
        Some(significand as f64 / POW10[digits - whole])
    }

    /// Passes a value of any shape, checked as serde_json checks what it
    /// ignores.
    fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => match self.plain_string()? {
                Plain::Text(text, false) if has_control(text) => return None,
                Plain::Text(..) => {}
                Plain::Escaped => {
                    self.by_serde::<IgnoredAny>()?;
                }
            },
            b'-' | b'0'..=b'9' => self.number_text()?,
            open @ (b'[' | b'{') => {
                let close = if open == b'[' { b']' } else { b'}' };
                if !self.empty(open, close) {
                    self.by_serde::<IgnoredAny>()?;
                }
            }
            _ if self.word(b"true") || self.word(b"false") || self.word(b"null") => {}
            _ => return None,
        }
        Some(())
    }

    /// Passes a number, checked as JSON writes them:
    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    fn number_text(&mut self) -> Option<()> {
        let digits = |at: &mut usize| {
            let start = *at;
            while self.text.get(*at).is_some_and(u8::is_ascii_digit) {
                *at += 1;
            }
            (*at > start).then_some(())
        };
        let mut at = self.at;
        if self.text.get(at) == Some(&b'-') {
            at += 1;
        }
        if self.text.get(at) == Some(&b'0') {
            at += 1;
        } else {
            digits(&mut at)?;
        }
        if self.text.get(at) == Some(&b'.') {
            at += 1;
            digits(&mut at)?;
        }
        if matches!(self.text.get(at), Some(b'e' | b'E')) {
            at += 1;
            if matches!(self.text.get(at), Some(b'+' | b'-')) {
                at += 1;
            }
            digits(&mut at)?;
        }
        self.at = at;
        Some(())
    }

    /// A `testResults` entry.
    fn file(&mut self) -> Option<FileEntry<'a>> {
        let mut file = FileEntry::default();
        let index = |key: &[u8]| match key {
            b"name" => Some(0),
            b"status" => Some(1),
            b"message" => Some(2),
            b"assertionResults" => Some(3),
            _ => None,
        };
        self.object(index, |at, field| {
            let owned = |text: Option<Cow<'_, str>>| text.map(Cow::into_owned);
            match field {
                0 => file.name = owned(at.text()?),
                1 => file.status = owned(at.text()?),
                2 => file.message = owned(at.text()?),
                _ => file.assertion_results = at.list(Self::test)?,
            }
            Some(())
        })?;
        Some(file)
    }

    /// An `assertionResults` item.
    fn test(&mut self) -> Option<Assertion<'a>> {
        let mut test = Assertion::default();
        // Matched as words of known length: a search of a list of names
        // called `memcmp` for each of its length.
        let index = |key: &[u8]| match key {
            b"ancestorTitles" => Some(0),
            b"title" => Some(1),
            b"fullName" => Some(2),
            b"status" => Some(3),
            b"duration" => Some(4),
            b"failureMessages" => Some(5),
            b"failureDetails" => Some(6),
            b"location" => Some(7),
            b"tags" => Some(8),
            b"meta" => Some(9),
            _ => None,
        };
        self.object(index, |at, field| {
            let owned_strings = |at: &mut Self| at.list(|at| at.string().map(Cow::into_owned));
            match field {
                0 => test.ancestor_titles = at.list(Self::string)?,
                1 => test.title = at.text()?,
                2 => test.full_name = at.text()?,
                3 => test.status = at.text()?,
                4 => test.duration = at.number()?,
                5 => test.failure_messages = owned_strings(at)?,
                // jest writes `[]` for every test that passed.
                6 if at.empty(b'[', b']') => {}
                6 => test.failure_details = at.by_serde::<Details>()?.0,
                7 => {
                    let mut location = Location::default();
                    let index = |key: &[u8]| (key == b"line").then_some(0);
                    at.object(index, |at, _| {
                        location.line = at.number()?;
                        Some(())
                    })?;
                    test.location = Some(location);
                }
                8 => test.tags = owned_strings(at)?,
                _ => {
                    let index = |key: &[u8]| (key == b"typecheck").then_some(0);
                    at.object(index, |at, _| {
                        test.meta.typecheck = if at.word(b"true") {
                            true
                        } else if at.word(b"false") {
                            false
                        } else {
                            return None;
                        };
                        Some(())
                    })?;
                }
            }
            Some(())
        })?;
        Some(test)
    }
}

/// `failureDetails`: values of any shape, by [`lenient::values`] itself.
struct Details(Vec<Value>);

impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        lenient::values(d).map(Details)
    }
}

/// A number or `null`, as [`lenient::f64`] reads them.
struct Number;

impl<'de> Visitor<'de> for Number {
    type Value = Option<f64>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number or null")
    }
    // As `serde_json::Number::as_f64` converts them.
    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Option<f64>, E> {
        Ok(Some(n as f64))
    }
    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Option<f64>, E> {
        Ok(Some(n as f64))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Option<f64>, E> {
        // `Value` holds no infinity or NaN: it reads them as `null`.
        Ok(Some(n).filter(|n| n.is_finite()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<f64>, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::testing::sample;
    use serde_json::value::RawValue;

    /// The entry as the derived decoding reads it (as `Entry::decode` does).
    fn derived(text: &str) -> Option<FileResult> {
        serde_json::from_str(text).ok().or_else(|| {
            let raw: &RawValue = serde_json::from_str(text).ok()?;
            lenient::item(raw)
        })
    }

    fn same(text: &str) -> bool {
        let fast = file_result(text.as_bytes());
        if let Some(fast) = &fast {
            let derived = derived(text).expect("the derived decoding reads it too");
            assert_eq!(format!("{fast:?}"), format!("{derived:?}"), "{text}");
        }
        fast.is_some()
    }

    #[test]
    fn the_reports_entries_decode_as_the_derived_decoding_decodes_them() {
        for name in [
            "jest.json",
            "vitest.json",
            "vitest1.json",
            "vitest-typecheck.json",
        ] {
            let doc: serde_json::Value = serde_json::from_slice(&sample(name)).unwrap();
            for entry in doc["testResults"].as_array().unwrap() {
                // Written compact and spread out.
                for text in [
                    serde_json::to_string(entry).unwrap(),
                    serde_json::to_string_pretty(entry).unwrap(),
                ] {
                    assert!(same(&text), "{name}: {text}");
                }
            }
        }
    }

    #[test]
    fn strings_numbers_and_escapes_decode_alike() {
        let entries = [
            r#"{"name": "/p/\u00e9\"\\a.test.js", "status": null, "message": "  \u25cf t\n\n\ud83d\ude00",
               "assertion\u0052esults": [{"t\u0069tle": "escaped key"}]}"#,
            r#"{"assertionResults": [{"ancestorTitles": ["a]}[{", "\"q\""], "title": "t\tx",
               "duration": 1.5e3, "failureMessages": ["e\r\n    at f (\/x:1:2)"],
               "failureDetails": [{"matcherResult": {"expected": {"a": [1, {"b": null}]}, "actual": "s"}}],
               "location": {"line": 12, "column": 3}, "tags": ["a"], "meta": {"typecheck": true},
               "fullName": "f", "status": "failed", "extra": {"name": ["x"]}}], "name": "/p/a.test.js"}"#,
            r#"{"assertionResults": [{"duration": -3}, {"duration": 12345678901234567890},
               {"duration": -0.0}, {"duration": null}, {"location": {"line": 2.5}}, {}]}"#,
        ];
        for text in entries {
            assert!(same(text), "{text}");
        }
    }

    #[test]
    fn other_shapes_are_left_to_the_derived_decoding() {
        let entries = [
            // A key written twice, at each level.
            r#"{"name": "a", "name": "b"}"#,
            r#"{"name": "a", "n\u0061me": "b"}"#,
            // Keys that are not printable ASCII.
            "{\"name\": \"a\", \"x\u{1}\": 1}",
            r#"{"name": "a", "\u00e9": 1}"#,
            r#"{"name": "a", "é": 1}"#,
            r#"{"assertionResults": [{"title": "t", "title": "u"}]}"#,
            r#"{"assertionResults": [{"location": {"line": 1, "line": 2}}]}"#,
            // Not objects, or fields of other types.
            r#"[1, 2]"#,
            r#""name""#,
            r#"{"name": 12}"#,
            r#"{"assertionResults": {"title": "t"}}"#,
            r#"{"assertionResults": ["not a test", {"title": "t"}]}"#,
            r#"{"assertionResults": [["t", "u"]]}"#,
            r#"{"assertionResults": [{"ancestorTitles": "one"}]}"#,
            r#"{"assertionResults": [{"ancestorTitles": ["a", 1]}]}"#,
            r#"{"assertionResults": [{"duration": "12.5"}]}"#,
            r#"{"assertionResults": [{"location": null}]}"#,
            r#"{"assertionResults": [{"meta": {"typecheck": "yes"}}]}"#,
            r#"{"assertionResults": [{"status": 7}]}"#,
        ];
        for text in entries {
            assert!(!same(text), "{text}");
        }
    }

    #[test]
    fn numbers_read_as_serde_json_reads_them() {
        let mut texts: Vec<String> = [
            "0",
            "7",
            "0.5",
            "00",
            "01",
            "1.",
            ".5",
            "1.2.3",
            "-0",
            "-3",
            "1e3",
            "1.5E-2",
            "0.1",
            "0.2",
            "0.3",
            "123456789012345",
            "1234567890123456",
            "12345678901234567890",
            "0.000000000000001",
            "9007199254740993",
            "1.7976931348623157",
            "null",
            "true",
            "\"1\"",
        ]
        .map(String::from)
        .to_vec();
        // Digits of every length up to 17, the point at each place.
        let mut seed = 12345u64;
        for digits in 1..=17 {
            for point in 0..=digits {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let mut text = format!("{:017}", seed >> 7)[..digits].to_owned();
                if text.len() > 1 {
                    text.replace_range(..1, "7");
                }
                if point > 0 && point < digits {
                    text.insert(point, '.');
                }
                texts.push(text);
            }
        }
        for text in texts {
            // What may follow a number in an entry.
            for tail in ["", ",", "}", " "] {
                let json = format!("{text}{tail}");
                let ours = Cursor {
                    text: json.as_bytes(),
                    at: 0,
                }
                .number();
                let mut de = serde_json::Deserializer::from_slice(text.as_bytes());
                let theirs = de.deserialize_any(Number).ok().filter(|_| de.end().is_ok());
                let bits = |n: Option<Option<f64>>| n.map(|n| n.map(f64::to_bits));
                assert_eq!(bits(ours), bits(theirs), "{json}");
            }
        }
    }
}
