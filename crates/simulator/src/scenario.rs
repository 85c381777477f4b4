//! The scenario names: one variant per way a simulated server misbehaves.
//! What each one does is in behaviour/scenarios.rs, one place per scenario.

mcp_listing::labelled_enum! {
    /// How a scenario misbehaves; the labels are the `--scenario` values,
    /// in the order of docs/simulator.md.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Scenario as "scenario" {
        Healthy => "healthy",
        SinglePage => "single-page",
        Truncate => "truncate",
        Shrink => "shrink",
        Grow => "grow",
        Overlap => "overlap",
        RepeatCursor => "repeat-cursor",
        Cycle => "cycle",
        Endless => "endless",
        BlankCursor => "blank-cursor",
        NullCursor => "null-cursor",
        NumberCursor => "number-cursor",
        StaleCursor => "stale-cursor",
        SilentRestart => "silent-restart",
        SlowPage => "slow-page",
        Hang => "hang",
        Drip => "drip",
        Oversize => "oversize",
        Malformed => "malformed",
        WrongShape => "wrong-shape",
        MissingKeys => "missing-keys",
        Crash => "crash",
        RpcError => "rpc-error",
        SessionExpiry => "session-expiry",
        Auth => "auth",
        ListChangedStorm => "list-changed-storm",
        Reorder => "reorder",
        Protocol2026 => "protocol-2026",
        AddRequiredParam => "add-required-param",
        EditDescription => "edit-description",
        AcceptAnyCursor => "accept-any-cursor",
        UnstableCursor => "unstable-cursor",
        NoCacheHints => "no-cache-hints",
        MixedCacheScope => "mixed-cache-scope",
        BadResultType => "bad-result-type",
        NoResultType => "no-result-type",
        StrayListChanged => "stray-list-changed",
    }
}
