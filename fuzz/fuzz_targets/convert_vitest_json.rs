//! Fuzz target `convert_vitest_json`: see `tcrunner::fuzzing::convert_vitest_json` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::convert_vitest_json(data));
