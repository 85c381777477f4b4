//! Cutting a body into messages as it passes, without holding any of it:
//! each chunk is scanned once, and what comes out is ranges of that chunk
//! (which the copier hands on as `Bytes` slices) and message ends.
//!
//! - JSON: the whole body is one message.
//! - An event stream: each event is one message — its field lines with
//!   their line ends, without the blank line that ends it. Line ends are
//!   `\n`, `\r\n` or `\r`, and may be cut between two chunks.
//! - Lines (stdio): each line is one message, without its `\n`.

use crate::event::BodyFraming;
use std::ops::Range;

/// What a chunk holds for the message in progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// These bytes of the chunk belong to the message in progress.
    Data(Range<usize>),
    /// The message in progress ended (it had at least one byte).
    End,
}

#[derive(Debug)]
pub(crate) struct Cutter {
    framing: BodyFraming,
    /// The message in progress has bytes.
    in_message: bool,
    /// No byte of the current line yet (a line end now is a blank line).
    line_empty: bool,
    /// The last chunk ended in `\r`: a `\n` first in the next chunk ends
    /// the same line. `Some(true)` when that line end belongs to the
    /// message (it ended a field line), `Some(false)` when it was a blank
    /// line's (which no message keeps).
    cr_pending: Option<bool>,
}

impl Cutter {
    pub(crate) fn new(framing: BodyFraming) -> Cutter {
        Cutter {
            framing,
            in_message: false,
            line_empty: true,
            cr_pending: None,
        }
    }

    /// Whether this body carries messages at all.
    pub(crate) fn observes(&self) -> bool {
        self.framing != BodyFraming::Other
    }

    /// Scan the next chunk of the body.
    pub(crate) fn cut(&mut self, chunk: &[u8], mut out: impl FnMut(Piece)) {
        if chunk.is_empty() {
            return;
        }
        match self.framing {
            BodyFraming::Json => {
                self.in_message = true;
                out(Piece::Data(0..chunk.len()));
            }
            BodyFraming::EventStream => self.cut_events(chunk, &mut out),
            BodyFraming::Lines => self.cut_lines(chunk, &mut out),
            BodyFraming::Other => {}
        }
    }

    /// The body ended: whether a message was in progress, and so whether
    /// it ended with the body (JSON: that is its end; events and lines: it
    /// was cut short).
    pub(crate) fn finish(&mut self) -> Option<Ending> {
        let pending = std::mem::replace(&mut self.in_message, false);
        self.line_empty = true;
        self.cr_pending = None;
        pending.then_some(match self.framing {
            BodyFraming::Json => Ending::Complete,
            _ => Ending::CutShort,
        })
    }

    fn cut_events(&mut self, chunk: &[u8], out: &mut impl FnMut(Piece)) {
        let mut start = 0;
        let mut i = 0;
        if let Some(kept) = self.cr_pending.take() {
            if chunk[0] == b'\n' {
                i = 1;
                if !kept {
                    start = 1;
                }
            }
        }
        while let Some(found) = chunk[i..].iter().position(|&b| b == b'\n' || b == b'\r') {
            let at = i + found;
            if found > 0 {
                self.line_empty = false;
            }
            let (next, cr_at_end) = line_end(chunk, at);
            if self.line_empty {
                // A blank line: the event ends before it; its line end
                // belongs to no message.
                self.emit(start..at, out);
                if std::mem::replace(&mut self.in_message, false) {
                    out(Piece::End);
                }
                start = next;
                if cr_at_end {
                    self.cr_pending = Some(false);
                }
            } else {
                // A field line ends; its line end stays in the message.
                self.line_empty = true;
                self.in_message = true;
                if cr_at_end {
                    self.cr_pending = Some(true);
                }
            }
            i = next;
        }
        if i < chunk.len() {
            self.line_empty = false;
        }
        self.emit(start..chunk.len(), out);
    }

    fn cut_lines(&mut self, chunk: &[u8], out: &mut impl FnMut(Piece)) {
        let mut start = 0;
        while let Some(found) = chunk[start..].iter().position(|&b| b == b'\n') {
            let at = start + found;
            self.emit(start..at, out);
            if std::mem::replace(&mut self.in_message, false) {
                out(Piece::End);
            }
            start = at + 1;
        }
        self.emit(start..chunk.len(), out);
    }

    fn emit(&mut self, range: Range<usize>, out: &mut impl FnMut(Piece)) {
        if !range.is_empty() {
            self.in_message = true;
            out(Piece::Data(range));
        }
    }
}

/// How a message in progress ended with its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    Complete,
    CutShort,
}

