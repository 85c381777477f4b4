//! Servers that choose the size and the bytes of what they send: bytes
//! kept are bounded, and nothing from a server reaches a terminal raw
//! (docs/reliability.md, "Byte budgets"). Every assertion here counts
//! bytes (peak RSS from the kernel, sizes of answers and files), never
//! time. Also the state directory's hostile files and durations too long
//! to add.

use mcp_testkit::process::run_exporter;
use mcp_testkit::{exporter_bin, listing, names, run_measured, Exporter, Finished};
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

/// Peak RSS `probe` and `check` stay under against every hostile server
/// here, in KiB (docs/reliability.md): the process and the simulator it
/// starts, debug build included.
const PEAK_RSS_BUDGET_KIB: u64 = 64 * 1024;
/// `/api/targets` for one target polled many times by a long-names server.
const API_TARGETS_BUDGET_BYTES: usize = 4 * 1024 * 1024;
/// Longest name kept (mcp_listing::text::MAX_NAME_BYTES).
const MAX_NAME_BYTES: usize = 256;
/// Longest echoed server string (mcp_listing::text::MAX_ECHO_BYTES).
const MAX_ECHO_BYTES: usize = 512;

fn bin() -> String {
    exporter_bin().to_string_lossy().into_owned()
}

/// `mcp-exporter SUBCOMMAND FLAGS... --stdio -- mcp-exporter simulate
/// --transport stdio SIMULATE...`, with its peak RSS in KiB.
fn against_simulator(subcommand: &[&str], simulate: &[&str]) -> (Finished, u64) {
    let mut command = Command::new(exporter_bin());
    command
        .args(subcommand)
        .args(["--stdio", "--", &bin(), "simulate", "--transport", "stdio"])
        .args(simulate);
    let what = format!("{subcommand:?} against {simulate:?}");
    run_measured(command, &what)
}

fn assert_within_rss_budget(peak_kib: u64, what: &str) {
    assert!(
        peak_kib <= PEAK_RSS_BUDGET_KIB,
        "{what}: peak RSS {peak_kib} KiB, budget {PEAK_RSS_BUDGET_KIB} KiB"
    );
}

/// Control characters a terminal acts on: C0 but newline, DEL, C1.
fn control_characters(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c != '\n' && c.is_control())
        .collect()
}

#[test]
fn fresh_mebibyte_cursors_are_kept_as_digests() {
    // 80 pages of a fresh 1 MiB cursor each: keeping them would take
    // 80 MiB; digests take 16 bytes a page. (The listing deadline is
    // raised: a loaded machine may take minutes to move 80 MiB.)
    let simulate = [
        "--scenario",
        "huge-cursor",
        "--size-mib",
        "1",
        "--kinds",
        "tools",
    ];
    let walk = [
        "--kind",
        "tools",
        "--max-pages",
        "80",
        "--listing-timeout",
        "10m",
    ];
    let (probe, peak) = against_simulator(&[&["probe", "--json"][..], &walk].concat(), &simulate);
    let report: Value = serde_json::from_str(&probe.stdout).unwrap_or_else(|e| {
        panic!("probe --json: {e}\n{}", probe.describe());
    });
    let tools = listing(&report, "tools");
    assert_eq!(tools["outcome"], "aborted", "{}", probe.describe());
    assert_eq!(tools["reason"], "page_cap");
    assert_within_rss_budget(peak, "probe, huge-cursor");

    let (check, peak) = against_simulator(&[&["check", "--json"][..], &walk].concat(), &simulate);
    assert_eq!(check.code(), Some(1), "{}", check.describe());
    assert_within_rss_budget(peak, "check, huge-cursor");
}

