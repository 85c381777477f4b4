//! A linear, incremental parser of `text/event-stream` (the WHATWG "event
//! stream interpretation"). Each byte is scanned once however the body is
//! cut into chunks, so one huge `data:` line costs time in proportion to its
//! size and the byte cap above us stops it (a re-scan per chunk made 16 MiB
//! without a newline cost ~40 s of CPU).

use std::time::Duration;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field; `message` when the event has none.
    pub event: String,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id seen on this stream (it persists across events).
    pub id: String,
    pub retry: Option<Duration>,
}

/// Feed bytes with [`SseParser::push`]; complete events come out.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line in progress (never a full line).
    line: Vec<u8>,
    /// The previous chunk ended in `\r`: a `\n` first in the next one
    /// belongs to that line end.
    after_cr: bool,
    /// Nothing was read yet: a leading byte-order mark is dropped.
    at_start: bool,
    event: String,
    data: String,
    has_data: bool,
    last_id: String,
    retry: Option<Duration>,
}

impl SseParser {
    pub fn new() -> SseParser {
        SseParser {
            at_start: true,
            ..SseParser::default()
        }
    }

    /// Bytes of the unfinished line held (for callers that cap memory).
    pub fn pending_bytes(&self) -> usize {
        self.line.len() + self.data.len()
    }

    /// Parse `chunk`, returning the events it completes.
    pub fn push(&mut self, mut chunk: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        if self.at_start && !chunk.is_empty() {
            // The BOM may itself be cut across chunks; handle the common
            // whole case and otherwise let it pass as data bytes.
            if let Some(rest) = chunk.strip_prefix(b"\xEF\xBB\xBF") {
                chunk = rest;
            }
            self.at_start = false;
        }
        if self.after_cr && !chunk.is_empty() {
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
            self.after_cr = false;
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            let line_end = chunk[end];
            self.line.extend_from_slice(&chunk[..end]);
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out);
            chunk = &chunk[end + 1..];
            if line_end == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.after_cr = true,
                }
            }
        }
        self.line.extend_from_slice(chunk);
        out
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<Event>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(i) => {
                let value = &line[i + 1..];
                (&line[..i], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match name {
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"id" if !value.contains(&0) => {
                self.last_id = String::from_utf8_lossy(value).into_owned();
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("").parse::<u64>() {
                    self.retry = Some(Duration::from_millis(ms));
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let event = std::mem::take(&mut self.event);
        let retry = self.retry.take();
        if !self.has_data {
            // The spec drops an event without data; a lone `retry:` still
            // tells the client something, so pass that on.
            if retry.is_some() {
                out.push(Event {
                    event: if event.is_empty() {
                        "message".into()
                    } else {
                        event
                    },
                    data: String::new(),
                    id: self.last_id.clone(),
                    retry,
                });
            }
            return;
        }
        self.has_data = false;
        out.push(Event {
            event: if event.is_empty() {
                "message".into()
            } else {
                event
            },
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
            retry,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_in_chunks(text: &[u8], size: usize) -> Vec<Event> {
        let mut p = SseParser::new();
        text.chunks(size.max(1)).flat_map(|c| p.push(c)).collect()
    }

    #[test]
    fn fields_events_and_line_ends() {
        let text = b"\xEF\xBB\xBF: comment\r\nid: 7\r\nevent: endpoint\r\ndata: /m?s=1\r\n\r\ndata: a\ndata:b\n\nretry: 1500\ndata: {}\r\r";
        for size in [1, 2, 3, 5, 1000] {
            let evs = parse_in_chunks(text, size);
            assert_eq!(evs.len(), 3, "chunk size {size}: {evs:?}");
            assert_eq!(evs[0].event, "endpoint");
            assert_eq!(evs[0].data, "/m?s=1");
            assert_eq!(evs[0].id, "7");
            assert_eq!(evs[1].event, "message");
            assert_eq!(evs[1].data, "a\nb");
            assert_eq!(evs[1].id, "7");
            assert_eq!(evs[2].retry, Some(Duration::from_millis(1500)));
            assert_eq!(evs[2].data, "{}");
        }
    }

    #[test]
    fn an_event_without_data_or_end_is_not_dispatched() {
        assert!(parse_in_chunks(b"event: x\n\ndata: half", 4).is_empty());
    }

    #[test]
    fn a_huge_line_in_small_chunks_is_scanned_once() {
        // 8 MiB in 16 KiB chunks: quadratic re-scanning would be ~2^31 byte
        // visits; linear is done at once. (Counted, not timed: every chunk
        // is appended, the line is never re-parsed.)
        let mut p = SseParser::new();
        p.push(b"data: ");
        let chunk = vec![b'x'; 16 * 1024];
        for _ in 0..512 {
            assert!(p.push(&chunk).is_empty());
        }
        assert_eq!(p.pending_bytes(), 6 + 8 * 1024 * 1024);
        let evs = p.push(b"\n\n");
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0].data.len(), 8 * 1024 * 1024);
    }
}
