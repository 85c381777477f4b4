//! Every `limits:` block (global, targets, modules, discovery sources):
//! merged over what it overrides, only the keys that apply where it is
//! written, every bound positive.

use super::{child, Resolver, Result};
use crate::config::limits::{LimitKey, Limits};
use crate::config::locate::{At, Seg};
use crate::config::raw::RawLimits;
use std::time::Duration;

/// The `limits:` keys that mean something in one place, and that place's
/// name for the error refusing the others.
pub(super) struct Applies {
    pub keys: &'static [LimitKey],
    pub place: &'static str,
}

/// A listing (global, targets, modules): every key.
pub(super) const LISTING: Applies = Applies {
    keys: &LimitKey::ALL,
    place: "a listing",
};

impl RawLimits {
    fn given(&self, key: LimitKey) -> bool {
        match key {
            LimitKey::Timeout => self.timeout.is_some(),
            LimitKey::PageTimeout => self.page_timeout.is_some(),
            LimitKey::ConnectTimeout => self.connect_timeout.is_some(),
            LimitKey::MaxPages => self.max_pages.is_some(),
            LimitKey::MaxItems => self.max_items.is_some(),
            LimitKey::MaxResponseBytes => self.max_response_bytes.is_some(),
            LimitKey::InvalidCursorRestarts => self.invalid_cursor_restarts.is_some(),
        }
    }

    fn over(&self, base: Limits) -> Limits {
        Limits {
            timeout: self.timeout.map_or(base.timeout, |d| d.0),
            page_timeout: self.page_timeout.map_or(base.page_timeout, |d| d.0),
            connect_timeout: self.connect_timeout.map_or(base.connect_timeout, |d| d.0),
            max_pages: self.max_pages.unwrap_or(base.max_pages),
            max_items: self.max_items.unwrap_or(base.max_items),
            max_response_bytes: self
                .max_response_bytes
                .map_or(base.max_response_bytes, |b| b.0),
            invalid_cursor_restarts: self
                .invalid_cursor_restarts
                .unwrap_or(base.invalid_cursor_restarts),
        }
    }
}

/// Whether a bound is zero (a restart budget of 0 is a choice, not a bug).
fn is_zero(limits: &Limits, key: LimitKey) -> bool {
    match key {
        LimitKey::Timeout => limits.timeout.is_zero(),
        LimitKey::PageTimeout => limits.page_timeout.is_zero(),
        LimitKey::ConnectTimeout => limits.connect_timeout.is_zero(),
        LimitKey::MaxPages => limits.max_pages == 0,
        LimitKey::MaxItems => limits.max_items == 0,
        LimitKey::MaxResponseBytes => limits.max_response_bytes == 0,
        LimitKey::InvalidCursorRestarts => false,
    }
}

impl Resolver<'_> {
    /// The `limits:` block of `owner` (if written) merged over `base`;
    /// a key outside `applies` is refused by name.
    pub(super) fn limits(
        &mut self,
        owner: &[Seg],
        who: &str,
        base: Limits,
        raw: Option<RawLimits>,
        applies: &Applies,
    ) -> Result<Limits> {
        let Some(raw) = raw else {
            return Ok(base);
        };
        let at = child(owner, "limits");
        let key = |k: LimitKey| child(&at, k.key());
        if let Some(k) = LimitKey::ALL
            .into_iter()
            .find(|k| raw.given(*k) && !applies.keys.contains(k))
        {
            let accepted: Vec<&str> = applies.keys.iter().map(|k| k.key()).collect();
            return Err(self.error(
                &key(k),
                At::Key,
                format!(
                    "{who}: `limits.{}` does not apply to {} (its limits are {})",
                    k.key(),
                    applies.place,
                    accepted.join(", ")
                ),
            ));
        }
        let limits = raw.over(base);
        if let Some(k) = applies.keys.iter().find(|k| is_zero(&limits, **k)) {
            return Err(self.error(
                &key(*k),
                At::Value,
                format!("{who}: `{}` must be greater than zero", k.key()),
            ));
        }
        // Said where one of the two is written (inherited, it was said there).
        let written = [raw.page_timeout, raw.timeout].iter().any(Option::is_some);
        let paged = applies.keys.contains(&LimitKey::PageTimeout);
        if written && paged && limits.page_timeout > limits.timeout {
            let k = if raw.page_timeout.is_some() {
                LimitKey::PageTimeout
            } else {
                LimitKey::Timeout
            };
            self.warn(&key(k), At::Key, slow_page_warning(who, &limits));
        }
        Ok(limits)
    }
}

fn slow_page_warning(who: &str, limits: &Limits) -> String {
    let shown = |d: Duration| humantime::format_duration(d).to_string();
    format!(
        "{who}: page_timeout ({}) is longer than the whole-listing timeout ({}); the listing deadline will cut pages short",
        shown(limits.page_timeout),
        shown(limits.timeout)
    )
}
