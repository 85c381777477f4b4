//! What the integration tests of mcp-exporter share: real processes on
//! loopback with a deadline on everything they wait for.
//!
//! - [`process`]: servers killed with their process group on drop
//!   ([`Proc`]), commands run to completion within a deadline ([`run`]);
//! - [`exporter`]: `mcp-exporter` serving a configuration ([`Exporter`]),
//!   `probe --json` ([`probe`]), samples of scraped text ([`metrics`]);
//! - [`simulator`]: `mcp-exporter simulate` driven over the raw wire;
//! - [`peers`], [`gateways`], [`clients`]: the MCP SDK peers, gateways and clients of
//!   `scripts/install-peers.sh`;
//! - [`prometheus`], [`alertmanager`], [`chromium`], [`otlp`]: the real
//!   systems the end-to-end tests talk to;
//! - [`logfmt`]: a strict reader of the exporter's `--log.format logfmt` lines;
//! - [`ports`]: a port that refuses connections for as long as it is held;
//! - [`tap`]: the tap's data path in-process, with a recording observer, a
//!   raw HTTP/1.1 client and a scripted upstream.
//!
//! A dev-dependency of the application only: it runs the `mcp-exporter`
//! binary and never links the application.

pub mod alertmanager;
pub mod check_client;
pub mod chromium;
pub mod clients;
pub mod counting_alloc;
pub mod demo;
pub mod exporter;
pub mod gateways;
pub mod http;
pub mod logfmt;
pub mod metrics;
pub mod otlp;
pub mod peers;
pub mod ports;
pub mod probe;
pub mod process;
pub mod prometheus;
pub mod repo;
pub mod simulator;
pub mod stub;
pub mod tap;
pub mod tools;

pub use exporter::{scenarios_simulator, Exporter};
pub use http::{http_get, http_get_ok, http_post};
pub use metrics::{listing_attempts, sample};
pub use ports::ClosedPort;
pub use probe::{listing, names, page_items, probe_json};
pub use process::{alive, run, run_measured, wait_for, Finished, Proc};
pub use repo::{exporter_bin, repo_file, repo_path};
