//! Which format a report file is, from its first few KB (or, for a JSON
//! document whose telling keys come late, from its parsed top level).
use serde_json::Value;

use crate::cli::InputFormat;

/// How many bytes [`sniff`] looks at.
pub(crate) const SNIFF_LEN: usize = 16 * 1024;

/// What the first bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sniffed {
    /// Certainly this format.
    Format(InputFormat),
    /// A JSON object whose format the prefix does not tell: parse it and ask [`by_keys`].
    Json,
    /// Nothing (empty or whitespace only).
    Empty,
    /// Not a report we know.
    Unknown,
}

/// Guesses the format from the start of a file.
pub(crate) fn sniff(prefix: &[u8]) -> Sniffed {
    let prefix = prefix.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(prefix);
    let Some(first) = prefix.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Sniffed::Empty;
    };
    match prefix[first] {
        b'<' => Sniffed::Format(InputFormat::Junit),
        b'{' if prefix[first..].starts_with(super::events::LINE_START) => {
            Sniffed::Format(InputFormat::Events)
        }
        b'{' => {
            // A cut in the middle of a UTF-8 sequence only loses that character.
            let text = String::from_utf8_lossy(&prefix[first..]);
            sniff_json(&text)
        }
        _ => Sniffed::Unknown,
    }
}

fn has_key(text: &str, key: &str) -> bool {
    text.contains(&format!("\"{key}\""))
}

/// The value text following `"key":`, if the key is present.
fn after_key<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let at = text.find(&format!("\"{key}\""))? + key.len() + 2;
    let rest = text[at..].trim_start().strip_prefix(':')?;
    Some(rest.trim_start())
}

fn sniff_json(text: &str) -> Sniffed {
    if after_key(text, "reportFormat").is_some_and(|v| v.starts_with("\"CTRF\"")) {
        return Sniffed::Format(InputFormat::Ctrf);
    }
    if has_key(text, "numTotalTestSuites") {
        let jest_only = ["numRuntimeErrorTestSuites", "wasInterrupted", "openHandles"];
        if jest_only.iter().any(|k| has_key(text, k)) {
            return Sniffed::Format(InputFormat::JestJson);
        }
        // Both write their counters before `testResults`: once the results
        // have begun without the jest-only keys, it is vitest.
        if has_key(text, "testResults") {
            return Sniffed::Format(InputFormat::VitestJson);
        }
        return Sniffed::Json;
    }
    if has_key(text, "tests")
        && (has_key(text, "collectors") || has_key(text, "collected") || has_key(text, "root"))
    {
        return Sniffed::Format(InputFormat::PytestJson);
    }
    if has_key(text, "results") && has_key(text, "tool") {
        return Sniffed::Format(InputFormat::Ctrf);
    }
    Sniffed::Json
}

/// Decides from a parsed document's top-level keys.
pub(crate) fn by_keys(doc: &Value) -> Option<InputFormat> {
    let obj = doc.as_object()?;
    if obj.get("reportFormat").and_then(Value::as_str) == Some("CTRF")
        || doc.pointer("/results/tool").is_some()
    {
        return Some(InputFormat::Ctrf);
    }
    let files = doc.get("testResults").and_then(Value::as_array);
    if obj.contains_key("numTotalTestSuites")
        || files.is_some_and(|f| f.iter().any(|r| r.get("assertionResults").is_some()))
    {
        let jest = ["numRuntimeErrorTestSuites", "wasInterrupted", "openHandles"];
        return Some(if jest.iter().any(|k| obj.contains_key(*k)) {
            InputFormat::JestJson
        } else {
            InputFormat::VitestJson
        });
    }
    if obj.contains_key("tests")
        && (obj.contains_key("collectors")
            || doc.pointer("/summary/collected").is_some()
            || obj.contains_key("root"))
    {
        return Some(InputFormat::PytestJson);
    }
    None
}

/// The formats, as `--input-format` spells them, for error messages.
pub(crate) const FORMAT_NAMES: &str = "junit, jest-json, vitest-json, pytest-json, ctrf, events";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::testing::{sample, SAMPLES};

    #[test]
    fn sniffs_each_sample() {
        for (name, format) in SAMPLES {
            let bytes = sample(name);
            let head = &bytes[..bytes.len().min(SNIFF_LEN)];
            assert_eq!(sniff(head), Sniffed::Format(format), "{name}");
            if format != InputFormat::Junit {
                let doc: Value = serde_json::from_slice(&bytes).unwrap();
                assert_eq!(by_keys(&doc), Some(format), "{name} by keys");
            }
        }
    }

    #[test]
    fn sniffs_edge_cases() {
        assert_eq!(sniff(b""), Sniffed::Empty);
        assert_eq!(sniff(b" \n\t"), Sniffed::Empty);
        assert_eq!(
            sniff(b"\xEF\xBB\xBF<?xml"),
            Sniffed::Format(InputFormat::Junit)
        );
        assert_eq!(sniff(b"\x00\x01garbage"), Sniffed::Unknown);
        assert_eq!(sniff(b"[1, 2]"), Sniffed::Unknown);
        assert_eq!(sniff(b"{\"a\": 1}"), Sniffed::Json);
        assert_eq!(
            sniff(b"{\"results\": {\"tool\": {\"name\": \"x\"}, \"tests\": []}}"),
            Sniffed::Format(InputFormat::Ctrf)
        );
        assert_eq!(sniff(b"{\"numTotalTestSuites\": 1"), Sniffed::Json);
        let late_jest: Value = serde_json::from_str(
            r#"{"testResults":[{"assertionResults":[]}],"wasInterrupted":false}"#,
        )
        .unwrap();
        assert_eq!(by_keys(&late_jest), Some(InputFormat::JestJson));
        assert_eq!(by_keys(&serde_json::json!({"a": 1})), None);
    }
}
