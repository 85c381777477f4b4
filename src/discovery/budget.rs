//! What one refresh of one source may keep, in bytes. A list is read up to
//! its byte cap (`max_file_bytes`, `max_response_bytes`), but what it
//! becomes can be far larger than what was read: a group's labels are
//! copied once per URL, a registry walk keeps something of every entry of
//! every page. So everything a refresh keeps is counted against one
//! budget as it is made, before it is made, and a list that would pass it
//! fails the refresh (`over_budget`; the last good list stays). See
//! docs/reliability.md, "Byte budgets".

/// Bytes one refresh of one source may keep: its candidates (name, URL,
/// labels as copied for each URL, where each came from) and, for a
/// registry, every entry's identity for the walk. About 35,000 ordinary
/// targets or registry entries; `max_targets` (10,000 by default) usually
/// stops a list first.
pub const MAX_KEPT_BYTES: u64 = 16 << 20;

/// Counted per kept entry besides its text: the structures around it (a
/// candidate's fields, a set's slot, the allocator's headers).
pub const ENTRY_OVERHEAD: u64 = 128;

/// Counted per label besides its name and value: its place in a map.
pub const LABEL_OVERHEAD: u64 = 64;

/// A list would keep more than its source's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the list would keep more than {max} bytes, the byte budget of one source")]
pub struct OverBudget {
    pub max: u64,
}

/// The bytes a refresh has kept so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptBudget {
    used: u64,
    max: u64,
}

impl Default for KeptBudget {
    fn default() -> Self {
        KeptBudget::new(MAX_KEPT_BYTES)
    }
}

impl KeptBudget {
    pub fn new(max: u64) -> KeptBudget {
        KeptBudget { used: 0, max }
    }

    /// Count `bytes` about to be kept; refused (and not counted) past the
    /// budget.
    pub fn charge(&mut self, bytes: u64) -> Result<(), OverBudget> {
        let used = self.used.saturating_add(bytes);
        if used > self.max {
            return Err(OverBudget { max: self.max });
        }
        self.used = used;
        Ok(())
    }

    pub fn used(&self) -> u64 {
        self.used
    }
}

/// What keeping one entry costs: `text` bytes of its own (name, URL,
/// origin) and one copy of labels that costs `labels` ([`labels_bytes`]).
pub fn entry_bytes(text: usize, labels: u64) -> u64 {
    ENTRY_OVERHEAD
        .saturating_add(text as u64)
        .saturating_add(labels)
}

/// What one copy of `labels` costs.
pub fn labels_bytes<'a>(labels: impl Iterator<Item = (&'a String, &'a String)>) -> u64 {
    labels
        .map(|(k, v)| LABEL_OVERHEAD + (k.len() + v.len()) as u64)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_charge_past_the_budget_is_refused_and_not_counted() {
        let mut b = KeptBudget::new(100);
        assert_eq!(b.charge(60), Ok(()));
        assert_eq!(b.charge(41), Err(OverBudget { max: 100 }));
        assert_eq!(b.used(), 60);
        assert_eq!(b.charge(40), Ok(()));
        assert_eq!(b.charge(u64::MAX), Err(OverBudget { max: 100 }));
    }
}
