//! Target groups read as a stream: shapes, labels checked before they are
//! copied, and the byte budget.

use super::*;

fn read(text: &str, format: Format, max: usize) -> Result<(Vec<Candidate>, SkipList), FormatError> {
    let mut reader = GroupReader::new(max, KeptBudget::default());
    reader.read(text.as_bytes(), format, "f.json")?;
    Ok(reader.finish())
}

fn parse(text: &str, format: Format) -> Result<Vec<Candidate>, FormatError> {
    read(text, format, 10).map(|(c, _)| c)
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
    assert_eq!(parse("null", Format::Json).unwrap(), vec![]);
    let escaped = parse(
        r#"[{"targets": ["https://a.invalid/\u0061"]}]"#,
        Format::Json,
    )
    .unwrap();
    assert_eq!(escaped[0].url, "https://a.invalid/a");
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
        "[{\"targets\": [], \"labels\": [\"a\"]}]",
        "[{\"targets\": [], \"extra\": 1}]",
        "[] trailing",
    ] {
        assert!(
            matches!(parse(bad, Format::Json), Err(FormatError::Malformed(_))),
            "{bad}"
        );
    }
    let Err(FormatError::Malformed(why)) = parse("[{\"targets\": [1]}]", Format::Json) else {
        panic!("malformed");
    };
    assert!(
        why.starts_with("group 1: `targets` holds a number"),
        "{why}"
    );
    let Err(FormatError::Malformed(why)) = parse("[{\"targets\": [", Format::Json) else {
        panic!("malformed");
    };
    assert!(why.starts_with("not JSON: "), "{why}");
    let Err(FormatError::Malformed(why)) = parse("- targets: [\n", Format::Yaml) else {
        panic!("malformed");
    };
    assert!(why.starts_with("not YAML: "), "{why}");
    let many: Vec<String> = (0..11)
        .map(|i| format!("\"https://h{i}.invalid/\""))
        .collect();
    let text = format!("[{{\"targets\": [{}]}}]", many.join(","));
    assert_eq!(
        parse(&text, Format::Json),
        Err(FormatError::TooMany { found: 11, max: 10 })
    );
}

#[test]
fn a_long_label_skips_its_group_without_copying_it() {
    let urls: Vec<String> = (0..5000)
        .map(|i| format!("\"https://h.invalid/{i}\""))
        .collect();
    let label = "v".repeat(1 << 20);
    let text = format!(
        "[{{\"targets\": [{}], \"labels\": {{\"team\": \"{label}\"}}}}, {{\"targets\": [\"https://ok.invalid/\"]}}]",
        urls.join(",")
    );
    let (candidates, skipped) = read(&text, Format::Json, 10_000).unwrap();
    assert_eq!(candidates.len(), 1);
    assert_eq!(skipped.counts[&SkipReason::InvalidLabel], 5000);
    assert_eq!(
        skipped.entries.len(),
        crate::discovery::entry::MAX_SKIPPED_KEPT
    );
    assert_eq!(skipped.entries[0].entry, "https://h.invalid/0");
    assert!(
        skipped.entries[0].detail.len() < 300,
        "{:?}",
        skipped.entries[0]
    );
    // Too many labels, bad names: the same, before any copy.
    let labels: Vec<String> = (0..40).map(|i| format!("\"l{i}\": \"x\"")).collect();
    let text = format!(
        "[{{\"targets\": [\"https://a.invalid/\"], \"labels\": {{{}}}}}, {{\"targets\": [\"https://b.invalid/\"], \"labels\": {{\"bad-name\": \"x\", \"name\": \"b\"}}}}]",
        labels.join(",")
    );
    let (candidates, skipped) = read(&text, Format::Json, 10).unwrap();
    assert!(candidates.is_empty());
    assert_eq!(skipped.total(), 2);
    assert!(skipped.entries[0].detail.contains("more than 32 labels"));
    assert_eq!(skipped.entries[1].entry, "b");
}

#[test]
fn copies_past_the_byte_budget_fail_the_list() {
    // Valid labels (32 of 1 KB) copied to each of 100 URLs: 3.3 MB kept
    // from a 35 KB list.
    let labels: Vec<String> = (0..32)
        .map(|i| format!("\"l{i}\": \"{}\"", "v".repeat(1000)))
        .collect();
    let urls: Vec<String> = (0..100)
        .map(|i| format!("\"https://h.invalid/{i}\""))
        .collect();
    let text = format!(
        "[{{\"targets\": [{}], \"labels\": {{{}}}}}]",
        urls.join(","),
        labels.join(",")
    );
    let mut reader = GroupReader::new(10_000, KeptBudget::new(1 << 20));
    assert_eq!(
        reader.read(text.as_bytes(), Format::Json, "f.json"),
        Err(FormatError::OverBudget(OverBudget { max: 1 << 20 }))
    );
    let mut reader = GroupReader::new(10_000, KeptBudget::new(4 << 20));
    reader
        .read(text.as_bytes(), Format::Json, "f.json")
        .unwrap();
    assert_eq!(reader.finish().0.len(), 100);
}

#[test]
fn yaml_lists_hold_no_alias() {
    let text = "- targets: &t [\"https://a.invalid/\"]\n  labels: {team: x}\n- targets: *t\n";
    let Err(FormatError::Malformed(why)) = parse(text, Format::Yaml) else {
        panic!("an alias accepted");
    };
    assert!(
        why.contains("line 3 column 12") && why.contains("alias"),
        "{why}"
    );
}
