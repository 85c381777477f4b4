//! The allow patterns' cases, and their cost on hostile text.

use super::*;

fn allows(pattern: &str, url: &str) -> bool {
    AllowList::new(vec![AllowPattern::parse(pattern).unwrap()]).allows(&Url::parse(url).unwrap())
}

#[test]
fn parts_are_matched_separately() {
    assert!(allows("http://127.0.0.*/m/", "http://127.0.0.1/m/mcp"));
    assert!(!allows(
        "http://127.0.0.*/m/",
        "http://127.0.0.1:8080/m/mcp"
    ));
    assert!(!allows(
        "http://127.0.0.*/m/",
        "http://127.0.0.1.evil.example/m/"
    ));
    assert!(!allows("http://127.0.0.*/m/", "https://127.0.0.1/m/"));
    assert!(allows(
        "http://127.0.0.1:9000/m/",
        "http://127.0.0.1:9000/m/x"
    ));
    assert!(!allows(
        "http://127.0.0.1:9000/m/",
        "http://127.0.0.1:9001/m/x"
    ));
    assert!(!allows(
        "http://127.0.0.1:9000/m/",
        "http://127.0.0.1:9000/internal/m/"
    ));
    assert!(allows(
        "https://gw.example.invalid/",
        "https://GW.example.invalid/mcp"
    ));
    assert!(!allows(
        "https://gw.example.invalid/",
        "https://gw.example.invalid.evil/"
    ));
    assert!(allows(
        "https://*.example.invalid/",
        "https://a.b.example.invalid/mcp"
    ));
    assert!(!allows(
        "https://*.example.invalid/",
        "https://example.invalid/mcp"
    ));
    assert!(!allows(
        "https://*.example.invalid/",
        "https://evil.test/x.example.invalid/"
    ));
    assert!(allows(
        "https://gw-*.example.invalid/",
        "https://gw-3.example.invalid/"
    ));
    assert!(!allows(
        "https://gw-*.example.invalid/",
        "https://gw-3.x.example.invalid/"
    ));
    assert!(allows(
        "https://gw.example.invalid/*/mcp",
        "https://gw.example.invalid/t1/mcp"
    ));
    assert!(!allows(
        "https://gw.example.invalid/*/mcp",
        "https://gw.example.invalid/a/b/mcp"
    ));
    assert!(allows("http://[::1]:8080/m/", "http://[::1]:8080/m/x"));
    // A path prefix ends at a segment boundary.
    assert!(allows("http://h.invalid/mcp", "http://h.invalid/mcp"));
    assert!(allows("http://h.invalid/mcp", "http://h.invalid/mcp/x"));
    assert!(!allows("http://h.invalid/mcp", "http://h.invalid/mcpX"));
    assert!(!allows(
        "https://gw.example.invalid/*/mcp",
        "https://gw.example.invalid/t1/mcp-admin"
    ));
    assert!(!allows("http://[::1]:8080/m/", "http://[::2]:8080/m/x"));
    assert!(!allows(
        "https://gw.example.invalid/",
        "https://u@gw.example.invalid/"
    ));
}

#[test]
fn bad_patterns_are_refused() {
    for p in [
        "ftp://a/",
        "https://a",
        "https:///x",
        "https://*/",
        "https://*.*/",
        "https://a..b/",
        "https://a:99999/",
        "https://u@a/",
    ] {
        assert!(AllowPattern::parse(p).is_err(), "{p}");
    }
}

#[test]
fn encoded_separators_and_dot_segments_match_no_pattern() {
    let p = "https://gw.example.invalid/mcp/";
    assert!(allows(p, "https://gw.example.invalid/mcp/tools"));
    for url in [
        "https://gw.example.invalid/mcp/..%2fadmin",
        "https://gw.example.invalid/mcp/..%2Fadmin",
        "https://gw.example.invalid/mcp/x%2fy",
        "https://gw.example.invalid/mcp/..%5cadmin",
        "https://gw.example.invalid/mcp/..%5Cadmin",
        // Encoded twice: a proxy that decodes once more sees `../`.
        "https://gw.example.invalid/mcp/..%252fadmin",
        "https://gw.example.invalid/mcp/%252e%252e/admin",
        // `..;` is `..` to servers that strip path parameters.
        "https://gw.example.invalid/mcp/..;/admin",
    ] {
        assert!(!allows(p, url), "{url}");
    }
    // The URL parser resolves plain and singly encoded dot segments itself.
    assert!(!allows(p, "https://gw.example.invalid/mcp/%2e%2e/admin"));
    assert!(!allows(p, "https://gw.example.invalid/mcp/.%2E/admin"));
    // A dot inside a segment is a name, not a dot segment.
    assert!(allows(p, "https://gw.example.invalid/mcp/v1.2/..x"));
    assert!(path_escapes("/mcp/./x"));
    assert!(path_escapes("/mcp/%2E/x"));
    assert!(!path_escapes("/mcp/.well-known/x"));
}

/// `*a` repeated `stars` times and then `b*`: a pattern a backtracking
/// matcher tries every split of for a text of `a`s, which never matches.
fn many_stars(stars: usize) -> String {
    format!("{}b*", "*a".repeat(stars))
}

#[test]
fn a_64_kib_value_against_many_stars_takes_linear_steps() {
    let text = "a".repeat(64 * 1024);
    let pattern = many_stars(32);
    let glob = Glob::new(&pattern);
    let mut steps = 0;
    assert!(!glob.matches(text.as_bytes(), &mut steps));
    // Every byte compared at most once per pattern byte; backtracking
    // would take about C(65536, 32) steps.
    let bound = (text.len() as u64 + 1) * (pattern.len() as u64 + 1);
    assert!(steps > 0 && steps <= bound, "{steps} steps, bound {bound}");
    let mut steps = 0;
    let with_b = format!("{text}b{text}");
    assert!(glob.matches(with_b.as_bytes(), &mut steps));
    assert!(steps <= (with_b.len() as u64 + 1) * (pattern.len() as u64 + 1));
    assert!(Glob::new("a*b*c").matches(b"aXbYbc", &mut 0));
    assert!(!Glob::new("a*b*c").matches(b"aXbYbcd", &mut 0));
    assert!(Glob::new("*").matches(b"", &mut 0));
    assert!(!Glob::new("ab*ba").matches(b"aba", &mut 0));
}

#[test]
fn a_hostile_host_label_and_path_segment_are_matched_in_linear_steps() {
    let label = "a".repeat(64 * 1024);
    let host_pattern =
        AllowPattern::parse(&format!("https://{}.example.invalid/mcp/", many_stars(32))).unwrap();
    let url = Url::parse(&format!("https://{label}.example.invalid/mcp/x")).unwrap();
    let mut steps = 0;
    assert!(!host_pattern.matches_counting(&url, &mut steps));
    let bound = (label.len() as u64 + 1) * 100;
    assert!(steps <= bound, "host: {steps} steps, bound {bound}");

    let path_pattern = AllowPattern::parse(&format!(
        "https://gw.example.invalid/mcp/{}",
        many_stars(32)
    ))
    .unwrap();
    let url = Url::parse(&format!("https://gw.example.invalid/mcp/{label}")).unwrap();
    let mut steps = 0;
    assert!(!path_pattern.matches_counting(&url, &mut steps));
    assert!(steps <= bound, "path: {steps} steps, bound {bound}");
}
