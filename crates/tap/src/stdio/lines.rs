//! Lines of one direction of the stdio tap, cut from reads as they come:
//! whole lines up to a bound, and the pieces of a longer line as they are
//! read, marked (they pass untouched). Each byte is searched for a `\n`
//! once, however many reads a line takes.

use bytes::{Bytes, BytesMut};

/// The bytes read so far of the line in progress.
pub(crate) struct Lines {
    partial: BytesMut,
    /// Bytes at the start of `partial` already searched (no `\n` there).
    scanned: usize,
    /// The line in progress was too long to hold and passes in pieces.
    passing: bool,
    max: usize,
}

impl Lines {
    /// Lines held whole up to `max` bytes.
    pub(crate) fn new(max: usize) -> Lines {
        Lines {
            partial: BytesMut::new(),
            scanned: 0,
            passing: false,
            max,
        }
    }

    /// Whole lines (with their `\n`) in `chunk`, each with `false`; a piece
    /// of a line too long to hold with `true`, as soon as it is read.
    pub(crate) fn split(&mut self, chunk: &[u8], mut out: impl FnMut(Bytes, bool)) {
        self.partial.extend_from_slice(chunk);
        while let Some(at) = self.partial[self.scanned..]
            .iter()
            .position(|&b| b == b'\n')
        {
            let line = self.partial.split_to(self.scanned + at + 1).freeze();
            self.scanned = 0;
            out(line, std::mem::take(&mut self.passing));
        }
        self.scanned = self.partial.len();
        let too_long = self.passing || self.partial.len() > self.max;
        if too_long && !self.partial.is_empty() {
            self.passing = true;
            self.scanned = 0;
            out(self.partial.split().freeze(), true);
        }
    }

    /// What is left after the last `\n`, at the end of the stream.
    pub(crate) fn rest(&mut self) -> Option<Bytes> {
        self.scanned = 0;
        (!self.partial.is_empty()).then(|| self.partial.split().freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Everything `lines` makes of `chunks`, in order, and the rest.
    fn cut(max: usize, chunks: &[&[u8]]) -> Vec<(Vec<u8>, bool)> {
        let mut lines = Lines::new(max);
        let mut got = Vec::new();
        for chunk in chunks {
            lines.split(chunk, |line, passing| got.push((line.to_vec(), passing)));
        }
        got.extend(lines.rest().map(|rest| (rest.to_vec(), false)));
        got
    }

    #[test]
    fn lines_come_whole_whatever_the_reads() {
        let got = cut(
            64,
            &[b"{\"a\"", b":1}\n{\"b\":2}\n{", b"\"c\"", b":3}\ntail"],
        );
        let lines: Vec<&[u8]> = got.iter().map(|(l, _)| l.as_slice()).collect();
        assert_eq!(
            lines,
            [&b"{\"a\":1}\n"[..], b"{\"b\":2}\n", b"{\"c\":3}\n", b"tail"]
        );
        assert!(got.iter().all(|(_, passing)| !passing));
    }

    #[test]
    fn a_long_line_passes_in_pieces_as_read_then_lines_resume() {
        let chunks: Vec<Vec<u8>> = (0..10).map(|_| vec![b'x'; 7]).collect();
        let mut input: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
        input.push(b"x\nnext\n");
        let got = cut(16, &input);
        // Held until past 16 bytes (three reads), then each read as it comes.
        let sizes: Vec<(usize, bool)> = got.iter().map(|(l, p)| (l.len(), *p)).collect();
        assert_eq!(
            sizes,
            [
                (21, true),
                (7, true),
                (7, true),
                (7, true),
                (7, true),
                (7, true),
                (7, true),
                (7, true),
                (2, true),
                (5, false)
            ]
        );
        let whole: Vec<u8> = got[..9].iter().flat_map(|(l, _)| l.clone()).collect();
        assert_eq!(whole, [vec![b'x'; 71], b"\n".to_vec()].concat());
    }

    #[test]
    fn bytes_read_one_at_a_time_are_searched_once() {
        let mut lines = Lines::new(1 << 20);
        let mut got = Vec::new();
        for b in b"ab\ncd\n" {
            lines.split(&[*b], |line, _| got.push(line));
            assert_eq!(lines.scanned, lines.partial.len());
        }
        assert_eq!(got, [&b"ab\n"[..], b"cd\n"]);
    }
}
