//! `tcrunner check`: validates a service-message stream as a consumer would.
