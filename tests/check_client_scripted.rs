//! `check-client` against scripted clients (tests/peers/clients/
//! scripted_client.py, Python's standard library only): one client per
//! grade of every scenario — the walkers that pass, the page-1 readers, the
//! silent prefixes, the caps, the loops the harness has to stop — and the
//! clients that cannot be graded at all (exit 2).

use mcp_testkit::check_client::{check_client, Graded};
use mcp_testkit::gateways::in_parallel;
use mcp_testkit::peers::peer_path;

fn scripted(flags: &[&str]) -> Vec<String> {
    let mut argv = vec![
        "python3".to_string(),
        peer_path("clients/scripted_client.py"),
    ];
    argv.extend(flags.iter().map(|f| f.to_string()));
    argv
}

/// One run per (scenario, client flags, extra check-client flags), side by side.
fn grade_each(cases: &[(&str, &[&str], &[&str])]) -> Vec<Graded> {
    type Job<'a> = Box<dyn FnOnce() -> Graded + Send + 'a>;
    let jobs = cases
        .iter()
        .map(|&(scenario, client, extra)| {
            Box::new(move || {
                let mut flags = vec!["--scenario", scenario];
                flags.extend_from_slice(extra);
                check_client(&flags, &scripted(client))
            }) as Job
        })
        .collect();
    in_parallel(jobs)
}

const PAGE_ONE: &[&str] = &["--pages", "first"];

