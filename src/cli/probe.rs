//! `mcp-exporter probe`: list one server by hand and show every page.

use super::FlagDuration;
use crate::config::{default::STDERR_TAIL_BYTES, Limits};
use crate::poll::{
    poll, poll_configured, poll_report_text, ConfiguredPoll, HardDeadline, PollContext, PollReport,
    PollTarget, TargetBuilder, TargetError,
};
use crate::scheduler::schedule::poll_deadline;
use crate::sinks::probe_answer::judged;
use crate::sinks::verdict::judge_report;
use crate::verdict::TargetVerdict;
use mcp_listing::{HttpMode, Kind, ProtocolVersion, UnknownLabel};
use mcp_wire::transport::http::HttpSpec;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["url", "stdio", "config_file"])))]
pub struct ProbeArgs {
    /// MCP endpoint URL (Streamable HTTP or legacy SSE).
    #[arg(long)]
    pub url: Option<url::Url>,
    /// Extra HTTP header `Name: value` (repeatable).
    #[arg(long = "header", value_name = "K:V")]
    pub headers: Vec<String>,
    /// File holding a bearer token.
    #[arg(long)]
    pub bearer_token_file: Option<PathBuf>,
    /// Environment variable holding a bearer token.
    #[arg(long)]
    pub bearer_token_env: Option<String>,
    /// HTTP transport: auto, streamable-http or sse.
    #[arg(long, default_value = "auto", value_parser = parse_mode)]
    pub transport: HttpMode,
    /// PEM file of CA certificates to trust.
    #[arg(long)]
    pub ca_file: Option<PathBuf>,
    /// Start the server as a child and speak stdio; the command follows `--`.
    #[arg(long)]
    pub stdio: bool,
    /// Read the target from this config file (with --target).
    #[arg(short = 'c', long = "config.file", requires = "target")]
    pub config_file: Option<PathBuf>,
    /// Target name in the config file.
    #[arg(long)]
    pub target: Option<String>,
    /// Kinds to list (repeatable; default all four).
    #[arg(long = "kind")]
    pub kinds: Vec<Kind>,
    /// List these kinds even if the server does not advertise them.
    #[arg(long = "force-kind")]
    pub forced_kinds: Vec<Kind>,
    #[arg(long, default_value_t = Limits::DEFAULT.max_pages)]
    pub max_pages: u32,
    #[arg(long, default_value_t = Limits::DEFAULT.max_items)]
    pub max_items: u64,
    #[arg(long, default_value_t = Limits::DEFAULT.max_response_bytes)]
    pub max_response_bytes: u64,
    /// Per-request timeout (connecting included).
    #[arg(long, default_value_t = FlagDuration(Limits::DEFAULT.page_timeout))]
    pub timeout: FlagDuration,
    /// Whole-listing deadline per kind.
    #[arg(long, default_value_t = FlagDuration(Limits::DEFAULT.timeout))]
    pub listing_timeout: FlagDuration,
    /// Protocol version to use instead of negotiating.
    #[arg(long)]
    pub protocol: Option<String>,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// The stdio server command and its arguments.
    #[arg(last = true)]
    pub command: Vec<String>,
}

fn parse_mode(s: &str) -> Result<HttpMode, String> {
    s.parse()
        .map_err(|e: UnknownLabel| format!("unknown transport {s:?} ({})", e.choices()))
}

