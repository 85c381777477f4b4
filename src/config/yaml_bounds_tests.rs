//! The YAML bounds against ordinary files and the bombs they exist for.

use super::*;

fn config(text: &str) -> Result<YamlShape, YamlBoundProblem> {
    check(text.as_bytes(), &YamlBounds::CONFIG).map_err(|e| e.problem)
}

fn file_sd(text: &str) -> Result<YamlShape, YamlBoundProblem> {
    check(text.as_bytes(), &YamlBounds::FILE_SD).map_err(|e| e.problem)
}

#[test]
fn ordinary_documents_pass_and_their_aliases_are_counted() {
    let plain = "global:\n  timeout: 5s\ntargets:\n  - {name: a, url: \"https://a.invalid/\"}\n";
    assert_eq!(config(plain), Ok(YamlShape::default()));
    let anchored = "x: &h {X-Key: {env: K}}\ntargets:\n  - {name: a, headers: *h}\n  - {name: b, headers: *h}\n";
    assert_eq!(config(anchored).map(|s| s.aliases), Ok(2));
    assert_eq!(config(""), Ok(YamlShape::default()));
    // A syntax error is yaml_serde's to report; what came before it passed.
    let broken = config("a: [\n").unwrap();
    assert!(broken.syntax_error && broken.aliases == 0);
    assert!(file_sd("- targets: [\"https://a.invalid/\"]\n  labels: {team: x}\n").is_ok());
}

#[test]
fn one_anchor_named_ten_thousand_times_is_refused() {
    // About 80 KB: a 4 KB anchor replayed 10,000 times would be 40 MB of
    // text and far more as values.
    let big = format!("[{}]", vec!["vvvvvvvv"; 450].join(", "));
    let text = format!("a: &a {big}\nb: [{}]\n", vec!["*a"; 10_000].join(", "));
    assert!(text.len() < 100_000);
    assert!(matches!(
        config(&text),
        Err(YamlBoundProblem::ReplaysTooMuch { .. })
    ));
    let e = check(text.as_bytes(), &YamlBounds::CONFIG).unwrap_err();
    assert_eq!(e.line, 2, "{e:?}");
}

#[test]
fn nested_laughs_are_refused_before_they_grow() {
    let mut text = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let refs = vec![format!("*l{}", i - 1); 10].join(", ");
        text.push_str(&format!("l{i}: &l{i} [{refs}]\n"));
    }
    assert!(matches!(
        config(&text),
        Err(YamlBoundProblem::ReplaysTooMuch { .. })
    ));
}

#[test]
fn file_sd_files_hold_no_alias_and_a_bounded_number_of_nodes() {
    let text = "- targets: &t [\"https://a.invalid/\"]\n- targets: *t\n";
    assert_eq!(file_sd(text), Err(YamlBoundProblem::AliasRefused));
    let many = "- {}\n".repeat(300_000);
    assert_eq!(
        file_sd(&many),
        Err(YamlBoundProblem::TooManyNodes(YamlBounds::FILE_SD.nodes))
    );
}

#[test]
fn deep_brackets_stop_at_the_depth_cap() {
    let n = 100_000;
    let text = format!("a: {}{}\n", "[".repeat(n), "]".repeat(n));
    let e = check(text.as_bytes(), &YamlBounds::CONFIG).unwrap_err();
    assert_eq!(e.problem, YamlBoundProblem::TooDeep(MAX_DEPTH));
    assert_eq!((e.line, e.column), (1, 3 + MAX_DEPTH));
    let fine = format!("a: {}{}\n", "[".repeat(20), "]".repeat(20));
    assert!(config(&fine).is_ok());
}

#[test]
fn an_alias_inside_its_own_anchor_is_refused() {
    assert_eq!(
        config("a: &a [1, *a]\n"),
        Err(YamlBoundProblem::AliasInsideItsAnchor)
    );
    // A name defined again names the new node from there on.
    assert!(config("a: &a 1\nb: &a [2]\nc: *a\n").is_ok());
    // Anchors belong to their document.
    assert!(config("a: &a 1\n---\nb: *a\n").is_ok());
}
