//! Scenario knobs: the same fields come from CLI flags or from a YAML entry,
//! and resolve into one immutable [`ServerConfig`] per virtual server.

use mcp_listing::kind::Kind;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::registry::config::{RegistryKnobs, RegistryKnobsError, SimulatedRegistryConfig};
use super::scenario::Scenario;

/// Protocol versions that negotiate with an `initialize` handshake.
pub const LEGACY_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The stateless revision.
pub const MODERN_VERSION: &str = "2026-07-28";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseMode {
    /// One `application/json` body per request.
    Json,
    /// A `text/event-stream` per request: priming event, then the message.
    Sse,
}

#[derive(Debug, thiserror::Error)]
pub enum SimulatorConfigError {
    #[error("unknown scenario {0:?} (see docs/simulator.md for the list)")]
    UnknownScenario(String),
    #[error("unknown kind {0:?} in --kinds (tools, prompts, resources, resource_templates)")]
    UnknownKind(String),
    #[error("unsupported protocol version {0:?}")]
    UnknownProtocol(String),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    Registry(#[from] RegistryKnobsError),
    #[error("{path}: {source}")]
    Yaml {
        path: PathBuf,
        source: yaml_serde::Error,
    },
}

/// Per-server knobs. Every field is optional so CLI flags, a YAML
/// `defaults:` block and a YAML entry can be layered.
#[derive(Debug, Clone, Default, clap::Args, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knobs {
    /// YAML only: the virtual server's name (its endpoint is /mcp/<name>).
    #[arg(skip)]
    pub name: Option<String>,
    /// YAML only: expand this entry into COUNT servers named <name>-0001...
    #[arg(skip)]
    pub count: Option<u32>,
    /// Scenario to play (healthy, truncate, cycle, ...; see docs/simulator.md).
    #[arg(long)]
    pub scenario: Option<String>,
    /// Items per kind in the catalogue [default: 20].
    #[arg(long)]
    pub items: Option<u32>,
    /// Items per page [default: 5].
    #[arg(long)]
    pub page_size: Option<u32>,
    /// Seed for everything that varies (cursor keys, orders, session ids) [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Protocol version to answer (forces it; without it the client's request is negotiated).
    #[arg(long)]
    pub protocol: Option<String>,
    /// HTTP answer format for requests.
    #[arg(long, value_enum)]
    pub response: Option<ResponseMode>,
    /// Kinds the fault applies to, comma separated [default: all four].
    #[arg(long)]
    pub kinds: Option<String>,
    /// 1-based page the fault hits [default: 2].
    #[arg(long)]
    pub page: Option<u32>,
    /// slow-page: delay of the page; drip: pause between chunks; stale-cursor:
    /// cursors older than this are rejected.
    #[arg(long)]
    pub delay_ms: Option<u64>,
    /// drip: bytes per chunk [default: 16].
    #[arg(long)]
    pub chunk_bytes: Option<u32>,
    /// shrink/grow/reorder: change after every M completed listings [default: 1].
    #[arg(long)]
    pub after_listings: Option<u32>,
    /// shrink/grow/reorder: change every T seconds instead of by listings.
    #[arg(long)]
    pub after_seconds: Option<u64>,
    /// shrink/grow: items removed/added per change [default: 1].
    #[arg(long)]
    pub change_by: Option<u32>,
    /// shrink/grow/reorder: announce each change with notifications/<kind>/list_changed.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub notify: Option<bool>,
    /// overlap: items shared by consecutive pages [default: 1].
    #[arg(long)]
    pub overlap: Option<u32>,
    /// oversize: size of the page in MiB [default: 4].
    #[arg(long)]
    pub size_mib: Option<u32>,
    /// rpc-error: the JSON-RPC error code [default: -32603].
    #[arg(long, allow_hyphen_values = true)]
    pub code: Option<i64>,
    /// auth: environment variable holding the accepted bearer token.
    #[arg(long)]
    pub token_env: Option<String>,
    /// auth: file holding the accepted bearer token (trailing newline ignored).
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// session-expiry: list requests a session answers before it expires [default: 6].
    #[arg(long)]
    pub expire_after: Option<u32>,
    /// stale-cursor: how many continuation requests are rejected [default: 1].
    #[arg(long)]
    pub times: Option<u32>,
    /// missing-keys: every E-th item lacks its identity key [default: 5].
    #[arg(long)]
    pub every: Option<u32>,
    /// 2026-07-28 subscriptions/listen misbehaviour: no-ack (never
    /// acknowledge) or die (cut the stream after the acknowledgement).
    #[arg(long, value_enum)]
    pub listen_fault: Option<ListenFault>,
    /// 2026-07-28 subscriptions/listen: end each stream gracefully (with
    /// the completion result) after N notifications [default: never].
    #[arg(long)]
    pub listen_close_after: Option<u32>,
    /// HTTP: copy the value of this request header (e.g. Authorization)
    /// into every name, description, server info and error message we
    /// answer, as a server that echoes credentials would.
    #[arg(long)]
    pub echo_header: Option<String>,
}

