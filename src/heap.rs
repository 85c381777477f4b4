//! The process's heap: glibc malloc's settings for a long-running exporter,
//! and handing freed memory back.
//!
//! glibc's defaults suit short programs. Left alone, it gives each thread
//! that allocates its own arena (up to 8 per core), each keeping what it
//! freed; and its mmap threshold rises to the largest buffer freed so far
//! (up to 32 MiB), with the trim threshold at twice that, so after one big
//! `/metrics` or large-catalogue poll every later buffer of that size comes
//! from an arena and stays there. docs/performance.md has the numbers
//! (2,000 targets: 102 → 93 MiB steady, 127 → 93 MiB after the plain
//! renders); jemalloc measured the same as the tuned glibc and mimalloc
//! worse, so no allocator crate.
//!
//! A setting already given through glibc's environment (`MALLOC_ARENA_MAX`,
//! `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`) is left as given, and
//! any `glibc.malloc` tunable in `GLIBC_TUNABLES` leaves malloc wholly to
//! glibc (`GLIBC_TUNABLES=glibc.malloc.check=0` measures its defaults).

/// Arenas: the runtime's workers and the blocking pool share these.
const ARENA_MAX: i32 = 2;
/// Buffers of this size or more are mapped on their own and unmapped when
/// freed (a fixed value also stops glibc's sliding threshold).
const MMAP_THRESHOLD_BYTES: i32 = 256 * 1024;
/// Free memory at the top of an arena beyond this is given back.
const TRIM_THRESHOLD_BYTES: i32 = 1024 * 1024;

/// Apply the settings; call before the runtime starts its threads.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc")) {
        return;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    for (env, param, value) in [
        ("MALLOC_ARENA_MAX", libc::M_ARENA_MAX, ARENA_MAX),
        (
            "MALLOC_MMAP_THRESHOLD_",
            libc::M_MMAP_THRESHOLD,
            MMAP_THRESHOLD_BYTES,
        ),
        (
            "MALLOC_TRIM_THRESHOLD_",
            libc::M_TRIM_THRESHOLD,
            TRIM_THRESHOLD_BYTES,
        ),
    ] {
        if std::env::var_os(env).is_none() {
            // SAFETY: mallopt takes two integers and changes only malloc's
            // own parameters; it returns 0 on a value it refuses, which
            // leaves glibc's default in place.
            unsafe {
                libc::mallopt(param, value);
            }
        }
    }
}

/// Give freed heap back to the system (glibc keeps some in its arenas):
/// after a poll of a large catalogue. Walks every arena: call it off the
/// runtime's workers.
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers and only releases free memory.
    unsafe {
        libc::malloc_trim(0);
    }
}
