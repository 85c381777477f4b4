//! The Prometheus service-discovery format `file_sd` files and `http_sd`
//! answers share: `[{"targets": [URL, ...], "labels": {NAME: VALUE}}]`, in
//! JSON (or YAML for files). A wrong shape fails the whole list, as
//! Prometheus fails it; what is wrong with one URL is the entry's own
//! problem (`entry.rs`).
//!
//! A list is read as a stream, one group at a time, never as a document
//! tree: the URLs and labels of a group are borrowed from the bytes read,
//! the labels are checked before they are copied to each URL (a group of
//! 5,000 URLs and one 1 MB label skips 5,000 entries and copies nothing),
//! and every copy kept is counted against the source's byte budget
//! (`budget.rs`). YAML is bounded first (no aliases, depth, nodes).

use super::any_seed::AnySeed;
use super::budget::{entry_bytes, labels_bytes, KeptBudget, OverBudget};
use super::entry::{shown_entry, Candidate, SkipList, SkipReason, Skipped};
use super::scalar::Scalar;
use crate::config::{check_label, check_yaml_bounds, source_default, YamlBounds};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

/// How a list is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

/// Why a list could not be read as target groups.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("{0}")]
    Malformed(String),
    /// More entries than the source's `max_targets`.
    #[error("{found} entries or more, more than max_targets ({max})")]
    TooMany { found: usize, max: usize },
    #[error(transparent)]
    OverBudget(#[from] OverBudget),
}

/// Longest key or label name quoted back in a message.
const MAX_QUOTED_CHARS: usize = 64;

/// The lists of one source, read one after the other: the candidates of
/// every group, the entries of groups skipped whole (invalid labels), and
/// what that keeps, bounded by `max_targets` and the byte budget.
#[derive(Debug)]
pub struct GroupReader {
    max_targets: usize,
    /// URLs read so far, skipped ones included.
    urls: usize,
    budget: KeptBudget,
    candidates: Vec<Candidate>,
    skipped: SkipList,
}

impl GroupReader {
    pub fn new(max_targets: usize, budget: KeptBudget) -> GroupReader {
        GroupReader {
            max_targets,
            urls: 0,
            budget,
            candidates: Vec::new(),
            skipped: SkipList::default(),
        }
    }

    /// Every candidate read, and the entries skipped while reading.
    pub fn finish(self) -> (Vec<Candidate>, SkipList) {
        (self.candidates, self.skipped)
    }

    /// Read one list; `origin` names it (a file, a URL's host) in each
    /// candidate's origin.
    pub fn read(&mut self, bytes: &[u8], format: Format, origin: &str) -> Result<(), FormatError> {
        let mut failure = None;
        let seed = AnySeed(ListSeed {
            reader: self,
            origin,
            failure: &mut failure,
        });
        let parsed = match format {
            Format::Json => {
                let mut de = serde_json::Deserializer::from_slice(bytes);
                seed.deserialize(&mut de)
                    .and_then(|()| de.end())
                    .map_err(|e| (e.is_syntax() || e.is_eof(), e.to_string()))
            }
            Format::Yaml => {
                let shape = check_yaml_bounds(bytes, &YamlBounds::FILE_SD).map_err(|e| {
                    FormatError::Malformed(format!(
                        "not accepted as YAML at line {} column {}: {e}",
                        e.line, e.column
                    ))
                })?;
                seed.deserialize(yaml_serde::Deserializer::from_slice(bytes))
                    .map_err(|e| (shape.syntax_error, e.to_string()))
            }
        };
        if let Some(failure) = failure {
            return Err(failure);
        }
        parsed.map_err(|(syntax, message)| {
            let message = crate::config::sanitize_parser_message(&message);
            FormatError::Malformed(match (syntax, format) {
                (true, Format::Json) => format!("not JSON: {message}"),
                (true, Format::Yaml) => format!("not YAML: {message}"),
                (false, _) => message,
            })
        })
    }

    /// One group read whole: its URLs become candidates, or, when its
    /// labels are invalid, skipped entries (the labels never copied).
    fn take(&mut self, group: Group<'_>, n: usize, origin: &str) -> Result<(), FormatError> {
        self.urls += group.targets.len();
        if self.urls > self.max_targets {
            return Err(FormatError::TooMany {
                found: self.urls,
                max: self.max_targets,
            });
        }
        let origin = format!("{origin}, group {n}");
        // A group of one target may name it with its `name` label.
        let named = (group.targets.len() == 1)
            .then(|| group.label("name"))
            .flatten();
        if let Err(why) = group.check_labels() {
            for url in &group.targets {
                self.skipped.push_with(SkipReason::InvalidLabel, || {
                    let entry = shown_entry(named, url);
                    Skipped::new(&entry, &origin, SkipReason::InvalidLabel, why.clone())
                });
            }
            return Ok(());
        }
        let labels: BTreeMap<String, String> = group
            .labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let label_bytes = labels_bytes(labels.iter());
        let own = origin.len() + named.map_or(0, str::len);
        for url in &group.targets {
            self.budget
                .charge(entry_bytes(own + url.len(), label_bytes))?;
            self.candidates.push(Candidate {
                name: named.map(str::to_string),
                url: url.to_string(),
                labels: labels.clone(),
                transport: None,
                origin: origin.clone(),
            });
        }
        Ok(())
    }
}

/// One group as read: borrowed text, meta labels (`__*`) left out (nothing
/// relabels here, so Prometheus would drop them too).
#[derive(Debug, Default)]
struct Group<'de> {
    targets: Vec<Cow<'de, str>>,
    /// At most one more than a target may carry.
    labels: Vec<(Cow<'de, str>, Cow<'de, str>)>,
    /// More labels than were kept.
    too_many_labels: bool,
}

