//! `--echo-header NAME`: a server that echoes what the client sent it (an
//! `Authorization` header, say) into the strings it answers with: item
//! names, URIs and descriptions, server info, error messages. Tests use it
//! to check that no credential we send comes back into anything we keep.

use super::reply::{Body, Reply};
use serde_json::Value;

/// Keys whose string values get the echoed text appended.
const ECHOED_KEYS: [&str; 7] = [
    "name",
    "title",
    "description",
    "version",
    "uri",
    "uriTemplate",
    "message",
];

/// Append ` [echo: VALUE]` to every echoed string in `reply`'s JSON body.
pub fn splice(reply: &mut Reply, value: &str) {
    if let Body::Json(v) = &mut reply.body {
        splice_value(v, &format!(" [echo: {value}]"));
    }
}

fn splice_value(v: &mut Value, suffix: &str) {
    match v {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match child {
                    Value::String(s) if ECHOED_KEYS.contains(&key.as_str()) => s.push_str(suffix),
                    _ => splice_value(child, suffix),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| splice_value(i, suffix)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_descriptions_server_info_and_errors_carry_the_echo() {
        let mut reply = Reply::json(json!({
            "result": {"tools": [{"name": "a", "description": "d", "inputSchema": {"type": "object"}}],
                       "serverInfo": {"name": "s", "version": "1"}, "nextCursor": "c"},
            "error": {"code": 1, "message": "m"}
        }));
        splice(&mut reply, "Bearer t");
        let Body::Json(v) = reply.body else {
            panic!("json body")
        };
        assert_eq!(v["result"]["tools"][0]["name"], "a [echo: Bearer t]");
        assert_eq!(v["result"]["tools"][0]["description"], "d [echo: Bearer t]");
        assert_eq!(v["result"]["serverInfo"]["version"], "1 [echo: Bearer t]");
        assert_eq!(v["error"]["message"], "m [echo: Bearer t]");
        assert_eq!(v["result"]["nextCursor"], "c");
        assert_eq!(v["result"]["tools"][0]["inputSchema"]["type"], "object");
    }
}
