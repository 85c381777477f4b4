//! TLS settings of an HTTP endpoint we ask: a target, a module's targets,
//! a discovery source.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TlsConfig {
    /// Extra CA bundle (PEM) trusted for this server.
    pub ca_file: Option<PathBuf>,
    pub insecure_skip_verify: bool,
}
