//! Fuzz target `targets`: see `tcrunner::fuzzing::targets` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::targets(data));
