//! Each scenario's behaviour in one place: one type per scenario, in the
//! order of docs/simulator.md, implementing only the hooks it changes. What
//! is not here is in config.rs, which resolves a scenario's knobs
//! (protocol-2026 forces the modern protocol, auth reads its token,
//! slow-page and drip default their delays, stale-cursor by age).

use super::{Behaviour, Fault, KindState, Listing, NextCursorReply, Page, Rejected, Start};
use crate::catalogue;
use crate::config::ServerConfig;
use crate::cursor::CursorData;
use crate::per_kind::kind_index;
use crate::reply::{error, Body};
use crate::scenario::Scenario;
use bytes::Bytes;
use mcp_listing::kind::Kind;
use serde_json::{Map, Value};

/// The behaviour a scenario name stands for.
pub fn of(scenario: Scenario) -> &'static dyn Behaviour {
    match scenario {
        Scenario::Healthy => &Healthy,
        Scenario::SinglePage => &SinglePage,
        Scenario::Truncate => &Truncate,
        Scenario::Shrink => &Resize(u32::saturating_sub),
        Scenario::Grow => &Resize(u32::saturating_add),
        Scenario::Overlap => &Overlap,
        Scenario::RepeatCursor => &RepeatCursor,
        Scenario::Cycle => &Cycle,
        Scenario::Endless => &Endless,
        Scenario::BlankCursor => &BlankCursor,
        Scenario::NullCursor => &NullCursor,
        Scenario::NumberCursor => &NumberCursor,
        Scenario::StaleCursor => &StaleCursor,
        Scenario::SilentRestart => &SilentRestart,
        Scenario::SlowPage => &SlowPage,
        Scenario::Hang => &Hang,
        Scenario::Drip => &Drip,
        Scenario::Oversize => &Oversize,
        Scenario::Malformed => &Malformed,
        Scenario::WrongShape => &WrongShape,
        Scenario::MissingKeys => &MissingKeys,
        Scenario::Crash => &Crash,
        Scenario::RpcError => &ErrorPage,
        Scenario::SessionExpiry => &SessionExpiry,
        Scenario::Auth => &Auth,
        Scenario::ListChangedStorm => &ListChangedStorm,
        Scenario::Reorder => &Reorder,
        Scenario::Protocol2026 => &Protocol2026,
        Scenario::AddRequiredParam => &EditFirstItem(catalogue::add_required_param),
        Scenario::EditDescription => &EditFirstItem(catalogue::edit_description),
        Scenario::AcceptAnyCursor => &AcceptAnyCursor,
        Scenario::UnstableCursor => &UnstableCursor,
        Scenario::NoCacheHints => &NoCacheHints,
        Scenario::MixedCacheScope => &MixedCacheScope,
        Scenario::BadResultType => &BadResultType,
        Scenario::NoResultType => &NoResultType,
        Scenario::StrayListChanged => &StrayListChanged,
        Scenario::ListChangedMidWalk => &ListChangedMidWalk,
        Scenario::HugeCursor => &HugeCursor,
        Scenario::LongNames => &LongNames,
        Scenario::ControlChars => &ControlChars,
        Scenario::HugeResultType => &HugeResultType,
        Scenario::MarkupNames => &MarkupNames,
    }
}

/// Every hook as its default.
pub struct Healthy;
impl Behaviour for Healthy {}

/// The whole catalogue on one page, without `nextCursor`.
pub struct SinglePage;
impl Behaviour for SinglePage {
    fn page_size(&self, _cfg: &ServerConfig, len: u32) -> u32 {
        len.max(1)
    }
    fn next_cursor(&self, _page: &Page) -> NextCursorReply {
        NextCursorReply::Absent
    }
}

/// `nextCursor` disappears one page before the end.
pub struct Truncate;
impl Behaviour for Truncate {
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        if page.more() && page.end().saturating_add(page.cfg().page_size) < page.len {
            page.cursor_to(page.end())
        } else {
            NextCursorReply::Absent
        }
    }
}

