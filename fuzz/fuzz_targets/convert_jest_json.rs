//! Fuzz target `convert_jest_json`: see `tcrunner::fuzzing::convert_jest_json` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::convert_jest_json(data));
