//! Value escaping per the TeamCity table.
//!
//! The documented table (TeamCity `service-messages.md`) is `'`→`|'`,
//! `|`→`||`, `\n`→`|n`, `\r`→`|r`, `[`→`|[`, `]`→`|]` and `|0xNNNN` for any
//! UTF-16 unit. JetBrains' own parsers also decode `|x` (U+0085), `|l`
//! (U+2028) and `|p` (U+2029), the characters Java and .NET readers treat as
//! line breaks, so [`escape`] writes those three as escapes too. The other
//! ASCII control characters but tab (NUL, ESC, DEL, …) go as `|0x00NN`: a
//! test's raw terminal sequence or NUL byte decodes to the same text, but
//! the stream itself stays plain text that a terminal or a log viewer
//! shows as it is. Everything else, including non-ASCII, is written as raw
//! UTF-8 (as `teamcity-messages` does); [`unescape`] reads `|0xNNNN` from
//! any producer.

/// An escape sequence that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnescapeError {
    /// `|` followed by a character that is not a known escape.
    #[error("unknown escape `|{found}` at character {offset}")]
    Unknown {
        /// Character offset of the `|` inside the value.
        offset: usize,
        /// The character after the `|`.
        found: char,
    },
    /// A `|` at the very end of the value.
    #[error("dangling `|` at character {offset}")]
    Dangling {
        /// Character offset of the `|` inside the value.
        offset: usize,
    },
    /// `|0x` not followed by four hex digits naming a valid character.
    #[error("bad `|0x` escape at character {offset}")]
    BadHex {
        /// Character offset of the `|` inside the value.
        offset: usize,
    },
}

impl UnescapeError {
    /// Character offset of the offending `|` inside the value.
    pub fn offset(&self) -> usize {
        match *self {
            UnescapeError::Unknown { offset, .. }
            | UnescapeError::Dangling { offset }
            | UnescapeError::BadHex { offset } => offset,
        }
    }
}

/// Escapes a value: `'` `|` `\n` `\r` `[` `]`, U+0085, U+2028, U+2029, and
/// the other ASCII control characters but tab as `|0x00NN`.
///
/// ```
/// assert_eq!(tcrunner_protocol::escape("it's [1|2]\n"), "it|'s |[1||2|]|n");
/// ```
pub fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 8);
    escape_into(value, &mut out);
    out
}

/// Escapes a value onto the end of `out`.
#[inline(always)]
pub fn escape_into(value: &str, out: &mut String) {
    escape_to(value, out);
}

/// Where escaped text is appended: a `String`, or the writer's line.
pub(crate) trait Out {
    fn push_str(&mut self, text: &str);
}

impl Out for String {
    fn push_str(&mut self, text: &str) {
        String::push_str(self, text);
    }
}

impl Out for Vec<u8> {
    fn push_str(&mut self, text: &str) {
        self.extend_from_slice(text.as_bytes());
    }
}

/// [`escape_into`] for any [`Out`].
#[inline(always)]
pub(crate) fn escape_to(value: &str, out: &mut impl Out) {
    // Most values (ids, names) have nothing to escape: one scan and one
    // `push_str`, inlined into the caller.
    match find_may_escape(value.as_bytes()) {
        None => out.push_str(value),
        Some(first) => escape_from(value, first, out),
    }
}

/// [`escape_into`] for a value whose first byte to look at is at `first`.
pub(crate) fn escape_from(value: &str, first: usize, out: &mut impl Out) {
    let bytes = value.as_bytes();
    // Runs of bytes that need no escape are copied whole. Every byte we
    // stop at starts a character, so the slices below always fall on char
    // boundaries.
    let mut copied = 0;
    let mut i = 0;
    let mut found = Some(first);
    while let Some(at) = found {
        i += at;
        let control;
        let (escape, width) = match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'\'', _, _) => ("|'", 1),
            (b'|', _, _) => ("||", 1),
            (b'\n', _, _) => ("|n", 1),
            (b'\r', _, _) => ("|r", 1),
            (b'[', _, _) => ("|[", 1),
            (b']', _, _) => ("|]", 1),
            // U+0085 is C2 85 in UTF-8; U+2028 and U+2029 are E2 80 A8/A9.
            (0xC2, Some(0x85), _) => ("|x", 2),
            (0xE2, Some(0x80), Some(0xA8)) => ("|l", 3),
            (0xE2, Some(0x80), Some(0xA9)) => ("|p", 3),
            (byte @ (0..=0x1F | 0x7F), _, _) if byte != b'\t' => {
                control = format!("|0x{byte:04x}");
                (control.as_str(), 1)
            }
            _ => {
                i += 1;
                found = find_may_escape(&bytes[i..]);
                continue;
            }
        };
        out.push_str(&value[copied..i]);
        out.push_str(escape);
        i += width;
        copied = i;
        found = find_may_escape(&bytes[i..]);
    }
    out.push_str(&value[copied..]);
}

/// The index of the first byte in [`MAY_ESCAPE`]. Eight bytes are tested
/// at a time without a branch per byte: most values (names, tracebacks)
/// have long runs with nothing to escape.
#[inline(always)]
pub(crate) fn find_may_escape(bytes: &[u8]) -> Option<usize> {
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        if chunk
            .iter()
            .fold(false, |any, &b| any | MAY_ESCAPE[usize::from(b)])
        {
            break;
        }
        at += 8;
    }
    let found = bytes[at..].iter().position(|&b| MAY_ESCAPE[usize::from(b)]);
    found.map(|i| at + i)
}