#[test]
fn long_names_are_cut_where_they_are_kept() {
    // 200 names of 60 KB each (12 MB a listing).
    let simulate = [
        "--scenario",
        "long-names",
        "--items",
        "200",
        "--page-size",
        "50",
        "--size-mib",
        "12",
        "--kinds",
        "tools",
    ];
    let (probe, peak) = against_simulator(&["probe", "--json", "--kind", "tools"], &simulate);
    let report: Value = serde_json::from_str(&probe.stdout).expect("probe --json is JSON");
    let kept = names(listing(&report, "tools"));
    assert_eq!(kept.len(), 200, "{}", probe.describe());
    assert!(
        kept.iter().all(|n| n.len() <= MAX_NAME_BYTES),
        "a name kept whole"
    );
    // Cut names stay apart: 200 distinct names, 200 distinct kept names.
    let distinct: std::collections::BTreeSet<&String> = kept.iter().collect();
    assert_eq!(distinct.len(), 200);
    assert!(
        probe.stdout.len() < 256 * 1024,
        "{} bytes",
        probe.stdout.len()
    );
    assert_within_rss_budget(peak, "probe, long-names");

    let (check, peak) = against_simulator(&["check", "--json", "--kind", "tools"], &simulate);
    let report: Value = serde_json::from_str(&check.stdout).expect("check --json is JSON");
    for rule in report["rules"].as_array().expect("rules") {
        for item in rule["evidence"]["items"].as_array().into_iter().flatten() {
            let item = item.as_str().unwrap_or_default();
            assert!(
                item.len() <= MAX_NAME_BYTES,
                "evidence item of {} bytes",
                item.len()
            );
        }
    }
    assert!(
        check.stdout.len() < 256 * 1024,
        "{} bytes",
        check.stdout.len()
    );
    assert_within_rss_budget(peak, "check, long-names");
}

#[test]
fn a_huge_result_type_is_echoed_cut() {
    let simulate = [
        "--scenario",
        "huge-result-type",
        "--size-mib",
        "5",
        "--kinds",
        "tools",
    ];
    let (probe, _) = against_simulator(&["probe", "--json", "--kind", "tools"], &simulate);
    let report: Value = serde_json::from_str(&probe.stdout).expect("probe --json is JSON");
    let tools = listing(&report, "tools");
    assert_eq!(tools["reason"], "malformed_result", "{}", probe.describe());
    let detail = tools["detail"].as_str().unwrap_or_default();
    assert!(
        detail.len() <= MAX_ECHO_BYTES,
        "detail of {} bytes",
        detail.len()
    );
    assert!(
        probe.stdout.len() < 64 * 1024,
        "{} bytes",
        probe.stdout.len()
    );

    let (check, peak) = against_simulator(&["check", "--json", "--kind", "tools"], &simulate);
    assert!(
        check.stdout.len() < 64 * 1024,
        "{} bytes",
        check.stdout.len()
    );
    assert_within_rss_budget(peak, "check, huge-result-type");
}

#[test]
fn control_characters_never_reach_the_terminal() {
    let simulate = ["--scenario", "control-chars", "--kinds", "tools"];
    for subcommand in [
        &["probe", "--kind", "tools"][..],
        &["check", "--kind", "tools"][..],
    ] {
        let (run, _) = against_simulator(subcommand, &simulate);
        let out = run.output();
        if subcommand[0] == "probe" {
            assert!(out.contains("sim\\x1b]0;owned\\x07"), "{}", run.describe());
        }
        // Names show as duplicates (probe) and as evidence (check).
        assert!(
            out.contains("\\x1b[2J\\x00\\u{009b}31m\\r\\n99 pass"),
            "escaped visibly: {}",
            run.describe()
        );
        assert_eq!(control_characters(&out), Vec::<char>::new(), "{out}");
        // The forged summary stays inside its field, never a line of its own.
        assert!(
            !out.lines().any(|l| l.starts_with("99 pass")),
            "a forged line: {out}"
        );
    }
    // JSON and JUnit stay well-formed, names intact there.
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let junit_arg = junit.to_string_lossy().into_owned();
    let (check, _) = against_simulator(
        &["check", "--json", "--kind", "tools", "--junit", &junit_arg],
        &simulate,
    );
    let report: Value = serde_json::from_str(&check.stdout).expect("check --json is JSON");
    assert!(report["rules"].is_array());
    assert_json_shows_no_control(&check.stdout, "check --json");
    let xml = std::fs::read_to_string(&junit).expect("the JUnit file");
    roxmltree::Document::parse(&xml).expect("well-formed JUnit");
    let (probe, _) = against_simulator(&["probe", "--json", "--kind", "tools"], &simulate);
    let report: Value = serde_json::from_str(&probe.stdout).expect("probe --json is JSON");
    assert!(names(listing(&report, "tools"))[0].contains('\u{1b}'));
    assert!(names(listing(&report, "tools"))[0].contains('\u{9b}'));
    assert_json_shows_no_control(&probe.stdout, "probe --json");
    assert!(probe
        .stdout
        .contains(r"\u001b[2J\u0000\u009b31m\r\n99 pass"));
}

