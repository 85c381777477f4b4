//! Where a mapping entry sits in a YAML text, found on libyaml's events
//! (`yaml_events.rs`), and the text with that entry blanked: how
//! `parse_errors.rs` drops an offending key to parse the rest again
//! without ever writing a document back (which would expand its aliases).
//! Blanking keeps every other byte where it was, so the text is no longer
//! than the file and the parser's positions still point into the file.

use super::locate::Seg;
use super::yaml_events::{Event, Events};

/// A mapping entry's place: from its key's first byte to its value's last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct EntrySpan {
    start: usize,
    end: usize,
    /// Its mapping is written in braces.
    flow: bool,
    /// It is its mapping's only entry.
    only: bool,
}

/// `text` with the entry at `path` (its last segment a key) blanked: its
/// bytes spaces (line breaks kept), the comma after it too in a flow
/// mapping, and `{}` in place of a block mapping's only entry (so the
/// mapping stays a mapping). False, and `text` unchanged, when there is
/// no such entry.
pub(super) fn blank_entry(text: &mut String, path: &[Seg]) -> bool {
    let Some(span) = entry_span(text, path) else {
        return false;
    };
    let bytes = text.as_bytes();
    let mut end = span.end.min(bytes.len());
    if span.flow {
        let gap = bytes[end..].iter().take_while(|b| b.is_ascii_whitespace());
        let at = end + gap.count();
        if bytes.get(at) == Some(&b',') {
            end = at + 1;
        }
    }
    if span.start >= end || !text.is_char_boundary(span.start) || !text.is_char_boundary(end) {
        return false;
    }
    // A space per byte, so nothing after the entry moves.
    let mut blank = String::with_capacity(end - span.start);
    for c in text[span.start..end].chars() {
        match c {
            '\n' | '\r' => blank.push(c),
            _ => blank.extend(std::iter::repeat_n(' ', c.len_utf8())),
        }
    }
    let blank = if span.only && !span.flow && blank.len() >= 2 {
        format!("{{}}{}", &blank[2..])
    } else {
        blank
    };
    text.replace_range(span.start..end, &blank);
    true
}

/// The span of the entry at `path` in the first document of `text`.
fn entry_span(text: &str, path: &[Seg]) -> Option<EntrySpan> {
    if !matches!(path.last(), Some(Seg::Key(_))) {
        return None;
    }
    let mut find = Find {
        target: path,
        frames: Vec::new(),
        start: None,
        end: None,
        holder: None,
    };
    let mut documents = 0;
    for (event, start, end) in Events::with_values(text.as_bytes()) {
        let (start, end) = (start.index as usize, end.index as usize);
        match event {
            Event::DocumentStart => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
            }
            Event::Scalar { value, .. } => {
                let key = value.and_then(|v| String::from_utf8(v).ok());
                find.leaf(key, start, end);
            }
            Event::Alias { .. } => find.leaf(None, start, end),
            Event::Open { map, flow, .. } => find.open(map, flow),
            Event::Close => {
                if let Some(span) = find.close(end) {
                    return Some(span);
                }
            }
            Event::Other => {}
        }
    }
    None
}

/// A sequence or mapping being read.
struct Frame {
    /// Its place; `None` inside a key that is itself a collection.
    path: Option<Vec<Seg>>,
    flow: bool,
    /// For a mapping: its key just read (its value next), or `None` (a key
    /// next); always `None` for a sequence.
    key: Option<Key>,
    map: bool,
    /// Entries (or items) read whole.
    entries: usize,
}

enum Key {
    Text {
        text: String,
        start: usize,
    },
    /// A key that is not text (a collection, an alias).
    Other,
}

/// Where the next node goes.
enum Place {
    /// A mapping's key.
    Key,
    /// The document, a value or an item: at this path (when it has one),
    /// with the key's first byte for a mapping's value.
    Node(Option<Vec<Seg>>, Option<usize>),
}

struct Find<'p> {
    target: &'p [Seg],
    frames: Vec<Frame>,
    /// The entry's key start and its value's end, once met.
    start: Option<usize>,
    end: Option<usize>,
    /// How many frames were open when the entry's value started: the
    /// mapping holding it is the last of them.
    holder: Option<usize>,
}

impl Find<'_> {
    fn place(&self) -> Place {
        let Some(top) = self.frames.last() else {
            return Place::Node(Some(Vec::new()), None);
        };
        let child = |seg: Seg| {
            top.path.clone().map(|mut p| {
                p.push(seg);
                p
            })
        };
        match (&top.key, top.map) {
            (None, true) => Place::Key,
            (Some(Key::Text { text, start }), _) => {
                Place::Node(child(Seg::Key(text.clone())), Some(*start))
            }
            (Some(Key::Other), _) => Place::Node(None, None),
            (None, false) => Place::Node(child(Seg::Index(top.entries)), None),
        }
    }

    /// A node starts at `path`, its key at `key_start`: whether it is the
    /// entry's value.
    fn meet(&mut self, path: Option<&[Seg]>, key_start: Option<usize>) -> bool {
        let hit = self.start.is_none() && key_start.is_some() && path == Some(self.target);
        if hit {
            self.start = key_start;
            self.holder = Some(self.frames.len());
        }
        hit
    }

    /// A scalar or an alias (`key`: its text, for a scalar).
    fn leaf(&mut self, key: Option<String>, start: usize, end: usize) {
        match self.place() {
            Place::Key => self.set_key(match key {
                Some(text) => Key::Text { text, start },
                None => Key::Other,
            }),
            Place::Node(path, key_start) => {
                if self.meet(path.as_deref(), key_start) {
                    self.end = Some(end);
                }
                self.node_done();
            }
        }
    }

    fn open(&mut self, map: bool, flow: bool) {
        let path = match self.place() {
            Place::Key => None,
            Place::Node(path, key_start) => {
                self.meet(path.as_deref(), key_start);
                path
            }
        };
        self.frames.push(Frame {
            path,
            flow,
            key: None,
            map,
            entries: 0,
        });
    }

    /// The collection opened last closes at `end`: the span, when it is the
    /// mapping holding the entry.
    fn close(&mut self, end: usize) -> Option<EntrySpan> {
        let frame = self.frames.pop()?;
        if self.start.is_some() && frame.path.as_deref() == Some(self.target) {
            self.end = Some(end);
        }
        if self.holder == Some(self.frames.len() + 1) {
            return Some(EntrySpan {
                start: self.start?,
                end: self.end?,
                flow: frame.flow,
                only: frame.entries == 1,
            });
        }
        match self.frames.last() {
            Some(Frame {
                map: true,
                key: None,
                ..
            }) => self.set_key(Key::Other),
            _ => self.node_done(),
        }
        None
    }

    fn set_key(&mut self, key: Key) {
        if let Some(top) = self.frames.last_mut() {
            top.key = Some(key);
        }
    }

    /// A value or an item was read whole: its collection moves on.
    fn node_done(&mut self) {
        if let Some(top) = self.frames.last_mut() {
            top.entries += 1;
            top.key = None;
        }
    }
}

#[cfg(test)]
#[path = "yaml_span_tests.rs"]
mod tests;
