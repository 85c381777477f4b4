//! Reading OpenMetrics text as the exporter serves it.

/// One sample's value: the series `name{labels}` whose label set is exactly
/// `labels` (in any order).
pub fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, rest) = line.split_once(' ')?;
            let (n, label_text) = match series.find('{') {
                Some(i) => (&series[..i], &series[i + 1..series.len() - 1]),
                None => (series, ""),
            };
            if n != name {
                return None;
            }
            let got = parse_labels(label_text);
            let same = got.len() == labels.len()
                && labels
                    .iter()
                    .all(|(k, v)| got.iter().any(|(gk, gv)| gk == k && gv == v));
            if !same {
                return None;
            }
            rest.split_whitespace().next()?.parse().ok()
        })
}

/// Listing attempts of one (target, kind) so far, `labels` naming it:
/// `mcp_listing_outcomes_total` summed over `outcome` (`None` before the
/// series exist).
pub fn listing_attempts(text: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut found = None;
    for outcome in ["complete", "aborted", "error"] {
        let mut with_outcome = labels.to_vec();
        with_outcome.push(("outcome", outcome));
        if let Some(v) = sample(text, "mcp_listing_outcomes_total", &with_outcome) {
            found = Some(found.unwrap_or(0.0) + v);
        }
    }
    found
}

/// `k="v",…` with backslash escapes in the values.
fn parse_labels(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim_start_matches(',').trim().to_string();
        let after = &rest[eq + 2..];
        let mut value = String::new();
        let mut end = after.len();
        let mut chars = after.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '\\' => {
                    if let Some((_, n)) = chars.next() {
                        value.push(n);
                    }
                }
                '"' => {
                    end = i + 1;
                    break;
                }
                c => value.push(c),
            }
        }
        out.push((key, value));
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::sample;

    #[test]
    fn a_sample_needs_exactly_its_label_set() {
        let text = "# TYPE a gauge\na{x=\"1\",y=\"q\\\"r\"} 3\na{x=\"1\"} 2\nb 7\n";
        assert_eq!(sample(text, "a", &[("x", "1")]), Some(2.0));
        assert_eq!(sample(text, "a", &[("y", "q\"r"), ("x", "1")]), Some(3.0));
        assert_eq!(sample(text, "b", &[]), Some(7.0));
        assert_eq!(sample(text, "a", &[]), None);
    }
}
