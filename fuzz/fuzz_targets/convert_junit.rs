//! Fuzz target `convert_junit`: see `tcrunner::fuzzing::convert_junit` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::convert_junit(data));
