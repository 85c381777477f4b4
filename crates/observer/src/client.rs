//! Client identities as label values. A client names itself, so its name
//! is cut and escaped (`mcp_tap_contract::identity::label`) and a tap holds at most
//! `max_clients` of them; every further name is `other`.

use mcp_tap_contract::identity;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The label of the clients past `max_clients`.
pub const OTHER: &str = "other";

/// A client identity as a label value: bounded, escaped, cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientId(Arc<str>);

impl ClientId {
    pub fn label(&self) -> &str {
        &self.0
    }

    /// Whether this stands for every client past `max_clients`.
    pub fn is_other(&self) -> bool {
        &*self.0 == OTHER
    }
}

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "client:{}", self.0)
    }
}

/// The labels handed out so far, each with when it last asked for a list.
#[derive(Debug)]
pub(crate) struct Clients {
    known: HashMap<Arc<str>, Known>,
    other: ClientId,
    /// When `other` last asked, once it has.
    other_seen: Option<Instant>,
    max: usize,
}

#[derive(Debug)]
struct Known {
    id: ClientId,
    last: Instant,
}

impl Clients {
    pub(crate) fn new(max: usize) -> Clients {
        Clients {
            known: HashMap::new(),
            other: ClientId(Arc::from(OTHER)),
            other_seen: None,
            max,
        }
    }

    /// The label of a client called `name`, seen `at`: its own while fewer
    /// than `max_clients` are known, `other` after; and whether the label
    /// is new (a `Fact::NewClient` to tell).
    pub(crate) fn resolve(&mut self, name: &str, at: Instant) -> (ClientId, bool) {
        let label = identity::label(name);
        if let Some(known) = self.known.get_mut(label.as_str()) {
            known.last = known.last.max(at);
            return (known.id.clone(), false);
        }
        if self.known.len() >= self.max {
            let new = match &mut self.other_seen {
                Some(last) => {
                    *last = (*last).max(at);
                    false
                }
                None => {
                    self.other_seen = Some(at);
                    true
                }
            };
            return (self.other.clone(), new);
        }
        let label: Arc<str> = Arc::from(label);
        let id = ClientId(label.clone());
        let known = Known {
            id: id.clone(),
            last: at,
        };
        self.known.insert(label, known);
        (id, true)
    }

    /// Forget the labels not seen for `idle` before `now`: theirs.
    pub(crate) fn forget_idle(&mut self, now: Instant, idle: Duration) -> Vec<ClientId> {
        let quiet = |last: Instant| now.saturating_duration_since(last) >= idle;
        let mut gone = Vec::new();
        self.known.retain(|_, known| {
            let keep = !quiet(known.last);
            if !keep {
                gone.push(known.id.clone());
            }
            keep
        });
        if self.other_seen.is_some_and(quiet) {
            self.other_seen = None;
            gone.push(self.other.clone());
        }
        gone
    }

    pub(crate) fn len(&self) -> usize {
        self.known.len() + usize::from(self.other_seen.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_every_new_name_is_other() {
        let mut clients = Clients::new(2);
        let now = Instant::now();
        let mut new = Vec::new();
        let mut resolve = |name: &str| {
            let (id, fresh) = clients.resolve(name, now);
            if fresh {
                new.push(id.label().to_string());
            }
            id
        };
        let a = resolve("a");
        assert_eq!(resolve("a"), a);
        resolve("b");
        let c = resolve("c");
        let d = resolve("d\x1b[2J");
        assert!(c.is_other() && d.is_other());
        assert_eq!(resolve("b").label(), "b");
        assert_eq!(new, ["a", "b", "other"], "a, b, then other once");
        assert_eq!(clients.len(), 3);
    }

    #[test]
    fn labels_are_cut_and_escaped() {
        let mut clients = Clients::new(8);
        let now = Instant::now();
        let long = clients.resolve(&"x".repeat(10_000), now).0;
        assert_eq!(long.label().len(), identity::MAX_NAME_BYTES);
        let evil = clients.resolve("ev\nil", now).0;
        assert_eq!(evil.label(), "ev\\nil");
        assert_eq!(clients.resolve("", now).0.label(), identity::UNKNOWN);
    }

    #[test]
    fn quiet_clients_are_forgotten_and_free_their_slot() {
        let mut clients = Clients::new(1);
        let start = Instant::now();
        let idle = Duration::from_secs(60);
        clients.resolve("a", start);
        assert!(clients.resolve("b", start).0.is_other());
        let later = start + Duration::from_secs(50);
        clients.resolve("a", later);
        assert!(clients.forget_idle(later, idle).is_empty());
        let gone = clients.forget_idle(start + Duration::from_secs(61), idle);
        assert_eq!(gone.len(), 1, "other went quiet: {gone:?}");
        assert!(gone[0].is_other());
        let gone = clients.forget_idle(later + idle, idle);
        assert_eq!(gone.iter().map(ClientId::label).collect::<Vec<_>>(), ["a"]);
        assert_eq!(clients.len(), 0);
        let (b, new) = clients.resolve("b", later + idle);
        assert_eq!((b.label(), new), ("b", true), "the slot is free again");
    }
}
