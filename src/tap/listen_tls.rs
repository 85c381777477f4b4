//! TLS on a tap's listener: the exporter's own reloading TLS settings (a
//! renewed certificate is picked up by the next connection, no restart),
//! handed to the data path as its per-connection configuration.

use crate::config::taps::ListenTls;
use crate::telemetry::metrics::WebMetrics;
use crate::web::tls::TlsReloader;
use crate::web::web_config::{ClientAuth, TlsServerSettings, TlsVersion};
use mcp_tap::ListenerTls;
use std::sync::Arc;

/// The listener's TLS, reloaded when its files change.
pub struct ReloadingTls(TlsReloader);

impl ReloadingTls {
    /// Built once now: files that cannot be used are an error here.
    /// Its reloads are counted with the exporter's own (`web`).
    pub fn new(tls: &ListenTls, web: WebMetrics) -> Result<ReloadingTls, String> {
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
            .map(ReloadingTls)
            .map_err(|e| e.to_string())
    }
}

impl ListenerTls for ReloadingTls {
    fn server_config(&self) -> Arc<rustls::ServerConfig> {
        self.0.config()
    }
}