/// shrink and grow: the catalogue loses or gains `--change-by` items per
/// epoch (saturating at 0 and `u32::MAX`).
pub struct Resize(fn(u32, u32) -> u32);
impl Behaviour for Resize {
    fn changes(&self) -> bool {
        true
    }
    fn catalogue_len(&self, cfg: &ServerConfig, epoch: u32) -> u32 {
        (self.0)(cfg.items, cfg.change.by.saturating_mul(epoch))
    }
}

/// Consecutive pages share `--overlap` items.
pub struct Overlap;
impl Behaviour for Overlap {
    fn stride(&self, cfg: &ServerConfig, _page_size: u32) -> u32 {
        // config.rs keeps --overlap below --page-size.
        (cfg.page_size - cfg.overlap).max(1)
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        if page.more() {
            page.cursor_to(page.start.offset + page.stride)
        } else {
            NextCursorReply::Absent
        }
    }
}

/// From page 2 on, `nextCursor` is the cursor just sent (A → A).
pub struct RepeatCursor;
impl Behaviour for RepeatCursor {
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        if page.number >= 2 {
            page.cursor_to(page.start.offset)
        } else {
            page.usual_next()
        }
    }
}

/// Page 3 points back to page 2 (A → B → A).
pub struct Cycle;
impl Behaviour for Cycle {
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        match page.number {
            2 => page.cursor_to(page.end()),
            n if n >= 3 => page.cursor_to(page.cfg().page_size),
            _ => page.usual_next(),
        }
    }
}

/// The catalogue repeats forever: every page has a fresh `nextCursor`.
pub struct Endless;
impl Behaviour for Endless {
    fn positions(&self, page: &Page) -> Vec<u32> {
        if page.len == 0 {
            return Vec::new();
        }
        (page.start.offset..page.end())
            .map(|i| i % page.len)
            .collect()
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        page.cursor_to(page.end())
    }
}

/// `nextCursor` is always `""`, which means the first page again.
pub struct BlankCursor;
impl Behaviour for BlankCursor {
    fn own_cursor(&self, listing: &Listing, cursor: &Value) -> Option<Result<Start, Rejected>> {
        (cursor.as_str() == Some("")).then(|| Ok(listing.start_at(0)))
    }
    fn next_cursor(&self, _page: &Page) -> NextCursorReply {
        NextCursorReply::Str(String::new())
    }
}

/// The last page says `"nextCursor": null`.
pub struct NullCursor;
impl Behaviour for NullCursor {
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        if page.more() {
            page.usual_next()
        } else {
            NextCursorReply::Null
        }
    }
}

/// `nextCursor` is a JSON number (the offset), and numbers are accepted back.
pub struct NumberCursor;
impl Behaviour for NumberCursor {
    fn own_cursor(&self, listing: &Listing, cursor: &Value) -> Option<Result<Start, Rejected>> {
        let Value::Number(n) = cursor else {
            return None;
        };
        let offset = n.as_u64().and_then(|n| u32::try_from(n).ok());
        Some(
            offset
                .map(|o| listing.start_at(o))
                .ok_or("Invalid params: bad cursor"),
        )
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        if page.more() {
            NextCursorReply::Number(page.end())
        } else {
            NextCursorReply::Absent
        }
    }
}

/// Continuations are rejected as expired: the first `--times` of them, or
/// (with `--delay-ms`) every cursor older than that.
pub struct StaleCursor;
impl Behaviour for StaleCursor {
    fn signed_cursor(&self, listing: &Listing, cursor: &CursorData) -> Result<u32, Rejected> {
        const EXPIRED: Rejected = "Invalid params: cursor expired";
        if let Some(age) = listing.cfg.stale.age {
            let held = listing.now_ms.saturating_sub(cursor.issued_ms);
            if u128::from(held) > age.as_millis() {
                return Err(EXPIRED);
            }
        } else {
            let rejected = listing.counters(|c| {
                let reject = c.stale_left > 0;
                if reject {
                    c.stale_left -= 1;
                }
                reject
            });
            if rejected {
                return Err(EXPIRED);
            }
        }
        Ok(cursor.offset)
    }
}

