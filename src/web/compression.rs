//! gzip for `/metrics` and `/probe`, when the request's `Accept-Encoding`
//! allows it (Prometheus always sends `gzip`).

use super::negotiation::offers;
use axum::http::header::{HeaderMap, ACCEPT_ENCODING};
use bytes::Bytes;
use flate2::write::GzEncoder;
use flate2::Compression;
use std::io::Write;
use std::sync::mpsc::{sync_channel, SyncSender};

/// Text is handed to the compressor in pieces of about this size.
const CHUNK_BYTES: usize = 256 * 1024;
/// Pieces written but not yet compressed, at most: the writer waits past it.
const CHUNKS_IN_FLIGHT: usize = 8;

/// Whether `Accept-Encoding` lists `gzip` (or `*`) with a non-zero q-value.
pub fn accepts_gzip(headers: &HeaderMap) -> bool {
    offers(headers, &ACCEPT_ENCODING)
        .iter()
        .any(|o| (o.value.eq_ignore_ascii_case("gzip") || o.value == "*") && o.q > 0.0)
}

/// The body gzipped at the fastest level: scrapes are frequent and text
/// compresses well even so (CPU matters more here than the last bytes).
pub fn gzip(body: &[u8]) -> Bytes {
    // Writing into a Vec cannot fail, so the errors below never happen;
    // an empty body would still be a valid (if useless) answer.
    let mut encoder = GzEncoder::new(Vec::with_capacity(body.len() / 8 + 64), Compression::fast());
    let _ = encoder.write_all(body);
    Bytes::from(encoder.finish().unwrap_or_default())
}

/// The gzip of the text `produce` writes, compressed on a second thread
/// while it is written: pieces go to the compressor as they are written, so
/// it is done moments after the text is (the longer of the two, not their
/// sum). The text itself is never held whole — at 10,000 targets it is
/// ~54 MB, the gzip a tenth of that. Returns the text's length and the
/// gzip, one stream at the level of [`gzip`]; `capacity` is the expected
/// gzip size.
pub fn gzip_while_writing(
    capacity: usize,
    produce: impl FnOnce(&mut dyn std::fmt::Write) -> std::fmt::Result,
) -> Result<(usize, Bytes), std::fmt::Error> {
    let (tx, rx) = sync_channel::<String>(CHUNKS_IN_FLIGHT);
    std::thread::scope(|scope| {
        let compressor = scope.spawn(move || {
            let mut text_bytes = 0;
            let mut encoder = GzEncoder::new(Vec::with_capacity(capacity), Compression::fast());
            for chunk in rx {
                // Writing into a Vec cannot fail.
                let _ = encoder.write_all(chunk.as_bytes());
                text_bytes += chunk.len();
            }
            (text_bytes, encoder.finish().unwrap_or_default())
        });
        let mut pieces = Pieces {
            current: String::with_capacity(CHUNK_BYTES * 2),
            tx,
        };
        let produced = produce(&mut pieces).and_then(|()| pieces.send());
        // Dropping the sender ends the compressor's loop.
        drop(pieces);
        let (text_bytes, packed) = compressor.join().map_err(|_| std::fmt::Error)?;
        produced.map(|()| (text_bytes, Bytes::from(packed)))
    })
}

/// A `fmt::Write` that sends what it is given on in pieces.
struct Pieces {
    current: String,
    tx: SyncSender<String>,
}

impl Pieces {
    fn send(&mut self) -> std::fmt::Result {
        let full = std::mem::replace(&mut self.current, String::with_capacity(CHUNK_BYTES * 2));
        // The compressor only stops when this sender is dropped.
        self.tx.send(full).map_err(|_| std::fmt::Error)
    }
}

impl std::fmt::Write for Pieces {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.current.push_str(s);
        if self.current.len() >= CHUNK_BYTES {
            self.send()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;
    use std::io::Read;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn gzip_is_chosen_only_when_offered_with_a_positive_q() {
        assert!(accepts_gzip(&headers("gzip")));
        assert!(accepts_gzip(&headers("identity, GZIP;q=0.5")));
        assert!(accepts_gzip(&headers("*")));
        assert!(!accepts_gzip(&headers("gzip;q=0")));
        assert!(!accepts_gzip(&headers("deflate, br")));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[test]
    fn the_gzip_is_made_while_the_text_is_written() {
        let line = "mcp_up{target=\"a\"} 1\n";
        let (len, packed) = gzip_while_writing(16, |w| {
            for _ in 0..100_000 {
                w.write_str(line)?;
            }
            Ok(())
        })
        .unwrap();
        let text = line.repeat(100_000);
        assert_eq!(len, text.len());
        let mut out = String::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
        let failed = gzip_while_writing(16, |w| {
            w.write_str(line)?;
            Err(std::fmt::Error)
        });
        assert!(failed.is_err());
    }

    #[test]
    fn gzip_round_trips() {
        let text = "mcp_up{target=\"a\"} 1\n".repeat(100);
        let packed = gzip(text.as_bytes());
        assert!(packed.len() < text.len() / 4);
        let mut out = String::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(out, text);
    }
}
