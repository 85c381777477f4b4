//! A lock taken whatever happened to its last holder.

use std::sync::{Mutex, MutexGuard};

/// `m` locked. A poisoned lock only means a panic elsewhere mid-update of
/// a plain map or counter; its entries are still whole.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