/// Where the line end at `at` (`\n`, `\r` or `\r\n`) ends, and whether it
/// is a `\r` last in the chunk (its `\n` may be first in the next).
fn line_end(chunk: &[u8], at: usize) -> (usize, bool) {
    if chunk[at] == b'\n' {
        return (at + 1, false);
    }
    match chunk.get(at + 1) {
        Some(b'\n') => (at + 2, false),
        Some(_) => (at + 1, false),
        None => (at + 1, true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The messages a body yields when cut into the given chunks, and
    /// whether one was left in progress at its end.
    fn messages(framing: BodyFraming, chunks: &[&[u8]]) -> (Vec<Vec<u8>>, Option<Ending>) {
        let mut cutter = Cutter::new(framing);
        let mut done = Vec::new();
        let mut current = Vec::new();
        for chunk in chunks {
            cutter.cut(chunk, |piece| match piece {
                Piece::Data(r) => current.extend_from_slice(&chunk[r]),
                Piece::End => done.push(std::mem::take(&mut current)),
            });
        }
        let end = cutter.finish();
        if end.is_some() {
            done.push(current);
        }
        (done, end)
    }

    /// Every way of cutting `body` in two.
    fn every_split(body: &[u8]) -> impl Iterator<Item = [&[u8]; 2]> {
        (0..=body.len()).map(move |at| [&body[..at], &body[at..]])
    }

    #[test]
    fn a_json_body_is_one_message_however_it_is_cut() {
        let body = br#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        for chunks in every_split(body) {
            let (got, end) = messages(BodyFraming::Json, &chunks);
            assert_eq!(got, vec![body.to_vec()]);
            assert_eq!(end, Some(Ending::Complete));
        }
        assert_eq!(messages(BodyFraming::Json, &[b""]), (vec![], None));
    }

    #[test]
    fn events_are_cut_at_blank_lines_with_every_line_end() {
        for (body, want) in [
            (
                &b"event: message\ndata: {\"a\":1}\n\ndata: two\n\n"[..],
                vec![&b"event: message\ndata: {\"a\":1}\n"[..], b"data: two\n"],
            ),
            (
                b"data: a\r\n\r\ndata: b\r\nid: 7\r\n\r\n",
                vec![b"data: a\r\n", b"data: b\r\nid: 7\r\n"],
            ),
            (b"data: a\r\rdata: b\r\r", vec![b"data: a\r", b"data: b\r"]),
            (b"\n\n\r\n: ping\n\n\n", vec![b": ping\n"]),
            (
                b"data: a\n\r\ndata: b\r\n\rdata: c\r\r\n",
                vec![b"data: a\n", b"data: b\r\n", b"data: c\r"],
            ),
        ] {
            for chunks in every_split(body) {
                let (got, end) = messages(BodyFraming::EventStream, &chunks);
                assert_eq!(
                    got,
                    want,
                    "{:?} cut as {chunks:?}",
                    String::from_utf8_lossy(body)
                );
                assert_eq!(end, None);
            }
        }
    }

    #[test]
    fn an_event_cut_off_by_the_end_of_the_stream_is_cut_short() {
        let (got, end) = messages(BodyFraming::EventStream, &[b"data: a\n\ndata: b"]);
        assert_eq!(got, vec![b"data: a\n".to_vec(), b"data: b".to_vec()]);
        assert_eq!(end, Some(Ending::CutShort));
        let (got, end) = messages(BodyFraming::EventStream, &[b"data: a\n\ndata: b\n"]);
        assert_eq!(got.last().map(Vec::as_slice), Some(&b"data: b\n"[..]));
        assert_eq!(end, Some(Ending::CutShort));
    }

    #[test]
    fn byte_by_byte_is_the_same_as_whole() {
        let body = b"id: 1\r\ndata: {}\r\n\r\n\r\n:c\rdata: x\n\ndata: y\r\n\r";
        let whole = messages(BodyFraming::EventStream, &[body]);
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(messages(BodyFraming::EventStream, &bytes), whole);
        assert_eq!(whole.0.len(), 3);
    }

    #[test]
    fn lines_are_messages_without_their_newline() {
        let body = b"{\"id\":1}\n\n{\"id\":2}\r\n{\"id\":3}";
        for chunks in every_split(body) {
            let (got, end) = messages(BodyFraming::Lines, &chunks);
            assert_eq!(
                got,
                vec![
                    b"{\"id\":1}".to_vec(),
                    b"{\"id\":2}\r".to_vec(),
                    b"{\"id\":3}".to_vec()
                ]
            );
            assert_eq!(end, Some(Ending::CutShort));
        }
    }

    #[test]
    fn other_bodies_are_not_cut() {
        assert_eq!(messages(BodyFraming::Other, &[b"<html>"]), (vec![], None));
    }
}
