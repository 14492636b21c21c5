//! Unit tests: every rule is shown to fire on a bad stream and to stay quiet
//! on the good one next to it.
mod common;
mod id_mode;
mod name_mode;
mod samples;
mod support;
