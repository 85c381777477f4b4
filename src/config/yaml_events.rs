//! The YAML parser under yaml_serde (libyaml, in Rust), read as a stream of
//! events: what `yaml_bounds.rs` counts before yaml_serde loads a document,
//! and where `yaml_span.rs` finds a mapping entry in the text. The same
//! parser, so all read the same document; one event at a time, so a check
//! can stop reading where a document turns hostile. Marks are byte offsets.

use libyaml_rs as sys;
use std::ffi::CStr;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// Where an event starts or ends: a byte offset, and the 0-based line and
/// column the parser counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Mark {
    pub index: u64,
    pub line: u64,
    pub column: u64,
}

/// What one event is, as far as counting and finding go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Event {
    DocumentStart,
    /// A sequence or a mapping (`map`) opens, with its anchor (`&name`),
    /// if any; `flow`: written in brackets or braces.
    Open {
        anchor: Option<Vec<u8>>,
        map: bool,
        flow: bool,
    },
    /// The sequence or mapping opened last closes.
    Close,
    /// `value` only when the events were asked for with values.
    Scalar {
        anchor: Option<Vec<u8>>,
        value: Option<Vec<u8>>,
    },
    /// `*name`.
    Alias {
        anchor: Vec<u8>,
    },
    /// Stream start, document end: nothing to count.
    Other,
}

/// The events of `input`, in order. Ends at the end of the stream or at
/// the first syntax error (which yaml_serde reports in its own words).
pub(super) struct Events<'a> {
    /// Boxed: libyaml keeps a pointer to the parser in the parser, so it
    /// must not move once initialised.
    parser: Box<MaybeUninit<sys::yaml_parser_t>>,
    initialised: bool,
    done: bool,
    /// The parser stopped at a syntax error.
    failed: bool,
    /// Copy each scalar's value into its event.
    values: bool,
    input: PhantomData<&'a [u8]>,
}

impl<'a> Events<'a> {
    /// The events of `input`, scalars with their values.
    pub fn with_values(input: &'a [u8]) -> Events<'a> {
        let mut events = Events::new(input);
        events.values = true;
        events
    }

    pub fn new(input: &'a [u8]) -> Events<'a> {
        let mut parser = Box::<sys::yaml_parser_t>::new_uninit();
        let p = parser.as_mut_ptr();
        // SAFETY: `p` points to memory owned by the box, which stays put;
        // initialize writes the whole struct before anything reads it, and
        // `input` outlives the parser (the lifetime 'a ties them), as
        // set_input_string requires.
        let initialised = unsafe {
            let ok = sys::yaml_parser_initialize(p).ok;
            if ok {
                sys::yaml_parser_set_encoding(p, sys::YAML_UTF8_ENCODING);
                sys::yaml_parser_set_input_string(p, input.as_ptr(), input.len() as u64);
            }
            ok
        };
        Events {
            parser,
            initialised,
            done: !initialised,
            failed: !initialised,
            values: false,
            input: PhantomData,
        }
    }

    /// Whether reading stopped at a syntax error rather than at the end.
    pub fn failed(&self) -> bool {
        self.failed
    }
}

impl Iterator for Events<'_> {
    type Item = (Event, Mark, Mark);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut raw = MaybeUninit::<sys::yaml_event_t>::uninit();
        let p = self.parser.as_mut_ptr();
        // SAFETY: the parser was initialised and has not failed (`done` is
        // set otherwise, and it is never asked again); parse fills `raw`
        // when it succeeds, and only then is it read, once, and deleted.
        let item = unsafe {
            if sys::yaml_parser_parse(p, raw.as_mut_ptr()).fail {
                self.done = true;
                self.failed = true;
                return None;
            }
            let event = raw.as_mut_ptr();
            let end = matches!(
                (*event).type_,
                sys::YAML_STREAM_END_EVENT | sys::YAML_NO_EVENT
            );
            let item = read_event(&*event, self.values);
            sys::yaml_event_delete(event);
            if end {
                // Past the end the parser hands out empty events forever.
                self.done = true;
                return None;
            }
            item
        };
        Some(item)
    }
}

/// The event's kind, anchor (and value, with `values`) and marks.
///
/// # Safety
/// `event` must be an event the parser produced and not yet deleted.
unsafe fn read_event(event: &sys::yaml_event_t, values: bool) -> (Event, Mark, Mark) {
    let kind = match event.type_ {
        sys::YAML_DOCUMENT_START_EVENT => Event::DocumentStart,
        sys::YAML_SEQUENCE_START_EVENT => Event::Open {
            anchor: anchor(event.data.sequence_start.anchor),
            map: false,
            flow: event.data.sequence_start.style == sys::YAML_FLOW_SEQUENCE_STYLE,
        },
        sys::YAML_MAPPING_START_EVENT => Event::Open {
            anchor: anchor(event.data.mapping_start.anchor),
            map: true,
            flow: event.data.mapping_start.style == sys::YAML_FLOW_MAPPING_STYLE,
        },
        sys::YAML_SEQUENCE_END_EVENT | sys::YAML_MAPPING_END_EVENT => Event::Close,
        sys::YAML_SCALAR_EVENT => Event::Scalar {
            anchor: anchor(event.data.scalar.anchor),
            value: values.then(|| {
                let s = &event.data.scalar;
                if s.value.is_null() {
                    return Vec::new();
                }
                // A scalar the parser made: `length` bytes at `value`.
                std::slice::from_raw_parts(s.value, s.length as usize).to_vec()
            }),
        },
        sys::YAML_ALIAS_EVENT => Event::Alias {
            anchor: anchor(event.data.alias.anchor).unwrap_or_default(),
        },
        _ => Event::Other,
    };
    (kind, mark(&event.start_mark), mark(&event.end_mark))
}

/// An anchor's name (a NUL-terminated string the event owns).
///
/// # Safety
/// `name` is null or points to a NUL-terminated string alive for the call.
unsafe fn anchor(name: *mut u8) -> Option<Vec<u8>> {
    if name.is_null() {
        return None;
    }
    Some(CStr::from_ptr(name.cast()).to_bytes().to_vec())
}

fn mark(m: &sys::yaml_mark_t) -> Mark {
    Mark {
        index: m.index,
        line: m.line,
        column: m.column,
    }
}

impl Drop for Events<'_> {
    fn drop(&mut self) {
        if self.initialised {
            // SAFETY: initialised above and deleted only here, once.
            unsafe { sys::yaml_parser_delete(self.parser.as_mut_ptr()) }
        }
    }
}