/// How a `subscriptions/listen` stream misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ListenFault {
    /// Never send `notifications/subscriptions/acknowledged` (notifications
    /// still follow).
    NoAck,
    /// End the stream abruptly right after the acknowledgement: HTTP cuts
    /// the connection, stdio exits the process.
    Die,
}

impl Knobs {
    /// Fields set in `self` win; the rest come from `base`.
    pub fn over(self, base: &Knobs) -> Knobs {
        let b = base.clone();
        Knobs {
            name: self.name.or(b.name),
            count: self.count.or(b.count),
            scenario: self.scenario.or(b.scenario),
            items: self.items.or(b.items),
            page_size: self.page_size.or(b.page_size),
            seed: self.seed.or(b.seed),
            protocol: self.protocol.or(b.protocol),
            response: self.response.or(b.response),
            kinds: self.kinds.or(b.kinds),
            page: self.page.or(b.page),
            delay_ms: self.delay_ms.or(b.delay_ms),
            chunk_bytes: self.chunk_bytes.or(b.chunk_bytes),
            after_listings: self.after_listings.or(b.after_listings),
            after_seconds: self.after_seconds.or(b.after_seconds),
            change_by: self.change_by.or(b.change_by),
            notify: self.notify.or(b.notify),
            overlap: self.overlap.or(b.overlap),
            size_mib: self.size_mib.or(b.size_mib),
            code: self.code.or(b.code),
            token_env: self.token_env.or(b.token_env),
            token_file: self.token_file.or(b.token_file),
            expire_after: self.expire_after.or(b.expire_after),
            times: self.times.or(b.times),
            every: self.every.or(b.every),
            listen_fault: self.listen_fault.or(b.listen_fault),
            listen_close_after: self.listen_close_after.or(b.listen_close_after),
            echo_header: self.echo_header.or(b.echo_header),
        }
    }
}

/// When shrink/grow/reorder change the catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeEvery {
    Listings(u32),
    Duration(Duration),
}

/// One virtual server, fully resolved.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub name: String,
    pub scenario: Scenario,
    pub items: u32,
    pub page_size: u32,
    pub seed: u64,
    /// A forced protocol version, if any.
    pub protocol: Option<String>,
    pub modern: bool,
    pub response: ResponseMode,
    pub fault_at: FaultAt,
    pub delay: Duration,
    pub chunk_bytes: usize,
    pub change: CatalogueChange,
    pub overlap: u32,
    pub size_bytes: usize,
    pub code: i64,
    pub credentials: Credentials,
    pub expire_after: u32,
    pub stale: Staleness,
    pub every: u32,
    pub listen: ListenStream,
}

