//! One value per list kind, indexed by [`Kind`]: what a session was told,
//! what a subscription has announced, the counters a scenario keeps.

use mcp_listing::kind::Kind;
use std::ops::{Index, IndexMut};

#[derive(Debug, Default, Clone)]
pub struct PerKind<T>([T; 4]);

impl<T> PerKind<T> {
    pub fn from_fn(mut value: impl FnMut(Kind) -> T) -> PerKind<T> {
        PerKind(std::array::from_fn(|i| value(Kind::ALL[i])))
    }
}

/// The position of `kind` in [`Kind::ALL`].
pub fn kind_index(kind: Kind) -> usize {
    match kind {
        Kind::Tools => 0,
        Kind::Prompts => 1,
        Kind::Resources => 2,
        Kind::ResourceTemplates => 3,
    }
}

impl<T> Index<Kind> for PerKind<T> {
    type Output = T;
    fn index(&self, kind: Kind) -> &T {
        &self.0[kind_index(kind)]
    }
}

impl<T> IndexMut<Kind> for PerKind<T> {
    fn index_mut(&mut self, kind: Kind) -> &mut T {
        &mut self.0[kind_index(kind)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_is_the_place_in_all() {
        for (i, kind) in Kind::ALL.into_iter().enumerate() {
            assert_eq!(kind_index(kind), i);
        }
    }
}
