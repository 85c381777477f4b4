//! The status pages a person reads at a glance: every target's health,
//! catalogue sizes and trend, and per target recent polls page by page.

use super::html::{esc, page, path_segment, sparkline};
use super::AppState;
use crate::poll::unix_now;
use crate::sinks::status::{PollSummary, TargetStatus};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use std::fmt::Write as _;

pub async fn index(State(app): State<AppState>) -> Html<String> {
    let targets = app.service.status().all();
    let now = unix_now();
    let mut b = String::new();
    let up = targets
        .iter()
        .filter(|t| t.history.front().is_some_and(|p| p.up))
        .count();
    let _ = write!(
        b,
        "<h1>Targets</h1><p>{up} of {} target(s) listed every kind completely on their last poll.</p>",
        targets.len()
    );
    b.push_str("<table><tr><th>target</th><th>health</th><th>server</th><th>catalogue (unique items, trend)</th><th>last outcome</th><th>last poll</th><th>next poll</th></tr>");
    for t in &targets {
        let last = t.history.front();
        let health = match last {
            None => "<span class=\"muted\">pending</span>".to_string(),
            Some(p) if p.up => "<span class=\"ok\">up</span>".to_string(),
            Some(_) => "<span class=\"bad\">down</span>".to_string(),
        };
        let server = match (&t.server_name, &t.server_version) {
            (Some(n), Some(v)) => format!("{} {}", esc(n), esc(v)),
            _ => "-".into(),
        };
        let mut sizes = String::new();
        for (kind, trend) in &t.trend {
            let _ = write!(
                sizes,
                "{}: <b>{}</b> <span class=\"spark\">{}</span><br>",
                kind,
                trend.back().copied().unwrap_or(0),
                sparkline(trend.iter())
            );
        }
        let outcome = last.map(outcome_cell).unwrap_or_else(|| "-".into());
        let age = last
            .map(|p| format!("{} ago", ago(now - p.started_unix_seconds)))
            .unwrap_or_else(|| "-".into());
        let next = t
            .next_poll_unix_seconds
            .map(|n| {
                if n > now {
                    format!("in {}", ago(n - now))
                } else {
                    "due".into()
                }
            })
            .unwrap_or_else(|| "-".into());
        let _ = write!(
            b,
            "<tr><td><a href=\"/targets/{}\">{}</a><br><span class=\"muted\">{}</span></td><td>{health}</td><td>{server}</td><td>{sizes}</td><td>{outcome}</td><td>{age}</td><td>{next}</td></tr>",
            path_segment(&t.name),
            esc(&t.name),
            esc(&t.endpoint)
        );
    }
    b.push_str("</table>");
    Html(page("mcp-exporter", &b))
}

fn outcome_cell(p: &PollSummary) -> String {
    if let Some(e) = &p.session_error {
        return format!("<span class=\"bad\">{}</span>", esc(e));
    }
    let mut s = String::new();
    for k in &p.kinds {
        let class = match k.outcome {
            "complete" => "ok",
            "unsupported" => "muted",
            "aborted" => "warn",
            _ => "bad",
        };
        let reason = k
            .reason
            .as_deref()
            .map(|r| format!(" ({})", esc(r)))
            .unwrap_or_default();
        let shrink = if k.silent_shrink {
            " <span class=\"bad\">silent shrink</span>"
        } else {
            ""
        };
        let _ = write!(
            s,
            "{}: <span class=\"{class}\">{}{reason}</span>{shrink}<br>",
            k.kind, k.outcome
        );
    }
    s
}

fn ago(secs: f64) -> String {
    let s = secs.max(0.0);
    if s < 90.0 {
        format!("{s:.0}s")
    } else if s < 5400.0 {
        format!("{:.0}m", s / 60.0)
    } else {
        format!("{:.1}h", s / 3600.0)
    }
}

