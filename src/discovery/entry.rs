//! One discovered entry, from whatever source: the checks every entry
//! passes before it may become a target (an http(s) URL without user info,
//! a usable name, inside its module's `allow`), and why an entry was left
//! out when it was. A group's labels are checked where the group is read,
//! before they are copied to its URLs (`sd_format.rs`).

use crate::config::{ProbeModule, MAX_NAME_LEN};
use mcp_listing::HttpMode;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use url::Url;

/// Longest URL taken from a list.
pub const MAX_URL_BYTES: usize = 2048;

/// Longest text kept to show a skipped entry or its detail.
const MAX_SHOWN_CHARS: usize = 200;

mcp_listing::labelled_enum! {
    /// Why an entry of a list did not become a target: the `reason` label
    /// of `mcp_discovery_skipped_entries`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub enum SkipReason as "skip reason" {
        /// A static target, an earlier source or an earlier entry of this
        /// source has the name already (the first one stays).
        DuplicateName => "duplicate_name",
        InvalidUrl => "invalid_url",
        /// The URL carries `user:password@`.
        UrlUserinfo => "url_userinfo",
        /// Not http:// or https:// (discovery never starts a process).
        NotHttp => "not_http",
        /// Outside the module's `allow`.
        NotAllowed => "not_allowed",
        /// The name is empty, too long or holds characters a name cannot.
        InvalidName => "invalid_name",
        InvalidLabel => "invalid_label",
        /// A registry entry whose official status is not `active`.
        NotActive => "not_active",
        /// A registry entry that is not the latest version of its server.
        NotLatest => "not_latest",
        /// A registry entry with no `streamable-http` or `sse` remote.
        NoRemote => "no_remote",
        /// A remote URL with an unresolved `{variable}`.
        UrlVariable => "url_variable",
        /// A remote that requires a header the module does not send.
        RequiredHeader => "required_header",
        /// A registry entry without the fields an entry needs.
        InvalidEntry => "invalid_entry",
    }
}

/// An entry as a source read it, not yet checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The name the entry asks for (a `file_sd` group's `name` label when
    /// the group has one target, a registry server's name); else the URL
    /// names it.
    pub name: Option<String>,
    pub url: String,
    /// The group's labels (meta labels, `__*`, already left out), checked.
    pub labels: BTreeMap<String, String>,
    /// The transport the source says the URL speaks (a registry remote's
    /// `type`), used when the module's `transport` is `auto`.
    pub transport: Option<HttpMode>,
    /// Where in the source it was, for people (`a.json, group 2`).
    pub origin: String,
}

/// An entry that may become a target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub name: String,
    #[serde(skip)]
    pub url: Url,
    pub labels: BTreeMap<String, String>,
    #[serde(skip)]
    pub transport: Option<HttpMode>,
}

/// An entry left out, and why: shown on `/api/sources` and logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Its name, or its URL without user info, query or fragment; bounded,
    /// control characters escaped.
    pub entry: String,
    /// Where in the source it was.
    pub origin: String,
    pub reason: SkipReason,
    pub detail: String,
}

impl Skipped {
    pub fn new(entry: &str, origin: &str, reason: SkipReason, detail: impl Into<String>) -> Self {
        Skipped {
            entry: shown(entry),
            origin: shown(origin),
            reason,
            detail: shown(&detail.into()),
        }
    }
}

/// Skipped entries kept with their details per refresh; past it only
/// counted (by reason), so a list of a million bad entries stays small.
pub const MAX_SKIPPED_KEPT: usize = 200;

/// Entries left out: every one counted by reason, the first few kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SkipList {
    pub counts: BTreeMap<SkipReason, u64>,
    /// The first [`MAX_SKIPPED_KEPT`], in list order.
    pub entries: Vec<Skipped>,
}

impl SkipList {
    pub fn push(&mut self, skipped: Skipped) {
        self.push_with(skipped.reason, || skipped);
    }

