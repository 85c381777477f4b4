//! Why a tap cannot start — a configured one, or the one of `mcp-exporter
//! tap` (HTTP or stdio): the one error of every road to a running tap. It
//! names the tap and the key or flag at fault, never a value that may be a
//! secret (the upstream URL is never in it).

use super::report_file::ReportError;
use crate::config::web::WebConfigError;
use mcp_tap::apps::AppError;
use mcp_tap::TapError;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
#[error("tap {tap}: {cause}")]
pub struct TapStartError {
    /// The tap's name (the `tap` label).
    pub tap: Arc<str>,
    pub cause: StartFailure,
}

/// What kept a tap from starting.
#[derive(Debug, thiserror::Error)]
pub enum StartFailure {
    /// The data path refused its settings, or a stdio server did not start.
    #[error(transparent)]
    Tap(#[from] TapError),
    #[error("listener TLS: {0}")]
    ListenerTls(#[from] WebConfigError),
    /// `apps:` (`--app`) as a whole (two apps of one name).
    #[error("{key}: {source}")]
    Apps { key: &'static str, source: AppError },
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The listen address is our own configuration, never a secret.
    #[error("cannot listen on {address}: {source}")]
    Listen {
        address: String,
        source: std::io::Error,
    },
}

impl TapStartError {
    pub fn new(tap: &Arc<str>, cause: impl Into<StartFailure>) -> TapStartError {
        TapStartError {
            tap: tap.clone(),
            cause: cause.into(),
        }
    }
}
