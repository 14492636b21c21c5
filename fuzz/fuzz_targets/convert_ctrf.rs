//! Fuzz target `convert_ctrf`: see `tcrunner::fuzzing::convert_ctrf` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::convert_ctrf(data));
