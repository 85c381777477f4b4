//! `--web.config.file`: the Prometheus exporter-toolkit `web-config.yml`
//! (TLS for our own endpoints, client certificates, basic auth users with
//! bcrypt hashes). Keys and meanings follow the toolkit; what it has and we
//! do not support is refused by name, never silently ignored.

use super::locate::{locate, yaml_path, At, Seg};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum WebConfigError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    /// `FILE:LINE:COL: message` where the problem has a place in the
    /// file. The message never quotes a value (bcrypt hashes are secrets
    /// too).
    #[error("{path}{}: {message}", at.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    Invalid {
        path: String,
        at: Option<(usize, usize)>,
        message: String,
    },
    #[error("TLS: {0}")]
    Tls(String),
}

/// The file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWebConfig {
    tls_server_config: Option<RawServerTls>,
    http_server_config: Option<RawHttpServer>,
    #[serde(default)]
    basic_auth_users: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServerTls {
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    client_auth_type: Option<String>,
    client_ca_file: Option<PathBuf>,
    min_version: Option<String>,
    max_version: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHttpServer {
    /// Accepted for compatibility; we serve HTTP/1.1 only.
    http2: Option<bool>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Which client certificates the server asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// `NoClientCert` (the default).
    None,
    /// `VerifyClientCertIfGiven`: a certificate is optional, but if sent it
    /// must chain to `client_ca_file`.
    VerifyIfGiven,
    /// `RequireAndVerifyClientCert`: a certificate chaining to
    /// `client_ca_file` is required.
    RequireAndVerify,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsVersion {
    Tls12,
    Tls13,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsServerSettings {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub client_auth: ClientAuth,
    pub client_ca_file: Option<PathBuf>,
    pub min_version: TlsVersion,
    pub max_version: TlsVersion,
}

/// The resolved file. Paths are relative to the file's folder.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebServerConfig {
    pub tls: Option<TlsServerSettings>,
    /// user → bcrypt hash.
    pub basic_auth_users: BTreeMap<String, String>,
    /// Extra response headers (`http_server_config.headers`).
    pub headers: Vec<(String, String)>,
}

impl WebServerConfig {
    pub fn load(path: &Path) -> Result<WebServerConfig, WebConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| WebConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse(&text, base).map_err(|Problem { at, message }| WebConfigError::Invalid {
            path: shown,
            at,
            message,
        })
    }

    /// The file's text; relative paths are resolved against `base`.
    fn parse(text: &str, base: &Path) -> Result<WebServerConfig, Problem> {
        let raw: RawWebConfig = if text.trim().is_empty() {
            RawWebConfig::default()
        } else {
            yaml_serde::from_str(text).map_err(|e| Problem {
                at: e.location().map(|l| (l.line(), l.column())),
                message: super::sanitize_parser_message(&e.to_string()),
            })?
        };
        Self::check(raw, base).map_err(|(key, message)| Problem {
            at: locate(text, &key, At::Key),
            message,
        })
    }

    /// What the parsed file means; an error names its key's place.
    fn check(raw: RawWebConfig, base: &Path) -> Result<WebServerConfig, (Vec<Seg>, String)> {
        let tls = raw
            .tls_server_config
            .map(|t| tls_settings(t, base))
            .transpose()
            .map_err(|(key, message)| {
                let mut path = yaml_path!["tls_server_config"].to_vec();
                path.extend(key.map(Seg::from));
                (path, message)
            })?;
        check_basic_auth_users(&raw.basic_auth_users)?;
        let headers = raw
            .http_server_config
            .map(|h| {
                let _ = h.http2;
                h.headers.into_iter().collect()
            })
            .unwrap_or_default();
        Ok(WebServerConfig {
            tls,
            basic_auth_users: raw.basic_auth_users,
            headers,
        })
    }
}

/// A problem and where it is in the file.
struct Problem {
    at: Option<(usize, usize)>,
    message: String,
}

/// `tls_server_config`: certificate and key, client certificates (only
/// modes that verify them), TLS 1.2 or later. An error names the key under
/// `tls_server_config` it is about (none: the section itself).
fn tls_settings(
    t: RawServerTls,
    base: &Path,
) -> Result<TlsServerSettings, (Option<&'static str>, String)> {
    let resolve = |p: PathBuf| if p.is_absolute() { p } else { base.join(p) };
    let (Some(cert), Some(key)) = (t.cert_file, t.key_file) else {
        return Err((
            None,
            "tls_server_config needs both `cert_file` and `key_file`".into(),
        ));
    };
    let client_auth =
        client_auth(t.client_auth_type.as_deref()).map_err(|e| (Some("client_auth_type"), e))?;
    if client_auth != ClientAuth::None && t.client_ca_file.is_none() {
        return Err((
            Some("client_auth_type"),
            "tls_server_config: verifying client certificates needs `client_ca_file`".into(),
        ));
    }
    let min_version = tls_version(t.min_version.as_deref(), TlsVersion::Tls12, "min_version")
        .map_err(|e| (Some("min_version"), e))?;
    let max_version = tls_version(t.max_version.as_deref(), TlsVersion::Tls13, "max_version")
        .map_err(|e| (Some("max_version"), e))?;
    if min_version == TlsVersion::Tls13 && max_version == TlsVersion::Tls12 {
        return Err((
            Some("min_version"),
            "tls_server_config: `min_version` is above `max_version`".into(),
        ));
    }
    Ok(TlsServerSettings {
        cert_file: resolve(cert),
        key_file: resolve(key),
        client_auth,
        client_ca_file: t.client_ca_file.map(resolve),
        min_version,
        max_version,
    })
}

/// `client_auth_type`, `NoClientCert` when absent.
fn client_auth(name: Option<&str>) -> Result<ClientAuth, String> {
    match name.unwrap_or("NoClientCert") {
        "NoClientCert" => Ok(ClientAuth::None),
        "VerifyClientCertIfGiven" => Ok(ClientAuth::VerifyIfGiven),
        "RequireAndVerifyClientCert" => Ok(ClientAuth::RequireAndVerify),
        "RequestClientCert" | "RequireAnyClientCert" => Err("tls_server_config.client_auth_type: `RequestClientCert` and `RequireAnyClientCert` accept unverified certificates and are not supported; use `VerifyClientCertIfGiven` or `RequireAndVerifyClientCert`".into()),
        _ => Err("tls_server_config.client_auth_type: expected one of `NoClientCert`, `VerifyClientCertIfGiven`, `RequireAndVerifyClientCert`".into()),
    }
}

/// `min_version` / `max_version` (named by `key`), `default` when absent.
fn tls_version(v: Option<&str>, default: TlsVersion, key: &str) -> Result<TlsVersion, String> {
    match v {
        None => Ok(default),
        Some("TLS12") => Ok(TlsVersion::Tls12),
        Some("TLS13") => Ok(TlsVersion::Tls13),
        Some("TLS10" | "TLS11") => Err(format!(
            "tls_server_config.{key}: TLS 1.0 and 1.1 are not supported; use `TLS12` or `TLS13`"
        )),
        Some(_) => Err(format!(
            "tls_server_config.{key}: expected `TLS12` or `TLS13`"
        )),
    }
}

/// User names a basic auth header can carry, each with a bcrypt hash. The
/// messages never quote a hash; an error names the user's key.
fn check_basic_auth_users(users: &BTreeMap<String, String>) -> Result<(), (Vec<Seg>, String)> {
    for (user, hash) in users {
        let at = || yaml_path!["basic_auth_users", user].to_vec();
        if user.is_empty() || user.contains(':') {
            return Err((
                at(),
                "basic_auth_users: a user name must be non-empty and hold no `:`".into(),
            ));
        }
        if hash.parse::<bcrypt::HashParts>().is_err() {
            return Err((at(), format!(
                "basic_auth_users.{user}: expected a bcrypt hash (e.g. from `htpasswd -nBC 10 \"\" | tr -d ':'`)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(text: &str) -> (Option<(usize, usize)>, String) {
        match WebServerConfig::parse(text, Path::new("/etc/mcp")) {
            Ok(c) => panic!("parsed: {c:?}"),
            Err(Problem { at, message }) => (at, message),
        }
    }

    #[test]
    fn problems_name_their_line_and_column() {
        let (at, message) = problem(
            "tls_server_config:\n  cert_file: c.pem\n  key_file: k.pem\n  min_version: TLS10\n",
        );
        assert_eq!(at, Some((4, 3)), "{message}");
        assert!(message.contains("TLS 1.0"), "{message}");
        let (at, _) = problem("basic_auth_users:\n  alice: not-a-hash\n");
        assert_eq!(at, Some((2, 3)));
        let (at, message) = problem("tls_server_config:\n  cert_file: c.pem\n");
        assert_eq!(at, Some((1, 1)), "{message}");
        let (at, message) = problem("http_server_config:\n  http3: true\n");
        assert_eq!(at.map(|(line, _)| line), Some(2), "{message}");
        assert!(
            !problem("basic_auth_users:\n  bob: $2y$10$secret\n")
                .1
                .contains("secret"),
            "a hash is never quoted"
        );
    }

    #[test]
    fn the_error_reads_file_line_column() {
        let err = WebConfigError::Invalid {
            path: "web.yml".into(),
            at: Some((4, 3)),
            message: "bad".into(),
        };
        assert_eq!(err.to_string(), "web.yml:4:3: bad");
    }

    #[test]
    fn relative_paths_resolve_against_the_files_folder() {
        let c = WebServerConfig::parse(
            "tls_server_config:\n  cert_file: c.pem\n  key_file: /k.pem\n",
            Path::new("/etc/mcp"),
        )
        .unwrap_or_else(|p| panic!("{}", p.message));
        let tls = c.tls.unwrap();
        assert_eq!(tls.cert_file, Path::new("/etc/mcp/c.pem"));
        assert_eq!(tls.key_file, Path::new("/k.pem"));
    }
}
