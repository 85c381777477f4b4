//! Apps an operator names. Every app built on one SDK may call itself the
//! same (`mcp 0.1.0`) and send the same User-Agent; operators know their
//! apps by where they run. An app rule names the clients that connect from
//! given address ranges (CIDR, as a service mesh names a source workload),
//! or that send a given User-Agent product, or both; the first rule that
//! matches names the client, above what the client says of itself
//! (`identity`). Without rules a tap reads clients as they name
//! themselves. Pure: addresses and header bytes in, a name out.

use crate::identity::{self, ClientInfo};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;

/// A range of source addresses: `10.1.0.0/16`, `fd00::/8`, or one address
/// (`127.0.0.2`, a `/32` or `/128`). An IPv4 client seen as an
/// IPv4-mapped IPv6 address (`::ffff:10.1.2.3`) is in the IPv4 ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressRange {
    base: IpAddr,
    prefix: u8,
}

/// Why an address range or an app rule was refused: what is wrong, never
/// the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("not an address or an address range (CIDR: 10.0.0.0/8, fd00::/8)")]
    BadRange,
    #[error("an app's name must be 1 to {max} bytes of printable characters, and not `other` or `unknown`", max = identity::MAX_NAME_BYTES)]
    BadName,
    #[error("an app needs `from:` address ranges, a `user_agent:` product, or both")]
    NoMatch,
    #[error("two apps of the same name")]
    Duplicate,
}

impl FromStr for AddressRange {
    type Err = AppError;

    fn from_str(s: &str) -> Result<AddressRange, AppError> {
        let bad = || AppError::BadRange;
        let (address, prefix) = match s.trim().split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (s.trim(), None),
        };
        let base: IpAddr = address.parse().map_err(|_| bad())?;
        let max = if base.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) if p.bytes().all(|b| b.is_ascii_digit()) => p.parse().map_err(|_| bad())?,
            Some(_) => return Err(bad()),
        };
        if prefix > max {
            return Err(bad());
        }
        Ok(AddressRange { base, prefix })
    }
}

impl fmt::Display for AddressRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.base, self.prefix)
    }
}

impl AddressRange {
    /// Whether `address` is in the range.
    pub fn contains(&self, address: IpAddr) -> bool {
        match (self.base, address.to_canonical()) {
            (IpAddr::V4(base), IpAddr::V4(a)) => same_prefix(
                u128::from(u32::from(base)),
                u128::from(u32::from(a)),
                32,
                self.prefix,
            ),
            (IpAddr::V6(base), IpAddr::V6(a)) => {
                same_prefix(u128::from(base), u128::from(a), 128, self.prefix)
            }
            _ => false,
        }
    }
}

/// Whether the first `prefix` of `width` bits of `a` and `b` agree.
fn same_prefix(a: u128, b: u128, width: u32, prefix: u8) -> bool {
    let drop = width - u32::from(prefix);
    // A shift by the whole width would overflow: a /0 matches everything.
    drop >= width || (a >> drop) == (b >> drop)
}

/// One app: its name, and what tells its clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppRule {
    name: String,
    /// Source address ranges (any of them); none: any address.
    from: Vec<AddressRange>,
    /// The User-Agent's product (`desk-app` of `desk-app/1.2 httpx/0.28`),
    /// compared without regard to ASCII case; none: any.
    user_agent: Option<String>,
}