/// Where the scenario's fault hits.
#[derive(Debug, Clone)]
pub struct FaultAt {
    /// The kinds it applies to (`--kinds`); the others are healthy.
    pub kinds: Vec<Kind>,
    /// The 1-based page (`--page`).
    pub page: u32,
}

/// How shrink, grow and reorder change the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct CatalogueChange {
    pub every: ChangeEvery,
    /// Items removed or added per change.
    pub by: u32,
    /// Each change announced with `notifications/<kind>/list_changed`.
    pub notify: bool,
}

/// What the server does with the credentials an HTTP request carries.
#[derive(Debug, Clone)]
pub struct Credentials {
    /// The bearer token it accepts (auth scenario only); others get 401.
    pub token: Option<String>,
    /// The request header whose value it echoes into its answer's strings.
    pub echo_header: Option<String>,
}

/// stale-cursor: which continuation requests are rejected as stale.
#[derive(Debug, Clone, Copy)]
pub struct Staleness {
    /// How many (by count).
    pub times: u32,
    /// Those whose cursor is older than this, instead of by count.
    pub age: Option<Duration>,
}

/// How a 2026-07-28 `subscriptions/listen` stream behaves.
#[derive(Debug, Clone, Copy)]
pub struct ListenStream {
    /// A misbehaviour, if any.
    pub fault: Option<ListenFault>,
    /// The stream ends gracefully after this many notifications.
    pub close_after: Option<u32>,
}

pub const DEFAULT_ITEMS: u32 = 20;
pub const DEFAULT_PAGE_SIZE: u32 = 5;

impl ServerConfig {
    pub fn resolve(k: &Knobs, default_name: &str) -> Result<ServerConfig, SimulatorConfigError> {
        let scenario = scenario(k)?;
        let page_size = k.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
        if page_size == 0 {
            return Err(SimulatorConfigError::Invalid(
                "--page-size must be at least 1".into(),
            ));
        }
        // A bad command line hears of its first failing check: keep the order.
        let protocol = protocol(k, scenario)?;
        let kinds = faulty_kinds(k)?;
        let overlap = k.overlap.unwrap_or(1);
        if scenario == Scenario::Overlap && overlap >= page_size {
            return Err(SimulatorConfigError::Invalid(
                "--overlap must be smaller than --page-size".into(),
            ));
        }
        let token = if scenario == Scenario::Auth {
            Some(read_token(k)?)
        } else {
            None
        };
        Ok(ServerConfig {
            name: k.name.clone().unwrap_or_else(|| default_name.to_string()),
            scenario,
            items: k.items.unwrap_or(DEFAULT_ITEMS),
            page_size,
            seed: k.seed.unwrap_or(0),
            modern: protocol.as_deref() == Some(MODERN_VERSION),
            protocol,
            response: k.response.unwrap_or(ResponseMode::Json),
            fault_at: FaultAt {
                kinds,
                page: k.page.unwrap_or(2).max(1),
            },
            delay: Duration::from_millis(k.delay_ms.unwrap_or(default_delay_ms(scenario))),
            chunk_bytes: k.chunk_bytes.unwrap_or(16).max(1) as usize,
            change: CatalogueChange {
                every: change_every(k),
                by: k.change_by.unwrap_or(1),
                notify: k.notify.unwrap_or(false),
            },
            overlap,
            size_bytes: k.size_mib.unwrap_or(4) as usize * 1024 * 1024,
            code: k.code.unwrap_or(-32603),
            credentials: Credentials {
                token,
                echo_header: k.echo_header.clone(),
            },
            expire_after: k.expire_after.unwrap_or(6),
            stale: Staleness {
                times: k.times.unwrap_or(1),
                age: match (scenario, k.delay_ms) {
                    (Scenario::StaleCursor, Some(ms)) => Some(Duration::from_millis(ms)),
                    _ => None,
                },
            },
            every: k.every.unwrap_or(5).max(1),
            listen: ListenStream {
                fault: k.listen_fault,
                close_after: k.listen_close_after,
            },
        })
    }

