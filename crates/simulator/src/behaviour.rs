//! What a scenario may change about the answers of a server: the hooks of a
//! [`Behaviour`], each defaulting to what a healthy server does, and what a
//! hook sees of the request it shapes. A list request asks them in this
//! order (pages.rs): the notifications before the answer, where the page
//! starts (the cursor), how the catalogue is cut into pages, the fault,
//! the items, `nextCursor`, the result, the body.
//!
//! behaviour/scenarios.rs implements, per scenario, only the hooks it changes.

pub mod scenarios;

use super::catalogue;
use super::config::ServerConfig;
use super::cursor::{CursorData, CursorKey};
use super::per_kind::PerKind;
use super::reply::Body;
use mcp_listing::kind::Kind;
use serde_json::{Map, Value};
use std::sync::Mutex;
use std::time::Duration;

/// The answer to a cursor a scenario does not accept: an `Invalid params`
/// message (the code is -32602).
pub type Rejected = &'static str;

/// How one scenario misbehaves. Every hook has the healthy server's answer
/// as its default; a scenario overrides the ones it changes.
pub trait Behaviour: Sync {
    /// Does the catalogue change with the epoch (completed listings or
    /// uptime), and so may announce it with `--notify`?
    fn changes(&self) -> bool {
        false
    }

    /// The `serverInfo.name` this server reports.
    fn server_name(&self) -> &'static str {
        crate::engine::SERVER_NAME
    }

    /// Do `initialize` and `server/discover` advertise `listChanged`?
    fn advertises_list_changed(&self) -> bool {
        true
    }

    /// Has a legacy HTTP session that answered `list_requests` list
    /// requests expired before its next one?
    fn session_expired(&self, _cfg: &ServerConfig, _list_requests: u32) -> bool {
        false
    }

    /// A `list_changed` before every answer (legacy protocols only)?
    fn storms(&self) -> bool {
        false
    }

    /// Where the page starts for a cursor this scenario reads its own way
    /// (`""`, a constant, a number); `None` leaves it to the signed cursor.
    fn own_cursor(&self, _listing: &Listing, _cursor: &Value) -> Option<Result<Start, Rejected>> {
        None
    }

    /// The offset a cursor this server signed continues at.
    fn signed_cursor(&self, _listing: &Listing, cursor: &CursorData) -> Result<u32, Rejected> {
        Ok(cursor.offset)
    }

    /// Where the page starts for a string cursor this server did not sign.
    fn unknown_cursor(&self, _listing: &Listing) -> Result<Start, Rejected> {
        Err("Invalid params: unknown cursor")
    }

    /// Items in the catalogue at `epoch`.
    fn catalogue_len(&self, cfg: &ServerConfig, _epoch: u32) -> u32 {
        cfg.items
    }

    /// Items on a page of a catalogue of `len` items.
    fn page_size(&self, cfg: &ServerConfig, _len: u32) -> u32 {
        cfg.page_size
    }

    /// Items from the start of one page to the start of the next.
    fn stride(&self, _cfg: &ServerConfig, page_size: u32) -> u32 {
        page_size
    }

    /// What page `--page` does before (or instead of) its answer; asked
    /// of that page only.
    fn fault(&self, _page: &Page, _id: &Value) -> Fault {
        Fault::None
    }

    /// The catalogue change epoch this scenario keeps itself in the kind's
    /// state; `None` leaves it to `--after-listings` / `--after-seconds`.
    fn own_epoch(&self, _state: &KindState) -> Option<u32> {
        None
    }

    /// Seeds a shuffled catalogue order; `None` is number order.
    fn order_seed(&self, _page: &Page) -> Option<u64> {
        None
    }

    /// The catalogue positions the page holds.
    fn positions(&self, page: &Page) -> Vec<u32> {
        let len = page.len;
        (page.start.offset.min(len)..page.end().min(len)).collect()
    }

    /// Item number `n`, one of `count` on the page.
    fn item(&self, page: &Page, n: u32, _count: usize) -> Value {
        page.item(n)
    }

    /// What the page says about the next one.
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        page.usual_next()
    }

    /// Changes to the result a healthy server sends.
    fn reshape(&self, _page: &Page, _result: &mut Map<String, Value>) {}

    /// The body that carries the answer.
    fn body(&self, _page: &Page, answer: Value) -> Body {
        Body::Json(answer)
    }
}

/// What a page fault does before the answer.
pub enum Fault {
    None,
    /// Answer this late (slow-page).
    Late(Duration),
    /// A `list_changed` goes first (stray-list-changed: one the server
    /// did not advertise).
    ListChanged,
    /// Send this instead of the page.
    Instead(Body),
}

/// What a page says about the next one.
pub enum NextCursorReply {
    Absent,
    Null,
    Str(String),
    Number(u32),
}

impl NextCursorReply {
    /// Does a client stop here (the listing is complete)?
    pub fn ends_listing(&self) -> bool {
        matches!(self, NextCursorReply::Absent | NextCursorReply::Null)
    }

