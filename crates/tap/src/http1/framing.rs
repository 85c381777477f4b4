//! Where a message's body ends (RFC 9112 §6): no body, a length, chunked,
//! or until the connection closes; and the chunked transfer coding read
//! incrementally, each byte once, whatever the reads' sizes. Requests whose
//! framing is ambiguous (both a length and a transfer coding, lengths that
//! disagree) are refused rather than guessed at: the upstream must never
//! read a body differently from the tap.

use super::head::{values, Field};
use std::ops::Range;

/// How a body is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    None,
    Length(u64),
    Chunked,
    /// An answer that ends when the upstream closes the connection.
    UntilClose,
}

/// Framing that cannot be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ambiguous;

/// A request body's framing.
pub(crate) fn request(fields: &[Field]) -> Result<Framing, Ambiguous> {
    let length = content_length(fields)?;
    match (chunked_last(fields), length) {
        (Some(_), Some(_)) => Err(Ambiguous),
        (Some(true), None) => Ok(Framing::Chunked),
        // A request's transfer coding must end in chunked.
        (Some(false), None) => Err(Ambiguous),
        (None, Some(n)) => Ok(Framing::Length(n)),
        (None, None) => Ok(Framing::None),
    }
}

/// An answer body's framing, for a request with `head_request` (HEAD).
pub(crate) fn response(
    status: u16,
    head_request: bool,
    fields: &[Field],
) -> Result<Framing, Ambiguous> {
    if head_request || (100..200).contains(&status) || status == 204 || status == 304 {
        return Ok(Framing::None);
    }
    match chunked_last(fields) {
        Some(true) => return Ok(Framing::Chunked),
        Some(false) => return Ok(Framing::UntilClose),
        None => {}
    }
    Ok(match content_length(fields)? {
        Some(n) => Framing::Length(n),
        None => Framing::UntilClose,
    })
}

/// Whether the last transfer coding is `chunked` (None: no coding named).
fn chunked_last(fields: &[Field]) -> Option<bool> {
    let mut last = None;
    for value in values(fields, "transfer-encoding") {
        for coding in value.split(|&b| b == b',') {
            let coding = coding.trim_ascii();
            if !coding.is_empty() {
                last = Some(coding.eq_ignore_ascii_case(b"chunked"));
            }
        }
    }
    last
}

/// The `Content-Length`: every value (and list member) the same number.
fn content_length(fields: &[Field]) -> Result<Option<u64>, Ambiguous> {
    let mut found = None;
    for value in values(fields, "content-length") {
        for part in value.split(|&b| b == b',') {
            let part = part.trim_ascii();
            if part.is_empty() || part.len() > 19 || !part.iter().all(u8::is_ascii_digit) {
                return Err(Ambiguous);
            }
            let n = part.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'));
            if found.is_some_and(|f| f != n) {
                return Err(Ambiguous);
            }
            found = Some(n);
        }
    }
    Ok(found)
}

/// What the chunked decoder found in the bytes it was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Body bytes.
    Data(Range<usize>),
    /// A trailer field line, with its line end.
    Trailer(Range<usize>),
}

/// Bytes of a chunk-size line (with extensions) or of all trailers, at most.
const MAX_LINE: usize = 4096;
const MAX_TRAILERS: usize = 16 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size {
        digits: u8,
        ext: bool,
    },
    SizeLf,
    Data,
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final empty line).
    TrailerStart,
    Trailer,
    TrailerLf {
        empty: bool,
    },
    Done,
}

/// The chunked coding's grammar was broken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BadChunk;

/// How far one call got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progress {
    /// Bytes of the input that belong to this body (all of them unless
    /// the body ended: what follows is the next message's).
    pub(crate) consumed: usize,
    pub(crate) done: bool,
}

#[derive(Debug)]
pub(crate) struct Chunked {
    state: State,
    /// The chunk size being read, then the data left of the chunk.
    left: u64,
    line: usize,
    trailers: usize,
}

impl Chunked {
    pub(crate) fn new() -> Chunked {
        Chunked {
            state: State::Size {
                digits: 0,
                ext: false,
            },
            left: 0,
            line: 0,
            trailers: 0,
        }
    }

    /// Read `input`, reporting its data and trailer lines to `out` (a
    /// trailer line cut between two inputs is reported in two parts).
    pub(crate) fn feed(
        &mut self,
        input: &[u8],
        mut out: impl FnMut(Piece),
    ) -> Result<Progress, BadChunk> {
        let in_trailer = matches!(
            self.state,
            State::Trailer | State::TrailerLf { empty: false }
        );
        let mut trailer_from = in_trailer.then_some(0);
        let mut i = 0;
        while i < input.len() {
            if self.state == State::Data {
                let take = (input.len() - i).min(usize::try_from(self.left).unwrap_or(usize::MAX));
                out(Piece::Data(i..i + take));
                i += take;
                self.left -= take as u64;
                if self.left == 0 {
                    self.state = State::DataCr;
                }
                continue;
            }
            let before = self.state;
            self.step(input[i])?;
            i += 1;
            match (before, self.state) {
                (_, State::Done) => {
                    return Ok(Progress {
                        consumed: i,
                        done: true,
                    })
                }
                (State::TrailerStart, State::Trailer) => trailer_from = Some(i - 1),
                (State::TrailerLf { .. }, State::TrailerStart) => {
                    out(Piece::Trailer(trailer_from.take().unwrap_or(0)..i));
                }
                _ => {}
            }
        }
        if let Some(from) = trailer_from {
            out(Piece::Trailer(from..input.len()));
        }
        Ok(Progress {
            consumed: input.len(),
            done: false,
        })
    }