/// The server "restarts" before page `--page`: that page's cursor is signed
/// by the previous incarnation, and a cursor it does not know starts over
/// at the first page instead of -32602.
pub struct SilentRestart;
impl Behaviour for SilentRestart {
    fn unknown_cursor(&self, listing: &Listing) -> Result<Start, Rejected> {
        Ok(Start {
            after_restart: true,
            ..listing.start_at(0)
        })
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        if !page.more() {
            return NextCursorReply::Absent;
        }
        let before_restart =
            page.number + 1 == page.cfg().fault_at.page.max(2) && !page.start.after_restart;
        let key = if before_restart {
            page.listing.old_key
        } else {
            page.listing.key
        };
        NextCursorReply::Str(page.signed_by(key, page.end()))
    }
}

/// Page `--page` is answered `--delay-ms` late.
pub struct SlowPage;
impl Behaviour for SlowPage {
    fn fault(&self, page: &Page, _id: &Value) -> Fault {
        Fault::Late(page.cfg().delay)
    }
}

/// Page `--page` is never answered.
pub struct Hang;
impl Behaviour for Hang {
    fn fault(&self, _page: &Page, _id: &Value) -> Fault {
        Fault::Instead(Body::Hang)
    }
}

/// Page `--page` arrives `--chunk-bytes` at a time, `--delay-ms` apart.
pub struct Drip;
impl Behaviour for Drip {
    fn body(&self, page: &Page, answer: Value) -> Body {
        if !page.faulty() {
            return Body::Json(answer);
        }
        Body::Drip {
            bytes: Bytes::from(answer.to_string()),
            chunk: page.cfg().chunk_bytes,
            every: page.cfg().delay,
        }
    }
}

/// Page `--page` is `--size-mib` large: its items carry padding.
pub struct Oversize;
impl Behaviour for Oversize {
    fn item(&self, page: &Page, n: u32, count: usize) -> Value {
        if !page.faulty() {
            return page.item(n);
        }
        let pad = page.cfg().size_bytes / count.max(1);
        catalogue::item(page.kind(), n, true, pad)
    }
}

/// Page `--page` is cut off in the middle of its first item.
pub struct Malformed;
impl Behaviour for Malformed {
    fn fault(&self, page: &Page, id: &Value) -> Fault {
        let kind = page.kind();
        let text = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"{}\":[{{\"{}\":",
            kind.array_field(),
            kind.identity_key()
        );
        Fault::Instead(Body::Raw(Bytes::from(text)))
    }
}

/// Page `--page` holds its items in an object keyed `item-N`, not an array.
pub struct WrongShape;
impl Behaviour for WrongShape {
    fn reshape(&self, page: &Page, result: &mut Map<String, Value>) {
        if !page.faulty() {
            return;
        }
        let Some(Value::Array(items)) = result.get_mut(page.kind().array_field()) else {
            return;
        };
        let by_key: Map<String, Value> = std::mem::take(items)
            .into_iter()
            .enumerate()
            .map(|(i, v)| (format!("item-{i}"), v))
            .collect();
        result.insert(page.kind().array_field().into(), Value::Object(by_key));
    }
}

/// Every `--every`-th item lacks its identity key.
pub struct MissingKeys;
impl Behaviour for MissingKeys {
    fn item(&self, page: &Page, n: u32, _count: usize) -> Value {
        catalogue::item(page.kind(), n, n % page.cfg().every != 0, 0)
    }
}

/// Page `--page` kills the server: stdio exits, HTTP cuts the connection.
pub struct Crash;
impl Behaviour for Crash {
    fn fault(&self, _page: &Page, _id: &Value) -> Fault {
        Fault::Instead(Body::Crash)
    }
}

