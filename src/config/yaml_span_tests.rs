//! Blanking a mapping entry: the rest reads as before, nothing moves.

use super::*;
use crate::config::locate::yaml_path;
use yaml_serde::Value;

/// `text` with the entry at `path` blanked, checked to keep its length.
fn blanked(text: &str, path: &[Seg]) -> String {
    let mut out = text.to_string();
    assert!(blank_entry(&mut out, path), "{path:?} in {text:?}");
    assert_eq!(out.len(), text.len(), "{out:?}");
    out
}

fn value(text: &str) -> Value {
    yaml_serde::from_str(text).unwrap_or_else(|e| panic!("{e}: {text:?}"))
}

#[test]
fn block_entries_become_spaces_and_a_last_one_an_empty_mapping() {
    let text = "global:\n  timout: 5s\n  page_timeout: 5 parsecs\n";
    let out = blanked(text, &yaml_path!["global", "timout"]);
    assert_eq!(out, "global:\n            \n  page_timeout: 5 parsecs\n");
    let only = blanked(
        "global:\n  colour: red\ntargets: []\n",
        &yaml_path!["global", "colour"],
    );
    assert_eq!(value(&only)["global"], value("{}"));
    let nested = "a:\n  b:\n    - 1\n    - [2, 3]\n  c: 3\n";
    let out = blanked(nested, &yaml_path!["a", "b"]);
    assert_eq!(value(&out), value("a: {c: 3}"));
    let unicode = "a: é\nb: 1\n";
    assert_eq!(value(&blanked(unicode, &yaml_path!["a"])), value("b: 1"));
}

#[test]
fn entries_of_list_items_and_flow_mappings() {
    let text = "targets:\n  - name: a\n    colour: red\n  - colour: blue\n    name: b\n";
    let out = blanked(text, &yaml_path!["targets", 0, "colour"]);
    let out = blanked(&out, &yaml_path!["targets", 1, "colour"]);
    assert_eq!(value(&out), value("targets: [{name: a}, {name: b}]"));
    for (text, key, left) in [
        (
            "g: {colour: red, timeout: 5s}\n",
            "colour",
            "g: {timeout: 5s}",
        ),
        (
            "g: {timeout: 5s, colour: red}\n",
            "colour",
            "g: {timeout: 5s}",
        ),
        ("g: {colour: red}\n", "colour", "g: {}"),
        (
            "g: {a: 1, colour: [x, {y: 1}], b: 2}\n",
            "colour",
            "g: {a: 1, b: 2}",
        ),
    ] {
        assert_eq!(
            value(&blanked(text, &yaml_path!["g", key])),
            value(left),
            "{text}"
        );
    }
}

#[test]
fn what_is_not_there_is_left_alone() {
    let text = "a: 1\n---\nb: 2\n";
    for path in [
        yaml_path!["b"].to_vec(),
        yaml_path!["a", "x"].to_vec(),
        yaml_path!["c"].to_vec(),
    ] {
        let mut out = text.to_string();
        assert!(!blank_entry(&mut out, &path), "{path:?}");
        assert_eq!(out, text);
    }
    let mut out = "l: [1, 2]\n".to_string();
    assert!(!blank_entry(
        &mut out,
        &[Seg::Key("l".into()), Seg::Index(0)]
    ));
}