pub async fn target(State(app): State<AppState>, Path(name): Path<String>) -> Response {
    let Some(t) = app.service.status().get(&name) else {
        return (
            StatusCode::NOT_FOUND,
            Html(page("not found", "<p>No such target.</p>")),
        )
            .into_response();
    };
    Html(page(&t.name, &render_target(&t))).into_response()
}

fn render_target(t: &TargetStatus) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1>{}</h1><p><span class=\"muted\">{}</span> · {} · {} poll(s), {} skipped · {} consecutive failure(s)</p>",
        esc(&t.name),
        esc(&t.endpoint),
        esc(&t.schedule),
        t.polls,
        t.skipped_polls,
        t.consecutive_failures
    );
    for (i, p) in t.history.iter().enumerate() {
        let when =
            chrono::DateTime::from_timestamp_millis((p.started_unix_seconds * 1000.0) as i64)
                .map(|d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string())
                .unwrap_or_default();
        let _ = write!(
            b,
            "<h2>{} {}</h2><p>{} · protocol {} over {} · {:.1} ms{}{}</p>",
            if i == 0 { "Latest poll" } else { "Poll" },
            esc(&when),
            if p.up {
                "<span class=\"ok\">up</span>"
            } else {
                "<span class=\"bad\">down</span>"
            },
            esc(p.protocol_version.as_deref().unwrap_or("-")),
            esc(p.transport.label()),
            p.duration_seconds * 1000.0,
            p.time_to_ready_seconds
                .map(|s| format!(" · ready in {:.1} ms", s * 1000.0))
                .unwrap_or_default(),
            p.trace_id
                .map(|id| format!(" · trace <code>{id}</code>"))
                .unwrap_or_default()
        );
        if let Some(e) = &p.session_error {
            let _ = write!(b, "<p class=\"bad\">{}</p>", esc(e));
        }
        b.push_str("<table><tr><th>kind</th><th>outcome</th><th class=\"num\">pages</th><th class=\"num\">requests</th><th class=\"num\">raw</th><th class=\"num\">unique</th><th class=\"num\">dupes</th><th class=\"num\">-32602</th><th>added / removed</th><th>pages (items · ms · next)</th></tr>");
        for k in &p.kinds {
            let pages: Vec<String> = k
                .page_detail
                .iter()
                .map(|pg| {
                    format!(
                        "#{}{} {}·{:.1}·{}",
                        pg.index,
                        if pg.attempt > 0 {
                            format!("/a{}", pg.attempt)
                        } else {
                            String::new()
                        },
                        pg.items,
                        pg.ms,
                        esc(&pg.next)
                    )
                })
                .collect();
            let churn = format!(
                "{}{}",
                if k.added.is_empty() {
                    String::new()
                } else {
                    format!("+ {}<br>", esc(&k.added.join(", ")))
                },
                if k.removed.is_empty() {
                    String::new()
                } else {
                    format!("− {}", esc(&k.removed.join(", ")))
                }
            );
            let _ = write!(
                b,
                "<tr><td>{}</td><td>{}{}{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{churn}</td><td class=\"muted\">{}</td></tr>",
                k.kind,
                esc(k.outcome),
                k.reason.as_deref().map(|r| format!(" ({})", esc(r))).unwrap_or_default(),
                k.detail.as_deref().map(|d| format!("<br><span class=\"muted\">{}</span>", esc(d))).unwrap_or_default(),
                k.pages,
                k.requests,
                k.raw_items,
                k.unique_items,
                k.duplicate_items,
                k.invalid_cursor_errors,
                pages.join("<br>")
            );
        }
        b.push_str("</table>");
    }
    if let Some(tail) = &t.stderr_tail {
        let _ = write!(
            b,
            "<h2>stderr (last bytes, secrets redacted)</h2><pre>{}</pre>",
            esc(tail)
        );
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ages_read_naturally() {
        assert_eq!(ago(5.0), "5s");
        assert_eq!(ago(600.0), "10m");
        assert_eq!(ago(7200.0), "2.0h");
    }
}
