//! The terminal as the human view sees it: ANSI colours (or none), the
//! width of the window, and text cut to fit a line.
use std::fmt::Write as _;

/// A colour or weight for a piece of text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Paint {
    Green,
    Red,
    Yellow,
    Cyan,
    Magenta,
    Dim,
    Bold,
    /// Bold red: a heading of the failures.
    Alarm,
}

impl Paint {
    fn code(self) -> &'static str {
        match self {
            Paint::Green => "32",
            Paint::Red => "31",
            Paint::Yellow => "33",
            Paint::Cyan => "36",
            Paint::Magenta => "35",
            Paint::Dim => "2",
            Paint::Bold => "1",
            Paint::Alarm => "1;31",
        }
    }
}

/// Writes painted text when colour is on, plain text otherwise.
#[derive(Debug, Clone, Copy)]
pub(super) struct Style {
    pub color: bool,
}

impl Style {
    /// Appends `text` in `paint` to `out`.
    pub(super) fn push(self, out: &mut String, paint: Paint, text: &str) {
        if self.color && !text.is_empty() {
            let _ = write!(out, "\x1b[{}m{text}\x1b[0m", paint.code());
        } else {
            out.push_str(text);
        }
    }

    /// `text` in `paint`, as a new string.
    pub(super) fn paint(self, paint: Paint, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + 9);
        self.push(&mut out, paint, text);
        out
    }
}

/// The columns of the terminal on stdout, when it says; else `COLUMNS`,
/// else 80. Asked at every redraw, so a resized window is followed at once.
pub(super) fn width() -> usize {
    rustix::termios::tcgetwinsize(std::io::stdout())
        .ok()
        .map(|size| usize::from(size.ws_col))
        .filter(|&cols| cols > 0)
        .or_else(|| {
            let columns = std::env::var("COLUMNS").ok()?;
            columns.trim().parse().ok().filter(|&cols| cols > 0)
        })
        .unwrap_or(80)
}

/// The columns `c` takes in a terminal: two for CJK and emoji, none for a
/// combining mark.
fn columns_of(c: char) -> usize {
    unicode_width::UnicodeWidthChar::width(c).unwrap_or(0)
}

/// A name as it can be shown: its control characters (an escape sequence
/// in a test's title would clear the screen, a `\r` or `\n` break the
/// status line) written as escapes, `\x1b`, `\r`, `\n`.
pub(crate) fn printable(name: &str) -> std::borrow::Cow<'_, str> {
    if !name.chars().any(char::is_control) {
        return name.into();
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.into()
}

/// `text` cut to at most `columns` columns (escape codes count for
/// nothing, CJK and emoji two each), with `…` where it was cut.
pub(super) fn fit(text: &str, columns: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut shown = 0;
    let mut chars = text.chars().peekable();
    let mut cut = false;
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            // An SGR sequence: `ESC [ … m`, copied whole.
            out.push(c);
            for c in chars.by_ref() {
                out.push(c);
                if c == 'm' {
                    break;
                }
            }
            continue;
        }
        let wide = columns_of(c);
        if shown + wide >= columns && chars.peek().is_some() {
            cut = true;
            break;
        }
        out.push(c);
        shown += wide;
    }
    if cut {
        out.push('…');
        if out.contains('\x1b') {
            out.push_str("\x1b[0m");
        }
    }
    out
}

/// The columns `text` takes: its characters, escape codes left out.
pub(super) fn visible_len(text: &str) -> usize {
    let mut len = 0;
    let mut escape = false;
    for c in text.chars() {
        match (escape, c) {
            (false, '\x1b') => escape = true,
            (true, 'm') => escape = false,
            (true, _) => {}
            (false, '\r') => len = 0,
            (false, c) => len += columns_of(c),
        }
    }
    len
}

/// A duration for people: `0.012s`, `3.2s`, `1m 04s`.
pub(super) fn seconds(ms: u64) -> String {
    match ms {
        0..=9_999 => format!("{}.{:03}s", ms / 1000, ms % 1000),
        10_000..=59_999 => format!("{}.{}s", ms / 1000, ms % 1000 / 100),
        _ => format!("{}m {:02}s", ms / 60_000, ms % 60_000 / 1000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_only_when_asked() {
        assert_eq!(Style { color: false }.paint(Paint::Red, "x"), "x");
        assert_eq!(
            Style { color: true }.paint(Paint::Red, "x"),
            "\x1b[31mx\x1b[0m"
        );
    }

    #[test]
    fn fit_counts_visible_characters() {
        assert_eq!(fit("abcdef", 10), "abcdef");
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abcd", 4), "abcd");
        assert_eq!(
            fit("\x1b[31mabcdef\x1b[0m", 4),
            "\x1b[31mabc…\x1b[0m",
            "codes are kept and closed"
        );
        assert_eq!(fit("\x1b[31mab\x1b[0m", 4), "\x1b[31mab\x1b[0m");
    }

    #[test]
    fn visible_length_skips_codes() {
        assert_eq!(visible_len("\r\x1b[2K\x1b[1m RUN \x1b[0mab"), 7);
    }

    /// CJK and emoji take two columns, a combining mark none: a status
    /// line of them cut by characters would wrap and leave its first row
    /// behind at every redraw.
    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(visible_len("日本語"), 6);
        assert_eq!(visible_len("e\u{301}🎉"), 3);
        assert_eq!(fit("日本語のテスト", 7), "日本語…");
        assert_eq!(visible_len(&fit("日本語のテスト", 7)), 7);
        assert_eq!(fit("ab日本", 6), "ab日本");
    }

    /// A name's control characters are shown as escapes, never sent to the
    /// terminal; a name without any is borrowed as it is.
    #[test]
    fn names_are_shown_without_control_characters() {
        assert_eq!(
            printable("clears \x1b[2J\ra\tb\nc\u{7f}\u{9b}"),
            "clears \\x1b[2J\\ra\\tb\\nc\\x7f\\x9b"
        );
        assert!(matches!(
            printable("plain 日本"),
            std::borrow::Cow::Borrowed("plain 日本")
        ));
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(seconds(12), "0.012s");
        assert_eq!(seconds(3_210), "3.210s");
        assert_eq!(seconds(12_345), "12.3s");
        assert_eq!(seconds(64_000), "1m 04s");
    }
}
