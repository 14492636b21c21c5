//! Fuzz target `convert_pytest_json`: see `tcrunner::fuzzing::convert_pytest_json` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcrunner::fuzzing::convert_pytest_json(data));
