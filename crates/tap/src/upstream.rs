//! The one place the tap connects to. Every request goes to the configured
//! upstream's scheme and authority with the client's path and query; what
//! a request says about any other host (an absolute-form URI, a `Host`
//! header, a URL the upstream names) never reaches the connector, so the
//! tap cannot be made an open proxy.

use crate::event::UpstreamFailure;
use crate::settings::{TapError, TapSettings};
use bytes::Bytes;
use http::uri::{Authority, PathAndQuery, Scheme};
use http::{HeaderValue, Uri};
use hyper::body::Body;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use std::time::Duration;

/// The upstream and the pooled client that reaches it.
pub(crate) struct Upstream<B> {
    client: Client<mcp_wire::transport::http_client::Connector, B>,
    scheme: Scheme,
    authority: Authority,
    /// `Host` for every request: the upstream's authority as configured.
    host: HeaderValue,
    url: url::Url,
}

impl<B> Upstream<B>
where
    B: Body<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    pub(crate) fn new(settings: &TapSettings) -> Result<Upstream<B>, TapError> {
        let url = settings.upstream.clone();
        let uri: Uri = url.as_str().parse().map_err(|_| TapError::UpstreamHost)?;
        let (Some(scheme), Some(authority)) = (uri.scheme().cloned(), uri.authority().cloned())
        else {
            return Err(TapError::UpstreamHost);
        };
        let host = HeaderValue::from_str(authority.as_str()).map_err(|_| TapError::UpstreamHost)?;
        let tls = &settings.upstream_tls;
        let connector = mcp_wire::transport::http_client::connector(
            settings.limits.connect_timeout,
            tls.ca_file.as_deref(),
            tls.insecure_skip_verify,
        )
        .map_err(|e| TapError::UpstreamTls(e.to_string()))?;
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .pool_max_idle_per_host(settings.limits.upstream_idle_connections)
            // Our own `Host` goes on every request.
            .set_host(false)
            .build(connector);
        Ok(Upstream {
            client,
            scheme,
            authority,
            host,
            url,
        })
    }

    /// The upstream URI for a request's path and query.
    pub(crate) fn uri(&self, path: &PathAndQuery) -> Result<Uri, http::Error> {
        Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(path.clone())
            .build()
    }

    /// The same as a URL, to resolve what the upstream names against.
    /// Path and query are set, never joined: a path such as `//elsewhere/`
    /// stays a path on the upstream.
    pub(crate) fn url(&self, path: &PathAndQuery) -> url::Url {
        let mut url = self.url.clone();
        url.set_path(path.path());
        url.set_query(path.query());
        url.set_fragment(None);
        url
    }

    pub(crate) fn host(&self) -> HeaderValue {
        self.host.clone()
    }

    pub(crate) fn client(&self) -> &Client<mcp_wire::transport::http_client::Connector, B> {
        &self.client
    }
}

/// Why a request got no answer head from the upstream. The TCP connector
/// wraps each of its failures (refused, unreachable, DNS) in an error of
/// its own, so an io::Error straight from the connector is the TLS
/// layer's: a handshake the server broke off, a certificate refused.
pub(crate) fn failure(e: &hyper_util::client::legacy::Error) -> UpstreamFailure {
    let first = std::error::Error::source(e);
    match (
        e.is_connect(),
        first.is_some_and(|s| s.is::<std::io::Error>()),
    ) {
        (true, true) => UpstreamFailure::Tls,
        (true, false) => UpstreamFailure::Connect,
        (false, _) => UpstreamFailure::Reset,
    }
}
