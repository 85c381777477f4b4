//! Bounds on a YAML document, checked on the parser's events before
//! yaml_serde loads it: how deep it nests, how many nodes it holds, and
//! what its aliases replay. yaml_serde expands every alias where it is
//! used, so an 80 KB file whose one anchor is named ten thousand times is
//! a gigabyte by the time it is a value; and libyaml's time per token
//! grows with the nesting depth, so deep brackets parse in quadratic time.
//! Here each alias costs what its anchor expands to, and reading stops at
//! the first bound passed (docs/reliability.md, "YAML").

use super::yaml_events::{Event, Events, Mark};
use std::collections::HashMap;

/// What one YAML document may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YamlBounds {
    /// Sequences and mappings inside each other.
    pub depth: usize,
    /// Nodes (scalars, sequences, mappings), written or replayed.
    pub nodes: u64,
    /// Nodes all aliases may replay together; 0 refuses aliases.
    pub replayed_nodes: u64,
    /// Bytes of source all aliases may replay together.
    pub replayed_bytes: u64,
}

/// Deepest nesting accepted anywhere (the configuration needs 6).
pub const MAX_DEPTH: usize = 64;

impl YamlBounds {
    /// The configuration: aliases welcome, within what a hand-written file
    /// replays.
    pub const CONFIG: YamlBounds = YamlBounds {
        depth: MAX_DEPTH,
        nodes: 1 << 20,
        replayed_nodes: 1 << 16,
        replayed_bytes: 1 << 20,
    };

    /// A `file_sd` file: no aliases (a list someone else writes has no use
    /// for them), and about 10,000 single-target groups of four labels at
    /// most; larger lists are JSON, which is read as a stream.
    pub const FILE_SD: YamlBounds = YamlBounds {
        depth: MAX_DEPTH,
        nodes: 1 << 18,
        replayed_nodes: 0,
        replayed_bytes: 0,
    };
}

/// Why a document is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum YamlBoundProblem {
    #[error("nested deeper than {0} levels")]
    TooDeep(usize),
    #[error("more than {0} nodes (aliases expanded)")]
    TooManyNodes(u64),
    #[error("holds an alias (`*name`); aliases are not accepted in this file")]
    AliasRefused,
    #[error("an alias names the node it is inside of")]
    AliasInsideItsAnchor,
    #[error("its aliases replay more than {nodes} nodes or {bytes} bytes")]
    ReplaysTooMuch { nodes: u64, bytes: u64 },
}

/// A refused document: where (1-based, as yaml_serde counts) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{problem}")]
pub struct YamlBoundError {
    pub line: usize,
    pub column: usize,
    pub problem: YamlBoundProblem,
}

/// What a document that passed holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct YamlShape {
    /// Aliases used (each replays its anchor).
    pub aliases: u64,
    /// The parser found a syntax error (after which nothing was counted):
    /// yaml_serde's error on this document is a syntax error too.
    pub syntax_error: bool,
}

/// Check `input` against `bounds`. A syntax error ends the check without
/// complaint: yaml_serde reports it in its own words, and everything
/// before it was within bounds.
pub fn check(input: &[u8], bounds: &YamlBounds) -> Result<YamlShape, YamlBoundError> {
    let mut count = Count::new(bounds);
    let mut events = Events::new(input);
    for (event, start, end) in events.by_ref() {
        count
            .take(event, start, end)
            .map_err(|problem| YamlBoundError {
                line: usize::try_from(start.line).map_or(usize::MAX, |l| l.saturating_add(1)),
                column: usize::try_from(start.column).map_or(usize::MAX, |c| c.saturating_add(1)),
                problem,
            })?;
    }
    Ok(YamlShape {
        aliases: count.aliases,
        syntax_error: events.failed(),
    })
}

/// A sequence or mapping not closed yet.
struct Open {
    anchor: Option<Vec<u8>>,
    start: u64,
    /// Nodes inside it so far (itself included), aliases expanded.
    nodes: u64,
    /// Bytes its aliases replayed so far.
    replayed_bytes: u64,
}

/// What an anchored node expands to.
#[derive(Clone, Copy)]
struct Expanded {
    nodes: u64,
    bytes: u64,
}

