//! A tiny script format for streams, independent of the parser:
//! one line per stream line (blank lines skipped, so line N is the Nth
//! non-blank line); `@name k=v k='v w'` is a message, `@name 'value'` a
//! single-value message, `~@…` the same message glued after `PASSED `;
//! anything else is plain text.
use tcrunner_protocol::{Message, ParseEvent, Position};

use crate::check::{Checker, Report, Rule};

pub(super) fn check(script: &str) -> Report {
    let mut checker = Checker::new();
    let lines = script.lines().map(str::trim).filter(|l| !l.is_empty());
    for (i, line) in lines.enumerate() {
        let position = Position {
            offset: 0,
            line: i as u64 + 1,
        };
        let (mid_line, spec) = match line.strip_prefix("~@") {
            Some(spec) => (true, Some(spec)),
            None => (false, line.strip_prefix('@')),
        };
        if mid_line {
            let bytes = b"PASSED ".to_vec();
            checker.event(&ParseEvent::Text { bytes, position });
        }
        let event = match spec {
            Some(spec) => ParseEvent::Message {
                message: message(spec),
                position,
                mid_line,
            },
            None => ParseEvent::Text {
                bytes: format!("{line}\n").into_bytes(),
                position,
            },
        };
        checker.event(&event);
    }
    checker.finish()
}

/// `(line, rule)` of every violation, in report order.
pub(super) fn found(report: &Report) -> Vec<(u64, Rule)> {
    report.violations.iter().map(|v| (v.line, v.rule)).collect()
}

/// Asserts the exact violations, showing the details when they differ.
#[track_caller]
pub(super) fn assert_found(script: &str, expected: &[(u64, Rule)]) -> Report {
    let report = check(script);
    assert_eq!(
        found(&report),
        expected,
        "violations: {:#?}",
        report.violations
    );
    report
}

#[track_caller]
pub(super) fn assert_clean(script: &str) -> Report {
    assert_found(script, &[])
}

fn message(spec: &str) -> Message {
    let (name, mut rest) = spec.split_once(' ').unwrap_or((spec, ""));
    rest = rest.trim();
    if let Some(value) = rest.strip_prefix('\'') {
        if !rest.contains('=') {
            return Message::single(name, value.strip_suffix('\'').expect("closing quote"));
        }
    }
    let mut msg = Message::new(name);
    while !rest.is_empty() {
        let (key, after) = rest.split_once('=').expect("key=value");
        let (value, next) = match after.strip_prefix('\'') {
            Some(quoted) => quoted.split_once('\'').expect("closing quote"),
            None => after.split_once(' ').unwrap_or((after, "")),
        };
        msg.push(key.trim(), value);
        rest = next.trim();
    }
    msg
}