/// Page `--page` is a JSON-RPC error with `--code`.
pub struct ErrorPage;
impl Behaviour for ErrorPage {
    fn fault(&self, page: &Page, id: &Value) -> Fault {
        let answer = error(id, page.cfg().code, "Simulated server error");
        Fault::Instead(Body::Json(answer))
    }
}

/// A legacy HTTP session expires (404) after `--expire-after` list requests.
pub struct SessionExpiry;
impl Behaviour for SessionExpiry {
    fn session_expired(&self, cfg: &ServerConfig, list_requests: u32) -> bool {
        list_requests >= cfg.expire_after
    }
}

/// Pages are healthy; HTTP requests without the bearer token config.rs
/// read get 401 (http.rs, `check_auth`).
pub struct Auth;
impl Behaviour for Auth {}

/// A `list_changed` before every answer.
pub struct ListChangedStorm;
impl Behaviour for ListChangedStorm {
    fn storms(&self) -> bool {
        true
    }
}

/// Each epoch serves the catalogue in another order; a walk keeps the
/// order of the generation its cursor carries.
pub struct Reorder;
impl Behaviour for Reorder {
    fn changes(&self) -> bool {
        true
    }
    fn order_seed(&self, page: &Page) -> Option<u64> {
        Some(shuffle_seed(
            page.cfg().seed,
            page.kind(),
            page.start.generation,
        ))
    }
}

/// Protocol 2026-07-28 pagination: the first page's `nextCursor` is `""`,
/// later ones the constant `tail`, which continues where the last page of
/// any walk ended.
pub struct Protocol2026;
impl Behaviour for Protocol2026 {
    fn own_cursor(&self, listing: &Listing, cursor: &Value) -> Option<Result<Start, Rejected>> {
        match cursor.as_str()? {
            "" => Some(Ok(listing.start_at(listing.cfg.page_size))),
            TAIL_CURSOR => Some(Ok(listing.start_at(listing.counters(|c| c.tail)))),
            _ => None,
        }
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        if !page.more() {
            return NextCursorReply::Absent;
        }
        page.listing.counters(|c| c.tail = page.end());
        NextCursorReply::Str(if page.start.offset == 0 {
            String::new()
        } else {
            TAIL_CURSOR.to_string()
        })
    }
}

/// The constant cursor of protocol-2026 that keeps bringing new items.
pub const TAIL_CURSOR: &str = "tail";

/// add-required-param and edit-description: from the first change on,
/// item 1 is edited (a new required parameter, or reworded).
pub struct EditFirstItem(fn(Kind, &mut Value));
impl Behaviour for EditFirstItem {
    fn changes(&self) -> bool {
        true
    }
    fn item(&self, page: &Page, n: u32, _count: usize) -> Value {
        let mut item = page.item(n);
        if n == 1 && page.start.generation >= 1 {
            (self.0)(page.kind(), &mut item);
        }
        item
    }
}

/// A cursor this server did not sign gets an empty last page, not -32602.
pub struct AcceptAnyCursor;
impl Behaviour for AcceptAnyCursor {
    fn unknown_cursor(&self, listing: &Listing) -> Result<Start, Rejected> {
        // Past the end: an empty page without nextCursor.
        Ok(listing.start_at(1 << 30))
    }
}

/// From the third time a cursor is presented, its page starts one item later.
pub struct UnstableCursor;
impl Behaviour for UnstableCursor {
    fn signed_cursor(&self, listing: &Listing, cursor: &CursorData) -> Result<u32, Rejected> {
        let presented = listing.counters(|c| {
            let n = c.served.entry(cursor.offset).or_insert(0);
            *n = n.saturating_add(1);
            *n
        });
        Ok(if presented >= 3 {
            cursor.offset.saturating_add(1)
        } else {
            cursor.offset
        })
    }
}

