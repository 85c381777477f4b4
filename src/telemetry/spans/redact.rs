//! Keeping credentials, paths and queries out of spans and logs. Every
//! string that leaves the process and might hold a URL passes through here.

use mcp_listing::Kind;

/// `scheme://host:port` of an endpoint, for logs: no user info, path or query.
pub fn redacted_endpoint(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(u) => format!(
            "{}://{}{}",
            u.scheme(),
            u.host_str().unwrap_or("?"),
            u.port().map(|p| format!(":{p}")).unwrap_or_default()
        ),
        Err(_) => "<invalid>".into(),
    }
}

/// Defence in depth: the report promises a bare host, but should a URL ever
/// slip in, keep only its host so no path, query or credentials leave.
pub fn host_only(address: &str) -> String {
    if address.contains("://") {
        if let Ok(url) = url::Url::parse(address) {
            return url.host_str().unwrap_or_default().to_string();
        }
    }
    let no_userinfo = address.rsplit('@').next().unwrap_or(address);
    no_userinfo
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Resource URIs may carry credentials or tokens in user info or query;
/// names of other kinds pass unchanged.
pub fn safe_item_name(kind: Kind, name: &str) -> String {
    if !matches!(kind, Kind::Resources | Kind::ResourceTemplates) {
        return name.to_string();
    }
    let cut = name.split(['?', '#']).next().unwrap_or_default();
    match cut.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(i) => rest.split_at(i),
                None => (rest, ""),
            };
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{scheme}://{host}{path}")
        }
        None => cut.to_string(),
    }
}

/// Error texts from HTTP clients may quote the endpoint URL: drop user info
/// (`://user:pw@`) and query strings before logging.
pub fn scrub_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        out.push_str(&rest[..i + 3]);
        rest = &rest[i + 3..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '>'))
            .unwrap_or(rest.len());
        let url = &rest[..end];
        let authority_end = url.find(['/', '?', '#']).unwrap_or(url.len());
        let (authority, path) = url.split_at(authority_end);
        let host = authority.rsplit('@').next().unwrap_or(authority);
        let path = path.split(['?', '#']).next().unwrap_or_default();
        out.push_str(host);
        out.push_str(path);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_only_strips_everything_but_the_host() {
        for (given, want) in [
            ("example.com", "example.com"),
            ("https://u:p@example.com:8443/mcp?key=s", "example.com"),
            ("u:p@example.com/x?y", "example.com"),
            ("127.0.0.1", "127.0.0.1"),
        ] {
            assert_eq!(host_only(given), want, "{given}");
        }
    }

    #[test]
    fn resource_names_lose_credentials_and_query() {
        for (kind, given, want) in [
            (
                Kind::Resources,
                "postgres://u:pw@db/x?token=t#f",
                "postgres://db/x",
            ),
            (Kind::Resources, "file:///a/b", "file:///a/b"),
            (Kind::ResourceTemplates, "file:///{path}", "file:///{path}"),
            (Kind::Tools, "a?b", "a?b"),
        ] {
            assert_eq!(safe_item_name(kind, given), want, "{given}");
        }
    }

    #[test]
    fn scrub_removes_credentials_and_queries_from_urls() {
        assert_eq!(
            scrub_urls(
                "error sending request for url (https://u:pw@c:4318/v1/traces?key=s): refused"
            ),
            "error sending request for url (https://c:4318/v1/traces): refused"
        );
        assert_eq!(scrub_urls("no url here"), "no url here");
        assert_eq!(
            scrub_urls("endpoint 'http://c:4317'"),
            "endpoint 'http://c:4317'"
        );
    }

    #[test]
    fn redacted_endpoint_is_scheme_host_port() {
        assert_eq!(
            redacted_endpoint("https://u:p@c:4318/x?y=z"),
            "https://c:4318"
        );
        assert_eq!(redacted_endpoint("nonsense"), "<invalid>");
    }
}