/// "never stopped: N pages in T s" with N just past `limit` (the kill
/// lands a request or two after the limit is seen).
fn assert_stopped_past(run: &Graded, scenario: &str, limit: u64) {
    let grade = run.grade(scenario);
    let pages = grade
        .message
        .strip_prefix("never stopped: ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.replace(',', "").parse::<u64>().ok());
    assert!(
        grade.status == "fail" && pages.is_some_and(|n| n > limit && n < limit + 50),
        "{scenario}: {grade:?}\n{}",
        run.describe()
    );
}

#[test]
fn the_whole_walk() {
    let runs = grade_each(&[
        ("walk", &[], &[]),
        ("walk", PAGE_ONE, &[]),
        ("walk", &["--exit-code", "3"], &[]),
        ("walk", &["--hang"], &["--deadline", "3s"]),
    ]);
    runs[0].expect("walk", "pass", "read all 3 pages: 23 of 23 tools, exited 0");
    assert_eq!(runs[0].code, Some(0), "{}", runs[0].describe());
    runs[1].expect(
        "walk",
        "fail",
        "read page 1 of 3: saw 10 of 23 tools, missing tool-011 … tool-023; exited 0: a prefix returned as the whole",
    );
    assert_eq!(runs[1].code, Some(1), "{}", runs[1].describe());
    runs[2].expect("walk", "warn", "then exited 3");
    runs[3].expect(
        "walk",
        "pass",
        "then did not exit and was stopped at the deadline",
    );
}

#[test]
fn null_and_blank_cursors() {
    let runs = grade_each(&[
        ("null-cursor", &[], &[]),
        ("null-cursor", &["--null", "error"], &[]),
        ("null-cursor", &["--null", "cursor"], &[]),
        ("blank-cursor", &[], &[]),
        (
            "blank-cursor",
            &["--blank", "cursor", "--on-repeat", "quiet"],
            &[],
        ),
        (
            "blank-cursor",
            &["--blank", "cursor", "--on-repeat", "quiet", "--dedupe"],
            &[],
        ),
        ("blank-cursor", &["--blank", "cursor"], &[]),
        ("blank-cursor-2026", &["--modern"], &[]),
        ("blank-cursor-2026", &["--modern", "--blank", "end"], &[]),
        ("blank-cursor-2026", &[], &[]),
    ]);
    runs[0].expect(
        "null-cursor",
        "pass",
        "took `nextCursor: null` as the end after 3 pages",
    );
    runs[1].expect(
        "null-cursor",
        "warn",
        "rejected the last page for its `nextCursor: null`",
    );
    runs[2].expect(
        "null-cursor",
        "fail",
        "sent a cursor after the page that said `nextCursor: null`",
    );
    runs[3].expect(
        "blank-cursor",
        "pass",
        "took `nextCursor: \"\"` as the end after page 1: 10 of 10 tools",
    );
    runs[4].expect(
        "blank-cursor",
        "fail",
        "got page 1 again (2 pages) and returned 20 items for 10 tools",
    );
    runs[5].expect("blank-cursor", "warn", "and got page 1 again: 10 tools");
    runs[6].expect("blank-cursor", "warn", "got page 1 again and exited 1");
    runs[7].expect(
        "blank-cursor-2026",
        "pass",
        "sent `\"\"` back as a cursor and read all 3 pages",
    );
    runs[8].expect(
        "blank-cursor-2026",
        "fail",
        "took `nextCursor: \"\"` for the end under 2026-07-28: read page 1 of 3: saw 10 of 23 tools",
    );
    runs[9].expect("blank-cursor-2026", "n/a", "does not speak 2026-07-28");
    assert_eq!(
        runs[9].code,
        Some(0),
        "n/a is not a failure: {}",
        runs[9].describe()
    );
}

#[test]
fn a_single_page() {
    let runs = grade_each(&[
        ("single-page", &[], &[]),
        ("single-page", &["--past-end"], &[]),
        ("single-page", &["--exit-code", "1"], &[]),
    ]);
    runs[0].expect("single-page", "pass", "one request: 10 of 10 tools");
    runs[1].expect(
        "single-page",
        "fail",
        "sent a cursor after a page without nextCursor",
    );
    runs[2].expect("single-page", "warn", "then exited 1");
}

#[test]
fn cycles_and_repeated_cursors() {
    let ignore = &["--on-repeat", "ignore", "--cap", "20"][..];
    let runs = grade_each(&[
        ("cycle", &[], &[]),
        ("cycle", &["--on-repeat", "quiet"], &[]),
        ("cycle", ignore, &[]),
        (
            "cycle",
            &["--on-repeat", "ignore", "--cap", "20", "--at-cap", "quiet"],
            &[],
        ),
        ("cycle", PAGE_ONE, &[]),
        ("repeat-cursor", &[], &[]),
        ("repeat-cursor", &["--on-repeat", "quiet"], &[]),
        ("repeat-cursor", ignore, &[]),
    ]);
    runs[0].expect(
        "cycle",
        "pass",
        "stopped at the repeated cursor after 3 pages and exited 1",
    );
    runs[1].expect(
        "cycle",
        "fail",
        "stopped at a repeated cursor after 3 pages and exited 0: a prefix returned as the whole (saw 30 of 40 tools, missing tool-031 … tool-040)",
    );
    runs[2].expect("cycle", "warn", "noticed only at its page cap: 20 pages");
    runs[3].expect(
        "cycle",
        "fail",
        "stopped after 20 pages, 17 past the repeated cursor, and exited 0",
    );
    runs[4].expect("cycle", "fail", "read page 1 only: saw 10 of 40 tools");
    runs[5].expect(
        "repeat-cursor",
        "pass",
        "stopped at the repeated cursor after 2 pages",
    );
    runs[6].expect(
        "repeat-cursor",
        "fail",
        "stopped at a repeated cursor after 2 pages and exited 0: a prefix returned as the whole",
    );
    runs[7].expect("repeat-cursor", "warn", "noticed only at its page cap");
}

#[test]
fn listings_that_never_end() {
    let forever = &["--on-repeat", "ignore", "--cap", "100000000"][..];
    let runs = grade_each(&[
        ("endless", &["--cap", "30"], &[]),
        ("endless", &["--cap", "30", "--at-cap", "quiet"], &[]),
        ("endless", forever, &["--max-requests", "300"]),
        ("endless", forever, &["--deadline", "2s"]),
        ("endless", PAGE_ONE, &[]),
    ]);
    runs[0].expect(
        "endless",
        "pass",
        "stopped at its page cap after 30 pages and exited 1: page cap 30",
    );
    assert_eq!(runs[0].report["page_cap"], 30, "{}", runs[0].describe());
    runs[1].expect(
        "endless",
        "fail",
        "stopped after 30 pages and exited 0: a listing that never ends returned as the whole",
    );
    assert_stopped_past(&runs[2], "endless", 300);
    runs[3].expect("endless", "fail", "never stopped: ");
    runs[4].expect("endless", "fail", "read page 1 only");
}

#[test]
fn a_deep_listing() {
    let runs = grade_each(&[
        ("deep", &[], &[]),
        ("deep", &["--cap", "64"], &[]),
        ("deep", &["--cap", "64", "--at-cap", "quiet"], &[]),
        ("deep", PAGE_ONE, &[]),
    ]);
    runs[0].expect("deep", "pass", "read all 150 pages: 150 of 150 tools");
    runs[1].expect(
        "deep",
        "warn",
        "stopped after 64 pages of 150 and exited 1: its page cap cuts a real catalogue",
    );
    runs[2].expect("deep", "fail", "read 64 of 150 pages: saw 64 of 150 tools, missing tool-065 … tool-150; exited 0: a prefix returned as the whole");
    runs[3].expect(
        "deep",
        "fail",
        "read page 1 of 150: saw 1 of 150 tools, missing tool-002 … tool-150",
    );
}

#[test]
fn an_invalid_cursor_once() {
    let runs = grade_each(&[
        ("invalid-cursor", &["--on-invalid", "restart"], &[]),
        ("invalid-cursor", &[], &[]),
        ("invalid-cursor", &["--on-invalid", "quiet"], &[]),
        ("invalid-cursor", &["--on-invalid", "retry"], &[]),
        ("invalid-cursor", PAGE_ONE, &[]),
    ]);
    runs[0].expect(
        "invalid-cursor",
        "pass",
        "restarted from page 1 after -32602 and read the whole list: 23 of 23 tools",
    );
    runs[1].expect(
        "invalid-cursor",
        "warn",
        "failed the whole listing on -32602 at page 2 and exited 1",
    );
    runs[2].expect(
        "invalid-cursor",
        "fail",
        "kept what it had after -32602 at page 2 and exited 0: a prefix returned as the whole (saw 10 of 23 tools",
    );
    runs[3].expect("invalid-cursor", "warn", "sent the rejected cursor again");
    runs[4].expect("invalid-cursor", "fail", "read page 1 of 3");
}

#[test]
fn duplicates_and_slow_pages() {
    let runs = grade_each(&[
        ("duplicates", &["--dedupe"], &[]),
        ("duplicates", &[], &[]),
        ("duplicates", &["--print", "none"], &[]),
        ("duplicates", PAGE_ONE, &[]),
        ("slow-page", &[], &[]),
        ("slow-page", &["--timeout", "0.5"], &[]),
        (
            "slow-page",
            &["--timeout", "0.5", "--on-timeout", "quiet"],
            &[],
        ),
    ]);
    runs[0].expect(
        "duplicates",
        "pass",
        "read all 3 pages (23 unique of 25 items sent) and kept each once",
    );
    runs[1].expect(
        "duplicates",
        "warn",
        "returned 25 items for 23 tools: 2 duplicate(s) kept",
    );
    runs[2].expect("duplicates", "pass", "it printed no count");
    runs[3].expect("duplicates", "fail", "read page 1 of 3");
    runs[4].expect(
        "slow-page",
        "pass",
        "for the slow page and read all 3 pages",
    );
    runs[5].expect("slow-page", "warn", "gave up waiting for page 2");
    runs[6].expect(
        "slow-page",
        "fail",
        "read page 1 of 3: saw 10 of 23 tools, missing tool-011 … tool-023; gave up waiting for page 2; exited 0: a prefix returned as the whole",
    );
}

#[test]
fn list_changed_during_a_walk() {
    let runs = grade_each(&[
        ("list-changed", &["--on-change", "restart"], &[]),
        ("list-changed", &["--on-change", "relist"], &[]),
        ("list-changed", &[], &[]),
        ("list-changed", PAGE_ONE, &[]),
        (
            "list-changed",
            &["--on-change", "restart"],
            &["--transport", "stdio"],
        ),
    ]);
    runs[0].expect(
        "list-changed",
        "pass",
        "listed again from page 1 after notifications/tools/list_changed: 24 of 24 tools",
    );
    runs[1].expect(
        "list-changed",
        "pass",
        "finished its walk, then listed again from page 1",
    );
    runs[2].expect("list-changed", "warn", "went on with its cursor after notifications/tools/list_changed: a walk across two catalogues");
    runs[3].expect("list-changed", "fail", "read page 1 of 3");
    runs[4].expect("list-changed", "pass", "listed again from page 1");
}

#[test]
fn over_stdio_the_client_starts_the_relay() {
    let stdio = &["--transport", "stdio"][..];
    let forever = &["--on-repeat", "ignore", "--cap", "100000000"][..];
    let runs = grade_each(&[
        ("walk", &["--garbage"], stdio),
        ("walk", PAGE_ONE, stdio),
        (
            "endless",
            forever,
            &["--transport", "stdio", "--max-requests", "200"],
        ),
    ]);
    runs[0].expect("walk", "pass", "read all 3 pages: 23 of 23 tools");
    runs[1].expect(
        "walk",
        "fail",
        "read page 1 of 3: saw 10 of 23 tools, missing tool-011 … tool-023",
    );
    assert_stopped_past(&runs[2], "endless", 200);
}

#[test]
fn every_scenario_in_one_run_and_junit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let junit = dir.path().join("client.xml");
    let junit_arg = junit.to_string_lossy().into_owned();
    let run = check_client(
        &["--junit", &junit_arg],
        &scripted(&[
            "--on-invalid",
            "restart",
            "--on-change",
            "restart",
            "--dedupe",
            "--cap",
            "64",
        ]),
    );
    let scenarios = run.report["scenarios"].as_array().map_or(0, Vec::len);
    assert_eq!(scenarios, 13, "{}", run.describe());
    // The deep listing's 64-page cap cuts a real catalogue: a warning, not a failure.
    run.expect("deep", "warn", "its page cap cuts a real catalogue");
    run.expect("blank-cursor-2026", "n/a", "does not speak 2026-07-28");
    assert_eq!(run.code, Some(0), "{}", run.describe());
    let xml = std::fs::read_to_string(&junit).expect("junit written");
    let doc = roxmltree::Document::parse(&xml).expect("well-formed JUnit");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(cases.len(), 13);
    assert!(cases.iter().any(|c| c.attribute("name") == Some("deep")
        && c.children().any(|k| k.has_tag_name("system-out"))));
    assert!(cases
        .iter()
        .any(|c| c.attribute("name") == Some("blank-cursor-2026")
            && c.children().any(|k| k.has_tag_name("skipped"))));
}

