//! Fuzz target `protocol_parser`: see `tcrunner::fuzzing::protocol_parser` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::protocol_parser(data));
