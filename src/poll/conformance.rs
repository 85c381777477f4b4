//! `check`: one session, every kind listed twice, the conformance rules
//! run over what the pages said (src/conformance). Bounded like a poll: per
//! kind at most two walks under the target's limits plus two requests, and
//! one `subscriptions/listen` probe per session (2026-07-28 only).

use super::pager::{error_kind, SessionPager};
use super::scrub::scrub_listing;
use super::target::PollTarget;
use mcp_conformance::run::SubscriptionObservation;
use mcp_conformance::{evaluate, observe_kind, ConformanceReport, RuleResult};
use mcp_listing::{text, Era, Kind, ListingReport, Outcome};
use mcp_wire::session::subscriptions::AckProbe;
use mcp_wire::session::{ConnectFailure, Session, SessionOptions};
use serde_json::Value;

/// Longest rule message kept: our wording around at most one echoed server
/// string ([`text::MAX_ECHO_BYTES`]).
const MAX_RULE_MESSAGE_BYTES: usize = 2 * text::MAX_ECHO_BYTES;

/// Run every rule against `target`.
pub async fn check(target: &PollTarget) -> ConformanceReport {
    let opts = SessionOptions {
        protocol: target.protocol,
        era_hint: None,
        limits: target.transport.clone(),
        request_timeout: target.walk.page_timeout,
        trace: None,
    };
    let mut session = match Session::connect(&target.endpoint, opts).await {
        Ok(s) => s,
        Err(failure) => return no_session(target, &failure),
    };
    let mut rules = check_every_kind(&mut session, target).await;
    // The rules quote what pages said (item names of a repeated or garbage
    // cursor's page, two listings' differences): server-supplied strings
    // that may echo a credential we sent; scrubbed whole, then cut.
    for r in &mut rules {
        r.message =
            text::cut(&target.secrets.scrub(&r.message), MAX_RULE_MESSAGE_BYTES).into_owned();
        for item in &mut r.evidence.items {
            *item = target.secrets.scrub(item);
        }
    }
    let transport = session.transport_kind();
    let protocol = text::echo(&session.protocol_version).into_owned();
    session.close().await;
    let mut report = ConformanceReport::new(&target.name, rules);
    report.protocol_version = Some(target.secrets.scrub(&protocol));
    report.transport = Some(transport);
    report
}

/// Without a session every kind fails `listing_complete`, saying why.
fn no_session(target: &PollTarget, failure: &ConnectFailure) -> ConformanceReport {
    let detail = text::echo(&target.secrets.scrub(&failure.error.to_string())).into_owned();
    let rules = target
        .kinds
        .iter()
        .map(|&k| {
            RuleResult::fail(
                mcp_conformance::rule::LISTING_COMPLETE,
                k,
                format!(
                    "no session ({}): {detail}",
                    error_kind(&failure.error).label()
                ),
            )
        })
        .collect();
    let mut report = ConformanceReport::new(&target.name, rules);
    report.transport = Some(failure.transport);
    report.session_error = Some(detail);
    report
}

/// Observe every enabled kind on the session (an unadvertised kind, unless
/// forced, only as unsupported) and evaluate the rules; the
/// `subscriptions/listen` probe runs once, for the first kind that
/// advertises `listChanged` on a modern session.
async fn check_every_kind(session: &mut Session, target: &PollTarget) -> Vec<RuleResult> {
    let mut ack: Option<AckProbe> = None;
    let mut rules = Vec::new();
    for &kind in &target.kinds {
        let capability = session.capabilities.get(kind.capability());
        let advertised = capability
            .filter(|c| !c.is_null())
            .map(|c| c.get("listChanged").and_then(Value::as_bool) == Some(true));
        if !session.advertises(kind.capability()) && !target.forced_kinds.contains(&kind) {
            rules.extend(evaluate(&unsupported(kind)));
            continue;
        }
        let _ = session.drain_notifications();
        let era = session.era();
        let pager = &mut SessionPager { session };
        let mut obs = observe_kind(pager, kind, &target.walk, era, advertised).await;
        for listed in std::iter::once(&mut obs.first).chain(obs.second.as_mut()) {
            scrub_listing(&mut listed.report, &target.secrets);
        }
        if session.modern && advertised == Some(true) {
            if ack.is_none() {
                ack = Some(session.probe_subscription().await);
            }
            obs.subscription = ack.as_ref().map(|a| subscription_for(kind, a));
        }
        rules.extend(evaluate(&obs));
    }
    rules
}

fn unsupported(kind: Kind) -> mcp_conformance::KindObservations {
    mcp_conformance::KindObservations {
        kind,
        era: Era::Legacy,
        advertised_list_changed: None,
        first: mcp_conformance::run::Listed {
            report: ListingReport::empty(kind, Outcome::Unsupported),
            pages: Vec::new(),
        },
        second: None,
        garbage: None,
        repeat: None,
        subscription: None,
    }
}

/// The acknowledgement, as it concerns one kind's filter.
fn subscription_for(kind: Kind, ack: &AckProbe) -> SubscriptionObservation {
    let filter = match kind {
        Kind::Tools => "toolsListChanged",
        Kind::Prompts => "promptsListChanged",
        Kind::Resources | Kind::ResourceTemplates => "resourcesListChanged",
    };
    match ack {
        AckProbe::Acknowledged { honoured } => SubscriptionObservation::Acknowledged {
            honoured: honoured.iter().any(|h| h == filter),
        },
        AckProbe::NotAcknowledged { detail } => SubscriptionObservation::NotAcknowledged {
            detail: detail.clone(),
        },
    }
}

/// A scheduled target's conformance run (serve mode): `check` under a hard
/// bound. `None` when the run got no session or hit the bound: that says
/// nothing about the rules, and the poll reports the failure itself.
pub async fn check_configured(
    config: &crate::config::TargetConfig,
    stderr_tail_bytes: usize,
    limit: std::time::Duration,
) -> Option<ConformanceReport> {
    let target = PollTarget::from_config(config, stderr_tail_bytes).ok()?;
    let report = tokio::time::timeout(limit, check(&target)).await.ok()?;
    report.session_error.is_none().then_some(report)
}

/// The hard bound of one conformance run: connect, then per kind two
/// listings under their deadline and two more requests, plus the
/// `subscriptions/listen` probe and slack.
pub fn run_deadline(config: &crate::config::TargetConfig) -> std::time::Duration {
    let l = &config.settings.limits;
    let kinds = config.settings.kinds.len().max(1) as u32;
    let per_kind = l
        .timeout
        .saturating_mul(2)
        .saturating_add(l.page_timeout.saturating_mul(2));
    l.connect_timeout
        .saturating_add(per_kind.saturating_mul(kinds))
        .saturating_add(l.page_timeout.saturating_mul(2))
        .saturating_add(std::time::Duration::from_secs(10))
}
