//! `tcrunner convert`: finished report files in, the event stream out.
