//! The `time` attribute of a `<testcase>`: seconds, truncated to whole ms.
//! Writers that format numbers in their locale's way give a decimal comma
//! (`0,002`, `1.234,5`) or `,` grouping thousands (`1,000.5` from Surefire,
//! `1,234`); [`with_decimal_point`] has the rule that tells them apart, the
//! one Jenkins reads them by.
use crate::convert::common::to_ms;

/// A `time` attribute (seconds) in whole milliseconds. Writers formatting
/// with their locale's number format give a decimal comma (`0,002`,
/// `1.234,5`) or `,` thousands separators (`1,000.5`, Surefire):
/// [`with_decimal_point`] tells them apart.
pub(super) fn seconds(value: &str) -> Option<u64> {
    plain_millis(value.as_bytes()).or_else(|| other_seconds(value))
}

/// Whole milliseconds of plain `ddd.ddd` seconds (up to six digits before
/// the point and three after), in integers. For these the float route of
/// [`seconds`] gives the same number: its rounding error
/// is below 3e-7 ms, far under the 1e-6 that `to_ms` adds before truncating.
fn plain_millis(value: &[u8]) -> Option<u64> {
    let (whole, fraction) = match value.iter().position(|&b| b == b'.') {
        Some(dot) => (&value[..dot], &value[dot + 1..]),
        None => (value, &[][..]),
    };
    if whole.is_empty() || whole.len() > 6 || fraction.len() > 3 {
        return None;
    }
    let mut ms = 0;
    for &d in whole {
        if !d.is_ascii_digit() {
            return None;
        }
        ms = ms * 10 + u64::from(d - b'0');
    }
    for i in 0..3 {
        let d = fraction.get(i).copied().unwrap_or(b'0');
        if !d.is_ascii_digit() {
            return None;
        }
        ms = ms * 10 + u64::from(d - b'0');
    }
    Some(ms)
}

/// [`seconds`] of what is not plainly written: kept out of line, so the
/// plain case, nearly every one, stays as small as it was.
#[cold]
#[inline(never)]
fn other_seconds(value: &str) -> Option<u64> {
    let value = value.trim();
    let parsed = if value.contains(',') {
        with_decimal_point(value).parse()
    } else {
        value.parse()
    };
    parsed.ok().and_then(|secs: f64| to_ms(secs, 1000.0))
}

/// A number with `,` in it rewritten with `.` as its decimal separator and
/// no thousands separators. With both `,` and `.`, the last one is the
/// decimal separator and the other groups thousands. Several `,` alone group
/// thousands, and so does one followed by exactly three digits after a
/// non-zero whole part (`1,234` is 1234, as Jenkins reads it); any other
/// lone `,` is a decimal comma (`0,002`, `1,5`, `0,500`).
fn with_decimal_point(value: &str) -> String {
    let last_comma = value.rfind(',');
    let decimal_comma = match (last_comma, value.rfind('.')) {
        (Some(comma), Some(dot)) => comma > dot,
        (Some(comma), None) => {
            let (whole, fraction) = (&value[..comma], &value[comma + 1..]);
            let groups_thousands = fraction.len() == 3
                && fraction.bytes().all(|b| b.is_ascii_digit())
                && whole.bytes().any(|b| matches!(b, b'1'..=b'9'));
            !whole.contains(',') && !groups_thousands
        }
        (None, _) => false,
    };
    let mut number = String::with_capacity(value.len());
    for (at, c) in value.char_indices() {
        match c {
            ',' if decimal_comma && Some(at) == last_comma => number.push('.'),
            ',' => {}
            '.' if decimal_comma => {}
            _ => number.push(c),
        }
    }
    number
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_times_read_as_the_float_route_reads_them() {
        let float_route = |text: &str| text.parse().ok().and_then(|secs: f64| to_ms(secs, 1000.0));
        let wholes = [
            "0", "1", "7", "42", "123", "999", "1000", "65535", "999999", "000001",
        ];
        for whole in wholes {
            for fraction in (0..1000).map(|f| format!("{f:03}")) {
                for cut in 0..=3 {
                    let text = format!("{whole}.{}", &fraction[..cut]);
                    assert_eq!(plain_millis(text.as_bytes()), float_route(&text), "{text}");
                }
            }
            assert_eq!(
                plain_millis(whole.as_bytes()),
                float_route(whole),
                "{whole}"
            );
        }
        for other in [
            "", ".5", "1e3", "+1", "-1", " 1", "1.0001", "1234567", "1.2.3", "nan",
        ] {
            assert_eq!(plain_millis(other.as_bytes()), None, "{other}");
        }
    }

    #[test]
    fn decimal_commas_and_thousands_separators_in_times() {
        let cases = [
            // A decimal comma (locales that write one).
            ("0,002", Some(2)),
            ("0,010", Some(10)),
            ("1,5", Some(1_500)),
            ("0,500", Some(500)),
            ("1,2345", Some(1_234)),
            ("1.234,5", Some(1_234_500)),
            ("1.234.567,25", Some(1_234_567_250)),
            (" 2,5 ", Some(2_500)),
            // Thousands grouped (Surefire's `1,000.5`; Jenkins reads `1,234` so).
            ("1,000.5", Some(1_000_500)),
            ("1,234", Some(1_234_000)),
            ("12,345", Some(12_345_000)),
            ("1,234,567", Some(1_234_567_000)),
            ("0.5", Some(500)),
            (",", None),
        ];
        for (text, ms) in cases {
            assert_eq!(seconds(text), ms, "{text}");
        }
    }
}