    /// Does the scenario's fault apply to this kind?
    pub fn faulty(&self, kind: Kind) -> bool {
        self.fault_at.kinds.contains(&kind)
    }
}

fn scenario(k: &Knobs) -> Result<Scenario, SimulatorConfigError> {
    let name = k
        .scenario
        .as_deref()
        .ok_or_else(|| SimulatorConfigError::Invalid("--scenario is required".into()))?;
    name.parse()
        .map_err(|_| SimulatorConfigError::UnknownScenario(name.to_string()))
}

/// The forced protocol version, if any: protocol-2026 forces the modern one.
fn protocol(k: &Knobs, scenario: Scenario) -> Result<Option<String>, SimulatorConfigError> {
    match (&k.protocol, scenario) {
        (Some(p), _) if p != MODERN_VERSION && !LEGACY_VERSIONS.contains(&p.as_str()) => {
            Err(SimulatorConfigError::UnknownProtocol(p.clone()))
        }
        (Some(p), Scenario::Protocol2026) if p != MODERN_VERSION => {
            Err(SimulatorConfigError::Invalid(
                "scenario protocol-2026 needs --protocol 2026-07-28 (or none)".into(),
            ))
        }
        (None, Scenario::Protocol2026) => Ok(Some(MODERN_VERSION.to_string())),
        (p, _) => Ok(p.clone()),
    }
}

/// The kinds `--kinds` names (all four without it).
fn faulty_kinds(k: &Knobs) -> Result<Vec<Kind>, SimulatorConfigError> {
    let Some(list) = &k.kinds else {
        return Ok(Kind::ALL.to_vec());
    };
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse()
                .map_err(|_| SimulatorConfigError::UnknownKind(s.into()))
        })
        .collect()
}

/// `--delay-ms` when not given: the scenarios that wait have their own.
fn default_delay_ms(scenario: Scenario) -> u64 {
    match scenario {
        Scenario::SlowPage => 1500,
        Scenario::Drip => 50,
        _ => 0,
    }
}

fn change_every(k: &Knobs) -> ChangeEvery {
    match (k.after_seconds, k.after_listings) {
        (Some(secs), _) if secs > 0 => ChangeEvery::Duration(Duration::from_secs(secs)),
        (_, listings) => ChangeEvery::Listings(listings.unwrap_or(1).max(1)),
    }
}

fn read_token(k: &Knobs) -> Result<String, SimulatorConfigError> {
    if let Some(var) = &k.token_env {
        return match std::env::var(var) {
            Ok(t) if !t.trim().is_empty() => Ok(t.trim().to_string()),
            _ => Err(SimulatorConfigError::Invalid(format!(
                "scenario auth: environment variable {var} is unset or empty"
            ))),
        };
    }
    if let Some(path) = &k.token_file {
        let text = std::fs::read_to_string(path).map_err(|source| SimulatorConfigError::Read {
            path: path.clone(),
            source,
        })?;
        let t = text.trim();
        if t.is_empty() {
            return Err(SimulatorConfigError::Invalid(format!(
                "scenario auth: {} is empty",
                path.display()
            )));
        }
        return Ok(t.to_string());
    }
    Err(SimulatorConfigError::Invalid(
        "scenario auth needs --token-env VAR or --token-file FILE".into(),
    ))
}

/// The `--scenarios` file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScenariosFile {
    #[serde(default)]
    defaults: Knobs,
    servers: Vec<Knobs>,
    /// The registry served over the virtual servers.
    #[serde(default)]
    registry: RegistryKnobs,
}

/// What a `--scenarios` file resolves to.
#[derive(Debug)]
pub struct Scenarios {
    pub servers: Vec<ServerConfig>,
    pub registry: SimulatedRegistryConfig,
}

