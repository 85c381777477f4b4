//! The file descriptors the taps may hold, from the process's open-file
//! limit (`RLIMIT_NOFILE`, soft): a quarter of it for all taps together,
//! split evenly between them. The web listener keeps at most half
//! (src/web/server.rs), and polls — sockets, child pipes, state files — the
//! last quarter, whatever clients of either listener do
//! (docs/reliability.md, "File descriptors").
//!
//! Of a tap's share an eighth (at most 64) is for idle upstream connections
//! kept for reuse; the rest admits client connections at two descriptors
//! each (its own, and the upstream connection it forwards on). A configured
//! `max_connections` may lower a tap's cap, never raise it past its share.

use mcp_tap::TapLimits;

/// The most client connections one tap admits whatever the limit.
const MAX_CONNECTIONS: usize = 16_384;
/// The fewest, however low the limit (below this nothing works anyway).
const MIN_CONNECTIONS: usize = 16;
const MAX_IDLE_UPSTREAM: usize = 64;

/// One tap's share of the descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapShare {
    pub max_connections: usize,
    pub idle_upstream: usize,
}

/// The share of each of `taps` taps under the process's limit now.
pub fn share(taps: usize) -> TapShare {
    share_of(soft_open_file_limit(), taps)
}

fn share_of(limit: u64, taps: usize) -> TapShare {
    let all = usize::try_from(limit / 4).unwrap_or(usize::MAX);
    let fds = all / taps.max(1);
    let idle_upstream = (fds / 8).clamp(1, MAX_IDLE_UPSTREAM);
    let max_connections =
        (fds.saturating_sub(idle_upstream) / 2).clamp(MIN_CONNECTIONS, MAX_CONNECTIONS);
    TapShare {
        max_connections,
        idle_upstream,
    }
}

/// Hold `limits` to `share`: what is configured stays when lower.
pub fn fit(limits: &mut TapLimits, share: TapShare) {
    limits.max_connections = limits.max_connections.min(share.max_connections);
    limits.upstream_idle_connections = limits.upstream_idle_connections.min(share.idle_upstream);
}

fn soft_open_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) writes into the struct we pass.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    // The usual default when the limit cannot be read.
    if ok {
        limit.rlim_cur
    } else {
        1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_taps_share_a_quarter_of_the_limit() {
        // ulimit -n 1024, one tap: 256 descriptors, 32 kept upstream, 112
        // clients at two each.
        let one = share_of(1024, 1);
        assert_eq!(
            one,
            TapShare {
                max_connections: 112,
                idle_upstream: 32
            }
        );
        assert!(one.max_connections * 2 + one.idle_upstream <= 1024 / 4);
        let two = share_of(1024, 2);
        assert!(2 * (two.max_connections * 2 + two.idle_upstream) <= 1024 / 4);
        assert_eq!(share_of(1 << 20, 1).max_connections, MAX_CONNECTIONS);
        assert_eq!(share_of(1 << 20, 1).idle_upstream, MAX_IDLE_UPSTREAM);
        assert_eq!(share_of(16, 4).max_connections, MIN_CONNECTIONS);
        assert_eq!(share_of(u64::MAX, 0).max_connections, MAX_CONNECTIONS);
    }

    #[test]
    fn a_configured_cap_lowers_the_share_never_raises_it() {
        let share = share_of(1024, 1);
        let mut limits = TapLimits::default();
        fit(&mut limits, share);
        assert_eq!(limits.max_connections, 112);
        assert_eq!(limits.upstream_idle_connections, 32);
        limits.max_connections = 40;
        fit(&mut limits, share);
        assert_eq!(limits.max_connections, 40);
        limits.max_connections = 100_000;
        fit(&mut limits, share);
        assert_eq!(limits.max_connections, 112);
    }
}
