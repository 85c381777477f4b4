//! "Did you mean `timeout`?": the accepted word closest to a typo.

/// The candidate nearest to `written` by edit distance, when it is near
/// enough to be the word meant: at most a third of its letters changed
/// (and at least one). Ties go to the first candidate.
pub fn closest<'a>(written: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let allowed = (written.chars().count() / 3).max(1);
    candidates
        .iter()
        .map(|c| {
            (
                edit_distance(&written.to_lowercase(), &c.to_lowercase()),
                *c,
            )
        })
        .filter(|(d, _)| *d <= allowed)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance (insertions, deletions, substitutions), counted in
/// characters, with one row of memory.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("timout", "timeout"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    #[test]
    fn suggests_only_near_words() {
        let keys = ["timeout", "page_timeout", "max_pages", "schedule"];
        assert_eq!(closest("timout", &keys), Some("timeout"));
        assert_eq!(closest("page_timout", &keys), Some("page_timeout"));
        assert_eq!(closest("Schedule", &keys), Some("schedule"));
        assert_eq!(closest("colour", &keys), None);
        assert_eq!(closest("x", &keys), None);
        assert_eq!(
            closest("stremable_http", &["auto", "streamable_http", "sse"]),
            Some("streamable_http")
        );
    }
}
