//! Any bytes: the CSV reader (layout detection, no profile) returns
//! statements or an error, never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tributary_providers::import::csv::parse(data, None);
});
