//! A baseline's names, packed: sorted and unique in one buffer with their
//! end offsets. A baseline keeps every kind's names for as long as its
//! target is polled, and as a `Vec<String>` each name cost 24 bytes and an
//! allocation of its own (16–32 bytes more with malloc's overhead).

use serde::{Serialize, Serializer};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameList {
    /// Every name, back to back.
    text: Box<str>,
    /// Where each name ends in `text`.
    ends: Box<[u32]>,
}

impl NameList {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = match i {
            0 => 0,
            _ => self.ends[i - 1] as usize,
        };
        self.text.get(start..end)
    }

    /// The names, sorted.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i).unwrap_or_default())
    }

    /// Where `name` is, if held.
    pub fn position(&self, name: &str) -> Option<usize> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match self.get(mid).unwrap_or_default().cmp(name) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Whether these are exactly `names` (sorted and unique).
    pub fn holds(&self, names: &[String]) -> bool {
        self.len() == names.len() && self.iter().zip(names).all(|(a, b)| a == b)
    }
}

/// Sorted and deduplicated whatever the order given. Offsets are `u32`: a
/// baseline file is at most 256 MiB (`MAX_STATE_FILE_BYTES`), so no kind's
/// names come near 4 GiB; names past that would be left out.
impl<'a> FromIterator<&'a str> for NameList {
    fn from_iter<I: IntoIterator<Item = &'a str>>(names: I) -> NameList {
        let mut sorted: Vec<&str> = names.into_iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut text = String::with_capacity(sorted.iter().map(|n| n.len()).sum());
        let mut ends = Vec::with_capacity(sorted.len());
        for name in sorted {
            let Ok(end) = u32::try_from(text.len() + name.len()) else {
                break;
            };
            text.push_str(name);
            ends.push(end);
        }
        NameList {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }
}

impl<const N: usize> PartialEq<[&str; N]> for NameList {
    fn eq(&self, other: &[&str; N]) -> bool {
        self.len() == N && self.iter().zip(other).all(|(a, b)| a == *b)
    }
}

impl<const N: usize> PartialEq<[&str; N]> for &NameList {
    fn eq(&self, other: &[&str; N]) -> bool {
        **self == *other
    }
}

/// Written as the array of names files have always held.
impl Serialize for NameList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sorted_unique_and_found() {
        let list: NameList = ["b", "a", "ccc", "a", ""].into_iter().collect();
        assert_eq!(list, ["", "a", "b", "ccc"]);
        assert_eq!(list.position("ccc"), Some(3));
        assert_eq!(list.position(""), Some(0));
        assert_eq!(list.position("bb"), None);
        assert_eq!(list.get(4), None);
        let strings: Vec<String> = list.iter().map(String::from).collect();
        assert!(list.holds(&strings));
        assert!(!list.holds(&strings[1..]));
        assert_eq!(
            serde_json::to_string(&list).unwrap(),
            r#"["","a","b","ccc"]"#
        );
        assert!(NameList::default().is_empty());
    }
}
