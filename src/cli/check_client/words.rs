//! The house's words for what a client did: counts with thousands
//! separators, "saw 10 of 23 tools", "missing tool-011 … tool-023",
//! durations as people read them.

use mcp_listing::Kind;
use std::time::Duration;

/// `4812` → `4,812`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What a kind's items are called: `tools`, `resource templates`.
pub fn items_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Tools => "tools",
        Kind::Prompts => "prompts",
        Kind::Resources => "resources",
        Kind::ResourceTemplates => "resource templates",
    }
}

/// `saw 10 of 23 tools`.
pub fn saw(unique: usize, total: u32, kind: Kind) -> String {
    format!(
        "saw {} of {} {}",
        count(unique as u64),
        count(u64::from(total)),
        items_of(kind)
    )
}

/// `missing tool-011 … tool-023` (one name, two names, or first … last);
/// empty when nothing is missing. Names are the simulator's own.
pub fn missing(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("missing {one}"),
        [a, b] => format!("missing {a}, {b}"),
        [first, .., last] => format!("missing {first} … {last}"),
    }
}

/// `1 page`, `64 pages`.
pub fn pages(n: u64) -> String {
    if n == 1 {
        "1 page".into()
    } else {
        format!("{} pages", count(n))
    }
}

/// `0.4 s`, `30 s`, `2 min`.
pub fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{} s", s.round() as u64)
    } else {
        format!("{} min", (s / 60.0).round() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_names_read_as_the_house_writes_them() {
        assert_eq!(count(4812), "4,812");
        assert_eq!(count(999), "999");
        assert_eq!(count(1_000_000), "1,000,000");
        assert_eq!(saw(10, 23, Kind::Tools), "saw 10 of 23 tools");
        let names: Vec<String> = (11..=23).map(|n| format!("tool-{n:03}")).collect();
        assert_eq!(missing(&names), "missing tool-011 … tool-023");
        assert_eq!(missing(&names[..1]), "missing tool-011");
        assert_eq!(missing(&[]), "");
        assert_eq!(pages(1), "1 page");
        assert_eq!(seconds(Duration::from_millis(30_200)), "30 s");
        assert_eq!(seconds(Duration::from_millis(420)), "0.4 s");
    }
}
