//! A strict logfmt reader, written to the rules log pipelines decode by
//! (`key=value` pairs separated by spaces; a quoted value takes `\"`, `\\`,
//! `\n`, `\r`, `\t` and `\uXXXX`), so a test can tell whether a line of ours
//! would survive `| logfmt` — independently of the code that wrote it.

/// One line's pairs in order, values decoded; `Err` says what is malformed.
pub fn parse_line(line: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut rest = line.trim_end_matches('\n');
    if rest.contains('\n') {
        return Err("more than one line".into());
    }
    while !rest.is_empty() {
        if !pairs.is_empty() {
            rest = rest
                .strip_prefix(' ')
                .ok_or_else(|| format!("pairs not separated by a space at {rest:?}"))?;
        }
        let eq = rest
            .find('=')
            .ok_or_else(|| format!("a key without `=` at {rest:?}"))?;
        let key = &rest[..eq];
        if key.is_empty() || key.chars().any(|c| c == ' ' || c == '"' || c.is_control()) {
            return Err(format!("bad key {key:?}"));
        }
        rest = &rest[eq + 1..];
        let (value, after) = if let Some(quoted) = rest.strip_prefix('"') {
            unquote(quoted)?
        } else {
            let end = rest.find(' ').unwrap_or(rest.len());
            let bare = &rest[..end];
            if bare.chars().any(|c| c == '"' || c == '=' || c.is_control()) {
                return Err(format!("an unquoted value needing quotes: {bare:?}"));
            }
            (bare.to_string(), &rest[end..])
        };
        pairs.push((key.to_string(), value));
        rest = after;
    }
    Ok(pairs)
}

/// The value of `key` in a parsed line (the first, if repeated).
pub fn get<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Decodes a quoted value's body (after the opening quote); returns the
/// value and what follows the closing quote.
fn unquote(body: &str) -> Result<(String, &str), String> {
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &body[i + 1..])),
            '\\' => match chars.next().map(|(_, e)| e) {
                Some('"') => out.push('"'),
                Some('\\') => out.push('\\'),
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some('u') => out.push(unicode_escape(&mut chars)?),
                other => return Err(format!("unknown escape {other:?}")),
            },
            c if c.is_control() => return Err(format!("a raw control character {c:?}")),
            c => out.push(c),
        }
    }
    Err("an unterminated quote".into())
}

/// The character of a `\uXXXX` escape (its `\u` read), or of a surrogate
/// pair of two, as JSON writes a character past U+FFFF.
fn unicode_escape(chars: &mut std::str::CharIndices<'_>) -> Result<char, String> {
    let first = hex_unit(chars)?;
    let mut units = vec![first];
    if (0xD800..0xDC00).contains(&first) {
        let next = (chars.next().map(|(_, c)| c), chars.next().map(|(_, c)| c));
        if next != (Some('\\'), Some('u')) {
            return Err("a lone high surrogate".into());
        }
        units.push(hex_unit(chars)?);
    }
    char::decode_utf16(units)
        .next()
        .and_then(Result::ok)
        .ok_or_else(|| "a \\u escape of no character".into())
}

fn hex_unit(chars: &mut std::str::CharIndices<'_>) -> Result<u16, String> {
    let hex: String = (0..4)
        .filter_map(|_| chars.next().map(|(_, h)| h))
        .collect();
    u16::from_str_radix(&hex, 16).map_err(|_| format!("bad \\u escape {hex:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bare_and_quoted_values() {
        let pairs = parse_line(r#"a=1 msg="x \"y\" \\ \n\u001b" e="""#).unwrap();
        assert_eq!(get(&pairs, "a"), Some("1"));
        assert_eq!(get(&pairs, "msg"), Some("x \"y\" \\ \n\u{1b}"));
        assert_eq!(get(&pairs, "e"), Some(""));
    }

    #[test]
    fn refuses_what_a_pipeline_would_misread() {
        for bad in [
            "a=1  b=2",
            "a=x\u{1b}",
            "a=\"open",
            "a=b=c",
            "novalue",
            "a=\"x\"b=1",
            "a=\"\\x1b\"",
            "a=1\nb=2",
        ] {
            assert!(parse_line(bad).is_err(), "{bad:?}");
        }
    }
}