impl AppRule {
    /// A rule naming `name` the clients from `from` (any, when empty) that
    /// send `user_agent` as their User-Agent's product (any, when none).
    pub fn new(
        name: &str,
        from: Vec<AddressRange>,
        user_agent: Option<&str>,
    ) -> Result<AppRule, AppError> {
        let printable = !name.is_empty()
            && name.len() <= identity::MAX_NAME_BYTES
            && identity::label(name) == name
            && !name.chars().any(char::is_whitespace);
        if !printable || name == identity::UNKNOWN || name == "other" {
            return Err(AppError::BadName);
        }
        let user_agent = user_agent.map(str::trim).filter(|u| !u.is_empty());
        if from.is_empty() && user_agent.is_none() {
            return Err(AppError::NoMatch);
        }
        Ok(AppRule {
            name: name.to_string(),
            from,
            user_agent: user_agent.map(str::to_string),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    fn matches(&self, peer: Option<IpAddr>, product: Option<&str>) -> bool {
        let from = self.from.is_empty()
            || peer.is_some_and(|p| self.from.iter().any(|range| range.contains(p)));
        let agent = match &self.user_agent {
            None => true,
            Some(want) => product.is_some_and(|p| p.eq_ignore_ascii_case(want)),
        };
        from && agent
    }
}

/// A tap's app rules, in order (cheap to clone: the data path and the
/// observer share them).
#[derive(Debug, Clone, Default)]
pub struct Apps {
    rules: Arc<[AppRule]>,
}

impl Apps {
    /// Rules in the order they are tried; two of one name are refused.
    pub fn new(rules: Vec<AppRule>) -> Result<Apps, AppError> {
        for (at, rule) in rules.iter().enumerate() {
            if rules[..at].iter().any(|r| r.name == rule.name) {
                return Err(AppError::Duplicate);
            }
        }
        Ok(Apps {
            rules: rules.into(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether `name` (as a label) is one of these apps.
    pub fn names(&self, name: &str) -> bool {
        self.rules.iter().any(|r| r.name == name)
    }

    /// Whether any rule reads the User-Agent.
    pub fn read_user_agent(&self) -> bool {
        self.rules.iter().any(|r| r.user_agent.is_some())
    }

    /// The app a client connecting from `peer` with `user_agent` is, by
    /// the first rule that matches.
    pub fn app_of(&self, peer: Option<IpAddr>, user_agent: Option<&[u8]>) -> Option<ClientInfo> {
        if self.rules.is_empty() {
            return None;
        }
        let product = user_agent
            .filter(|_| self.read_user_agent())
            .and_then(identity::from_user_agent);
        let product = product.as_ref().map(|p| p.name.as_str());
        let rule = self.rules.iter().find(|r| r.matches(peer, product))?;
        Some(ClientInfo {
            name: rule.name.clone(),
            version: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(s: &str) -> AddressRange {
        s.parse().unwrap()
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn ranges_hold_their_addresses() {
        assert!(range("10.1.0.0/16").contains("10.1.200.3".parse().unwrap()));
        assert!(!range("10.1.0.0/16").contains("10.2.0.1".parse().unwrap()));
        assert!(range("127.0.0.2").contains("127.0.0.2".parse().unwrap()));
        assert!(!range("127.0.0.2").contains("127.0.0.3".parse().unwrap()));
        assert!(range("0.0.0.0/0").contains("192.0.2.1".parse().unwrap()));
        assert!(range("fd00::/8").contains("fd12::1".parse().unwrap()));
        assert!(!range("fd00::/8").contains("10.0.0.1".parse().unwrap()));
        assert!(
            range("10.0.0.0/8").contains("::ffff:10.9.9.9".parse().unwrap()),
            "an IPv4 client on a dual-stack listener"
        );
        assert_eq!(range("10.1.2.3/16").to_string(), "10.1.2.3/16");
        for bad in [
            "10.0.0.0/33",
            "10.0.0/8",
            "fd00::/129",
            "x",
            "10.0.0.0/+8",
            "",
        ] {
            assert!(bad.parse::<AddressRange>().is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_first_rule_that_matches_names_the_app() {
        let apps = Apps::new(vec![
            AppRule::new("desk", vec![range("127.0.0.2")], None).unwrap(),
            AppRule::new("reports", vec![range("127.0.0.0/8")], Some("Report-Bot")).unwrap(),
            AppRule::new("agents", vec![range("127.0.0.0/8")], None).unwrap(),
            AppRule::new("nightly", vec![], Some("nightly")).unwrap(),
        ])
        .unwrap();
        let name =
            |peer, ua: Option<&str>| apps.app_of(peer, ua.map(str::as_bytes)).map(|c| c.name);
        assert_eq!(
            name(ip("127.0.0.2"), Some("report-bot/2")).as_deref(),
            Some("desk")
        );
        assert_eq!(
            name(ip("127.0.0.9"), Some("report-bot/2")).as_deref(),
            Some("reports")
        );
        assert_eq!(
            name(ip("127.0.0.3"), Some("python-httpx/0.28")).as_deref(),
            Some("agents")
        );
        assert_eq!(
            name(ip("10.0.0.1"), Some("nightly/1 x")).as_deref(),
            Some("nightly")
        );
        assert_eq!(name(ip("10.0.0.1"), Some("python-httpx/0.28")), None);
        assert_eq!(name(None, None), None);
        assert!(apps.names("desk") && !apps.names("mcp"));
        assert_eq!(Apps::default().app_of(ip("127.0.0.2"), None), None);
    }

    #[test]
    fn app_rules_are_checked() {
        let from = || vec![range("10.0.0.0/8")];
        for bad in ["", "other", "unknown", "a b", "esc\x1b", &"n".repeat(65)] {
            assert_eq!(
                AppRule::new(bad, from(), None),
                Err(AppError::BadName),
                "{bad:?}"
            );
        }
        assert_eq!(AppRule::new("x", vec![], Some(" ")), Err(AppError::NoMatch));
        let twice = vec![
            AppRule::new("x", from(), None).unwrap(),
            AppRule::new("x", from(), None).unwrap(),
        ];
        assert!(matches!(Apps::new(twice), Err(AppError::Duplicate)));
    }
}
