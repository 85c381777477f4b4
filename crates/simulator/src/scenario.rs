//! The scenario names: one variant per way a simulated server misbehaves.

use super::config::ConfigError;

/// How a scenario misbehaves. Names are the `--scenario` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Healthy,
    SinglePage,
    Truncate,
    Shrink,
    Grow,
    Overlap,
    RepeatCursor,
    Cycle,
    Endless,
    BlankCursor,
    NullCursor,
    NumberCursor,
    StaleCursor,
    SilentRestart,
    SlowPage,
    Hang,
    Drip,
    Oversize,
    Malformed,
    WrongShape,
    MissingKeys,
    Crash,
    RpcError,
    SessionExpiry,
    Auth,
    ListChangedStorm,
    Reorder,
    Protocol2026,
    AddRequiredParam,
    EditDescription,
    AcceptAnyCursor,
    UnstableCursor,
    NoCacheHints,
    MixedCacheScope,
    BadResultType,
    NoResultType,
    StrayListChanged,
}

impl Scenario {
    pub const ALL: [Scenario; 37] = [
        Scenario::Healthy,
        Scenario::SinglePage,
        Scenario::Truncate,
        Scenario::Shrink,
        Scenario::Grow,
        Scenario::Overlap,
        Scenario::RepeatCursor,
        Scenario::Cycle,
        Scenario::Endless,
        Scenario::BlankCursor,
        Scenario::NullCursor,
        Scenario::NumberCursor,
        Scenario::StaleCursor,
        Scenario::SilentRestart,
        Scenario::SlowPage,
        Scenario::Hang,
        Scenario::Drip,
        Scenario::Oversize,
        Scenario::Malformed,
        Scenario::WrongShape,
        Scenario::MissingKeys,
        Scenario::Crash,
        Scenario::RpcError,
        Scenario::SessionExpiry,
        Scenario::Auth,
        Scenario::ListChangedStorm,
        Scenario::Reorder,
        Scenario::Protocol2026,
        Scenario::AddRequiredParam,
        Scenario::EditDescription,
        Scenario::AcceptAnyCursor,
        Scenario::UnstableCursor,
        Scenario::NoCacheHints,
        Scenario::MixedCacheScope,
        Scenario::BadResultType,
        Scenario::NoResultType,
        Scenario::StrayListChanged,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Scenario::Healthy => "healthy",
            Scenario::SinglePage => "single-page",
            Scenario::Truncate => "truncate",
            Scenario::Shrink => "shrink",
            Scenario::Grow => "grow",
            Scenario::Overlap => "overlap",
            Scenario::RepeatCursor => "repeat-cursor",
            Scenario::Cycle => "cycle",
            Scenario::Endless => "endless",
            Scenario::BlankCursor => "blank-cursor",
            Scenario::NullCursor => "null-cursor",
            Scenario::NumberCursor => "number-cursor",
            Scenario::StaleCursor => "stale-cursor",
            Scenario::SilentRestart => "silent-restart",
            Scenario::SlowPage => "slow-page",
            Scenario::Hang => "hang",
            Scenario::Drip => "drip",
            Scenario::Oversize => "oversize",
            Scenario::Malformed => "malformed",
            Scenario::WrongShape => "wrong-shape",
            Scenario::MissingKeys => "missing-keys",
            Scenario::Crash => "crash",
            Scenario::RpcError => "rpc-error",
            Scenario::SessionExpiry => "session-expiry",
            Scenario::Auth => "auth",
            Scenario::ListChangedStorm => "list-changed-storm",
            Scenario::Reorder => "reorder",
            Scenario::Protocol2026 => "protocol-2026",
            Scenario::AddRequiredParam => "add-required-param",
            Scenario::EditDescription => "edit-description",
            Scenario::AcceptAnyCursor => "accept-any-cursor",
            Scenario::UnstableCursor => "unstable-cursor",
            Scenario::NoCacheHints => "no-cache-hints",
            Scenario::MixedCacheScope => "mixed-cache-scope",
            Scenario::BadResultType => "bad-result-type",
            Scenario::NoResultType => "no-result-type",
            Scenario::StrayListChanged => "stray-list-changed",
        }
    }

    /// Scenarios whose catalogue changes with the epoch (completed
    /// listings or uptime), and so may announce it with `--notify`.
    pub fn changes(self) -> bool {
        matches!(
            self,
            Scenario::Shrink
                | Scenario::Grow
                | Scenario::Reorder
                | Scenario::AddRequiredParam
                | Scenario::EditDescription
        )
    }

    pub fn parse(name: &str) -> Result<Scenario, ConfigError> {
        Scenario::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| ConfigError::UnknownScenario(name.to_string()))
    }
}
