#![no_main]

// What the input gave matters to the corpus replay only (tests/fuzz_corpora.rs).
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = mcp_exporter_fuzz::state_file(data);
});
