//! Any bytes: the ofx reader returns statements or an error, never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tributary_providers::import::ofx::parse(data);
});
