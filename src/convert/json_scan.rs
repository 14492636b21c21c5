//! The end of a JSON object or list found 64 bytes at a time, from bit masks
//! of the block's quotes, backslashes and brackets (the first stage of
//! simdjson, without its validation); and the end of a string's plain run,
//! eight bytes at a time ([`string_end`]).
//!
//! A byte loop over a dense jest report costs about 11 instructions a byte;
//! a block that cannot hold the value's end costs a few dozen instructions
//! for its 64 bytes here, whatever it holds.

/// What [`container_len`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scanned {
    /// The value is this many bytes long.
    Len(usize),
    /// The value does not end within the text.
    Open,
    /// A backslash outside a string (not JSON): the masks cannot tell what
    /// a byte loop makes of it, so the caller should ask one.
    Unsure,
}

/// Where the first `"` or `\` of `text` is, and whether every byte
/// before it is ASCII and no control character; `None` if there is none.
///
/// Eight bytes at a time (SWAR): a byte loop, and `memchr` then `from_utf8`
/// on short strings, took about a quarter of jest's report's instructions
/// between them, for keys and titles of a dozen bytes.
pub(crate) fn string_end(text: &[u8]) -> Option<(usize, bool)> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of `x` that is zero, and maybe of bytes
    // after one that is (a borrow): the lowest bit set is exact.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut at = 0;
    let mut ascii = true;
    while at < text.len() {
        let word = match text.get(at..at + 8) {
            Some(word) => u64::from_le_bytes(word.try_into().expect("8 bytes")),
            None => {
                // The last bytes, padded with spaces, which end nothing.
                let mut padded = [b' '; 8];
                padded[..text.len() - at].copy_from_slice(&text[at..]);
                u64::from_le_bytes(padded)
            }
        };
        let ends = zero(word ^ (ONES * u64::from(b'"'))) | zero(word ^ (ONES * u64::from(b'\\')));
        // Below 0x20 (as `zero`, exact at the lowest bit), or above 0x7f.
        let odd = (word.wrapping_sub(ONES * 0x20) & !word | word) & HIGH;
        if ends != 0 {
            let end = ends.trailing_zeros();
            let before = odd & ((1 << end) - 1);
            return Some((at + end as usize / 8, ascii && before == 0));
        }
        ascii &= odd == 0;
        at += 8;
    }
    None
}

/// Bytes per block: one bit of a `u64` mask each.
const BLOCK: usize = 64;

/// The length of the object or list at the start of `text`, whose first
/// byte is `{` or `[`: up to the bracket that brings the depth back to zero,
/// counting brackets outside strings only, of either kind alike. A byte
/// loop that skips strings (a backslash in a string escapes the next byte)
/// finds the same end.
pub(crate) fn container_len(text: &[u8]) -> Scanned {
    debug_assert!(matches!(text.first(), Some(b'{' | b'[')));
    let mut depth = 0usize;
    // All ones when the block starts inside a string.
    let mut in_string = 0u64;
    // The block's first byte is escaped by the last one before it.
    let mut escaped_first = false;
    let mut at = 0;
    while at < text.len() {
        let masks = match text.get(at..at + BLOCK) {
            Some(block) => Masks::of(block.try_into().expect("a block")),
            None => {
                // The last bytes, padded with spaces, which change nothing.
                let mut padded = [b' '; BLOCK];
                padded[..text.len() - at].copy_from_slice(&text[at..]);
                Masks::of(&padded)
            }
        };
        let escaped = escaped_bytes(masks.backslash, &mut escaped_first);
        let quotes = masks.quote & !escaped;
        // Bit i set if byte i is inside a string (its opening quote
        // included, its closing quote not).
        let strings = prefix_xor(quotes) ^ in_string;
        in_string = 0u64.wrapping_sub(strings >> 63);
        // Backslashes that escape something: outside a string, JSON has
        // none, and a byte loop would not take them as escapes.
        if masks.backslash & !escaped & !strings != 0 {
            return Scanned::Unsure;
        }
        let open = masks.open & !strings;
        let close = masks.close & !strings;
        let closes = close.count_ones() as usize;
        if closes < depth {
            // The depth cannot reach zero within this block.
            depth = depth + open.count_ones() as usize - closes;
        } else {
            let mut brackets = open | close;
            while brackets != 0 {
                let bit = brackets & brackets.wrapping_neg();
                brackets ^= bit;
                if open & bit != 0 {
                    depth += 1;
                } else {
                    depth -= 1;
                    if depth == 0 {
                        return Scanned::Len(at + bit.trailing_zeros() as usize + 1);
                    }
                }
            }
        }
        at += BLOCK;
    }
    Scanned::Open
}

