//! `mcp-exporter check`: the pagination conformance report for server and
//! gateway authors. Same target flags as `probe`; a table for people,
//! `--json` for scripts, `--junit FILE` for CI. Exit 0 clean, 1 when a MUST
//! fails or a listing cannot be completed, 2 for usage errors.

use super::probe::{target_from_args, ProbeArgs};
use mcp_conformance::{junit, ConformanceReport, RuleVerdict};
use mcp_listing::text::escape as shown;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    pub target: ProbeArgs,
    /// Also write the verdicts as JUnit XML (one test case per rule and kind).
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
}

/// The target name of a command-line check.
const CHECK_TARGET_NAME: &str = "check";

pub async fn main(args: CheckArgs) -> ExitCode {
    let mut target = match target_from_args(&args.target) {
        Ok(t) => t,
        Err(msg) => {
            eprintln!("mcp-exporter check: {msg}");
            return ExitCode::from(2);
        }
    };
    if args.target.config_file.is_none() {
        target.name = CHECK_TARGET_NAME.to_string();
    }
    let report = crate::poll::conformance::check(&target).await;
    if let Some(path) = &args.junit {
        if let Err(e) = std::fs::write(path, junit::render(std::slice::from_ref(&report))) {
            eprintln!("mcp-exporter check: cannot write {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if args.target.json {
        match mcp_listing::shown_json::to_string_pretty(&report) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                eprintln!("mcp-exporter check: cannot encode the report: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", render(&report));
    }
    ExitCode::from(report.exit_code())
}

/// The human view: one line per rule and kind, failures with evidence;
/// control characters in whatever a server put into a field are escaped.
pub fn render(r: &ConformanceReport) -> String {
    let mut out = String::new();
    // A configured target is named; a command-line one has no name to give.
    let subject = if r.target == CHECK_TARGET_NAME {
        String::new()
    } else {
        format!(" of {}", shown(&r.target))
    };
    let _ = writeln!(
        out,
        "pagination check{subject} · protocol {} · transport {}",
        shown(r.protocol_version.as_deref().unwrap_or("-")),
        r.transport.map_or("-", |t| t.label())
    );
    if let Some(e) = &r.session_error {
        let _ = writeln!(out, "no session: {}", shown(&e.to_string()));
    }
    let _ = writeln!(
        out,
        "{:<19} {:<24} {:<7} {:<7} MESSAGE",
        "KIND", "RULE", "LEVEL", "VERDICT"
    );
    for rule in &r.rules {
        let _ = writeln!(
            out,
            "{:<19} {:<24} {:<7} {:<7} {}",
            rule.kind.label(),
            rule.id,
            rule.level.label(),
            rule.verdict.label(),
            shown(&rule.message)
        );
        if rule.verdict == RuleVerdict::Fail && !rule.evidence.is_empty() {
            let _ = writeln!(
                out,
                "{:<61} ↳ {} ({})",
                "",
                shown(&rule.evidence.display()),
                rule.spec
            );
        }
    }
    let s = &r.summary;
    let _ = writeln!(
        out,
        "{} pass, {} fail ({} at MUST), {} n/a; {} listing(s) incomplete → exit {}",
        s.pass,
        s.fail,
        s.must_failures,
        s.not_applicable,
        s.incomplete_listings,
        r.exit_code()
    );
    out
}
