//! Histogram bucket bounds (upper bounds; `+Inf` is added by the library).

/// Pages per complete listing: Fibonacci-like up to 55, then coarse up to
/// the default page cap of 1000.
pub const PAGES_BUCKETS: [f64; 13] = [
    1.0, 2.0, 3.0, 5.0, 8.0, 13.0, 21.0, 34.0, 55.0, 100.0, 200.0, 500.0, 1000.0,
];

/// Items per page; the 0 bucket isolates empty pages that still carry a cursor.
pub const PAGE_ITEMS_BUCKETS: [f64; 11] = [
    0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0,
];

/// Every seconds histogram (page round trip, listing, poll, time to ready): the OpenTelemetry MCP client
/// convention's 0.01 … 300 s, extended down to 1 ms because local (stdio,
/// loopback) servers answer a page in well under 10 ms.
pub const DURATION_BUCKETS_SECONDS: [f64; 17] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
    120.0, 300.0,
];
