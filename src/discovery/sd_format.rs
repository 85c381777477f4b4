//! The Prometheus service-discovery format `file_sd` files and `http_sd`
//! answers share: `[{"targets": [URL, ...], "labels": {NAME: VALUE}}]`, in
//! JSON (or YAML for files). A wrong shape fails the whole list, as
//! Prometheus fails it; what is wrong with one URL or label is the entry's
//! own problem (`entry.rs`).

use super::entry::Candidate;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// How a list is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// Why a list could not be read as target groups.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("{0}")]
    Malformed(String),
    /// More entries than the source's `max_targets`.
    #[error("{found} entries or more, more than max_targets ({max})")]
    TooMany { found: usize, max: usize },
}

/// The candidates of every group of `bytes`, in order; `origin` names the
/// list (a file, a URL's host) in each candidate's origin. More than
/// `max_targets` URLs fail the list.
pub fn parse_groups(
    bytes: &[u8],
    format: Format,
    origin: &str,
    max_targets: usize,
) -> Result<Vec<Candidate>, FormatError> {
    let value: Value = match format {
        Format::Json => serde_json::from_slice(bytes)
            .map_err(|e| FormatError::Malformed(format!("not JSON: {e}")))?,
        Format::Yaml => yaml_serde::from_slice(bytes).map_err(|e| {
            FormatError::Malformed(format!(
                "not YAML: {}",
                crate::config::sanitize_parser_message(&e.to_string())
            ))
        })?,
    };
    let groups = match value {
        Value::Array(groups) => groups,
        // An empty YAML document is no groups.
        Value::Null => Vec::new(),
        other => {
            return Err(FormatError::Malformed(format!(
                "expected a list of target groups, found {}",
                type_name(&other)
            )))
        }
    };
    let mut out = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let n = g + 1;
        let Some(group) = group.as_object() else {
            return Err(FormatError::Malformed(format!(
                "group {n} is {}, not a mapping with `targets` and `labels`",
                type_name(group)
            )));
        };
        let (targets, labels) = group_parts(group, n)?;
        if out.len() + targets.len() > max_targets {
            return Err(FormatError::TooMany {
                found: out.len() + targets.len(),
                max: max_targets,
            });
        }
        let named = (targets.len() == 1)
            .then(|| labels.get("name").cloned())
            .flatten();
        for url in targets {
            out.push(Candidate {
                name: named.clone(),
                url: url.to_string(),
                labels: labels.clone(),
                transport: None,
                origin: format!("{origin}, group {n}"),
            });
        }
    }
    Ok(out)
}

/// A group's target URLs and its labels (meta labels, `__*`, left out).
fn group_parts(
    group: &Map<String, Value>,
    n: usize,
) -> Result<(Vec<&str>, BTreeMap<String, String>), FormatError> {
    if let Some(key) = group
        .keys()
        .find(|k| !matches!(k.as_str(), "targets" | "labels"))
    {
        return Err(FormatError::Malformed(format!(
            "group {n} has an unknown key {:?} (a group has `targets` and `labels`)",
            key.chars().take(64).collect::<String>()
        )));
    }
    let targets = match group.get("targets") {
        Some(Value::Array(items)) => items
            .iter()
            .map(Value::as_str)
            .collect::<Option<Vec<&str>>>()
            .ok_or_else(|| {
                FormatError::Malformed(format!("group {n}: `targets` holds a non-string"))
            })?,
        Some(Value::Null) | None => Vec::new(),
        Some(other) => {
            return Err(FormatError::Malformed(format!(
                "group {n}: `targets` is {}, not a list of URLs",
                type_name(other)
            )))
        }
    };
    let mut labels = BTreeMap::new();
    match group.get("labels") {
        Some(Value::Object(map)) => {
            for (name, value) in map {
                let Some(value) = value.as_str() else {
                    return Err(FormatError::Malformed(format!(
                        "group {n}: the value of label {:?} is {}, not a string",
                        name.chars().take(64).collect::<String>(),
                        type_name(value)
                    )));
                };
                // Prometheus drops meta labels after relabelling; nothing
                // relabels here, so they are dropped at once.
                if !name.starts_with("__") {
                    labels.insert(name.clone(), value.to_string());
                }
            }
        }
        Some(Value::Null) | None => {}
        Some(other) => {
            return Err(FormatError::Malformed(format!(
                "group {n}: `labels` is {}, not a mapping",
                type_name(other)
            )))
        }
    }
    Ok((targets, labels))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, format: Format) -> Result<Vec<Candidate>, FormatError> {
        parse_groups(text.as_bytes(), format, "f.json", 10)
    }

    #[test]
    fn groups_name_single_targets_and_keep_labels() {
        let c = parse(
            r#"[{"targets": ["https://a.invalid/mcp"], "labels": {"name": "a", "team": "x", "__meta_y": "z"}},
                {"targets": ["https://b.invalid/", "https://c.invalid/"], "labels": {"name": "bc"}}]"#,
            Format::Json,
        )
        .unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].name.as_deref(), Some("a"));
        assert_eq!(c[0].labels.len(), 2);
        assert_eq!(c[1].name, None);
        assert_eq!(c[2].origin, "f.json, group 2");
        let y = parse(
            "- targets: [\"https://a.invalid/\"]\n  labels: {team: x}\n",
            Format::Yaml,
        )
        .unwrap();
        assert_eq!(y[0].labels["team"], "x");
        assert_eq!(parse("", Format::Yaml).unwrap(), vec![]);
        assert_eq!(parse("[]", Format::Json).unwrap(), vec![]);
    }

    #[test]
    fn wrong_shapes_fail_the_list() {
        for bad in [
            "not json",
            "{\"targets\": []}",
            "[1]",
            "[{\"targets\": \"https://a.invalid/\"}]",
            "[{\"targets\": [1]}]",
            "[{\"targets\": [], \"labels\": {\"a\": 1}}]",
            "[{\"targets\": [], \"extra\": 1}]",
        ] {
            assert!(
                matches!(parse(bad, Format::Json), Err(FormatError::Malformed(_))),
                "{bad}"
            );
        }
        let many: Vec<String> = (0..11)
            .map(|i| format!("\"https://h{i}.invalid/\""))
            .collect();
        let text = format!("[{{\"targets\": [{}]}}]", many.join(","));
        assert_eq!(
            parse(&text, Format::Json),
            Err(FormatError::TooMany { found: 11, max: 10 })
        );
    }
}
