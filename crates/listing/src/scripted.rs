//! A pager that answers from a script instead of a server, so a walk can be
//! driven through any sequence of pages, errors and notifications. The
//! walker's tests, the checker's tests, the benches and the fuzz harness
//! all use this one; it is built only for this crate's tests and with the
//! `testing` feature.

use super::kind::Kind;
use super::shape::PageShape;
use super::walk::{PageError, PageResult, Pager, INVALID_PARAMS};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, SystemTime};

/// One page request as the script sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a, S> {
    pub shape: S,
    pub cursor: Option<&'a str>,
    /// Which request of this pager it is, counting from 1.
    pub number: u32,
}

/// What the script gives back for one request.
#[derive(Debug, Clone)]
pub struct Answer {
    pub outcome: Result<Value, PageError>,
    /// `list_changed` notifications that arrive with this answer.
    pub list_changed: u32,
}

impl Answer {
    pub fn page(result: Value) -> Answer {
        Answer::from(Ok(result))
    }

    pub fn error(error: impl Into<PageError>) -> Answer {
        Answer::from(Err(error.into()))
    }
}

impl From<Result<Value, PageError>> for Answer {
    fn from(outcome: Result<Value, PageError>) -> Answer {
        Answer {
            outcome,
            list_changed: 0,
        }
    }
}

/// The script's answer to a request the cursor tables do not hold.
type Otherwise<S> = Box<dyn FnMut(Request<'_, S>) -> Answer + Send>;

/// A [`Pager`] answering each cursor from its tables (a cursor's queued
/// answers once each, in order, then its standing answer) and any other
/// request from a function of the request; it records every cursor sent.
pub struct ScriptedPager<S = Kind> {
    queued: HashMap<Option<String>, VecDeque<Result<Value, PageError>>>,
    standing: HashMap<Option<String>, Result<Value, PageError>>,
    otherwise: Otherwise<S>,
    /// Requests (counting from 1) with which one `list_changed` arrives.
    list_changed_on: Vec<u32>,
    sent: Vec<Option<String>>,
    bytes_per_page: u64,
}

impl<S: PageShape> ScriptedPager<S> {
    /// A server that knows no cursor yet: anything asked is refused with
    /// -32602, as a server SHOULD refuse a cursor it did not give.
    pub fn new() -> Self {
        Self::answering(|_| {
            Answer::error(PageError::Rpc {
                code: INVALID_PARAMS,
                message: "unknown cursor".into(),
            })
        })
    }

    /// A server whose every answer is `script` of the request.
    pub fn answering(script: impl FnMut(Request<'_, S>) -> Answer + Send + 'static) -> Self {
        ScriptedPager {
            queued: HashMap::new(),
            standing: HashMap::new(),
            otherwise: Box::new(script),
            list_changed_on: Vec::new(),
            sent: Vec::new(),
            bytes_per_page: 10,
        }
    }

    /// `cursor` (None: the first page) is answered with `result`.
    pub fn page(self, cursor: Option<&str>, result: Value) -> Self {
        self.standing(cursor, Ok(result))
    }

    /// `cursor` is answered with `error`.
    pub fn error(self, cursor: Option<&str>, error: impl Into<PageError>) -> Self {
        self.standing(cursor, Err(error.into()))
    }

    fn standing(mut self, cursor: Option<&str>, answer: Result<Value, PageError>) -> Self {
        self.standing.insert(cursor.map(str::to_string), answer);
        self
    }

    /// `cursor` is answered with `answers` in turn, one a request, before
    /// its standing answer.
    pub fn sequence(
        mut self,
        cursor: Option<&str>,
        answers: Vec<Result<Value, PageError>>,
    ) -> Self {
        self.queued
            .entry(cursor.map(str::to_string))
            .or_default()
            .extend(answers);
        self
    }

    /// One `list_changed` notification arrives with request `number`
    /// (counting from 1).
    pub fn list_changed_on(mut self, number: u32) -> Self {
        self.list_changed_on.push(number);
        self
    }

    /// Every answer counts as `bytes` read.
    pub fn bytes_per_page(mut self, bytes: u64) -> Self {
        self.bytes_per_page = bytes;
        self
    }

    /// The cursors sent, in order.
    pub fn sent(&self) -> Vec<Option<&str>> {
        self.sent.iter().map(Option::as_deref).collect()
    }

    /// How many pages were asked for.
    pub fn requests(&self) -> usize {
        self.sent.len()
    }

    fn answer(&mut self, shape: S, cursor: Option<&str>, number: u32) -> Answer {
        let key = cursor.map(str::to_string);
        let tabled = match self.queued.get_mut(&key).and_then(VecDeque::pop_front) {
            Some(next) => Some(next),
            None => self.standing.get(&key).cloned(),
        };
        let mut answer = match tabled {
            Some(outcome) => Answer::from(outcome),
            None => (self.otherwise)(Request {
                shape,
                cursor,
                number,
            }),
        };
        let notified = self
            .list_changed_on
            .iter()
            .filter(|&&n| n == number)
            .count();
        answer.list_changed += u32::try_from(notified).unwrap_or(u32::MAX);
        answer
    }
}

impl<S: PageShape> Default for ScriptedPager<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: PageShape> Pager<S> for ScriptedPager<S> {
    async fn fetch_page(&mut self, shape: S, cursor: Option<&str>, _: Duration) -> PageResult {
        self.sent.push(cursor.map(str::to_string));
        let number = u32::try_from(self.sent.len()).unwrap_or(u32::MAX);
        let answer = self.answer(shape, cursor, number);
        PageResult {
            outcome: answer.outcome,
            request_id: i64::from(number),
            bytes: self.bytes_per_page,
            duration: Duration::from_millis(1),
            started: SystemTime::now(),
            span_id: None,
            list_changed: answer.list_changed,
        }
    }
}
