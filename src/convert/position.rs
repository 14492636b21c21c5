//! Line and column of a byte position in a stream that is never kept whole.
use std::collections::VecDeque;
use std::io::{self, BufRead, Read};

/// A `BufRead` that counts the lines it hands out, so a byte position from the
/// parser can be told as line and column without keeping the text. The last
/// [`Counted::RECENT`] newline offsets are kept; a position further back than
/// that is reported at the current line instead.
///
/// It has its own buffer so that consumed bytes stay readable until the next
/// refill: their newlines are counted then, in one pass over everything
/// consumed, rather than on each of the parser's many small `consume`s.
pub(crate) struct Counted<R> {
    inner: R,
    buf: Box<[u8]>,
    /// Next unread byte of `buf`.
    pos: usize,
    /// End of the valid bytes of `buf`.
    filled: usize,
    /// `buf[..counted]` is counted in `lines`; `buf[counted..pos]` is
    /// consumed but not counted yet.
    counted: usize,
    lines: Lines,
}

#[derive(Debug, Default, Clone)]
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
    const BUFFER: usize = 64 * 1024;

    pub(crate) fn new(inner: R) -> Self {
        Counted {
            inner,
            buf: vec![0; Self::BUFFER].into_boxed_slice(),
            pos: 0,
            filled: 0,
            counted: 0,
            lines: Lines::default(),
        }
    }

    /// What is read but not consumed yet, without reading more.
    pub(crate) fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..self.filled]
    }

    /// 1-based line and byte column of byte `pos`.
    pub(crate) fn line_column(&self, pos: u64) -> (u64, u64) {
        let pending = &self.buf[self.counted..self.pos];
        if pending.is_empty() {
            return self.lines.line_column(pos);
        }
        // Counting in two steps gives what one step would have.
        let mut lines = self.lines.clone();
        lines.count(pending);
        lines.line_column(pos)
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.filled {
            self.lines.count(&self.buf[self.counted..self.pos]);
            self.pos = 0;
            self.filled = 0;
            self.counted = 0;
            self.filled = self.inner.read(&mut self.buf)?;
        }
        Ok(&self.buf[self.pos..self.filled])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.filled);
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
    fn counts_across_refills() {
        /// Hands out three bytes per read.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(out.len()).min(3);
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut counted = Counted::new(Trickle(b"ab\ncd\nef\ngh"));
        let mut read = Vec::new();
        loop {
            let chunk = counted.fill_buf().unwrap();
            if chunk.is_empty() {
                break;
            }
            let n = chunk.len().min(2);
            read.extend_from_slice(&chunk[..n]);
            counted.consume(n);
        }
        assert_eq!(read, b"ab\ncd\nef\ngh");
        assert_eq!(counted.line_column(7), (3, 2));
        assert_eq!(counted.line_column(10), (4, 2));
    }

    #[test]
    fn counts_what_the_parser_consumes() {
        let mut counted = Counted::new(&b"a\nb\nc"[..]);
        let n = counted.fill_buf().unwrap().len();
        counted.consume(n);
        assert_eq!(counted.line_column(4), (3, 1));
    }
}
