//! One page of one kind: the steps of a list answer, each asking the
//! scenario's [`Behaviour`] (behaviour/scenarios.rs says what each scenario
//! changes): the notifications that go first, where the page starts, its
//! place in the catalogue, the fault, then the result and its body.

use super::behaviour::scenarios::{self, Healthy};
use super::behaviour::{Behaviour, Fault, Listing, Page, Rejected, Start};
use super::catalogue;
use super::engine::{SessionState, VirtualServer, MODERN_TTL_MS};
use super::reply::{error, list_changed, result, Reply, INVALID_PARAMS};
use mcp_listing::kind::Kind;
use serde_json::{json, Map, Value};
use std::time::Duration;

impl VirtualServer {
    pub(super) fn list(
        &self,
        kind: Kind,
        id: &Value,
        params: Option<&Value>,
        session: &mut SessionState,
    ) -> Reply {
        let behaviour = self.behaviour_of(kind);
        let listing = self.listing(kind, behaviour);
        let mut notifications = announcements(behaviour, &listing, session);
        let cursor = params.and_then(|p| p.get("cursor"));
        let start = match read_cursor(behaviour, &listing, cursor) {
            Ok(start) => start,
            Err(message) => {
                return Reply {
                    notifications,
                    ..Reply::json(error(id, INVALID_PARAMS, message))
                }
            }
        };
        let page = place(behaviour, &listing, start);
        let mut delay = Duration::ZERO;
        let fault = if page.faulty() {
            behaviour.fault(&page, id)
        } else {
            Fault::None
        };
        match fault {
            Fault::None => {}
            Fault::Late(late) => delay = late,
            Fault::ListChanged => notifications.push(list_changed(kind)),
            Fault::Instead(body) => {
                return Reply {
                    notifications,
                    delay: Duration::ZERO,
                    body,
                    http_status: 200,
                }
            }
        }
        let answer = result(id, Value::Object(page_result(behaviour, &page)));
        Reply {
            notifications,
            delay,
            body: behaviour.body(&page, answer),
            http_status: 200,
        }
    }

    /// The scenario plays on the kinds `--kinds` names; the others are healthy.
    fn behaviour_of(&self, kind: Kind) -> &'static dyn Behaviour {
        if self.cfg.faulty(kind) {
            scenarios::of(self.cfg.scenario)
        } else {
            &Healthy
        }
    }

    fn listing(&self, kind: Kind, behaviour: &dyn Behaviour) -> Listing<'_> {
        Listing {
            cfg: &self.cfg,
            kind,
            epoch: if behaviour.changes() {
                self.epoch(kind)
            } else {
                0
            },
            now_ms: u32::try_from(self.started.elapsed().as_millis()).unwrap_or(u32::MAX),
            key: &self.key,
            old_key: &self.old_key,
            counters: &self.counters,
        }
    }
}

/// The `list_changed` notifications written before the answer: a change of
/// the catalogue this session was not told about (with `--notify`), and the
/// scenario's storm. 2026-07-28 delivers list changes only through
/// `subscriptions/listen`, so there are none before its answers.
fn announcements(
    behaviour: &dyn Behaviour,
    listing: &Listing,
    session: &mut SessionState,
) -> Vec<Value> {
    let cfg = listing.cfg;
    let mut notifications = Vec::new();
    if cfg.modern {
        return notifications;
    }
    let told = &mut session.notified[listing.kind];
    if behaviour.changes() && cfg.change.notify && *told < listing.epoch {
        *told = listing.epoch;
        notifications.push(list_changed(listing.kind));
    }
    if behaviour.storms() {
        notifications.push(list_changed(listing.kind));
    }
    notifications
}

/// Where the page starts: the first page without a cursor, the scenario's
/// own reading of a cursor, else the offset a signed cursor carries.
fn read_cursor(
    behaviour: &dyn Behaviour,
    listing: &Listing,
    cursor: Option<&Value>,
) -> Result<Start, Rejected> {
    let cursor = match cursor {
        None | Some(Value::Null) => return Ok(listing.start_at(0)),
        Some(cursor) => cursor,
    };
    if let Some(start) = behaviour.own_cursor(listing, cursor) {
        return start;
    }
    let Value::String(text) = cursor else {
        return Err("Invalid params: cursor must be a string");
    };
    match listing.key.decode(text).filter(|c| c.kind == listing.kind) {
        Some(signed) => Ok(Start {
            offset: behaviour.signed_cursor(listing, &signed)?,
            generation: signed.generation,
            after_restart: false,
        }),
        None => behaviour.unknown_cursor(listing),
    }
}

/// The page's place in the catalogue: its length now, the page size, and
/// so the page's number.
fn place<'a>(behaviour: &dyn Behaviour, listing: &'a Listing<'a>, start: Start) -> Page<'a> {
    let cfg = listing.cfg;
    let len = behaviour.catalogue_len(cfg, listing.epoch);
    let size = behaviour.page_size(cfg, len);
    let stride = behaviour.stride(cfg, size);
    Page {
        listing,
        number: start.offset / stride + 1,
        start,
        len,
        size,
        stride,
    }
}

/// The list result: the page's items, `nextCursor`, and in modern mode the
/// result type, cache hints and server info, as the scenario shapes them.
/// A listing whose last page this is counts as completed.
fn page_result(behaviour: &dyn Behaviour, page: &Page) -> Map<String, Value> {
    let order = catalogue::order(page.len, behaviour.order_seed(page));
    let positions = behaviour.positions(page);
    let items: Vec<Value> = positions
        .iter()
        .map(|&p| behaviour.item(page, order[p as usize], positions.len()))
        .collect();
    let next = behaviour.next_cursor(page);
    if next.ends_listing() {
        page.listing.counters(|c| c.completed += 1);
    }

    let mut res = Map::new();
    res.insert(page.kind().array_field().into(), Value::Array(items));
    if let Some(cursor) = next.field() {
        res.insert("nextCursor".into(), cursor);
    }
    if page.cfg().modern {
        res.insert("resultType".into(), "complete".into());
        res.insert("ttlMs".into(), json!(MODERN_TTL_MS));
        res.insert("cacheScope".into(), "public".into());
        res.insert(
            "_meta".into(),
            json!({"io.modelcontextprotocol/serverInfo": VirtualServer::server_info(page.cfg().scenario)}),
        );
    }
    behaviour.reshape(page, &mut res);
    res
}
