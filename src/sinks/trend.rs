//! A kind's sparkline: unique items of its last [`TREND_POINTS`] complete
//! listings, oldest first, kept as runs of equal counts. Every target keeps
//! one per kind, and a stable catalogue's 60 counts are one run (8 bytes,
//! not 240).

use serde::{Serialize, Serializer};
use std::collections::VecDeque;

/// Complete listings per kind on a target's sparkline.
pub const TREND_POINTS: usize = 60;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trend {
    /// `(count, how many listings in a row had it)`, oldest first.
    runs: VecDeque<(u32, u32)>,
    points: usize,
}

impl Trend {
    /// Add the newest count, dropping the oldest past [`TREND_POINTS`].
    pub fn push(&mut self, count: u32) {
        match self.runs.back_mut() {
            Some((last, n)) if *last == count => *n += 1,
            _ => self.runs.push_back((count, 1)),
        }
        self.points += 1;
        while self.points > TREND_POINTS {
            if let Some((_, n)) = self.runs.front_mut() {
                *n -= 1;
                if *n == 0 {
                    self.runs.pop_front();
                }
            }
            self.points -= 1;
        }
    }

    pub fn last(&self) -> Option<u32> {
        self.runs.back().map(|(count, _)| *count)
    }

    pub fn len(&self) -> usize {
        self.points
    }

    pub fn is_empty(&self) -> bool {
        self.points == 0
    }

    /// Every point, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = u32> + Clone + '_ {
        self.runs
            .iter()
            .flat_map(|&(count, n)| std::iter::repeat_n(count, n as usize))
    }
}

/// An array of counts, oldest first, as it always was.
impl Serialize for Trend {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_sixty_points_as_runs() {
        let mut t = Trend::default();
        for _ in 0..100 {
            t.push(20);
        }
        assert_eq!((t.len(), t.runs.len()), (TREND_POINTS, 1));
        t.push(19);
        t.push(21);
        assert_eq!(t.len(), TREND_POINTS);
        assert_eq!(t.last(), Some(21));
        let points: Vec<u32> = t.iter().collect();
        assert_eq!(points.len(), TREND_POINTS);
        assert_eq!(&points[57..], [20, 19, 21]);
        for i in 0..200 {
            t.push(i);
        }
        let points: Vec<u32> = t.iter().collect();
        assert_eq!(points, (140..200).collect::<Vec<u32>>());
        assert_eq!(serde_json::to_value(&t).unwrap()[0], 140);
    }
}
