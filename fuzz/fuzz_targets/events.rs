//! Fuzz target `events`: see `tcrunner::fuzzing::events` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::events(data));
