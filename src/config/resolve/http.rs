//! Every `http:` block (targets, modules, discovery sources): URL,
//! headers, tokens, TLS, redirects, and the keys each place takes.

use super::{child, Resolver, Result, LITERAL_TOKEN};
use crate::config::endpoint::{HttpEndpoint, HttpSettings};
use crate::config::locate::{locate, At, Seg};
use crate::config::raw::{RawHeaders, RawHttp, RawSecretValue, RawTls};
use crate::config::secret::{trim_trailing_newlines, Secret, SecretSource};
use crate::config::tls::TlsConfig;
use crate::config::types::default;
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

/// Where an `http:` block is written, which decides the keys it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HttpRole {
    /// A target's server: `url` needed, same-origin redirects followed.
    Target,
    /// A module's targets: no `url` (it comes from `/probe` or discovery)
    /// and no redirects, so that none leads out of `allow` with the
    /// module's credentials.
    Module,
    /// A discovery source: `url` needed; not MCP, so no `transport`; no
    /// redirects (its answer comes from where it is configured).
    Source,
    /// A tap's upstream: `url` and `tls` only. The tap forwards what its
    /// clients send, credentials included, and adds none of its own; it
    /// follows no redirects (the client sees them).
    Tap,
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

    /// The `http:` block at `at` with its `url`: a target's or a source's.
    pub(super) fn http_endpoint(
        &mut self,
        at: &[Seg],
        who: &str,
        mut raw: RawHttp,
        role: HttpRole,
    ) -> Result<HttpEndpoint> {
        let Some(written) = raw.url.take() else {
            return Err(self.error(at, At::Value, format!("{who}: `http` needs `url`")));
        };
        let url = self.url(&child(at, "url"), who, &written)?;
        let settings = self.http_settings(at, who, raw, role)?;
        self.warn_plain_http(at, who, &url, &settings);
        Ok(HttpEndpoint { url, settings })
    }

    /// The `http:` block at `at` without its `url` (a module's, or an
    /// endpoint's once the URL is taken out), checked for `role`.
    pub(super) fn http_settings(
        &mut self,
        at: &[Seg],
        who: &str,
        raw: RawHttp,
        role: HttpRole,
    ) -> Result<HttpSettings> {
        let key = |k: &str| child(at, k);
        self.http_keys_of_role(at, who, &raw, role)?;
        let headers = match raw.headers {
            Some(h) => self.headers(&key("headers"), who, h)?,
            None => Vec::new(),
        };
        let bearer_token =
            self.bearer_token(at, who, raw.bearer_token_env, raw.bearer_token_file)?;
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
        let tls = self.tls(at, who, raw.tls.unwrap_or_default());
        let max_redirects = match role {
            HttpRole::Target => raw.max_redirects.unwrap_or(default::MAX_REDIRECTS),
            HttpRole::Module | HttpRole::Source | HttpRole::Tap => 0,
        };
        Ok(HttpSettings {
            transport: raw.transport.unwrap_or_default(),
            headers,
            bearer_token,
            tls,
            max_redirects,
        })
    }

    /// A literal token, and the keys `role` does not take: refused; a
    /// module's `max_redirects` above 0: ignored, with a warning.
    fn http_keys_of_role(
        &mut self,
        at: &[Seg],
        who: &str,
        raw: &RawHttp,
        role: HttpRole,
    ) -> Result<()> {
        let refuse = |this: &Self, k: &str, why: &str| {
            Err(this.error(&child(at, k), At::Key, format!("{who}: {why}")))
        };
        if raw.bearer_token.0 {
            return refuse(self, "bearer_token", LITERAL_TOKEN);
        }
        match role {
            HttpRole::Target => Ok(()),
            HttpRole::Module if raw.url.is_some() => refuse(
                self,
                "url",
                "a module has no `url`: its targets' URLs come from `/probe?target=` or from discovery, within `allow`",
            ),
            HttpRole::Module => {
                if raw.max_redirects.is_some_and(|n| n > 0) {
                    self.warn(
                        &child(at, "max_redirects"),
                        At::Value,
                        format!("{who}: `max_redirects` is ignored: module probes follow no redirects, so that none can lead out of `allow` with the module's credentials"),
                    );
                }
                Ok(())
            }
            HttpRole::Source if raw.transport.is_some() => refuse(
                self,
                "transport",
                "`transport` applies to MCP servers, not to a discovery source",
            ),
            HttpRole::Source if raw.max_redirects.is_some() => refuse(
                self,
                "max_redirects",
                "a discovery source follows no redirects: its answer comes from where it is configured",
            ),
            HttpRole::Source => Ok(()),
            HttpRole::Tap => {
                let own = [
                    ("transport", raw.transport.is_some()),
                    ("headers", raw.headers.is_some()),
                    ("bearer_token_env", raw.bearer_token_env.is_some()),
                    ("bearer_token_file", raw.bearer_token_file.is_some()),
                    ("max_redirects", raw.max_redirects.is_some()),
                ];
                match own.into_iter().find(|(_, given)| *given) {
                    Some((k, _)) => refuse(
                        self,
                        k,
                        &format!("a tap's `upstream` takes `url` and `tls` only (`{k}` does not apply): the tap forwards its clients' own headers and credentials and adds none"),
                    ),
                    None => Ok(()),
                }
            }
        }
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
    fn warn_plain_http(&mut self, owner: &[Seg], who: &str, url: &Url, settings: &HttpSettings) {
        if url.scheme() != "http" {
            return;
        }
        let tls = &settings.tls;
        if settings.bearer_token.is_some() && !is_loopback(url) {
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
