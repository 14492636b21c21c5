//! Fuzz target `escape_roundtrip`: see `tcrunner::fuzzing::escape_roundtrip` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::escape_roundtrip(data));
