//! `mcp-exporter discover --config.file F`: refresh every discovery source
//! once and print what each would yield, what it would leave out and why,
//! without polling anything. Exit status 0 when every source completed, 1
//! when one did not (or the configuration is invalid).

use super::{print_stderr, print_stdout};
use crate::config::{self, Config};
use crate::discovery::entry::url_name;
use crate::discovery::fleet;
use crate::discovery::runner::refresh_once;
use crate::discovery::status::Sources;
use crate::poll::unix_now;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(clap::Args, Debug)]
pub struct DiscoverArgs {
    #[arg(short = 'c', long = "config.file", default_value = "mcp-exporter.yaml")]
    pub config_file: PathBuf,
    /// Print JSON: per source its `/api/sources` object and its targets.
    #[arg(long)]
    pub json: bool,
}

/// One source's targets, as `discover --json` prints them.
#[derive(Serialize)]
struct Yield {
    #[serde(flatten)]
    source: crate::discovery::status::SourceStatus,
    /// Name and URL (without user info, query or fragment) of each target.
    target_list: Vec<(String, String)>,
}

pub async fn main(args: DiscoverArgs) -> ExitCode {
    let loaded = match config::load_file(&args.config_file) {
        Ok(l) => l,
        Err(e) => {
            print_stderr(&format!("{e}\n"));
            return ExitCode::from(1);
        }
    };
    for w in &loaded.warnings {
        print_stderr(&format!("{w}\n"));
    }
    let config = &loaded.config;
    if config.discovery.is_empty() {
        print_stderr(&format!(
            "{}: no `discovery:` sources\n",
            args.config_file.display()
        ));
        return ExitCode::SUCCESS;
    }
    let (sources, targets) = discover(config).await;
    let all_complete = sources.all().iter().all(|s| {
        s.last_refresh
            .as_ref()
            .is_some_and(|r| r.outcome == "complete")
    });
    let yields: Vec<Yield> = sources
        .all()
        .iter()
        .map(|s| Yield {
            source: s.clone(),
            target_list: targets
                .iter()
                .filter(|t| t.source.as_deref() == Some(&s.name))
                .map(|t| (t.name.clone(), endpoint_of(t)))
                .collect(),
        })
        .collect();
    if args.json {
        match mcp_listing::shown_json::to_string_pretty(&yields) {
            Ok(text) => print_stdout(&format!("{text}\n")),
            Err(e) => print_stderr(&format!("mcp-exporter: {e}\n")),
        }
    } else {
        print_stdout(&text(&yields));
    }
    if all_complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Every source refreshed once, at once, and the targets their lists make.
async fn discover(config: &Config) -> (Sources, Vec<config::TargetConfig>) {
    let mut refreshes = Vec::new();
    for source in &config.discovery {
        let Some(module) = config.modules.get(&source.module) else {
            continue;
        };
        let task = tokio::spawn(refresh_once(Arc::new(source.clone()), module.clone()));
        refreshes.push((source.name.clone(), task));
    }
    let mut sources = Sources::default();
    sources.configure(config);
    for (name, task) in refreshes {
        if let Ok(mut refresh) = task.await {
            refresh.detail = refresh.detail.map(|d| config.known_secrets.scrub(&d));
            sources.apply(&name, &refresh, unix_now());
        }
    }
    let fleet = fleet::assemble(config, &sources.lists());
    sources.set_fleet(&fleet);
    (sources, fleet.targets)
}

fn endpoint_of(t: &config::TargetConfig) -> String {
    match &t.endpoint {
        config::EndpointConfig::Http(http) => url_name(&http.url),
        config::EndpointConfig::Stdio(_) => String::new(),
    }
}

/// The yields for people: per source its refresh, its targets, and what it
/// left out and why.
fn text(yields: &[Yield]) -> String {
    // Writing to a String cannot fail.
    let mut out = String::new();
    for y in yields {
        let s = &y.source;
        let _ = write!(out, "{} ({}, module {}): ", s.name, s.kind, s.module);
        match &s.last_refresh {
            None => {
                let _ = writeln!(out, "not refreshed");
            }
            Some(r) => {
                let _ = write!(out, "{}", r.outcome);
                if let Some(reason) = r.reason {
                    let _ = write!(out, " ({reason})");
                }
                let _ = write!(out, " in {:.0} ms", r.duration_seconds * 1000.0);
                if let Some(d) = &r.detail {
                    let _ = write!(out, ": {d}");
                }
                let _ = writeln!(out);
                if let Some(w) = &r.walk {
                    let _ = writeln!(
                        out,
                        "  walk: {} page(s), {} request(s), {} entries, {} duplicate(s){}",
                        w.pages,
                        w.requests,
                        w.items,
                        w.duplicate_items,
                        if w.fell_back_to_v0 {
                            ", /v0/servers (no /v0.1)"
                        } else {
                            ""
                        }
                    );
                }
            }
        }
        let _ = writeln!(out, "  targets ({}):", y.target_list.len());
        for (name, url) in &y.target_list {
            let _ = writeln!(out, "    {name}  {url}");
        }
        let skipped = &s.in_force.skipped;
        if skipped.total() > 0 {
            let _ = writeln!(out, "  left out ({}):", skipped.total());
            for k in &skipped.entries {
                let _ = writeln!(
                    out,
                    "    {}  {}: {} ({})",
                    k.entry, k.reason, k.detail, k.origin
                );
            }
            let shown = skipped.entries.len() as u64;
            if skipped.total() > shown {
                let _ = writeln!(out, "    … and {} more", skipped.total() - shown);
            }
        }
    }
    out
}
