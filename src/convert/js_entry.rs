//! One `testResults` entry of a jest or vitest report: the shape read
//! ([`FileResult`], [`Assertion`]), and its decoding in one pass when it has
//! the shape both tools write, which gives what the derived decoding gives
//! without its detours.
//!
//! The derived decoding keeps each test as raw text and decodes it again
//! (so that a key written twice cannot drop it), builds a `Value` for each
//! string, and keeps `location` and `meta` as raw text too: a copy, an
//! allocation and a second parse for each. [`file_result`] decodes every
//! test where it stands. Anything it does not expect (a key written twice,
//! a test that is not an object, a field of another type) gives `None`, and
//! the caller decodes the entry the derived way, which knows what to make
//! of it; so the result is the same whenever there is one.
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

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
    let mut de = serde_json::Deserializer::from_slice(text);
    let file = de.deserialize_any(Object(FileFields)).ok()?;
    de.end().ok()?;
    Some(file)
}

/// The entry at the start of `text` and its length, as [`file_result`]
/// decodes it; `None` also when it does not end within `text`.
pub(crate) fn file_result_at(text: &[u8]) -> Option<(FileEntry<'_>, usize)> {
    /// Decoded as above, for serde_json's reader of values one by one,
    /// which alone tells where a value ended.
    struct Decoded<'a>(FileEntry<'a>);
    impl<'de> Deserialize<'de> for Decoded<'de> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Object(FileFields)).map(Decoded)
        }
    }
    let mut values = serde_json::Deserializer::from_slice(text).into_iter::<Decoded>();
    let Decoded(file) = values.next()?.ok()?;
    Some((file, values.byte_offset()))
}

/// What this decoding leaves to the derived one; never shown.
fn unexpected<E: de::Error>() -> E {
    E::custom("left to the derived decoding")
}

/// The fields of one kind of object, decoded by name.
trait Fields<'de> {
    type Value: Default;
    /// The field named `key`, numbered from 0 (fewer than 32), if it is
    /// one of them. A `match`, whose names are compared with the key as
    /// words of known length: a search of a list of names called `memcmp`
    /// for each of its length (jest's report 1.67 → 1.58 G instructions).
    fn index(key: &[u8]) -> Option<usize>;
    /// Decodes the value of field `field` into `into`.
    fn field<A: MapAccess<'de>>(
        field: usize,
        map: &mut A,
        into: &mut Self::Value,
    ) -> Result<(), A::Error>;
}

/// An object whose fields `F` names: each at most once, others ignored.
struct Object<F>(F);

impl<'de, F: Fields<'de>> DeserializeSeed<'de> for Object<F> {
    type Value = F::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<F::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, F: Fields<'de>> Visitor<'de> for Object<F> {
    type Value = F::Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<F::Value, A::Error> {
        let mut value = F::Value::default();
        let mut seen = 0u32;
        while let Some(field) = map.next_key_seed(Name::<F>(PhantomData))? {
            match field {
                Some(field) => {
                    // The derived decoding refuses a key written twice.
                    if seen & (1 << field) != 0 {
                        return Err(unexpected());
                    }
                    seen |= 1 << field;
                    F::field(field, &mut map, &mut value)?;
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(value)
    }
}

/// A key, as the field of `F` it names (`None` if it is none of them).
struct Name<F>(PhantomData<F>);

impl<'de, F: Fields<'de>> DeserializeSeed<'de> for Name<F> {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        // As bytes, which serde_json does not check as UTF-8: a call per key,
        // about 17 a test (66 M of jest's report's 2.69 G instructions).
        d.deserialize_bytes(self)
    }
}

impl<'de, F: Fields<'de>> Visitor<'de> for Name<F> {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_bytes<E: de::Error>(self, key: &[u8]) -> Result<Option<usize>, E> {
        match F::index(key) {
            Some(field) => Ok(Some(field)),
            // Printable ASCII is UTF-8 and has no raw control character,
            // which a string must not hold; any other key is left to a
            // decoding that checks it.
            None if key.iter().all(|b| (0x20..0x7f).contains(b)) => Ok(None),
            None => Err(unexpected()),
        }
    }
}

struct FileFields;

