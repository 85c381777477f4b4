//! HTTP settings shared by targets and modules: URL, headers, tokens, TLS.

use super::{child, Resolver, Result};
use crate::config::locate::{locate, At, Seg};
use crate::config::raw::{RawHeaders, RawSecretValue, RawTls};
use crate::config::secret::{trim_trailing_newlines, Secret, SecretSource};
use crate::config::types::{default, TlsConfig};
use mcp_listing::HttpMode;
use std::path::PathBuf;
use url::Url;

/// Headers the client sets itself; overriding them breaks the protocol.
const RESERVED_HEADERS: [&str; 7] = [
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// Header names whose literal values are credentials.
const CREDENTIAL_HEADERS: [&str; 4] = [
    "authorization",
    "proxy-authorization",
    "cookie",
    "x-api-key",
];

/// The HTTP settings targets and modules share, as written.
pub(super) struct RawHttp {
    pub(super) transport: Option<HttpMode>,
    pub(super) headers: Option<RawHeaders>,
    pub(super) bearer_token_env: Option<String>,
    pub(super) bearer_token_file: Option<PathBuf>,
    pub(super) tls: Option<RawTls>,
    pub(super) max_redirects: Option<usize>,
}

/// Those settings resolved.
pub(super) struct Http {
    pub(super) transport: HttpMode,
    pub(super) headers: Vec<(String, Secret)>,
    pub(super) bearer_token: Option<SecretSource>,
    pub(super) tls: TlsConfig,
    pub(super) max_redirects: usize,
}

impl Resolver<'_> {
    pub(super) fn url(&self, at: &[Seg], who: &str, raw: &str) -> Result<Url> {
        // The URL is not echoed: its query may hold a key.
        let url = Url::parse(raw.trim())
            .map_err(|e| self.error(at, At::Value, format!("{who}: invalid `url`: {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(self.error(
                at,
                At::Value,
                format!(
                    "{who}: `url` must be http:// or https://, not {}://",
                    url.scheme()
                ),
            ));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(self.error(
                at,
                At::Value,
                format!("{who}: credentials in the `url` are not allowed (they would show wherever the URL does); use `bearer_token_env`, `bearer_token_file` or `headers` with `{{env: ...}}`"),
            ));
        }
        Ok(url)
    }

    pub(super) fn http(
        &mut self,
        owner: &[Seg],
        who: &str,
        url: Option<&Url>,
        raw: RawHttp,
    ) -> Result<Http> {
        let key = |k: &str| child(owner, k);
        let headers = match raw.headers {
            Some(h) => self.headers(&key("headers"), who, h)?,
            None => Vec::new(),
        };
        let bearer_token =
            self.bearer_token(owner, who, raw.bearer_token_env, raw.bearer_token_file)?;
        if bearer_token.is_some()
            && headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("authorization"))
        {
            let k = if key_present(self.text, &key("bearer_token_env")) {
                "bearer_token_env"
            } else {
                "bearer_token_file"
            };
            return Err(self.error(
                &key(k),
                At::Key,
                format!(
                    "{who}: both an `Authorization` header and a bearer token are set; keep one"
                ),
            ));
        }
        let tls = self.tls(owner, who, raw.tls.unwrap_or_default());
        if let Some(url) = url {
            self.warn_plain_http(owner, who, url, bearer_token.is_some(), &tls);
        }
        Ok(Http {
            transport: raw.transport.unwrap_or_default(),
            headers,
            bearer_token,
            tls,
            max_redirects: raw.max_redirects.unwrap_or(default::MAX_REDIRECTS),
        })
    }

    /// `bearer_token_env` or `bearer_token_file`, at most one.
    fn bearer_token(
        &self,
        owner: &[Seg],
        who: &str,
        env: Option<String>,
        file: Option<PathBuf>,
    ) -> Result<Option<SecretSource>> {
        match (env, file) {
            (Some(_), Some(_)) => Err(self.error(
                &child(owner, "bearer_token_file"),
                At::Key,
                format!("{who}: give `bearer_token_env` or `bearer_token_file`, not both"),
            )),
            (Some(var), None) => {
                if var.is_empty() || var.contains(['=', '\0']) {
                    return Err(self.error(
                        &child(owner, "bearer_token_env"),
                        At::Value,
                        format!("{who}: `bearer_token_env` must name an environment variable"),
                    ));
                }
                Ok(Some(SecretSource::Env(var)))
            }
            (None, Some(file)) => Ok(Some(SecretSource::File(self.file_path(file)))),
            (None, None) => Ok(None),
        }
    }

    /// `tls:`, warning loudly when verification is off.
    fn tls(&mut self, owner: &[Seg], who: &str, raw: RawTls) -> TlsConfig {
        let tls = TlsConfig {
            ca_file: raw.ca_file.map(|p| self.file_path(p)),
            insecure_skip_verify: raw.insecure_skip_verify.unwrap_or(false),
        };
        if tls.insecure_skip_verify {
            self.warn(
                &child(&child(owner, "tls"), "insecure_skip_verify"),
                At::Key,
                format!("{who}: TLS CERTIFICATE VERIFICATION IS OFF (insecure_skip_verify): anyone on the network path can impersonate this server and read the credentials sent to it"),
            );
        }
        tls
    }

    /// Warnings for an http:// URL: a bearer token sent in the clear to
    /// another host, and `tls` settings that cannot apply.
    fn warn_plain_http(
        &mut self,
        owner: &[Seg],
        who: &str,
        url: &Url,
        bearer_token: bool,
        tls: &TlsConfig,
    ) {
        if url.scheme() != "http" {
            return;
        }
        if bearer_token && !is_loopback(url) {
            self.warn(
                &child(owner, "url"),
                At::Value,
                format!(
                    "{who}: the bearer token is sent over plain http:// to a non-loopback host"
                ),
            );
        }
        if tls.ca_file.is_some() || tls.insecure_skip_verify {
            self.warn(
                &child(owner, "tls"),
                At::Key,
                format!("{who}: `tls` has no effect on an http:// URL"),
            );
        }
    }

    pub(super) fn headers(
        &mut self,
        at: &[Seg],
        who: &str,
        raw: RawHeaders,
    ) -> Result<Vec<(String, Secret)>> {
        let mut out: Vec<(String, Secret)> = Vec::with_capacity(raw.0.len());
        for (name, value) in raw.0 {
            let p = child(at, &name);
            if name.is_empty() || !name.bytes().all(is_header_name_byte) {
                return Err(self.error(
                    &p,
                    At::Key,
                    format!("{who}: {name:?} is not a valid HTTP header name"),
                ));
            }
            let lower = name.to_ascii_lowercase();
            if RESERVED_HEADERS.contains(&lower.as_str()) {
                return Err(self.error(
                    &p,
                    At::Key,
                    format!("{who}: header `{name}` is set by the exporter itself and cannot be configured"),
                ));
            }
            if let Some((first, _)) = out.iter().find(|(n, _)| n.eq_ignore_ascii_case(&name)) {
                // Same spelling: the second occurrence of the key; else this key.
                let nth = usize::from(*first == name);
                return Err(self.error_nth(
                    &p,
                    At::Key,
                    nth,
                    format!("{who}: header `{name}` is given twice"),
                ));
            }
            if matches!(value, RawSecretValue::Literal(_))
                && CREDENTIAL_HEADERS.contains(&lower.as_str())
            {
                self.warn(
                    &p,
                    At::Key,
                    format!("{who}: header `{name}` has a literal value in the configuration file; prefer `{{env: VARIABLE}}` or `{{file: PATH}}`"),
                );
            }
            let secret = self.secret_value(&p, &format!("{who}: header `{name}`"), value)?;
            if secret.expose().contains(['\r', '\n', '\0']) {
                return Err(self.error(
                    &p,
                    At::Value,
                    format!("{who}: the value of header `{name}` contains a line break or NUL"),
                ));
            }
            out.push((name, secret));
        }
        Ok(out)
    }

    /// Resolve a literal / `{env:}` / `{file:}` value now (load time).
    pub(super) fn secret_value(
        &self,
        at: &[Seg],
        what: &str,
        value: RawSecretValue,
    ) -> Result<Secret> {
        match value {
            RawSecretValue::Literal(s) => Ok(Secret::new(s)),
            RawSecretValue::Env(var) => match std::env::var(&var) {
                Ok(v) => Ok(Secret::new(v)),
                Err(_) => Err(self.error(
                    at,
                    At::Value,
                    format!("{what}: environment variable `{var}` is not set (or not UTF-8)"),
                )),
            },
            RawSecretValue::File(path) => {
                let path = self.file_path(path);
                match std::fs::read_to_string(&path) {
                    Ok(text) => Ok(Secret::new(trim_trailing_newlines(&text))),
                    Err(e) => Err(self.error(
                        at,
                        At::Value,
                        format!("{what}: cannot read {}: {e}", path.display()),
                    )),
                }
            }
        }
    }
}

fn key_present(text: &str, path: &[Seg]) -> bool {
    locate(text, path, At::Key).is_some()
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// RFC 9110 `tchar`.
fn is_header_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}
