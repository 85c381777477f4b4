//! One page of one kind under the server's scenario: where the page
//! starts, which items it holds, what `nextCursor` says, and the fault.

use super::catalogue;
use super::config::Scenario;
use super::cursor::CursorData;
use super::engine::{
    error, kind_index, list_changed, result, Body, Reply, SessionState, VirtualServer,
    INVALID_PARAMS, MODERN_TTL_MS,
};
use bytes::Bytes;
use mcp_listing::kind::Kind;
use serde_json::{json, Map, Value};

/// The constant cursor of protocol-2026 that keeps bringing new items.
pub const TAIL_CURSOR: &str = "tail";

enum Next {
    Absent,
    Null,
    Str(String),
    Number(u32),
}

impl VirtualServer {
    pub(super) fn list(
        &self,
        kind: Kind,
        id: &Value,
        params: Option<&Value>,
        session: &mut SessionState,
    ) -> Reply {
        let cfg = &self.cfg;
        let scenario = if cfg.faulty(kind) {
            cfg.scenario
        } else {
            Scenario::Healthy
        };
        let ki = kind_index(kind);
        let now_ms = u32::try_from(self.started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let changes = scenario.changes();
        let epoch = if changes { self.epoch(kind) } else { 0 };

        // 2026-07-28 delivers list changes only through subscriptions/listen,
        // which the simulator does not serve: no notifications there.
        let mut notifications = Vec::new();
        if changes && cfg.notify && !cfg.modern && session.notified[ki] < epoch {
            session.notified[ki] = epoch;
            notifications.push(list_changed(kind));
        }
        if scenario == Scenario::ListChangedStorm && !cfg.modern {
            notifications.push(list_changed(kind));
        }
        let invalid = |message: &str| Reply {
            notifications: notifications.clone(),
            ..Reply::json(error(id, INVALID_PARAMS, message))
        };

        let k = cfg.page_size;
        // Where this page starts, the catalogue generation it reads, and
        // whether it answers an unrecognised cursor (silent-restart).
        let (offset, generation, restart_answer) = match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => (0, epoch, false),
            Some(Value::String(s)) if scenario == Scenario::Protocol2026 && s.is_empty() => {
                (k, epoch, false)
            }
            Some(Value::String(s)) if scenario == Scenario::Protocol2026 && s == TAIL_CURSOR => {
                (self.lock_kinds()[ki].tail, epoch, false)
            }
            Some(Value::String(s)) if scenario == Scenario::BlankCursor && s.is_empty() => {
                (0, epoch, false)
            }
            Some(Value::String(s)) => match self.key.decode(s).filter(|c| c.kind == kind) {
                Some(c) => {
                    if scenario == Scenario::StaleCursor {
                        if let Some(age) = cfg.stale_age {
                            if u128::from(now_ms.saturating_sub(c.issued_ms)) > age.as_millis() {
                                return invalid("Invalid params: cursor expired");
                            }
                        } else {
                            let mut kinds = self.lock_kinds();
                            if kinds[ki].stale_left > 0 {
                                kinds[ki].stale_left -= 1;
                                return invalid("Invalid params: cursor expired");
                            }
                        }
                    }
                    let mut offset = c.offset;
                    if scenario == Scenario::UnstableCursor {
                        // From the third time a cursor is presented, its
                        // page starts one item later.
                        let mut kinds = self.lock_kinds();
                        let n = kinds[ki].served.entry(c.offset).or_insert(0);
                        *n = n.saturating_add(1);
                        if *n >= 3 {
                            offset = offset.saturating_add(1);
                        }
                    }
                    (offset, c.generation, false)
                }
                None if scenario == Scenario::SilentRestart => (0, epoch, true),
                // Past the end: an empty page without nextCursor.
                None if scenario == Scenario::AcceptAnyCursor => (1 << 30, epoch, false),
                None => return invalid("Invalid params: unknown cursor"),
            },
            Some(Value::Number(n)) if scenario == Scenario::NumberCursor => {
                match n.as_u64().and_then(|n| u32::try_from(n).ok()) {
                    Some(o) => (o, epoch, false),
                    None => return invalid("Invalid params: bad cursor"),
                }
            }
            Some(_) => return invalid("Invalid params: cursor must be a string"),
        };

        let len = match scenario {
            Scenario::Shrink => cfg
                .items
                .saturating_sub(cfg.change_by.saturating_mul(epoch)),
            Scenario::Grow => cfg
                .items
                .saturating_add(cfg.change_by.saturating_mul(epoch)),
            _ => cfg.items,
        };
        let page_size = if scenario == Scenario::SinglePage {
            len.max(1)
        } else {
            k
        };
        let stride = if scenario == Scenario::Overlap {
            (k - cfg.overlap).max(1)
        } else {
            page_size
        };
        let page_no = offset / stride + 1;
        let fault_here = page_no == cfg.page;
        if scenario == Scenario::StrayListChanged && fault_here {
            notifications.push(list_changed(kind));
        }

        let mut reply_delay = std::time::Duration::ZERO;
        if fault_here {
            match scenario {
                Scenario::SlowPage => reply_delay = cfg.delay,
                Scenario::Hang => return self.body_reply(notifications, Body::Hang),
                Scenario::Crash => return self.body_reply(notifications, Body::Crash),
                Scenario::RpcError => {
                    return Reply {
                        notifications,
                        ..Reply::json(error(id, cfg.code, "Simulated server error"))
                    }
                }
                Scenario::Malformed => {
                    let text = format!(
                        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"{}\":[{{\"{}\":",
                        kind.array_field(),
                        kind.identity_key()
                    );
                    return self.body_reply(notifications, Body::Raw(Bytes::from(text)));
                }
                _ => {}
            }
        }

        // The items of this page.
        let order = catalogue::order(
            len,
            (scenario == Scenario::Reorder).then(|| shuffle_seed(cfg.seed, kind, generation)),
        );
        let end = offset.saturating_add(page_size);
        let positions: Vec<u32> = if scenario == Scenario::Endless {
            if len == 0 {
                Vec::new()
            } else {
                (offset..end).map(|i| i % len).collect()
            }
        } else {
            (offset.min(len)..end.min(len)).collect()
        };
        let pad = if scenario == Scenario::Oversize && fault_here {
            cfg.size_bytes / positions.len().max(1)
        } else {
            0
        };
        let items: Vec<Value> = positions
            .iter()
            .map(|&p| {
                let n = order[p as usize];
                let with_key = !(scenario == Scenario::MissingKeys && n % cfg.every == 0);
                let mut item = catalogue::item(kind, n, with_key, pad);
                if n == 1 && generation >= 1 {
                    match scenario {
                        Scenario::AddRequiredParam => {
                            catalogue::add_required_param(kind, &mut item)
                        }
                        Scenario::EditDescription => catalogue::edit_description(kind, &mut item),
                        _ => {}
                    }
                }
                item
            })
            .collect();

        let more = end < len;
        let enc = |offset: u32| {
            self.key.encode(CursorData {
                kind,
                offset,
                generation,
                issued_ms: if cfg.stale_age.is_some() { now_ms } else { 0 },
            })
        };
        let next = match scenario {
            Scenario::Endless => Next::Str(enc(end)),
            Scenario::SinglePage => Next::Absent,
            Scenario::Truncate if more && end.saturating_add(k) < len => Next::Str(enc(end)),
            Scenario::Truncate => Next::Absent,
            Scenario::Overlap if more => Next::Str(enc(offset + stride)),
            Scenario::RepeatCursor if page_no >= 2 => Next::Str(enc(offset)),
            Scenario::Cycle if page_no == 2 => Next::Str(enc(end)),
            Scenario::Cycle if page_no >= 3 => Next::Str(enc(k)),
            Scenario::BlankCursor => Next::Str(String::new()),
            Scenario::NullCursor if !more => Next::Null,
            Scenario::NumberCursor if more => Next::Number(end),
            Scenario::NumberCursor => Next::Absent,
            Scenario::Protocol2026 if more => {
                self.lock_kinds()[ki].tail = end;
                Next::Str(if offset == 0 {
                    String::new()
                } else {
                    TAIL_CURSOR.to_string()
                })
            }
            Scenario::SilentRestart if more => {
                let signer = if page_no + 1 == cfg.page.max(2) && !restart_answer {
                    &self.old_key
                } else {
                    &self.key
                };
                Next::Str(signer.encode(CursorData {
                    kind,
                    offset: end,
                    generation,
                    issued_ms: 0,
                }))
            }
            _ if more => Next::Str(enc(end)),
            _ => Next::Absent,
        };
        if matches!(next, Next::Absent | Next::Null) {
            self.lock_kinds()[ki].completed += 1;
        }

        let mut res = Map::new();
        if scenario == Scenario::WrongShape && fault_here {
            let by_key: Map<String, Value> = items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("item-{i}"), v))
                .collect();
            res.insert(kind.array_field().into(), Value::Object(by_key));
        } else {
            res.insert(kind.array_field().into(), Value::Array(items));
        }
        match next {
            Next::Absent => {}
            Next::Null => {
                res.insert("nextCursor".into(), Value::Null);
            }
            Next::Str(s) => {
                res.insert("nextCursor".into(), Value::String(s));
            }
            Next::Number(n) => {
                res.insert("nextCursor".into(), json!(n));
            }
        }
        if cfg.modern {
            if scenario != Scenario::NoResultType {
                res.insert("resultType".into(), "complete".into());
            }
            if !(scenario == Scenario::NoCacheHints && fault_here) {
                res.insert("ttlMs".into(), json!(MODERN_TTL_MS));
                let scope = if scenario == Scenario::MixedCacheScope && fault_here {
                    "private"
                } else {
                    "public"
                };
                res.insert("cacheScope".into(), scope.into());
            }
            res.insert(
                "_meta".into(),
                json!({"io.modelcontextprotocol/serverInfo": Self::server_info()}),
            );
        }
        if scenario == Scenario::BadResultType && fault_here {
            res.insert("resultType".into(), "input_required".into());
        }
        let answer = result(id, Value::Object(res));
        let body = if scenario == Scenario::Drip && fault_here {
            Body::Drip {
                bytes: Bytes::from(answer.to_string()),
                chunk: cfg.chunk_bytes,
                every: cfg.delay,
            }
        } else {
            Body::Json(answer)
        };
        Reply {
            notifications,
            delay: reply_delay,
            body,
            http_status: 200,
        }
    }

    fn body_reply(&self, notifications: Vec<Value>, body: Body) -> Reply {
        Reply {
            notifications,
            delay: std::time::Duration::ZERO,
            body,
            http_status: 200,
        }
    }
}

fn shuffle_seed(seed: u64, kind: Kind, generation: u32) -> u64 {
    seed.wrapping_mul(0x100_0000_01B3)
        ^ ((kind_index(kind) as u64) << 40)
        ^ u64::from(generation).wrapping_mul(0x9E37_79B9)
}
