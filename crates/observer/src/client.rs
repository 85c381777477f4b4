//! Client identities as label values. A client names itself, so its name
//! is cut and escaped (`mcp_tap::identity::label`) and a tap holds at most
//! `max_clients` of them; every further name is `other`.

use crate::fact::Fact;
use mcp_tap::identity;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

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

/// The labels handed out so far.
#[derive(Debug)]
pub(crate) struct Clients {
    known: HashMap<Arc<str>, ClientId>,
    other: ClientId,
    other_seen: bool,
    max: usize,
}

impl Clients {
    pub(crate) fn new(max: usize) -> Clients {
        Clients {
            known: HashMap::new(),
            other: ClientId(Arc::from(OTHER)),
            other_seen: false,
            max,
        }
    }

    /// The label of a client called `name`: its own while fewer than
    /// `max_clients` are known, `other` after.
    pub(crate) fn resolve(&mut self, name: &str, facts: &mut Vec<Fact>) -> ClientId {
        let label = identity::label(name);
        if let Some(id) = self.known.get(label.as_str()) {
            return id.clone();
        }
        if self.known.len() >= self.max {
            if !std::mem::replace(&mut self.other_seen, true) {
                facts.push(Fact::NewClient(self.other.clone()));
            }
            return self.other.clone();
        }
        let label: Arc<str> = Arc::from(label);
        let id = ClientId(label.clone());
        self.known.insert(label, id.clone());
        facts.push(Fact::NewClient(id.clone()));
        id
    }

    pub(crate) fn len(&self) -> usize {
        self.known.len() + usize::from(self.other_seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_every_new_name_is_other() {
        let mut clients = Clients::new(2);
        let mut facts = Vec::new();
        let a = clients.resolve("a", &mut facts);
        assert_eq!(clients.resolve("a", &mut facts), a);
        clients.resolve("b", &mut facts);
        let c = clients.resolve("c", &mut facts);
        let d = clients.resolve("d\x1b[2J", &mut facts);
        assert!(c.is_other() && d.is_other());
        assert_eq!(clients.resolve("b", &mut facts).label(), "b");
        assert_eq!(facts.len(), 3, "a, b, then other once: {facts:?}");
        assert_eq!(clients.len(), 3);
    }

    #[test]
    fn labels_are_cut_and_escaped() {
        let mut clients = Clients::new(8);
        let mut facts = Vec::new();
        let long = clients.resolve(&"x".repeat(10_000), &mut facts);
        assert_eq!(long.label().len(), identity::MAX_NAME_BYTES);
        let evil = clients.resolve("ev\nil", &mut facts);
        assert_eq!(evil.label(), "ev\\nil");
        assert_eq!(clients.resolve("", &mut facts).label(), identity::UNKNOWN);
    }
}