/// JSON printed to a terminal: C1 (U+009B is CSI) escaped as `\u009b`, as
/// every other control is, the value intact for a JSON reader.
fn assert_json_shows_no_control(json: &str, what: &str) {
    assert_eq!(
        control_characters(json),
        Vec::<char>::new(),
        "{what} prints controls raw"
    );
}

#[test]
fn serve_keeps_churning_long_names_within_budget() {
    let config = format!(
        "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\ntargets:\n  - name: churn\n    stdio:\n      command: {bin}\n      args: [simulate, --transport, stdio, --scenario, long-names, --items, '200', --page-size, '50', --size-mib, '12', --kinds, tools]\n",
        bin = bin()
    );
    let exp = Exporter::start(&config);
    exp.wait(
        Duration::from_secs(240),
        "12 polls of the churning target",
        || (exp.polls("churn") >= 12).then_some(()),
    );
    // Two page renders at once, and the health check beside them.
    let page = std::thread::scope(|s| {
        let pages: Vec<_> = (0..2)
            .map(|_| s.spawn(|| exp.get("/targets/churn")))
            .collect();
        let (status, _) = exp.get("/-/healthy");
        assert_eq!(status, 200);
        pages
            .into_iter()
            .map(|p| p.join().expect("a page request"))
            .collect::<Vec<_>>()
    });
    for (status, body) in &page {
        assert_eq!(*status, 200);
        assert!(
            body.len() < API_TARGETS_BUDGET_BYTES,
            "page of {} bytes",
            body.len()
        );
    }
    let (status, api) = exp.get("/api/targets");
    assert_eq!(status, 200);
    assert!(
        api.len() <= API_TARGETS_BUDGET_BYTES,
        "/api/targets of {} bytes, budget {API_TARGETS_BUDGET_BYTES}",
        api.len()
    );
    let rss_kib = rss_kib(exp.pid());
    assert!(
        rss_kib <= PEAK_RSS_BUDGET_KIB,
        "serve RSS {rss_kib} KiB, budget {PEAK_RSS_BUDGET_KIB} KiB"
    );
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

#[test]
fn hostile_files_in_the_state_dir_are_moved_aside_untouched() {
    let outside = tempfile::tempdir().unwrap();
    let foreign = outside.path().join("foreign.txt");
    std::fs::write(&foreign, "not yours").unwrap();
    let exp = Exporter::start_with_dir(
        |dir| {
            let baselines = dir.join("state/baselines");
            std::fs::create_dir_all(&baselines).unwrap();
            let status = Command::new("mkfifo")
                .arg(baselines.join("fifo.json"))
                .status()
                .unwrap();
            assert!(status.success());
            std::os::unix::fs::symlink("/dev/zero", baselines.join("zero.json")).unwrap();
            std::os::unix::fs::symlink(&foreign, baselines.join("linked.json")).unwrap();
            // Where earlier versions put their temporary file, and one in
            // today's pattern: a crash's leftover is unlinked, the link only.
            let ours = baseline_file("sim");
            std::os::unix::fs::symlink(&foreign, baselines.join(format!("{ours}.tmp"))).unwrap();
            std::os::unix::fs::symlink(&foreign, baselines.join(".tmp-0000000000000000.partial"))
                .unwrap();
            format!(
                "global:\n  schedule: {{every: 1s}}\n  jitter: 0s\n  kinds: [tools]\n  state_dir: {}\ntargets:\n  - name: sim\n    stdio:\n      command: {}\n      args: [simulate, --transport, stdio, --scenario, healthy, --kinds, tools]\n",
                dir.join("state").display(),
                bin()
            )
        },
        &[],
        &[],
    );
    // Started (it listens) and polls; the baseline is written.
    let baselines = exp.dir().join("state/baselines");
    let written = baselines.join(baseline_file("sim"));
    exp.wait(Duration::from_secs(60), "the baseline file", || {
        written.exists().then_some(())
    });
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "not yours");
    for moved in ["fifo.json", "zero.json", "linked.json"] {
        assert!(!baselines.join(moved).exists(), "{moved} still in place");
        assert!(
            std::fs::symlink_metadata(baselines.join(format!("{moved}.unusable"))).is_ok(),
            "{moved} not kept aside"
        );
    }
    assert!(std::fs::symlink_metadata(baselines.join(".tmp-0000000000000000.partial")).is_err());
    let dir_mode = std::fs::metadata(&baselines).unwrap().permissions().mode();
    assert_eq!(dir_mode & 0o777, 0o700);
    let file_mode = std::fs::metadata(&written).unwrap().permissions().mode();
    assert_eq!(file_mode & 0o777, 0o600);
    let stderr = exp.stderr();
    assert!(stderr.contains("moved aside"), "{stderr}");
}

