//! The routes one tap keeps: the operator's, the upstream's own path, and
//! those learned from requests — at most `max_routes` made on the fly (by a
//! pattern or a new path), then `other`; and which routes each client is
//! told under — at most `max_client_routes` (client, route) pairs, then the
//! client's further routes are `other` too. Both are label values, so both
//! are bounded however many paths clients invent.

use crate::client::ClientId;
use crate::fact::Fact;
use crate::route::{OtherRoute, RouteId, Routing, OTHER_ROUTE};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Route resolutions after which a configured route that matched none of
/// them is reported: enough traffic that it should have.
pub const UNMATCHED_AFTER: u64 = 10;

/// A request's route, and why it is `other` when it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub route: RouteId,
    pub other: Option<OtherRoute>,
}

/// One configured route and how many requests it took.
#[derive(Debug)]
struct Rule {
    hits: u64,
}

#[derive(Debug)]
pub(crate) struct Routes {
    routing: Routing,
    rules: Vec<Rule>,
    /// Every route by name, once made.
    known: HashMap<Arc<str>, RouteId>,
    /// Routes told (`Fact::NewRoute`) so far.
    told: HashSet<RouteId>,
    /// Routes made on the fly (patterns, learned paths).
    made: usize,
    max: usize,
    default: RouteId,
    other: RouteId,
    resolutions: u64,
}

impl Routes {
    pub(crate) fn new(routing: Routing, max: usize) -> Routes {
        let labelled = !routing.rules.is_empty();
        let default_name = routing.default_path.clone().unwrap_or_default();
        let mut known = HashMap::new();
        for rule in &routing.rules {
            if let Some(path) = rule.literal_path() {
                let name = rule.matches(&path).unwrap_or(path);
                let route = RouteId::new(&name, true);
                known.insert(Arc::from(route.name()), route);
            }
        }
        let mut routes = Routes {
            rules: routing.rules.iter().map(|_| Rule { hits: 0 }).collect(),
            known,
            told: HashSet::new(),
            made: 0,
            max,
            default: RouteId::new(&default_name, labelled),
            other: RouteId::new(OTHER_ROUTE, true),
            resolutions: 0,
            routing,
        };
        // The upstream's own path is a route whatever the bounds, under a
        // rule's name when one matches it.
        routes.default = match routes.routing.default_path.clone() {
            Some(path) => match routes.by_rule(&path) {
                Some((_, name)) => routes.known_or(&name, labelled),
                None => routes.known_or(&default_name, labelled),
            },
            None => routes.default.clone(),
        };
        routes
    }

    fn known_or(&mut self, name: &str, labelled: bool) -> RouteId {
        let route = RouteId::new(name, labelled);
        self.known
            .entry(Arc::from(route.name()))
            .or_insert(route)
            .clone()
    }

    fn by_rule(&self, path: &str) -> Option<(usize, String)> {
        self.routing
            .rules
            .iter()
            .enumerate()
            .find_map(|(i, rule)| Some((i, rule.matches(path)?)))
    }

    /// The route of a request to `path` (normalised; `None`: the stdio
    /// tap's, or a request with no path).
    pub(crate) fn resolve(&mut self, path: Option<&str>, facts: &mut Vec<Fact>) -> Resolved {
        self.resolutions += 1;
        let resolved = self.route_of(path);
        if self.resolutions == UNMATCHED_AFTER {
            for (rule, kept) in self.routing.rules.iter().zip(&self.rules) {
                if kept.hits == 0 {
                    facts.push(Fact::RouteUnmatched {
                        written: Arc::from(rule.written.as_str()),
                        requests: self.resolutions,
                    });
                }
            }
        }
        if !self.told.contains(&resolved.route) {
            self.told.insert(resolved.route.clone());
            let path = match path {
                Some(_) if resolved.route.is_other() => None,
                Some(p) => Some(Arc::from(p)),
                None => self.routing.default_path.as_deref().map(Arc::from),
            };
            facts.push(Fact::NewRoute {
                route: resolved.route.clone(),
                path,
            });
        }
        resolved
    }

    fn route_of(&mut self, path: Option<&str>) -> Resolved {
        let Some(path) = path else {
            return self.found(self.default.clone());
        };
        if let Some((i, name)) = self.by_rule(path) {
            self.rules[i].hits += 1;
            return self.made(&name);
        }
        if self.routing.default_path.as_deref() == Some(path) {
            return self.found(self.default.clone());
        }
        if self.routing.learn_paths {
            return self.made(path);
        }
        Resolved {
            route: self.other.clone(),
            other: Some(OtherRoute::Unmatched),
        }
    }

    fn found(&self, route: RouteId) -> Resolved {
        Resolved { route, other: None }
    }

    /// The route named `name`, made when there is room.
    fn made(&mut self, name: &str) -> Resolved {
        let route = RouteId::new(name, true);
        if let Some(known) = self.known.get(route.name()) {
            return self.found(known.clone());
        }
        if self.made >= self.max {
            return Resolved {
                route: self.other.clone(),
                other: Some(OtherRoute::MaxRoutes),
            };
        }
        self.made += 1;
        self.known.insert(Arc::from(route.name()), route.clone());
        self.found(route)
    }

    /// A route known by its name (the operator's, a path learned, or the
    /// upstream's own path's).
    pub(crate) fn named(&self, name: &str) -> Option<RouteId> {
        if name == OTHER_ROUTE {
            return Some(self.other.clone());
        }
        self.known.get(name).cloned()
    }

    pub(crate) fn default_route(&self) -> &RouteId {
        &self.default
    }

    /// Routes told so far (`other` included once used).
    pub(crate) fn len(&self) -> usize {
        self.told.len()
    }