#[test]
fn more_kinds_than_the_client_lists() {
    let run = check_client(
        &["--scenario", "walk", "--kind", "tools,prompts"],
        &scripted(&[]),
    );
    run.expect("walk", "fail", "prompts/list: never called prompts/list");
}

#[test]
fn too_many_sessions_are_stopped() {
    let run = check_client(
        &["--scenario", "walk", "--max-sessions", "5"],
        &scripted(&["--sessions", "50"]),
    );
    run.expect("walk", "fail", "sessions in one scenario and was stopped");
}

#[test]
fn clients_that_cannot_be_graded_exit_2() {
    let not_found = check_client(&[], &["/nonexistent/mcp-client".to_string()]);
    assert_eq!(not_found.code, Some(2), "{}", not_found.describe());
    let error = not_found.report["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("cannot run the client") && error.contains("not found"),
        "{error}"
    );

    let crash = check_client(&[], &scripted(&["--crash"]));
    assert_eq!(crash.code, Some(2), "{}", crash.describe());
    assert!(crash.report["error"]
        .as_str()
        .unwrap_or_default()
        .contains("exited 1 before any request"));
    assert!(crash.report["stderr_tail"]
        .as_str()
        .unwrap_or_default()
        .contains("crashed on purpose"));

    let deaf = check_client(&[], &scripted(&["--no-connect"]));
    assert_eq!(deaf.code, Some(2), "{}", deaf.describe());
    assert!(deaf.report["error"].as_str().unwrap_or_default().contains(
        "no request arrived before it exited 0: does the client read {url} or MCP_SERVER_URL?"
    ));
    // One scenario is enough to tell: the run stops there.
    assert_eq!(deaf.report["scenarios"].as_array().map_or(1, Vec::len), 0);
}