/// Bytes that are, or may start, a character [`escape_into`] escapes.
const MAY_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let bytes = [b'\'', b'|', b'[', b']', 0xC2, 0xE2, 0x7F];
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    // The control characters, `\n` and `\r` among them; not tab.
    let mut control = 0;
    while control < 0x20 {
        table[control] = control != b'\t' as usize;
        control += 1;
    }
    table
};

/// Reverses [`escape`], also decoding `|0xNNNN` (UTF-16 units; surrogate pairs join).
///
/// A high surrogate must be followed directly by a `|0x` low surrogate; a
/// lone surrogate of either kind is [`UnescapeError::BadHex`]. Hex digits may
/// be upper or lower case.
pub fn unescape(value: &str) -> Result<String, UnescapeError> {
    if !value.contains('|') {
        return Ok(value.to_owned());
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars().enumerate().peekable();
    while let Some((offset, c)) = chars.next() {
        if c != '|' {
            out.push(c);
            continue;
        }
        let Some((_, code)) = chars.next() else {
            return Err(UnescapeError::Dangling { offset });
        };
        let decoded = match code {
            '\'' => '\'',
            '|' => '|',
            'n' => '\n',
            'r' => '\r',
            '[' => '[',
            ']' => ']',
            'x' => '\u{85}',
            'l' => '\u{2028}',
            'p' => '\u{2029}',
            '0' if chars.peek().map(|&(_, c)| c) == Some('x') => {
                chars.next();
                let unit = hex_unit(&mut chars).ok_or(UnescapeError::BadHex { offset })?;
                match unit {
                    0xD800..=0xDBFF => {
                        // A high surrogate: the low half must be the next escape.
                        let low = match (chars.next(), chars.next(), chars.next()) {
                            (Some((_, '|')), Some((_, '0')), Some((_, 'x'))) => {
                                hex_unit(&mut chars)
                            }
                            _ => None,
                        };
                        match low {
                            Some(low @ 0xDC00..=0xDFFF) => {
                                let joined = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                                char::from_u32(joined).ok_or(UnescapeError::BadHex { offset })?
                            }
                            _ => return Err(UnescapeError::BadHex { offset }),
                        }
                    }
                    // A low surrogate with no high one before it.
                    0xDC00..=0xDFFF => return Err(UnescapeError::BadHex { offset }),
                    _ => char::from_u32(unit).ok_or(UnescapeError::BadHex { offset })?,
                }
            }
            found => return Err(UnescapeError::Unknown { offset, found }),
        };
        out.push(decoded);
    }
    Ok(out)
}

/// Reads exactly four hex digits as one UTF-16 unit.
fn hex_unit(chars: &mut impl Iterator<Item = (usize, char)>) -> Option<u32> {
    let mut unit = 0;
    for _ in 0..4 {
        let (_, c) = chars.next()?;
        unit = unit * 16 + c.to_digit(16)?;
    }
    Some(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_copies_unchanged() {
        assert_eq!(
            escape("plain ascii and ünïcödé ✓"),
            "plain ascii and ünïcödé ✓"
        );
    }

    #[test]
    fn escapes_are_found_at_every_offset() {
        for special in [
            "'", "|", "\n", "\r", "[", "]", "\u{85}", "\u{2028}", "\u{2029}", "\0", "\u{1b}",
            "\u{7f}", "\u{1}",
        ] {
            for at in 0..20 {
                let value = format!("{}{special}{}", "a".repeat(at), "b".repeat(at % 7));
                let escaped = escape(&value);
                assert_eq!(unescape(&escaped).as_deref(), Ok(value.as_str()));
                assert_ne!(escaped, value, "{value:?}");
            }
        }
    }

    #[test]
    fn control_characters_but_tab_are_hex_escapes() {
        assert_eq!(
            escape("\u{1b}[31mred\u{1b}[0m\0\u{7f}\ttab"),
            "|0x001b|[31mred|0x001b|[0m|0x0000|0x007f\ttab"
        );
        assert_eq!(escape("a\nb\rc"), "a|nb|rc");
    }

    #[test]
    fn near_misses_of_multibyte_escapes_stay_raw() {
        // U+0080 (C2 80), U+2027 (E2 80 A7) and U+202A (E2 80 AA) share
        // leading bytes with the escaped characters.
        let s = "\u{80}\u{2027}\u{202A}\u{2000}";
        assert_eq!(escape(s), s);
        assert_eq!(escape("a\u{85}b\u{2028}c\u{2029}"), "a|xb|lc|p");
    }

    #[test]
    fn high_surrogate_followed_by_non_escape_is_bad_hex() {
        assert_eq!(
            unescape("|0xD83Dabcdef"),
            Err(UnescapeError::BadHex { offset: 0 })
        );
        assert_eq!(
            unescape("|0xD83D|0x0041"),
            Err(UnescapeError::BadHex { offset: 0 })
        );
        assert_eq!(
            unescape("|0xD83D"),
            Err(UnescapeError::BadHex { offset: 0 })
        );
    }

    #[test]
    fn offsets_count_characters_not_bytes() {
        assert_eq!(
            unescape("ü|q"),
            Err(UnescapeError::Unknown {
                offset: 1,
                found: 'q'
            })
        );
        assert_eq!(UnescapeError::Dangling { offset: 3 }.offset(), 3);
    }
}