    /// Each configured route as written, with the requests it matched.
    pub(crate) fn rules(&self) -> impl Iterator<Item = (&str, u64)> {
        self.routing
            .rules
            .iter()
            .zip(&self.rules)
            .map(|(rule, kept)| (rule.written.as_str(), kept.hits))
    }
}

/// Which (client, route) pairs have names of their own.
#[derive(Debug)]
pub(crate) struct ClientRoutes {
    pairs: HashSet<(ClientId, RouteId)>,
    max: usize,
}

impl ClientRoutes {
    pub(crate) fn new(max: usize) -> ClientRoutes {
        ClientRoutes {
            pairs: HashSet::new(),
            max,
        }
    }

    /// The route `client`'s requests to `route` are told under: its own
    /// while there is room (or the pair is known), else `other`.
    pub(crate) fn shown(&mut self, client: &ClientId, route: &RouteId) -> Resolved {
        let pair = (client.clone(), route.clone());
        if route.is_other() || self.pairs.contains(&pair) {
            return Resolved {
                route: route.clone(),
                other: None,
            };
        }
        if self.pairs.len() >= self.max {
            return Resolved {
                route: RouteId::new(OTHER_ROUTE, true),
                other: Some(OtherRoute::MaxClientRoutes),
            };
        }
        self.pairs.insert(pair);
        Resolved {
            route: route.clone(),
            other: None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.pairs.len()
    }

    /// A client forgotten: its pairs make room for others.
    pub(crate) fn forget(&mut self, client: &ClientId) {
        self.pairs.retain(|(c, _)| c != client);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::{normalise, RouteRule};
    use std::time::Instant;

    fn routing(rules: Vec<RouteRule>, learn: bool) -> Routing {
        Routing {
            default_path: Some("/mcp".into()),
            rules,
            learn_paths: learn,
        }
    }

    fn name(routes: &mut Routes, path: &str) -> (String, Option<OtherRoute>) {
        let r = routes.resolve(Some(&normalise(path)), &mut Vec::new());
        (r.route.name().to_string(), r.other)
    }

    #[test]
    fn without_rules_the_upstream_path_is_unlabelled_and_others_are_learned() {
        let mut routes = Routes::new(Routing::learning(Some("/mcp/")), 2);
        let mut facts = Vec::new();
        let default = routes.resolve(Some("/mcp"), &mut facts).route;
        assert_eq!((default.name(), default.label()), ("/mcp", None));
        assert_eq!(name(&mut routes, "/a/"), ("/a".into(), None));
        assert_eq!(name(&mut routes, "/b"), ("/b".into(), None));
        assert_eq!(
            name(&mut routes, "/c"),
            ("other".into(), Some(OtherRoute::MaxRoutes))
        );
        assert_eq!(name(&mut routes, "/%61"), ("/a".into(), None), "known");
        assert_eq!(routes.len(), 4, "/mcp, /a, /b, other");
        let stdio = routes.resolve(None, &mut facts).route;
        assert_eq!(stdio, default);
        assert!(matches!(&facts[0], Fact::NewRoute { route, path: Some(p) }
            if route == &default && &**p == "/mcp"));
    }

    #[test]
    fn rules_name_routes_and_unmatched_paths_are_other_when_not_learning() {
        let rules = vec![
            RouteRule::parse(Some("alpha"), "/mcp/alpha").unwrap(),
            RouteRule::parse(Some("s-{id}"), "/servers/{id}/mcp").unwrap(),
            RouteRule::parse(Some("s-{id}"), "/servers/{id}/sse").unwrap(),
            RouteRule::parse(None, "/never/{x}").unwrap(),
        ];
        let mut routes = Routes::new(routing(rules, false), 8);
        assert_eq!(routes.named("alpha").unwrap().label(), Some("alpha"));
        assert_eq!(name(&mut routes, "/mcp/alpha/").0, "alpha");
        assert_eq!(name(&mut routes, "/servers/7/mcp").0, "s-7");
        assert_eq!(name(&mut routes, "/servers/7/sse").0, "s-7");
        assert_eq!(
            name(&mut routes, "/elsewhere"),
            ("other".into(), Some(OtherRoute::Unmatched))
        );
        let default = routes.default_route().clone();
        assert_eq!(default.label(), Some("/mcp"), "labelled once routes exist");
        let mut facts = Vec::new();
        for _ in 0..UNMATCHED_AFTER {
            routes.resolve(Some("/mcp/alpha"), &mut facts);
        }
        let unmatched: Vec<&str> = facts
            .iter()
            .filter_map(|f| match f {
                Fact::RouteUnmatched { written, .. } => Some(&**written),
                _ => None,
            })
            .collect();
        assert_eq!(unmatched, ["/never/{x}"]);
        let hits: Vec<u64> = routes.rules().map(|(_, n)| n).collect();
        assert_eq!(hits, [11, 1, 1, 0], "alpha: once, then ten times");
    }

    #[test]
    fn a_client_has_at_most_so_many_routes_of_its_own() {
        let mut clients = crate::client::Clients::new(4);
        let a = clients.resolve("a", Instant::now()).0;
        let b = clients.resolve("b", Instant::now()).0;
        let mut pairs = ClientRoutes::new(2);
        let r = |n: &str| RouteId::new(n, true);
        assert_eq!(pairs.shown(&a, &r("/1")).route, r("/1"));
        assert_eq!(pairs.shown(&b, &r("/1")).route, r("/1"));
        let folded = pairs.shown(&a, &r("/2"));
        assert_eq!(
            (folded.route.name(), folded.other),
            ("other", Some(OtherRoute::MaxClientRoutes))
        );
        assert_eq!(pairs.shown(&a, &r("/1")).route, r("/1"), "known pairs stay");
        assert_eq!(pairs.len(), 2);
    }
}
