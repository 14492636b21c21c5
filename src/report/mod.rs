//! Reporters: turn tree events into an output stream, one per dialect.
//!
//! [`Pipeline`] is what every source feeds: events go through the
//! [`Tree`](crate::tree::Tree), which assigns ids and decides what opens and
//! closes, then to the reporter of the configured dialect.
