//! TLS on our own listeners (the web endpoints, each tap's): a rustls
//! server configuration built from its files, rebuilt when a file's
//! modification time changes (so a renewed certificate needs no restart).
//! A broken renewal keeps the previous configuration and says so. Below
//! both `web` and `tap`, which each hand it their settings.

use crate::config::taps::ListenTls;
use crate::config::web::{ClientAuth, TlsServerSettings, TlsVersion, WebConfigError};
use crate::telemetry::events::{TlsReloadFailed, TlsReloaded};
use crate::telemetry::metrics::WebMetrics;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

pub struct TlsReloader {
    settings: TlsServerSettings,
    current: Mutex<Loaded>,
    /// Where reloads are counted.
    metrics: WebMetrics,
}

struct Loaded {
    config: Arc<ServerConfig>,
    stamps: Vec<Option<SystemTime>>,
}

impl TlsReloader {
    /// Build once now: a configuration that cannot start is an error here.
    pub fn new(
        settings: TlsServerSettings,
        metrics: WebMetrics,
    ) -> Result<TlsReloader, WebConfigError> {
        let stamps = stamps(&settings);
        let config = build(&settings)?;
        Ok(TlsReloader {
            settings,
            current: Mutex::new(Loaded { config, stamps }),
            metrics,
        })
    }

    /// The configuration for a new connection, rebuilt first if a file
    /// changed since the last build.
    pub fn config(&self) -> Arc<ServerConfig> {
        let mut current = match self.current.lock() {
            Ok(c) => c,
            Err(p) => p.into_inner(),
        };
        let now = stamps(&self.settings);
        if now != current.stamps {
            match build(&self.settings) {
                Ok(config) => {
                    current.config = config;
                    TlsReloaded.emit(&self.metrics);
                }
                Err(error) => TlsReloadFailed { error: &error }.emit(&self.metrics),
            }
            // Either way, do not retry on every connection until they change again.
            current.stamps = now;
        }
        current.config.clone()
    }
}

impl TlsReloader {
    /// A tap's listener TLS (`taps[].listen.tls`): a client certificate is
    /// required when a client CA is given; TLS 1.2 and 1.3. Its reloads
    /// are counted with the exporter's own (`web`).
    pub fn for_tap(tls: &ListenTls, web: WebMetrics) -> Result<TlsReloader, WebConfigError> {
        let settings = TlsServerSettings {
            cert_file: tls.cert_file.clone(),
            key_file: tls.key_file.clone(),
            client_auth: match tls.client_ca_file {
                Some(_) => ClientAuth::RequireAndVerify,
                None => ClientAuth::None,
            },
            client_ca_file: tls.client_ca_file.clone(),
            min_version: TlsVersion::Tls12,
            max_version: TlsVersion::Tls13,
        };
        TlsReloader::new(settings, web)
    }
}

/// The tap's data path asks for the configuration per connection, so a
/// renewed certificate is picked up by the next one.
impl mcp_tap::ListenerTls for TlsReloader {
    fn server_config(&self) -> Arc<ServerConfig> {
        self.config()
    }
}

fn stamps(s: &TlsServerSettings) -> Vec<Option<SystemTime>> {
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    let mut v = vec![mtime(&s.cert_file), mtime(&s.key_file)];
    if let Some(ca) = &s.client_ca_file {
        v.push(mtime(ca));
    }
    v
}

fn build(s: &TlsServerSettings) -> Result<Arc<ServerConfig>, WebConfigError> {
    let tls = |what: &str, p: &Path, e: &dyn std::fmt::Display| {
        WebConfigError::Tls(format!("{what} {}: {e}", p.display()))
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&s.cert_file)
        .map_err(|e| tls("cert_file", &s.cert_file, &e))?
        .collect::<Result<_, _>>()
        .map_err(|e| tls("cert_file", &s.cert_file, &e))?;
    if certs.is_empty() {
        return Err(tls("cert_file", &s.cert_file, &"holds no certificate"));
    }
    // The key's own parse error may describe its content: say only where.
    let key = PrivateKeyDer::from_pem_file(&s.key_file).map_err(|_| {
        tls(
            "key_file",
            &s.key_file,
            &"holds no readable PEM private key",
        )
    })?;
    let versions: &[&'static rustls::SupportedProtocolVersion] =
        match (s.min_version, s.max_version) {
            (TlsVersion::Tls13, _) => &[&rustls::version::TLS13],
            (TlsVersion::Tls12, TlsVersion::Tls12) => &[&rustls::version::TLS12],
            (TlsVersion::Tls12, TlsVersion::Tls13) => {
                &[&rustls::version::TLS12, &rustls::version::TLS13]
            }
        };
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| WebConfigError::Tls(e.to_string()))?;
    let builder = match (s.client_auth, &s.client_ca_file) {
        (ClientAuth::None, _) | (_, None) => builder.with_no_client_auth(),
        (auth, Some(ca)) => {
            let mut roots = RootCertStore::empty();
            for cert in
                CertificateDer::pem_file_iter(ca).map_err(|e| tls("client_ca_file", ca, &e))?
            {
                let cert = cert.map_err(|e| tls("client_ca_file", ca, &e))?;
                roots.add(cert).map_err(|e| tls("client_ca_file", ca, &e))?;
            }
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if auth == ClientAuth::VerifyIfGiven {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|e| tls("client_ca_file", ca, &e))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| tls("cert_file", &s.cert_file, &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}
