//! Fuzz target `view`: see `tcrunner::fuzzing::view` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::view(data));
