//! Fast paths of the JUnit XML reading for what JUnit writers write: a test
//! case that is one plainly written empty element, and plainly written
//! attributes. Each reads exactly what quick-xml would read from the same
//! bytes and declines anything else, which then goes through quick-xml.
//! quick-xml's events and attribute iterator were most of the time spent per
//! test case.
use std::borrow::Cow;

/// XML whitespace, as quick-xml reads it.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\r' | b'\n' | b'\t')
}

/// Bytes of the attribute names [`empty_testcase`] takes: those of every
/// JUnit writer, and none that quick-xml's element scan treats specially.
const KEY_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b':' | b'.' | b'-');
        b += 1;
    }
    table
};

/// The `<testcase>` attributes the JUnit reader takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slot {
    Name,
    Classname,
    Time,
    File,
    Line,
    Status,
}

impl Slot {
    /// The attribute of a local name.
    #[inline(always)]
    pub(super) fn of(local: &[u8]) -> Option<Slot> {
        match local {
            b"name" => Some(Slot::Name),
            b"classname" => Some(Slot::Classname),
            b"time" => Some(Slot::Time),
            b"file" => Some(Slot::File),
            b"line" => Some(Slot::Line),
            b"status" | b"result" => Some(Slot::Status),
            _ => None,
        }
    }
}

/// Attribute names of a `<testcase>` as JUnit writers write them, each
/// looked for whole before a name is read byte by byte, and their
/// [`Slot::of`].
const KNOWN_KEYS: [(&[u8], Slot); 5] = [
    (b"classname", Slot::Classname),
    (b"name", Slot::Name),
    (b"time", Slot::Time),
    (b"file", Slot::File),
    (b"line", Slot::Line),
];

/// The length of the attribute name at the start of `rest`: up to its first
/// byte that is not in [`KEY_BYTE`]; and its slot when it is a known name.
fn key_len(rest: &[u8]) -> Option<(usize, Option<Slot>)> {
    // A known name followed by `=` ends there ('=' is not a key byte).
    for (key, slot) in KNOWN_KEYS {
        if rest.get(key.len()) == Some(&b'=') && rest.starts_with(key) {
            return Some((key.len(), Some(slot)));
        }
    }
    let len = rest.iter().position(|&b| !KEY_BYTE[usize::from(b)])?;
    Some((len, None))
}

/// A plainly written empty `<testcase …/>` at the start of `bytes`, maybe
/// after whitespace: calls `f` with each attribute's qualified name, its
/// [`Slot`] when the name is one of [`KNOWN_KEYS`] (found while looking for
/// its end, so the caller need not match it again), and its raw value, as
/// quick-xml's attribute iterator gives them; `classname`, if not empty, is
/// the raw value the `classname` attribute likely has (the case before's),
/// ASCII with no quote of either kind and no `&`, compared whole before
/// the value's end is searched for. Returns the
/// length of the whole. From such bytes quick-xml reads a whitespace text
/// event and then one `Empty` event with those attributes. `None` for
/// anything else, including an element cut off by the end of `bytes`, maybe
/// after some calls.
pub(super) fn empty_testcase<'a>(
    bytes: &'a [u8],
    classname: &[u8],
    mut f: impl FnMut(&'a [u8], Option<Slot>, RawValue<'a>),
) -> Option<usize> {
    const OPEN: &[u8] = b"<testcase";
    let start = bytes.iter().position(|&b| !is_space(b))?;
    let tag = bytes[start..].strip_prefix(OPEN)?;
    let mut at = 0;
    loop {
        let rest = &tag[at..];
        let spaces = rest.iter().position(|&b| !is_space(b))?;
        let rest = &rest[spaces..];
        if rest.starts_with(b"/>") {
            return Some(start + OPEN.len() + at + spaces + 2);
        }
        // The name ends at whitespace: `<testcasex…` is another element.
        if at == 0 && spaces == 0 {
            return None;
        }
        let (key, slot) = key_len(rest)?;
        let (quote, value_and_rest) = match &rest[key..] {
            [b'=', quote @ (b'"' | b'\''), value_and_rest @ ..] if key > 0 => {
                (*quote, value_and_rest)
            }
            _ => return None,
        };
        let value = match value_and_rest.get(classname.len()) {
            // What `up_to` finds: `classname` has neither quote, so this
            // one ends there, and it is plain.
            Some(&end)
                if slot == Some(Slot::Classname)
                    && !classname.is_empty()
                    && end == quote
                    && value_and_rest.starts_with(classname) =>
            {
                RawValue {
                    raw: &value_and_rest[..classname.len()],
                    plain: true,
                }
            }
            _ => RawValue::up_to(quote, value_and_rest)?,
        };
        f(&rest[..key], slot, value);
        at += spaces + key + 2 + value.raw.len() + 1;
    }
}