/// Upper bound on virtual servers: each costs a few hundred bytes, but a
/// typo like `count: 2000000` should fail loudly rather than eat memory.
pub const MAX_SERVERS: usize = 100_000;

/// Load the scenarios file into one config per virtual server, expanding
/// `count:` entries. `cli` knobs sit below the file's `defaults:`.
pub fn load_scenarios(path: &Path, cli: &Knobs) -> Result<Scenarios, SimulatorConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| SimulatorConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let file: ScenariosFile =
        yaml_serde::from_str(&text).map_err(|source| SimulatorConfigError::Yaml {
            path: path.to_path_buf(),
            source,
        })?;
    let base = file.defaults.over(cli);
    let mut out = Vec::new();
    let mut names = std::collections::HashSet::new();
    for entry in file.servers {
        let knobs = entry.over(&base);
        let name = knobs.name.clone().ok_or_else(|| {
            SimulatorConfigError::Invalid("every server entry needs a name".into())
        })?;
        if !valid_name(&name) {
            return Err(SimulatorConfigError::Invalid(format!(
                "server name {name:?}: use letters, digits, '-', '_' or '.'"
            )));
        }
        let count = knobs.count.unwrap_or(0);
        let expanded: Vec<String> = if count == 0 {
            vec![name.clone()]
        } else {
            let width = count.to_string().len().max(4);
            (1..=count).map(|i| format!("{name}-{i:0width$}")).collect()
        };
        if out.len() + expanded.len() > MAX_SERVERS {
            return Err(SimulatorConfigError::Invalid(format!(
                "more than {MAX_SERVERS} virtual servers"
            )));
        }
        // Resolve once per entry; copies differ only by name.
        let template = ServerConfig::resolve(&knobs, &name)?;
        for n in expanded {
            if !names.insert(n.clone()) {
                return Err(SimulatorConfigError::Invalid(format!(
                    "duplicate server name {n:?}"
                )));
            }
            let mut cfg = template.clone();
            cfg.name = n;
            out.push(cfg);
        }
    }
    if out.is_empty() {
        return Err(SimulatorConfigError::Invalid(
            "the scenarios file lists no servers".into(),
        ));
    }
    Ok(Scenarios {
        servers: out,
        registry: file.registry.resolve()?,
    })
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_name_round_trips() {
        for s in Scenario::ALL {
            assert_eq!(s.label().parse::<Scenario>(), Ok(s));
        }
        assert!("nope".parse::<Scenario>().is_err());
    }

    #[test]
    fn protocol_2026_implies_the_modern_version() {
        let k = Knobs {
            scenario: Some("protocol-2026".into()),
            ..Knobs::default()
        };
        let c = ServerConfig::resolve(&k, "x").unwrap();
        assert!(c.modern);
        assert_eq!(c.items, DEFAULT_ITEMS);
        assert_eq!(c.page_size, DEFAULT_PAGE_SIZE);
    }

    #[test]
    fn scenarios_file_expands_counts_and_layers_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yaml");
        std::fs::write(
            &path,
            "defaults:\n  items: 7\nservers:\n  - name: one\n    scenario: healthy\n  - name: fleet\n    count: 3\n    scenario: cycle\n    page_size: 2\n",
        )
        .unwrap();
        let cfgs = load_scenarios(&path, &Knobs::default()).unwrap().servers;
        let names: Vec<_> = cfgs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["one", "fleet-0001", "fleet-0002", "fleet-0003"]);
        assert_eq!(cfgs[0].items, 7);
        assert_eq!(cfgs[3].page_size, 2);
        assert_eq!(cfgs[3].scenario, Scenario::Cycle);
    }

    #[test]
    fn scenarios_file_rejects_unknown_fields() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yaml");
        std::fs::write(
            &path,
            "servers:\n  - name: a\n    scenario: healthy\n    itmes: 3\n",
        )
        .unwrap();
        assert!(load_scenarios(&path, &Knobs::default()).is_err());
    }
}
