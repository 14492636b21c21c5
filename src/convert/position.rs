//! Line and column of a byte position in a stream that is never kept whole.
use std::collections::VecDeque;
use std::io::{self, BufRead, Read};

/// A `BufRead` that counts the lines it hands out, so a byte position from the
/// parser can be told as line and column without keeping the text. The last
/// [`Counted::RECENT`] newline offsets are kept; a position further back than
/// that is reported at the current line instead.
pub(crate) struct Counted<R> {
    inner: R,
    lines: Lines,
}

#[derive(Debug, Default)]
pub(crate) struct Lines {
    consumed: u64,
    newlines: u64,
    recent: VecDeque<u64>,
}

impl Lines {
    pub(crate) fn count(&mut self, bytes: &[u8]) {
        for i in memchr::memchr_iter(b'\n', bytes) {
            if self.recent.len() == Counted::<()>::RECENT {
                self.recent.pop_front();
            }
            self.recent.push_back(self.consumed + i as u64);
            self.newlines += 1;
        }
        self.consumed += bytes.len() as u64;
    }

    /// 1-based line and column of byte `pos`.
    pub(crate) fn line_column(&self, pos: u64) -> (u64, u64) {
        let pos = pos.min(self.consumed);
        let after = self
            .recent
            .iter()
            .rev()
            .take_while(|&&nl| nl >= pos)
            .count();
        let before_in_ring = self.recent.len() - after;
        if before_in_ring > 0 {
            (
                self.newlines - after as u64 + 1,
                pos - self.recent[before_in_ring - 1],
            )
        } else if self.newlines == after as u64 {
            (1, pos + 1)
        } else {
            let last = self.recent.back().copied().unwrap_or(0);
            (self.newlines + 1, self.consumed - last)
        }
    }
}

impl<R> Counted<R> {
    const RECENT: usize = 1 << 16;

    pub(crate) fn new(inner: R) -> Self {
        Counted {
            inner,
            lines: Lines::default(),
        }
    }

    /// 1-based line and byte column of byte `pos`.
    pub(crate) fn line_column(&self, pos: u64) -> (u64, u64) {
        self.lines.line_column(pos)
    }
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.lines.count(&buf[..n]);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if amt > 0 {
            // The bytes being consumed are still at the front of the buffer;
            // asking for it again does no I/O.
            if let Ok(buf) = self.inner.fill_buf() {
                self.lines.count(&buf[..amt.min(buf.len())]);
            }
        }
        self.inner.consume(amt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counter_resolves_recent_and_old_positions() {
        let mut lines = Lines::default();
        lines.count(b"ab\ncd\nef");
        assert_eq!(lines.line_column(0), (1, 1));
        assert_eq!(lines.line_column(3), (2, 1));
        assert_eq!(lines.line_column(7), (3, 2));
        assert_eq!(lines.line_column(100), (3, 3));
    }

    #[test]
    fn positions_older_than_the_window_fall_back_to_the_end() {
        let mut lines = Lines::default();
        let text = "x\n".repeat(Counted::<()>::RECENT + 10);
        lines.count(text.as_bytes());
        let last_line = Counted::<()>::RECENT as u64 + 11;
        assert_eq!(lines.line_column(0), (last_line, 1));
        assert_eq!(lines.line_column(text.len() as u64 - 2), (last_line - 1, 1));
    }

    #[test]
    fn counts_what_the_parser_consumes() {
        let mut counted = Counted::new(&b"a\nb\nc"[..]);
        let n = counted.fill_buf().unwrap().len();
        counted.consume(n);
        assert_eq!(counted.line_column(4), (3, 1));
    }
}