/// Calls `f` with each (qualified name, raw value) of the attribute text of a
/// tag (what follows its name) when every attribute is plainly written:
/// `name="value"` or `name='value'`, separated by whitespace or nothing.
/// Returns false, maybe after some calls, at anything else (spaces around
/// `=`, a missing quote); quick-xml's iterator reads the same pairs from
/// plain text, a sixth of the cost of a test case.
pub(super) fn plain_attributes<'a>(
    mut rest: &'a [u8],
    mut f: impl FnMut(&'a [u8], RawValue<'a>),
) -> bool {
    /// XML whitespace (as quick-xml reads it), and `=` where noted.
    const SPACE: u8 = 1;
    const KEY_END: u8 = 2;
    const CLASS: [u8; 256] = {
        let mut class = [0; 256];
        let mut i = 0;
        let spaces = [b' ', b'\r', b'\n', b'\t'];
        while i < spaces.len() {
            class[spaces[i] as usize] = SPACE | KEY_END;
            i += 1;
        }
        class[b'=' as usize] = KEY_END;
        class
    };
    let is = |b: u8, what: u8| CLASS[usize::from(b)] & what != 0;
    loop {
        match rest.iter().position(|&b| !is(b, SPACE)) {
            Some(start) => rest = &rest[start..],
            None => return true,
        }
        // quick-xml takes the key's first byte whatever it is.
        let Some(end) = rest[1..].iter().position(|&b| is(b, KEY_END)) else {
            return false;
        };
        let (key, after) = rest.split_at(end + 1);
        let (quote, value_and_rest) = match after {
            [b'=', quote @ (b'"' | b'\''), value_and_rest @ ..] => (*quote, value_and_rest),
            _ => return false,
        };
        let Some(value) = RawValue::up_to(quote, value_and_rest) else {
            return false;
        };
        f(key, value);
        rest = &value_and_rest[value.raw.len() + 1..];
    }
}

/// An attribute's raw value, and whether it is plain: ASCII without `&`,
/// which decodes to itself. The fast paths learn that while they look for
/// the value's end, so it is not scanned again.
#[derive(Debug, Clone, Copy)]
pub(super) struct RawValue<'a> {
    raw: &'a [u8],
    plain: bool,
}

impl<'a> RawValue<'a> {
    pub(super) fn new(raw: &'a [u8]) -> Self {
        RawValue {
            raw,
            plain: is_plain_ascii(raw),
        }
    }

    /// The bytes of `rest` before its first `quote`, if it has one: what
    /// `memchr` and [`is_plain_ascii`] would find, in one pass of eight
    /// bytes at a time.
    fn up_to(quote: u8, rest: &'a [u8]) -> Option<Self> {
        // A byte of `zeros(w)` has its high bit set where `w` has a zero
        // byte, and maybe above one (a borrow), never below the first.
        let zeros = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
        let quotes = ONES * u64::from(quote);
        // High bits of the bytes seen that are `&` or not ASCII (maybe more
        // above a true one).
        let mut special = 0;
        let mut words = rest.chunks_exact(8);
        let mut at = 0;
        for word in &mut words {
            let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
            let specials = zeros(w ^ AMPERSANDS) | (w & HIGH);
            let quoted = zeros(w ^ quotes);
            if quoted != 0 {
                // The bits below the first quote's.
                let before = (quoted & quoted.wrapping_neg()) - 1;
                let len = at + (quoted.trailing_zeros() / 8) as usize;
                return Some(RawValue {
                    raw: &rest[..len],
                    plain: special | (specials & before) == 0,
                });
            }
            special |= specials;
            at += 8;
        }
        let tail = words.remainder();
        let len = at + tail.iter().position(|&b| b == quote)?;
        Some(RawValue {
            raw: &rest[..len],
            plain: special == 0 && is_plain_ascii(&rest[at..len]),
        })
    }

