//! The one place the tap connects to, and what it sends there. Every
//! request goes to the configured upstream's origin with the client's path
//! and query; what a request says about any other host (an absolute-form
//! target, a `Host` header, a URL the upstream names) never reaches the
//! connector, so the tap cannot be made an open proxy.

use crate::settings::{TapError, TapSettings};
use bytes::Bytes;
use http::uri::PathAndQuery;
use http::Uri;

pub(crate) struct Target {
    /// `scheme://authority/`: what the connector is given.
    origin: Uri,
    /// `Host` for every request: the upstream's authority as configured.
    host: Bytes,
    url: url::Url,
}

impl Target {
    pub(crate) fn new(settings: &TapSettings) -> Result<Target, TapError> {
        let url = settings.upstream.clone();
        let uri: Uri = url.as_str().parse().map_err(|_| TapError::UpstreamHost)?;
        let (Some(scheme), Some(authority)) = (uri.scheme(), uri.authority()) else {
            return Err(TapError::UpstreamHost);
        };
        let origin = Uri::builder()
            .scheme(scheme.clone())
            .authority(authority.clone())
            .path_and_query("/")
            .build()
            .map_err(|_| TapError::UpstreamHost)?;
        Ok(Target {
            host: Bytes::copy_from_slice(authority.as_str().as_bytes()),
            origin,
            url,
        })
    }

    pub(crate) fn origin(&self) -> &Uri {
        &self.origin
    }

    pub(crate) fn host(&self) -> &[u8] {
        &self.host
    }

    /// The upstream URL a request's path and query reach, to resolve what
    /// the upstream names against. Path and query are set, never joined: a
    /// path such as `//elsewhere/` stays a path on the upstream.
    pub(crate) fn url(&self, path: &PathAndQuery) -> url::Url {
        let mut url = self.url.clone();
        url.set_path(path.path());
        url.set_query(path.query());
        url.set_fragment(None);
        url
    }
}

/// The path and query a request target sends upstream: an origin-form
/// target as it came; of an absolute-form one only its path and query.
/// `None` for targets with no path (`*`, an authority).
pub(crate) fn forwarded_path(target: &Bytes) -> Option<PathAndQuery> {
    if target.starts_with(b"/") {
        return PathAndQuery::from_maybe_shared(target.clone()).ok();
    }
    let uri = Uri::from_maybe_shared(target.clone()).ok()?;
    uri.scheme()?;
    Some(
        uri.path_and_query()
            .cloned()
            .unwrap_or_else(|| PathAndQuery::from_static("/")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_are_forwarded() {
        let path = |t: &'static str| {
            forwarded_path(&Bytes::from_static(t.as_bytes())).map(|p| p.to_string())
        };
        assert_eq!(path("/mcp?x=1").as_deref(), Some("/mcp?x=1"));
        assert_eq!(
            path("//elsewhere.test/x").as_deref(),
            Some("//elsewhere.test/x")
        );
        assert_eq!(path("http://elsewhere.test/x?y").as_deref(), Some("/x?y"));
        assert_eq!(path("http://elsewhere.test").as_deref(), Some("/"));
        assert_eq!(path("*"), None);
        assert_eq!(path("elsewhere.test:443"), None);
    }
}
