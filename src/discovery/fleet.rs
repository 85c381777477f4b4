//! From every source's current list to targets: names checked against the
//! static targets and earlier sources (in `discovery:` order; the first
//! stays), each entry bound to its source's module. A discovered target
//! gets the module's transport, headers and token, TLS, kinds and limits,
//! and its source's schedule, jitter, expect and labels — nothing else: no
//! credential of `global`, another module or a static target, and never a
//! process (modules are HTTP only).

use super::entry::SkipList;
use super::entry::{Entry, SkipReason, Skipped};
use crate::config::{Config, EndpointConfig, ProbeModule, SourceConfig, TargetConfig};
use mcp_listing::HttpMode;
use std::collections::{BTreeMap, HashMap};

/// The discovered targets of every source.
#[derive(Debug, Default)]
pub struct DiscoveredFleet {
    /// Bound targets, in source order then list order.
    pub targets: Vec<TargetConfig>,
    /// Per source: the entries its list holds that this step left out
    /// (`duplicate_name`, `not_allowed` by a module changed since).
    pub skipped: BTreeMap<String, SkipList>,
    /// Per source: targets it yields now.
    pub yielded: BTreeMap<String, usize>,
}

/// Bind every source's list (`lists`: source name → its current entries)
/// to its module. Sources are taken in `config.discovery` order.
pub fn assemble(config: &Config, lists: &HashMap<String, Vec<Entry>>) -> DiscoveredFleet {
    let mut taken: HashMap<&str, Option<&str>> = config
        .targets
        .iter()
        .map(|t| (t.name.as_str(), None))
        .collect();
    let mut fleet = DiscoveredFleet::default();
    for source in &config.discovery {
        let mut skipped = SkipList::default();
        let mut yielded = 0;
        let module = config.modules.get(&source.module);
        for entry in lists.get(&source.name).into_iter().flatten() {
            let Some(module) = module else {
                break;
            };
            if let Some(owner) = taken.get(entry.name.as_str()) {
                let by = match owner {
                    None => "a static target (`targets:`)".to_string(),
                    Some(s) if *s == source.name => "an earlier entry of this source".into(),
                    Some(s) => format!("a target of source `{s}`, which comes first"),
                };
                skipped.push(Skipped::new(
                    &entry.name,
                    &source.name,
                    SkipReason::DuplicateName,
                    format!("the name is taken by {by}"),
                ));
                continue;
            }
            // The list was checked against the module when read; a reload
            // may have narrowed `allow` since.
            if !module.allows(&entry.url) {
                skipped.push(Skipped::new(
                    &entry.name,
                    &source.name,
                    SkipReason::NotAllowed,
                    format!("outside module `{}`'s allow list", module.name),
                ));
                continue;
            }
            taken.insert(&entry.name, Some(&source.name));
            fleet
                .targets
                .push(bind(entry, source, module, &config.defaults));
            yielded += 1;
        }
        fleet.yielded.insert(source.name.clone(), yielded);
        fleet.skipped.insert(source.name.clone(), skipped);
    }
    fleet
}

/// One entry as a target of `source`, bound to `module`.
pub fn bind(
    entry: &Entry,
    source: &SourceConfig,
    module: &ProbeModule,
    defaults: &crate::config::Defaults,
) -> TargetConfig {
    let mut t = module.target_for(entry.name.clone(), entry.url.clone(), defaults);
    t.settings.schedule = source.schedule.clone();
    t.settings.jitter = source.jitter;
    t.expect = source.expect.clone();
    if let EndpointConfig::Http(http) = &mut t.endpoint {
        // A registry says which transport a remote speaks; the module's
        // own choice wins unless it is `auto`.
        if http.settings.transport == HttpMode::Auto {
            if let Some(hint) = entry.transport {
                http.settings.transport = hint;
            }
        }
    }
    t.source = Some(source.name.clone());
    let mut labels = source.labels.clone();
    labels.extend(entry.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    t.labels = labels;
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{load_str, HttpSettings, Secret};
    use url::Url;

    fn config() -> Config {
        std::env::set_var("MCP_EXPORTER_TEST_FLEET_TOKEN", "module-token-1");
        load_str(
            "global:\n  jitter: 1s\ntargets:\n  - name: static\n    http:\n      url: https://static.invalid/mcp\n      headers: {X-Static: static-secret}\nmodules:\n  m:\n    allow: [\"https://mcp.example.invalid/\"]\n    http:\n      headers: {X-Key: {env: MCP_EXPORTER_TEST_FLEET_TOKEN}}\n    kinds: [tools]\ndiscovery:\n  - name: first\n    module: m\n    file_sd: {files: [\"a.json\"]}\n    labels: {team: a, tier: x}\n    schedule: {every: 2m}\n  - name: second\n    module: m\n    file_sd: {files: [\"b.json\"]}\n",
            "t.yaml",
        )
        .unwrap()
        .config
    }

    fn entry(name: &str, url: &str) -> Entry {
        Entry {
            name: name.into(),
            url: Url::parse(url).unwrap(),
            labels: BTreeMap::from([("team".to_string(), "b".to_string())]),
            transport: Some(HttpMode::Sse),
        }
    }

    #[test]
    fn the_first_name_stays_and_targets_get_their_module_only() {
        let c = config();
        let lists = HashMap::from([
            (
                "first".to_string(),
                vec![
                    entry("static", "https://mcp.example.invalid/s"),
                    entry("x", "https://mcp.example.invalid/x"),
                    entry("out", "https://elsewhere.invalid/"),
                ],
            ),
            (
                "second".to_string(),
                vec![entry("x", "https://mcp.example.invalid/x2")],
            ),
        ]);
        let fleet = assemble(&c, &lists);
        assert_eq!(fleet.targets.len(), 1);
        assert_eq!(fleet.yielded["first"], 1);
        assert_eq!(fleet.yielded["second"], 0);
        let first = &fleet.skipped["first"];
        assert_eq!(first.counts[&SkipReason::DuplicateName], 1);
        assert_eq!(first.counts[&SkipReason::NotAllowed], 1);
        assert!(fleet.skipped["second"].entries[0]
            .detail
            .contains("source `first`"));
        let t = &fleet.targets[0];
        assert_eq!(t.source.as_deref(), Some("first"));
        assert_eq!(t.labels["team"], "b");
        assert_eq!(t.labels["tier"], "x");
        assert_eq!(t.settings.kinds, vec![mcp_listing::Kind::Tools]);
        assert_eq!(t.settings.schedule, c.discovery[0].schedule);
        let EndpointConfig::Http(http) = &t.endpoint else {
            panic!("an HTTP target")
        };
        let HttpSettings {
            headers,
            bearer_token,
            transport,
            max_redirects,
            ..
        } = &http.settings;
        // The module's header, nothing of the static target or global.
        assert_eq!(
            headers,
            &vec![("X-Key".to_string(), Secret::new("module-token-1"))]
        );
        assert!(bearer_token.is_none());
        assert_eq!(*transport, HttpMode::Sse);
        assert_eq!(*max_redirects, 0);
    }
}