    /// The raw bytes, as quick-xml's attribute iterator gives them.
    #[cfg(test)]
    pub(super) fn raw(self) -> &'a [u8] {
        self.raw
    }

    /// The value with entities decoded; the raw text (invalid UTF-8
    /// replaced) if it does not decode.
    #[inline]
    pub(super) fn decode(self) -> Cow<'a, str> {
        // Nearly every value is plain: nothing to unescape and no UTF-8 to check.
        if self.plain {
            // SAFETY: `plain` values are ASCII, which is UTF-8.
            return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(self.raw) });
        }
        self.decode_escaped()
    }

    /// [`RawValue::decode`] of a value that is not plain.
    #[cold]
    fn decode_escaped(self) -> Cow<'a, str> {
        // What quick-xml's `unescape_value` does: decode UTF-8, then entities.
        let decoded = match std::str::from_utf8(self.raw) {
            Ok(text) => quick_xml::escape::unescape(text).ok(),
            Err(_) => None,
        };
        decoded.unwrap_or_else(|| String::from_utf8_lossy(self.raw))
    }
}

/// An attribute's value with entities decoded ([`RawValue::decode`]).
pub(super) fn attr_value(raw: &[u8]) -> Cow<'_, str> {
    RawValue::new(raw).decode()
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;
const AMPERSANDS: u64 = ONES * b'&' as u64;

/// Whether `bytes` are all ASCII and none is `&`, tested eight at a time.
fn is_plain_ascii(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for word in &mut words {
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        // A byte of `w ^ AMPERSANDS` is zero where `w` has `&`; for bytes
        // below 0x80 (checked first) the subtraction finds exactly those.
        let x = w ^ AMPERSANDS;
        if w & HIGH != 0 || x.wrapping_sub(ONES) & !x & HIGH != 0 {
            return false;
        }
    }
    words.remainder().iter().all(|&b| b != b'&' && b.is_ascii())
}

/// The part of a qualified name after its first `:`, as quick-xml's
/// `local_name` gives it, without the cost of a `memchr` call on a few bytes.
pub(super) fn local_name(qualified: &[u8]) -> &[u8] {
    match qualified.iter().position(|&b| b == b':') {
        Some(colon) => &qualified[colon + 1..],
        None => qualified,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_ascii_is_found_at_every_offset() {
        let naive = |bytes: &[u8]| bytes.iter().all(|&b| b != b'&' && b.is_ascii());
        for len in 0..24 {
            for at in 0..len {
                for special in [b'&', 0x80, 0xC3, 0xFF, b'%', b'\'', 0x7F, 0x25, 0x27] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = special;
                    assert_eq!(is_plain_ascii(&bytes), naive(&bytes), "{bytes:?}");
                }
            }
            assert!(is_plain_ascii(&vec![b'z'; len]));
        }
    }

    #[test]
    fn value_ends_and_plainness_are_found_at_every_offset() {
        let naive = |quote: u8, bytes: &[u8]| {
            let len = memchr::memchr(quote, bytes)?;
            Some((len, bytes[..len].iter().all(|&b| b != b'&' && b.is_ascii())))
        };
        for len in 0..24 {
            for special_at in 0..=len {
                for quote_at in 0..=len {
                    for special in [b'&', 0x80, 0xC3, 0xFF, b'%', 0x27, 0x22, 0x25, 0x7F] {
                        for quote in [b'"', b'\''] {
                            let mut bytes = vec![b'a'; len];
                            if special_at < len {
                                bytes[special_at] = special;
                            }
                            if quote_at < len {
                                bytes[quote_at] = quote;
                            }
                            let ours =
                                RawValue::up_to(quote, &bytes).map(|v| (v.raw.len(), v.plain));
                            assert_eq!(ours, naive(quote, &bytes), "{quote} {bytes:?}");
                        }
                    }
                }
            }
        }
    }
}