impl<'de> Fields<'de> for FileFields {
    type Value = FileEntry<'de>;
    fn index(key: &[u8]) -> Option<usize> {
        Some(match key {
            b"name" => 0,
            b"status" => 1,
            b"message" => 2,
            b"assertionResults" => 3,
            _ => return None,
        })
    }
    fn field<A: MapAccess<'de>>(
        field: usize,
        map: &mut A,
        file: &mut FileEntry<'de>,
    ) -> Result<(), A::Error> {
        match field {
            0 => file.name = map.next_value_seed(Text)?.map(Cow::into_owned),
            1 => file.status = map.next_value_seed(Text)?.map(Cow::into_owned),
            2 => file.message = map.next_value_seed(Text)?.map(Cow::into_owned),
            _ => file.assertion_results = map.next_value_seed(List(|| Object(TestFields)))?,
        }
        Ok(())
    }
}

struct TestFields;

impl<'de> Fields<'de> for TestFields {
    type Value = Assertion<'de>;
    fn index(key: &[u8]) -> Option<usize> {
        Some(match key {
            b"ancestorTitles" => 0,
            b"title" => 1,
            b"fullName" => 2,
            b"status" => 3,
            b"duration" => 4,
            b"failureMessages" => 5,
            b"failureDetails" => 6,
            b"location" => 7,
            b"tags" => 8,
            b"meta" => 9,
            _ => return None,
        })
    }
    fn field<A: MapAccess<'de>>(
        field: usize,
        map: &mut A,
        test: &mut Assertion<'de>,
    ) -> Result<(), A::Error> {
        let texts = || List(|| OnlyText);
        match field {
            0 => test.ancestor_titles = map.next_value_seed(List(|| OnlyBorrowed))?,
            1 => test.title = map.next_value_seed(Text)?,
            2 => test.full_name = map.next_value_seed(Text)?,
            3 => test.status = map.next_value_seed(Text)?,
            4 => test.duration = map.next_value_seed(Number)?,
            5 => test.failure_messages = map.next_value_seed(texts())?,
            6 => test.failure_details = map.next_value_seed(Values)?,
            7 => test.location = Some(map.next_value_seed(Object(LocationFields))?),
            8 => test.tags = map.next_value_seed(texts())?,
            _ => test.meta = map.next_value_seed(Object(MetaFields))?,
        }
        Ok(())
    }
}

struct LocationFields;

impl<'de> Fields<'de> for LocationFields {
    type Value = Location;
    fn index(key: &[u8]) -> Option<usize> {
        (key == b"line").then_some(0)
    }
    fn field<A: MapAccess<'de>>(_: usize, map: &mut A, at: &mut Location) -> Result<(), A::Error> {
        at.line = map.next_value_seed(Number)?;
        Ok(())
    }
}

struct MetaFields;

impl<'de> Fields<'de> for MetaFields {
    type Value = Meta;
    fn index(key: &[u8]) -> Option<usize> {
        (key == b"typecheck").then_some(0)
    }
    fn field<A: MapAccess<'de>>(_: usize, map: &mut A, meta: &mut Meta) -> Result<(), A::Error> {
        meta.typecheck = map.next_value::<bool>()?;
        Ok(())
    }
}

/// A list of what `item` decodes.
struct List<F>(F);

impl<'de, S: DeserializeSeed<'de>, F: Fn() -> S> DeserializeSeed<'de> for List<F> {
    type Value = Vec<S::Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: DeserializeSeed<'de>, F: Fn() -> S> Visitor<'de> for List<F> {
    type Value = Vec<S::Value>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed((self.0)())? {
            items.push(item);
        }
        Ok(items)
    }
}

/// A string or `null`, as [`lenient::string`] reads them; borrowed unless
/// it holds an escape.
struct Text;

impl<'de> DeserializeSeed<'de> for Text {
    type Value = Option<Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Text {
    type Value = Option<Cow<'de, str>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }
    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Borrowed(text)))
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Some(Cow::Owned(text.to_owned())))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A string, as an item of [`lenient::strings`].
struct OnlyText;

impl<'de> DeserializeSeed<'de> for OnlyText {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        String::deserialize(d)
    }
}

/// A string, as an item of [`lenient::strings`]; borrowed unless it holds
/// an escape.
struct OnlyBorrowed;

impl<'de> DeserializeSeed<'de> for OnlyBorrowed {
    type Value = Cow<'de, str>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for OnlyBorrowed {
    type Value = Cow<'de, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(text))
    }
    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(text.to_owned()))
    }
}

/// A number or `null`, as [`lenient::f64`] reads them.
struct Number;

impl<'de> DeserializeSeed<'de> for Number {
    type Value = Option<f64>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<f64>, D::Error> {
        d.deserialize_any(self)
    }
}

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

/// Values of any shape, by [`lenient::values`] itself.
struct Values;

impl<'de> DeserializeSeed<'de> for Values {
    type Value = Vec<serde_json::Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        lenient::values(d)
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
}