impl Group<'_> {
    fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_ref())
    }

    /// Why the group's labels cannot be a target's, if they cannot.
    fn check_labels(&self) -> Result<(), String> {
        if self.too_many_labels || self.labels.len() > source_default::MAX_LABELS {
            return Err(format!("more than {} labels", source_default::MAX_LABELS));
        }
        self.labels
            .iter()
            .try_for_each(|(name, value)| check_label(name, value))
    }
}

/// Visits of `null` (and of an empty YAML value): the list, the targets or
/// the labels, empty.
macro_rules! null_is_empty {
    ($empty:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($empty)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($empty)
        }
    };
}

/// The whole list: `null` (an empty YAML document) or a list of groups,
/// each handed to the reader as soon as it is read.
struct ListSeed<'r> {
    reader: &'r mut GroupReader,
    origin: &'r str,
    /// Why reading stopped, when the reader stopped it.
    failure: &'r mut Option<FormatError>,
}

impl<'de> Visitor<'de> for ListSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of target groups")
    }

    null_is_empty!(());

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut n = 0;
        loop {
            n += 1;
            let seed = AnySeed(GroupSeed {
                n,
                taken: self.reader.urls,
                max: self.reader.max_targets,
                failure: &mut *self.failure,
            });
            let Some(group) = seq.next_element_seed(seed)? else {
                return Ok(());
            };
            if let Err(e) = self.reader.take(group, n, self.origin) {
                return Err(fail(self.failure, e));
            }
        }
    }
}

/// Keep `failure` where the reader finds it, and stop the parser.
fn fail<E: de::Error>(slot: &mut Option<FormatError>, failure: FormatError) -> E {
    let message = failure.to_string();
    *slot = Some(failure);
    E::custom(message)
}

fn malformed<E: de::Error>(slot: &mut Option<FormatError>, message: String) -> E {
    fail(slot, FormatError::Malformed(message))
}

/// Group `n`: a mapping with `targets` and `labels`; `taken` URLs read
/// before it of the `max` the source may hold.
struct GroupSeed<'r> {
    n: usize,
    taken: usize,
    max: usize,
    failure: &'r mut Option<FormatError>,
}

impl<'de> Visitor<'de> for GroupSeed<'_> {
    type Value = Group<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "group {} to be a mapping with `targets` and `labels`",
            self.n
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Group<'de>, A::Error> {
        let n = self.n;
        let mut group = Group::default();
        while let Some(key) = map.next_key::<Scalar>()? {
            match key.text().as_deref() {
                Some("targets") => {
                    group.targets = map.next_value_seed(AnySeed(TargetsSeed {
                        n,
                        taken: self.taken,
                        max: self.max,
                        failure: &mut *self.failure,
                    }))?;
                }
                Some("labels") => {
                    map.next_value_seed(AnySeed(LabelsSeed {
                        n,
                        group: &mut group,
                        failure: &mut *self.failure,
                    }))?;
                }
                other => {
                    let key = other.unwrap_or("(not text)");
                    return Err(malformed(
                        self.failure,
                        format!(
                            "group {n} has an unknown key {:?} (a group has `targets` and `labels`)",
                            key.chars().take(MAX_QUOTED_CHARS).collect::<String>()
                        ),
                    ));
                }
            }
        }
        Ok(group)
    }
}

/// A group's `targets`: a list of URL strings (or null), no longer than
/// the source has room for (`taken` of `max`).
struct TargetsSeed<'r> {
    n: usize,
    taken: usize,
    max: usize,
    failure: &'r mut Option<FormatError>,
}

impl<'de> Visitor<'de> for TargetsSeed<'_> {
    type Value = Vec<Cow<'de, str>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "group {}: `targets` as a list of URLs", self.n)
    }

    null_is_empty!(Vec::new());

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut urls = Vec::new();
        while let Some(item) = seq.next_element::<Scalar>()? {
            let kind = item.type_name();
            let Some(url) = item.text() else {
                let why = format!("group {}: `targets` holds {kind}, not a URL", self.n);
                return Err(malformed(self.failure, why));
            };
            if self.taken + urls.len() >= self.max {
                let too_many = FormatError::TooMany {
                    found: self.taken + urls.len() + 1,
                    max: self.max,
                };
                return Err(fail(self.failure, too_many));
            }
            urls.push(url);
        }
        Ok(urls)
    }
}

/// A group's `labels`: a mapping of text to text (or null), read into the
/// group; meta labels left out, at most one label more than allowed kept.
struct LabelsSeed<'r, 'de> {
    n: usize,
    group: &'r mut Group<'de>,
    failure: &'r mut Option<FormatError>,
}

impl<'de> Visitor<'de> for LabelsSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "group {}: `labels` as a mapping", self.n)
    }

    null_is_empty!(());

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some((name, value)) = map.next_entry::<Scalar, Scalar>()? {
            let name = name.text().unwrap_or(Cow::Borrowed(""));
            let kind = value.type_name();
            let Some(value) = value.text() else {
                let why = format!(
                    "group {}: the value of label {:?} is {kind}, not a string",
                    self.n,
                    name.chars().take(MAX_QUOTED_CHARS).collect::<String>(),
                );
                return Err(malformed(self.failure, why));
            };
            if name.starts_with("__") {
                continue;
            }
            if self.group.labels.len() > source_default::MAX_LABELS {
                self.group.too_many_labels = true;
            } else {
                self.group.labels.push((name, value));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "sd_format_tests.rs"]
mod tests;