/// Modern: page `--page` has neither `ttlMs` nor `cacheScope`.
pub struct NoCacheHints;
impl Behaviour for NoCacheHints {
    fn reshape(&self, page: &Page, result: &mut Map<String, Value>) {
        if page.cfg().modern && page.faulty() {
            result.remove("ttlMs");
            result.remove("cacheScope");
        }
    }
}

/// Modern: page `--page` says `"cacheScope": "private"`.
pub struct MixedCacheScope;
impl Behaviour for MixedCacheScope {
    fn reshape(&self, page: &Page, result: &mut Map<String, Value>) {
        if page.cfg().modern && page.faulty() {
            result.insert("cacheScope".into(), "private".into());
        }
    }
}

/// Page `--page` says `"resultType": "input_required"`.
pub struct BadResultType;
impl Behaviour for BadResultType {
    fn reshape(&self, page: &Page, result: &mut Map<String, Value>) {
        if page.faulty() {
            result.insert("resultType".into(), "input_required".into());
        }
    }
}

/// Modern: list results lack `resultType`.
pub struct NoResultType;
impl Behaviour for NoResultType {
    fn reshape(&self, page: &Page, result: &mut Map<String, Value>) {
        if page.cfg().modern {
            result.remove("resultType");
        }
    }
}

/// A `list_changed` before page `--page`, though the capabilities do not
/// advertise `listChanged`.
pub struct StrayListChanged;
impl Behaviour for StrayListChanged {
    fn advertises_list_changed(&self) -> bool {
        false
    }
    fn fault(&self, _page: &Page, _id: &Value) -> Fault {
        Fault::ListChanged
    }
}

/// The first time page `--page` is served (per kind, per server), its
/// answer is preceded by `notifications/<kind>/list_changed` and the
/// catalogue gains `--change-by` items: a walk that goes on with its cursor
/// crosses two catalogues. Later listings see the grown catalogue, quietly.
pub struct ListChangedMidWalk;
impl Behaviour for ListChangedMidWalk {
    fn changes(&self) -> bool {
        true
    }
    fn own_epoch(&self, state: &KindState) -> Option<u32> {
        Some(state.mid_walk_changes)
    }
    fn catalogue_len(&self, cfg: &ServerConfig, epoch: u32) -> u32 {
        cfg.items
            .saturating_add(cfg.change.by.saturating_mul(epoch.min(1)))
    }
    fn fault(&self, page: &Page, _id: &Value) -> Fault {
        let first = page.listing.counters(|c| {
            let first = c.mid_walk_changes == 0;
            c.mid_walk_changes = 1;
            first
        });
        if first {
            Fault::ListChanged
        } else {
            Fault::None
        }
    }
}

/// The catalogue repeats forever (as endless) and every `nextCursor` is a
/// fresh signed cursor padded to `--size-mib`: a client that keeps the
/// cursors it sent keeps a MiB per page.
pub struct HugeCursor;
impl Behaviour for HugeCursor {
    fn own_cursor(&self, listing: &Listing, cursor: &Value) -> Option<Result<Start, Rejected>> {
        let (signed, _padding) = cursor.as_str()?.split_once(CURSOR_PADDING)?;
        let c = listing
            .key
            .decode(signed)
            .filter(|c| c.kind == listing.kind)?;
        Some(Ok(Start {
            offset: c.offset,
            generation: c.generation,
            after_restart: false,
        }))
    }
    fn positions(&self, page: &Page) -> Vec<u32> {
        Endless.positions(page)
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        let signed = page.signed_by(page.listing.key, page.end());
        let pad = page.cfg().size_bytes.saturating_sub(signed.len() + 1);
        NextCursorReply::Str(format!("{signed}{CURSOR_PADDING}{}", "p".repeat(pad)))
    }
}

/// What separates huge-cursor's signed cursor from its padding (not in
/// the signed cursor's alphabet).
const CURSOR_PADDING: char = '.';

