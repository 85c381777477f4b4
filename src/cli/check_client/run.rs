//! Playing the scenarios against a client command: for each one a fresh
//! server side (rig.rs), one run of the client (client.rs), then its grade
//! (grade.rs). A client that cannot be run at all ends the whole run.

use super::client::{self, ClientRun};
use super::grade::{grade, Reach};
use super::plan::{Limits, Plan};
use super::rig::Rig;
use super::rig_setup::Transport;
use super::run_report::Timing;
use super::run_report::{Report, ScenarioReport};
use super::scenarios::ClientScenario;
use super::verdict::Stopped;
use super::watch::{Observation, Progress, Watch};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// A listing whose cursor has not come back for this long is abandoned
/// (the final tick ends every open one anyway).
const ABANDON_AFTER: Duration = Duration::from_secs(30);

/// Why a run ended before its scenarios did.
#[derive(Debug, thiserror::Error)]
enum Fatal {
    #[error("cannot run the client: {0}")]
    Start(#[from] client::StartFailure),
    #[error("cannot set up the scenario: {0}")]
    Rig(#[from] super::rig_setup::RigError),
}

pub async fn run(plan: &Plan) -> Report {
    let mut report = Report::new(plan);
    for (i, &scenario) in plan.scenarios.iter().enumerate() {
        match play(plan, scenario).await {
            Ok((run, seen, timing)) => {
                if i == 0 && seen.record.first_request.is_none() {
                    report.could_not_run(&run, reach(plan.rig.transport));
                    return report;
                }
                let verdict = grade(
                    &scenario.setup(),
                    &plan.kinds,
                    &seen.record,
                    run.end,
                    reach(plan.rig.transport),
                );
                let scenario = ScenarioReport::new(scenario, verdict, Some(&run), &seen);
                report.push(scenario.timed(timing));
            }
            Err(fatal) => {
                report.fail_to_run(fatal.to_string());
                return report;
            }
        }
    }
    report
}

fn reach(transport: Transport) -> Reach {
    match transport {
        Transport::Stdio => Reach::Command,
        _ => Reach::Url,
    }
}

/// One scenario: its server side up, the client run once, what was seen.
async fn play(
    plan: &Plan,
    scenario: ClientScenario,
) -> Result<(ClientRun, Observation, Timing), Fatal> {
    let setup = scenario.setup();
    let max_requests = usize::try_from(plan.limits.max_requests).unwrap_or(usize::MAX);
    let watch = Watch::new(&setup, &plan.kinds, max_requests, ABANDON_AFTER);
    let started = Instant::now();
    let rig = Rig::start(&setup, &plan.rig, watch).await?;
    let set_up = started.elapsed();
    let stop = flood(rig.progress(), plan.limits);
    let endpoint = rig.endpoint();
    let ran = client::run(
        &plan.client,
        &endpoint,
        scenario.label(),
        plan.limits.deadline,
        stop,
    )
    .await;
    // The server side ends whatever became of the client.
    let finishing = Instant::now();
    let seen = rig.finish().await;
    let timing = Timing {
        setup: set_up,
        finish: finishing.elapsed(),
    };
    Ok((ran?, seen, timing))
}

/// Resolves when the client has asked for more than the limits allow.
pub async fn flood(mut progress: watch::Receiver<Progress>, limits: Limits) -> Stopped {
    loop {
        let now = *progress.borrow_and_update();
        if now.list_requests > limits.max_requests {
            return Stopped::TooManyRequests;
        }
        if now.sessions > limits.max_sessions {
            return Stopped::TooManySessions;
        }
        if progress.changed().await.is_err() {
            return std::future::pending().await;
        }
    }
}