/// Exit codes: 0 every listing complete, 1 any aborted or failed, 2 usage.
pub async fn main(args: ProbeArgs) -> ExitCode {
    let polled = match &args.config_file {
        Some(path) => probe_configured(path, &args).await,
        None => match target_from_args(&args) {
            Ok(target) => {
                let report = poll(&target, PollContext::default()).await;
                let verdict = judge_report(&report, &Default::default());
                Ok((report, verdict))
            }
            Err(msg) => Err(msg),
        },
    };
    let (report, verdict) = match polled {
        Ok(polled) => polled,
        Err(msg) => {
            eprintln!("mcp-exporter probe: {msg}");
            return ExitCode::from(2);
        }
    };
    if args.json {
        match mcp_listing::shown_json::to_string_pretty(&with_verdict(&report, &verdict)) {
            Ok(s) => super::print_stdout(&format!("{s}\n")),
            Err(e) => {
                eprintln!("mcp-exporter probe: cannot encode the report: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        super::print_stdout(&format!(
            "{}\n{}",
            crate::verdict::text::render(&verdict),
            poll_report_text::render(&report)
        ));
    }
    if report.all_complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// A configured target polled as the scheduler polls it: every version of
/// its `protocols:` (one session each, catalogues compared), under its hard
/// deadline, judged with its `expect:`.
async fn probe_configured(
    path: &Path,
    args: &ProbeArgs,
) -> Result<(PollReport, TargetVerdict), String> {
    let name = args.target.as_deref().unwrap_or_default();
    let loaded = crate::config::load_file(path).map_err(|e| e.to_string())?;
    let Some(target) = loaded.config.target(name) else {
        return Err(TargetError::NoSuchTarget {
            path: path.to_path_buf(),
            name: name.to_string(),
        }
        .to_string());
    };
    let mut target = target.clone();
    narrow_kinds(args, &mut target.settings.kinds, &mut target.forced_kinds);
    let listed = target.settings.kinds.clone();
    target.expect.items.retain(|k, _| listed.contains(k));
    let target = &target;
    let limit = poll_deadline(target);
    let deadline = HardDeadline {
        limit,
        exceeded: format!("probe exceeded the poll deadline of {limit:?}"),
    };
    let (report, _) = poll_configured(ConfiguredPoll {
        config: target,
        stderr_tail_bytes: loaded.config.defaults.stderr_tail_bytes,
        ctx: PollContext::default(),
        deadline,
        keep_open: false,
    })
    .await;
    Ok(judged(report, target))
}

pub(crate) fn target_from_args(args: &ProbeArgs) -> Result<PollTarget, String> {
    if let Some(path) = &args.config_file {
        let name = args.target.as_deref().unwrap_or_default();
        let mut target = PollTarget::from_config_file(path, name).map_err(|e| e.to_string())?;
        narrow_kinds(args, &mut target.kinds, &mut target.forced_kinds);
        return Ok(target);
    }
    let builder = if args.stdio {
        let Some((command, rest)) = args.command.split_first() else {
            return Err("--stdio needs a command after `--`".into());
        };
        TargetBuilder::stdio(PROBE_TARGET_NAME, command, rest, &Default::default(), None)
    } else {
        TargetBuilder::http(PROBE_TARGET_NAME, http_spec(args)?, args.transport)
    };
    let protocol = match &args.protocol {
        Some(v) => Some(v.parse::<ProtocolVersion>().map_err(|_| {
            format!(
                "--protocol {v:?} is not one of {}",
                ProtocolVersion::LABELS.join(", ")
            )
        })?),
        None => None,
    };
    if args.max_pages == 0 {
        return Err("--max-pages must be at least 1".into());
    }
    let limits = Limits {
        timeout: args.listing_timeout.0,
        page_timeout: args.timeout.0,
        connect_timeout: args.timeout.0,
        max_pages: args.max_pages,
        max_items: args.max_items,
        max_response_bytes: args.max_response_bytes,
        ..Limits::DEFAULT
    };
    let kinds = if args.kinds.is_empty() {
        Kind::ALL.to_vec()
    } else {
        args.kinds.clone()
    };
    Ok(builder
        .protocol(protocol)
        .kinds(kinds, args.forced_kinds.clone())
        .limits(
            limits.walk_limits(),
            limits.transport_limits(STDERR_TAIL_BYTES),
        )
        .build())
}

/// `--kind` narrows a configured target's kinds to those asked for;
/// `--force-kind` adds to its forced kinds (and so to its kinds).
fn narrow_kinds(args: &ProbeArgs, kinds: &mut Vec<Kind>, forced: &mut Vec<Kind>) {
    if !args.kinds.is_empty() {
        kinds.clone_from(&args.kinds);
        forced.retain(|k| args.kinds.contains(k));
    }
    for k in &args.forced_kinds {
        if !forced.contains(k) {
            forced.push(*k);
        }
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
}

/// `--url` with its headers, bearer token and TLS flags.
fn http_spec(args: &ProbeArgs) -> Result<HttpSpec, String> {
    let url = args
        .url
        .clone()
        .ok_or("--url, --stdio or --config.file is required")?;
    let mut headers = Vec::new();
    for h in &args.headers {
        let (k, v) = h
            .split_once(':')
            .ok_or_else(|| format!("--header {h:?} is not `Name: value`"))?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(HttpSpec {
        url: Some(url),
        headers,
        bearer_token: bearer_token(args)?,
        ca_file: args.ca_file.clone(),
        insecure_skip_verify: false,
        max_redirects: crate::config::default::MAX_REDIRECTS,
        scope: mcp_wire::transport::scope::CredentialScope::UnderTarget,
    })
}

/// `--bearer-token-file` (read now, trimmed), else `--bearer-token-env`.
fn bearer_token(args: &ProbeArgs) -> Result<Option<String>, String> {
    match (&args.bearer_token_file, &args.bearer_token_env) {
        (Some(f), _) => Ok(Some(
            std::fs::read_to_string(f)
                .map_err(|e| format!("reading --bearer-token-file {}: {e}", f.display()))?
                .trim()
                .to_string(),
        )),
        (None, Some(var)) => std::env::var(var)
            .map(Some)
            .map_err(|_| format!("--bearer-token-env: {var} is not set")),
        (None, None) => Ok(None),
    }
}

/// The report with its verdict, in the shape of `/api/targets`: `verdict`
/// for the target, `kinds.<kind>.verdict` per kind (docs/api.md).
#[derive(serde::Serialize)]
pub struct ReportWithVerdict<'a> {
    #[serde(flatten)]
    pub report: &'a PollReport,
    pub verdict: &'a crate::verdict::Verdict,
    pub kinds: std::collections::BTreeMap<Kind, KindVerdict<'a>>,
}

#[derive(serde::Serialize)]
pub struct KindVerdict<'a> {
    pub verdict: &'a crate::verdict::Verdict,
}

pub fn with_verdict<'a>(
    report: &'a PollReport,
    verdict: &'a crate::verdict::TargetVerdict,
) -> ReportWithVerdict<'a> {
    ReportWithVerdict {
        report,
        verdict: &verdict.overall,
        kinds: verdict
            .kinds
            .iter()
            .map(|(k, v)| (*k, KindVerdict { verdict: v }))
            .collect(),
    }
}

/// The `target` label and report name of a command-line probe.
const PROBE_TARGET_NAME: &str = "probe";
