//! Opaque cursors: base64url of (kind, offset, generation, issue time) plus
//! a keyed check, so a garbage or foreign cursor is detectable and a client
//! cannot fabricate one by guessing an offset.

use mcp_listing::kind::Kind;
use sha2::{Digest, Sha256};

/// What a cursor carries. `generation` pins the catalogue order a walk
/// started with; `issued_ms` (milliseconds since the server started) lets
/// stale-cursor reject old cursors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CursorData {
    pub kind: Kind,
    pub offset: u32,
    pub generation: u32,
    pub issued_ms: u32,
}

/// Signs and checks cursors for one virtual server.
#[derive(Debug, Clone)]
pub struct CursorKey {
    secret: [u8; 32],
}

/// Kind, offset, generation, issue time.
const BODY: usize = 1 + 4 + 4 + 4;
/// The keyed check's bytes.
const TAG: usize = 4;

impl CursorKey {
    /// `epoch` separates key generations: silent-restart hands out cursors
    /// signed by a "previous incarnation" of the server.
    pub fn new(seed: u64, server: &str, epoch: u32) -> CursorKey {
        let mut h = Sha256::new();
        h.update(b"mcp-exporter-simulator cursor key\0");
        h.update(seed.to_be_bytes());
        h.update(epoch.to_be_bytes());
        h.update(server.as_bytes());
        CursorKey {
            secret: h.finalize().into(),
        }
    }

    fn tag(&self, body: &[u8]) -> [u8; TAG] {
        let mut h = Sha256::new();
        h.update(self.secret);
        h.update(body);
        let d = h.finalize();
        [d[0], d[1], d[2], d[3]]
    }

    /// `body` and its keyed check, base64url: an opaque token only this
    /// key can make or read back.
    pub fn seal(&self, body: &[u8]) -> String {
        let mut raw = body.to_vec();
        raw.extend_from_slice(&self.tag(body));
        base64url(&raw)
    }

    /// The body of a token [`seal`](Self::seal) made with this key; `None`
    /// for anything else.
    pub fn open(&self, s: &str) -> Option<Vec<u8>> {
        let mut raw = unbase64url(s)?;
        let body_len = raw.len().checked_sub(TAG)?;
        if self.tag(&raw[..body_len]) != raw[body_len..] {
            return None;
        }
        raw.truncate(body_len);
        Some(raw)
    }

    pub fn encode(&self, c: CursorData) -> String {
        let mut raw = [0u8; BODY];
        raw[0] = kind_byte(c.kind);
        raw[1..5].copy_from_slice(&c.offset.to_be_bytes());
        raw[5..9].copy_from_slice(&c.generation.to_be_bytes());
        raw[9..13].copy_from_slice(&c.issued_ms.to_be_bytes());
        self.seal(&raw)
    }

    /// `None` for anything this key did not sign.
    pub fn decode(&self, s: &str) -> Option<CursorData> {
        let raw = self.open(s)?;
        if raw.len() != BODY {
            return None;
        }
        let word = |i: usize| u32::from_be_bytes([raw[i], raw[i + 1], raw[i + 2], raw[i + 3]]);
        Some(CursorData {
            kind: kind_from_byte(raw[0])?,
            offset: word(1),
            generation: word(5),
            issued_ms: word(9),
        })
    }
}

fn kind_byte(k: Kind) -> u8 {
    match k {
        Kind::Tools => 1,
        Kind::Prompts => 2,
        Kind::Resources => 3,
        Kind::ResourceTemplates => 4,
    }
}

fn kind_from_byte(b: u8) -> Option<Kind> {
    match b {
        1 => Some(Kind::Tools),
        2 => Some(Kind::Prompts),
        3 => Some(Kind::Resources),
        4 => Some(Kind::ResourceTemplates),
        _ => None,
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len() * 4 / 3 + 3);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

fn unbase64url(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for c in s.bytes() {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(offset: u32) -> CursorData {
        CursorData {
            kind: Kind::Prompts,
            offset,
            generation: 3,
            issued_ms: 77,
        }
    }

    #[test]
    fn round_trip_and_rejects_foreign_or_garbage() {
        let key = CursorKey::new(1, "srv", 0);
        let c = key.encode(data(10));
        assert_eq!(key.decode(&c), Some(data(10)));
        assert_eq!(c, key.encode(data(10)), "deterministic");
        assert_ne!(c, key.encode(data(15)));
        assert_eq!(CursorKey::new(2, "srv", 0).decode(&c), None, "other seed");
        assert_eq!(CursorKey::new(1, "srv", 1).decode(&c), None, "other epoch");
        assert_eq!(key.decode("garbage"), None);
        assert_eq!(key.decode(""), None);
        assert_eq!(key.decode("%%%"), None);
    }

    #[test]
    fn base64url_matches_known_values() {
        assert_eq!(base64url(b"Man"), "TWFu");
        assert_eq!(base64url(b"Ma"), "TWE");
        assert_eq!(unbase64url("TWE").unwrap(), b"Ma");
    }
}
