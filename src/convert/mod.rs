//! `tcrunner convert`: finished report files in, the event stream out.
//!
//! [`run()`] reads every file in order into one [`Pipeline`](crate::report::Pipeline).
//! Each format has its own reader that turns the foreign shapes into
//! [`TestEvent`](crate::event::TestEvent)s, building the tree the live adapters
//! would build:
//!
//! | format | reader | detected by |
//! | --- | --- | --- |
//! | JUnit XML (pytest, vitest, jest-junit, Surefire) | [`junit`] (streaming) | first byte `<` |
//! | jest `--json` | [`jest_json`] (streaming, from a file) | `numTotalTestSuites` + `numRuntimeErrorTestSuites`/`wasInterrupted`/`openHandles` |
//! | vitest `--reporter=json` | [`vitest_json`] (streaming, from a file) | `numTotalTestSuites` without the jest-only keys |
//! | pytest-json-report | [`pytest_json`] | `tests` + `collectors`/`summary.collected`/`root` |
//! | CTRF | [`ctrf`] | `reportFormat: "CTRF"` or `results.tool` |
//! | a recorded run (`--events-out`) | [`events`] (streaming) | first bytes `{"ev":"` |
mod common;
mod ctrf;
mod detect;
mod events;
mod file_names;
mod jest_json;
mod jest_message;
mod js_entry;
mod js_json;
mod json_scan;
mod json_stream;
mod junit;
mod lenient;
mod position;
mod pytest_json;
mod run;
#[cfg(test)]
mod testing;
mod vitest_json;

pub(crate) use run::run;
