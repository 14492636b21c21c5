//! Value escaping per the TeamCity table.

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

/// Escapes a value: `'` `|` `\n` `\r` `[` `]` and U+0085, U+2028, U+2029.
pub fn escape(value: &str) -> String {
    let _ = value;
    todo!()
}

/// Escapes a value onto the end of `out`.
pub fn escape_into(value: &str, out: &mut String) {
    let _ = (value, out);
    todo!()
}

/// Reverses [`escape`], also decoding `|0xNNNN` (UTF-16 units; surrogate pairs join).
pub fn unescape(value: &str) -> Result<String, UnescapeError> {
    let _ = value;
    todo!()
}
