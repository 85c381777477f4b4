//! `mcp-exporter check-client`: a pagination conformance run for any MCP
//! client. Each scenario gets a fresh simulated server behind the tap; the
//! client runs once against it; what it sent is graded in the house's
//! words (docs/clients.md, "Grading a client").
//!
//! Layout: `args` (the command line) → `plan` → `run` (the scenarios in
//! turn) → `rig` (a scenario's server side, set up by `rig_setup`:
//! `rig_http`, `rig_stdio`, whose client starts `relay`) and `client` (the
//! client's process) → `watch` (the observer and `record`, which reads
//! copies through `message`) → `grade` (`case` and `view` of the record;
//! `grade_walks`, `grade_loops`, `grade_cursors`; `verdict`, `words`) →
//! `report`, `junit`. Serving mode, for apps that cannot be scripted:
//! `serve_stdio` (with `state`), `serve_http`, both with `serving`.

mod args;
mod case;
mod client;
mod grade;
mod grade_cursors;
mod grade_loops;
mod grade_walks;
mod junit;
mod message;
mod plan;
mod record;
mod relay;
mod rig;
mod rig_http;
mod rig_setup;
mod rig_stdio;
mod run;
mod run_report;
mod scenarios;
mod serve_http;
mod serve_stdio;
mod serving;
mod state;
mod verdict;
mod view;
mod watch;
mod words;

pub use args::CheckClientArgs;
pub use scenarios::ClientScenario;

use std::process::ExitCode;

pub async fn main(args: CheckClientArgs) -> ExitCode {
    if let Some(socket) = &args.relay {
        return relay::main(socket).await;
    }
    let report = match (args.serve, &args.state) {
        (Some(args::ServeMode::Stdio), _) => return serve_stdio::main(&args).await,
        (Some(args::ServeMode::Http), _) => serve_http::main(&args).await,
        (None, Some(state)) if args.command.is_empty() => serve_stdio::show(&args, state),
        (None, _) => match args.plan() {
            Ok(plan) => Ok(run::run(&plan).await),
            Err(message) => Err(message),
        },
    };
    match report {
        Ok(report) => emit(&args, &report),
        Err(message) => usage(&message),
    }
}

/// The report on stdout (table or JSON) and in `--junit`; the exit status.
fn emit(args: &CheckClientArgs, report: &run_report::Report) -> ExitCode {
    if let Some(path) = &args.junit {
        if let Err(e) = std::fs::write(path, junit::render(report)) {
            return usage(&format!("cannot write {}: {e}", path.display()));
        }
    }
    if args.json {
        match serde_json::to_string_pretty(report) {
            Ok(s) => super::print_stdout(&format!("{s}\n")),
            Err(e) => return usage(&format!("cannot encode the report: {e}")),
        }
    } else {
        super::print_stdout(&report.render());
    }
    ExitCode::from(report.exit_code())
}

pub(crate) fn usage(message: &str) -> ExitCode {
    super::print_stderr(&format!("mcp-exporter check-client: {message}\n"));
    ExitCode::from(2)
}
