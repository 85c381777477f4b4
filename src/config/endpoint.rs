//! Where a server is reached, resolved once: an HTTP endpoint (its URL and
//! [`HttpSettings`]: credentials, TLS, redirects) or a stdio command. The
//! HTTP shape is shared by targets, modules (settings without a URL) and
//! discovery sources (and the tap's upstream, next).

use super::secret::{Secret, SecretSource};
use super::tls::TlsConfig;
use mcp_listing::HttpMode;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use url::Url;

/// A configured target's server.
#[derive(Debug, Clone, PartialEq)]
pub enum EndpointConfig {
    Http(HttpEndpoint),
    Stdio(StdioCommand),
}

/// An HTTP endpoint we ask.
#[derive(Clone, PartialEq)]
pub struct HttpEndpoint {
    pub url: Url,
    pub settings: HttpSettings,
}

impl fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("url", &self.url.as_str())
            .field("settings", &self.settings)
            .finish()
    }
}

/// How an HTTP endpoint is asked, everything but where.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    pub transport: HttpMode,
    /// Read at load time; values of `{env:}`/`{file:}` headers included.
    pub headers: Vec<(String, Secret)>,
    /// Read at every use, so a rotated token needs no reload.
    pub bearer_token: Option<SecretSource>,
    pub tls: TlsConfig,
    /// Same-origin redirects followed; 0 for modules and sources, whose
    /// credentials must not travel where they were not configured.
    pub max_redirects: usize,
}

impl HttpSettings {
    /// Every secret value these settings hold: header values, and the
    /// token as it reads now (when it does).
    pub fn secret_values(&self) -> impl Iterator<Item = String> + '_ {
        let token = self
            .bearer_token
            .as_ref()
            .and_then(|s| s.read().ok())
            .map(|s| s.expose().to_string());
        self.headers
            .iter()
            .map(|(_, v)| v.expose().to_string())
            .chain(token)
    }
}

/// A server started as a child, spoken to over its stdin and stdout.
#[derive(Clone, PartialEq)]
pub struct StdioCommand {
    pub command: String,
    pub args: Vec<String>,
    /// Added to the exporter's own environment for the child. Values may
    /// be secrets, so Debug shows only the names.
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// Pass the exporter's whole environment to the child; by default it
    /// gets only PATH, HOME, LANG and its own `env:`.
    pub inherit_env: bool,
}

impl fmt::Debug for StdioCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdioCommand")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &RedactedValues(&self.env))
            .field("cwd", &self.cwd)
            .field("inherit_env", &self.inherit_env)
            .finish()
    }
}

struct RedactedValues<'a>(&'a BTreeMap<String, String>);

impl fmt::Debug for RedactedValues<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|k| (k, Secret::new(String::new()))))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdio_debug_hides_env_values() {
        let e = EndpointConfig::Stdio(StdioCommand {
            command: "srv".into(),
            args: vec![],
            env: BTreeMap::from([("API_KEY".to_string(), "s3cret-value".to_string())]),
            cwd: None,
            inherit_env: false,
        });
        let shown = format!("{e:?}");
        assert!(shown.contains("API_KEY"), "{shown}");
        assert!(!shown.contains("s3cret-value"), "{shown}");
    }
}