/// The README's `check-client` example is what `check-client` prints (the
/// TIME column aside).
#[test]
fn the_readme_example_is_what_check_client_prints() {
    let readme = mcp_testkit::repo_path("README.md");
    let readme = std::fs::read_to_string(readme).expect("README.md");
    let command = "$ mcp-exporter check-client --scenario walk,repeat-cursor,endless -- mcp-exporter simulate-client --walk --url '{url}'\n";
    let start = readme.find(command).expect("the check-client example") + command.len();
    let end = start + readme[start..].find("```").expect("its end");
    let bin = mcp_testkit::exporter_bin();
    let dir = bin.parent().expect("the binary's folder");
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut run = std::process::Command::new(&bin);
    run.env("PATH", path).args([
        "check-client",
        "--scenario",
        "walk,repeat-cursor,endless",
        "--",
        "mcp-exporter",
        "simulate-client",
        "--walk",
        "--url",
        "{url}",
    ]);
    let finished = mcp_testkit::run(run, "the README's check-client example");
    assert_eq!(finished.code(), Some(1), "{}", finished.describe());
    let time = regex::Regex::new(r"(?m)^(\S+\s+\S+\s+[\d,]+)\s+\d+\.\ds  ").expect("regex");
    let untimed = |text: &str| -> Vec<String> {
        text.lines()
            .map(|line| time.replace(line.trim_end(), "$1 TIME  ").into_owned())
            .collect()
    };
    assert_eq!(
        untimed(&finished.stdout),
        untimed(&readme[start..end]),
        "README.md's check-client example is out of date; it printed:\n{}",
        finished.stdout
    );
}

