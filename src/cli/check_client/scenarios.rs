//! The scenarios `check-client` plays: each one a simulator scenario (the
//! simulator's own, by its `simulate` flags: never a copy), the catalogue a
//! correct client ends up with, and the spec section the grade cites.

use mcp_conformance::rule::{SpecRef, CACHING_2026, PAGINATION_2025, PAGINATION_2026};
use mcp_listing::{Kind, ProtocolVersion};

mcp_listing::labelled_enum! {
    /// A scenario of `check-client`; the labels are the `--scenario` values,
    /// in the order they are played (docs/clients.md).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum ClientScenario as "scenario" {
        Walk => "walk",
        NullCursor => "null-cursor",
        BlankCursor => "blank-cursor",
        BlankCursor2026 => "blank-cursor-2026",
        SinglePage => "single-page",
        Cycle => "cycle",
        RepeatCursor => "repeat-cursor",
        Endless => "endless",
        Deep => "deep",
        InvalidCursor => "invalid-cursor",
        Duplicates => "duplicates",
        ListChanged => "list-changed",
        SlowPage => "slow-page",
    }
}

/// How the simulated server of one scenario is set up, and what a correct
/// client makes of it.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    pub scenario: ClientScenario,
    /// `mcp-exporter simulate` flags (the scenario and its knobs).
    pub flags: &'static [&'static str],
    /// Items in the catalogue a complete listing ends with.
    pub items: u32,
    /// Pages a complete walk takes; `None` when the listing never ends.
    pub pages: Option<u32>,
    /// The scenario needs protocol 2026-07-28 (the simulator is stateless).
    pub modern: bool,
    /// Over Streamable HTTP the answers must be event streams (a
    /// notification goes with the answer).
    pub sse_answers: bool,
    pub spec: SpecRef,
    /// What the scenario asks of a client, for people.
    pub title: &'static str,
}

impl ClientScenario {
    pub fn setup(self) -> Setup {
        // SETUPS is in declaration order (a test holds it there).
        SETUPS[self as usize]
    }

    /// Does the scenario play under `forced` (the `--protocol` of the run)?
    /// The pre-2026 `""` case has no meaning in 2026-07-28, and the 2026 one
    /// none before it.
    pub fn plays_under(self, forced: Option<ProtocolVersion>) -> bool {
        match (self, forced) {
            (ClientScenario::BlankCursor, Some(v)) => !v.is_modern(),
            (ClientScenario::BlankCursor2026, Some(v)) => v.is_modern(),
            _ => true,
        }
    }
}

impl Setup {
    /// The names of the catalogue a complete listing of `kind` ends with,
    /// as the simulator names them.
    pub fn catalogue(&self, kind: Kind) -> Vec<String> {
        (1..=self.items)
            .map(|n| mcp_simulator::item_identity(kind, n))
            .collect()
    }
}

const fn finite(
    scenario: ClientScenario,
    flags: &'static [&'static str],
    items: u32,
    pages: u32,
    spec: SpecRef,
    title: &'static str,
) -> Setup {
    Setup {
        scenario,
        flags,
        items,
        pages: Some(pages),
        modern: false,
        sse_answers: false,
        spec,
        title,
    }
}

const fn endless(
    scenario: ClientScenario,
    flags: &'static [&'static str],
    items: u32,
    spec: SpecRef,
    title: &'static str,
) -> Setup {
    Setup {
        pages: None,
        ..finite(scenario, flags, items, 0, spec, title)
    }
}

