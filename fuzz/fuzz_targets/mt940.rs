//! Any bytes: the mt940 reader returns statements or an error, never panics.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let _ = tributary_providers::import::mt940::parse(data);
});