    /// One entry left out for `reason`; `skipped` makes its details, and
    /// is called only while details are still kept (a list of millions of
    /// bad entries makes 200).
    pub fn push_with(&mut self, reason: SkipReason, skipped: impl FnOnce() -> Skipped) {
        *self.counts.entry(reason).or_default() += 1;
        if self.entries.len() < MAX_SKIPPED_KEPT {
            self.entries.push(skipped());
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// `other`'s skips after this list's.
    pub fn extend(&mut self, other: &SkipList) {
        for (reason, n) in &other.counts {
            *self.counts.entry(*reason).or_default() += n;
        }
        let room = MAX_SKIPPED_KEPT.saturating_sub(self.entries.len());
        self.entries
            .extend(other.entries.iter().take(room).cloned());
    }
}

/// Check `c` against the rules every entry passes, and against `module`;
/// `names` holds the names taken so far in this list (the first one wins).
pub fn admit(
    c: Candidate,
    module: &ProbeModule,
    names: &mut HashSet<String>,
) -> Result<Entry, Skipped> {
    let url = checked_url(&c)?;
    let name = match &c.name {
        Some(name) => name.clone(),
        None => url_name(&url),
    };
    let skip = |reason, detail: String| Skipped::new(&name, &c.origin, reason, detail);
    if let Err(why) = check_name(&name) {
        return Err(skip(SkipReason::InvalidName, why));
    }
    if !module.allows(&url) {
        return Err(skip(
            SkipReason::NotAllowed,
            format!(
                "{} is outside module `{}`'s allow list",
                url_name(&url),
                module.name
            ),
        ));
    }
    if !names.insert(name.clone()) {
        return Err(skip(
            SkipReason::DuplicateName,
            "an earlier entry of this source has this name".into(),
        ));
    }
    Ok(Entry {
        name,
        url,
        labels: c.labels,
        transport: c.transport,
    })
}

/// Every candidate checked in order: the entries that may become targets,
/// and the others with their reasons after `skipped`'s.
pub fn admit_all(
    candidates: Vec<Candidate>,
    module: &ProbeModule,
    mut skipped: SkipList,
) -> (Vec<Entry>, SkipList) {
    let mut names = HashSet::new();
    let mut entries = Vec::with_capacity(candidates.len());
    for c in candidates {
        match admit(c, module, &mut names) {
            Ok(entry) => entries.push(entry),
            Err(skip) => skipped.push(skip),
        }
    }
    (entries, skipped)
}

/// The candidate's URL if it is an http(s) URL without user info.
fn checked_url(c: &Candidate) -> Result<Url, Skipped> {
    if c.url.len() > MAX_URL_BYTES {
        // Not echoed, not even in part: it may hold user info.
        return Err(Skipped::new(
            c.name.as_deref().unwrap_or("(URL too long)"),
            &c.origin,
            SkipReason::InvalidUrl,
            format!("the URL is longer than {MAX_URL_BYTES} bytes"),
        ));
    }
    let url = Url::parse(c.url.trim()).map_err(|e| {
        // Not echoed: an unparsable URL may hold a secret anywhere.
        Skipped::new(
            c.name.as_deref().unwrap_or("(unparsable URL)"),
            &c.origin,
            SkipReason::InvalidUrl,
            format!("not a URL: {e}"),
        )
    })?;
    let shown_as = c.name.clone().unwrap_or_else(|| url_name(&url));
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Skipped::new(
            &shown_as,
            &c.origin,
            SkipReason::NotHttp,
            format!(
                "scheme {}:// is not http:// or https:// (discovery polls HTTP servers only and never starts a process)",
                url.scheme()
            ),
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Skipped::new(
            &shown_as,
            &c.origin,
            SkipReason::UrlUserinfo,
            "the URL carries user info (credentials); credentials come from the module only",
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(Skipped::new(
            &shown_as,
            &c.origin,
            SkipReason::InvalidUrl,
            "the URL has no host",
        ));
    }
    Ok(url)
}

/// How an entry left out before it was checked is shown: its name, else
/// its URL without user info, query or fragment; never a URL that is too
/// long or does not parse (it may hold a secret anywhere).
pub fn shown_entry(name: Option<&str>, url: &str) -> String {
    match name {
        Some(name) => name.to_string(),
        None if url.len() > MAX_URL_BYTES => "(URL too long)".into(),
        None => Url::parse(url.trim()).map_or_else(|_| "(unparsable URL)".into(), |u| url_name(&u)),
    }
}

/// The URL without user info, query or fragment: what names an entry that
/// brings no name, and what shows a skipped one.
pub fn url_name(url: &Url) -> String {
    let mut u = url.clone();
    // Infallible for http(s) URLs, which have a host; errors leave the part.
    let _ = u.set_username("");
    let _ = u.set_password(None);
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// A discovered target's name: a label value, a path segment, a file
/// name's stem. Printable ASCII without spaces or characters that HTML or
/// a shell would read, at most [`MAX_NAME_LEN`] bytes.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "the name is {} bytes long; at most {MAX_NAME_LEN} are allowed",
            name.len()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !c.is_ascii_graphic() || matches!(c, '"' | '\'' | '<' | '>' | '\\' | '`'))
    {
        return Err(format!(
            "the name holds {c:?}; a name is printable ASCII without spaces, quotes, <, >, \\ or `"
        ));
    }
    Ok(())
}

/// At most [`MAX_SHOWN_CHARS`] characters, control characters escaped.
fn shown(text: &str) -> String {
    shown_text(text, MAX_SHOWN_CHARS)
}

/// At most `max` characters of `text`, control characters escaped: what
/// a list or an answer says, fit for a log line, a page or JSON.
pub fn shown_text(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module() -> ProbeModule {
        let c = crate::discovery::test_config(
            "modules:\n  m:\n    allow: [\"https://mcp.example.invalid/\"]\n",
        );
        c.modules["m"].clone()
    }

    fn candidate(name: Option<&str>, url: &str) -> Candidate {
        Candidate {
            name: name.map(str::to_string),
            url: url.to_string(),
            labels: BTreeMap::new(),
            transport: None,
            origin: "a.json, group 1".into(),
        }
    }

    /// `c` admitted alone.
    fn admit_one(c: Candidate) -> Result<Entry, Skipped> {
        admit(c, &module(), &mut HashSet::new())
    }

    fn reason(c: Candidate) -> SkipReason {
        admit_one(c).unwrap_err().reason
    }

    #[test]
    fn urls_name_entries_without_secrets() {
        let e = admit_one(candidate(
            None,
            "https://mcp.example.invalid/a?key=s3cret#x",
        ))
        .unwrap();
        assert_eq!(e.name, "https://mcp.example.invalid/a");
        let e = admit_one(candidate(Some("weather"), "https://mcp.example.invalid/w")).unwrap();
        assert_eq!(e.name, "weather");
    }

    #[test]
    fn every_rule_has_its_reason() {
        let userinfo =
            admit_one(candidate(None, "https://u:s3cret@mcp.example.invalid/a")).unwrap_err();
        assert_eq!(userinfo.reason, SkipReason::UrlUserinfo);
        assert!(!format!("{userinfo:?}").contains("s3cret"), "{userinfo:?}");
        assert_eq!(
            reason(candidate(None, "file:///etc/passwd")),
            SkipReason::NotHttp
        );
        assert_eq!(
            reason(candidate(None, "stdio:npx -y x")),
            SkipReason::NotHttp
        );
        assert_eq!(reason(candidate(None, "not a url")), SkipReason::InvalidUrl);
        assert_eq!(
            reason(candidate(None, "https://other.invalid/a")),
            SkipReason::NotAllowed
        );
        assert_eq!(
            reason(candidate(Some("a b"), "https://mcp.example.invalid/a")),
            SkipReason::InvalidName
        );
        let mut names = HashSet::new();
        let m = module();
        admit(
            candidate(Some("x"), "https://mcp.example.invalid/1"),
            &m,
            &mut names,
        )
        .unwrap();
        let dup = admit(
            candidate(Some("x"), "https://mcp.example.invalid/2"),
            &m,
            &mut names,
        );
        assert_eq!(dup.unwrap_err().reason, SkipReason::DuplicateName);
    }

    #[test]
    fn entries_skipped_unchecked_are_shown_without_secrets() {
        assert_eq!(shown_entry(Some("a"), "x"), "a");
        assert_eq!(
            shown_entry(None, "https://u:s3cret@h.invalid/p?k=s3cret"),
            "https://h.invalid/p"
        );
        assert_eq!(shown_entry(None, "not a url s3cret"), "(unparsable URL)");
        let long = format!("https://h.invalid/{}", "x".repeat(MAX_URL_BYTES));
        assert_eq!(shown_entry(None, &long), "(URL too long)");
    }

    #[test]
    fn shown_text_is_bounded_and_escaped() {
        let s = Skipped::new(
            &"x".repeat(5000),
            "o\u{1b}[31m",
            SkipReason::InvalidName,
            "d",
        );
        assert!(s.entry.chars().count() <= MAX_SHOWN_CHARS + 1);
        assert!(!s.origin.contains('\u{1b}'));
    }
}
