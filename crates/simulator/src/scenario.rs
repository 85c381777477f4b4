//! The scenario names: one variant per way a simulated server misbehaves.
//! What each one does is in behaviour/scenarios.rs, one place per scenario.

/// Declares [`Scenario`] from one row per scenario, so the variant, its
/// `--scenario` name and its place in [`Scenario::ALL`] are written once.
macro_rules! scenarios {
    ($($variant:ident = $name:literal,)*) => {
        /// How a scenario misbehaves. Names are the `--scenario` values.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Scenario {
            $($variant,)*
        }

        impl Scenario {
            /// Every scenario, in the order of docs/simulator.md.
            pub const ALL: &'static [Scenario] = &[$(Scenario::$variant,)*];

            /// The `--scenario` value.
            pub fn name(self) -> &'static str {
                match self {
                    $(Scenario::$variant => $name,)*
                }
            }
        }
    };
}

scenarios! {
    Healthy = "healthy",
    SinglePage = "single-page",
    Truncate = "truncate",
    Shrink = "shrink",
    Grow = "grow",
    Overlap = "overlap",
    RepeatCursor = "repeat-cursor",
    Cycle = "cycle",
    Endless = "endless",
    BlankCursor = "blank-cursor",
    NullCursor = "null-cursor",
    NumberCursor = "number-cursor",
    StaleCursor = "stale-cursor",
    SilentRestart = "silent-restart",
    SlowPage = "slow-page",
    Hang = "hang",
    Drip = "drip",
    Oversize = "oversize",
    Malformed = "malformed",
    WrongShape = "wrong-shape",
    MissingKeys = "missing-keys",
    Crash = "crash",
    RpcError = "rpc-error",
    SessionExpiry = "session-expiry",
    Auth = "auth",
    ListChangedStorm = "list-changed-storm",
    Reorder = "reorder",
    Protocol2026 = "protocol-2026",
    AddRequiredParam = "add-required-param",
    EditDescription = "edit-description",
    AcceptAnyCursor = "accept-any-cursor",
    UnstableCursor = "unstable-cursor",
    NoCacheHints = "no-cache-hints",
    MixedCacheScope = "mixed-cache-scope",
    BadResultType = "bad-result-type",
    NoResultType = "no-result-type",
    StrayListChanged = "stray-list-changed",
}

impl Scenario {
    /// The scenario a `--scenario` value names, if any.
    pub fn parse(name: &str) -> Option<Scenario> {
        Scenario::ALL.iter().copied().find(|s| s.name() == name)
    }
}