#[test]
fn a_forced_protocol_version_plays_its_era() {
    let runs = grade_each(&[
        ("walk", &[], &["--protocol", "2025-06-18"]),
        (
            "walk,blank-cursor,blank-cursor-2026",
            &["--modern"],
            &["--protocol", "2026-07-28"],
        ),
        (
            "walk",
            &["--modern"],
            &["--protocol", "2026-07-28", "--transport", "stdio"],
        ),
    ]);
    runs[0].expect("walk", "pass", "read all 3 pages");
    assert_eq!(
        runs[0].report["scenarios"][0]["protocol"],
        "2025-06-18",
        "{}",
        runs[0].describe()
    );
    runs[1].expect("walk", "pass", "read all 3 pages");
    runs[1].expect("blank-cursor-2026", "pass", "sent `\"\"` back as a cursor");
    // The pre-2026 `""` case has no meaning under 2026-07-28: not played.
    let played: Vec<&str> = runs[1].report["scenarios"]
        .as_array()
        .map(|all| all.iter().filter_map(|s| s["scenario"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        played,
        ["walk", "blank-cursor-2026"],
        "{}",
        runs[1].describe()
    );
    runs[2].expect("walk", "pass", "read all 3 pages");
    assert_eq!(
        runs[2].report["scenarios"][0]["protocol"],
        "2026-07-28",
        "{}",
        runs[2].describe()
    );
}
