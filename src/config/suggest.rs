//! "Did you mean `timeout`?": the accepted word closest to a typo, and
//! where a key of an older file went when it moved into a nested block.

/// The candidate nearest to `written` by edit distance, when it is near
/// enough to be the word meant: at most a third of its letters changed
/// (and at least one). Ties go to the first candidate.
pub fn closest<'a>(written: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let allowed = (written.chars().count() / 3).max(1);
    let written = written.to_lowercase();
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(&written, &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Keys that moved into a nested block (docs/configuration.md,
/// "Changelog"), and the block each went to.
const MOVED: [(&str, &str); 20] = [
    ("timeout", "limits"),
    ("page_timeout", "limits"),
    ("connect_timeout", "limits"),
    ("max_pages", "limits"),
    ("max_items", "limits"),
    ("max_response_bytes", "limits"),
    ("invalid_cursor_restarts", "limits"),
    ("url", "http"),
    ("transport", "http"),
    ("headers", "http"),
    ("bearer_token_env", "http"),
    ("bearer_token_file", "http"),
    ("bearer_token", "http"),
    ("tls", "http"),
    ("max_redirects", "http"),
    ("command", "stdio"),
    ("args", "stdio"),
    ("env", "stdio"),
    ("cwd", "stdio"),
    ("inherit_env", "stdio"),
];

/// The block `key` moved into, when it is one of the `accepted` keys of
/// the mapping it was found in (so a key that never lived there gets no
/// such hint).
pub fn moved_to(key: &str, accepted: &[&str]) -> Option<&'static str> {
    MOVED
        .iter()
        .find(|(old, block)| *old == key && accepted.contains(block))
        .map(|(_, block)| *block)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_near_words() {
        let keys = ["timeout", "page_timeout", "max_pages", "schedule"];
        assert_eq!(closest("timout", &keys), Some("timeout"));
        assert_eq!(closest("page_timout", &keys), Some("page_timeout"));
        assert_eq!(closest("Schedule", &keys), Some("schedule"));
        assert_eq!(closest("colour", &keys), None);
        assert_eq!(closest("x", &keys), None);
        assert_eq!(closest("é", &["e"]), Some("e"));
        assert_eq!(
            closest("stremable_http", &["auto", "streamable_http", "sse"]),
            Some("streamable_http")
        );
    }

    #[test]
    fn moved_keys_name_their_block_where_it_is_accepted() {
        let target = ["name", "http", "stdio", "limits", "kinds"];
        assert_eq!(moved_to("url", &target), Some("http"));
        assert_eq!(moved_to("command", &target), Some("stdio"));
        assert_eq!(moved_to("max_pages", &target), Some("limits"));
        // `tracing` has no `http` block: its `url` is some other mistake.
        assert_eq!(moved_to("url", &["endpoint", "headers"]), None);
        assert_eq!(moved_to("colour", &target), None);
    }
}
