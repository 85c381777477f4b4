//! `check-client --serve http --listen ADDR`: for clients that cannot be
//! scripted, over HTTP. One URL; behind it the scenarios play one after
//! another, each a fresh simulated server. A scenario is graded once the
//! client's listing has ended and the client has been quiet for a moment
//! (or it floods, or the deadline passes); then the person is told what to
//! do next. At the end the report, as `check-client` prints it.

use super::args::{CheckClientArgs, SERVE_DEADLINE};
use super::grade::{grade, Reach};
use super::plan::Limits;
use super::rig::Rig;
use super::rig_setup::{RigOptions, Transport};
use super::run::flood;
use super::run_report::{Report, ScenarioReport};
use super::scenarios::ClientScenario;
use super::serving::{append, ABANDON_AFTER};
use super::verdict::{ClientEnd, Exit, Stopped};
use super::watch::{settled, Progress, Watch};
use std::time::Instant;
use tokio::sync::watch;

pub async fn main(args: &CheckClientArgs) -> Result<Report, String> {
    let transport = args.transport();
    if transport == Transport::Stdio {
        return Err("--serve http serves http or sse, not stdio (use --serve stdio)".into());
    }
    let options = RigOptions {
        transport,
        protocol: args.protocol,
        listen: Some(args.listen),
    };
    let scenarios = args.scenarios();
    let kinds = args.kinds();
    let limits = args.limits(SERVE_DEADLINE);
    let mut report = Report::serving(transport, args.protocol, kinds.clone());
    for (i, &scenario) in scenarios.iter().enumerate() {
        let setup = scenario.setup();
        let max = usize::try_from(limits.max_requests).unwrap_or(usize::MAX);
        let watch = Watch::new(&setup, &kinds, max, ABANDON_AFTER);
        let rig = Rig::start(&setup, &options, watch)
            .await
            .map_err(|e| format!("cannot serve {scenario}: {e}"))?;
        announce(i, scenarios.len(), scenario, &rig);
        let started = Instant::now();
        let stopped = until_graded(rig.progress(), limits).await;
        let seen = rig.finish().await;
        let end = ClientEnd {
            exit: stopped.map_or(Exit::Unknown, Exit::Killed),
            printed: None,
            elapsed: started.elapsed(),
            ended: Instant::now(),
        };
        let verdict = grade(&setup, &kinds, &seen.record, end, Reach::Listener);
        let shown = mcp_listing::text::escape(&verdict.message).into_owned();
        crate::cli::print_stderr(&format!("  {}: {shown}\n", verdict.status.label()));
        if let Some(path) = &args.report {
            let line = format!(
                "scenario {} of {} · {scenario} · {}: {shown}\n",
                i + 1,
                scenarios.len(),
                verdict.status.label()
            );
            append(path, &line);
        }
        let run = super::client::ClientRun {
            end,
            stderr_tail: String::new(),
        };
        report.push(ScenarioReport::new(scenario, verdict, Some(&run), &seen));
    }
    Ok(report)
}

fn announce(i: usize, n: usize, scenario: ClientScenario, rig: &Rig) {
    let url = match rig.endpoint() {
        super::client::Endpoint::Url(url) => url,
        super::client::Endpoint::Command(_) => String::new(),
    };
    let next = if i == 0 {
        "connect the client and ask it to list its tools"
    } else {
        "ask the client to list its tools again (reconnect it if it keeps its session)"
    };
    crate::cli::print_stderr(&format!(
        "scenario {} of {n}: {scenario} ({}) at {url}\n  next: {next}\n",
        i + 1,
        scenario.setup().title
    ));
}

/// Waits until the scenario can be graded: a listing ended and the client
/// has been quiet for a moment (`None`), or the limits stopped it.
async fn until_graded(progress: watch::Receiver<Progress>, limits: Limits) -> Option<Stopped> {
    let mut watching = progress.clone();
    tokio::select! {
        _ = settled(&mut watching) => None,
        why = flood(progress, limits) => Some(why),
        () = tokio::time::sleep(limits.deadline) => Some(Stopped::Deadline),
    }
}