    /// The `nextCursor` field of the result, if it has one.
    pub fn field(self) -> Option<Value> {
        match self {
            NextCursorReply::Absent => None,
            NextCursorReply::Null => Some(Value::Null),
            NextCursorReply::Str(s) => Some(Value::String(s)),
            NextCursorReply::Number(n) => Some(Value::from(n)),
        }
    }
}

/// The per-kind state scenarios keep, shared by every session.
#[derive(Debug, Default)]
pub struct KindState {
    /// Listings served to their last page (drives shrink/grow/reorder).
    pub completed: u32,
    /// stale-cursor: rejections still to hand out.
    pub stale_left: u32,
    /// protocol-2026: where the constant `tail` cursor continues.
    pub tail: u32,
    /// unstable-cursor: times each continuation offset was served (at
    /// most one entry per page of the catalogue).
    pub served: std::collections::HashMap<u32, u32>,
    /// list-changed-mid-walk: changes announced so far (0 or 1).
    pub mid_walk_changes: u32,
}

/// [`KindState`] of every kind of one server.
pub struct Counters(Mutex<PerKind<KindState>>);

impl Counters {
    pub fn new(cfg: &ServerConfig) -> Counters {
        Counters(Mutex::new(PerKind::from_fn(|_| KindState {
            stale_left: cfg.stale.times,
            ..KindState::default()
        })))
    }

    /// Run `f` on the state of `kind`, locked.
    pub fn with<R>(&self, kind: Kind, f: impl FnOnce(&mut KindState) -> R) -> R {
        // A panic while holding the lock cannot leave the counters
        // inconsistent in a way that matters here, so recover the guard.
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut all[kind])
    }
}

/// One list request of one kind, as the hooks see it.
pub struct Listing<'a> {
    pub cfg: &'a ServerConfig,
    pub kind: Kind,
    /// The catalogue change epoch of `kind` (0 unless the scenario changes).
    pub epoch: u32,
    /// Milliseconds since the server started: a cursor's issue time.
    pub now_ms: u32,
    /// Signs this server's cursors.
    pub key: &'a CursorKey,
    /// silent-restart: the key of the server's "previous incarnation".
    pub old_key: &'a CursorKey,
    pub counters: &'a Counters,
}

impl Listing<'_> {
    /// Run `f` on the state of this listing's kind.
    pub fn counters<R>(&self, f: impl FnOnce(&mut KindState) -> R) -> R {
        self.counters.with(self.kind, f)
    }

    /// A page at `offset` of the current catalogue.
    pub fn start_at(&self, offset: u32) -> Start {
        Start {
            offset,
            generation: self.epoch,
            after_restart: false,
        }
    }
}

/// Where a page starts.
pub struct Start {
    pub offset: u32,
    /// The catalogue generation the page reads: its cursor's, else the
    /// current epoch.
    pub generation: u32,
    /// silent-restart: the page answers a cursor this server did not sign.
    pub after_restart: bool,
}

/// One page, placed in the catalogue.
pub struct Page<'a> {
    pub listing: &'a Listing<'a>,
    pub start: Start,
    /// Items in the catalogue now.
    pub len: u32,
    /// Items on a page.
    pub size: u32,
    /// Items from the start of one page to the start of the next.
    pub stride: u32,
    /// 1-based.
    pub number: u32,
}

impl Page<'_> {
    pub fn cfg(&self) -> &ServerConfig {
        self.listing.cfg
    }

    pub fn kind(&self) -> Kind {
        self.listing.kind
    }

    /// Is this the page `--page` names, the one a page fault hits?
    pub fn faulty(&self) -> bool {
        self.number == self.cfg().fault_at.page
    }

    /// Where the next page starts when pages follow each other.
    pub fn end(&self) -> u32 {
        self.start.offset.saturating_add(self.size)
    }

    /// Does the catalogue go on after this page?
    pub fn more(&self) -> bool {
        self.end() < self.len
    }

    /// The healthy `nextCursor`: to the next page while there is one.
    pub fn usual_next(&self) -> NextCursorReply {
        if self.more() {
            self.cursor_to(self.end())
        } else {
            NextCursorReply::Absent
        }
    }

    /// A cursor to `offset` of this page's catalogue generation.
    pub fn cursor_to(&self, offset: u32) -> NextCursorReply {
        NextCursorReply::Str(self.signed_by(self.listing.key, offset))
    }

    /// `offset` of this page's generation, signed by `key`. The issue time
    /// is kept only when stale-cursor rejects by age.
    pub fn signed_by(&self, key: &CursorKey, offset: u32) -> String {
        let issued_ms = if self.cfg().stale.age.is_some() {
            self.listing.now_ms
        } else {
            0
        };
        key.encode(CursorData {
            kind: self.kind(),
            offset,
            generation: self.start.generation,
            issued_ms,
        })
    }

    /// The healthy item number `n`.
    pub fn item(&self, n: u32) -> Value {
        catalogue::item(self.kind(), n, true, 0)
    }
}