    fn step(&mut self, b: u8) -> Result<(), BadChunk> {
        self.state = match self.state {
            State::Size { digits, ext } => self.size_byte(b, digits, ext)?,
            State::SizeLf if b == b'\n' => {
                if self.left == 0 {
                    State::TrailerStart
                } else {
                    State::Data
                }
            }
            State::DataCr if b == b'\r' => State::DataLf,
            State::DataLf if b == b'\n' => {
                self.line = 0;
                State::Size {
                    digits: 0,
                    ext: false,
                }
            }
            State::TrailerStart if b == b'\r' => State::TrailerLf { empty: true },
            State::TrailerStart | State::Trailer => {
                self.trailers += 1;
                if self.trailers > MAX_TRAILERS {
                    return Err(BadChunk);
                }
                if b == b'\r' {
                    State::TrailerLf { empty: false }
                } else {
                    State::Trailer
                }
            }
            State::TrailerLf { empty: true } if b == b'\n' => State::Done,
            State::TrailerLf { empty: false } if b == b'\n' => State::TrailerStart,
            _ => return Err(BadChunk),
        };
        Ok(())
    }

    fn size_byte(&mut self, b: u8, digits: u8, ext: bool) -> Result<State, BadChunk> {
        self.line += 1;
        if self.line > MAX_LINE {
            return Err(BadChunk);
        }
        if b == b'\r' {
            return if digits == 0 {
                Err(BadChunk)
            } else {
                Ok(State::SizeLf)
            };
        }
        if ext {
            return Ok(State::Size { digits, ext });
        }
        match (b as char).to_digit(16) {
            // 15 hex digits: sizes up to 2^60, and no overflow.
            Some(d) if digits < 15 => {
                self.left = self.left * 16 + u64::from(d);
                Ok(State::Size {
                    digits: digits + 1,
                    ext,
                })
            }
            None if digits > 0 && (b == b';' || b == b' ' || b == b'\t') => {
                Ok(State::Size { digits, ext: true })
            }
            _ => Err(BadChunk),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    fn fields(pairs: &[(&'static str, &'static str)]) -> Vec<Field> {
        pairs
            .iter()
            .map(|(n, v)| Field {
                name: Bytes::from_static(n.as_bytes()),
                value: Bytes::from_static(v.as_bytes()),
            })
            .collect()
    }

    #[test]
    fn request_framing_refuses_what_is_ambiguous() {
        assert_eq!(request(&fields(&[])), Ok(Framing::None));
        assert_eq!(
            request(&fields(&[("Content-Length", "12")])),
            Ok(Framing::Length(12))
        );
        assert_eq!(
            request(&fields(&[("content-length", "3, 3")])),
            Ok(Framing::Length(3))
        );
        assert_eq!(
            request(&fields(&[("Transfer-Encoding", "gzip, Chunked")])),
            Ok(Framing::Chunked)
        );
        for bad in [
            &[("Content-Length", "3"), ("Content-Length", "4")][..],
            &[("Content-Length", "+3")],
            &[("Content-Length", "99999999999999999999")],
            &[("Transfer-Encoding", "chunked"), ("Content-Length", "3")],
            &[("Transfer-Encoding", "chunked, gzip")],
        ] {
            assert_eq!(request(&fields(bad)), Err(Ambiguous), "{bad:?}");
        }
    }

    #[test]
    fn response_framing_follows_status_method_and_fields() {
        let cl = fields(&[("Content-Length", "5")]);
        assert_eq!(response(200, false, &cl), Ok(Framing::Length(5)));
        assert_eq!(response(200, true, &cl), Ok(Framing::None));
        assert_eq!(response(204, false, &cl), Ok(Framing::None));
        assert_eq!(response(304, false, &[]), Ok(Framing::None));
        assert_eq!(response(200, false, &[]), Ok(Framing::UntilClose));
        let gz = fields(&[("Transfer-Encoding", "gzip")]);
        assert_eq!(response(200, false, &gz), Ok(Framing::UntilClose));
    }

    /// Data and trailers of `body` fed in two parts cut at every place.
    #[test]
    fn chunked_bodies_decode_however_they_are_cut() {
        let body =
            b"5\r\nhello\r\n1;ext=1\r\n \r\n10\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        for at in 0..body.len() {
            let mut decoder = Chunked::new();
            let (mut data, mut trailers, mut consumed, mut done) =
                (Vec::new(), Vec::new(), 0, false);
            for part in [&body[..at], &body[at..]] {
                let p = decoder
                    .feed(part, |piece| match piece {
                        Piece::Data(r) => data.extend_from_slice(&part[r]),
                        Piece::Trailer(r) => trailers.extend_from_slice(&part[r]),
                    })
                    .unwrap();
                consumed += p.consumed;
                done |= p.done;
                if p.done {
                    break;
                }
            }
            assert!(done);
            assert_eq!(data, b"hello 0123456789abcdef", "cut at {at}");
            assert_eq!(trailers, b"X-T: 1\r\n", "cut at {at}");
            assert_eq!(consumed, body.len() - 4, "cut at {at}");
        }
    }

    #[test]
    fn broken_chunked_bodies_are_errors() {
        for bad in [
            &b"x\r\n"[..],
            b"\r\n",
            b"5\nhello",
            b"2\r\nabX\r\n",
            b"fffffffffffffffff\r\n",
        ] {
            assert_eq!(
                Chunked::new().feed(bad, |_| {}),
                Err(BadChunk),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        let long_ext = format!("1;{}\r\n", "e".repeat(MAX_LINE));
        assert_eq!(
            Chunked::new().feed(long_ext.as_bytes(), |_| {}),
            Err(BadChunk)
        );
    }
}
