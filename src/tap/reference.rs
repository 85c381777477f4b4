//! A tap's reference catalogues: per route, the last complete listing of a
//! configured target (`target:` for the upstream's own path, `routes[].target`
//! for a named route; the exporter's scheduled polls, kept as baselines) or
//! of the tap's own walk of the route (`learn_catalogue`), handed to the
//! tap's observer whenever it changes, so each abandoned client listing can
//! say which items the client never saw.

use crate::baseline::BaselineStore;
use mcp_listing::Kind;
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

/// Which route a reference is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RouteRef {
    /// The upstream URL's own path (the one route of a tap in front of one
    /// server).
    Default,
    /// A route by its name: an operator's, or a path the tap learned.
    Named(String),
}

/// One kind's whole catalogue of one route, by identity key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub route: RouteRef,
    pub kind: Kind,
    pub names: Vec<String>,
    /// Pages its walk took, when known (the tap's own walks).
    pub pages: Option<u32>,
}

/// What was last handed over per route and kind (a hash of the names), so
/// an unchanged catalogue is not handed over again.
#[derive(Debug, Default)]
pub struct Sent(HashMap<(RouteRef, Kind), u64>);

impl Sent {
    /// The kinds of `target` whose baseline changed since last handed over
    /// for `route`.
    pub fn changed(
        &mut self,
        baselines: &Mutex<BaselineStore>,
        route: &RouteRef,
        target: &str,
    ) -> Vec<Reference> {
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
            let digest = hasher.finish();
            if self.0.insert((route.clone(), kind), digest) != Some(digest) {
                let names = names.iter().map(str::to_string).collect();
                out.push(Reference {
                    route: route.clone(),
                    kind,
                    names,
                    pages: None,
                });
            }
        }
        out
    }
}
