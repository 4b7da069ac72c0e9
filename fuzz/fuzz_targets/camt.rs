//! Any bytes: the camt reader returns statements or an error, never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tributary_providers::import::camt::parse(data);
});
