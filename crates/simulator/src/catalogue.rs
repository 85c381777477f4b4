//! The simulated catalogue: deterministic item names per kind and the
//! order a listing serves them in. Items are generated on demand, so a
//! virtual server costs no memory per item.

use mcp_listing::kind::Kind;
use serde_json::{json, Map, Value};

/// The identity key of item `n` (1-based) of `kind`: `tool-001`,
/// `prompt-001`, `sim://resources/001`, `sim://templates/001/{id}`.
pub fn identity(kind: Kind, n: u32) -> String {
    match kind {
        Kind::Tools => format!("tool-{n:03}"),
        Kind::Prompts => format!("prompt-{n:03}"),
        Kind::Resources => format!("sim://resources/{n:03}"),
        Kind::ResourceTemplates => format!("sim://templates/{n:03}/{{id}}"),
    }
}

/// The JSON item `n` of `kind`. `with_key: false` leaves the identity key
/// out (missing-keys); `pad` adds a description of that many bytes
/// (oversize).
pub fn item(kind: Kind, n: u32, with_key: bool, pad: usize) -> Value {
    let mut m = Map::new();
    if with_key {
        m.insert(kind.identity_key().into(), identity(kind, n).into());
    }
    match kind {
        Kind::Tools => {
            m.insert("description".into(), format!("Simulated tool {n}").into());
            m.insert(
                "inputSchema".into(),
                json!({"type": "object", "properties": {}}),
            );
        }
        Kind::Prompts => {
            m.insert("description".into(), format!("Simulated prompt {n}").into());
        }
        Kind::Resources => {
            m.insert("name".into(), format!("resource-{n:03}").into());
            m.insert("mimeType".into(), "text/plain".into());
        }
        Kind::ResourceTemplates => {
            m.insert("name".into(), format!("template-{n:03}").into());
        }
    }
    if pad > 0 {
        m.insert("description".into(), "x".repeat(pad).into());
    }
    Value::Object(m)
}

/// add-required-param: tools get a required `region` property, prompts a
/// required `region` argument; resources and templates are left alone.
pub fn add_required_param(kind: Kind, item: &mut Value) {
    match kind {
        Kind::Tools => {
            item["inputSchema"] = json!({
                "type": "object",
                "properties": {"region": {"type": "string"}},
                "required": ["region"],
            });
        }
        Kind::Prompts => {
            item["arguments"] = json!([{"name": "region", "required": true}]);
        }
        Kind::Resources | Kind::ResourceTemplates => {}
    }
}

/// edit-description: the field callers read about the item changes words.
pub fn edit_description(kind: Kind, item: &mut Value) {
    let field = match kind {
        Kind::Tools | Kind::Prompts => "description",
        Kind::Resources | Kind::ResourceTemplates => "name",
    };
    let old = item
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    item[field] = Value::from(format!("{old} (edited)"));
}

/// Item numbers 1..=len, shuffled by `shuffle_seed` when given. A tiny
/// splitmix64 Fisher-Yates, so orders never change with a crate upgrade.
pub fn order(len: u32, shuffle_seed: Option<u64>) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=len).collect();
    if let Some(seed) = shuffle_seed {
        let mut state = seed;
        for i in (1..v.len()).rev() {
            let j = (splitmix64(&mut state) % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
    }
    v
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_documented_scheme() {
        assert_eq!(identity(Kind::Tools, 1), "tool-001");
        assert_eq!(identity(Kind::Prompts, 20), "prompt-020");
        assert_eq!(identity(Kind::Resources, 3), "sim://resources/003");
        assert_eq!(
            identity(Kind::ResourceTemplates, 4),
            "sim://templates/004/{id}"
        );
        assert_eq!(item(Kind::Resources, 2, true, 0)["name"], "resource-002");
        assert!(item(Kind::Tools, 2, false, 0).get("name").is_none());
    }

    #[test]
    fn shuffles_are_permutations_and_seeded() {
        let a = order(20, Some(7));
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, order(20, None));
        assert_eq!(a, order(20, Some(7)));
        assert_ne!(a, order(20, Some(8)));
    }
}
