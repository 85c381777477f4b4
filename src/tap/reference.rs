//! A tap's reference catalogue: the last complete listing of the tap's
//! `target:` (the exporter's own scheduled polls, kept as baselines),
//! handed to the tap's observer whenever it changes, so each abandoned
//! client listing can say which items the client never saw.

use crate::baseline::BaselineStore;
use mcp_listing::Kind;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

/// One kind's whole catalogue, by identity key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub kind: Kind,
    pub names: Vec<String>,
}

/// What was last handed over per kind (a hash of the names), so an
/// unchanged catalogue is not handed over again.
#[derive(Debug, Default)]
pub struct Sent([Option<u64>; 4]);

impl Sent {
    /// The kinds of `target` whose baseline changed since last time.
    pub fn changed(&mut self, baselines: &Mutex<BaselineStore>, target: &str) -> Vec<Reference> {
        let store = baselines.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for kind in Kind::ALL {
            let Some(names) = store.names(target, kind) else {
                continue;
            };
            let mut hasher = DefaultHasher::new();
            for name in names.iter() {
                name.hash(&mut hasher);
            }
            let digest = Some(hasher.finish());
            if self.0[kind as usize] != digest {
                self.0[kind as usize] = digest;
                let names = names.iter().map(str::to_string).collect();
                out.push(Reference { kind, names });
            }
        }
        out
    }
}
