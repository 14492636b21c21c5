//! Lenient field decoders for the JSON report readers: a field of an
//! unexpected type reads as absent instead of failing the whole report, and
//! no test item is dropped for how it is written.
//!
//! Two things serde would otherwise refuse inside one test item, and the
//! item, failure included, would vanish from the report:
//!
//! - **Nesting deeper than serde_json's limit of 128.** A jest test whose
//!   `toEqual` compared a linked list 200 nodes long carries the values in
//!   `failureDetails[].matcherResult`. Every value is built at most
//!   [`MAX_DEPTH`] levels deep; deeper parts are skipped (serde_json skips
//!   without recursing) and read as [`TOO_DEEP`].
//! - **A key written twice.** serde's derive rejects a duplicate field; as
//!   `JSON.parse` does, the last one counts.
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};

/// How many levels of a value are built; a report item's own nesting plus
/// this stays well below serde_json's recursion limit of 128.
pub(crate) const MAX_DEPTH: usize = 64;

/// What a part of a value nested deeper than [`MAX_DEPTH`] reads as.
pub(crate) const TOO_DEEP: &str = "[nested too deep]";

/// A value of any shape, built at most [`MAX_DEPTH`] levels deep.
pub(crate) fn value<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    Bounded(0).deserialize(d)
}

/// A list of values of any shape ([`value`]); anything else is empty.
pub(crate) fn values<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    Ok(match value(d)? {
        Value::Array(items) => items,
        _ => Vec::new(),
    })
}

/// An optional value of any shape ([`value`]); `null` is absent.
pub(crate) fn optional_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Ok(Some(value(d)?).filter(|v| !v.is_null()))
}

/// A number, or a string holding one.
pub(crate) fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Ok(match value(d)? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

/// A string; numbers and booleans are written out, other shapes as JSON.
pub(crate) fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match value(d)? {
        Value::Null => None,
        Value::String(s) => Some(s),
        other => Some(other.to_string()),
    })
}

/// A list of strings; other items are written out as JSON, a lone string
/// is a one-item list, anything else is empty.
pub(crate) fn strings<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match value(d)? {
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => s,
                other => other.to_string(),
            })
            .collect(),
        Value::String(s) => vec![s],
        _ => Vec::new(),
    })
}

/// Decodes one item from its JSON text; an object with a key written twice
/// is decoded again with the last of each.
pub(crate) fn item<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Option<T> {
    match serde_json::from_str(raw.get()) {
        Ok(item) => Some(item),
        Err(_) => {
            let fields: BTreeMap<String, Box<RawValue>> = serde_json::from_str(raw.get()).ok()?;
            serde_json::from_str(&serde_json::to_string(&fields).ok()?).ok()
        }
    }
}

/// A list of `T`; items that are not objects of its shape are dropped, a
/// non-list is empty.
pub(crate) fn list<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    // Each item is kept as its raw JSON text and decoded from that: no
    // `Value` tree of the whole report (10x the file in memory).
    struct Items<T>(std::marker::PhantomData<T>);
    impl<'de, T: serde::de::DeserializeOwned> Visitor<'de> for Items<T> {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
            let mut out = Vec::new();
            while let Some(raw) = seq.next_element::<Box<RawValue>>()? {
                out.extend(item(&raw));
            }
            Ok(out)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<T>, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Vec::new())
        }
        fn visit_bool<E>(self, _: bool) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }
        fn visit_str<E>(self, _: &str) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }
        fn visit_unit<E>(self) -> Result<Vec<T>, E> {
            Ok(Vec::new())
        }
    }
    d.deserialize_any(Items(std::marker::PhantomData))
}

/// A `T`, or its default when the value does not decode. Read as its raw
/// JSON text, so nesting at any depth below it only costs its size.
pub(crate) fn or_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: serde::de::DeserializeOwned + Default,
{
    let raw = Box::<RawValue>::deserialize(d)?;
    Ok(item(&raw).unwrap_or_default())
}

/// Builds a [`Value`] to a depth: below [`MAX_DEPTH`] levels under where it
/// started, what is left is skipped.
#[derive(Clone, Copy)]
struct Bounded(usize);

impl<'de> DeserializeSeed<'de> for Bounded {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.0 >= MAX_DEPTH {
            IgnoredAny::deserialize(d)?;
            return Ok(Value::String(TOO_DEEP.to_string()));
        }
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Bounded(self.0 + 1))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut fields = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Bounded(self.0 + 1))?;
            fields.insert(key, value);
        }
        Ok(Value::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Item {
        #[serde(deserialize_with = "string")]
        name: Option<String>,
        #[serde(deserialize_with = "values")]
        details: Vec<Value>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Doc {
        #[serde(deserialize_with = "list")]
        items: Vec<Item>,
    }

    fn nested(depth: usize) -> String {
        format!("{}1{}", "{\"next\":".repeat(depth), "}".repeat(depth))
    }

    #[test]
    fn an_item_nested_past_serdes_limit_is_kept_cut_at_the_bound() {
        for depth in [10, 130, 100_000] {
            let text = format!(
                r#"{{"items":[{{"name":"deep","details":[{}]}},{{"name":"next"}}]}}"#,
                nested(depth)
            );
            let doc: Doc = serde_json::from_str(&text).unwrap();
            let names: Vec<_> = doc.items.iter().map(|i| i.name.as_deref()).collect();
            assert_eq!(names, [Some("deep"), Some("next")], "depth {depth}");
            let mut value = &doc.items[0].details[0];
            let mut levels = 0;
            while let Some(next) = value.get("next") {
                value = next;
                levels += 1;
            }
            if depth < MAX_DEPTH {
                assert_eq!((levels, value), (depth, &Value::from(1)));
            } else {
                assert_eq!((levels, value), (MAX_DEPTH - 1, &Value::from(TOO_DEEP)));
            }
        }
    }

    #[test]
    fn a_key_written_twice_keeps_the_item_with_the_last() {
        let text = r#"{"items":[{"name":"a","name":"b"},"not an item",{"name":"c"}]}"#;
        let doc: Doc = serde_json::from_str(text).unwrap();
        let names: Vec<_> = doc.items.iter().map(|i| i.name.as_deref()).collect();
        assert_eq!(names, [Some("b"), Some("c")]);
    }

    #[test]
    fn or_default_skips_nesting_of_any_depth() {
        #[derive(Debug, Default, Deserialize)]
        #[serde(default)]
        struct Outer {
            #[serde(deserialize_with = "or_default")]
            inner: Doc,
        }
        let text = format!(
            r#"{{"inner":{{"extra":{},"items":[{{"name":"a"}}]}}}}"#,
            nested(100_000)
        );
        let outer: Outer = serde_json::from_str(&text).unwrap();
        assert_eq!(outer.inner.items.len(), 1);
    }
}