/// The bytes escaped by a backslash, given the block's backslashes and
/// whether its first byte is escaped; sets that for the next block.
/// Backslashes are rare outside failure messages, so they are taken one
/// by one, in order: an escaped backslash escapes nothing.
fn escaped_bytes(backslash: u64, escaped_first: &mut bool) -> u64 {
    let mut escaped = u64::from(*escaped_first);
    *escaped_first = false;
    let mut rest = backslash;
    while rest != 0 {
        let i = rest.trailing_zeros();
        rest &= rest - 1;
        if escaped & (1 << i) == 0 {
            match i {
                63 => *escaped_first = true,
                _ => escaped |= 1 << (i + 1),
            }
        }
    }
    escaped
}

/// Bit i of the result is the parity of the bits 0..=i of `bits`.
fn prefix_xor(mut bits: u64) -> u64 {
    for shift in [1, 2, 4, 8, 16, 32] {
        bits ^= bits << shift;
    }
    bits
}

/// One bit per byte of a block.
struct Masks {
    quote: u64,
    backslash: u64,
    /// `{` and `[`.
    open: u64,
    /// `}` and `]`.
    close: u64,
}

impl Masks {
    #[cfg(target_arch = "x86_64")]
    fn of(block: &[u8; BLOCK]) -> Masks {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
            _mm_set1_epi8,
        };
        // SAFETY: SSE2 is part of every x86_64 target, and each load reads
        // the 16 bytes of a chunk of `block`, at any alignment (`loadu`).
        unsafe {
            // `{` and `[`, `}` and `]` differ in the bit 0x20 alone.
            let case = _mm_set1_epi8(0x20);
            let [quote, backslash, open, close] =
                [b'"', b'\\', b'{', b'}'].map(|b| _mm_set1_epi8(b as i8));
            let mut masks = Masks {
                quote: 0,
                backslash: 0,
                open: 0,
                close: 0,
            };
            for (i, chunk) in block.chunks_exact(16).enumerate() {
                let bytes = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let folded = _mm_or_si128(bytes, case);
                let bits =
                    |v, b| u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(v, b)) as u16) << (16 * i);
                masks.quote |= bits(bytes, quote);
                masks.backslash |= bits(bytes, backslash);
                masks.open |= bits(folded, open);
                masks.close |= bits(folded, close);
            }
            masks
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn of(block: &[u8; BLOCK]) -> Masks {
        let mut masks = Masks {
            quote: 0,
            backslash: 0,
            open: 0,
            close: 0,
        };
        for (i, &b) in block.iter().enumerate() {
            let bit = 1u64 << i;
            match b {
                b'"' => masks.quote |= bit,
                b'\\' => masks.backslash |= bit,
                b'{' | b'[' => masks.open |= bit,
                b'}' | b']' => masks.close |= bit,
                _ => {}
            }
        }
        masks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a byte loop finds: the reference the masks must agree with.
    fn by_bytes(text: &[u8]) -> Option<usize> {
        let (mut depth, mut i, mut in_string) = (0usize, 0, false);
        while i < text.len() {
            match (in_string, text[i]) {
                (true, b'\\') => i += 1,
                (_, b'"') => in_string = !in_string,
                (false, b'{' | b'[') => depth += 1,
                (false, b'}' | b']') => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    fn check(text: &str) {
        let bytes = text.as_bytes();
        let want = by_bytes(bytes);
        match container_len(bytes) {
            Scanned::Len(len) => assert_eq!(Some(len), want, "{text:?}"),
            Scanned::Open => assert_eq!(None, want, "{text:?}"),
            Scanned::Unsure => panic!("unsure of JSON text {text:?}"),
        }
        // serde_json reads the same value there.
        if let Some(len) = want {
            if serde_json::from_slice::<serde_json::Value>(bytes).is_ok() {
                let mut values =
                    serde_json::Deserializer::from_slice(bytes).into_iter::<serde_json::Value>();
                values.next().unwrap().unwrap();
                assert_eq!(values.byte_offset(), len, "{text:?}");
            }
        }
    }

    #[test]
    fn ends_where_a_byte_loop_and_serde_json_end() {
        let pieces = [
            r#"{"a": 1}"#,
            r#"["]}\"[{", "\\", "\\\\\"", {"k": [1, 2.5e-3, true, null]}]"#,
            r#"{"é": "ü\u00e9 😀", "x": "\\"}"#,
            "{\n\t\"a\" : [ ] ,\r\n \"b\" : { } }",
            r#"{"name": "a", "name": "b", "n": -0.0, "m": 12345678901234567890}"#,
            r#"["\\\\\\", "\"\"\"", "]]]]", "{{{{"]"#,
        ];
        for piece in pieces {
            check(piece);
            // At every offset in a block, and across block edges.
            for pad in [1, 30, 62, 63, 64, 65, 127, 128] {
                let padded = format!("[{}{piece}]", " ".repeat(pad));
                check(&padded);
                let long = format!(r#"{{"s": "{}", "v": {piece}}}"#, "\\\\x\\\"".repeat(pad));
                check(&long);
            }
        }
        // A backslash run ending at every place around a block edge.
        for run in 0..70 {
            for pad in 0..70 {
                let text = format!(
                    r#"{{"{}": "{}{}", "x": ["]"]}} tail"#,
                    " ".repeat(pad),
                    "a".repeat(pad % 7),
                    "\\\\".repeat(run)
                );
                check(&text);
                let text = format!(
                    r#"["{}{}\"]", "]"] tail"#,
                    " ".repeat(pad),
                    "\\\\".repeat(run)
                );
                check(&text);
            }
        }
        let deep = format!("{}{}", "[".repeat(500), "]".repeat(500));
        check(&deep);
    }

    #[test]
    fn a_value_cut_short_is_open() {
        let text = r#"{"a": ["x", {"b": "}]"}], "c": 1}"#;
        for cut in 1..text.len() {
            assert_eq!(container_len(&text.as_bytes()[..cut]), Scanned::Open);
        }
        assert_eq!(container_len(text.as_bytes()), Scanned::Len(text.len()));
        // A string that never closes hides the brackets after it.
        let long = format!(r#"["{}]]]]"#, "x".repeat(200));
        assert_eq!(container_len(long.as_bytes()), Scanned::Open);
    }

    #[test]
    fn a_backslash_outside_a_string_is_left_to_a_byte_loop() {
        for text in [r#"[\"]"#, r#"{"a": 1, \ }"#, r#"["x"\]"#] {
            assert_eq!(container_len(text.as_bytes()), Scanned::Unsure, "{text}");
        }
    }

    #[test]
    fn string_ends_are_found_as_a_byte_loop_finds_them() {
        // Each byte kind, at every place of texts up to 19 bytes, so that
        // the end falls in each byte of a word and in the padded tail.
        let kinds: [&[u8]; 8] = [
            b"a",
            b"\"",
            b"\\",
            b"\x01",
            b"\x1f",
            b"\x7f",
            "é".as_bytes(),
            b" ",
        ];
        for len in 0..20 {
            for (at, kind) in (0..len).flat_map(|at| kinds.iter().map(move |kind| (at, kind))) {
                let mut text = vec![b'x'; len];
                text.splice(at..at + 1, kind.iter().copied());
                for other in [None, Some(b'"'), Some(0x05), Some(0xe9)] {
                    let mut text = text.clone();
                    text.extend(other);
                    let by_bytes = text
                        .iter()
                        .position(|&b| b == b'"' || b == b'\\')
                        .map(|end| (end, text[..end].iter().all(|&b| (0x20..0x80).contains(&b))));
                    assert_eq!(string_end(&text), by_bytes, "{text:?}");
                }
            }
        }
    }
}