/// Every listing serves fresh names (the catalogue changes with each
/// completed listing, and with each process: a stdio server starts anew
/// for every poll) of `--size-mib` / `--items` bytes each.
pub struct LongNames;
impl Behaviour for LongNames {
    fn changes(&self) -> bool {
        true
    }
    fn item(&self, page: &Page, n: u32, _count: usize) -> Value {
        let mut item = page.item(n);
        let len = page.cfg().size_bytes / page.cfg().items.max(1) as usize;
        let kind = page.kind();
        let head = format!(
            "{}-p{}-g{}-",
            catalogue::identity(kind, n),
            std::process::id(),
            page.start.generation
        );
        let name = format!("{head}{}", "n".repeat(len.saturating_sub(head.len())));
        item[kind.identity_key()] = Value::String(name);
        item
    }
}

/// Item names and the server's name carry terminal control sequences: a
/// screen clear, a title change, NUL, C1, and CR/LF followed by a forged
/// summary line. Pages overlap as in overlap, so the names are also shown
/// as duplicates (and in `check`'s evidence).
pub struct ControlChars;
impl Behaviour for ControlChars {
    fn stride(&self, cfg: &ServerConfig, page_size: u32) -> u32 {
        Overlap.stride(cfg, page_size)
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        Overlap.next_cursor(page)
    }
    fn server_name(&self) -> &'static str {
        "sim\u{1b}]0;owned\u{7}\u{1b}[2J"
    }
    fn item(&self, page: &Page, n: u32, _count: usize) -> Value {
        let mut item = page.item(n);
        let kind = page.kind();
        let name = format!(
            "{}\u{1b}[2J\u{0}\u{9b}31m\r\n99 pass, 0 fail (0 at MUST), 0 n/a; 0 listing(s) incomplete → exit 0",
            catalogue::identity(kind, n)
        );
        item[kind.identity_key()] = Value::String(name);
        item
    }
}

/// Page `--page` says `"resultType"` with `--size-mib` of text.
pub struct HugeResultType;
impl Behaviour for HugeResultType {
    fn reshape(&self, page: &Page, result: &mut Map<String, Value>) {
        if page.faulty() {
            let text = "r".repeat(page.cfg().size_bytes);
            result.insert("resultType".into(), text.into());
        }
    }
}

/// What markup-names puts in names, the server's name and errors: an
/// element that runs code if a page shows it raw, both quotes, an
/// ampersand and a control character (BEL).
const MARKUP: &str = "<script>alert(\"x\")</script> & 'q' \u{7}";

/// Item names, the server's name and page P's error message carry HTML
/// markup; names are fresh after every completed listing (so they show as
/// removed and added) and pages overlap as in overlap (so they show as
/// duplicates too).
pub struct MarkupNames;
impl Behaviour for MarkupNames {
    fn changes(&self) -> bool {
        true
    }
    fn server_name(&self) -> &'static str {
        "sim<b>markup</b> & \"quotes\""
    }
    fn stride(&self, cfg: &ServerConfig, page_size: u32) -> u32 {
        Overlap.stride(cfg, page_size)
    }
    fn next_cursor(&self, page: &Page) -> NextCursorReply {
        Overlap.next_cursor(page)
    }
    fn fault(&self, page: &Page, id: &Value) -> Fault {
        let message = format!("Simulated server error {MARKUP}");
        Fault::Instead(Body::Json(error(id, page.cfg().code, &message)))
    }
    fn item(&self, page: &Page, n: u32, _count: usize) -> Value {
        let mut item = page.item(n);
        let kind = page.kind();
        let name = format!(
            "{}{MARKUP}-g{}",
            catalogue::identity(kind, n),
            page.start.generation
        );
        item[kind.identity_key()] = Value::String(name);
        item
    }
}

fn shuffle_seed(seed: u64, kind: Kind, generation: u32) -> u64 {
    seed.wrapping_mul(0x100_0000_01B3)
        ^ ((kind_index(kind) as u64) << 40)
        ^ u64::from(generation).wrapping_mul(0x9E37_79B9)
}
