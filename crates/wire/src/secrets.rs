//! The set of secret values a configuration knows, and the one way to take
//! them out of text we keep (stderr tails, error details, server-supplied
//! strings). Built once at config load; imports nothing of ours, so every
//! layer (the transports included) can hold one.

use mcp_listing::text::CUT_MARK;
use std::sync::Arc;

/// What a scrubbed secret becomes.
pub const REDACTED: &str = "<redacted>";

/// Values shorter than this are not scrubbed: "1" or "on" would shred every
/// message, and a secret that short protects nothing anyway.
pub const MIN_SECRET_LEN: usize = 4;

/// Known secret values, longest first (so a secret containing another is
/// replaced whole).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretScrubber {
    values: Arc<Vec<String>>,
}

impl std::fmt::Debug for SecretScrubber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretScrubber({} value(s))", self.values.len())
    }
}

impl SecretScrubber {
    pub fn new<I, S>(values: I) -> SecretScrubber
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut values: Vec<String> = values
            .into_iter()
            .map(Into::into)
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        values.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        values.dedup();
        SecretScrubber {
            values: Arc::new(values),
        }
    }

    /// This set plus `extra` (e.g. a token read at poll time).
    pub fn with<I, S>(&self, extra: I) -> SecretScrubber
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SecretScrubber::new(
            self.values
                .iter()
                .cloned()
                .chain(extra.into_iter().map(Into::into)),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Bytes of the longest secret: how much context a cut must keep so
    /// that no secret can straddle it unseen.
    pub fn longest(&self) -> usize {
        self.values.first().map_or(0, String::len)
    }

    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(String::as_str)
    }

    /// `text` with every known secret replaced by [`REDACTED`]; where the
    /// text was cut short ([`CUT_MARK`]), the start of a secret just before
    /// the cut too.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in self.values.iter() {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), REDACTED);
            }
        }
        if !self.values.is_empty() && out.contains(CUT_MARK) {
            out = self.redact_before_cuts(&out);
        }
        out
    }

    /// A string kept cut (names, echoed messages) may end, before its
    /// [`CUT_MARK`], with the first bytes of a secret whose rest was cut
    /// away; those bytes go too (from [`MIN_SECRET_LEN`] bytes on).
    fn redact_before_cuts(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(at) = rest.find(CUT_MARK) {
            let before = &rest[..at];
            let started = self
                .values
                .iter()
                .map(|v| secret_start_at_end(before, v))
                .max()
                .unwrap_or(0);
            out.push_str(&before[..before.len() - started]);
            if started > 0 {
                out.push_str(REDACTED);
            }
            out.push_str(CUT_MARK);
            rest = &rest[at + CUT_MARK.len()..];
        }
        out.push_str(rest);
        out
    }

    /// The last `keep` bytes of `text` (cut at a character boundary), scrubbed
    /// *before* cutting. When `cut_before` is true, `text` itself is already
    /// a cut of a longer stream: its first `longest() - 1` bytes may be the
    /// end of a secret whose start is gone, so they are never shown.
    pub fn scrub_tail(&self, text: &str, keep: usize, cut_before: bool) -> String {
        let margin = self.longest().saturating_sub(1);
        let head = if cut_before { margin } else { 0 };
        let text = char_suffix_from(text, head);
        let scrubbed = self.scrub(text);
        let start = scrubbed.len().saturating_sub(keep);
        char_suffix_from(&scrubbed, start).to_string()
    }
}

/// Bytes at the end of `text` that are the start of `secret` (at least
/// [`MIN_SECRET_LEN`], shorter than the secret), or 0.
fn secret_start_at_end(text: &str, secret: &str) -> usize {
    (MIN_SECRET_LEN..secret.len())
        .rev()
        .find(|&n| secret.get(..n).is_some_and(|start| text.ends_with(start)))
        .unwrap_or(0)
}

/// `text[start..]`, moving `start` forward to a character boundary.
fn char_suffix_from(text: &str, start: usize) -> &str {
    let mut start = start.min(text.len());
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_longest_first_and_skips_short_values() {
        let s = SecretScrubber::new(["tok-123", "tok-123456", "ab"]);
        assert_eq!(
            s.scrub("a tok-123456 b tok-123 c ab"),
            "a <redacted> b <redacted> c ab"
        );
        assert_eq!(s.longest(), 10);
    }

    #[test]
    fn the_start_of_a_secret_before_a_cut_is_redacted() {
        let secret = "tok-0123456789";
        let s = SecretScrubber::new([secret]);
        for n in 4..secret.len() {
            let cut = format!("name {}…1a2b3c4d", &secret[..n]);
            assert_eq!(s.scrub(&cut), "name <redacted>…1a2b3c4d", "{n}");
        }
        assert_eq!(s.scrub("a tok…b"), "a tok…b");
        assert_eq!(s.scrub("plain…"), "plain…");
    }

    #[test]
    fn a_secret_straddling_the_cut_leaves_nothing() {
        let secret = "SECRET-abcdefghijklmnop";
        let s = SecretScrubber::new([secret]);
        // Stream: junk + secret + more; the kept window starts in the middle
        // of the secret.
        let stream = format!("{}{secret}{}", "x".repeat(100), "y".repeat(50));
        for cut in 100..100 + secret.len() {
            let window = &stream[cut..];
            let kept = s.scrub_tail(window, 60, true);
            for n in 4..=secret.len() {
                for part in secret.as_bytes().windows(n) {
                    let part = std::str::from_utf8(part).unwrap();
                    assert!(!kept.contains(part), "cut {cut}: {kept:?} holds {part:?}");
                }
            }
        }
    }

    #[test]
    fn tail_keeps_at_most_keep_bytes_on_char_boundaries() {
        let s = SecretScrubber::new(["hunter22"]);
        let kept = s.scrub_tail("ééééé hunter22 ééé", 7, false);
        assert!(kept.len() <= 7, "{kept:?}");
        assert!(!kept.contains("hunter"));
    }
}
