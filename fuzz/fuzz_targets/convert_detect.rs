//! Fuzz target `convert_detect`: see `tcrunner::fuzzing::convert_detect` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::convert_detect(data));