/// Every scenario's setup, in the order of [`ClientScenario`].
const SETUPS: [Setup; 13] = [
    finite(
        ClientScenario::Walk,
        &[
            "--scenario",
            "healthy",
            "--items",
            "23",
            "--page-size",
            "10",
        ],
        23,
        3,
        PAGINATION_2025,
        "follow nextCursor to the last of 3 pages",
    ),
    finite(
        ClientScenario::NullCursor,
        &[
            "--scenario",
            "null-cursor",
            "--items",
            "23",
            "--page-size",
            "10",
        ],
        23,
        3,
        PAGINATION_2025,
        "take `nextCursor: null` as the end",
    ),
    finite(
        ClientScenario::BlankCursor,
        &[
            "--scenario",
            "blank-cursor",
            "--items",
            "10",
            "--page-size",
            "10",
        ],
        10,
        1,
        PAGINATION_2025,
        "before 2026-07-28, stop at `nextCursor: \"\"` (page 1 again if sent back)",
    ),
    Setup {
        modern: true,
        ..finite(
            ClientScenario::BlankCursor2026,
            &[
                "--scenario",
                "protocol-2026",
                "--items",
                "23",
                "--page-size",
                "10",
            ],
            23,
            3,
            PAGINATION_2026,
            "under 2026-07-28, send `\"\"` back: a cursor, not the end",
        )
    },
    finite(
        ClientScenario::SinglePage,
        &["--scenario", "single-page", "--items", "10"],
        10,
        1,
        PAGINATION_2025,
        "one page without nextCursor: exactly one request",
    ),
    endless(
        ClientScenario::Cycle,
        &["--scenario", "cycle", "--items", "40", "--page-size", "10"],
        40,
        PAGINATION_2025,
        "cursors A, B, A again: stop and say so",
    ),
    endless(
        ClientScenario::RepeatCursor,
        &[
            "--scenario",
            "repeat-cursor",
            "--items",
            "23",
            "--page-size",
            "10",
        ],
        23,
        PAGINATION_2025,
        "page 2 hands back its own cursor: stop and say so",
    ),
    endless(
        ClientScenario::Endless,
        &["--scenario", "endless", "--items", "10", "--page-size", "5"],
        10,
        PAGINATION_2025,
        "a new nextCursor on every page: stop at a cap and say so",
    ),
    finite(
        ClientScenario::Deep,
        &[
            "--scenario",
            "healthy",
            "--items",
            "150",
            "--page-size",
            "1",
        ],
        150,
        150,
        PAGINATION_2025,
        "150 pages of one item: a cap must not cut a real catalogue",
    ),
    finite(
        ClientScenario::InvalidCursor,
        &[
            "--scenario",
            "stale-cursor",
            "--times",
            "1",
            "--items",
            "23",
            "--page-size",
            "10",
        ],
        23,
        3,
        CACHING_2026,
        "-32602 on the first continuation: restart from page 1",
    ),
    finite(
        ClientScenario::Duplicates,
        &[
            "--scenario",
            "overlap",
            "--overlap",
            "1",
            "--items",
            "23",
            "--page-size",
            "10",
        ],
        23,
        3,
        CACHING_2026,
        "consecutive pages share an item: keep each item once",
    ),
    Setup {
        sse_answers: true,
        ..finite(
            ClientScenario::ListChanged,
            &[
                "--scenario",
                "list-changed-mid-walk",
                "--items",
                "23",
                "--page-size",
                "10",
            ],
            24,
            3,
            CACHING_2026,
            "list_changed before page 2: list again from page 1",
        )
    },
    finite(
        ClientScenario::SlowPage,
        &[
            "--scenario",
            "slow-page",
            "--delay-ms",
            "1500",
            "--items",
            "23",
            "--page-size",
            "10",
        ],
        23,
        3,
        PAGINATION_2025,
        "page 2 takes 1.5 s: wait for it",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scenario_is_the_simulators() {
        for scenario in ClientScenario::ALL {
            let setup = scenario.setup();
            assert_eq!(setup.scenario, scenario);
            let name = setup.flags[1];
            assert_eq!(setup.flags[0], "--scenario");
            assert!(
                name.parse::<mcp_simulator::scenario::Scenario>().is_ok(),
                "{scenario}: {name}"
            );
        }
    }

    #[test]
    fn the_2026_case_plays_only_in_its_era() {
        let modern = Some(ProtocolVersion::V2026_07_28);
        let legacy = Some(ProtocolVersion::V2025_06_18);
        assert!(!ClientScenario::BlankCursor.plays_under(modern));
        assert!(ClientScenario::BlankCursor.plays_under(legacy));
        assert!(ClientScenario::BlankCursor2026.plays_under(modern));
        assert!(!ClientScenario::BlankCursor2026.plays_under(legacy));
        assert!(ClientScenario::Walk.plays_under(None));
    }
}