/// The state file of `target` (src/baseline/store.rs, `file_name`).
fn baseline_file(target: &str) -> String {
    format!("{target}-{}.json", mcp_listing::cursor::short_hash(target))
}

#[test]
fn durations_too_long_to_add_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    std::fs::write(
        &config,
        "targets:\n  - name: t\n    http:\n      url: http://127.0.0.1:9/mcp\n    limits:\n      timeout: 18446744073709551615s\n",
    )
    .unwrap();
    let path = config.to_string_lossy().into_owned();
    let checked = run_exporter(&["check-config", "--config.file", &path]);
    assert_eq!(checked.code(), Some(1), "{}", checked.describe());
    assert!(
        checked.stderr.contains(&format!("{path}:6:")),
        "FILE:LINE:COL: {}",
        checked.describe()
    );
    let check = run_exporter(&[
        "check",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--timeout",
        "18446744073709551615s",
    ]);
    assert_eq!(check.code(), Some(2), "a usage error: {}", check.describe());
    let probe = run_exporter(&[
        "probe",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--listing-timeout",
        "400d",
    ]);
    assert_eq!(probe.code(), Some(2), "a usage error: {}", probe.describe());
}

#[test]
fn a_schedule_that_never_fires_is_warned_and_shows_no_next_poll() {
    let config = format!(
        "global:\n  kinds: [tools]\n  jitter: 0s\ntargets:\n  - name: feb30\n    schedule: '0 0 30 2 *'\n    stdio:\n      command: {}\n      args: [simulate, --transport, stdio, --scenario, healthy, --kinds, tools]\n",
        bin()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, &config).unwrap();
    let path = path.to_string_lossy().into_owned();
    let checked = run_exporter(&["check-config", "--config.file", &path]);
    assert_eq!(checked.code(), Some(0), "{}", checked.describe());
    assert!(
        checked.stderr.contains("never fires"),
        "{}",
        checked.describe()
    );
    assert!(
        checked.stderr.contains(&format!("{path}:6:")),
        "{}",
        checked.describe()
    );

    // The first poll runs at start; after it, no next poll is due (null,
    // not the time of the poll gone by).
    let exp = Exporter::start(&config);
    exp.wait(
        Duration::from_secs(60),
        "the first poll, then no next one",
        || {
            let t = exp.api_target("feb30");
            (exp.polls("feb30") >= 1 && t["next_poll_unix_seconds"].is_null()).then_some(())
        },
    );
}