struct Count<'b> {
    bounds: &'b YamlBounds,
    open: Vec<Open>,
    /// Closed anchored nodes of this document, by name (the last wins).
    anchors: HashMap<Vec<u8>, Expanded>,
    nodes: u64,
    aliases: u64,
    replayed_nodes: u64,
    replayed_bytes: u64,
}

impl<'b> Count<'b> {
    fn new(bounds: &'b YamlBounds) -> Count<'b> {
        Count {
            bounds,
            open: Vec::new(),
            anchors: HashMap::new(),
            nodes: 0,
            aliases: 0,
            replayed_nodes: 0,
            replayed_bytes: 0,
        }
    }

    fn take(&mut self, event: Event, start: Mark, end: Mark) -> Result<(), YamlBoundProblem> {
        match event {
            // Anchors name nodes of their own document only.
            Event::DocumentStart => self.anchors.clear(),
            Event::Open { anchor, .. } => {
                if self.open.len() >= self.bounds.depth {
                    return Err(YamlBoundProblem::TooDeep(self.bounds.depth));
                }
                self.add_nodes(1)?;
                if let Some(name) = &anchor {
                    self.anchors.remove(name);
                }
                self.open.push(Open {
                    anchor,
                    start: start.index,
                    nodes: 1,
                    replayed_bytes: 0,
                });
            }
            Event::Close => self.close(end),
            Event::Scalar { anchor, .. } => {
                self.add_nodes(1)?;
                self.grow_parent(1, 0);
                if let Some(name) = anchor {
                    let bytes = end.index.saturating_sub(start.index);
                    self.anchors.insert(name, Expanded { nodes: 1, bytes });
                }
            }
            Event::Alias { anchor } => self.replay(&anchor)?,
            Event::Other => {}
        }
        Ok(())
    }

    fn close(&mut self, end: Mark) {
        let Some(node) = self.open.pop() else {
            return;
        };
        let bytes = end.index.saturating_sub(node.start) + node.replayed_bytes;
        self.grow_parent(node.nodes, node.replayed_bytes);
        if let Some(name) = node.anchor {
            let expanded = Expanded {
                nodes: node.nodes,
                bytes,
            };
            self.anchors.insert(name, expanded);
        }
    }

    /// An alias: its anchor's nodes and bytes once more.
    fn replay(&mut self, name: &[u8]) -> Result<(), YamlBoundProblem> {
        if self.bounds.replayed_nodes == 0 {
            return Err(YamlBoundProblem::AliasRefused);
        }
        let Some(anchor) = self.anchors.get(name).copied() else {
            if self.open.iter().any(|o| o.anchor.as_deref() == Some(name)) {
                return Err(YamlBoundProblem::AliasInsideItsAnchor);
            }
            // An unknown anchor: yaml_serde refuses the document itself.
            return Ok(());
        };
        self.aliases += 1;
        self.replayed_nodes = self.replayed_nodes.saturating_add(anchor.nodes);
        self.replayed_bytes = self.replayed_bytes.saturating_add(anchor.bytes);
        if self.replayed_nodes > self.bounds.replayed_nodes
            || self.replayed_bytes > self.bounds.replayed_bytes
        {
            return Err(YamlBoundProblem::ReplaysTooMuch {
                nodes: self.bounds.replayed_nodes,
                bytes: self.bounds.replayed_bytes,
            });
        }
        self.add_nodes(anchor.nodes)?;
        self.grow_parent(anchor.nodes, anchor.bytes);
        Ok(())
    }

    fn add_nodes(&mut self, n: u64) -> Result<(), YamlBoundProblem> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > self.bounds.nodes {
            return Err(YamlBoundProblem::TooManyNodes(self.bounds.nodes));
        }
        Ok(())
    }

    fn grow_parent(&mut self, nodes: u64, replayed_bytes: u64) {
        if let Some(parent) = self.open.last_mut() {
            parent.nodes = parent.nodes.saturating_add(nodes);
            parent.replayed_bytes = parent.replayed_bytes.saturating_add(replayed_bytes);
        }
    }
}

#[cfg(test)]
#[path = "yaml_bounds_tests.rs"]
mod tests;
